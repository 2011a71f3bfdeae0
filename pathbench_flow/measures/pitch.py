"""Fundamental-frequency measures built on one Praat pitch analysis.

Every measure that needs voicing or F0 (pitch variability, F0 range, voiced-peak selection in
speech rate, voiced-frame selection in both vowel space areas, the open-set features) goes
through :func:`pitch_track`, so that all of them agree on which frames are voiced, and the
analysis of an utterance runs once however many measures read it.

Unvoiced input follows one rule in every pitch measure: too little voicing (fewer than two
voiced frames for a standard deviation, none for a range) raises :class:`NoScore` with status
``unvoiced``. The evaluators record that as NaN, or, in PathBench-compatible mode, as the 0.0
PathBench assigns, still with status ``unvoiced`` (see :mod:`pathbench_flow.evaluators.signal`).
"""

from __future__ import annotations

import numpy as np
import parselmouth

from pathbench_flow import tracks
from pathbench_flow.common.status import TOO_SHORT, UNVOICED, NoScore


def pitch_track(audio: np.ndarray, fs: int) -> tuple[np.ndarray, np.ndarray]:
    """Frame times (s) and F0 (Hz, 0 where unvoiced) of :func:`praat_pitch`, read-only.

    Through the shared track ``pitch`` (:mod:`pathbench_flow.tracks`): each distinct audio is
    analysed once per process, or not at all when a track file of the workflow holds it.
    """
    times, f0 = tracks.value(tracks.PITCH, audio, fs)
    return times, f0


def praat_pitch(audio: np.ndarray, fs: int) -> tuple[np.ndarray, np.ndarray]:
    """Frame times (s) and F0 (Hz, 0 where unvoiced) from Praat's default pitch analysis.

    Praat's defaults (autocorrelation, floor 75 Hz, ceiling 600 Hz, time step 0.75 / floor =
    10 ms) are what PathBench used, so values stay comparable with its published numbers.
    Praat refuses signals shorter than its analysis window; such a signal has no voiced frame
    rather than an error, because "too short to find voicing" and "unvoiced" mean the same to
    every caller.
    """
    sound = parselmouth.Sound(np.asarray(audio, dtype=np.float64), sampling_frequency=fs)
    try:
        pitch = sound.to_pitch()
    except parselmouth.PraatError:
        return np.empty(0), np.empty(0)
    return np.asarray(pitch.xs()), np.asarray(pitch.selected_array["frequency"])


def voicing_at(times: np.ndarray, frame_times: np.ndarray, f0: np.ndarray) -> np.ndarray:
    """Whether the pitch frame nearest to each of ``times`` is voiced.

    Lets analyses on other frame grids (intensity peaks, formant frames) ask the one pitch
    track about voicing instead of running their own voicing decision.
    """
    if f0.size == 0:
        return np.zeros(np.shape(times), dtype=bool)
    step = frame_times[1] - frame_times[0] if frame_times.size > 1 else 1.0
    nearest = np.floor((np.asarray(times) - frame_times[0]) / step + 0.5).astype(int)
    return f0[np.clip(nearest, 0, f0.size - 1)] > 0


def voiced_f0(audio: np.ndarray, fs: int) -> np.ndarray:
    """F0 in Hz of the voiced frames only (possibly empty)."""
    f0 = pitch_track(audio, fs)[1]
    return f0[f0 > 0]


SEMITONES_PER_DECADE = 12.0 / np.log10(2.0)
"""Semitones per factor of ten in frequency, 39.863...: st = SEMITONES_PER_DECADE * log10(f)."""

PATHBENCH_SEMITONES_PER_DECADE = 39.86
"""The rounded constant PathBench multiplies log10(F0) by; spreads come out 0.008 % smaller."""


def std_pitch(
    audio: np.ndarray, fs: int, semitones_per_decade: float = SEMITONES_PER_DECADE
) -> float:
    """Population standard deviation of voiced F0 in semitones.

    Semitones make the spread independent of the speaker's register, so a monotonous female
    voice and a monotonous male voice score alike. ``semitones_per_decade`` =
    :data:`PATHBENCH_SEMITONES_PER_DECADE` gives PathBench's value. Fewer than two voiced
    frames have no spread: :class:`NoScore` (``unvoiced``). A clip shorter than Praat's
    analysis window (40 ms at the 75 Hz floor) has no pitch analysis at all: ``too_short``,
    which PathBench also leaves without a value (its ``to_pitch`` raises), whereas it scores
    an analysed but unvoiced clip 0.0.
    """
    times, f0 = pitch_track(audio, fs)
    if times.size == 0:
        raise NoScore(TOO_SHORT, f"{len(audio) / fs * 1000:.1f} ms is shorter than Praat's window")
    f0 = f0[f0 > 0]
    if f0.size < 2:
        raise NoScore(UNVOICED, f"{f0.size} voiced frame(s); a pitch spread needs at least two")
    return float(np.std(semitones_per_decade * np.log10(f0)))


def f0_range(audios: list[np.ndarray], fs: int) -> float:
    """Speaker-level F0 range in Hz: max minus min of voiced F0 pooled over all utterances.

    Pooling before taking the extremes measures the speaker's range, not an average of
    per-utterance ranges, which would shrink with short utterances.
    """
    pooled = np.concatenate([voiced_f0(audio, fs) for audio in audios] or [np.empty(0)])
    if pooled.size == 0:
        raise NoScore(UNVOICED, "no voiced frame in any of the speaker's utterances")
    return float(pooled.max() - pooled.min())
