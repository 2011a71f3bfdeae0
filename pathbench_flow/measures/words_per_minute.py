"""Words per minute: the reference transcription's word count over the audio's duration.

No recogniser and any language: the words are counted in the transcription
(:func:`pathbench_flow.common.transcripts.count_words`, characters for Mandarin), so only the
duration comes from the audio, trimmed or not as the evaluator variant says.
"""

from __future__ import annotations

from pathbench_flow.common.status import TOO_SHORT, NoScore

MIN_DURATION_S = 0.1
"""Shorter utterances raise ``NoScore("too_short")``: the limit of the recognition measures
(:data:`pathbench_flow.measures.recognition.MIN_DURATION_S`), so every reference-text measure
leaves out the same utterances."""


def wpm(n_words: int, duration_s: float) -> float:
    """Speaking rate in words per minute over the (trimmed) utterance duration."""
    if n_words < 0:
        raise ValueError(f"negative word count {n_words}")
    if duration_s < MIN_DURATION_S:
        raise NoScore(TOO_SHORT, f"{duration_s:.3f} s is shorter than {MIN_DURATION_S} s")
    return 60.0 * n_words / duration_s
