"""The open-set stage as Snakemake runs it: one function per rule.

Folds are fixed once per dataset (``openset_folds``) and stored as row indices into the active
rows (feature rows with every feature finite, sorted by utt_id). Each later job rebuilds the
active rows from the same feature files and checks their fingerprint against the fold file, so
indices can never silently point at other rows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.io import read_parquet, write_json, write_parquet, write_text
from pathbench_flow.openset.evaluate import (
    COUNTS_SCHEMA,
    candidate_grid,
    fit_and_count,
    pool_counts,
    score_held_out,
    select,
)
from pathbench_flow.openset.folds import (
    build_folds,
    build_tuning_folds,
    fold_from_dict,
    fold_to_dict,
)
from pathbench_flow.openset.schema import FEATURE_NAMES, FEATURE_SCHEMA, SCHEMA_ID
from pathbench_flow.openset.types import AggregateMetrics, ModelConfig, OpenSetDataset, OpenSetFold
from pathbench_flow.progress import progress
from pathbench_flow.stages.score import items_from_manifest
from pathbench_flow.stages.tracks import variant_audio
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


def _active(feature_paths: Sequence[str | Path]) -> tuple[pd.DataFrame, dict[str, int]]:
    """Rows with every feature finite, sorted by utt_id, and excluded rows per speaker."""
    frame = pd.concat([read_parquet(p) for p in feature_paths], ignore_index=True)
    finite = np.isfinite(frame[list(FEATURE_NAMES)].to_numpy(dtype=float)).all(axis=1)
    excluded = frame.loc[~finite, "speaker_id"].value_counts().sort_index()
    active = frame[finite].sort_values("utt_id", kind="mergesort").reset_index(drop=True)
    return active, {str(k): int(v) for k, v in excluded.items()}


def _fingerprint(active: pd.DataFrame) -> str:
    return hashlib.sha256("\n".join(active["utt_id"]).encode()).hexdigest()


def _dataset(feature_paths: Sequence[str | Path], folds: Mapping[str, Any]) -> OpenSetDataset:
    active, _excluded = _active(feature_paths)
    if _fingerprint(active) != folds["active_rows_sha256"]:
        raise ValueError(
            "feature rows differ from the rows the folds were built on; rerun openset_folds"
        )
    return OpenSetDataset.from_frame(active)


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
    """Build the outer folds and each one's tuning folds; write them with the row fingerprint."""
    active, excluded = _active(feature_paths)
    dataset = OpenSetDataset.from_frame(active)
    outer = build_folds(dataset, known_folds, max_outer_folds)
    plan = {
        "schema": SCHEMA_ID,
        "n_active_rows": len(active),
        "active_rows_sha256": _fingerprint(active),
        "excluded_rows_per_speaker": excluded,
        "settings": {
            "known_folds": known_folds,
            "max_outer_folds": max_outer_folds,
            "max_tuning_folds": max_tuning_folds,
        },
        "outer_folds": [
            {
                "held_out": fold_to_dict(fold),
                "tuning": [
                    fold_to_dict(t)
                    for t in build_tuning_folds(dataset, fold, known_folds, max_tuning_folds)
                ],
            }
            for fold in outer
        ],
    }
    write_json(plan, output_path)
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
    metrics = score_held_out(_dataset(feature_paths, folds), held_out, config)
    write_json(
        {
            "outer": outer,
            "pseudo_unknown_speaker": held_out.pseudo_unknown_speaker,
            "config": _config_dict(config),
            "counts": asdict(metrics),
            "rates": {name: getattr(metrics, name) for name in RATES},
        },
        output_path,
    )
    return metrics


def openset_summary(
    folds_path: str | Path,
    heldout_paths: Sequence[str | Path],
    json_path: str | Path,
    csv_path: str | Path,
    plot_path: str | Path,
) -> dict[str, Any]:
    """Per-fold table, mean and spread over outer folds, selections and the pooled confusion."""
    from pathbench_flow.reporting.plots import plot_openset_rates  # matplotlib: this stage only

    results = [_read_json(p) for p in heldout_paths]
    table = pd.DataFrame(
        [
            {
                "outer": r["outer"],
                "pseudo_unknown_speaker": r["pseudo_unknown_speaker"],
                **r["counts"],
                **r["rates"],
                **{f"config_{k}": v for k, v in r["config"].items()},
            }
            for r in results
        ]
    ).sort_values("outer", kind="mergesort")
    pooled = (
        sum(
            (AggregateMetrics(**r["counts"]) for r in results),
            start=AggregateMetrics(0, 0, 0, 0, 0, 0, 0),
        )
        if results
        else None
    )
    summary = {
        "schema": SCHEMA_ID,
        "n_outer_folds": len(results),
        "excluded_rows_per_speaker": _read_json(folds_path)["excluded_rows_per_speaker"],
        "mean": {name: float(table[name].mean()) for name in RATES} if results else {},
        "std": {name: float(table[name].std(ddof=0)) for name in RATES} if results else {},
        "confusion": asdict(pooled) if pooled is not None else {},
        "selected_configs": [r["config"] for r in results],
    }
    write_json(summary, json_path)
    write_text(table.to_csv(index=False, float_format="%.10g", lineterminator="\n"), csv_path)
    plot_openset_rates(table, plot_path)
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
    )  # Praat, librosa: this stage only

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
