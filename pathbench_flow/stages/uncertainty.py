"""The uncertainty stage: how sure the results table's Avg, ranking and differences are, and
whether each measure's correlation holds across corpora (``pathbench_flow.stats.uncertainty``
says how).

A *corpus* is a column's ``corpus`` (PathBench's path layout or the config's ``corpus:``
key gives it); a dataset without one is a corpus of its own. Datasets of one corpus are
taken to rate the same speakers, identified by speaker id: one bootstrap draw of the corpus's
rated speakers serves all its columns. Datasets of different corpora that share most of their
rated speaker ids are probably one corpus given as flat paths without ``corpus:``; the stage
says so (:func:`shared_speaker_warnings`), since counting them as independent narrows every
interval.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from pathbench_flow.common.io import read_parquet, write_text
from pathbench_flow.data.score_scale import ground_truth_of
from pathbench_flow.reporting.html_table import interval, shown, write_html_tables
from pathbench_flow.reporting.results_table import (
    AlignedR,
    DatasetColumn,
    aligned_r,
    results_columns,
    row_name,
)
from pathbench_flow.schemas.tables import AVERAGE_INTERVAL_COLUMNS, AVERAGE_UNROUNDED_COLUMN
from pathbench_flow.stats.correlation import speaker_sets, wide_values
from pathbench_flow.stats.resampled_r import MIN_SPEAKERS, UNDEFINED_LIMIT
from pathbench_flow.stats.uncertainty import (
    BootstrapResult,
    Design,
    bootstrap_averages,
    category_verdicts,
    design_of,
    meta_analysis,
    pairwise_table,
    rank_summary,
)

ALPHA = 0.05
"""Holm-adjusted p below which a pair of metrics is called different."""
MIN_META_SPEAKERS = 4
"""Fisher z's variance 1/(n − 3) needs four speakers or more."""
SUMMARY_DECIMALS = 3
"""Decimals of ``summary.csv``: the Monte Carlo error of 2,000 replicates is ~0.005 on an
interval's end and ~0.01 on a rank probability, so more digits would be noise."""
NO_PREDICTORS = (
    "the config has no predictors: add one under `predictors:` (docs/own-predictor.md, "
    '"Your own predictor") to see it compared with every category of built-in measures here'
)
"""The one row of ``predictor_verdicts.csv`` without predictors: a bare header says nothing."""
FOREST_NOTE = "README.txt"
"""The file that says why ``forest/`` has no plot; the report's pattern ``{metric}.png``
does not match it."""
PAGE_VIEWS = {
    "summary": [
        shown("row"),
        shown(AVERAGE_UNROUNDED_COLUMN, "Avg"),
        interval("Avg interval", *AVERAGE_INTERVAL_COLUMNS),
        shown("rank"),
        shown("p_rank_1"),
        interval("rank interval", "rank_low", "rank_high"),
        shown("n_datasets"),
        shown("flagged"),
        shown("metric"),
    ],
    "pairwise": [
        shown("metric"),
        shown("other"),
        shown("difference"),
        interval("difference interval", "ci_low", "ci_high"),
        shown("p_holm"),
        shown("different"),
    ],
    "meta": [
        shown("row"),
        shown("k"),
        shown("pooled_r"),
        interval("pooled_r interval", "ci_low", "ci_high"),
        interval("prediction interval", "pi_low", "pi_high"),
        shown("i2"),
        shown("reason"),
        shown("metric"),
    ],
}
"""What the report's pages of the stage's tables show: the answer of each row (a measure's Avg
and rank, a pair's difference, a pooled r), each with its interval beside it. The CSVs keep
every column (the rank distribution, the raw p, τ², the columns pooled, the notes), which the
captions describe; a page of every column (40 and more with ``p_rank_<k>``) hid the answers."""
SHARED_SHARE = 0.5
"""Share of the smaller dataset's rated speaker ids found in a dataset of another corpus from
which the two are taken to rate the same speakers. Ids such as ``M01`` recur across unrelated
corpora, but rarely for half of a corpus's speakers."""


def corpus_of(column: DatasetColumn) -> str:
    """The corpus whose speakers a column rates: its ``corpus``, else the dataset itself."""
    return column.corpus or column.dataset


def rated_speakers(table: pd.DataFrame) -> set[str]:
    """The speaker ids a speakers table has a rating for."""
    truth = ground_truth_of(table)
    return set(truth.index[truth.notna()])


def recording_digests(manifest: pd.DataFrame) -> dict[str, frozenset[str]]:
    """speaker_id → the SHA-256 digests of their recordings, as validation computed them
    from the bytes it read (the manifest's ``audio_sha256``; empty where audio was not
    checked), so comparing recordings reads no audio."""
    hashed = manifest.loc[manifest["audio_sha256"].fillna("") != "", ["speaker_id", "audio_sha256"]]
    return {
        str(speaker): frozenset(group["audio_sha256"])
        for speaker, group in hashed.groupby("speaker_id", sort=True)
    }


def recordings_compared(
    names: Sequence[str], shared: Collection[str], digests: Mapping[str, Mapping[str, frozenset]]
) -> str:
    """Whether the shared speakers' recordings are the same files in every dataset of
    ``names``: "N of M recordings identical", M the distinct digests of those speakers'
    recordings in any of the datasets, N those in all of them; or why they were not compared
    (a dataset without digests: its audio was not checked)."""
    unhashed = [name for name in names if not digests.get(name)]
    if unhashed:
        return (
            f"their recordings were not compared: no audio digests for {', '.join(unhashed)} "
            "(validation.check_audio: false, or no manifest given)"
        )
    sets = [
        frozenset().union(*(digests[name].get(speaker, frozenset()) for speaker in shared))
        for name in names
    ]
    identical, every = frozenset.intersection(*sets), frozenset.union(*sets)
    return f"{len(identical)} of {len(every)} recordings of these speakers identical (SHA-256)"


def shared_speaker_warnings(
    columns: Sequence[DatasetColumn],
    rated: Mapping[str, Collection[str]],
    digests: Mapping[str, Mapping[str, frozenset]] | None = None,
) -> list[str]:
    """One warning per group of datasets in different corpora whose rated speaker ids
    overlap (at least ``MIN_SPEAKERS`` ids and ``SHARED_SHARE`` of the smaller set), naming
    them, whether the shared speakers' recordings are identical (``digests``: dataset →
    :func:`recording_digests`; :func:`recordings_compared`) and the ``corpus:`` key that
    would join them.

    Why: a dataset outside PathBench's layout without ``corpus:`` is a corpus of its own, so
    two conditions of one corpus given as flat paths would be drawn independently and both
    enter the meta-analysis, which narrows the intervals with no sign of it. Identical
    recordings tell a copy of one dataset from two recording sessions of the same people.
    """
    group = {c.dataset: c.dataset for c in columns}

    def root(name: str) -> str:
        while group[name] != name:
            name = group[name]
        return name

    for i, first in enumerate(columns):
        for second in columns[i + 1 :]:
            if corpus_of(first) == corpus_of(second):
                continue
            mine, theirs = set(rated[first.dataset]), set(rated[second.dataset])
            common = len(mine & theirs)
            if common >= MIN_SPEAKERS and common >= SHARED_SHARE * min(len(mine), len(theirs)):
                group[root(second.dataset)] = root(first.dataset)
    members: dict[str, list[DatasetColumn]] = {}
    for column in columns:
        members.setdefault(root(column.dataset), []).append(column)
    warnings = []
    for joined in (m for m in members.values() if len({corpus_of(c) for c in m}) > 1):
        names = [c.dataset for c in joined]
        corpus = next((c.corpus for c in joined if c.corpus), names[0])
        shared = set.intersection(*(set(rated[name]) for name in names))
        warnings.append(
            f"warning: datasets {', '.join(names)} are in different corpora "
            f"({', '.join(dict.fromkeys(corpus_of(c) for c in joined))}) but share rated "
            f"speaker ids ({len(shared)} common to all; "
            f"{recordings_compared(names, shared, digests or {})}): the bootstrap draws them as "
            "independent speakers and the meta-analysis may count one corpus more than once. "
            f"If they rate the same speakers, give each `corpus: {corpus}` "
            f"({', '.join(f'datasets.{name}.corpus' for name in names)})."
        )
    return warnings


def build_design(
    aligned: AlignedR, speakers: Mapping[str, pd.DataFrame], allowlist: Collection[str]
) -> Design:
    """The bootstrap's design: every cell of the table with an r, its speakers (the
    common-set rule of the correlation stage) and its sign-aligned values.

    Each cell's r recomputed here must be the correlation stage's: a difference means the
    speakers table and the correlations are from different runs, and is refused.
    """
    signs = aligned.signs["sign"]
    cells = []
    for column in aligned.columns:
        table = speakers[column.dataset]
        truth = ground_truth_of(table)
        values = wide_values(table)
        used = speaker_sets(table, truth, allowlist).used
        for metric in aligned.values.index:
            expected = aligned.values.at[metric, column.label]
            if not np.isfinite(expected):
                continue
            ids = used[metric]
            x = signs[metric] * values.loc[ids, metric].to_numpy(dtype="float64")
            y = truth.loc[ids].to_numpy(dtype="float64")
            if abs(np.corrcoef(x, y)[0, 1] - expected) > 1e-9:
                raise ValueError(
                    f"{column.dataset}: {metric}'s r from speakers.parquet differs from "
                    "correlations.parquet; rerun the dataset's correlate rule"
                )
            cells.append((metric, column.label, ids, x, y))
    # A metric without a single r (no speaker with a value) has no Avg to resample.
    return design_of(
        list(dict.fromkeys(metric for metric, *_ in cells)),
        [(c.label, corpus_of(c)) for c in aligned.columns],
        cells,
    )


def meta_columns(
    aligned: AlignedR, correlations: Mapping[str, pd.DataFrame], chosen: Mapping[str, str]
) -> list[DatasetColumn]:
    """One column per corpus, so that no two share speakers: the dataset ``chosen`` names
    for the corpus, else the corpus's column with the most rated speakers (the largest n of
    any metric), the first in table order on a tie."""
    by_corpus: dict[str, list[DatasetColumn]] = {}
    for column in aligned.columns:
        by_corpus.setdefault(corpus_of(column), []).append(column)
    unknown = sorted(set(chosen) - set(by_corpus))
    if unknown:
        raise ValueError(
            f"config uncertainty.meta_analysis names corpora {unknown} that no dataset has; "
            f"the run's corpora are {sorted(by_corpus)}"
        )
    picked = []
    for corpus, columns in by_corpus.items():
        if corpus in chosen:
            named = [c for c in columns if c.dataset == chosen[corpus]]
            if not named:
                raise ValueError(
                    f"config uncertainty.meta_analysis.{corpus}: {chosen[corpus]!r} is not a "
                    f"dataset of that corpus ({[c.dataset for c in columns]})"
                )
            picked += named
        else:
            sizes = [int(correlations[c.dataset]["n"].max()) for c in columns]
            picked.append(columns[int(np.argmax(sizes))])
    return picked


def meta_table(
    aligned: AlignedR,
    correlations: Mapping[str, pd.DataFrame],
    columns: list[DatasetColumn],
    level: float,
    test: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per metric the random-effects pooled r over ``columns`` (or why there is none), its
    intervals by ``test`` (``META_TESTS``), and the per-column inputs (r, n, the column's own
    Fisher interval at ``level``) the forest plots draw."""
    crit = float(special.ndtri((1 + level) / 2))
    rows, inputs = [], []
    for metric in aligned.values.index:
        studies = []
        for column in columns:
            r = aligned.values.at[metric, column.label]
            table = correlations[column.dataset].set_index("metric")
            n = int(table.at[metric, "n"]) if metric in table.index else 0
            if np.isfinite(r) and n >= MIN_META_SPEAKERS:
                studies.append((column.label, float(r), n))
        for label, r, n in studies:
            half = crit / np.sqrt(n - 3)
            z = np.arctanh(r)
            inputs.append(
                {
                    "metric": metric,
                    "column": label,
                    "r": r,
                    "n": n,
                    "ci_low": np.tanh(z - half),
                    "ci_high": np.tanh(z + half),
                }
            )
        base = {"metric": metric, "row": row_name(str(metric)), "estimator": "REML", "test": test}
        base["columns"] = "; ".join(label for label, _, _ in studies)
        if len(studies) < 2:
            rows.append({**base, "k": len(studies), "reason": "fewer than two corpora"})
            continue
        result = meta_analysis([r for _, r, _ in studies], [n for _, _, n in studies], level, test)
        rows.append({**base, **asdict(result), "reason": ""})
    order = [
        "metric",
        "row",
        "k",
        "pooled_r",
        "ci_low",
        "ci_high",
        "pi_low",
        "pi_high",
        "tau2",
        "i2",
        "q",
        "estimator",
        "test",
        "columns",
        "reason",
    ]
    return pd.DataFrame(rows).reindex(columns=order), pd.DataFrame(inputs)


def forest_note(meta: pd.DataFrame, corpora: Collection[str]) -> str:
    """Why no metric has a forest plot (no pooled r: each has an r in fewer than two of the
    meta-analysis's corpora); '' when one has."""
    if (meta["k"] >= 2).any():
        return ""
    return (
        "No forest plot: a forest plot shows a metric's meta-analysis across corpora, which "
        f"needs its r in two corpora or more (one column each, {MIN_META_SPEAKERS} speakers or "
        f"more), and this run's corpora ({', '.join(corpora)}) give no metric two. Datasets of "
        "another corpus (PathBench's layout, or datasets.<name>.corpus) give the meta-analysis "
        "its corpora; meta_analysis.csv says per metric which columns it had.\n"
    )


def interval_name(result: BootstrapResult) -> str:
    """The name every output gives the Avg intervals: what kind, from which resampling."""
    return (
        f"{result.level:.0%} {result.method} interval, speaker bootstrap over corpora "
        f"({result.replicates.shape[1]} replicates)"
    )


def summary_table(result: BootstrapResult, design: Design, category: pd.Series) -> pd.DataFrame:
    """Per metric: the unrounded Avg, its interval (named), the share of replicates without
    an Avg and whether that share flags it (with the note saying what it means), and its
    rank summary (:func:`rank_summary`)."""
    undefined, flagged = result.undefined, result.flagged
    notes = [
        f"{metric}: its Avg is undefined in {share:.0%} of the replicates (more than "
        f"{UNDEFINED_LIMIT:.0%}; one of its cells has no r when the draw leaves it constant), "
        "so its interval, ranks and pairwise tests describe only the draws in which it varies"
        if flag
        else ""
        for metric, share, flag in zip(result.metrics, undefined, flagged, strict=True)
    ]
    summary = pd.DataFrame(
        {
            "metric": result.metrics,
            "row": [row_name(m) for m in result.metrics],
            "category": category.reindex(result.metrics).to_numpy(),
            "n_datasets": design.present.sum(axis=1),
            AVERAGE_UNROUNDED_COLUMN: result.estimate,
            AVERAGE_INTERVAL_COLUMNS[0]: result.low,
            AVERAGE_INTERVAL_COLUMNS[1]: result.high,
            "interval": interval_name(result),
            "undefined_share": undefined,
            "flagged": flagged,
            "note": notes,
        }
    )
    return summary.merge(rank_summary(result), on="metric")


def flagged_warning(summary: pd.DataFrame) -> list[str]:
    """One warning naming every flagged metric with its share of replicates without an Avg
    (none when nothing is flagged): a small corpus flags most of them at once, and a note per
    metric would bury the run's other messages; each metric's note stays in summary.csv."""
    flagged = summary[summary["flagged"]]
    if flagged.empty:
        return []
    shares = ", ".join(
        f"{metric} {share:.0%}"
        for metric, share in zip(flagged["metric"], flagged["undefined_share"], strict=True)
    )
    return [
        f"warning: {len(flagged)} of {len(summary)} measure(s) flagged, their Avg undefined in "
        f"more than {UNDEFINED_LIMIT:.0%} of the replicates (a draw that leaves a cell constant "
        f"or under three speakers): {shares}; their intervals, ranks and pairwise tests describe "
        "only the draws in which they vary (summary.csv, note)"
    ]


def _write(frame: pd.DataFrame, path: str | Path) -> None:
    """A table as CSV with ten significant digits: enough to compare, byte-stable."""
    write_text(frame.to_csv(index=False, float_format="%.10g", lineterminator="\n"), path)


def uncertainty(
    correlation_paths: Mapping[str, str | Path],
    speaker_paths: Mapping[str, str | Path],
    dataset_settings: Mapping[str, Mapping[str, str]],
    outputs: Mapping[str, str | Path],
    pages: Mapping[str, str | Path],
    *,
    allowlist: Collection[str],
    settings: Mapping[str, Any],
    predictors: Mapping[str, Mapping[str, Any]] | None = None,
    manifest_paths: Mapping[str, str | Path] | None = None,
) -> pd.DataFrame:
    """Every output of the stage (``outputs``: ``summary``, ``pairwise``, ``meta``,
    ``verdicts`` CSVs; ``ranks``, ``matrix`` figures and the ``forest`` directory), the CSVs
    also as the report's ``pages``; returns the summary.

    ``settings`` is the config's ``uncertainty`` block (``n_boot``, ``seed``, ``level``,
    ``method``, ``meta_test``, ``meta_analysis``); the signs are the results table's (the
    same :func:`aligned_r` of the same correlations), so the intervals are of its cells.
    ``manifest_paths`` (dataset → its manifest) give the recordings' digests that say
    whether datasets sharing speakers share recordings; without them the warning says the
    recordings were not compared.
    Warnings (datasets that seem to share speakers across corpora, metrics flagged for an Avg
    undefined in too many replicates, too few replicates for Holm) go to the job's log and to
    ``outputs["warnings"]``, one per line, which the console repeats at the end of the run:
    a warning only in a log is a warning nobody reads.
    """
    from pathbench_flow.reporting.uncertainty_plots import (  # matplotlib: this stage only
        plot_forests,
        plot_pairwise,
        plot_rank_distribution,
    )

    correlations = {name: read_parquet(p) for name, p in correlation_paths.items()}
    columns = results_columns({name: dataset_settings.get(name, {}) for name in correlations})
    declared = {name: int(entry["direction"]) for name, entry in (predictors or {}).items()}
    aligned = aligned_r(correlations, columns, declared)
    speakers = {name: read_parquet(p) for name, p in speaker_paths.items()}
    rated = {name: rated_speakers(table) for name, table in speakers.items()}
    digests = {
        name: recording_digests(read_parquet(path)) for name, path in (manifest_paths or {}).items()
    }
    warnings = shared_speaker_warnings(aligned.columns, rated, digests)
    design = build_design(aligned, speakers, allowlist)
    level = float(settings["level"])
    result = bootstrap_averages(
        design, int(settings["n_boot"]), int(settings["seed"]), level, str(settings["method"])
    )
    summary = summary_table(result, design, aligned.rows.set_index("metric")["category"])
    warnings += flagged_warning(summary)
    pairwise = pairwise_table(result)
    pairwise.insert(2, "different", pairwise["p_holm"] < ALPHA)
    pairwise["interval"] = interval_name(result)
    smallest = 2 / (result.replicates.shape[1] + 1)
    if len(pairwise) and len(pairwise) * smallest >= ALPHA:
        warnings.append(
            f"warning: with {result.replicates.shape[1]} replicates a pair's smallest p is "
            f"{smallest:.2g}, and Holm over {len(pairwise)} pairs multiplies it by "
            f"{len(pairwise)}: no pair can be called different; raise uncertainty.n_boot "
            f"above {int(2 * len(pairwise) / ALPHA)}"
        )
    for warning in warnings:
        print(warning, file=sys.stderr)
    write_text("".join(f"{warning}\n" for warning in warnings), outputs["warnings"])
    chosen = meta_columns(aligned, correlations, settings["meta_analysis"])
    meta, inputs = meta_table(aligned, correlations, chosen, level, str(settings["meta_test"]))
    names = {m: row_name(m) for m in result.metrics}
    verdicts = category_verdicts(
        pairwise.replace({"metric": names, "other": names}),
        [names[p] for p in (predictors or {})],
        dict(zip(summary["row"], summary["category"], strict=True)),
        ALPHA,
    )
    if not predictors:
        verdicts = pd.DataFrame([{"predictor": "", "category": "", "verdict": NO_PREDICTORS}])
    for key, frame in (
        ("summary", summary.round(SUMMARY_DECIMALS)),
        ("pairwise", pairwise),
        ("meta", meta),
        ("verdicts", verdicts),
    ):
        _write(frame, outputs[key])
    plot_rank_distribution(summary, outputs["ranks"])
    plot_pairwise(summary, pairwise, outputs["matrix"], ALPHA)
    plot_forests(meta, inputs, outputs["forest"], level)
    note = forest_note(meta, list(dict.fromkeys(corpus_of(c) for c in chosen)))
    if note:
        write_text(note, Path(outputs["forest"]) / FOREST_NOTE)
    write_html_tables(pages, {outputs[key]: view for key, view in PAGE_VIEWS.items()})
    return summary
