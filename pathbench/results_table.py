"""The benchmark's headline table and the per-metric speaker files behind it.

The table has one row per metric and one column per dataset, holding the sign-aligned
Pearson r (positive = agrees with the listeners), so measures whose values fall with
intelligibility can be compared with those whose values rise. The speaker CSVs export every
metric in PathBench's external-predictor format, so any number in the table can be re-checked
with ``pathbench correlate`` or with PathBench's own evaluation script.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from pathbench.correlation import CATEGORIES
from pathbench.io import write_parquet, write_text

AVERAGE_COLUMN = "Avg"
DECIMALS = 2
TABLE_CSV = "results_table.csv"
TABLE_PARQUET = "results_table.parquet"

_SAFE_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


def build_results_table(correlations: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Combine per-dataset correlation tables into metric × dataset aligned r.

    ``correlations`` maps a dataset name to its :func:`~pathbench.correlation.correlate_metrics`
    table; columns keep the mapping's order, so the caller decides the dataset order. Cells
    are ``aligned_r`` rounded to two decimals and NaN where a dataset has no value for a
    metric. ``Avg`` is the mean of the *unrounded* values over the datasets that have one,
    rounded afterwards, so that rounding happens once. (PathBench's LaTeX table averages the
    already rounded cells, which can differ from this in the last digit.) Rows are ordered by
    category in ``CATEGORIES`` order, then by metric name.
    """
    if not correlations:
        raise ValueError("no correlation tables to combine")
    reserved = sorted({"metric", "category", AVERAGE_COLUMN} & set(correlations))
    if reserved:
        raise ValueError(f"dataset names {reserved} clash with the table's own columns")
    long = pd.concat(
        [
            frame.loc[:, ["metric", "category", "aligned_r"]].assign(dataset=name)
            for name, frame in correlations.items()
        ],
        ignore_index=True,
    )
    categories = long.drop_duplicates(["metric", "category"])
    conflicting = sorted(set(categories.loc[categories["metric"].duplicated(), "metric"]))
    if conflicting:
        raise ValueError(f"metrics with different categories across datasets: {conflicting}")
    unknown = sorted(set(categories["category"]) - set(CATEGORIES))
    if unknown:
        raise ValueError(f"unknown metric categories {unknown}; known: {list(CATEGORIES)}")

    aligned = long.pivot(index="metric", columns="dataset", values="aligned_r")
    aligned = aligned.reindex(columns=list(correlations)).astype("float64")
    table = _round(aligned)
    table[AVERAGE_COLUMN] = _round(aligned.mean(axis=1, skipna=True))
    table = table.reset_index()
    table.columns.name = None
    table.insert(1, "category", table["metric"].map(categories.set_index("metric")["category"]))
    return sort_by_category(table)


def _round(values: pd.DataFrame | pd.Series) -> pd.DataFrame | pd.Series:
    """Round to ``DECIMALS``; adding 0.0 turns -0.0 into 0.0 so no cell reads "-0.00"."""
    return values.round(DECIMALS) + 0.0


def sort_by_category(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows ordered by category in ``CATEGORIES`` order, then by metric name.

    This is the reading order of the paper's table (signal measures first, reference-audio
    measures and then lookup baselines last); every table and figure uses it so they can be
    read side by side.
    """
    rank = frame["category"].map({name: i for i, name in enumerate(CATEGORIES)})
    order = np.lexsort((frame["metric"].to_numpy(), rank.to_numpy()))
    return frame.iloc[order].reset_index(drop=True)


def write_results_table(
    table: pd.DataFrame, out_dir: str | Path, settings: object = None
) -> tuple[Path, Path]:
    """Write ``results_table.csv`` and ``results_table.parquet`` into ``out_dir``.

    The CSV shows each cell with exactly two decimals (empty where there is no value) so it
    reads like the paper's table and is byte-stable; the Parquet keeps the same rounded
    floats for programs. Returns the two paths.
    """
    out = Path(out_dir)
    value_columns = [c for c in table.columns if c not in ("metric", "category")]
    schema = pa.schema(
        [("metric", pa.string()), ("category", pa.string())]
        + [(str(column), pa.float64()) for column in value_columns]
    )
    csv_path, parquet_path = out / TABLE_CSV, out / TABLE_PARQUET
    write_text(
        table.to_csv(index=False, float_format=f"%.{DECIMALS}f", lineterminator="\n"),
        csv_path,
    )
    # Rows are already in table order (category rank, then metric), which no sort by the
    # category *names* reproduces, so the writer must keep them as they are.
    write_parquet(table, parquet_path, schema, sort_by=[], settings=settings)
    return csv_path, parquet_path


def require_file_names(metrics: Iterable[str]) -> None:
    """Refuse metric names that cannot serve as file names as they are.

    Per-metric outputs are named after the metric; a name with a path separator or a leading
    dot would write outside the output directory or create a hidden file.
    """
    bad = sorted(m for m in metrics if not _SAFE_FILE_NAME.fullmatch(m))
    if bad:
        raise ValueError(f"metric names unusable as file names: {bad}")


def export_speaker_csvs(speakers_long: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """Write ``<metric>.csv`` (``speaker_id,score``) for every metric; return the paths.

    Speakers without a value are left out, as an external predictor would leave them out,
    and rows are sorted by speaker. Scores are written with ``repr`` (the shortest text that
    reads back as the same float), so re-correlating the file reproduces r exactly.
    """
    out = Path(out_dir)
    require_file_names(speakers_long["metric"].unique())
    paths = []
    for metric, group in speakers_long.groupby("metric", sort=True):
        rows = group.dropna(subset=["value"]).sort_values("speaker_id", kind="mergesort")
        lines = ["speaker_id,score"] + [
            f"{speaker},{float(value)!r}"
            for speaker, value in zip(rows["speaker_id"], rows["value"], strict=True)
        ]
        path = out / f"{metric}.csv"
        write_text("\n".join(lines) + "\n", path)
        paths.append(path)
    return paths
