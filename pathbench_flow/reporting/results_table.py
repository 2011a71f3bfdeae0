"""The benchmark's headline table, laid out as PathBench's, and the per-metric speaker files.

Source of the layout: PathBench builds its published table with ``scripts/combine_results.py``
of github.com/karkirowle/pathbench (commit 1a222b8, the version with "MC/EX/Full" headers).
Only facts were carried over, no code:

* **Rows** (key → row name, in this order, under these categories): Reference-Free (Signal):
  ``praat_speech_rate_fa`` Speech Rate, ``cpp_fa`` CPP, ``std_pitch_fa`` Std Pitch;
  Reference-Free (Speaker): ``vsa`` VSA; Reference-Free (Model): ``double_asr`` Double ASR,
  ``artp_double_asr`` DArtP, ``artp_old`` Confidence; Reference-Text: ``per`` PER (SEM),
  ``dper`` PER (Phone), ``artp`` ArtP; Reference-Audio (Parallel): ``p_estoi_fa_all``
  P-ESTOI, ``nad_fa_all`` NAD. ``wada_snr`` is not a row there; PathBench prints it in a
  separate list, and here it is one of the extra rows below.
* **Signs**: cells are Pearson r after PathBench's sign alignment, which works on r, not on
  a declared direction: ``per``, ``dper`` and every ``nad`` variant show ``|r|`` (rule
  ``abs``); ``double_asr`` shows ``-r`` (rule ``negate``); every other metric is flipped in
  *all* columns when its r is negative in *every* column that has one, and kept otherwise
  (rule ``vote``; PathBench's vote is unanimous, not a majority: one positive column keeps
  the raw signs everywhere). ``sign_rule`` records which rule applied and its outcome.
* **Columns**: ``(corpus, task, condition)`` in PathBench's order (UASpeech Word; NeuroVoz
  Sentence; EasyCall Word, Sentence; COPAS Word, Sentence; TORGO Word, Sentence; YT
  Sentence), conditions MC (matched content = ``balanced``), EX (extended = ``unbalanced``)
  and Full (``all``). Datasets outside that list follow in the order given.
* **Cells** are shown with two decimals; **Avg** is the mean of the *rounded* cells of the
  row's available columns, rounded again (so it can differ in the last digit from the mean
  of the unrounded values, as in the paper).

What this module adds to PathBench's table: metrics this workflow runs that are not rows of
PathBench's table (``wada_snr``, raw-audio variants, ``cpps_fa``, ``wpm``, ``spk2age``, …) are
kept as extra rows after PathBench's rows of their category (``in_pathbench_table`` False),
under the metric key as row name; rows of PathBench's table whose metric was not run are
left out; and ``n_datasets`` counts the columns each row's Avg is taken over, because Avg
of a row with fewer columns is not comparable with the others. ``-0.00`` is shown as
``0.00``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pathbench_flow.data.references import REFERENCE_TYPES
from pathbench_flow.io import write_parquet, write_text
from pathbench_flow.metric import FA, VARIANTS, MetricKey
from pathbench_flow.schemas import (
    AVERAGE_COLUMN,
    COUNT_COLUMN,
    RESULTS_ROW_SCHEMA,
    results_table_schema,
)
from pathbench_flow.stats.correlation import CATEGORIES

DECIMALS = 2
TABLE_CSV = "results_table.csv"
TABLE_PARQUET = "results_table.parquet"
ROW_COLUMNS: tuple[str, ...] = tuple(RESULTS_ROW_SCHEMA.names)
"""Descriptive columns before the dataset columns."""

SIGNAL, SPEAKER, MODEL, TEXT, AUDIO, LOOKUP = (
    "Reference-Free (Signal)",
    "Reference-Free (Speaker)",
    "Reference-Free (Model)",
    "Reference-Text",
    "Reference-Audio (Parallel)",
    "Lookup",
)
TABLE_CATEGORIES: tuple[str, ...] = (SIGNAL, SPEAKER, MODEL, TEXT, AUDIO, LOOKUP)
"""Row groups in table order; ``Lookup`` (baselines such as ``spk2age``) is this project's."""

PATHBENCH_ROWS: tuple[tuple[str, str, str], ...] = (
    (MetricKey("praat_speech_rate", FA).name, "Speech Rate", SIGNAL),
    (MetricKey("cpp", FA).name, "CPP", SIGNAL),
    (MetricKey("std_pitch", FA).name, "Std Pitch", SIGNAL),
    ("vsa", "VSA", SPEAKER),
    ("double_asr", "Double ASR", MODEL),
    ("artp_double_asr", "DArtP", MODEL),
    ("artp_old", "Confidence", MODEL),
    ("per", "PER (SEM)", TEXT),
    ("dper", "PER (Phone)", TEXT),
    ("artp", "ArtP", TEXT),
    (MetricKey("p_estoi", FA, "all").name, "P-ESTOI", AUDIO),
    (MetricKey("nad", FA, "all").name, "NAD", AUDIO),
)
"""PathBench's table rows: metric name, row name, category."""

EXTRA_ROW_NAMES = {"wada_snr": "WADA SNR"}
"""Row names of extra rows that PathBench reports outside its table under its own name."""

_CATEGORY_OF_KIND = {
    "reference-free signal": SIGNAL,
    "reference-free speaker": SPEAKER,
    "reference-free model": MODEL,
    "reference-text": TEXT,
    "reference-audio": AUDIO,
    "lookup": LOOKUP,
}
"""This project's registry categories → table categories, for extra rows."""

ABS_METRICS = frozenset(
    {"per", "dper"} | {MetricKey("nad", v, r).name for v in VARIANTS for r in REFERENCE_TYPES}
)
NEGATED_METRICS = frozenset({"double_asr"})

CORPUS_NAMES = {
    "uaspeech": "UASpeech",
    "neurovoz": "NeuroVoz",
    "easycall": "EasyCall",
    "copas": "COPAS",
    "torgo": "TORGO",
    "youtube": "YT",
    "yt": "YT",
}
TASKS = {"word": "Word", "utterances": "Sentence", "sentence": "Sentence"}
CONDITIONS = {"balanced": "MC", "unbalanced": "EX", "all": "Full"}
PATHBENCH_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("UASpeech", "Word", "MC"),
    ("UASpeech", "Word", "EX"),
    ("NeuroVoz", "Sentence", "MC"),
    ("NeuroVoz", "Sentence", "EX"),
    ("EasyCall", "Word", "MC"),
    ("EasyCall", "Word", "EX"),
    ("EasyCall", "Sentence", "MC"),
    ("EasyCall", "Sentence", "EX"),
    ("COPAS", "Word", "MC"),
    ("COPAS", "Word", "EX"),
    ("COPAS", "Word", "Full"),
    ("COPAS", "Sentence", "MC"),
    ("COPAS", "Sentence", "EX"),
    ("COPAS", "Sentence", "Full"),
    ("TORGO", "Word", "MC"),
    ("TORGO", "Word", "EX"),
    ("TORGO", "Sentence", "MC"),
    ("TORGO", "Sentence", "EX"),
    ("YT", "Sentence", "Full"),
)
"""PathBench's column order."""

_SAFE_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


@dataclass(frozen=True)
class DatasetColumn:
    """Where one dataset sits in the table: its label and, when known, PathBench's triple.

    ``corpus``/``task``/``condition`` are empty for a dataset outside PathBench's layout (the
    demo, a private corpus); such a column is labelled with the dataset's name and takes part
    in no Wilcoxon comparison.
    """

    dataset: str
    corpus: str = ""
    task: str = ""
    condition: str = ""

    @property
    def label(self) -> str:
        parts = (self.corpus, self.task, self.condition)
        return " ".join(p for p in parts if p) if self.corpus else self.dataset


def _normalised(value: str, names: Mapping[str, str], key: str, dataset: str) -> str:
    """A configured task/condition value in PathBench's spelling; an unknown one is an error."""
    known = {**names, **{v.lower(): v for v in names.values()}}
    try:
        return known[value.lower()]
    except KeyError:
        raise ValueError(
            f"config datasets.{dataset}.{key}: {value!r} is not one of "
            f"{sorted(names)}; fix the value or remove the key"
        ) from None


def dataset_column(dataset: str, settings: Mapping[str, str]) -> DatasetColumn:
    """The column of ``dataset`` from its config entry (``path`` and optional keys).

    ``corpus``, ``task`` (word/sentence) and ``condition`` (balanced/unbalanced/all) set the
    column explicitly. Without ``corpus``, a path laid out as PathBench's
    ``<corpus>/pathological/<task>/<condition>`` (or ``.../youtube``) gives the triple; any
    other path leaves the dataset outside PathBench's layout, labelled with its name.
    """
    if settings.get("corpus"):
        corpus = settings["corpus"]
        return DatasetColumn(
            dataset,
            CORPUS_NAMES.get(corpus.lower(), corpus),
            _normalised(settings.get("task", ""), TASKS, "task", dataset)
            if settings.get("task")
            else "",
            _normalised(settings.get("condition", ""), CONDITIONS, "condition", dataset)
            if settings.get("condition")
            else "",
        )
    parts = [p.lower() for p in Path(settings.get("path", "")).parts]
    if parts and parts[-1] == "youtube":
        return DatasetColumn(dataset, "YT", "Sentence", "Full")
    if len(parts) >= 4 and parts[-3] == "pathological":
        corpus, task, condition = parts[-4], parts[-2], parts[-1]
        if task in TASKS and condition in CONDITIONS:
            return DatasetColumn(
                dataset, CORPUS_NAMES.get(corpus, corpus), TASKS[task], CONDITIONS[condition]
            )
    return DatasetColumn(dataset)


def order_columns(columns: Iterable[DatasetColumn]) -> list[DatasetColumn]:
    """PathBench's column order first, then the others in the order given.

    Two datasets with the same label would make one column hide the other: refused, naming
    both, with the config keys that tell them apart.
    """
    columns = list(columns)
    seen: dict[str, str] = {}
    for column in columns:
        if column.label in seen:
            raise ValueError(
                f"datasets {seen[column.label]!r} and {column.dataset!r} both map to the "
                f"results-table column {column.label!r}; set datasets.<name>.corpus/task/"
                "condition in the config so that they differ"
            )
        seen[column.label] = column.dataset
    rank = {triple: i for i, triple in enumerate(PATHBENCH_COLUMNS)}
    known = sorted(
        (c for c in columns if (c.corpus, c.task, c.condition) in rank),
        key=lambda c: rank[(c.corpus, c.task, c.condition)],
    )
    return known + [c for c in columns if (c.corpus, c.task, c.condition) not in rank]


def _rows(categories: Mapping[str, str]) -> pd.DataFrame:
    """The rows to show for the metrics run (``categories``: metric → registry category)."""
    pathbench = {key: (name, category) for key, name, category in PATHBENCH_ROWS}
    rows = []
    for metric, kind in categories.items():
        if metric in pathbench:
            name, category = pathbench[metric]
            position = [key for key, _, _ in PATHBENCH_ROWS].index(metric)
        else:
            if kind not in _CATEGORY_OF_KIND:
                raise ValueError(
                    f"unknown metric categories [{kind!r}]; known: {sorted(_CATEGORY_OF_KIND)}"
                )
            name, category = EXTRA_ROW_NAMES.get(metric, metric), _CATEGORY_OF_KIND[kind]
            position = len(PATHBENCH_ROWS)
        rows.append((metric, name, category, metric in pathbench, position))
    frame = pd.DataFrame(rows, columns=["metric", "row", "category", "in_pathbench_table", "pos"])
    rank = frame["category"].map({c: i for i, c in enumerate(TABLE_CATEGORIES)})
    order = np.lexsort((frame["metric"].to_numpy(), frame["pos"].to_numpy(), rank.to_numpy()))
    return frame.iloc[order].drop(columns="pos").reset_index(drop=True)


def align_signs(r: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """PathBench's sign alignment of a metric × column table of Pearson r.

    Returns the aligned table and, per metric, the rule applied (``abs``, ``negate``,
    ``vote: flipped`` or ``vote: kept``); see the module docstring.
    """
    aligned = r.copy()
    rules = {}
    for metric, values in r.iterrows():
        present = values.dropna()
        if metric in ABS_METRICS:
            aligned.loc[metric] = values.abs()
            rules[metric] = "abs"
        elif metric in NEGATED_METRICS:
            aligned.loc[metric] = -values
            rules[metric] = "negate"
        elif len(present) and (present < 0).all():
            aligned.loc[metric] = -values
            rules[metric] = "vote: flipped"
        else:
            rules[metric] = "vote: kept"
    return aligned, pd.Series(rules, name="sign_rule")


def _cells(values: pd.DataFrame | pd.Series) -> pd.DataFrame | pd.Series:
    """Two-decimal cells; adding 0.0 turns -0.0 into 0.0 so no cell reads "-0.00"."""
    return values.round(DECIMALS) + 0.0


@dataclass(frozen=True)
class AlignedR:
    """Sign-aligned, unrounded Pearson r: metric × column label, with the rows' metadata."""

    rows: pd.DataFrame
    columns: list[DatasetColumn]
    values: pd.DataFrame
    sign_rules: pd.Series


def aligned_r(
    correlations: Mapping[str, pd.DataFrame], columns: Sequence[DatasetColumn] | None = None
) -> AlignedR:
    """PathBench's rows, column order and sign alignment applied to per-dataset correlations.

    ``correlations`` maps a dataset name to its correlation table (``metric``, ``category``
    and ``pearson_r`` are read, other columns ignored). ``columns`` places the datasets
    (default: every dataset outside PathBench's layout, in the mapping's order).
    """
    if not correlations:
        raise ValueError("no correlation tables to combine")
    if columns is None:
        columns = [DatasetColumn(name) for name in correlations]
    columns = order_columns(columns)
    if sorted(c.dataset for c in columns) != sorted(correlations):
        raise ValueError(
            f"table columns {sorted(c.dataset for c in columns)} do not match the datasets "
            f"with correlations {sorted(correlations)}"
        )
    reserved = sorted({c.label for c in columns} & {*ROW_COLUMNS, AVERAGE_COLUMN, COUNT_COLUMN})
    if reserved:
        raise ValueError(f"dataset columns {reserved} clash with the table's own columns")
    long = pd.concat(
        [
            correlations[c.dataset]
            .loc[:, ["metric", "category", "pearson_r"]]
            .assign(column=c.label)
            for c in columns
        ],
        ignore_index=True,
    )
    categories = long.drop_duplicates(["metric", "category"])
    conflicting = sorted(set(categories.loc[categories["metric"].duplicated(), "metric"]))
    if conflicting:
        raise ValueError(f"metrics with different categories across datasets: {conflicting}")
    rows = _rows(dict(zip(categories["metric"], categories["category"], strict=True)))
    r = long.pivot(index="metric", columns="column", values="pearson_r")
    r = r.reindex(index=rows["metric"], columns=[c.label for c in columns]).astype("float64")
    values, rules = align_signs(r)
    return AlignedR(rows, columns, values, rules)


def build_results_table(
    correlations: Mapping[str, pd.DataFrame], columns: Sequence[DatasetColumn] | None = None
) -> pd.DataFrame:
    """Combine per-dataset correlation tables into PathBench's metric × dataset table.

    Arguments as for :func:`aligned_r`. The result has ``ROW_COLUMNS``, one column per
    dataset (its label), ``Avg`` and ``n_datasets``; see the module docstring for the rules.
    """
    aligned = aligned_r(correlations, columns)
    cells = _cells(aligned.values)
    table = aligned.rows.set_index("metric")
    table["sign_rule"] = aligned.sign_rules
    table[list(cells.columns)] = cells
    # PathBench's Avg: the mean of the rounded cells, rounded again.
    table[AVERAGE_COLUMN] = _cells(cells.mean(axis=1, skipna=True))
    table[COUNT_COLUMN] = cells.notna().sum(axis=1).astype("int64")
    return table.reset_index()


def sort_by_category(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of a per-dataset table ordered by registry category, then by metric name.

    The per-dataset figures use this order (signal measures first, lookup baselines last) so
    that they read like the results table.
    """
    rank = frame["category"].map({name: i for i, name in enumerate(CATEGORIES)})
    order = np.lexsort((frame["metric"].to_numpy(), rank.to_numpy()))
    return frame.iloc[order].reset_index(drop=True)


def dataset_columns_of(table: pd.DataFrame) -> list[str]:
    """The dataset (label) columns of a :func:`build_results_table` table, in order."""
    own = {*ROW_COLUMNS, AVERAGE_COLUMN, COUNT_COLUMN}
    return [c for c in table.columns if c not in own]


def write_results_table(
    table: pd.DataFrame, out_dir: str | Path, settings: object = None
) -> tuple[Path, Path]:
    """Write ``results_table.csv`` and ``results_table.parquet`` into ``out_dir``.

    The CSV shows each cell with exactly two decimals (empty where there is no value) so it
    reads like the paper's table and is byte-stable; the Parquet keeps the same rounded
    floats for programs. Returns the two paths.
    """
    out = Path(out_dir)
    schema = results_table_schema(dataset_columns_of(table))
    csv_path, parquet_path = out / TABLE_CSV, out / TABLE_PARQUET
    write_text(
        table.to_csv(index=False, float_format=f"%.{DECIMALS}f", lineterminator="\n"),
        csv_path,
    )
    # Rows are already in table order (category rank, then PathBench's order), which no sort
    # by column values reproduces, so the writer must keep them as they are.
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


def speaker_csv_text(speakers: Iterable[str], values: Iterable[float]) -> str:
    """``speaker_id,score`` CSV text written by the csv module.

    Speaker ids may hold commas or quotes (Kaldi only forbids whitespace), so fields are
    quoted where needed; scores are written with ``repr`` (the shortest text that reads back
    as the same float), so re-correlating the file reproduces r exactly.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["speaker_id", "score"])
    writer.writerows(
        (speaker, repr(float(value))) for speaker, value in zip(speakers, values, strict=True)
    )
    return buffer.getvalue()


def export_speaker_csvs(speakers_long: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """Write ``<metric>.csv`` (``speaker_id,score``) for every metric; return the paths.

    Speakers without a value are left out, as an external predictor would leave them out,
    and rows are sorted by speaker.
    """
    out = Path(out_dir)
    require_file_names(speakers_long["metric"].unique())
    paths = []
    for metric, group in speakers_long.groupby("metric", sort=True):
        rows = group.dropna(subset=["value"]).sort_values("speaker_id", kind="mergesort")
        path = out / f"{metric}.csv"
        write_text(speaker_csv_text(rows["speaker_id"], rows["value"]), path)
        paths.append(path)
    return paths
