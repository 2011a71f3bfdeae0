"""PathBench's Wilcoxon protocol comparisons (balanced vs unbalanced, word vs sentence)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats
from test_results_table import correlations

from pathbench_flow.reporting.comparisons import wilcoxon_comparisons, write_comparisons
from pathbench_flow.reporting.results_table import DatasetColumn, aligned_r

# Aligned values are the raw r here, except per's: PathBench expects r > 0 for cpp_fa and vsa
# (and cpps_fa, open, is positive in most columns: kept) and r < 0 for per, whose cells are -r.
DATA = {
    "ua_mc": (
        {"cpp_fa": 0.10, "vsa": 0.30, "per": -0.80, "cpps_fa": 0.9},
        ("UASpeech", "Word", "MC"),
    ),
    "ua_ex": (
        {"cpp_fa": 0.15, "vsa": 0.20, "per": -0.85, "cpps_fa": 0.1},
        ("UASpeech", "Word", "EX"),
    ),
    "to_w_mc": ({"cpp_fa": 0.40, "vsa": 0.61, "per": -0.48}, ("TORGO", "Word", "MC")),
    "to_w_ex": ({"cpp_fa": 0.47, "vsa": 0.47, "per": -0.47}, ("TORGO", "Word", "EX")),
    "to_s_mc": ({"cpp_fa": 0.53, "vsa": -0.53, "per": -0.93}, ("TORGO", "Sentence", "MC")),
    "to_s_ex": ({"cpp_fa": 0.54, "vsa": -0.58, "per": -0.91}, ("TORGO", "Sentence", "EX")),
    "demo": ({"cpp_fa": 0.9, "vsa": 0.9, "per": 0.9}, ("", "", "")),
}


def aligned(data: dict = DATA):
    return aligned_r(
        {name: correlations(r) for name, (r, _) in data.items()},
        [DatasetColumn(name, *place) for name, (_, place) in data.items()],
    )


def record(records: pd.DataFrame, comparison: str, group: str) -> pd.Series:
    rows = records[(records["comparison"] == comparison) & (records["group"] == group)]
    assert len(rows) == 1
    return rows.iloc[0]


def test_balance_pairs_ex_with_mc_of_the_same_corpus_and_task() -> None:
    records, pairs = wilcoxon_comparisons(aligned())
    # PathBench's table metrics only (not cpps_fa), never the unplaced demo column.
    ex = [0.15, 0.20, 0.85, 0.47, 0.47, 0.47, 0.54, -0.58, 0.91]
    mc = [0.10, 0.30, 0.80, 0.40, 0.61, 0.48, 0.53, -0.53, 0.93]
    balance = pairs[pairs["comparison"] == "balance"]
    assert sorted(balance["x_value"]) == pytest.approx(sorted(ex))
    assert sorted(balance["y_value"]) == pytest.approx(sorted(mc))
    row = record(records, "balance", "all")
    assert (row["x"], row["y"], row["n_pairs"], row["reason"]) == ("EX", "MC", 9, "")
    # Same pairs, in the order the pairs table lists them.
    expected_greater = stats.wilcoxon(balance["x_value"], balance["y_value"], alternative="greater")
    expected_less = stats.wilcoxon(balance["x_value"], balance["y_value"], alternative="less")
    assert row["p_x_greater"] == pytest.approx(expected_greater.pvalue)
    assert row["p_y_greater"] == pytest.approx(expected_less.pvalue)
    text = record(records, "balance", "Reference-Text")
    assert text["n_pairs"] == 3  # per on UASpeech Word, TORGO Word, TORGO Sentence


def test_task_uses_only_corpora_with_both_tasks() -> None:
    records, pairs = wilcoxon_comparisons(aligned())
    task = pairs[pairs["comparison"] == "task"]
    assert set(task["corpus"]) == {"TORGO"}  # UASpeech has words only
    assert len(task) == 6  # 3 metrics x 2 conditions
    row = record(records, "task", "all")
    assert (row["x"], row["y"], row["n_pairs"]) == ("Sentence", "Word", 6)
    expected = stats.wilcoxon(task["x_value"], task["y_value"], alternative="greater")
    assert row["p_x_greater"] == pytest.approx(expected.pvalue)
    # The signal group (cpp_fa and, as in PathBench, vsa) has 4 pairs; audio has none.
    assert record(records, "task", "Reference-Free (Signal)")["n_pairs"] == 4
    audio = record(records, "task", "Reference-Audio")
    assert audio["n_pairs"] == 0 and "at least 2" in audio["reason"]
    assert math.isnan(audio["p_x_greater"])


def test_comparisons_that_do_not_apply_say_why() -> None:
    # A run of unplaced datasets: one row says once why neither comparison applies, naming
    # both comparisons, the run's datasets and what to configure.
    records, _ = wilcoxon_comparisons(aligned({"demo": DATA["demo"]}))
    (reason,) = record(records, "balance, task", "all")[["reason"]]
    assert len(records) == 1 and records.at[0, "n_pairs"] == 0
    assert "This run's datasets ('demo') have no corpus, task and condition" in reason
    assert "balance pairs a metric's condition EX and condition MC columns" in reason
    assert "task pairs a metric's task Sentence and task Word columns" in reason

    # Placed datasets without pairs: one row per comparison, not one per group too.
    words_only = {k: DATA[k] for k in ("ua_mc", "to_w_mc")}
    records, _ = wilcoxon_comparisons(aligned(words_only))
    assert list(records["group"]) == ["all", "all"]
    reason = record(records, "balance", "all")["reason"]
    assert "condition EX and condition MC" in reason and "UASpeech Word MC" in reason
    assert "task Sentence and task Word" in record(records, "task", "all")["reason"]


def test_written_files_are_valid_and_stable(tmp_path: Path) -> None:
    csv_path, json_path = tmp_path / "comparisons.csv", tmp_path / "comparisons.json"
    write_comparisons(aligned(), csv_path, json_path)
    first = (csv_path.read_bytes(), json_path.read_bytes())
    content = json.loads(json_path.read_text())  # strict JSON: NaN would not parse back
    assert [c["label"] for c in content["columns"]][:2] == ["UASpeech Word MC", "UASpeech Word EX"]
    assert content["columns"][-1] == {
        "dataset": "demo",
        "label": "demo",
        "corpus": "",
        "task": "",
        "condition": "",
    }
    assert len(content["pairs"]) == 15
    assert pd.read_csv(csv_path).shape == (10, 9)  # 2 comparisons x (all + 4 groups)
    write_comparisons(aligned(), csv_path, json_path)
    assert (csv_path.read_bytes(), json_path.read_bytes()) == first
