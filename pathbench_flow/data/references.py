"""Which recordings serve as references for a test utterance.

PathBench compares an utterance with other speakers saying the same (cleaned) text, in two
flavours: ``control`` (same gender, control speakers only) and ``all`` (anyone else, gender
ignored). The rule lives here once and serves every stage that needs it (shard planning,
reference scoring), all of which work from manifests.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Protocol

REFERENCE_TYPES = ("control", "all")
SHARED_SPEAKER_IDS = ("same_speaker", "distinct")
"""What a speaker id found in both the test and the reference set means
(``validation.shared_speaker_ids``): Kaldi's convention, one id one speaker (the default), or
ids that merely collide between two corpora."""
ReferenceAudio = tuple[str, float, float]


class Recording(Protocol):
    """What reference matching reads; manifest rows and validated ``Utterance`` objects both fit."""

    utt_id: str
    speaker_id: str
    recording_id: str
    gender: str
    text_clean: str
    audio_path: str
    start: float
    end: float
    audio_sha256: str


TextIndex = dict[str, list[Recording]]


@lru_cache(maxsize=65536)
def _real(path: str) -> str:
    """The file behind ``path``: the same recording reached through a symlink or another
    relative route is still the same recording."""
    return os.path.realpath(path)


def _overlap(a: Recording, b: Recording) -> bool:
    """Do two spans of one file share any time? An end of -1 runs to the end of the file."""
    a_end = math.inf if a.end < 0 else a.end
    b_end = math.inf if b.end < 0 else b.end
    return a.start < b_end and b.start < a_end


def same_audio(a: Recording, b: Recording) -> bool:
    """``a`` and ``b`` are (partly) the same stretch of the same audio: one file, or two
    byte-identical files (the SHA-256 validation computed; empty when it read no audio)."""
    same_file = _real(a.audio_path) == _real(b.audio_path)
    same_bytes = bool(a.audio_sha256) and a.audio_sha256 == b.audio_sha256
    return (same_file or same_bytes) and _overlap(a, b)


def shared_recordings(
    test: Iterable[Recording],
    reference: Iterable[Recording],
    test_hashes: Mapping[str, str],
    reference_hashes: Mapping[str, str],
) -> list[tuple[Recording, Recording]]:
    """``(test, reference)`` pairs that are the same audio: the same file (after resolving
    symlinks) or files with the same SHA-256 in ``wav_hash.scp`` (keyed by recording id), with
    overlapping time spans. Sorted by utt_ids, so findings are deterministic."""
    by_file: dict[str, list[Recording]] = {}
    by_hash: dict[str, list[Recording]] = {}
    for ref in reference:
        by_file.setdefault(_real(ref.audio_path), []).append(ref)
        digest = reference_hashes.get(ref.recording_id)
        if digest:
            by_hash.setdefault(digest, []).append(ref)
    pairs = {}
    for row in test:
        digest = test_hashes.get(row.recording_id)
        candidates = by_file.get(_real(row.audio_path), []) + by_hash.get(digest or "", [])
        pairs |= {(row.utt_id, ref.utt_id): (row, ref) for ref in candidates if _overlap(row, ref)}
    return [pairs[key] for key in sorted(pairs)]


def index_by_text(rows: Iterable[Recording]) -> TextIndex:
    """Recordings grouped by cleaned text, each group in utt_id order."""
    index: TextIndex = {}
    for row in sorted(rows, key=lambda r: r.utt_id):
        index.setdefault(row.text_clean, []).append(row)
    return index


def select_references(
    test: Recording,
    own: TextIndex,
    reference: TextIndex,
    kind: str,
    shared_speaker_ids: str = "same_speaker",
) -> list[ReferenceAudio]:
    """References of ``test`` among its own dataset (``own``) and the reference dataset.

    ``control``: same text and gender, reference dataset only; a test speaker without a
    gender gets none. ``all``: same text, any other speaker of the own dataset and every
    speaker of the reference dataset. A speaker is never their own reference: with
    ``shared_speaker_ids="same_speaker"`` (Kaldi's one id, one speaker) a reference-set
    recording whose speaker id is the test speaker's is left out too, as another take of the
    same sentence by the same voice scores far closer than any other speaker's (P-ESTOI 0.93
    against 0.56); ``"distinct"`` compares ids only within a dataset. Either way a
    recording is never its own reference: candidates that are the same stretch of the same
    audio as ``test`` (one recording listed under two speakers, or a byte-identical copy of
    it under another path) are left out; validation
    refuses reference datasets that share recordings with the test set.
    """
    if kind == "control":
        chosen = [
            r for r in reference.get(test.text_clean, []) if test.gender and r.gender == test.gender
        ]
    elif kind == "all":
        chosen = [r for r in own.get(test.text_clean, []) if r.speaker_id != test.speaker_id]
        chosen += reference.get(test.text_clean, [])
    else:
        raise ValueError(f"reference type must be one of {REFERENCE_TYPES}, not {kind!r}")
    if shared_speaker_ids not in SHARED_SPEAKER_IDS:
        raise ValueError(
            f"shared_speaker_ids must be one of {SHARED_SPEAKER_IDS}, not {shared_speaker_ids!r}"
        )
    if shared_speaker_ids == "same_speaker":
        chosen = [r for r in chosen if r.speaker_id != test.speaker_id]
    return [
        (r.audio_path, float(r.start), float(r.end))
        for r in sorted(chosen, key=lambda r: (r.utt_id, r.audio_path))
        if not same_audio(r, test)
    ]
