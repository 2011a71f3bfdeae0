"""The reference CPPS: Praat itself, called through parselmouth.

About 20 CPU seconds per second of audio (Praat sorts every pairwise slope of its tilt fit),
so it serves to check :func:`pathbench_flow.measures.cepstral.cpps`, not to score corpora.
"""

from __future__ import annotations

import numpy as np
import parselmouth
from parselmouth.praat import call

from pathbench_flow.measures.cepstral.framing import require_rate
from pathbench_flow.measures.cepstral.praat_settings import (
    MAXIMUM_FREQUENCY,
    PEAK_PITCH_RANGE,
    PEAK_TOLERANCE,
    PITCH_FLOOR,
    PRE_EMPHASIS_FROM,
    QUEFRENCY_AVERAGING,
    TILT_RANGE,
    TIME_AVERAGING,
    TIME_STEP,
    require_window,
)


def cpps_praat(audio: np.ndarray, fs: int) -> float:
    """Smoothed CPP (dB) computed by Praat: the reference that :func:`cpps` reproduces.

    Praat settings: To PowerCepstrogram (pitch floor 60 Hz, time step 2 ms, maximum frequency
    8 kHz, pre-emphasis from 50 Hz); Get CPPS (tilt subtracted before smoothing, 20 ms time and
    0.5 ms quefrency averaging, peak search 60-330 Hz, tolerance 0.05, parabolic interpolation,
    straight tilt line fitted over 1-50 ms quefrency by Theil's robust (slow) method).
    """
    require_rate(fs)
    require_window(len(audio))
    sound = parselmouth.Sound(np.asarray(audio, dtype=np.float64), sampling_frequency=fs)
    cepstrogram = call(
        sound, "To PowerCepstrogram", PITCH_FLOOR, TIME_STEP, MAXIMUM_FREQUENCY, PRE_EMPHASIS_FROM
    )
    return call(
        cepstrogram,
        "Get CPPS",
        True,
        TIME_AVERAGING,
        QUEFRENCY_AVERAGING,
        *PEAK_PITCH_RANGE,
        PEAK_TOLERANCE,
        "Parabolic",
        *TILT_RANGE,
        "Straight",
        "Robust slow",
    )
