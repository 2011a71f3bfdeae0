"""Why a measure has no value, and what trimming did to an utterance.

A missing score is never silent: measures raise :class:`NoScore` with a machine-readable status
and a human reason, and the scoring stage turns it into a row with NaN, the status and the
reason.
"""

from __future__ import annotations

OK = "ok"
TOO_SHORT = "too_short"
UNVOICED = "unvoiced"
UNSUPPORTED_LANGUAGE = "unsupported_language"
NO_REFERENCES = "no_references"
TOO_FEW_REFERENCES = "too_few_references"
OOV = "oov"
ERROR = "error"
TRIM_FAILED = "trim_failed"
"""A trimmed reference measure's status for a test utterance without a good trim (score 0.0,
PathBench's convention)."""

# What trimming did to an utterance (the ``status`` column of the fa_trim tables).
ALIGNED = "aligned"
ENERGY_TRIMMED = "energy"
UNTRIMMED = "untrimmed"
SEGMENT_UNTRIMMED = "segment_untrimmed"
OOV_FALLBACK = "oov_fallback"
FAILED_FALLBACK = "failed_fallback"
GOOD_TRIMS = frozenset({ALIGNED, ENERGY_TRIMMED})
"""Trim statuses whose boundaries came from speech detection, not a fallback: only these count
as trimmed where a measure must know (the trimmed reference measures)."""


class NoScore(Exception):
    """Raised by a measure that cannot give a value for this input."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(f"{status}: {reason}")
        self.status = status
        self.reason = reason
