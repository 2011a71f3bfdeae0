"""Which recordings serve as references for a test utterance.

PathBench compares an utterance with other speakers saying the same (cleaned) text, in two
flavours: ``control`` (same gender, control speakers only) and ``all`` (anyone else, gender
ignored). The rule lives here once and serves both the :class:`~pathbench.dataset.Dataset`
API and the workflow, which works from manifests.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

REFERENCE_TYPES = ("control", "all")
ReferenceAudio = tuple[str, float, float]


class Recording(Protocol):
    """What reference matching reads; manifest rows and ``Utterance`` objects both fit."""

    utt_id: str
    speaker_id: str
    gender: str
    text_clean: str
    audio_path: str
    start: float
    end: float


TextIndex = dict[str, list[Recording]]


def index_by_text(rows: Iterable[Recording]) -> TextIndex:
    """Recordings grouped by cleaned text, each group in utt_id order."""
    index: TextIndex = {}
    for row in sorted(rows, key=lambda r: r.utt_id):
        index.setdefault(row.text_clean, []).append(row)
    return index


def select_references(
    test: Recording, own: TextIndex, reference: TextIndex, kind: str
) -> list[ReferenceAudio]:
    """References of ``test`` among its own dataset (``own``) and the reference dataset.

    ``control``: same text and gender, reference dataset only; a test speaker without a
    gender gets none. ``all``: same text, any other speaker of the own dataset and every
    speaker of the reference dataset (ids are only compared within a dataset).
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
    return [
        (r.audio_path, float(r.start), float(r.end))
        for r in sorted(chosen, key=lambda r: (r.utt_id, r.audio_path))
    ]
