"""PathBench's Wilcoxon comparisons between protocols: balanced vs unbalanced, word vs sentence.

PathBench asks whether the protocol changes how well measures agree with listeners (source:
``scripts/combine_results.py`` of github.com/karkirowle/pathbench, facts only). Its rules,
reproduced here:

* Only the metrics of its table take part (``PATHBENCH_ROWS``), with their sign-aligned,
  unrounded r.
* **Balance** (its RQ2): one pair per metric, corpus and task that has both an MC
  (``balanced``) and an EX (``unbalanced``) value; EX is tested against MC.
* **Task** (its RQ3): only corpora with both a Word and a Sentence column; one pair per
  metric, corpus and condition with both values; Sentence is tested against Word.
* Each is a paired two-sample Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, default
  settings), run one-sided in both directions, over all pairs ("all") and per metric group.
  The groups are PathBench's statistical groups, in which VSA counts as a signal measure.
  Fewer than two pairs is "insufficient data", as in PathBench.

A comparison that the datasets do not allow is still written, with the reason, so an empty
result is never mistaken for "no difference"; once, not once per group: the reason is the
comparison's, and a run whose datasets are not placed in PathBench's layout at all (a run of
your own datasets) gets a single row for both comparisons.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from scipy import stats

from pathbench_flow.common.io import write_json, write_text
from pathbench_flow.evaluators.categories import MODEL, SIGNAL, TEXT
from pathbench_flow.reporting.results_table import PATHBENCH_ROWS, AlignedR

MIN_PAIRS = 2
STAT_GROUPS: dict[str, tuple[str, ...]] = {
    SIGNAL.table_name: ("praat_speech_rate_fa", "cpp_fa", "std_pitch_fa", "vsa"),
    MODEL.table_name: ("double_asr", "artp_double_asr", "artp_old"),
    TEXT.table_name: ("per", "dper", "artp"),
    "Reference-Audio": ("p_estoi_fa_all", "nad_fa_all"),
}
"""PathBench's statistical groups (``GROUPS`` of its ``scripts/combine_results.py``, which
names the audio group "Reference-Audio", not the table's "Reference-Audio (Parallel)"),
restricted to its table's metrics."""

COMPARISONS: tuple[tuple[str, str, str, str, str], ...] = (
    # name, column field compared, its x value, its y value, field that pairs must share
    ("balance", "condition", "EX", "MC", "task"),
    ("task", "task", "Sentence", "Word", "condition"),
)
RECORD_COLUMNS = (
    "comparison",
    "group",
    "x",
    "y",
    "n_pairs",
    "statistic",
    "p_x_greater",
    "p_y_greater",
    "reason",
)


def _long(aligned: AlignedR) -> pd.DataFrame:
    """One row per PathBench metric and PathBench-laid-out column that has a value."""
    displayed = [key for key, _, _ in PATHBENCH_ROWS]
    placed = [c for c in aligned.columns if c.corpus and c.task and c.condition]
    frame = pd.DataFrame(
        [
            (metric, c.corpus, c.task, c.condition, float(aligned.values.at[metric, c.label]))
            for metric in aligned.values.index
            if metric in displayed
            for c in placed
        ],
        columns=["metric", "corpus", "task", "condition", "value"],
    )
    return frame.dropna(subset=["value"])


def paired_values(aligned: AlignedR, field: str, x: str, y: str, shared: str) -> pd.DataFrame:
    """Pairs of one comparison: metric, corpus, the shared field, value at x, value at y."""
    long = _long(aligned)
    if field == "task":
        # Only corpora that have both tasks, as PathBench does before pairing.
        tasks = long.groupby("corpus")["task"].agg(set)
        both = tasks[tasks.map(lambda found: {x, y} <= found)].index
        long = long[long["corpus"].isin(both)]
    keys = ["metric", "corpus", shared]
    left = long[long[field] == x].set_index(keys)["value"].rename("x_value")
    right = long[long[field] == y].set_index(keys)["value"].rename("y_value")
    pairs = pd.concat([left, right], axis=1, join="inner").reset_index()
    return pairs.sort_values(keys, kind="mergesort").reset_index(drop=True)


def _test(pairs: pd.DataFrame) -> dict:
    """Both one-sided Wilcoxon tests of x against y, or the reason there is none."""
    n = len(pairs)
    result = {"n_pairs": n, "statistic": math.nan, "p_x_greater": math.nan}
    result |= {"p_y_greater": math.nan, "reason": ""}
    if n < MIN_PAIRS:
        result["reason"] = f"{n} paired value(s), at least {MIN_PAIRS} are needed"
        return result
    x, y = pairs["x_value"].to_numpy(), pairs["y_value"].to_numpy()
    try:
        with warnings.catch_warnings():
            # scipy warns about ties and zero differences; the p-value it returns is kept.
            warnings.simplefilter("ignore", category=UserWarning)
            greater = stats.wilcoxon(x, y, alternative="greater")
            less = stats.wilcoxon(x, y, alternative="less")
    except ValueError as error:
        result["reason"] = f"Wilcoxon test failed: {error}"
        return result
    if math.isnan(greater.pvalue) or math.isnan(less.pvalue):
        result["reason"] = "Wilcoxon test gave no p-value (all paired differences are zero?)"
        return result
    result |= {
        "statistic": float(greater.statistic),
        "p_x_greater": float(greater.pvalue),
        "p_y_greater": float(less.pvalue),
    }
    return result


def wilcoxon_comparisons(aligned: AlignedR) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Records of every comparison and group (``RECORD_COLUMNS``) and the pairs behind them.

    A comparison without any pair gets one "all" record saying why, and no group records,
    which could only repeat it; without any placed dataset, one record names both
    comparisons (:func:`_why_nothing_placed`).
    """
    records, all_pairs = [], []
    unplaced = _why_nothing_placed(aligned)
    for name, field, x, y, shared in COMPARISONS:
        pairs = paired_values(aligned, field, x, y, shared)
        all_pairs.append(pairs.assign(comparison=name, x=x, y=y).rename(columns={shared: "shared"}))
        subsets = [("all", pairs)] + [
            (group, pairs[pairs["metric"].isin(metrics)])
            for group, metrics in STAT_GROUPS.items()
            if not pairs.empty
        ]
        for group, subset in subsets:
            record = {"comparison": name, "group": group, "x": x, "y": y, **_test(subset)}
            if pairs.empty:
                record["reason"] = _why_no_pairs(aligned, field, x, y, shared)
            records.append(record)
    if unplaced:
        names = ", ".join(name for name, *_ in COMPARISONS)
        records = [{"comparison": names, "group": "all", "n_pairs": 0, "reason": unplaced}]
    pairs = pd.concat(all_pairs, ignore_index=True)
    pairs = pairs[["comparison", "x", "y", "metric", "corpus", "shared", "x_value", "y_value"]]
    return pd.DataFrame(records, columns=list(RECORD_COLUMNS)), pairs


def _why_nothing_placed(aligned: AlignedR) -> str:
    """Why neither comparison has a pair when no dataset has a corpus, task and condition;
    '' when one has."""
    if any(c.corpus and c.task and c.condition for c in aligned.columns):
        return ""
    described = "; ".join(
        f"{name} pairs a metric's {field} {x} and {field} {y} columns of one corpus and {shared}"
        for name, field, x, y, shared in COMPARISONS
    )
    unplaced = ", ".join(repr(c.dataset) for c in aligned.columns)
    return (
        f"{described}. This run's datasets ({unplaced}) have no corpus, task and condition, so "
        "there is nothing to pair (each is a column of its own in pathbench_table.csv); to "
        "compare, configure datasets of one corpus with datasets.<name>.corpus/task/condition "
        "or PathBench's directory layout"
    )


def _why_no_pairs(aligned: AlignedR, field: str, x: str, y: str, shared: str) -> str:
    """Why a comparison has no pair at all though some datasets are placed."""
    placed = [c for c in aligned.columns if c.corpus and c.task and c.condition]
    metrics = sorted(set(aligned.values.index) & {key for key, _, _ in PATHBENCH_ROWS})
    if not metrics:
        return "none of the metrics run is a row of PathBench's table"
    return (
        f"no metric of PathBench's table has a value at both {field} {x} and {field} {y} "
        f"for the same corpus and {shared} (placed columns: "
        f"{', '.join(c.label for c in placed)})"
    )


def _json_value(value: object) -> object:
    return None if isinstance(value, float) and math.isnan(value) else value


def write_comparisons(
    aligned: AlignedR, csv_path: str | Path, json_path: str | Path
) -> pd.DataFrame:
    """Write the comparison records as CSV and, with their pairs and columns, as JSON."""
    records, pairs = wilcoxon_comparisons(aligned)
    write_text(records.to_csv(index=False, float_format="%.10g", lineterminator="\n"), csv_path)
    write_json(
        {
            "source": "PathBench scripts/combine_results.py (RQ2 balance, RQ3 task)",
            "columns": [
                {
                    "dataset": c.dataset,
                    "label": c.label,
                    "corpus": c.corpus,
                    "task": c.task,
                    "condition": c.condition,
                }
                for c in aligned.columns
            ],
            "comparisons": _records(records),
            "pairs": _records(pairs),
        },
        json_path,
    )
    return records


def _records(frame: pd.DataFrame) -> Sequence[dict]:
    return [
        {key: _json_value(value) for key, value in row.items()}
        for row in frame.astype(object).to_dict(orient="records")
    ]
