"""An example third-party evaluator package, registered through the entry point group.

``WordCountEvaluator`` is a deliberately tiny ``ReferenceTxtEvaluator``: it shows the shape a
neural plugin (wav2vec2 articulatory precision, say) would take without needing its model.
"""

from __future__ import annotations

from pathbench_flow.common.audio import load_shared
from pathbench_flow.common.status import TOO_SHORT
from pathbench_flow.evaluators.base import ReferenceTxtEvaluator, Score


class WordCountEvaluator(ReferenceTxtEvaluator):
    """Words per second of audio; fails loudly on utterances whose text says ``boom``."""

    name = "example_words_per_second"
    unit = "words/s"
    languages = ("en",)

    def score(self, utt_id, audio_path, start, end, transcription, language) -> Score:
        if "boom" in transcription.split():
            raise RuntimeError("the example plugin explodes on 'boom'")
        seconds = len(load_shared(audio_path, start, end)) / 16000
        if seconds < 0.1:
            return Score(None, TOO_SHORT, "under 0.1 s")
        return Score(len(transcription.split()) / seconds)
