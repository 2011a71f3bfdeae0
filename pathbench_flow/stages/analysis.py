"""Workflow stages after scoring: correlation, plots, the results table, exports.

Each function reads the files one rule receives and writes the files it declares, so the
scripts under ``scripts/`` stay one call long.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from pathbench_flow.common.io import read_parquet, write_text
from pathbench_flow.data.manifest import load_manifest, read_tables
from pathbench_flow.data.pathbench_corpora import audio_statuses, refuse_differing_audio
from pathbench_flow.data.score_scale import (
    DEFAULT_SCALE,
    as_intelligibility,
    ground_truth_name,
    ground_truth_of,
)
from pathbench_flow.evaluators import registry
from pathbench_flow.reporting.html_table import write_html_tables
from pathbench_flow.reporting.published_results import (
    PUBLISHED_VS_MEASURED_CSV,
    write_published_vs_measured,
)
from pathbench_flow.reporting.results_table import (
    PATHBENCH_COLUMNS,
    DatasetColumn,
    aligned_r,
    export_speaker_csvs,
    page_view,
    read_signs,
    results_columns,
    results_table_of,
    sign_aligned,
    write_pathbench_table,
    write_results_table,
    write_signs,
)
from pathbench_flow.stats.correlation import (
    correlate_metrics,
    read_utt2score,
    utterance_correlations,
    write_correlations,
)


def metric_metadata(
    scores: pd.DataFrame, predictors: Mapping[str, Mapping[str, Any]] | None = None
) -> pd.DataFrame:
    """Direction and category of each metric of a speakers or scores table, looked up through
    its evaluator, or for the config's own predictors (``predictors``: name → ``direction``
    and ``category``, :func:`pathbench_flow.predictors.config.declared_metadata`) as declared
    there."""
    pairs = scores[["metric", "evaluator"]].drop_duplicates()
    declared = predictors or {}
    infos = [
        declared[name] if name in declared else registry.info(name).as_dict()
        for name in pairs["evaluator"]
    ]
    return pd.DataFrame(
        {
            "metric": pairs["metric"].to_numpy(),
            "direction": [info["direction"] for info in infos],
            "category": [info["category"] for info in infos],
        }
    )


def correlate(
    speakers_path: str | Path,
    parquet_path: str | Path,
    *,
    allowlist: Collection[str],
    n_boot: int,
    seed: int,
    predictors: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """Correlate every metric of one dataset with its ground truth, as Parquet.

    The readers' CSV waits for the run's signs (:func:`align_correlations`), which need every
    dataset's r. ``predictors`` as for :func:`metric_metadata`."""
    speakers = read_parquet(speakers_path)
    table = correlate_metrics(
        speakers,
        ground_truth_of(speakers),
        metric_metadata(speakers, predictors),
        allowlist=tuple(allowlist),
        n_boot=n_boot,
        seed=seed,
    )
    settings = {"allowlist": sorted(allowlist), "n_boot": n_boot, "seed": seed}
    write_correlations(table, parquet_path, settings)
    return table


def align_correlations(
    correlations_path: str | Path,
    signs_path: str | Path,
    csv_path: str | Path,
    page_path: str | Path,
    score_scale: str = DEFAULT_SCALE,
) -> pd.DataFrame:
    """One dataset's correlations as readers see them: raw r labelled raw beside r_aligned,
    with the sign and rule of the results table (:func:`sign_aligned`); the CSV also as the
    page the report shows (``page_path``). Its last column, ``ground_truth``, names what
    every r is against for the dataset's ``score_scale`` (``-spk2score`` for severity)."""
    table = sign_aligned(read_parquet(correlations_path), read_signs(signs_path))
    table["ground_truth"] = ground_truth_name(score_scale)
    _write_csv(table, csv_path)
    write_html_tables({csv_path: page_path})
    return table


def _write_csv(table: pd.DataFrame, path: str | Path) -> None:
    """A correlation table as CSV: ten significant digits, enough to compare, byte-stable."""
    write_text(table.to_csv(index=False, float_format="%.10g", lineterminator="\n"), path)


def correlate_utterances(
    manifest_path: str | Path,
    utt2score_path: str | Path,
    score_paths: Iterable[str | Path],
    signs_path: str | Path,
    csv_path: str | Path,
    page_path: str | Path,
    predictors: Mapping[str, Mapping[str, Any]] | None = None,
    score_scale: str = DEFAULT_SCALE,
) -> pd.DataFrame:
    """Utterance-level correlations of a dataset that ships ``utt2score``, as CSV and as the
    page the report shows (``page_path``). ``predictors`` as
    for :func:`metric_metadata`: a predictor given per utterance has a row here too), each
    metric aligned with the sign the speaker-level results table gives it (``signs_path``,
    :func:`sign_aligned`), so a metric never changes sign between the two levels.
    ``utt2score`` is on the dataset's ``score_scale``, as its ``spk2score``: negated for
    severity, and the CSV's ``ground_truth`` column says so (:func:`align_correlations`).

    Validation does not read ``utt2score``, so it is read here, line by line as
    ``spk2score`` is (:func:`pathbench_flow.stats.correlation.read_utt2score`). The
    utterances are the manifest's (validated ones); a rating of an utterance validation
    dropped or never saw is ignored, as PathBench ignores it, and the log says how many.
    Speaker-level measures (``vsa``, ``f0_range``) have no utterance values and no row, as
    in PathBench's ``evaluate_utt2score.py``.
    """
    utterances = load_manifest(manifest_path)["utt_id"]
    ratings = as_intelligibility(read_utt2score(utt2score_path), score_scale)
    outside = sorted(set(ratings.index) - set(utterances))
    truth = ratings.reindex(pd.Index(utterances, dtype=object, name="utt_id"))
    shown = ", ".join(outside[:10]) + (" …" if len(outside) > 10 else "")
    print(
        f"{utt2score_path}: {int(truth.notna().sum())} of {len(truth)} manifest utterances "
        f"rated; {len(outside)} rated utterance(s) not in the manifest, ignored"
        + (f": {shown}" if outside else ""),
        file=sys.stderr,
    )
    scores = read_tables(score_paths)
    metadata = metric_metadata(scores, predictors) if len(scores) else pd.DataFrame()
    table = sign_aligned(utterance_correlations(scores, truth, metadata), read_signs(signs_path))
    table["ground_truth"] = ground_truth_name(score_scale, "utt2score")
    _write_csv(table, csv_path)
    write_html_tables({csv_path: page_path})
    return table


def metric_reasons(correlations: pd.DataFrame, aggregation: Mapping[str, Any]) -> dict[str, str]:
    """Per metric, every recorded reason it has no correlation, one line each.

    Read defensively, because the correlation and aggregation stages may record more over
    time: every string column of ``correlations`` whose name contains "reason" or
    "excluded", the count of speakers without a value from ``aggregation.json``, and any
    string that ``aggregation.json`` files under the metric's name, at the top level or one
    level down (e.g. ``common_speaker_set.not_constraining``).
    """
    reason_columns = sorted(c for c in correlations.columns if "reason" in c or "excluded" in c)
    reasons = {}
    for row in correlations.to_dict(orient="records"):
        metric = row["metric"]
        lines = [
            str(row[column]) if column == "reason" else f"{column}: {row[column]}"
            for column in reason_columns
            if isinstance(row[column], str) and row[column].strip()
        ]
        lines += _aggregation_lines(aggregation, metric)
        reasons[metric] = "\n".join(dict.fromkeys(lines))
    return reasons


def _aggregation_lines(aggregation: Mapping[str, Any], metric: str) -> list[str]:
    """What ``aggregation.json`` says about why ``metric`` lacks values."""
    lines = []
    without = aggregation.get("n_speakers_without_value", {})
    if isinstance(without, Mapping) and metric in without:
        total = aggregation.get("n_speakers", "?")
        lines.append(f"no value for {without[metric]} of {total} speakers")
    blocks = [(key, value) for key, value in sorted(aggregation.items())]
    blocks += [
        (inner, value)
        for _, block in sorted(aggregation.items())
        if isinstance(block, Mapping)
        for inner, value in sorted(block.items())
    ]
    for key, block in blocks:
        record = block.get(metric) if isinstance(block, Mapping) else None
        if isinstance(record, str) and record.strip():
            lines.append(f"{key}: {record}")
    return lines


def plot_dataset(
    dataset: str,
    speakers_path: str | Path,
    correlations_path: str | Path,
    signs_path: str | Path,
    aggregation_path: str | Path,
    scatter_dir: str | Path,
    bars_path: str | Path,
    *,
    allowlist: Collection[str],
) -> pd.DataFrame:
    """Per-metric scatter plots and the bar chart of sign-aligned r with its named interval, with
    the results table's signs (``signs_path``); returns the bars as drawn (metric, label,
    ``r_aligned``).

    A scatter without a correlation prints the reasons recorded for its metric.
    """
    from pathbench_flow.reporting.plots import plot_aligned_bars, plot_metric_scatters  # matplotlib

    speakers = read_parquet(speakers_path)
    correlations = sign_aligned(read_parquet(correlations_path), read_signs(signs_path))
    aggregation = json.loads(Path(aggregation_path).read_text(encoding="utf-8"))
    Path(scatter_dir).mkdir(parents=True, exist_ok=True)
    plot_metric_scatters(
        speakers,
        ground_truth_of(speakers),
        correlations,
        scatter_dir,
        allowlist=tuple(allowlist),
        reasons=metric_reasons(correlations, aggregation),
    )
    return plot_aligned_bars(correlations, bars_path, f"{dataset}: sign-aligned Pearson r")


def results_table(
    correlation_paths: Mapping[str, str | Path],
    dataset_settings: Mapping[str, Mapping[str, str]],
    out_dir: str | Path,
    pathbench_csv: str | Path,
    heatmap_path: str | Path,
    comparisons_csv: str | Path,
    comparisons_json: str | Path,
    signs_csv: str | Path,
    pages: Mapping[str, str | Path],
    predictors: Mapping[str, Mapping[str, Any]] | None = None,
    interval: str | Path | None = None,
    audio_check: str | Path | None = None,
    dataset_dirs: Mapping[str, Sequence[str]] | None = None,
    accept_audio_differences: bool = False,
) -> pd.DataFrame:
    """The results tables (this project's and PathBench's own file), PathBench's published r
    beside this run's (``PUBLISHED_VS_MEASURED_CSV`` in ``out_dir``), the heat map and the
    Wilcoxon protocol comparisons, all from one sign alignment, and that alignment itself
    (``signs_csv``), which the per-dataset tables and figures apply. ``pages`` maps each of
    those CSVs the report lists to the page it shows them as.

    ``correlation_paths`` is in config order, which orders the datasets outside PathBench's
    columns; ``dataset_settings`` is each dataset's config entry (``path`` and the optional
    ``corpus``, ``task``, ``condition``), which places it among PathBench's columns. The
    config's own predictors (``predictors`` as for :func:`metric_metadata`) are aligned by
    the direction they declare. ``interval`` is the uncertainty stage's summary, whose
    bootstrap interval of each Avg the table shows beside Avg (PathBench's file does not).
    ``audio_check`` (``pathbench-flow prepare-pathbench``'s check in the datasets root) and
    ``dataset_dirs`` (each dataset's test and reference directories) give PathBench's tables
    each column's ``pathbench_audio`` (:func:`pathbench_audio`).
    """
    from pathbench_flow.reporting.comparisons import (
        write_comparisons,  # scipy.stats: this stage only
    )
    from pathbench_flow.reporting.plots import plot_results_heatmap  # matplotlib: this stage only

    correlations = {name: read_parquet(p) for name, p in correlation_paths.items()}
    columns = results_columns({name: dataset_settings.get(name, {}) for name in correlations})
    declared = {name: int(entry["direction"]) for name, entry in (predictors or {}).items()}
    audio = pathbench_audio(columns, audio_check, dataset_dirs or {}, accept_audio_differences)
    aligned = aligned_r(correlations, columns, declared)
    intervals = None if interval is None else pd.read_csv(interval).set_index("metric")
    table = results_table_of(aligned, intervals)
    settings = {"columns": [(c.dataset, c.label) for c in columns]}
    table_csv, _ = write_results_table(table, out_dir, settings)
    write_pathbench_table(aligned, pathbench_csv, audio)
    write_published_vs_measured(aligned, Path(out_dir) / PUBLISHED_VS_MEASURED_CSV, audio)
    plot_results_heatmap(table, heatmap_path)
    write_comparisons(aligned, comparisons_csv, comparisons_json)
    write_signs(aligned, signs_csv)
    write_html_tables(pages, {table_csv: page_view(table)})
    return table


def pathbench_audio(
    columns: Iterable[DatasetColumn],
    check_file: str | Path | None,
    dataset_dirs: Mapping[str, Sequence[str]],
    accept_differences: bool,
) -> dict[str, str]:
    """Whether the audio of each of PathBench's columns of the run is PathBench's (label ->
    ``verified``, ``differs`` or ``unchecked``), refused with a ``ValueError`` when one
    differs unless ``accept_differences`` (config ``accept_audio_differences``): its r beside
    PathBench's published one would pass for a reproduction."""
    placed = [c for c in columns if c.triple in set(PATHBENCH_COLUMNS)]
    statuses = audio_statuses(
        check_file, {c.dataset: dataset_dirs.get(c.dataset, ()) for c in placed}
    )
    labelled = {c.label: statuses[c.dataset] for c in placed}
    if not accept_differences:
        refuse_differing_audio(labelled, check_file)
    return labelled


def export_speaker_csv(speakers_path: str | Path, out_dir: str | Path) -> None:
    """Per-metric ``speaker_id,score`` CSVs in PathBench's external-predictor format."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    export_speaker_csvs(read_parquet(speakers_path), out_dir)
