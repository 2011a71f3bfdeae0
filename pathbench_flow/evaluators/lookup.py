"""Lookup evaluators: values someone already measured, read from Kaldi files."""

from __future__ import annotations

import math
from pathlib import Path

from pathbench_flow.common.staging import is_present, located
from pathbench_flow.common.status import NO_REFERENCES
from pathbench_flow.evaluators.base import LookupEvaluator, Score


class Spk2AgeEvaluator(LookupEvaluator):
    """Speaker age as a predictor: the baseline any acoustic measure should beat.

    Older speakers are expected to be less intelligible, hence direction -1.
    """

    name = "spk2age"
    direction = -1
    unit = "years"
    context_options = ("dataset_dir",)
    dataset_files = ("spk2age", "utt2spk")

    def __init__(self, dataset_dir: str | Path) -> None:
        directory = Path(dataset_dir)
        ages = _read_pairs(directory / "spk2age")
        speakers = _read_pairs(directory / "utt2spk")
        self._ages = {utt: ages.get(spk, "") for utt, spk in speakers.items()}

    def score(self, utt_id: str) -> Score:
        raw = self._ages.get(utt_id, "")
        try:
            value = float(raw)
        except ValueError:
            return Score(None, NO_REFERENCES, f"no usable age in spk2age ({raw!r})")
        return Score(value) if math.isfinite(value) else Score(None, NO_REFERENCES, "age is N/A")


def _read_pairs(path: Path) -> dict[str, str]:
    """Two-column Kaldi file → dict; absent file → empty (the dataset validator reports it)."""
    if not is_present(path):
        return {}
    text = located(path).read_text(encoding="utf-8")
    pairs = (line.split(maxsplit=1) for line in text.splitlines())
    return {p[0]: p[1].strip() for p in pairs if len(p) == 2}
