"""The uncertainty rule in a workflow run over three of PathBench's corpora, built in their
shapes (``pathbench_flow/testing/pathbench_shapes.py``): UASpeech's word task in its MC and EX
conditions (the same speakers), TORGO's word task MC, and YouTube.

Why a run of its own rather than the 21-column run of ``test_pathbench_shapes.py``: the
question here is whether the corpora meet in one bootstrap (one draw per corpus, shared by
MC and EX) and one meta-analysis (one column per corpus), which three corpora answer in a
fraction of that run's time. Two cheap evaluators, raw audio only, no open-set evaluation.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from pathbench_flow.testing.pathbench_shapes import build
from pathbench_flow.testing.speech_fixtures import require_espeak
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

pytestmark = pytest.mark.slow

DATASETS = ("uaspeech_word_balanced", "uaspeech_word_unbalanced", "torgo_word_balanced", "youtube")
CONFIG = {
    "evaluators": ["cpp", "wada_snr"],
    "variants": ["raw"],
    "correlation": {"n_boot": 100},
    "openset": {"enabled": False},
}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    require_espeak()
    workdir = copy_workflow(tmp_path_factory.mktemp("uncertainty_shapes"))
    built = build(workdir)
    config = CONFIG | {"datasets": {name: built.datasets[name] for name in DATASETS}}
    (workdir / "shapes.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    assert snakemake(workdir, "--cores", "2", "--configfile", "shapes.yaml").returncode == 0
    return workdir


def test_uncertainty_over_three_corpora(run: Path) -> None:
    """Every Avg has its interval beside it in results_table.csv (PathBench's file has none),
    every metric its rank probabilities, every pair its difference, and the meta-analysis
    pools one column per corpus: UASpeech's MC and EX rate the same speakers, so only one
    enters, and the three corpora give three columns."""
    results = run / "results"
    table = pd.read_csv(results / "results_table.csv").set_index("metric")
    assert list(table.columns[-5:]) == [
        "Avg",
        "Avg_unrounded",
        "Avg_ci_low",
        "Avg_ci_high",
        "n_datasets",
    ]
    shown = table.dropna(subset=["Avg_ci_low"])  # a flagged metric has no interval here
    assert (shown["Avg_ci_low"] <= shown["Avg_ci_high"]).all()
    assert "Avg_ci_low" not in (results / "pathbench_table.csv").read_text()
    summary = pd.read_csv(results / "uncertainty" / "summary.csv")
    assert sorted(summary["metric"]) == sorted(table.index) == ["cpp", "wada_snr"]
    # Each metric's rank distribution is over the replicates where it has an Avg.
    assert summary[["p_rank_1", "p_rank_2"]].sum(axis=1).to_numpy() == pytest.approx([1.0, 1.0])
    assert (summary["n_datasets"] == 4).all()
    pairs = pd.read_csv(results / "uncertainty" / "pairwise.csv")
    assert len(pairs) == 1
    meta = pd.read_csv(results / "uncertainty" / "meta_analysis.csv").set_index("metric")
    columns = meta.at["cpp", "columns"].split("; ")
    assert meta.at["cpp", "k"] == 3
    assert columns == ["UASpeech Word MC", "TORGO Word MC", "YT Sentence Full"]
    assert 0 <= meta.at["cpp", "i2"] <= 100
    assert (results / "uncertainty" / "forest" / "cpp.png").is_file()
