"""Speech rate from syllable nuclei, after de Jong & Wempe (2009).

De Jong, N. H. & Wempe, T. (2009), "Praat script to detect syllable nuclei and measure speech
rate automatically", Behavior Research Methods 41(2), 385-390. A syllable nucleus is a peak of
the intensity contour that is loud enough (above a silence threshold set relative to the
loudest part of the recording), separated from the previous peak by a dip, and voiced. Speech
rate is the number of nuclei over the total duration, pauses included.

This is the ``speech_rate`` evaluator, this project's variant; PathBench's Praat procedure is
:mod:`pathbench_flow.measures.praat_speech_rate` (``praat_speech_rate``).
"""

from __future__ import annotations

import numpy as np
import parselmouth

from pathbench_flow import tracks
from pathbench_flow.measures.pitch import pitch_track, voicing_at

INTENSITY_MIN_PITCH_HZ = 50.0
"""Minimum pitch for Praat's intensity analysis (sets a 64 ms window, 16 ms step)."""

SILENCE_DB = -25.0
"""Silence threshold relative to the 99th percentile of intensity (the paper's default)."""

LOUD_QUANTILE = 0.99
"""Quantile taken as "maximum" intensity, so that one click does not raise the threshold."""

MIN_DIP_DB = 2.0
"""A peak counts only if intensity dipped at least this far below it since the previous peak."""

MIN_PAUSE_S = 0.3
"""Shortest silent interval counted as a pause (the paper's default)."""


def praat_intensity(audio: np.ndarray, fs: int) -> tuple[np.ndarray, np.ndarray]:
    """Frame times (s) and intensity (dB) of Praat's To Intensity with a 50 Hz pitch floor.

    The analysis of the shared track ``intensity`` (:mod:`pathbench_flow.tracks`). Praat's default
    time step and mean subtraction are kept: only intensity differences matter here. A signal
    shorter than one analysis window has no frame (empty arrays) rather than an error.
    """
    sound = parselmouth.Sound(np.asarray(audio, dtype=np.float64), sampling_frequency=fs)
    try:
        intensity = sound.to_intensity(minimum_pitch=INTENSITY_MIN_PITCH_HZ)
    except parselmouth.PraatError:
        return np.empty(0), np.empty(0)
    return np.asarray(intensity.xs()), np.asarray(intensity.values[0])


def _intensity_db(audio: np.ndarray, fs: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Frame times and intensity (dB) through the shared track, or None when too short.

    Nucleus detection and the pause fraction of one utterance read one analysis, so the
    open-set features, which take both, run it once.
    """
    times, db = tracks.value(tracks.INTENSITY, audio, fs)
    if db.size < 3:
        return None
    return times, db


def _silence_threshold(db: np.ndarray) -> float:
    return float(np.quantile(db, LOUD_QUANTILE) + SILENCE_DB)


def _candidate_peaks(db: np.ndarray, threshold: float) -> np.ndarray:
    """Indices of local intensity maxima above the silence threshold.

    A plateau counts once, at its first frame (strict rise before, no rise after).
    """
    inner = db[1:-1]
    is_peak = (inner > db[:-2]) & (inner >= db[2:]) & (inner > threshold)
    return np.flatnonzero(is_peak) + 1


def _dipped(db: np.ndarray, peaks: np.ndarray) -> np.ndarray:
    """Mask of peaks preceded by a dip of at least MIN_DIP_DB since the previous peak.

    For the first peak the dip is searched from the start of the signal, so an utterance
    starting in silence has its first syllable counted.
    """
    starts = np.concatenate(([0], peaks[:-1]))
    # minimum.reduceat over [start_k, peak_k) for every k at once; segments are never empty
    # because peaks are strictly increasing and the first peak index is at least 1.
    bounds = np.column_stack((starts, peaks)).ravel()
    dips = np.minimum.reduceat(db, bounds)[::2]
    return db[peaks] - dips >= MIN_DIP_DB


def syllable_nuclei(audio: np.ndarray, fs: int) -> np.ndarray:
    """Times (s) of detected syllable nuclei; empty when fewer than two candidate peaks.

    A single intensity peak gives no evidence of syllabic rhythm, so such recordings count as
    having no nuclei, which makes their speech rate 0.0 as the benchmark specification asks.
    """
    contour = _intensity_db(audio, fs)
    if contour is None:
        return np.empty(0)
    times, db = contour
    peaks = _candidate_peaks(db, _silence_threshold(db))
    if peaks.size < 2:
        return np.empty(0)
    peaks = peaks[_dipped(db, peaks)]
    peak_times = times[peaks]
    return peak_times[voicing_at(peak_times, *pitch_track(audio, fs))]


def speech_rate(audio: np.ndarray, fs: int) -> float:
    """Syllable nuclei per second of total duration (pauses included); 0.0 if none found."""
    duration = len(audio) / fs
    if duration == 0:
        return 0.0
    return syllable_nuclei(audio, fs).size / duration


def pause_fraction(audio: np.ndarray, fs: int) -> float:
    """Fraction of the duration spent in silent intervals of at least MIN_PAUSE_S.

    Silence uses the same threshold as nucleus detection, so pauses and syllables are
    defined consistently. A signal too short for the intensity analysis cannot contain a pause
    and gives 0.0.
    """
    contour = _intensity_db(audio, fs)
    if contour is None:
        return 0.0
    times, db = contour
    silent = np.concatenate(([False], db < _silence_threshold(db), [False]))
    edges = np.flatnonzero(np.diff(silent.astype(np.int8)))
    run_frames = edges[1::2] - edges[::2]
    step = times[1] - times[0]
    run_seconds = run_frames * step
    return float(run_seconds[run_seconds >= MIN_PAUSE_S].sum() / (len(audio) / fs))
