"""Speech rate by de Jong & Wempe's syllable-nuclei procedure, run as PathBench runs it.

De Jong, N. H. & Wempe, T. (2009), "Praat script to detect syllable nuclei and measure speech
rate automatically", Behavior Research Methods 41(2), 385-390, in the 2010 revision (threshold
from the 0.99 quantile of intensity). PathBench's ``praat_speech_rate`` runs the procedure as
a sequence of Praat commands; this module issues the same commands through parselmouth so
that every number (intensity contour, peak times, dips, voicing) comes from Praat itself:

1. intensity with a 50 Hz pitch floor; the peak threshold is the 0.99 quantile minus 25 dB
   (but not below the minimum intensity);
2. a silences TextGrid (minimum pause 0.3 s, minimum sounding 0.1 s) whose silence threshold
   is the same level expressed relative to the maximum intensity;
3. candidate peaks: the maxima of the intensity contour found by a point process of extrema
   (interpolated with Sinc70, valued with cubic interpolation) that exceed the threshold;
   fewer than two give no nuclei;
4. a peak is kept when intensity falls more than 2 dB below it before the next peak (the
   dip is measured *after* the peak, so the last peak never counts);
5. a kept peak is a nucleus when the pitch (autocorrelation, 30-450 Hz, voicing threshold
   0.25) is defined at its time and it lies in a "sounding" interval.

The rate is nuclei per second of the whole analysed audio, pauses included (PathBench divides
by the total duration of the sound it analyses; for the ``fa`` variant that is the trimmed
audio). :mod:`pathbench_flow.measures.speech_rate` is this project's own variant (``speech_rate``).
"""

from __future__ import annotations

import math

import numpy as np
import parselmouth
from parselmouth.praat import call

from pathbench_flow.common.status import TOO_SHORT, NoScore

INTENSITY_MIN_PITCH_HZ = 50.0
"""Pitch floor of the intensity analysis (64 ms window)."""

SILENCE_DB = -25.0
"""Silence threshold relative to the 0.99 quantile of intensity."""

LOUD_QUANTILE = 0.99
"""Quantile standing for the maximum, so that a single click does not set the threshold."""

MIN_DIP_DB = 2.0
"""Intensity must fall strictly more than this below a peak before the next one."""

MIN_PAUSE_S = 0.3
"""Shortest silent interval of the silences TextGrid."""

MIN_SOUNDING_S = 0.1
"""Shortest sounding interval of the silences TextGrid."""

VOICING = {
    "time_step": 0.02,
    "pitch_floor": 30.0,
    "max_number_of_candidates": 4,
    "very_accurate": False,
    "silence_threshold": 0.03,
    "voicing_threshold": 0.25,
    "octave_cost": 0.01,
    "octave_jump_cost": 0.35,
    "voiced_unvoiced_cost": 0.25,
    "pitch_ceiling": 450.0,
}
"""Praat's "To Pitch (ac)" settings that decide whether a peak is voiced."""

_CUBIC = parselmouth.ValueInterpolation.CUBIC


def _peaks_above(intensity: parselmouth.Intensity, threshold: float) -> list[tuple[float, float]]:
    """(time, dB) of the intensity maxima above ``threshold``, in time order.

    The same Praat queries as the script's loop over points, but the point times come out in
    one Matrix and the values through parselmouth's own binding of "Get value at time": a
    command through ``call`` costs ~70 microseconds of interpreter work, the binding ~1.
    """
    contour = call(call(intensity, "Down to Matrix"), "To Sound (slice)", 1)
    maxima = call(contour, "To PointProcess (extrema)", "Left", "yes", "no", "Sinc70")
    if call(maxima, "Get number of points") == 0:
        return []
    times = call(maxima, "To Matrix").values[0]
    values = [contour.get_value(t, interpolation=_CUBIC) for t in times]
    return [(float(t), v) for t, v in zip(times, values, strict=True) if v > threshold]


def _window_minimum(intensity: parselmouth.Intensity, start: float, end: float) -> float:
    """Praat's "Get minimum" of ``intensity`` between two times, interpolation "None".

    Without interpolation Praat's answer is the smallest frame value whose frame time lies in
    [start, end] (the local minima it scans and the two end frames are all such values), so
    it is found with numpy. A window holding no frame time is left to Praat.
    """
    first = max(1, int(1.0 + math.ceil((start - intensity.x1) / intensity.dx)))
    last = min(intensity.nx, int(1.0 + math.floor((end - intensity.x1) / intensity.dx)))
    if first > last:
        return call(intensity, "Get minimum", start, end, "None")
    return float(np.min(intensity.values[0, first - 1 : last]))


def _dipped(intensity: parselmouth.Intensity, peaks: list[tuple[float, float]]) -> list[float]:
    """Times of the peaks followed by a dip of more than MIN_DIP_DB before the next peak.

    The first peak is compared at its contour value; later peaks at the intensity object's
    cubic value at their time, as the Praat script does.
    """
    kept = []
    level = peaks[0][1]
    for (time, _), (next_time, _) in zip(peaks, peaks[1:], strict=False):
        dip = _window_minimum(intensity, time, next_time)
        if abs(level - dip) > MIN_DIP_DB:
            kept.append(time)
        level = intensity.get_value(next_time, interpolation=_CUBIC)
    return kept


def _nuclei(sound: parselmouth.Sound) -> np.ndarray:
    """Times (s) of the syllable nuclei in ``sound``; see the module docstring for the steps."""
    try:
        intensity = sound.to_intensity(INTENSITY_MIN_PITCH_HZ)
    except parselmouth.PraatError as error:
        raise NoScore(TOO_SHORT, f"too short for Praat's intensity analysis: {error}") from None
    lowest = call(intensity, "Get minimum", 0, 0, "Parabolic")
    highest = call(intensity, "Get maximum", 0, 0, "Parabolic")
    loud = call(intensity, "Get quantile", 0, 0, LOUD_QUANTILE)
    threshold = max(loud + SILENCE_DB, lowest)
    silences = call(
        intensity,
        "To TextGrid (silences)",
        SILENCE_DB - (highest - loud),
        MIN_PAUSE_S,
        MIN_SOUNDING_S,
        "silent",
        "sounding",
    )
    peaks = _peaks_above(intensity, threshold)
    if len(peaks) < 2:
        return np.empty(0)
    pitch = sound.to_pitch_ac(**VOICING)
    nuclei = [
        time
        for time in _dipped(intensity, peaks)
        if not math.isnan(pitch.get_value_at_time(time))
        and call(
            silences, "Get label of interval", 1, call(silences, "Get interval at time", 1, time)
        )
        == "sounding"
    ]
    return np.asarray(nuclei, dtype=np.float64)


def _sound(audio: np.ndarray, fs: int) -> parselmouth.Sound:
    return parselmouth.Sound(np.asarray(audio, dtype=np.float64), sampling_frequency=fs)


def syllable_nuclei(audio: np.ndarray, fs: int) -> np.ndarray:
    """Times (s) of the syllable nuclei found by the procedure (possibly empty).

    Raises :class:`NoScore` (``too_short``) when the audio is shorter than Praat's intensity
    window, where PathBench records no value.
    """
    return _nuclei(_sound(audio, fs))


def praat_speech_rate(audio: np.ndarray, fs: int) -> float:
    """Syllable nuclei per second of the Sound's total duration (Praat's, pauses included).

    Empty audio gives 0.0, as in PathBench.
    """
    sound = _sound(audio, fs)
    duration = sound.get_total_duration()
    if duration == 0:
        return 0.0
    return _nuclei(sound).size / duration
