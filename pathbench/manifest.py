"""The validation stage: a dataset directory in, a manifest and a findings report out.

Later stages never read Kaldi files again; they read the manifest, whose ``shard`` column
splits the work into jobs of about ``shard_size`` utterances. One job per utterance would
drown Snakemake in scheduling (2,000 trivial jobs took 232 s), one job per dataset would leave
cores idle.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from pathbench.dataset import Dataset, DatasetError, read_hashes, reference_overlap
from pathbench.io import read_parquet, write_json, write_parquet

MANIFEST_SCHEMA = pa.schema(
    [
        ("utt_id", pa.string()),
        ("speaker_id", pa.string()),
        ("recording_id", pa.string()),
        ("group_id", pa.string()),
        ("audio_path", pa.string()),
        ("start", pa.float64()),
        ("end", pa.float64()),
        ("text", pa.string()),
        ("text_clean", pa.string()),
        ("gender", pa.string()),
        ("language", pa.string()),
        ("duration_s", pa.float64()),
        ("sample_rate", pa.int32()),
        ("channels", pa.int16()),
        ("score", pa.float64()),
        ("shard", pa.int32()),
    ]
)


def count_utterances(dataset_dir: str | Path) -> int:
    """Non-blank lines of utt2spk: the planning estimate of a dataset's size."""
    with open(Path(dataset_dir) / "utt2spk", "rb") as handle:
        return sum(1 for line in handle if line.strip())


def shard_count(n_utterances: int, shard_size: int) -> int:
    """Number of shards for ``n_utterances``; at least one so every stage has a job."""
    return max(1, math.ceil(n_utterances / shard_size))


def assign_shards(utt_ids: list[str], n_shards: int) -> np.ndarray:
    """Shard of each utterance: contiguous, balanced blocks of the sorted ids.

    Depends only on the set of ids, never on line order, so the same dataset always gives the
    same shards.
    """
    order = np.argsort(np.asarray(utt_ids, dtype=object), kind="stable")
    shards = np.empty(len(utt_ids), dtype=np.int32)
    shards[order] = (np.arange(len(utt_ids)) * n_shards) // max(1, len(utt_ids))
    return shards


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
    test_manifest: str | Path | None = None,
    test_directory: str | Path | None = None,
) -> Dataset:
    """Validate ``dataset_dir`` and write its manifest and report.

    With ``test_manifest`` and ``test_directory`` the dataset is the reference set of that
    test dataset, and sharing recordings with it is an error (see
    :func:`pathbench.dataset.reference_overlap`). When validation fails, the report goes to
    :func:`failed_report_path` and the :class:`DatasetError` propagates.
    """
    settings: dict[str, Any] = {
        "check_audio": check_audio,
        "verify_hashes": verify_hashes,
        "on_error": on_error,
        "n_shards": n_shards,
    }
    failed_path = failed_report_path(report_path)
    try:
        dataset = Dataset(
            dataset_dir, check_audio=check_audio, verify_hashes=verify_hashes, on_error=on_error
        )
        if test_manifest is not None and test_directory is not None:
            _check_against_test_set(dataset, test_manifest, Path(test_directory))
    except DatasetError as failure:
        write_json(_report(dataset_dir, failure.findings, [], 0, settings, "failed"), failed_path)
        raise
    frame = dataset.to_frame()
    frame["shard"] = assign_shards(frame["utt_id"].tolist(), n_shards)
    write_parquet(frame, manifest_path, MANIFEST_SCHEMA, sort_by=["utt_id"], settings=settings)
    write_json(
        _report(dataset_dir, dataset.findings, dataset.dropped, len(frame), settings, "ok"),
        report_path,
    )
    failed_path.unlink(missing_ok=True)
    return dataset


def _check_against_test_set(reference: Dataset, test_manifest: str | Path, test_dir: Path) -> None:
    """Add the findings of :func:`reference_overlap` to the reference dataset."""
    reference.add_findings(
        reference_overlap(
            test_dir,
            load_manifest(test_manifest).itertuples(index=False),
            read_hashes(test_dir),
            reference.path,
            reference.utterances.values(),
            reference.recording_hashes,
            affected="reference",
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


def load_manifest(path: str | Path, shard: int | None = None) -> pd.DataFrame:
    """The manifest, or one shard of it, in utt_id order."""
    frame = read_parquet(path)
    if shard is not None:
        frame = frame[frame["shard"] == shard]
    return frame.reset_index(drop=True)
