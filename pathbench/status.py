"""Why a measure has no value.

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


class NoScore(Exception):
    """Raised by a measure that cannot give a value for this input."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(f"{status}: {reason}")
        self.status = status
        self.reason = reason
