"""The benchmark's headline table, laid out as PathBench's, and the per-metric speaker files.

Source of the layout: PathBench builds its published table (``results_table.csv``) with
``scripts/combine_results.py`` of github.com/karkirowle/pathbench (checkout e26aa32, the
version with MDSC and "MC/EX/Full" headers). Only facts were carried over, no code:

* **Rows** (key → row name, in this order, under these categories): Reference-Free (Signal):
  ``praat_speech_rate_fa`` Speech Rate, ``cpp_fa`` CPP, ``std_pitch_fa`` Std Pitch;
  Reference-Free (Speaker): ``vsa`` VSA; Reference-Free (Model): ``double_asr`` Double ASR,
  ``artp_double_asr`` DArtP, ``artp_old`` Confidence; Reference-Text: ``per`` PER (SEM),
  ``dper`` PER (Phone), ``artp`` ArtP; Reference-Audio (Parallel): ``p_estoi_fa_all``
  P-ESTOI, ``nad_fa_all`` NAD. ``wada_snr`` is not a row there; PathBench prints it in a
  separate list, and here it is one of the extra rows below.
* **Signs**: cells are Pearson r after PathBench's sign alignment (its ``align_signs``): a
  metric PathBench expects to fall as intelligibility rises (``double_asr``, ``per``,
  ``dper``, every ``nad`` variant) shows ``-r``; one it expects to rise (``cpp``,
  ``std_pitch``, ``vsa`` in both variants, ``artp``, ``artp_old``, ``artp_double_asr``,
  every ``p_estoi`` variant) shows ``r``; every other metric (the speech rates, ``wada_snr``,
  ``spk2age`` and any metric PathBench does not list) is flipped in *all* columns when more
  of its columns have a negative r than a positive one (a tie keeps the signs). So a cell
  below zero is a metric behaving against PathBench's expectation. ``sign_rule`` records
  which rule applied and its outcome.
* **Columns**: ``(corpus, task, condition)`` in PathBench's order (UASpeech Word; NeuroVoz
  Sentence; EasyCall Word, Sentence; COPAS Word, Sentence; TORGO Word, Sentence; MDSC
  Command; YT Sentence), conditions MC (matched content = ``balanced``), EX (extended =
  ``unbalanced``) and Full (``all``): 21 columns. A dataset is placed by its path, laid out
  as PathBench's ``datasets/<corpus>/pathological/<task>/<condition>`` (``utterances`` is
  Sentence; YouTube's files lie in ``datasets/youtube`` itself, its one column YT Sentence
  Full), or by its config keys ``corpus``/``task``/``condition``. Datasets outside those 21
  columns follow in config order.
* **Cells** are shown with two decimals; **Avg** is the mean of the *rounded* cells of the
  row's available columns, rounded again (so it can differ in the last digit from the mean
  of the unrounded values, as in the paper).

Two files are written. ``pathbench_table.csv`` is PathBench's file itself: its header, its
12 rows and its 21 columns whatever the run covered, cells empty where the run has no such
dataset or metric, exactly as ``combine_results.py`` writes a partial run, and Avg over
PathBench's columns only, so it diffs cleanly against PathBench's ``results_table.csv``. A
dataset of the run outside those 21 columns (the demo, a corpus of your own) gets a column of
its own after Avg, so the run's values are in PathBench's layout too; a run of PathBench's
corpora alone has none, and the file is then PathBench's layout exactly.
``results_table.csv`` is this project's richer table: metrics this workflow runs that are
not rows of PathBench's table (``wada_snr``, raw-audio variants, ``cpps_fa``, ``wpm``,
``spk2age``, …) are kept as extra rows after PathBench's rows of their category
(``in_pathbench_table`` False), under the metric key as row name; rows of PathBench's table
whose metric was not run and columns the run does not have are left out; datasets outside
PathBench's columns are columns too and count in Avg; and ``n_datasets`` counts the columns
each row's Avg is taken over, because Avg of a row with fewer columns is not comparable with
the others. ``-0.00`` is shown as ``0.00`` there, while ``pathbench_table.csv`` writes it as
PathBench's formatting does.
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

from pathbench_flow.common.io import write_parquet, write_text
from pathbench_flow.data.references import REFERENCE_TYPES
from pathbench_flow.evaluators import categories
from pathbench_flow.evaluators.categories import AUDIO, MODEL, SIGNAL, SPEAKER, TEXT
from pathbench_flow.evaluators.metric import FA, VARIANTS, MetricKey
from pathbench_flow.reporting import html_table
from pathbench_flow.schemas.tables import (
    AVERAGE_COLUMN,
    AVERAGE_INTERVAL_COLUMNS,
    AVERAGE_UNROUNDED_COLUMN,
    COUNT_COLUMN,
    RESULTS_ROW_SCHEMA,
    results_table_schema,
)

DECIMALS = 2
INTERVAL_DECIMALS = 3
"""Decimals of the unrounded Avg and its interval: enough to tell 0.467 from the 0.47 of the
rounded cells' mean, and no more than the bootstrap's Monte Carlo error (~0.005) supports."""
BOOTSTRAP_COLUMNS = (AVERAGE_UNROUNDED_COLUMN, *AVERAGE_INTERVAL_COLUMNS)
TABLE_CSV = "results_table.csv"
TABLE_PARQUET = "results_table.parquet"
ROW_COLUMNS: tuple[str, ...] = tuple(RESULTS_ROW_SCHEMA.names)
"""Descriptive columns before the dataset columns."""

PATHBENCH_ROWS: tuple[tuple[str, str, str], ...] = (
    (MetricKey("praat_speech_rate", FA).name, "Speech Rate", SIGNAL.table_name),
    (MetricKey("cpp", FA).name, "CPP", SIGNAL.table_name),
    (MetricKey("std_pitch", FA).name, "Std Pitch", SIGNAL.table_name),
    ("vsa", "VSA", SPEAKER.table_name),
    ("double_asr", "Double ASR", MODEL.table_name),
    ("artp_double_asr", "DArtP", MODEL.table_name),
    ("artp_old", "Confidence", MODEL.table_name),
    ("per", "PER (SEM)", TEXT.table_name),
    ("dper", "PER (Phone)", TEXT.table_name),
    ("artp", "ArtP", TEXT.table_name),
    (MetricKey("p_estoi", FA, "all").name, "P-ESTOI", AUDIO.table_name),
    (MetricKey("nad", FA, "all").name, "NAD", AUDIO.table_name),
)
"""PathBench's table rows: metric name, row name, category (PathBench's name of the group)."""

EXTRA_ROW_NAMES = {"wada_snr": "WADA SNR"}
"""Row names of extra rows that PathBench reports outside its table under its own name."""

EXPECTED_SIGNS: dict[str, int] = {
    **{MetricKey(e, v).name: 1 for e in ("cpp", "std_pitch", "vsa") for v in VARIANTS},
    **dict.fromkeys(("artp_double_asr", "artp_old", "artp"), 1),
    **{MetricKey("p_estoi", v, r).name: 1 for v in VARIANTS for r in REFERENCE_TYPES},
    **dict.fromkeys(("double_asr", "per", "dper"), -1),
    **{MetricKey("nad", v, r).name: -1 for v in VARIANTS for r in REFERENCE_TYPES},
}
"""PathBench's expected sign of r per metric; the cells show ``sign × r``. A metric not here
(PathBench leaves the speech rates, ``wada_snr`` and ``spk2age`` open) is aligned by vote."""

CORPUS_NAMES = {
    "uaspeech": "UASpeech",
    "neurovoz": "NeuroVoz",
    "easycall": "EasyCall",
    "copas": "COPAS",
    "torgo": "TORGO",
    "mdsc": "MDSC",
    "youtube": "YT",
}
"""PathBench's corpus names by its dataset folder (``datasets/<folder>``)."""
TASKS = {"word": "Word", "utterances": "Sentence", "sentence": "Sentence", "command": "Command"}
"""Task folders (and config values) → PathBench's task names."""
CONDITIONS = {"balanced": "MC", "unbalanced": "EX", "all": "Full"}
"""Condition folders (and config values) → PathBench's condition names."""
SINGLE_COLUMN_CORPORA = {"YT": ("Sentence", "Full")}
"""Corpora PathBench ships without task and condition folders (``datasets/youtube`` holds its
Kaldi files itself), with the task and condition of their one column."""
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
    ("MDSC", "Command", "MC"),
    ("MDSC", "Command", "EX"),
    ("YT", "Sentence", "Full"),
)
"""PathBench's columns, in its order (``get_table_column_order``)."""

PATHBENCH_TABLE_CSV = "pathbench_table.csv"
AUDIO_ROW = "pathbench_audio"
"""The row of ``pathbench_table.csv`` (and column of the published comparison) saying
whether each column's audio is PathBench's."""
PATHBENCH_ROW_COLUMNS = ("Metric", "Category")
"""The columns of ``pathbench_table.csv`` before PathBench's 21 dataset columns and Avg."""

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
    def triple(self) -> tuple[str, str, str]:
        """``(corpus, task, condition)``, PathBench's key of a column."""
        return self.corpus, self.task, self.condition

    @property
    def label(self) -> str:
        return " ".join(p for p in self.triple if p) if self.corpus else self.dataset


def _spellings(names: Mapping[str, str]) -> dict[str, str]:
    """Lower-case folder names and PathBench's names themselves → PathBench's names, so that a
    config may write either (``youtube``, ``YT``; ``unbalanced``, ``EX``)."""
    return {**names, **{name.lower(): name for name in names.values()}}


def _normalised(value: str, names: Mapping[str, str], key: str, dataset: str) -> str:
    """A configured task/condition value in PathBench's spelling; an unknown one is an error."""
    try:
        return _spellings(names)[value.lower()]
    except KeyError:
        raise ValueError(
            f"config datasets.{dataset}.{key}: {value!r} is not one of "
            f"{sorted(names)}; fix the value or remove the key"
        ) from None


def _path_layout(path: str) -> tuple[str, str, str]:
    """``(corpus, task, condition)`` a path laid out as PathBench's gives; empty parts where
    it is not (``<corpus>/pathological/<task>/<condition>``, or ``.../youtube``)."""
    parts = Path(path).parts
    folder = parts[-1].lower() if parts else ""
    single = CORPUS_NAMES.get(folder)
    if single in SINGLE_COLUMN_CORPORA:
        return (single, *SINGLE_COLUMN_CORPORA[single])
    if len(parts) >= 4 and parts[-3].lower() == "pathological":
        corpus, task, condition = parts[-4], parts[-2].lower(), folder
        if task in TASKS and condition in CONDITIONS:
            return CORPUS_NAMES.get(corpus.lower(), corpus), TASKS[task], CONDITIONS[condition]
    return "", "", ""


def dataset_column(dataset: str, settings: Mapping[str, str]) -> DatasetColumn:
    """The column of ``dataset`` from its config entry (``path`` and optional keys).

    A path laid out as PathBench's gives the triple; ``corpus``, ``task`` (word, sentence or
    command; ``utterances`` reads as sentence) and ``condition`` (balanced, unbalanced, all)
    set or override its parts, so a dataset stored elsewhere is placed by its keys alone. A
    corpus with one column in PathBench (YT) needs no task or condition. A dataset with
    neither layout nor ``corpus`` is labelled with its name; a task or condition without a
    corpus would be dropped silently, so it is an error.
    """
    corpus, task, condition = _path_layout(settings.get("path", ""))
    if settings.get("corpus"):
        corpus = _spellings(CORPUS_NAMES).get(settings["corpus"].lower(), settings["corpus"])
        if not (task or condition):
            task, condition = SINGLE_COLUMN_CORPORA.get(corpus, ("", ""))
    if settings.get("task"):
        task = _normalised(settings["task"], TASKS, "task", dataset)
    if settings.get("condition"):
        condition = _normalised(settings["condition"], CONDITIONS, "condition", dataset)
    if (task or condition) and not corpus:
        key = "task" if settings.get("task") else "condition"
        raise ValueError(
            f"config datasets.{dataset}.{key} is set but the dataset has no corpus (its path "
            "is not laid out as <corpus>/pathological/<task>/<condition>); set "
            f"datasets.{dataset}.corpus too (PathBench's name or your own)"
        )
    return DatasetColumn(dataset, corpus, task, condition)


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
        (c for c in columns if c.triple in rank),
        key=lambda c: rank[c.triple],
    )
    return known + [c for c in columns if c.triple not in rank]


def results_columns(datasets: Mapping[str, Mapping[str, str]]) -> list[DatasetColumn]:
    """The table's columns for the config's ``datasets`` (name → entry), in table order.

    The workflow calls this when it reads the config, so that two datasets in one column or
    a task without a corpus stop the run before any job, not at the table at its end.
    """
    return order_columns(dataset_column(name, entry) for name, entry in datasets.items())


def row_name(metric: str) -> str:
    """The metric's row name in the results table: PathBench's (CPP for ``cpp_fa``), the name
    PathBench prints outside its table (``EXTRA_ROW_NAMES``), or else the metric key."""
    names = {key: name for key, name, _ in PATHBENCH_ROWS} | EXTRA_ROW_NAMES
    return names.get(metric, metric)


def display_label(metric: str) -> str:
    """How figures name a metric: its row name, with the key beside it where the two differ
    (``CPP = cpp_fa``), so a figure that shows PathBench's names and this project's keys
    together says which is which."""
    name = row_name(metric)
    return name if name == metric else f"{name} = {metric}"


def _rows(kinds: Mapping[str, str]) -> pd.DataFrame:
    """The rows to show for the metrics run (``kinds``: metric → category key)."""
    categories.require_known(kinds.values())
    pathbench = {key: category for key, _, category in PATHBENCH_ROWS}
    rows = []
    for metric, kind in kinds.items():
        if metric in pathbench:
            category = pathbench[metric]
            position = [key for key, _, _ in PATHBENCH_ROWS].index(metric)
        else:
            category, position = categories.category(kind).table_name, len(PATHBENCH_ROWS)
        rows.append((metric, row_name(metric), category, metric in pathbench, position))
    frame = pd.DataFrame(rows, columns=["metric", "row", "category", "in_pathbench_table", "pos"])
    rank = frame["category"].map({c.table_name: i for i, c in enumerate(categories.CATEGORIES)})
    order = np.lexsort((frame["metric"].to_numpy(), frame["pos"].to_numpy(), rank.to_numpy()))
    return frame.iloc[order].drop(columns="pos").reset_index(drop=True)


def align_signs(
    r: pd.DataFrame, declared: Mapping[str, int] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """PathBench's sign alignment of a metric × column table of Pearson r.

    Returns the aligned table and, per metric, the ``sign`` (±1) the raw r was multiplied by
    and the rule that chose it (``sign_rule``: ``expected +1``, ``expected -1``,
    ``vote: flipped`` or ``vote: kept``); see the module docstring. The vote counts every
    column of the run, as PathBench's counts every result it parsed. ``declared``
    (metric → ±1) are the directions of the config's own predictors, applied as stated
    (``declared +1``): a vote could flip a predictor that fails everywhere.
    """
    aligned = r.copy()
    rules, signs = {}, {}
    for metric, values in r.iterrows():
        sign = (declared or {}).get(str(metric))
        if sign is not None:
            rules[metric] = f"declared {sign:+d}"
        elif (sign := EXPECTED_SIGNS.get(str(metric))) is not None:
            rules[metric] = f"expected {sign:+d}"
        else:
            present = values.dropna()
            sign = -1 if (present < 0).sum() > (present > 0).sum() else 1
            rules[metric] = "vote: flipped" if sign < 0 else "vote: kept"
        signs[metric] = sign
        aligned.loc[metric] = sign * values
    table = pd.DataFrame(
        {"sign": pd.Series(signs, dtype="int64"), "sign_rule": pd.Series(rules, dtype=object)},
        index=r.index,
    )
    return aligned, table


def _cells(values: pd.DataFrame | pd.Series) -> pd.DataFrame | pd.Series:
    """Two-decimal cells; adding 0.0 turns -0.0 into 0.0 so no cell reads "-0.00"."""
    return values.round(DECIMALS) + 0.0


@dataclass(frozen=True)
class AlignedR:
    """Sign-aligned, unrounded Pearson r: metric × column label, with the rows' metadata."""

    rows: pd.DataFrame
    columns: list[DatasetColumn]
    values: pd.DataFrame
    signs: pd.DataFrame
    """Per metric (index), ``sign`` (±1) and ``sign_rule``, from :func:`align_signs`."""

    @property
    def sign_rules(self) -> pd.Series:
        return self.signs["sign_rule"]


def aligned_r(
    correlations: Mapping[str, pd.DataFrame],
    columns: Sequence[DatasetColumn] | None = None,
    declared: Mapping[str, int] | None = None,
) -> AlignedR:
    """PathBench's rows, column order and sign alignment applied to per-dataset correlations.

    ``correlations`` maps a dataset name to its correlation table (``metric``, ``category``
    and ``pearson_r`` are read, other columns ignored). ``columns`` places the datasets
    (default: every dataset outside PathBench's layout, in the mapping's order);
    ``declared`` as for :func:`align_signs`.
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
    own = {*ROW_COLUMNS, AVERAGE_COLUMN, *BOOTSTRAP_COLUMNS, COUNT_COLUMN}
    reserved = sorted({c.label for c in columns} & own)
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
    values, signs = align_signs(r, declared)
    return AlignedR(rows, columns, values, signs)


def build_results_table(
    correlations: Mapping[str, pd.DataFrame], columns: Sequence[DatasetColumn] | None = None
) -> pd.DataFrame:
    """Combine per-dataset correlation tables into PathBench's metric × dataset table.

    Arguments as for :func:`aligned_r`; the table is :func:`results_table_of` its result.
    """
    return results_table_of(aligned_r(correlations, columns))


def results_table_of(aligned: AlignedR, interval: pd.DataFrame | None = None) -> pd.DataFrame:
    """The richer results table of :func:`aligned_r`'s values.

    The result has ``ROW_COLUMNS``, one column per dataset (its label), ``Avg``, the
    unrounded Avg and its interval beside it where ``interval`` (the uncertainty stage's
    summary, indexed by metric) is given, and ``n_datasets``; see the module docstring for
    the rules. A metric the summary flags (its Avg undefined in too many replicates) has no
    interval here: ``summary.csv`` gives it with the reason.
    """
    cells = _cells(aligned.values)
    table = aligned.rows.set_index("metric")
    table["sign"] = aligned.signs["sign"]
    table["sign_rule"] = aligned.sign_rules
    table[list(cells.columns)] = cells
    # PathBench's Avg: the mean of the rounded cells, rounded again.
    table[AVERAGE_COLUMN] = _cells(cells.mean(axis=1, skipna=True))
    if interval is not None:
        shown = interval.reindex(table.index)
        flagged = shown["flagged"].astype("boolean").fillna(False).to_numpy(dtype=bool)
        for column in BOOTSTRAP_COLUMNS:
            values = shown[column].astype("float64")
            if column in AVERAGE_INTERVAL_COLUMNS:
                values = values.mask(flagged)
            table[column] = values.round(INTERVAL_DECIMALS) + 0.0
    table[COUNT_COLUMN] = cells.notna().sum(axis=1).astype("int64")
    return table.reset_index()


SIGN_COLUMNS = ("metric", "row", "sign", "sign_rule")
"""``sign_rules.csv``: per metric, its row name, the sign every aligned value of the run
carries and the rule that chose it."""
_RAW_NAMES = {
    "pearson_r": "r_raw",
    "spearman_rho": "rho_raw",
    "ci_low": "ci_low_raw",
    "ci_high": "ci_high_raw",
}
"""A correlation table's signed statistics as :func:`sign_aligned` labels them: raw."""
_DIRECTION_ALIGNED = ("direction", "aligned_r", "aligned_ci_low", "aligned_ci_high")
"""Columns aligned by the evaluator's own direction, which :func:`sign_aligned` replaces."""


def write_signs(aligned: AlignedR, path: str | Path) -> Path:
    """Write the run's one sign per metric (``SIGN_COLUMNS``), which every per-dataset table
    and figure applies, so that no output shows a metric with another sign than the table."""
    signs = aligned.signs.rename_axis("metric").reset_index()
    signs.insert(1, "row", signs["metric"].map(row_name))
    write_text(signs.loc[:, list(SIGN_COLUMNS)].to_csv(index=False, lineterminator="\n"), path)
    return Path(path)


def read_signs(path: str | Path) -> pd.DataFrame:
    """:func:`write_signs`' file, indexed by metric."""
    signs = pd.read_csv(path, dtype={"metric": str, "row": str, "sign": "int64"})
    if list(signs.columns) != list(SIGN_COLUMNS) or not signs["sign"].isin((1, -1)).all():
        raise ValueError(f"{path}: not a sign file with columns {list(SIGN_COLUMNS)} and ±1 signs")
    return signs.set_index("metric")


def sign_aligned(table: pd.DataFrame, signs: pd.DataFrame) -> pd.DataFrame:
    """A per-dataset correlation table with the run's signs (``signs`` as :func:`read_signs`).

    The result starts with ``metric``, ``row``, ``category``, ``sign``, ``sign_rule`` and
    ``r_aligned`` = sign × r (and the interval's ends, ``ci_low_aligned`` ≤
    ``ci_high_aligned``, where the table has one), the values of ``results_table.csv``
    unrounded; the other columns follow with the signed statistics renamed ``r_raw``,
    ``rho_raw``, ``ci_low_raw``, ``ci_high_raw``. Values aligned by the evaluator's own
    direction are dropped: a metric PathBench's vote flips would carry two signs. A metric
    without a sign is refused rather than shown unaligned.
    """
    missing = sorted(set(table["metric"]) - set(signs.index))
    if missing:
        raise ValueError(
            f"no sign for {missing} in the run's sign file; it is written by the results_table "
            "rule from every dataset's correlations, so rerun that rule"
        )
    raw = table.drop(columns=[c for c in _DIRECTION_ALIGNED if c in table.columns]).rename(
        columns=_RAW_NAMES
    )
    sign = signs.loc[raw["metric"], "sign"].to_numpy()
    aligned = pd.DataFrame(
        {
            "metric": raw["metric"].to_numpy(),
            "row": raw["metric"].map(row_name).to_numpy(),
            "category": raw["category"].to_numpy(),
            "sign": sign,
            "sign_rule": signs.loc[raw["metric"], "sign_rule"].to_numpy(),
            "r_aligned": sign * raw["r_raw"].to_numpy(dtype="float64"),
        }
    )
    if "ci_low_raw" in raw.columns:
        ends = np.sort(sign[:, None] * raw[["ci_low_raw", "ci_high_raw"]].to_numpy(), axis=1)
        aligned["ci_low_aligned"], aligned["ci_high_aligned"] = ends[:, 0], ends[:, 1]
    rest = raw.drop(columns=["metric", "category"]).reset_index(drop=True)
    return pd.concat([aligned, rest], axis=1)


def _pathbench_cell(value: float) -> str:
    """A cell as PathBench writes it: empty without a value, else two decimals (``-0.00``
    included, which ``f"{round(v, 2):.2f}"`` gives for a small negative r)."""
    return "" if np.isnan(value) else f"{value:.{DECIMALS}f}"


def pathbench_table(aligned: AlignedR, audio: Mapping[str, str] | None = None) -> pd.DataFrame:
    """PathBench's ``results_table.csv`` for this run, as text cells.

    Always PathBench's 12 rows and 21 columns (``PATHBENCH_ROWS``, ``PATHBENCH_COLUMNS``),
    a cell empty where the run has no dataset in that column or no value for that metric,
    because that is how ``combine_results.py`` writes a run that covers part of its table;
    keeping every column makes the file diff line by line against PathBench's. Avg is the
    mean of the row's rounded cells in PathBench's columns only, rounded again. Each dataset
    outside PathBench's columns (:func:`own_columns`) follows Avg as a column of its own,
    labelled as in ``results_table.csv``: without it a run of the demo or of a user's corpus
    would write PathBench's table with every cell empty.

    ``audio`` (PathBench column label -> ``verified``, ``differs`` or ``unchecked``, from
    :func:`pathbench_flow.data.pathbench_corpora.audio_statuses`), when given and not empty,
    adds a last row ``pathbench_audio``: whether each column's audio is PathBench's, so the
    file says which cells can be compared with the published ones.
    """
    label = {c.triple: c.label for c in aligned.columns}
    own = [c.label for c in own_columns(aligned.columns)]
    rows = []
    for metric, name, category in PATHBENCH_ROWS:
        run = metric in aligned.values.index
        cells = np.round(
            np.array(
                [
                    aligned.values.at[metric, label[triple]] if run and triple in label else np.nan
                    for triple in PATHBENCH_COLUMNS
                ],
                dtype="float64",
            ),
            DECIMALS,
        )
        present = cells[~np.isnan(cells)]
        average = np.round(present.mean(), DECIMALS) if len(present) else np.nan
        extra = [aligned.values.at[metric, c] if run else np.nan for c in own]
        cells_of_own = np.round(np.array(extra, dtype="float64"), DECIMALS)
        rows.append(
            [
                name,
                category,
                *map(_pathbench_cell, cells),
                _pathbench_cell(average),
                *map(_pathbench_cell, cells_of_own),
            ]
        )
    header = [
        *PATHBENCH_ROW_COLUMNS,
        *(" ".join(t) for t in PATHBENCH_COLUMNS),
        AVERAGE_COLUMN,
        *own,
    ]
    if audio:
        statuses = [audio.get(label[t], "") if t in label else "" for t in PATHBENCH_COLUMNS]
        rows.append([AUDIO_ROW, "", *statuses, "", *([""] * len(own))])
    return pd.DataFrame(rows, columns=header)


def own_columns(columns: Iterable[DatasetColumn]) -> list[DatasetColumn]:
    """The columns outside PathBench's 21 (a dataset with no PathBench triple: the demo, a
    corpus of the user's own), in table order."""
    return [c for c in columns if c.triple not in set(PATHBENCH_COLUMNS)]


def write_pathbench_table(
    aligned: AlignedR, path: str | Path, audio: Mapping[str, str] | None = None
) -> Path:
    """Write :func:`pathbench_table` as PathBench writes its CSV (pandas, no index)."""
    write_text(pathbench_table(aligned, audio).to_csv(index=False, lineterminator="\n"), path)
    return Path(path)


def sort_by_category(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of a per-dataset table ordered by registry category, then by metric name.

    The per-dataset figures use this order (signal measures first, lookup baselines last) so
    that they read like the results table.
    """
    rank = frame["category"].map(categories.rank)
    order = np.lexsort((frame["metric"].to_numpy(), rank.to_numpy()))
    return frame.iloc[order].reset_index(drop=True)


def dataset_columns_of(table: pd.DataFrame) -> list[str]:
    """The dataset (label) columns of a :func:`build_results_table` table, in order."""
    own = {*ROW_COLUMNS, AVERAGE_COLUMN, *BOOTSTRAP_COLUMNS, COUNT_COLUMN}
    return [c for c in table.columns if c not in own]


PAGE_LAST_COLUMNS = ("category", "sign", "sign_rule", "metric")
"""The page's columns after the values: what a row is and how its sign was chosen."""


def page_view(table: pd.DataFrame) -> list[html_table.Shown]:
    """The results table as the report's page shows it: the row name first (the page keeps it
    in view), the datasets' values and Avg, the Avg's interval beside it, the number of
    datasets it is over, then the columns a reader consults less (:data:`PAGE_LAST_COLUMNS`).
    The CSV keeps every column; the page leaves out ``Avg_unrounded``, which at two decimals
    repeats Avg, and ``in_pathbench_table``."""
    shown, interval = html_table.shown, html_table.interval
    middle = [shown(c) for c in (*dataset_columns_of(table), AVERAGE_COLUMN)]
    if AVERAGE_INTERVAL_COLUMNS[0] in table.columns:
        middle.append(interval(f"{AVERAGE_COLUMN} interval", *AVERAGE_INTERVAL_COLUMNS))
    return [
        shown("row"),
        *middle,
        shown(COUNT_COLUMN),
        *(shown(c) for c in PAGE_LAST_COLUMNS),
    ]


def write_results_table(
    table: pd.DataFrame, out_dir: str | Path, settings: object = None
) -> tuple[Path, Path]:
    """Write ``results_table.csv`` and ``results_table.parquet`` into ``out_dir``.

    The CSV shows each cell with exactly two decimals (empty where there is no value) so it
    reads like the paper's table and is byte-stable, the unrounded Avg and its interval with
    three; the Parquet keeps the same rounded
    floats for programs. Returns the two paths.
    """
    out = Path(out_dir)
    interval = AVERAGE_INTERVAL_COLUMNS[0] in table.columns
    schema = results_table_schema(dataset_columns_of(table), interval)
    csv_path, parquet_path = out / TABLE_CSV, out / TABLE_PARQUET
    shown = table.copy()
    for column in BOOTSTRAP_COLUMNS if interval else ():
        shown[column] = [
            f"{v:.{INTERVAL_DECIMALS}f}" if np.isfinite(v) else "" for v in table[column]
        ]
    write_text(
        shown.to_csv(index=False, float_format=f"%.{DECIMALS}f", lineterminator="\n"),
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
