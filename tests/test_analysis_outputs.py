"""The results-table stage end to end: correlation files in, table, heat map, comparisons out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from pathbench_flow.io import write_parquet
from pathbench_flow.schemas import SPEAKERS_SCHEMA
from pathbench_flow.stages.analysis import correlate, plot_dataset, results_table
from pathbench_flow.testing import KALDI_METADATA as KALDI

SPEAKERS = [f"S{i:02d}" for i in range(10)]


def speakers_file(path: Path, seed: int) -> Path:
    """A speakers table as aggregation writes it: cpp_fa rises with the truth, per falls."""
    rng = np.random.default_rng(seed)
    truth = np.linspace(10.0, 90.0, len(SPEAKERS))
    columns = {
        ("cpp_fa", "cpp", "fa"): truth / 10 + rng.normal(size=len(SPEAKERS)),
        ("per", "per", "raw"): 1 - truth / 100 + rng.normal(scale=0.1, size=len(SPEAKERS)),
        ("vsa", "vsa", "raw"): np.full(len(SPEAKERS), np.nan),
    }
    rows = [
        (s, metric, evaluator, variant, value, 5, 5, t)
        for (metric, evaluator, variant), values in columns.items()
        for s, value, t in zip(SPEAKERS, values, truth, strict=True)
    ]
    frame = pd.DataFrame(rows, columns=SPEAKERS_SCHEMA.names)
    write_parquet(frame, path, SPEAKERS_SCHEMA, ["metric", "speaker_id"])
    return path


def test_table_and_comparisons_from_correlation_files(tmp_path: Path) -> None:
    settings, paths = {}, {}
    for seed, condition in enumerate(("balanced", "unbalanced")):
        name = f"ua_{condition}"
        speakers = speakers_file(tmp_path / f"{name}.parquet", seed)
        paths[name] = tmp_path / f"{name}_corr.parquet"
        correlate(speakers, paths[name], tmp_path / f"{name}.csv", allowlist=(), n_boot=50, seed=1)
        settings[name] = {"path": str(KALDI / "uaspeech/pathological/word" / condition)}
    names = ("pathbench.csv", "heat.png", "comparisons.csv", "comparisons.json")
    outputs = [tmp_path / n for n in names]
    table = results_table(paths, settings, tmp_path, *outputs)

    assert list(table.columns[5:]) == ["UASpeech Word MC", "UASpeech Word EX", "Avg", "n_datasets"]
    assert table["metric"].tolist() == ["cpp_fa", "vsa", "per"]
    assert (table.set_index("metric").loc[["cpp_fa", "per"], "UASpeech Word MC"] > 0.5).all()
    header = (tmp_path / "results_table.csv").read_text().splitlines()[0]
    assert header.endswith("UASpeech Word MC,UASpeech Word EX,Avg,n_datasets")
    pathbench = pd.read_csv(outputs[0], dtype=str, keep_default_na=False).set_index("Metric")
    assert list(pathbench.columns[1:3]) == ["UASpeech Word MC", "UASpeech Word EX"]
    assert len(pathbench.columns) == 23  # Category, PathBench's 21 columns, Avg
    cpp = table.set_index("metric").loc["cpp_fa"]
    assert pathbench.at["CPP", "UASpeech Word EX"] == f"{cpp['UASpeech Word EX']:.2f}"
    assert pathbench.at["CPP", "Avg"] == f"{cpp['Avg']:.2f}"
    assert pathbench.at["ArtP", "Avg"] == pathbench.at["CPP", "TORGO Word MC"] == ""
    comparisons = json.loads(outputs[3].read_text())
    balance = [c for c in comparisons["comparisons"] if c["comparison"] == "balance"]
    assert balance[0]["group"] == "all" and balance[0]["n_pairs"] == 2  # cpp_fa and per
    task = [c for c in comparisons["comparisons"] if c["comparison"] == "task"]
    assert all("task Sentence and task Word" in c["reason"] for c in task)


def test_plot_dataset_reads_the_aggregation_report(tmp_path: Path) -> None:
    speakers = speakers_file(tmp_path / "speakers.parquet", 3)
    correlations = tmp_path / "correlations.parquet"
    correlate(speakers, correlations, tmp_path / "c.csv", allowlist=(), n_boot=50, seed=1)
    aggregation = tmp_path / "aggregation.json"
    aggregation.write_text(json.dumps({"n_speakers": 10, "n_speakers_without_value": {"vsa": 10}}))
    plot_dataset(
        "d",
        speakers,
        correlations,
        aggregation,
        tmp_path / "scatter",
        tmp_path / "bars.png",
        allowlist=(),
    )
    assert sorted(p.name for p in (tmp_path / "scatter").iterdir()) == [
        "cpp_fa.png",
        "per.png",
        "vsa.png",
    ]
