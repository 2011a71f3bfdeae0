"""A validated Kaldi-style dataset: its utterances and the manifest frame built from them.

Validation (:mod:`pathbench_flow.data.validation`) finds every defect; a :class:`Dataset`
exists only once ``on_error`` has been applied to them, so what it holds can be scored.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pandas as pd

from pathbench_flow.data.kaldi import Finding
from pathbench_flow.data.validation import (
    MAX_UTTERANCE_S,
    ON_ERROR,
    Utterance,
    apply_on_error,
    validate_directory,
)


class Dataset:
    """A validated Kaldi directory: ``utterances`` in utt_id order, the ``findings`` of its
    validation and the utterances ``on_error: drop`` removed (``dropped``).

    Raises :class:`~pathbench_flow.data.validation.DatasetError` listing every finding when
    ``on_error`` is ``"fail"`` and there is an error, or when nothing usable is left.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        check_audio: bool = True,
        verify_hashes: bool = False,
        on_error: str = "fail",
        lossy_audio: str = "warn",
        max_utterance_s: float = MAX_UTTERANCE_S,
    ) -> None:
        if on_error not in ON_ERROR:
            raise ValueError(f"on_error must be 'fail' or 'drop', not {on_error!r}")
        self.path = Path(path)
        self.on_error = on_error
        validated = validate_directory(
            self.path,
            check_audio=check_audio,
            verify_hashes=verify_hashes,
            lossy_audio=lossy_audio,
            max_utterance_s=max_utterance_s,
        )
        self.findings = validated.findings
        self.utterances = validated.utterances
        self.recording_hashes = validated.recording_hashes
        self.dropped = apply_on_error(self.path, self.findings, self.utterances, on_error)

    def add_findings(self, findings: list[Finding]) -> None:
        """Add findings made outside this dataset's own files (against its test set) and
        apply ``on_error`` again: raise, or drop the utterances they touch."""
        self.findings += findings
        self.dropped = apply_on_error(self.path, self.findings, self.utterances, self.on_error)

    def to_frame(self) -> pd.DataFrame:
        """The manifest rows, one per utterance in utt_id order."""
        columns = list(Utterance.__dataclass_fields__)
        return pd.DataFrame([asdict(u) for u in self.utterances.values()], columns=columns)
