"""PathBench's published results, shipped with the package, beside the r this run measured.

``published/pathbench_results_e26aa32.csv`` is PathBench's ``results_table.csv`` byte for byte
(github.com/karkirowle/pathbench at commit e26aa32, the table of Halpern et al., 2026); the
sidecar ``pathbench_results_e26aa32.json`` names that source and holds the file's SHA-256,
which every read checks, so an edited copy can never be shown as PathBench's numbers.

PathBench's cells are speaker-level Pearson r after its sign alignment, rounded to two
decimals. The comparison (:func:`published_vs_measured`) puts each published cell beside
this run's cell of the same row and column, sign-aligned and rounded the same way (the cell of
``pathbench_table.csv``), so like is compared with like, and ``difference`` is measured minus
published of those two-decimal values: 0.00 means agreement to the published precision, not
equal r. Avg is left out: it averages whichever columns a run has, so it is comparable only
for a run of all 21. Every line without a difference says why in ``reason``, and a dataset
of the run outside PathBench's corpora (the demo, a corpus of the user's own) has a line
saying that PathBench published nothing to compare it with, so the file is never a bare
header.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np
import pandas as pd

from pathbench_flow.common.io import write_text
from pathbench_flow.reporting.results_table import (
    AUDIO_ROW,
    DECIMALS,
    PATHBENCH_COLUMNS,
    PATHBENCH_ROW_COLUMNS,
    PATHBENCH_ROWS,
    AlignedR,
    _cells,
    own_columns,
)
from pathbench_flow.schemas.tables import AVERAGE_COLUMN

PUBLISHED_DIR = resources.files("pathbench_flow.reporting") / "published"
PUBLISHED_TABLE = PUBLISHED_DIR / "pathbench_results_e26aa32.csv"
"""PathBench's ``results_table.csv`` at e26aa32 (package data)."""
PUBLISHED_SOURCE = PUBLISHED_DIR / "pathbench_results_e26aa32.json"
"""Where :data:`PUBLISHED_TABLE` comes from, and its SHA-256."""

PUBLISHED_VS_MEASURED_CSV = "pathbench_published_vs_measured.csv"
COMPARISON_COLUMNS: tuple[str, ...] = (
    "metric",
    "row",
    "category",
    "column",
    "published_r",
    "measured_r",
    "difference",
    "reason",
)
"""Columns of :func:`published_vs_measured`: the metric key, PathBench's row name and
category, the column label (corpus task condition), the three two-decimal values, and why a
line has no difference (empty when it has one)."""


def published_source(source: Traversable | Path = PUBLISHED_SOURCE) -> dict[str, object]:
    """The sidecar's citation of the published table (repository, commit, path, paper)."""
    return json.loads(source.read_text(encoding="utf-8"))


def read_published(
    table: Traversable | Path = PUBLISHED_TABLE, source: Traversable | Path = PUBLISHED_SOURCE
) -> pd.DataFrame:
    """PathBench's published cells, one row per table row and column in PathBench's order.

    Columns: ``metric``, ``row``, ``category``, ``column``, ``published_r`` (NaN where PathBench
    reports no value). A file whose SHA-256 is not the sidecar's, or whose rows and columns are
    not PathBench's as this package lays them out, is refused.
    """
    data = table.read_bytes()
    expected = published_source(source)["sha256"]
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise ValueError(
            f"{table}: SHA-256 {digest} is not that of PathBench's published table "
            f"({expected}, {source}); restore the file from the package or from PathBench's "
            "repository at the commit the sidecar names"
        )
    cells = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    labels = [" ".join(triple) for triple in PATHBENCH_COLUMNS]
    rows = [(name, category) for _, name, category in PATHBENCH_ROWS]
    if list(cells.columns) != [*PATHBENCH_ROW_COLUMNS, *labels, AVERAGE_COLUMN] or rows != list(
        zip(cells["Metric"], cells["Category"], strict=True)
    ):
        raise ValueError(
            f"{table}: rows or columns differ from PathBench's table as "
            "pathbench_flow.reporting.results_table lays it out (PATHBENCH_ROWS, "
            "PATHBENCH_COLUMNS); the two must describe the same table"
        )
    records = [
        (metric, name, category, label, float(text) if (text := cells.at[i, label]) else np.nan)
        for i, (metric, name, category) in enumerate(PATHBENCH_ROWS)
        for label in labels
    ]
    return pd.DataFrame(records, columns=list(COMPARISON_COLUMNS[:5]))


def published_vs_measured(
    aligned: AlignedR, audio: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Each published cell whose row (metric) and column (dataset) this run has, with this
    run's sign-aligned r rounded to two decimals and their difference; see the module doc.

    A cell either side leaves empty (PathBench's P-ESTOI and NAD on YouTube; a metric without
    r on a dataset of the run) keeps its line, with NaN values and its ``reason``. Each
    dataset outside PathBench's 21 columns follows with one line whose ``reason`` says that
    PathBench published no r for it; a run none of whose metrics is a row of PathBench's
    table gets one line saying so. ``audio`` (column label -> status, as for
    :func:`~pathbench_flow.reporting.results_table.pathbench_table`), when given and not
    empty, adds a last column ``pathbench_audio``: whether the line's audio is PathBench's
    (empty for a dataset outside PathBench's columns).
    """
    published = read_published()
    placed = {c.label: c for c in aligned.columns if c.triple in set(PATHBENCH_COLUMNS)}
    kept = published["metric"].isin(aligned.values.index) & published["column"].isin(placed)
    pairs = published[kept].reset_index(drop=True)
    measured = pd.Series(
        [aligned.values.at[m, c] for m, c in zip(pairs["metric"], pairs["column"], strict=True)],
        dtype="float64",
    )
    pairs["measured_r"] = _cells(measured)
    pairs["difference"] = _cells(pairs["measured_r"] - pairs["published_r"])
    pairs["reason"] = [
        _why_no_difference(published_r, measured_r, placed[column].dataset)
        for published_r, measured_r, column in zip(
            pairs["published_r"], pairs["measured_r"], pairs["column"], strict=True
        )
    ]
    unplaced = [
        {"column": c.label, "reason": _not_published(c.dataset, c.label)}
        for c in own_columns(aligned.columns)
    ]
    if placed and not set(aligned.values.index) & {metric for metric, _, _ in PATHBENCH_ROWS}:
        unplaced.insert(0, {"reason": _NO_PATHBENCH_METRIC})
    values = ("published_r", "measured_r", "difference")
    lines = pd.DataFrame(unplaced, columns=list(COMPARISON_COLUMNS)).astype(
        {**dict.fromkeys(COMPARISON_COLUMNS, object), **dict.fromkeys(values, "float64")}
    )
    result = pd.concat(
        [pairs, lines.fillna({"metric": "", "row": "", "category": ""})], ignore_index=True
    )
    if audio:
        result[AUDIO_ROW] = result["column"].map(audio).fillna("")
    return result


_NO_PATHBENCH_METRIC = (
    "none of the metrics this run computed is a row of PathBench's table "
    f"({', '.join(name for _, name, _ in PATHBENCH_ROWS)}), so no published cell matches"
)


def _why_no_difference(published_r: float, measured_r: float, dataset: str) -> str:
    """Why a line of a PathBench column has no difference; empty when it has one."""
    reasons = []
    if np.isnan(published_r):
        reasons.append("PathBench published no value for this cell")
    if np.isnan(measured_r):
        reasons.append(
            f"this run has no r for this metric on dataset {dataset!r} (the reason is in "
            f"results/{dataset}/correlations.csv)"
        )
    return "; ".join(reasons)


def _not_published(dataset: str, label: str) -> str:
    """Why a dataset outside PathBench's corpora has nothing to compare."""
    corpora = ", ".join(dict.fromkeys(corpus for corpus, _, _ in PATHBENCH_COLUMNS))
    return (
        f"dataset {dataset!r} is in none of the 21 columns PathBench published (corpora "
        f"{corpora}), so there is no published r to compare it with; this run's values for it "
        f"are in pathbench_table.csv and results_table.csv, column {label!r}"
    )


def write_published_vs_measured(
    aligned: AlignedR, path: str | Path, audio: Mapping[str, str] | None = None
) -> Path:
    """Write :func:`published_vs_measured` as CSV with two-decimal values (empty: none)."""
    text = published_vs_measured(aligned, audio).to_csv(
        index=False, float_format=f"%.{DECIMALS}f", lineterminator="\n"
    )
    write_text(text, path)
    return Path(path)
