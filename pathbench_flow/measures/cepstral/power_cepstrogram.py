"""Praat's power cepstrogram in numpy: its quefrency grid, framing, window and scaling.

Every detail that changes a value follows Praat (frame times and their rounding, the Gaussian
window, the additive floors), so that frame for frame the cepstra equal Praat's to rounding.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import scipy.fft
from numpy.lib.stride_tricks import sliding_window_view

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.measures.cepstral.praat_settings import (
    PEAK_PITCH_RANGE,
    PITCH_FLOOR,
    PRE_EMPHASIS_FROM,
    TILT_RANGE,
    TIME_STEP,
    window_samples,
)

_POWER_FLOOR = 1e-30
"""Praat adds this to cepstral power before taking dB, so that 0 maps to -300 dB."""

_DB_PER_NEPER = 10.0 / math.log(10.0)
"""dB of a power ratio per unit of its natural logarithm."""

_SPECTRUM_FLOOR = 1e-300
"""Praat adds this to spectral power before its natural logarithm."""


class QuefrencyGrid:
    """Quefrency grid and bin ranges of Praat's power cepstrogram at SAMPLE_RATE.

    Bin ranges use Praat's rule (first bin at or above the lower bound, last at or below the
    upper one) on the same floating-point quotients, so boundary bins match Praat's choice.
    """

    def __init__(self) -> None:
        self.window = window_samples()
        self.nfft = 1 << (self.window - 1).bit_length()
        self.n_quefrencies = self.nfft // 2 + 1
        self.max_quefrency = 0.5 * self.nfft / SAMPLE_RATE
        self.dq = self.max_quefrency / (self.n_quefrencies - 1)
        self.tilt = slice(
            int(np.ceil(TILT_RANGE[0] / self.dq)), int(np.floor(TILT_RANGE[1] / self.dq)) + 1
        )
        self.peak_quefrencies = (1.0 / PEAK_PITCH_RANGE[1], 1.0 / PEAK_PITCH_RANGE[0])
        self.peak_bins = (
            int(np.ceil(self.peak_quefrencies[0] / self.dq)),
            int(np.floor(self.peak_quefrencies[1] / self.dq)),
        )
        self.quefrencies = np.arange(self.n_quefrencies) * self.dq
        self.tilt_quefrencies = self.quefrencies[self.tilt]


@cache
def quefrency_grid() -> QuefrencyGrid:
    """The grid at SAMPLE_RATE, built once per process."""
    return QuefrencyGrid()


@cache
def _gaussian_window() -> np.ndarray:
    """Praat's Gaussian analysis window: exp(-12) at its edges, shifted and scaled to 0..1."""
    n = window_samples()
    i = np.arange(1, n + 1)
    edge = np.exp(-12.0)
    return (np.exp(-48.0 * (i - 0.5 * (n + 1)) ** 2 / (n + 1) ** 2) - edge) / (1.0 - edge)


@cache
def _scaled_window() -> np.ndarray:
    """The Gaussian window times the sample period, Praat's scaling of the spectrum."""
    return _gaussian_window() / SAMPLE_RATE


def frame_times(n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Centre times and 0-based first samples of Praat's cepstrogram frames.

    Frames are centred on the signal as a whole (Praat's short-term analysis rule); each frame's
    first sample is the nearest to its centre minus half a window. The arithmetic follows
    Praat's, because half-sample ties are decided by the last bit of these times.
    """
    dx = 1.0 / SAMPLE_RATE
    x1 = 0.5 * dx
    duration = dx * n_samples
    window_duration = 2.0 * (3.0 / PITCH_FLOOR)
    n_frames = int(np.floor((duration - window_duration) / TIME_STEP)) + 1
    first_time = (x1 - 0.5 * dx + 0.5 * duration) - 0.5 * (n_frames * TIME_STEP) + 0.5 * TIME_STEP
    times = first_time + np.arange(n_frames) * TIME_STEP
    nearest = np.floor((times - window_duration / 2 - x1) / dx + 1.0 + 0.5).astype(np.int64)
    return times, nearest - 1


def emphasised_and_padded(x: np.ndarray) -> np.ndarray:
    """Praat's pre-emphasis of the whole sound, with one window of zeros on both sides because
    Praat reads zeros outside the sound when a frame overhangs it."""
    coefficient = np.exp(-2.0 * np.pi * PRE_EMPHASIS_FROM / SAMPLE_RATE)
    padding = np.zeros(window_samples())
    return np.concatenate((padding, x[:1], x[1:] - coefficient * x[:-1], padding))


def power_cepstra(
    padded: np.ndarray, starts: np.ndarray, dtype: type[np.floating] = np.float64
) -> np.ndarray:
    """Praat's power cepstrum of each frame: squared real cepstrum of the Gaussian-windowed,
    mean-removed frame, from a zero-padded FFT (ln power spectrum, inverse FFT).

    ``padded`` comes from :func:`emphasised_and_padded`; ``starts`` index the unpadded signal.
    Praat's amplitude scalings (sample period on the spectrum, frequency step on the inverse)
    are kept so that its additive floors act on the same magnitudes; the first is folded into
    the window. The log power spectrum is real and even, so its inverse FFT is a type-1 DCT of
    the nfft / 2 + 1 bins (a third cheaper).

    ``dtype`` float32 computes the FFT, the log and the DCT in single precision, about 40 %
    cheaper; :func:`~pathbench_flow.measures.cepstral.smoothed.cpps` uses it within its
    fidelity bound to Praat. Praat's 1e-300 floor is 0 in float32, so the smallest normal
    float32 takes its place: only bins of exactly zero power (a frame of digital silence, whose
    log spectrum is then constant and reaches the zero-quefrency bin alone) see the difference.
    """
    grid = quefrency_grid()
    frames = sliding_window_view(padded, grid.window)[starts + grid.window]
    frames = ((frames - frames.mean(axis=1, keepdims=True)) * _scaled_window()).astype(dtype)
    floor = _SPECTRUM_FLOOR if dtype == np.float64 else np.finfo(dtype).tiny
    spectrum = scipy.fft.rfft(frames, grid.nfft, axis=1)
    log_power = np.log(spectrum.real**2 + spectrum.imag**2 + floor)
    cepstrum = scipy.fft.dct(log_power, type=1, axis=1) * (SAMPLE_RATE / grid.nfft)
    return cepstrum**2


def to_db(power: np.ndarray) -> np.ndarray:
    """Praat's dB of cepstral power, in the precision of ``power``: through the natural
    logarithm, which numpy vectorises in float32 too (log10 there is 3.5 times slower)."""
    return _DB_PER_NEPER * np.log(power + _POWER_FLOOR)
