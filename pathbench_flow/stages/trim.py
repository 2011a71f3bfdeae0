"""Rules ``fa_trim`` and ``fa_trim_reference``: the speech span of every utterance of a shard.

Alignment is the expensive part of trimming, so it runs once per utterance here and stores
boundaries, not audio; trimmed measures replay them with
:class:`~pathbench_flow.trimming.stored.StoredTrimmer`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from pathbench_flow.common.io import write_parquet
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.runtime.progress import progress
from pathbench_flow.schemas.tables import TRIM_SCHEMA
from pathbench_flow.trimming.forced_alignment import FATrimmer, TrimRecord


def fa_trim(
    manifest_path: str | Path,
    shard: int | None,
    output_path: str | Path,
    settings: Mapping[str, Any],
) -> pd.DataFrame:
    """Find the speech span of every utterance of a shard (``None``: the whole manifest)."""
    trimmer = FATrimmer.from_config(settings)
    rows = []
    utterances = list(load_manifest(manifest_path, shard).itertuples(index=False))
    for row in progress(utterances, f"fa_trim {output_path}"):
        # The raw transcription, not text_clean: the aligner spells words as its dictionary
        # does, and cleaning drops the apostrophe of "don't" (dictionary word → OOV "dont").
        record = trimmer.trim(row.audio_path, row.text, row.language, row.start, row.end).record
        rows.append({"utt_id": row.utt_id, **_record_columns(record)})
    frame = pd.DataFrame(rows, columns=TRIM_SCHEMA.names)
    write_parquet(frame, output_path, TRIM_SCHEMA, ["utt_id"], dict(settings))
    return frame


def _record_columns(record: TrimRecord) -> dict[str, Any]:
    return {
        "backend": record.backend,
        "status": record.status,
        "trim_start_s": record.trim_start_s,
        "trim_end_s": record.trim_end_s,
        "n_words_aligned": record.n_words_aligned,
        "message": record.message,
    }
