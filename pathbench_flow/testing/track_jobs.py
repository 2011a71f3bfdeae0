"""The model track files of one manifest, written as the workflow's track jobs write them.

Tests that check what a measure's job does with track files (its values, what it imports)
need the files first; a track that reads another (the n-gram transcription reads the ASR
model's log-posteriors) is written after its sources, from their files, as its job would be.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pathbench_flow import tracks
from pathbench_flow.stages.tracks import compute_track


def write_track_files(
    manifest: Path, planned: Mapping[str, tracks.TrackUse], directory: Path
) -> tuple[dict[str, Path], dict[str, int]]:
    """Each planned track's ``raw`` file of ``manifest`` in ``directory`` (batches of 4, the
    memo emptied before each job as a new process has it): the files and their row counts."""
    files: dict[str, Path] = {}
    rows: dict[str, int] = {}
    for name, use in sorted(planned.items(), key=lambda item: bool(item[1].track.sources)):
        tracks.forget()
        files[name] = directory / f"{name}.parquet"
        sources = [planned[source].track for source in use.track.sources]
        rows[name] = compute_track(
            [manifest],
            use.track,
            "raw",
            files[name],
            sources=sources,
            source_paths=[files[source.name] for source in sources],
            languages=use.languages,
            batch_size=4,
        )
    tracks.forget()
    return files, rows
