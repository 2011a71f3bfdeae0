"""The results-table stage end to end: correlation files in, table, heat map, comparisons out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pathbench_flow.common.io import write_parquet
from pathbench_flow.schemas.tables import SPEAKERS_SCHEMA
from pathbench_flow.stages.analysis import (
    align_correlations,
    correlate,
    plot_dataset,
    results_table,
)
from pathbench_flow.testing import KALDI_METADATA as KALDI

SPEAKERS = [f"S{i:02d}" for i in range(10)]
OUTPUTS = ("pathbench.csv", "heat.png", "comparisons.csv", "comparisons.json", "signs.csv")
"""The results-table stage's files after its output directory, in its argument order."""


def speakers_file(path: Path, seed: int) -> Path:
    """A speakers table as aggregation writes it: cpp_fa rises with the truth, per falls, and
    wada_snr falls, against its evaluator's direction (+1)."""
    rng = np.random.default_rng(seed)
    truth = np.linspace(10.0, 90.0, len(SPEAKERS))
    columns = {
        ("cpp_fa", "cpp", "fa"): truth / 10 + rng.normal(size=len(SPEAKERS)),
        ("per", "per", "raw"): 1 - truth / 100 + rng.normal(scale=0.1, size=len(SPEAKERS)),
        ("vsa", "vsa", "raw"): np.full(len(SPEAKERS), np.nan),
        ("wada_snr", "wada_snr", "raw"): 30 - truth / 5 + rng.normal(scale=4, size=len(SPEAKERS)),
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
        correlate(speakers, paths[name], allowlist=(), n_boot=50, seed=1)
        settings[name] = {"path": str(KALDI / "uaspeech/pathological/word" / condition)}
    outputs = [tmp_path / n for n in OUTPUTS]
    page = tmp_path / "pathbench.html"
    table = results_table(paths, settings, tmp_path, *outputs, {outputs[0]: page})

    assert list(table.columns[6:]) == ["UASpeech Word MC", "UASpeech Word EX", "Avg", "n_datasets"]
    assert table["metric"].tolist() == ["cpp_fa", "wada_snr", "vsa", "per"]
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
    # The report's page of the table shows the CSV's own cells.
    assert f'<td class="number">{pathbench.at["CPP", "Avg"]}</td>' in page.read_text()
    comparisons = json.loads(outputs[3].read_text())
    balance = [c for c in comparisons["comparisons"] if c["comparison"] == "balance"]
    assert balance[0]["group"] == "all" and balance[0]["n_pairs"] == 2  # cpp_fa and per
    task = [c for c in comparisons["comparisons"] if c["comparison"] == "task"]
    assert all("task Sentence and task Word" in c["reason"] for c in task)


def test_plot_dataset_reads_the_aggregation_report(tmp_path: Path) -> None:
    speakers = speakers_file(tmp_path / "speakers.parquet", 3)
    correlations = tmp_path / "correlations.parquet"
    correlate(speakers, correlations, allowlist=(), n_boot=50, seed=1)
    signs = tmp_path / "signs.csv"
    results_table({"d": correlations}, {}, tmp_path, *(tmp_path / n for n in OUTPUTS), {})
    aggregation = tmp_path / "aggregation.json"
    aggregation.write_text(json.dumps({"n_speakers": 10, "n_speakers_without_value": {"vsa": 10}}))
    plot_dataset(
        "d",
        speakers,
        correlations,
        signs,
        aggregation,
        tmp_path / "scatter",
        tmp_path / "bars.png",
        allowlist=(),
    )
    assert sorted(p.name for p in (tmp_path / "scatter").iterdir()) == [
        "cpp_fa.png",
        "per.png",
        "vsa.png",
        "wada_snr.png",
    ]


def test_one_sign_per_metric_in_tables_and_figures(tmp_path: Path) -> None:
    """wada_snr falls with the truth in both datasets, so PathBench's vote flips it: for every
    metric, the aligned r of each dataset's correlations.csv, of results_table.csv and of the
    bars drawn are one value with one sign, and the raw r is the one labelled raw."""
    paths = {}
    for seed in range(2):
        speakers = speakers_file(tmp_path / f"s{seed}.parquet", seed)
        paths[f"d{seed}"] = tmp_path / f"d{seed}.parquet"
        correlate(speakers, paths[f"d{seed}"], allowlist=(), n_boot=50, seed=1)
    results_table(paths, {}, tmp_path, *(tmp_path / n for n in OUTPUTS), {})
    table = pd.read_csv(tmp_path / "results_table.csv").set_index("metric")
    assert table.at["wada_snr", "sign_rule"] == "vote: flipped"
    (tmp_path / "aggregation.json").write_text("{}")
    for dataset, path in paths.items():
        csv = tmp_path / f"{dataset}.csv"
        align_correlations(path, tmp_path / "signs.csv", csv, csv.with_suffix(".html"))
        correlations = pd.read_csv(csv).set_index("metric")
        bars = plot_dataset(
            dataset,
            tmp_path / f"s{dataset[1]}.parquet",
            path,
            tmp_path / "signs.csv",
            tmp_path / "aggregation.json",
            tmp_path / dataset,
            tmp_path / f"{dataset}.png",
            allowlist=(),
        ).set_index("metric")
        assert "aligned_r" not in correlations.columns and "pearson_r" not in correlations
        for metric in table.index:
            cell = table.at[metric, dataset]
            aligned = correlations.at[metric, "r_aligned"]
            # The CSV keeps ten significant digits; the table, two decimals.
            drawn = bars.at[metric, "r_aligned"]
            assert drawn == pytest.approx(aligned, abs=1e-9, nan_ok=True), metric
            assert cell == pytest.approx(round(aligned, 2), nan_ok=True), metric
            sign = correlations.at[metric, "sign"]
            assert sign == table.at[metric, "sign"]
            assert correlations.at[metric, "sign_rule"] == table.at[metric, "sign_rule"]
            assert aligned == pytest.approx(sign * correlations.at[metric, "r_raw"], nan_ok=True)
        raw = correlations.at["wada_snr", "r_raw"]
        assert raw < 0 < correlations.at["wada_snr", "r_aligned"] == -raw
        assert bars.at["wada_snr", "label"].endswith("[−r, vote: flipped]")
