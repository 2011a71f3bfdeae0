"""The settings of Praat's "To PowerCepstrogram" and "Get CPPS" that define CPPS here.

Shared by the Praat reference (:mod:`.praat_reference`) and its numpy re-implementation
(:mod:`.smoothed`), so that both always analyse with the same values.
"""

from __future__ import annotations

from functools import cache

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.status import TOO_SHORT, NoScore

PITCH_FLOOR = 60.0
"""Hz. Praat's analysis window holds three periods of it: a 2 * 3 / 60 = 0.1 s Gaussian."""

TIME_STEP = 0.002
"""Seconds between cepstrogram frames."""

MAXIMUM_FREQUENCY = 8000.0
"""Hz. Praat analyses at twice this rate, i.e. at SAMPLE_RATE without resampling."""

PRE_EMPHASIS_FROM = 50.0
"""Hz. Praat's pre-emphasis coefficient is exp(-2 pi * 50 Hz / fs)."""

TIME_AVERAGING = 0.02
"""Seconds of cepstrogram averaged over time for the smoothing in CPPS."""

QUEFRENCY_AVERAGING = 0.0005
"""Seconds of quefrency averaged within each frame for the smoothing in CPPS."""

PEAK_PITCH_RANGE = (60.0, 330.0)
"""Hz. The cepstral peak is searched between quefrencies 1/330 s and 1/60 s."""

PEAK_TOLERANCE = 0.05
"""Passed to Praat's "Get CPPS"; it only shapes a rahmonics-to-noise column, not CPPS."""

TILT_RANGE = (0.001, 0.05)
"""Seconds of quefrency over which the tilt (trend) line is fitted, before and after smoothing."""


@cache
def window_samples() -> int:
    """Samples in Praat's analysis window: 2 * (3 / pitch floor) seconds, rounded."""
    return round(2.0 * (3.0 / PITCH_FLOOR) * SAMPLE_RATE)


def require_window(n_samples: int) -> None:
    """Praat shrinks the window to the sound when it is shorter, changing the FFT size and
    quefrency grid; below one window there is no CPPS comparable with longer signals."""
    if n_samples < window_samples():
        raise NoScore(
            TOO_SHORT,
            f"{n_samples} samples are shorter than the {window_samples()}-sample CPPS window",
        )
