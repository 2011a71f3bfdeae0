"""PocketSphinx decoders and the alignment helpers shared by trimming and the recognition measures.

Why one module: the trimmer (:mod:`pathbench_flow.trimming.forced_alignment`) and the measures
(:mod:`pathbench_flow.measures.recognition`) drive the same English acoustic model, dictionary and
language models, which ship inside the pocketsphinx 5.x wheel (so everything runs offline).
Building a decoder reads those files (about half a second each), so a job builds each decoder
once, on first use, through :class:`SphinxModels`, and reuses it for every utterance; :func:`decode`
resets the state a decoder carries between utterances, so no value depends on the utterances
decoded before it in the job.

Out-of-vocabulary rule: a word missing from the pronunciation dictionary (CMUdict) is not
guessed. Letter-to-sound rules for English are unreliable enough to corrupt exactly the phone
sequences these measures compare, so the utterance fails with ``NoScore("oov", ...)`` naming
the missing words, and the trimmer records ``oov_fallback``.

Score units: PocketSphinx computes acoustic scores as integers in log base 1.0001 (``logbase``)
and, inside the search, shifts them right by ``SENSCR_SHIFT = 10`` bits; the per-segment and
per-phone scores it reports are in these shifted units, so one unit is ``2**10 * ln(1.0001)``
(about 0.1024) nats. :data:`NATS_PER_UNIT` converts them to natural-log units.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.languages import ENGLISH
from pathbench_flow.common.status import OOV, NoScore

if TYPE_CHECKING:  # imported where models are built: reading stored trims never needs it
    from pocketsphinx import Decoder

FRAME_S = 0.01
"""Frame step of PocketSphinx features (its default ``frate`` of 100 frames per second)."""

WINDOW_S = 0.025625
"""Analysis window of one frame (PocketSphinx's default ``wlen``)."""

SENSCR_SHIFT = 10
LOG_BASE = 1.0001
NATS_PER_UNIT = (1 << SENSCR_SHIFT) * math.log(LOG_BASE)
"""Natural-log value of one unit of the (shifted) acoustic scores PocketSphinx reports."""

WIDE_BEAMS = {"beam": 1e-300, "wbeam": 1e-300, "pbeam": 1e-300}
"""Beams for forced alignment and the free phone loop.

The default beams (1e-48) fail on clean synthetic speech ("Final result does not match the
grammar") and 1e-80 still fails on speech at 0 dB SNR; at 1e-300 the search keeps practically
every path of the (small) alignment grammar, which is what forced alignment needs, and costs
no measurable time because the grammar is linear.
"""

ALIGN_CONFIG = {"bestpath": False, **WIDE_BEAMS}
"""``bestpath`` is off: its lattice pass was seen to drop the last words of a 14 s passage
without an error, and the first-pass segmentation of an alignment grammar is the answer."""

_VARIANT = re.compile(r"\(\d+\)$")
_STRESS = re.compile(r"\d+$")
_NOT_WORD = re.compile(r"[^\w']+")


def is_english(language: str) -> bool:
    """True for ``en`` and any regional variant (``en-US``, ``en_GB``): the models are US English,
    which is the closest available model for every English variety."""
    return re.split(r"[-_]", language.strip().lower(), maxsplit=1)[0] == ENGLISH


def is_filler(word: str) -> bool:
    """Silence and noise (``<sil>``, ``<s>``, ``[NOISE]``, ``+SPN+``, ``SIL``) are not speech."""
    return word.startswith(("<", "[", "+")) or word == "SIL"


def base_word(word: str) -> str:
    """Dictionary headword of a segment: ``the(2)`` names the second pronunciation of ``the``."""
    return _VARIANT.sub("", word)


def dictionary_words(transcription: str) -> list[str]:
    """Words of a transcription spelled as CMUdict spells them.

    Unlike :func:`~pathbench_flow.common.transcripts.clean_text` this keeps word-internal
    apostrophes (CMUdict has
    ``don't`` and ``i'm``; ``dont`` is missing and ``im`` is a different word) and splits at
    hyphens and other punctuation, because a speaker says both parts of ``well-known``.
    """
    tokens = _NOT_WORD.sub(" ", transcription.lower().replace("\u2019", "'")).split()
    return [word for token in tokens if (word := token.strip("'"))]


def to_pcm16(audio: np.ndarray) -> bytes:
    """PocketSphinx reads 16-bit PCM; clipping first keeps loud float samples from wrapping."""
    scaled = np.round(np.clip(audio, -1.0, 1.0) * 32767.0)
    return scaled.astype("<i2").tobytes()


@dataclass(frozen=True)
class WordSegment:
    """One segment of a word alignment; frames are PocketSphinx frames, ``end_frame`` inclusive."""

    word: str
    start_frame: int
    end_frame: int
    score: int


@dataclass(frozen=True)
class PhoneSegment:
    """One phone of a phone-level alignment, with the scored part of it.

    ``scored_frames`` can be fewer than ``n_frames``: PocketSphinx's state alignment never
    assigns a score to the very first HMM state of an utterance (its backtrace stops there and
    leaves 0), so those frames are left out of ``score`` and ``scored_frames``.
    """

    phone: str
    word: str
    start_frame: int
    n_frames: int
    score: int
    scored_start: int
    scored_frames: int


class AlignmentError(RuntimeError):
    """The decoder found no alignment of the transcription, or one that skips words."""


def frames_to_span(start_frame: int, end_frame: int) -> tuple[float, float]:
    """Seconds covered by frames ``start_frame..end_frame`` (inclusive), centred on the windows.

    A frame stands for its analysis window, centred ``WINDOW_S / 2`` after the frame's first
    sample; a run of frames covers half a frame step either side of its first and last centre.
    """
    centre = WINDOW_S / 2
    return (
        max(0.0, start_frame * FRAME_S + centre - FRAME_S / 2),
        end_frame * FRAME_S + centre + FRAME_S / 2,
    )


def pronunciation(decoder: Decoder, word: str) -> list[str] | None:
    """First dictionary pronunciation of ``word`` as phones without stress digits, or None."""
    phones = decoder.lookup_word(word)
    if phones is None:
        return None
    return [_STRESS.sub("", phone) for phone in phones.split()]


def check_vocabulary(decoder: Decoder, words: list[str]) -> None:
    """Raise ``NoScore("oov")`` naming every word the dictionary lacks (the module's OOV rule)."""
    missing = sorted({word for word in words if decoder.lookup_word(word) is None})
    if missing:
        raise NoScore(OOV, "not in the pronunciation dictionary: " + ", ".join(missing))


def decode(decoder: Decoder, pcm: bytes) -> None:
    """Run the active search over one whole utterance, from the state of a newly built decoder.

    The front end carries state from one utterance to the next, and ``start_utt`` does not
    reset it: noise removal (``remove_noise``, switched on by the model's ``feat.params``, which
    overrides the decoder's own arguments) tracks the noise spectrum frame by frame, so
    without a reset each utterance starts from the estimate at the end of the previous one. Its
    features, and every alignment, score and hypothesis, then depend on what the decoder
    decoded before: the same recording decoded three times gave three different scores, and a
    value depended on the other utterances of its job. ``reinit_feat`` rebuilds the front end
    and feature computation as a new decoder has them (about 50 microseconds; building a new
    decoder takes 0.1-0.4 s). Resetting before every pass, not every utterance, also gives the
    passes over one utterance (alignment, phone alignment, phone loop) identical features,
    which comparing their scores assumes.

    ``full_utt=True`` lets the decoder compute the cepstral mean over the whole utterance
    (the model's batch CMN) instead of a running estimate that is wrong at the start.
    """
    decoder.reinit_feat()
    decoder.start_utt()
    decoder.process_raw(pcm, full_utt=True)
    decoder.end_utt()


def align_words(decoder: Decoder, pcm: bytes, words: list[str]) -> list[WordSegment]:
    """Force-align ``words`` (all in the dictionary) to the audio; silences are segments too.

    Raises :class:`AlignmentError` when the search ends outside the grammar (``seg()`` is then
    empty) or when the aligned words differ from ``words``.
    """
    try:
        decoder.set_align_text(" ".join(words))
        decode(decoder, pcm)
    except RuntimeError as error:
        raise AlignmentError(f"pocketsphinx could not align: {error}") from error
    found = decoder.seg()
    segments = [
        WordSegment(seg.word, seg.start_frame, seg.end_frame, decoder.logmath.log(seg.ascore))
        for seg in (found or [])
    ]
    aligned = [base_word(seg.word) for seg in segments if not is_filler(seg.word)]
    if aligned != words:
        raise AlignmentError(
            f"aligned {len(aligned)} of {len(words)} words"
            if aligned
            else "the search ended outside the alignment grammar"
        )
    return segments


def align_phones(decoder: Decoder, pcm: bytes, words: list[str]) -> list[PhoneSegment]:
    """Word alignment, then a second pass for phone and state boundaries and scores."""
    align_words(decoder, pcm, words)
    decoder.set_alignment()
    decode(decoder, pcm)
    alignment = decoder.get_alignment()
    if alignment is None:
        raise AlignmentError("pocketsphinx returned no phone alignment")
    phones = []
    first_state = True
    for word in alignment:
        for phone in word:
            states = list(phone)
            if first_state:
                # The utterance's first state is never scored (see PhoneSegment).
                states = states[1:]
                first_state = False
            phones.append(
                PhoneSegment(
                    phone=phone.name,
                    word=base_word(word.name),
                    start_frame=phone.start,
                    n_frames=phone.duration,
                    score=sum(state.score for state in states),
                    scored_start=states[0].start if states else phone.start + phone.duration,
                    scored_frames=sum(state.duration for state in states),
                )
            )
    return phones


def phone_loop_frame_scores(decoder: Decoder, pcm: bytes, search: str) -> np.ndarray:
    """Per-frame acoustic score of the best free phone-loop path (shifted log units).

    Each phone segment's acoustic score (language-model or insertion score excluded) is
    spread evenly over its frames, so a span of frames can be compared with a forced alignment.
    """
    decoder.activate_search(search)
    decode(decoder, pcm)
    scores = np.zeros(decoder.n_frames())
    for seg in decoder.seg() or []:
        scores[seg.start_frame : seg.end_frame + 1] = decoder.logmath.log(seg.ascore) / (
            seg.end_frame - seg.start_frame + 1
        )
    return scores


def relative_score(score: int, start_frame: int, n_frames: int, free: np.ndarray) -> float:
    """Nats per frame by which an aligned span's ``score`` falls short of the free phone loop.

    0 when the transcribed units fit the frames as well as the best unconstrained phones;
    negative when they fit worse. ``free`` comes from :func:`phone_loop_frame_scores`.
    """
    shortfall = score - free[start_frame : start_frame + n_frames].sum()
    return float(shortfall / n_frames * NATS_PER_UNIT)


class SphinxModels:
    """The PocketSphinx decoders of one job, each built on first use and then reused.

    Decoders differ in search settings, not models, and PocketSphinx fixes most settings when
    a decoder is built, so each use gets its own:

    - :attr:`aligner`: forced alignment for trimming (wide beams, no lattice pass), plus an
      unconstrained phone loop (the ``free_loop`` search) to check alignments against.
    - :attr:`scorer`: the same, but scoring every senone in every frame (``compallsen``).
      PocketSphinx normalises each frame's senone scores by the best *evaluated* senone;
      evaluating all of them gives alignment and phone loop one common reference, which an
      exact comparison (goodness of pronunciation) needs. Alignment is about three times
      slower, too slow for trimming, where a rough comparison suffices.
    - :attr:`word_recognizer`: recognition with the default US English trigram LM.
    - :attr:`phone_recognizer`: phone recognition with the bundled phone LM.
    """

    FREE_LOOP = "free_loop"

    def __init__(self, log_level: str = "FATAL") -> None:
        # FATAL by default: failed alignments are expected and reported through statuses, and
        # PocketSphinx would otherwise log an ERROR line for each of them.
        self.log_level = log_level

    def _decoder(self, **settings: object) -> Decoder:
        from pocketsphinx import Decoder

        return Decoder(samprate=SAMPLE_RATE, loglevel=self.log_level, **settings)

    def _aligning_decoder(self, **settings: object) -> Decoder:
        decoder = self._decoder(**ALIGN_CONFIG, **settings)
        # No phone LM: every phone may follow every other with equal probability.
        decoder.add_allphone_file(self.FREE_LOOP, None)
        return decoder

    @cached_property
    def aligner(self) -> Decoder:
        """Forced alignment and free phone loop for trimming (see the class docstring)."""
        return self._aligning_decoder()

    @cached_property
    def scorer(self) -> Decoder:
        """Forced alignment and free phone loop with every senone scored in every frame."""
        return self._aligning_decoder(compallsen=True)

    @cached_property
    def word_recognizer(self) -> Decoder:
        """Large-vocabulary recognition with the default US English LM and settings, except
        at most 3000 active HMMs per frame (default 30000).

        On speech the models fit badly (noise, dysarthria) the search otherwise keeps so many
        hypotheses alive that decoding drops below real time; the cap kept the word error rate
        of clean synthetic speech unchanged (0.42) and made 0 dB SNR speech five times faster.
        """
        return self._decoder(maxhmmpf=3000)

    @cached_property
    def phone_recognizer(self) -> Decoder:
        """Phone recognition with the phone trigram LM.

        Language weight 2 and beams of 1e-20 are CMU Sphinx's documented settings for phone
        decoding (the word-decoding weight 6.5 lets the phone LM override the acoustics).
        """
        from pocketsphinx import get_model_path

        phone_lm = get_model_path("en-us/en-us-phone.lm.bin")
        return self._decoder(allphone=phone_lm, lw=2.0, beam=1e-20, pbeam=1e-20)
