"""Reference-text evaluators: words per minute in any language, and WER, PER and GOP with the
PocketSphinx models embedded in its wheel (English).

A recogniser trained on typical speech stands in for a naive listener: the less intelligible
the speech, the more it gets wrong. These are proxies, named ``sphinx_*`` so that PathBench's
names ``wer``/``per``/``gop`` are not confused with them: PocketSphinx's 2000s-era US English
models misrecognise even clean synthetic speech, so PathBench's ``per`` (a wav2vec2 ASR model,
:mod:`pathbench_flow.evaluators.neural`) is the measure to compare with PathBench. The decoders
load once per evaluator instance, which the workflow creates once per job.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_shared
from pathbench_flow.common.languages import ENGLISH
from pathbench_flow.common.status import OK
from pathbench_flow.common.transcripts import count_words
from pathbench_flow.evaluators.base import ReferenceTxtEvaluator, Score, guarded
from pathbench_flow.measures import recognition
from pathbench_flow.measures.words_per_minute import wpm
from pathbench_flow.trimming.sphinx import SphinxModels


class _SphinxEvaluator(ReferenceTxtEvaluator):
    """Shared model handling; subclasses say which measure of :mod:`recognition` they run."""

    languages = (ENGLISH,)

    def __init__(self) -> None:
        self.models = SphinxModels()

    def _audio(self, audio_path: str, start: float, end: float) -> np.ndarray:
        return load_shared(audio_path, start, end)


class SphinxWEREvaluator(_SphinxEvaluator):
    """Word error rate of the recognised words; the hypothesis is kept in the message."""

    name = "sphinx_wer"
    direction = -1
    unit = "ratio"
    _measure: Callable = staticmethod(recognition.wer)

    def score(self, utt_id, audio_path, start, end, transcription, language) -> Score:
        audio = self._audio(audio_path, start, end)
        result: list[recognition.Recognition] = []

        def compute() -> float:
            result.append(self._measure(audio, transcription, language, self.models))
            return result[0].rate

        score = guarded(compute)
        if score.status == OK and result:
            return Score(score.value, OK, result[0].hypothesis)
        return score


class SphinxPEREvaluator(SphinxWEREvaluator):
    """Phone error rate of phone recognition against the dictionary pronunciation."""

    name = "sphinx_per"
    _measure = staticmethod(recognition.per)


class SphinxGOPEvaluator(_SphinxEvaluator):
    """Goodness of pronunciation: forced alignment against the free phone loop (nats/frame)."""

    name = "sphinx_gop"
    unit = "nats/frame"

    def score(self, utt_id, audio_path, start, end, transcription, language) -> Score:
        audio = self._audio(audio_path, start, end)
        return guarded(lambda: recognition.gop(audio, transcription, language, self.models))


class WPMEvaluator(ReferenceTxtEvaluator):
    """Words per minute of the transcription over the utterance's (trimmed) duration; Mandarin
    counts characters (:func:`pathbench_flow.common.transcripts.count_words`)."""

    name = "wpm"
    unit = "words/min"
    trimmable = True

    def _score_audio_text(self, audio: np.ndarray, transcription: str, language: str) -> float:
        n_words = count_words(transcription, language)
        return wpm(n_words, len(audio) / SAMPLE_RATE)
