"""Transcription cleaning.

References are matched to test utterances by *cleaned* text, so cleaning must erase the
differences annotators introduce (case, punctuation, spacing) and nothing else.
"""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")


def clean_text(text: str) -> str:
    """Lower-case, drop every punctuation character (ASCII and CJK alike), collapse whitespace.

    Unicode category ``P*`` covers ASCII punctuation, the CJK symbols block (``。、「」``) and
    full-width forms (``，！？``), so one rule serves all supported languages.
    """
    kept = "".join(ch for ch in text.lower() if not unicodedata.category(ch).startswith("P"))
    return _SPACES.sub(" ", kept).strip()
