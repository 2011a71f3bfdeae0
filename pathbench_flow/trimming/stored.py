"""The trimmer that replays the boundaries the FA-trim stage stored (:class:`StoredTrimmer`).

Alignment is the expensive part of trimming, so the workflow aligns each utterance once
(rule ``fa_trim``) and stores boundaries, not audio; every trimmed evaluator variant then cuts
the audio with :class:`StoredTrimmer`, which honours the same
:class:`~pathbench_flow.evaluators.base.Trimmer` interface as
:class:`~pathbench_flow.trimming.forced_alignment.FATrimmer`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import cut, load_shared
from pathbench_flow.common.io import read_parquet
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.trimming.forced_alignment import TrimRecord, TrimResult


class StoredTrimmer:
    """Replays boundaries from ``fa_trim`` tables for the utterances of given manifests.

    Utterances are identified by (audio path, start, end), which is what the trimmer interface
    receives; test and reference datasets can share one instance.
    """

    def __init__(self, manifests: Iterable[pd.DataFrame], trims: Iterable[pd.DataFrame]) -> None:
        manifest = pd.concat(list(manifests), ignore_index=True)
        table = pd.concat(list(trims), ignore_index=True)
        joined = manifest.merge(table, on="utt_id", how="inner", validate="one_to_one")
        self._records = {
            (row.audio_path, float(row.start), float(row.end)): TrimRecord(
                row.backend,
                row.status,
                row.trim_start_s,
                row.trim_end_s,
                int(row.n_words_aligned),
                row.message,
            )
            for row in joined.itertuples(index=False)
        }

    @classmethod
    def from_files(
        cls, manifest_paths: Iterable[str | Path], trim_paths: Iterable[str | Path]
    ) -> StoredTrimmer:
        return cls(
            [load_manifest(p) for p in manifest_paths], [read_parquet(p) for p in trim_paths]
        )

    def record(self, audio_path: str, start_time: float, end_time: float) -> TrimRecord:
        """The stored record of an utterance (raises KeyError for one no table holds)."""
        key = (audio_path, float(start_time), float(end_time))
        record = self._records.get(key)
        if record is None:
            raise KeyError(f"no stored trim boundaries for {audio_path} [{start_time}, {end_time}]")
        return record

    def trim(
        self,
        audio_path: str,
        transcription: str,
        language: str,
        start_time: float,
        end_time: float,
    ) -> TrimResult:
        record = self.record(audio_path, start_time, end_time)
        audio = load_shared(audio_path, start_time, end_time)
        return TrimResult(cut(audio, record.trim_start_s, record.trim_end_s), SAMPLE_RATE, record)
