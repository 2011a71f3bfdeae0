"""Transcription cleaning, and how far apart two token sequences are (WER, PER).

References are matched to test utterances by *cleaned* text, so cleaning must erase the
differences annotators introduce (case, punctuation, spacing) and nothing else.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from pathbench_flow.common.languages import MANDARIN

_SPACES = re.compile(r"\s+")


def clean_text(text: str) -> str:
    """NFC, lower-case, drop every punctuation character (ASCII and CJK alike), collapse
    whitespace.

    NFC first: an accented letter typed as one code point and one written as a letter and a
    combining mark (macOS file names, some editors) are the same text, so the same sentence
    matches its references whichever form each transcription was saved in.

    Unicode category ``P*`` covers ASCII punctuation, the CJK symbols block (``。、「」``) and
    full-width forms (``，！？``), so one rule serves all supported languages.
    """
    normal = unicodedata.normalize("NFC", text)
    kept = "".join(ch for ch in normal.lower() if not unicodedata.category(ch).startswith("P"))
    return _SPACES.sub(" ", kept).strip()


_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def count_words(text: str, language: str) -> int:
    """Words of a transcription for rate measures.

    Mandarin is written without spaces, so a whitespace count makes a whole command one word;
    there each Han character (one syllable, the unit Mandarin rate norms use) counts, plus any
    space-separated non-Han token such as a Latin-script word or a digit string.
    """
    cleaned = clean_text(text)
    if language != MANDARIN:
        return len(cleaned.split())
    return len(_HAN.findall(cleaned)) + len(_HAN.sub(" ", cleaned).split())


def edit_distance(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """Fewest substitutions, insertions and deletions turning ``reference`` into ``hypothesis``."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, start=1):
        current = [i]
        for j, hyp in enumerate(hypothesis, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp)))
        previous = current
    return previous[-1]
