"""Recognition-based intelligibility measures for English: WER, PER and GOP with PocketSphinx.

Why these: an automatic recogniser stands in for a listener. The less intelligible the
speech, the more words (WER) and phones (PER) a recogniser trained on typical speech gets
wrong, and the worse the transcribed phones fit their acoustic models compared with the best
fitting phones (GOP). They need no reference speakers, only the transcription.

Each measure takes audio (mono float at :data:`pathbench_flow.SAMPLE_RATE`), the transcription, the
utterance's language and the job's :class:`pathbench_flow.trimming.sphinx.SphinxModels`. The models
are US English only: any other language raises ``NoScore("unsupported_language")``.
Utterances shorter than :data:`MIN_DURATION_S` raise ``NoScore("too_short")``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.status import ERROR, TOO_SHORT, UNSUPPORTED_LANGUAGE, NoScore
from pathbench_flow.common.transcripts import clean_text, edit_distance
from pathbench_flow.trimming.sphinx import (
    AlignmentError,
    SphinxModels,
    align_phones,
    check_vocabulary,
    decode,
    dictionary_words,
    is_english,
    is_filler,
    phone_loop_frame_scores,
    pronunciation,
    relative_score,
    to_pcm16,
)

MIN_DURATION_S = 0.1
"""Ten PocketSphinx frames: below this no word (three frames per phone) can be recognised."""


@dataclass(frozen=True)
class Recognition:
    """An error rate with the recogniser output it was computed from, kept for inspection."""

    rate: float
    hypothesis: str
    n_reference: int


def _check_input(audio: np.ndarray, language: str) -> None:
    if not is_english(language):
        raise NoScore(UNSUPPORTED_LANGUAGE, f"PocketSphinx models are US English, not {language!r}")
    duration = len(audio) / SAMPLE_RATE
    if duration < MIN_DURATION_S:
        raise NoScore(TOO_SHORT, f"{duration:.3f} s is shorter than {MIN_DURATION_S} s")


def _require_words(words: list[str]) -> None:
    if not words:
        raise NoScore(ERROR, "the transcription has no words")


def _rate(reference: list[str], hypothesis: list[str]) -> Recognition:
    return Recognition(
        edit_distance(reference, hypothesis) / len(reference), " ".join(hypothesis), len(reference)
    )


def wer(audio: np.ndarray, transcription: str, language: str, models: SphinxModels) -> Recognition:
    """Word error rate of PocketSphinx's default US English recogniser.

    Edit distance between the words of the cleaned transcription and of the cleaned
    hypothesis, divided by the number of transcription words (so it can exceed 1 when the
    recogniser inserts words). Both sides go through
    :func:`~pathbench_flow.common.transcripts.clean_text`, so
    case and punctuation never count as errors.
    """
    _check_input(audio, language)
    reference = clean_text(transcription).split()
    _require_words(reference)
    decoder = models.word_recognizer
    decode(decoder, to_pcm16(audio))
    hypothesis = decoder.hyp()
    return _rate(reference, clean_text(hypothesis.hypstr if hypothesis else "").split())


def per(audio: np.ndarray, transcription: str, language: str, models: SphinxModels) -> Recognition:
    """Phone error rate of phone recognition with the bundled phone trigram LM.

    The reference is the first CMUdict pronunciation of every transcription word, stress
    digits removed; silence and noise units are dropped from the hypothesis. Rate = phone edit
    distance / reference phones. Words missing from the dictionary raise ``NoScore("oov")``.
    """
    _check_input(audio, language)
    decoder = models.phone_recognizer
    words = dictionary_words(transcription)
    _require_words(words)
    check_vocabulary(decoder, words)
    reference = [phone for word in words for phone in pronunciation(decoder, word) or []]
    decode(decoder, to_pcm16(audio))
    hypothesis = decoder.hyp()
    phones = (hypothesis.hypstr if hypothesis else "").split()
    return _rate(reference, [phone for phone in phones if not is_filler(phone)])


def gop(audio: np.ndarray, transcription: str, language: str, models: SphinxModels) -> float:
    """Goodness of pronunciation of the transcription: higher is more precise.

    Two searches over the utterance with :attr:`SphinxModels.scorer`, which scores every
    senone in every frame, so that both express each frame's log-likelihoods relative to the
    same best senone (a reference that then cancels in the difference):

    1. Forced alignment of the transcription's dictionary pronunciation gives each phone ``p``
       its frames and its acoustic score ``A_p`` (log-likelihood of the frames under the
       aligned context-dependent HMM states, transitions included).
    2. An unconstrained phone loop (any context-independent phone may follow any, uniform
       transitions) finds the best free path; each of its segments' acoustic scores is spread
       evenly over its frames, giving ``f_t`` for every frame ``t``.

    Then, over the ``N_p`` scored frames of every non-silence phone,
    ``gop_p = (A_p - sum_t f_t) / N_p * NATS_PER_UNIT`` and ``gop = mean_p gop_p``.

    Units: PocketSphinx scores are log base 1.0001 values shifted right by 10 bits
    (``SENSCR_SHIFT``); ``NATS_PER_UNIT = 2**10 * ln(1.0001)`` converts them, so ``gop`` is
    in natural-log units (nats) per frame. 0 means the transcribed phones fit as well as the
    best free phones; more negative is worse. Because the alignment uses context-dependent
    triphones and the free loop context-independent phones, well pronounced phones can score a
    little above 0. The utterance's first HMM state is left out because PocketSphinx never
    scores it (see :class:`pathbench_flow.trimming.sphinx.PhoneSegment`).

    Raises ``NoScore("oov")`` for words missing from the dictionary and ``NoScore("error")``
    when the forced alignment fails.
    """
    _check_input(audio, language)
    decoder = models.scorer
    words = dictionary_words(transcription)
    _require_words(words)
    check_vocabulary(decoder, words)
    pcm = to_pcm16(audio)
    try:
        phones = align_phones(decoder, pcm, words)
    except AlignmentError as error:
        raise NoScore(ERROR, str(error)) from error
    free = phone_loop_frame_scores(decoder, pcm, models.FREE_LOOP)
    per_phone = [
        relative_score(p.score, p.scored_start, p.scored_frames, free)
        for p in phones
        if not is_filler(p.phone) and p.scored_frames > 0
    ]
    if not per_phone:
        raise NoScore(ERROR, "no speech phone was aligned")
    return float(np.mean(per_phone))
