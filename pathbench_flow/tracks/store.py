"""Track files: one Parquet table per track, variant and shard (or set), and loading them into
the memo.

Each utterance of the shard or set is one row: its audio digest (the memo key, see
:mod:`pathbench_flow.tracks`), the outcome, and one ``list<double>`` column per field of the track,
which stores float64 values bit for bit. ``outcome`` is ``value``, ``no_score`` (the analysis
raised ``NoScore``; ``status`` and ``reason`` say why) or ``exception`` (any other error, kept
for the log and never loaded, so the consumer meets the error itself).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pathbench_flow.common.io import write_parquet
from pathbench_flow.common.status import NoScore
from pathbench_flow.tracks.memo import TRACKS, Track, audio_digest, outcomes, remember

VALUE, NO_SCORE, EXCEPTION = "value", "no_score", "exception"

_ROW_COLUMNS = [
    ("utt_id", pa.string()),
    ("track", pa.string()),
    ("settings", pa.string()),
    ("fs", pa.int32()),
    ("audio_sha256", pa.string()),
    ("outcome", pa.string()),
    ("status", pa.string()),
    ("reason", pa.string()),
]


def track_schema(track: Track) -> pa.Schema:
    """The columns of ``track``'s files: the row's identity, then one list per field."""
    return pa.schema([*_ROW_COLUMNS, *((field, pa.list_(pa.float64())) for field in track.fields)])


def track_rows(
    track: Track,
    utt_ids: Sequence[str],
    audios: Sequence[np.ndarray],
    fs: int,
    batch_size: int = 1,
) -> list[dict[str, Any]]:
    """Compute (or reuse) ``track`` for each utterance and describe each outcome as a row.

    The utterances are analysed together (:func:`pathbench_flow.tracks.outcomes`), so a model
    track batches them; an analysis failure is a row too, so every utterance has one.
    """
    rows = []
    empty = tuple(np.empty(0) for _ in track.fields)
    for utt_id, audio, outcome in zip(
        utt_ids, audios, outcomes(track, audios, fs, batch_size), strict=True
    ):
        row: dict[str, Any] = {
            "utt_id": utt_id,
            "track": track.name,
            "settings": track.settings,
            "fs": int(fs),
            "audio_sha256": audio_digest(audio),
            "outcome": VALUE,
            "status": "ok",
            "reason": "",
        }
        arrays = empty
        if isinstance(outcome, NoScore):
            row.update(outcome=NO_SCORE, status=outcome.status, reason=outcome.reason)
        elif isinstance(outcome, Exception):  # recorded, and recomputed by the consumer
            reason = f"{type(outcome).__name__}: {outcome}"
            row.update(outcome=EXCEPTION, status="error", reason=reason)
        else:
            arrays = outcome
        rows.append(row | dict(zip(track.fields, arrays, strict=True)))
    return rows


def track_row(track: Track, utt_id: str, audio: np.ndarray, fs: int) -> dict[str, Any]:
    """The row of one utterance (:func:`track_rows`)."""
    return track_rows(track, [utt_id], [audio], fs)[0]


def write_track(
    rows: Sequence[dict[str, Any]], path: str | Path, track: Track, variant: str
) -> None:
    """Write one shard's or set's rows of ``track`` (sorted by utt_id, deterministic)."""
    schema = track_schema(track)
    frame = pd.DataFrame(list(rows), columns=schema.names)
    settings = {"track": track.name, "settings": track.settings, "variant": variant}
    write_parquet(frame, path, schema, ["utt_id"], settings)


def _lists(column: pa.ChunkedArray) -> list[np.ndarray]:
    """A ``list<double>`` column as one float64 array per row, without a Python float each."""
    lists = column.combine_chunks()
    offsets = lists.offsets.to_numpy()
    flat = lists.values.to_numpy(zero_copy_only=False)
    return [flat[offsets[i] : offsets[i + 1]].copy() for i in range(len(lists))]


def load_tracks(
    paths: Iterable[str | Path],
    known: Iterable[Track] | None = None,
    utt_ids: Collection[str] | None = None,
) -> int:
    """Put every value and ``NoScore`` of the track files ``paths`` into the memo.

    Only rows of the tracks ``known`` (default: the fixed tracks, :data:`TRACKS`) with their
    settings are loaded: a row of another track, or of other settings (a file from an older
    analysis or another model), is skipped, and its audio is analysed afresh when asked for.
    ``utt_ids`` (None: all) keeps only the rows of those utterances: a reference job reads a
    whole set's file but needs the rows of its shard's texts only, and turning every row into
    arrays would make each job's cost grow with the corpus, not with its shard.
    Returns the number of rows loaded.
    """
    by_name = {track.name: track for track in (TRACKS.values() if known is None else known)}
    wanted = None if utt_ids is None else pa.array(sorted(utt_ids), pa.string())
    loaded = 0
    for path in paths:
        table = pq.read_table(path)
        if wanted is not None:
            table = table.filter(pc.is_in(table.column("utt_id"), value_set=wanted))
        meta = table.select([name for name, _ in _ROW_COLUMNS]).to_pylist()
        names = {row["track"] for row in meta}
        tracks = {name: by_name[name] for name in names if name in by_name}
        fields = {
            field: _lists(table.column(field))
            for track in tracks.values()
            for field in track.fields
        }
        for index, row in enumerate(meta):
            track = tracks.get(row["track"])
            if track is None or row["settings"] != track.settings:
                continue
            if row["outcome"] == VALUE:
                outcome = tuple(fields[field][index] for field in track.fields)
            elif row["outcome"] == NO_SCORE:
                outcome = NoScore(row["status"], row["reason"])
            else:
                continue
            remember(track, row["audio_sha256"], row["fs"], outcome)
            loaded += 1
    return loaded
