"""Reference-free signal measures: one value per utterance from its audio alone.

Measures PathBench also computes take a ``compat`` option. ``compat: pathbench`` (the default)
reproduces PathBench's value, including its choices that this project would make differently;
``compat: none`` selects this project's variant where one exists. Where the two are different
procedures rather than different constants, each has its own evaluator name
(``praat_speech_rate`` / ``speech_rate``, ``vsa`` / ``vsa_corners``).

Unvoiced input follows one rule for every pitch measure (``std_pitch``, ``f0_range``): status
``unvoiced``, with NaN as the value, except in PathBench-compatible mode, where the value is
the 0.0 PathBench assigns (still with status ``unvoiced``, so the substitution is visible).
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from pathbench_flow import tracks
from pathbench_flow.common.lazy import lazy_module
from pathbench_flow.common.status import UNVOICED
from pathbench_flow.evaluators.base import ReferenceFreeEvaluator, Score
from pathbench_flow.evaluators.options import OneOf, checked

# Loaded when a job first scores with them: reading the classes' metadata needs none of them.
cepstral = lazy_module("pathbench_flow.measures.cepstral")
pitch = lazy_module("pathbench_flow.measures.pitch")
praat_speech_rate = lazy_module("pathbench_flow.measures.praat_speech_rate")
speech_rate = lazy_module("pathbench_flow.measures.speech_rate")
wada_snr = lazy_module("pathbench_flow.measures.wada_snr")

PATHBENCH = "pathbench"
NONE = "none"
Compat = Annotated[str, OneOf(PATHBENCH, NONE)]
"""The ``compat`` option of a measure with both PathBench's value and this project's."""


def pathbench_only(variant: str) -> OneOf:
    """The ``compat`` values of a measure that exists only in PathBench's form: the message
    for another value names ``variant``, the evaluator holding this project's."""
    return OneOf(PATHBENCH, hint=f"this project's variant is the evaluator {variant!r}")


def pathbench_zero_when_unvoiced(score: Score) -> Score:
    """PathBench's value for too little voicing: 0.0, keeping status ``unvoiced``."""
    if score.value is None and score.status == UNVOICED:
        return Score(0.0, UNVOICED, f"{score.message}; scored 0.0 as PathBench does")
    return score


class CPPEvaluator(ReferenceFreeEvaluator):
    """Cepstral peak prominence as PathBench computes it (large values by construction)."""

    name = "cpp"
    unit = "a.u."
    pathbench_compatible = True

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        return cepstral.cpp(audio, fs)


class CPPSEvaluator(ReferenceFreeEvaluator):
    """Praat's smoothed CPP; ``implementation="praat"`` runs Praat itself (about 100× slower)."""

    name = "cpps"
    unit = "dB"
    pathbench_compatible = True

    @classmethod
    def uses_tracks(cls, options: dict) -> tuple[str, ...]:
        """The fast implementation reads the shared ``cpps`` track; Praat's runs itself."""
        return ("cpps",) if options.get("implementation", "fast") == "fast" else ()

    @checked
    def __init__(self, implementation: Annotated[str, OneOf("fast", "praat")] = "fast") -> None:
        self._measure = tracks.cpps if implementation == "fast" else cepstral.cpps_praat

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        return self._measure(audio, fs)


class WadaSNREvaluator(ReferenceFreeEvaluator):
    """Waveform-amplitude-distribution SNR (Kim & Stern 2008); noisier recordings score lower.

    ``compat="pathbench"``: Kim & Stern's published G table read as PathBench reads it, with
    float32 statistics. ``compat="none"``: the G table derived from the model by integration.
    """

    name = "wada_snr"
    unit = "dB"
    pathbench_compatible = True

    @checked
    def __init__(self, compat: Compat = PATHBENCH) -> None:
        self.compat = compat
        self.pathbench_compatible = compat == PATHBENCH
        self._measure = (
            wada_snr.wada_snr_pathbench if self.pathbench_compatible else wada_snr.wada_snr
        )

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        return self._measure(audio, fs)


class StdPitchEvaluator(ReferenceFreeEvaluator):
    """Pitch variability in semitones; monotone speech (low values) is less intelligible.

    ``compat="pathbench"``: semitones as 39.86·log10(F0), and 0.0 (status ``unvoiced``) for
    fewer than two voiced frames. ``compat="none"``: the exact 12/log10(2) and NaN.
    """

    name = "std_pitch"
    shared_tracks = ("pitch",)
    unit = "st"
    pathbench_compatible = True

    @checked
    def __init__(self, compat: Compat = PATHBENCH) -> None:
        self.compat = compat
        self.pathbench_compatible = compat == PATHBENCH
        self._per_decade = (
            pitch.PATHBENCH_SEMITONES_PER_DECADE
            if self.pathbench_compatible
            else pitch.SEMITONES_PER_DECADE
        )

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        return pitch.std_pitch(audio, fs, self._per_decade)

    def score_loaded(self, audio: np.ndarray) -> Score:
        score = super().score_loaded(audio)
        return pathbench_zero_when_unvoiced(score) if self.pathbench_compatible else score


class SpeechRateEvaluator(ReferenceFreeEvaluator):
    """Syllable nuclei per second, this project's variant of de Jong & Wempe (2009).

    Differs from PathBench's ``praat_speech_rate`` on purpose: one shared voicing decision
    (Praat's default pitch analysis), a dip searched before each peak (so the last syllable
    counts), and frame-level peak picking.
    """

    name = "speech_rate"
    shared_tracks = ("pitch",)
    unit = "syll/s"

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        return speech_rate.speech_rate(audio, fs)


class PraatSpeechRateEvaluator(ReferenceFreeEvaluator):
    """Syllable nuclei per second by de Jong & Wempe's Praat procedure, as PathBench runs it.

    Only ``compat="pathbench"`` exists; the project's own variant is ``speech_rate``.
    """

    name = "praat_speech_rate"
    unit = "syll/s"
    pathbench_compatible = True

    @checked
    def __init__(self, compat: Annotated[str, pathbench_only("speech_rate")] = PATHBENCH) -> None:
        self.compat = compat

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        return praat_speech_rate.praat_speech_rate(audio, fs)
