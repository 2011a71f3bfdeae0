"""The shared-track stage: one analysis track of one shard's audio, in one variant.

The audio is loaded exactly as the consumers load it (raw: :func:`pathbench_flow.audio.load_shared`;
``fa``: the stored trim boundaries through :func:`pathbench_flow.evaluator.trimmed_audio`, with its
fallback to the untrimmed audio), so the digests the file records are the ones the consumers
look up.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.audio import load_shared
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.evaluator import Item, Trimmer, trimmed_audio
from pathbench_flow.metric import FA, RAW
from pathbench_flow.progress import progress
from pathbench_flow.stages.score import items_from_manifest
from pathbench_flow.tracks import TRACKS
from pathbench_flow.tracks.store import track_row, write_track
from pathbench_flow.trimming.stored import StoredTrimmer


def variant_audio(item: Item, trimmer: Trimmer | None) -> np.ndarray:
    """The audio a consumer analyses for ``item``: trimmed when a trimmer is given."""
    if trimmer is None:
        return load_shared(item.audio_path, item.start, item.end)
    return trimmed_audio(trimmer, item)[0]


def compute_track(
    manifest_path: str | Path,
    shard: int,
    track_name: str,
    variant: str,
    output_path: str | Path,
    *,
    trim_paths: Sequence[str | Path] = (),
) -> int:
    """Write ``track_name`` for every utterance of shard ``shard`` in ``variant``; returns the
    number of rows. ``fa`` needs the shard's trim table."""
    if variant not in (RAW, FA):
        raise ValueError(f"unknown variant {variant!r}; known: {RAW}, {FA}")
    if variant == FA and not trim_paths:
        raise ValueError("the fa variant of a track needs the shard's fa_trim table")
    track = TRACKS[track_name]
    trimmer = StoredTrimmer.from_files([manifest_path], trim_paths) if variant == FA else None
    items = items_from_manifest(load_manifest(manifest_path, shard))
    rows = [
        track_row(track, item.utt_id, variant_audio(item, trimmer), SAMPLE_RATE)
        for item in progress(items, f"compute_track {output_path}")
    ]
    write_track(rows, output_path, track, variant)
    return len(rows)
