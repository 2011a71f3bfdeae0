"""Speaker-level measures: one value from all of a speaker's utterances."""

from __future__ import annotations

import numpy as np

from pathbench import SAMPLE_RATE
from pathbench.evaluator import (
    Item,
    LanguageAwareSpeakerEvaluator,
    ReferenceFreeSpeakerEvaluator,
    Score,
)
from pathbench.measures import pitch, vsa


class F0RangeEvaluator(ReferenceFreeSpeakerEvaluator):
    """Range of the speaker's pooled voiced F0; a narrow range signals monotone speech."""

    name = "f0_range"
    unit = "Hz"

    def _score_audio_list(self, audios: list[np.ndarray]) -> float:
        return pitch.f0_range(audios, SAMPLE_RATE)


class VSAEvaluator(LanguageAwareSpeakerEvaluator):
    """Vowel space area; a reduced space (centralised vowels) lowers intelligibility.

    Per the PathBench convention a failed estimate scores 0.0 (not NaN), with its status kept,
    so the speaker stays in the common speaker set.
    """

    name = "vsa"
    unit = "Hz^2"
    languages = ("en", "nl", "it", "es", "cmn")

    def __init__(self, use_spk2gender: bool = False) -> None:
        self.use_spk2gender = use_spk2gender

    def _score_audio_list(self, audios: list[np.ndarray], language: str) -> float:
        gender = (self._speaker_gender or None) if self.use_spk2gender else None
        return vsa.vsa(audios, SAMPLE_RATE, language, gender)

    def score_loaded(self, audios: list[np.ndarray], items: list[Item]) -> Score:
        result = super().score_loaded(audios, items)
        if result.value is None and result.status != "unsupported_language":
            return Score(0.0, result.status, result.message)
        return result
