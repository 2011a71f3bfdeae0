"""The shared-track stage: one analysis track of some manifest slices' audio, in one variant.

The workflow writes a track file per shard for the measures that read a shard at a time, and
one per set (test or reference) for the reference measures, whose jobs each read recordings of
every shard. The audio is loaded exactly as the consumers load it (raw:
:func:`pathbench_flow.common.audio.load_shared`; ``fa``: the stored trim boundaries through
:func:`pathbench_flow.evaluators.base.trimmed_audio`, with its fallback to the untrimmed audio), so
the digests the file records are the ones the consumers look up. A model track
(:mod:`pathbench_flow.neural.model_tracks`) is written only for the utterances of the
languages its readers score: an ASR model serves its languages only. An ``fa`` job also reads
the ``raw`` file of its track and slices when there is one: trimming leaves some recordings
whole (its fallbacks, explicit segments), and their values are already there.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.status import GOOD_TRIMS
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.evaluators.base import (
    Item,
    items_from_manifest,
    variant_audio,
)
from pathbench_flow.evaluators.metric import FA, RAW
from pathbench_flow.neural import models
from pathbench_flow.runtime.progress import Progress
from pathbench_flow.tracks import TRACKS, Track
from pathbench_flow.tracks.store import load_tracks, track_rows, write_track
from pathbench_flow.trimming.stored import StoredTrimmer

LOAD_CHUNK = 64
"""Utterances whose audio a track job holds at once."""


def kept_whole(items: Sequence[Item], trimmer: StoredTrimmer) -> list[str]:
    """The utterances whose trimmed audio is their raw audio: trimming fell back to the plain
    load or kept an explicit segment whole (every status but a real trim)."""
    return [
        item.utt_id
        for item in items
        if trimmer.record(item.audio_path, item.start, item.end).status not in GOOD_TRIMS
    ]


def compute_track(
    manifest_paths: Sequence[str | Path],
    track: Track | str,
    variant: str,
    output_path: str | Path,
    *,
    trim_paths: Sequence[str | Path] = (),
    raw_paths: Sequence[str | Path] = (),
    sources: Sequence[Track] = (),
    source_paths: Sequence[str | Path] = (),
    languages: Collection[str] | None = None,
    batch_size: int = 1,
) -> int:
    """Write ``track`` (a :class:`Track`, or the name of a fixed one) for every utterance of
    the manifest slices ``manifest_paths`` (a shard's rows, or every shard's of a set) in
    ``variant``, or for those in ``languages`` only (the ones its consumers read); returns the
    number of rows. ``fa`` needs the slices' trim tables.

    ``raw_paths`` (``fa`` only) are the same slices' ``raw`` files of the track: the values of
    the utterances trimming left whole are read from them, not analysed again (the memo is
    keyed by the audio, so they are the values an analysis would give, bit for bit). On a
    UASpeech-shaped corpus those recordings are a fifth of the trimmed audio.

    ``source_paths`` are the same slices' files, in the same variant, of the tracks
    ``sources`` that ``track`` reads (its ``sources``; the n-gram transcription reads the ASR
    log-posteriors): their values are loaded, so the analysis reads them instead of running
    their models again.

    The audio is analysed :data:`LOAD_CHUNK` utterances at a time (a model track batches them
    on a GPU, up to ``batch_size``), so a set's audio is never all in memory at once.
    """
    if variant not in (RAW, FA):
        raise ValueError(f"unknown variant {variant!r}; known: {RAW}, {FA}")
    if variant == FA and not trim_paths:
        raise ValueError("the fa variant of a track needs the fa_trim tables of its shards")
    track = TRACKS[track] if isinstance(track, str) else track
    if track.runs_model:
        models.require_device()
    trimmer = StoredTrimmer.from_files(manifest_paths, trim_paths) if variant == FA else None
    items = [
        item
        for path in manifest_paths
        for item in items_from_manifest(load_manifest(path))
        if languages is None or item.language in languages
    ]
    if source_paths:
        load_tracks(source_paths, sources, [item.utt_id for item in items])
    if raw_paths:
        if trimmer is None:
            raise ValueError("only an fa track reads the raw track's values")
        load_tracks(raw_paths, [track], kept_whole(items, trimmer))
    meter = Progress(f"compute_track {output_path}", len(items))
    rows = []
    for start in range(0, len(items), LOAD_CHUNK):
        chunk = items[start : start + LOAD_CHUNK]
        audios = [variant_audio(item, trimmer) for item in chunk]
        rows += track_rows(track, [item.utt_id for item in chunk], audios, SAMPLE_RATE, batch_size)
        meter.advance(len(chunk))
    meter.finish()
    write_track(rows, output_path, track, variant)
    return len(rows)
