"""Does a predictor agree with the listeners better than the best built-in measure?

For each predictor and dataset, and for each category of built-in measures run on that
dataset, the predictor's correlation with the ground truth is tested against that of the
category's best measure. Both are correlated with the same ratings of the same speakers, so
the two correlations are dependent and the test is one for dependent correlations sharing a
variable (:mod:`pathbench_flow.stats.dependent_correlations`, Steiger 1980), with j the ground
truth, k the predictor and h the built-in measure.

* **Best** is the highest sign-aligned r (``r_aligned``: r times the metric's sign in the
  run's results table, ``sign_rules.csv``) among the category's metrics with a correlation; a
  tie goes to the metric name that sorts first, so the choice never depends on row order.
* **Signs**: r_jk and r_jh are sign-aligned (times the predictor's declared direction and the
  measure's sign in the results table, so a measure PathBench's vote flips is compared
  flipped, as the table shows it), r_kh times both signs, so a positive difference always
  means the predictor agrees better.
* **Speakers**: all three correlations are computed on one set, the speakers both metrics are
  correlated on (their sets of the common-speaker-set rule); that is the common set, unless
  the measure is allowlisted, when its r here can differ from the table's.

A comparison that cannot run (the predictor has no correlation, too few speakers, a
correlation of ±1) is still a row, with the reason, so a missing test is never read as "no
difference". The p-values are per comparison, without correction for their number.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from pathbench_flow.common.io import write_json, write_text
from pathbench_flow.evaluators import categories
from pathbench_flow.reporting.results_table import sign_aligned
from pathbench_flow.stats.correlation import speaker_sets
from pathbench_flow.stats.dependent_correlations import METHODS, compare_dependent

COLUMNS: tuple[str, ...] = (
    "dataset",
    "predictor",
    "category",
    "metric",
    "method",
    "n",
    "r_jk",
    "r_jh",
    "r_kh",
    "difference",
    "statistic",
    "df",
    "p_value",
    "ci_low",
    "ci_high",
    "level",
    "reason",
)
"""One row per predictor, dataset and category: ``metric`` is the category's best measure,
``r_jk``/``r_jh`` the predictor's and its sign-aligned r, ``ci_low``/``ci_high`` the interval
of their difference (Zou 2007)."""
TEXT_COLUMNS = ("dataset", "predictor", "category", "metric", "method", "reason")
INTEGER_COLUMNS = ("n", "df")
NOTATION = (
    "j = ground truth (spk2score), k = predictor, h = the category's best built-in measure "
    "(highest sign-aligned r on the dataset; ties: the first metric name); r_jk and r_jh are "
    "sign-aligned (r times the metric's sign in the results table, sign_rules.csv), r_kh "
    "times both signs; difference = "
    "r_jk - r_jh, positive where the predictor agrees better"
)


def best_per_category(aligned: pd.DataFrame, predictors: Collection[str]) -> dict[str, str]:
    """Category key → its best built-in metric (see the module docstring), for every category
    of the built-in metrics of ``aligned`` (a
    :func:`~pathbench_flow.reporting.results_table.sign_aligned` table); a category none of
    whose metrics has a correlation maps to ''."""
    builtin = aligned[~aligned["metric"].isin(list(predictors))]
    correlated = builtin.dropna(subset=["r_aligned"])
    ranked = correlated.assign(key=-correlated["r_aligned"]).sort_values(["key", "metric"])
    best = ranked.drop_duplicates("category").set_index("category")["metric"]
    present = sorted(set(builtin["category"]), key=categories.rank)
    return {category: str(best.get(category, "")) for category in present}


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson r, NaN where either side is constant (the test then names it)."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def dataset_comparisons(
    dataset: str,
    speakers_long: pd.DataFrame,
    ground_truth: pd.Series,
    correlations: pd.DataFrame,
    signs: pd.DataFrame,
    predictors: Collection[str],
    *,
    allowlist: Collection[str],
    method: str,
    level: float,
) -> list[dict]:
    """The rows (:data:`COLUMNS`) of one dataset: its speakers table, ground truth,
    correlation table and the run's signs (``signs``, as
    :func:`~pathbench_flow.reporting.results_table.read_signs`); ``predictors`` names every
    configured predictor (those with a row in ``correlations`` are compared), ``allowlist``
    is the correlation stage's."""
    aligned = sign_aligned(correlations, signs)
    table = aligned.set_index("metric")
    best = best_per_category(aligned, predictors)
    used = speaker_sets(speakers_long, ground_truth, allowlist).used
    values = speakers_long.pivot(index="speaker_id", columns="metric", values="value")
    rows = []
    for predictor in sorted(set(predictors) & set(table.index)):
        for category, metric in best.items():
            row = {"dataset": dataset, "predictor": predictor, "category": category}
            row |= {"metric": metric, "method": METHODS[method], "level": level}
            if not metric:
                row["reason"] = "no built-in measure of this category has a correlation here"
            elif table.at[predictor, "reason"]:
                row["reason"] = f"the predictor has no correlation: {table.at[predictor, 'reason']}"
            else:
                row |= _test(
                    sorted(set(used[predictor]) & set(used[metric])),
                    values,
                    ground_truth,
                    (predictor, int(table.at[predictor, "sign"])),
                    (metric, int(table.at[metric, "sign"])),
                    method,
                    level,
                )
            rows.append(row)
    return rows


def _test(
    speakers: Sequence[str],
    values: pd.DataFrame,
    ground_truth: pd.Series,
    predictor: tuple[str, int],
    metric: tuple[str, int],
    method: str,
    level: float,
) -> dict:
    """The sign-aligned correlations on ``speakers`` and the test's result, or its reason."""
    (k, k_sign), (h, h_sign) = predictor, metric
    x_k = values.loc[speakers, k].to_numpy(dtype="float64")
    x_h = values.loc[speakers, h].to_numpy(dtype="float64")
    y = ground_truth.loc[speakers].to_numpy(dtype="float64")
    r_jk, r_jh = k_sign * _pearson(y, x_k), h_sign * _pearson(y, x_h)
    r_kh = k_sign * h_sign * _pearson(x_k, x_h)
    found = {"n": len(speakers), "r_jk": r_jk, "r_jh": r_jh, "r_kh": r_kh}
    try:
        result = compare_dependent(r_jk, r_jh, r_kh, len(speakers), method=method, level=level)
    except ValueError as error:
        return found | {"difference": r_jk - r_jh, "reason": str(error)}
    return asdict(result) | {"reason": ""}


def comparison_table(rows: Sequence[Mapping]) -> pd.DataFrame:
    """The rows as a frame with :data:`COLUMNS`, NaN where a row has no such number."""
    frame = pd.DataFrame(list(rows), columns=list(COLUMNS))
    numbers = [column for column in COLUMNS if column not in TEXT_COLUMNS]
    frame[numbers] = frame[numbers].astype("float64")
    frame["reason"] = frame["reason"].fillna("")
    return frame


def _json_value(column: str, value: object) -> object:
    """A cell for JSON: null for NaN, a whole number for the counts."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return int(value) if column in INTEGER_COLUMNS else value


def write_predictor_comparisons(
    table: pd.DataFrame, csv_path: str | Path, json_path: str | Path, method: str, level: float
) -> None:
    """The table as CSV (ten significant digits) and, with the notation, as JSON."""
    write_text(table.to_csv(index=False, float_format="%.10g", lineterminator="\n"), csv_path)
    records = [
        {column: _json_value(column, value) for column, value in row.items()}
        for row in table.astype(object).to_dict(orient="records")
    ]
    write_json(
        {"method": METHODS[method], "level": level, "notation": NOTATION, "comparisons": records},
        json_path,
    )
