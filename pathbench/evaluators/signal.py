"""Reference-free signal measures: one value per utterance from its audio alone."""

from __future__ import annotations

import numpy as np

from pathbench.evaluator import ReferenceFreeEvaluator
from pathbench.measures import cepstral, pitch, speech_rate, wada_snr


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

    def __init__(self, implementation: str = "fast") -> None:
        if implementation not in ("fast", "praat"):
            raise ValueError("cpps implementation must be 'fast' or 'praat'")
        self._measure = cepstral.cpps if implementation == "fast" else cepstral.cpps_praat

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        return self._measure(audio, fs)


class WadaSNREvaluator(ReferenceFreeEvaluator):
    """Waveform-amplitude-distribution SNR (Kim & Stern 2008); noisier recordings score lower."""

    name = "wada_snr"
    unit = "dB"

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        return wada_snr.wada_snr(audio, fs)


class StdPitchEvaluator(ReferenceFreeEvaluator):
    """Pitch variability in semitones; monotone speech (low values) is less intelligible."""

    name = "std_pitch"
    unit = "st"
    pathbench_compatible = True

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        return pitch.std_pitch(audio, fs)


class SpeechRateEvaluator(ReferenceFreeEvaluator):
    """Syllable nuclei per second (de Jong & Wempe 2009); slow speech is less intelligible."""

    name = "speech_rate"
    unit = "syll/s"

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        return speech_rate.speech_rate(audio, fs)
