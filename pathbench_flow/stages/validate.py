"""Rules ``validate_dataset`` and ``validate_reference``: a Kaldi directory in, a manifest and a
findings report out.

Later stages never read Kaldi files again; they read the manifest, whose ``shard`` column
splits the work into jobs of about ``shard_size`` utterances.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from pathbench_flow.common.io import write_json, write_parquet
from pathbench_flow.data.dataset import Dataset
from pathbench_flow.data.manifest import assign_shards, load_manifest
from pathbench_flow.data.overlap import (
    read_hashes,
    reference_overlap,
    shared_speakers,
    shared_utterance_ids,
)
from pathbench_flow.data.score_scale import DEFAULT_SCALE, describe, ground_truth_name
from pathbench_flow.data.validation import MAX_UTTERANCE_S, DatasetError
from pathbench_flow.schemas.tables import MANIFEST_SCHEMA


def failed_report_path(report_path: str | Path) -> Path:
    """Where a failed validation keeps its findings: ``validation.failed.json`` beside
    ``validation.json``. Snakemake deletes the declared outputs of a failed job, so the
    findings must go to a file that is not one; a later successful run removes it."""
    report = Path(report_path)
    return report.with_name(f"{report.stem}.failed{report.suffix}")


def validate_dataset(
    dataset_dir: str | Path,
    manifest_path: str | Path,
    report_path: str | Path,
    *,
    n_shards: int,
    check_audio: bool = True,
    verify_hashes: bool = False,
    on_error: str = "fail",
    lossy_audio: str = "warn",
    shared_speaker_ids: str = "same_speaker",
    max_utterance_s: float = MAX_UTTERANCE_S,
    test_manifest: str | Path | None = None,
    test_directory: str | Path | None = None,
    score_scale: str = DEFAULT_SCALE,
) -> Dataset:
    """Validate ``dataset_dir`` and write its manifest and report.

    The manifest keeps ``spk2score`` as written; ``score_scale`` (the dataset's
    ``datasets.<name>.score_scale``) is only echoed, in the report's ``ratings``
    (:func:`ratings_summary`), so a user sees how the ratings will be read before any
    correlation. Aggregation applies it, so changing it reruns no scoring.

    With ``test_manifest`` and ``test_directory`` the dataset is the reference set of that
    test dataset, and sharing recordings with it is an error (see
    :func:`pathbench_flow.data.overlap.reference_overlap`). When validation fails, the report goes
    to :func:`failed_report_path` and the :class:`DatasetError` propagates.
    """
    settings: dict[str, Any] = {
        "check_audio": check_audio,
        "verify_hashes": verify_hashes,
        "on_error": on_error,
        "lossy_audio": lossy_audio,
        "shared_speaker_ids": shared_speaker_ids,
        "max_utterance_s": max_utterance_s,
        "n_shards": n_shards,
    }
    failed_path = failed_report_path(report_path)
    try:
        dataset = Dataset(
            dataset_dir,
            check_audio=check_audio,
            verify_hashes=verify_hashes,
            on_error=on_error,
            lossy_audio=lossy_audio,
            max_utterance_s=max_utterance_s,
        )
        if test_manifest is not None and test_directory is not None:
            _check_against_test_set(
                dataset, test_manifest, Path(test_directory), shared_speaker_ids
            )
    except DatasetError as failure:
        write_json(_report(dataset_dir, failure.findings, [], 0, settings, "failed"), failed_path)
        raise
    frame = dataset.to_frame()
    frame["shard"] = assign_shards(frame["utt_id"].tolist(), frame["text_clean"].tolist(), n_shards)
    write_parquet(frame, manifest_path, MANIFEST_SCHEMA, sort_by=["utt_id"], settings=settings)
    report = _report(dataset_dir, dataset.findings, dataset.dropped, len(frame), settings, "ok")
    write_json(report | {"ratings": ratings_summary(frame, score_scale)}, report_path)
    failed_path.unlink(missing_ok=True)
    return dataset


def ratings_summary(manifest: pd.DataFrame, score_scale: str) -> dict[str, Any]:
    """How the manifest's ratings will be read: the scale, how many speakers are rated, their
    range as written, what the correlations are against, and that as a sentence."""
    ratings = manifest.groupby("speaker_id")["score"].first().dropna()
    return {
        "score_scale": score_scale,
        "n_rated_speakers": len(ratings),
        "range": [float(ratings.min()), float(ratings.max())] if len(ratings) else [],
        "ground_truth": ground_truth_name(score_scale),
        "summary": describe(score_scale),
    }


def _check_against_test_set(
    reference: Dataset, test_manifest: str | Path, test_dir: Path, shared_speaker_ids: str
) -> None:
    """Add the findings of :func:`reference_overlap`, :func:`shared_speakers` and
    :func:`shared_utterance_ids` to the reference dataset."""
    test = load_manifest(test_manifest)
    reference.add_findings(
        reference_overlap(
            test_dir,
            test.itertuples(index=False),
            read_hashes(test_dir),
            reference.path,
            reference.utterances.values(),
            reference.recording_hashes,
        )
        + shared_speakers(
            test_dir,
            test.itertuples(index=False),
            reference.path,
            reference.utterances.values(),
            shared_speaker_ids,
        )
        + shared_utterance_ids(
            test_dir, test.itertuples(index=False), reference.path, reference.utterances.values()
        )
    )


def _report(
    dataset_dir: str | Path,
    findings: list,
    dropped: list[str],
    n_utterances: int,
    settings: dict[str, Any],
    outcome: str,
) -> dict[str, Any]:
    return {
        "dataset_dir": str(dataset_dir),
        "outcome": outcome,
        "settings": settings,
        "counts": {
            "utterances": n_utterances,
            "dropped": len(dropped),
            "errors": sum(1 for f in findings if f.severity == "error"),
            "warnings": sum(1 for f in findings if f.severity == "warning"),
        },
        "dropped_utterances": dropped,
        "findings": [f.as_dict() for f in findings],
    }
