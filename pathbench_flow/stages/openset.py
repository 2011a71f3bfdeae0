"""The open-set stage as Snakemake runs it: one function per rule.

Folds are fixed once per dataset (``openset_folds``) and stored as row indices into the active
rows (feature rows with at least one measured feature, sorted by utt_id). Each later job
rebuilds the active rows from the same feature files and checks their fingerprint against the
fold file, so indices can never silently point at other rows.

A dataset whose shape allows no open-set fold (one recording group per speaker, too few
speakers, nothing measured) is a finding, not a failure: the fold file says ``not_applicable``
with the reason, no fitting job is planned, and the summary still writes every output (tables
with their headers, the reason in the status table), so the run and its report complete.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.io import read_parquet, write_json, write_parquet, write_text
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.evaluators.base import items_from_manifest, variant_audio
from pathbench_flow.openset.coverage import measured_any, speaker_coverage, unmeasured_text
from pathbench_flow.openset.evaluate import (
    CONFIG_COLUMNS,
    COUNT_COLUMNS,
    COUNTS_SCHEMA,
    candidate_grid,
    fit_and_count,
    pool_counts,
    score_held_out,
    select,
)
from pathbench_flow.openset.folds import (
    NestedFolds,
    build_nested_folds,
    fold_from_dict,
    fold_to_dict,
)
from pathbench_flow.openset.types import AggregateMetrics, ModelConfig, OpenSetDataset, OpenSetFold
from pathbench_flow.reporting.html_table import write_html_tables
from pathbench_flow.runtime.progress import progress
from pathbench_flow.schemas.openset import FEATURE_SCHEMA, SCHEMA_ID, mask_text
from pathbench_flow.tracks.store import load_tracks
from pathbench_flow.trimming.stored import StoredTrimmer

RATES = (
    "known_identification_rate",
    "known_misidentification_rate",
    "known_rejection_rate",
    "unknown_rejection_rate",
    "unknown_acceptance_rate",
    "balanced_open_set_rate",
)
UNMEASURED_COLUMNS = ("known_unmeasured", "unknown_unmeasured")
MASK_TEXT_COLUMN = "config_features"
"""The selected mask's features by name (:func:`pathbench_flow.schemas.openset.mask_text`)."""
"""Held-out rows the selected configuration could not measure (declared unknown)."""
PER_FOLD_COLUMNS = (
    "outer",
    "pseudo_unknown_speaker",
    *COUNT_COLUMNS,
    *UNMEASURED_COLUMNS,
    *RATES,
    "config_mask",
    MASK_TEXT_COLUMN,
    *(f"config_{name}" for name in CONFIG_COLUMNS if name != "mask"),
)
"""The selected configuration's settings follow the rates, its feature mask both as the integer
the selection compares and as the feature names it selects."""
STATUS_COLUMNS = (
    "status",
    "reason",
    "n_utterances",
    "n_excluded",
    "n_speakers",
    "n_outer_folds",
    "skipped_outer_folds",
)
SPEAKER_COLUMNS = (
    "speaker_id",
    "n_utterances",
    "n_excluded",
    "n_recording_groups",
    "unmeasured_features",
    "note",
)
APPLICABLE, NOT_APPLICABLE = "applicable", "not_applicable"


def _features(feature_paths: Sequence[str | Path]) -> pd.DataFrame:
    """Every feature row of the dataset, sorted by utt_id."""
    frame = pd.concat([read_parquet(p) for p in feature_paths], ignore_index=True)
    return frame.sort_values("utt_id", kind="mergesort").reset_index(drop=True)


def _active(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows with at least one measured feature (see :mod:`pathbench_flow.openset.coverage`)."""
    return frame[measured_any(frame)].reset_index(drop=True)


def _fingerprint(active: pd.DataFrame) -> str:
    return hashlib.sha256("\n".join(active["utt_id"]).encode()).hexdigest()


def _dataset(feature_paths: Sequence[str | Path], folds: Mapping[str, Any]) -> OpenSetDataset:
    active = _active(_features(feature_paths))
    if _fingerprint(active) != folds["active_rows_sha256"]:
        raise ValueError(
            "feature rows differ from the rows the folds were built on; rerun openset_folds"
        )
    return OpenSetDataset.from_frame(active)


def _log(lines: Iterable[str]) -> None:
    """Write to the job log (the rule scripts point stderr at it)."""
    for line in lines:
        print(line, file=sys.stderr)


def _status_lines(plan: Mapping[str, Any]) -> list[str]:
    """The fold plan's status, reasons and per-speaker coverage, for the job log."""
    lines = [f"open-set: {plan['status']}" + (f": {plan['reason']}" if plan["reason"] else "")]
    lines += [
        f"outer fold with pseudo-unknown {item['pseudo_unknown_speaker']} skipped: {item['reason']}"
        for item in plan["skipped_outer_folds"]
    ]
    lines += [
        f"speaker {record['speaker_id']}: unmeasured {unmeasured_text(record) or 'none'}; "
        f"{record['note']}"
        for record in plan["speakers"]
        if record["note"]
    ]
    return lines


def _read_json(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def openset_folds(
    feature_paths: Sequence[str | Path],
    output_path: str | Path,
    *,
    known_folds: int,
    max_outer_folds: int | None,
    max_tuning_folds: int | None,
) -> dict[str, Any]:
    """Build the outer folds and each one's tuning folds, or record why the dataset has none.

    The file carries the row fingerprint, each speaker's coverage (utterances left out, features
    unmeasured) and the status: ``applicable`` with at least one outer fold, otherwise
    ``not_applicable`` with the reason, which plans no fitting job.
    """
    frame = _features(feature_paths)
    active = _active(frame)
    if len(active):
        dataset = OpenSetDataset.from_frame(active)
        nested = build_nested_folds(dataset, known_folds, max_outer_folds, max_tuning_folds)
    else:
        reason = f"none of the {len(frame)} utterances has a measured feature"
        nested = NestedFolds((), (), reason)
    plan = {
        "schema": SCHEMA_ID,
        "status": APPLICABLE if nested.outer else NOT_APPLICABLE,
        "reason": nested.reason,
        "n_utterances": len(frame),
        "n_active_rows": len(active),
        "active_rows_sha256": _fingerprint(active),
        "speakers": speaker_coverage(frame),
        "settings": {
            "known_folds": known_folds,
            "max_outer_folds": max_outer_folds,
            "max_tuning_folds": max_tuning_folds,
        },
        "skipped_outer_folds": [
            {"pseudo_unknown_speaker": speaker, "reason": why} for speaker, why in nested.skipped
        ],
        "outer_folds": [
            {"held_out": fold_to_dict(fold), "tuning": [fold_to_dict(t) for t in tuning]}
            for fold, tuning in nested.outer
        ],
    }
    write_json(plan, output_path)
    _log(_status_lines(plan))
    return plan


def fold_counts(folds_path: str | Path) -> list[int]:
    """Number of tuning folds of each outer fold (the workflow's job plan)."""
    return [len(outer["tuning"]) for outer in _read_json(folds_path)["outer_folds"]]


def fit_candidates(
    feature_paths: Sequence[str | Path],
    folds_path: str | Path,
    outer: int,
    tuning: int,
    grid: Mapping[str, Any],
    output_path: str | Path,
) -> pd.DataFrame:
    """Counts of every candidate on one tuning fold (fit on its training rows only)."""
    folds = _read_json(folds_path)
    fold = fold_from_dict(folds["outer_folds"][outer]["tuning"][tuning])
    table = fit_and_count(_dataset(feature_paths, folds), fold, candidate_grid(grid))
    write_parquet(
        table,
        output_path,
        COUNTS_SCHEMA,
        list(COUNTS_SCHEMA.names[:6]),
        {"outer": outer, "tuning": tuning, "grid": dict(grid)},
    )
    return table


def _config_dict(config: ModelConfig) -> dict[str, Any]:
    return asdict(config)


def select_config(count_paths: Sequence[str | Path], output_path: str | Path) -> ModelConfig:
    """Pool one outer fold's tuning counts and select the winning configuration."""
    pooled = pool_counts(read_parquet(p) for p in count_paths)
    winner = select(pooled)
    write_json(
        {
            "selected": _config_dict(winner),
            "n_candidates": len(pooled),
            "n_tuning_folds": len(count_paths),
        },
        output_path,
    )
    return winner


def heldout_score(
    feature_paths: Sequence[str | Path],
    folds_path: str | Path,
    outer: int,
    selection_path: str | Path,
    output_path: str | Path,
) -> AggregateMetrics:
    """Refit the selected configuration on the outer training rows; score held-out rows once."""
    folds = _read_json(folds_path)
    held_out: OpenSetFold = fold_from_dict(folds["outer_folds"][outer]["held_out"])
    config = ModelConfig(**_read_json(selection_path)["selected"])
    dataset = _dataset(feature_paths, folds)
    metrics = score_held_out(dataset, held_out, config)
    unmeasured = ~dataset.measured_rows(config.mask)
    write_json(
        {
            "outer": outer,
            "pseudo_unknown_speaker": held_out.pseudo_unknown_speaker,
            "config": _config_dict(config),
            "counts": asdict(metrics),
            "unmeasured": {
                "known_unmeasured": int(unmeasured[list(held_out.known_test)].sum()),
                "unknown_unmeasured": int(unmeasured[list(held_out.unknown_test)].sum()),
            },
            "rates": {name: getattr(metrics, name) for name in RATES},
        },
        output_path,
    )
    return metrics


def _write_csv(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], path: str | Path) -> None:
    """A CSV with exactly ``columns``, header included when there is no row."""
    table = pd.DataFrame(list(rows), columns=list(columns))
    write_text(table.to_csv(index=False, float_format="%.10g", lineterminator="\n"), path)


def openset_summary(
    folds_path: str | Path,
    heldout_paths: Sequence[str | Path],
    json_path: str | Path,
    csv_path: str | Path,
    plot_path: str | Path,
    status_path: str | Path,
    speakers_path: str | Path,
    pages: Mapping[str, str | Path],
) -> dict[str, Any]:
    """Per-fold table, mean and spread over outer folds, selections and the pooled confusion,
    with the status table (applicable or why not) and the per-speaker coverage table.

    A ``not_applicable`` plan has no held-out result: the tables keep their headers, the
    means and the confusion are empty, and the reason is in the summary and the status table.
    ``pages`` maps each CSV the report lists to the page it shows it as.
    """
    from pathbench_flow.reporting.plots import plot_openset_rates  # matplotlib: this stage only

    plan = _read_json(folds_path)
    results = sorted((_read_json(p) for p in heldout_paths), key=lambda r: r["outer"])
    rows = [
        {
            "outer": r["outer"],
            "pseudo_unknown_speaker": r["pseudo_unknown_speaker"],
            **r["counts"],
            **r["unmeasured"],
            **r["rates"],
            **{f"config_{k}": v for k, v in r["config"].items()},
            MASK_TEXT_COLUMN: mask_text(r["config"]["mask"]),
        }
        for r in results
    ]
    table = pd.DataFrame(rows, columns=list(PER_FOLD_COLUMNS))
    pooled = sum(
        (AggregateMetrics(**r["counts"]) for r in results),
        start=AggregateMetrics(0, 0, 0, 0, 0, 0, 0),
    )
    summary = {
        "schema": SCHEMA_ID,
        "status": plan["status"],
        "reason": plan["reason"],
        "n_outer_folds": len(results),
        "skipped_outer_folds": plan["skipped_outer_folds"],
        "speakers": plan["speakers"],
        "mean": {name: float(table[name].mean()) for name in RATES} if results else {},
        "std": {name: float(table[name].std(ddof=0)) for name in RATES} if results else {},
        "confusion": asdict(pooled) if results else {},
        "selected_configs": [r["config"] for r in results],
    }
    write_json(summary, json_path)
    _write_csv(rows, PER_FOLD_COLUMNS, csv_path)
    status = {
        "status": plan["status"],
        "reason": plan["reason"],
        "n_utterances": plan["n_utterances"],
        "n_excluded": plan["n_utterances"] - plan["n_active_rows"],
        "n_speakers": sum(r["n_excluded"] < r["n_utterances"] for r in plan["speakers"]),
        "n_outer_folds": len(results),
        "skipped_outer_folds": "; ".join(
            f"{item['pseudo_unknown_speaker']}: {item['reason']}"
            for item in plan["skipped_outer_folds"]
        ),
    }
    _write_csv([status], STATUS_COLUMNS, status_path)
    speakers = [
        {**record, "unmeasured_features": unmeasured_text(record)} for record in plan["speakers"]
    ]
    _write_csv(speakers, SPEAKER_COLUMNS, speakers_path)
    plot_openset_rates(table, plot_path)
    write_html_tables(pages)
    _log(_status_lines(plan))
    return summary


def openset_features(
    manifest_path: str | Path,
    shard: int,
    output_path: str | Path,
    trim_paths: Sequence[str | Path] = (),
    track_paths: Sequence[str | Path] = (),
) -> pd.DataFrame:
    """Feature rows of one shard, on FA-trimmed audio when trim tables are given.

    A failed trim falls back to the plain load, exactly as for the trimmed evaluators. The
    analyses held by the shared-track files ``track_paths`` are reused, not recomputed.
    """
    from pathbench_flow.openset.features import (
        utterance_features,
    )  # Praat, scipy.signal: this stage only

    load_tracks(track_paths)
    manifest = load_manifest(manifest_path, shard)
    trimmer = StoredTrimmer.from_files([manifest_path], trim_paths) if trim_paths else None
    rows = []
    items = progress(items_from_manifest(manifest), f"openset_features {output_path}")
    for item, group in zip(items, manifest["group_id"], strict=True):
        audio = variant_audio(item, trimmer)
        rows.append(
            {
                "utt_id": item.utt_id,
                "speaker_id": item.speaker_id,
                "group_id": group,
                **utterance_features(np.asarray(audio), SAMPLE_RATE),
            }
        )
    frame = pd.DataFrame(rows, columns=FEATURE_SCHEMA.names)
    write_parquet(
        frame,
        output_path,
        FEATURE_SCHEMA,
        ["utt_id"],
        {"schema": SCHEMA_ID, "trimmed": bool(trim_paths)},
    )
    return frame
