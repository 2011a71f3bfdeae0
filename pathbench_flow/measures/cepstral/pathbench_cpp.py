"""PathBench's cepstral peak prominence (CPP): its frame-wise linear cepstrum, made fast.

PathBench's definition, per 10-ms frame: pre-emphasis (0.97) of the whole signal, a 641-sample
Hann frame, the log magnitude of its 641-point FFT in dB, the magnitude of that spectrum's own
641-point FFT (the cepstrum), and the cepstrum's highest value in bins 47-266 above a
least-squares line through those bins. CPP is the mean over frames.

641 is prime, so both FFTs are slow in any FFT library (numpy's runs Bluestein's algorithm on
1280 points). Rader's algorithm turns a prime-length DFT into a cyclic correlation of length
640 = 2^7 * 5, cheap for FFTs: with g = 3, whose powers g^p (mod 641) run through every bin
1..640, bin g^-q of the DFT of y is y[0] + sum_p y[g^p] w^(g^(p - q)). Applied to the real
Hartley kernel cos + sin instead of the complex exponential, the correlation stays real and its
halves give both parts of each bin (:func:`_rader_tables`); the second FFT, of a real even
spectrum, needs only a length-320 correlation. Values agree with the direct FFTs to rounding
(about 1e-11 relative on CPP); the speed is in ``benchmarks/evaluators.py``.
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np
import scipy.fft

from pathbench_flow.common.status import TOO_SHORT, NoScore
from pathbench_flow.measures.cepstral.framing import chunks, require_rate

CPP_FRAME = 641
"""Samples per CPP frame (40 ms at 16 kHz); also the length of both FFTs, as in PathBench."""

CPP_HOP = 160
"""Samples between CPP frames (10 ms)."""

CPP_PRE_EMPHASIS = 0.97
"""First-order pre-emphasis coefficient applied to the whole signal before framing."""

CPP_PEAK_BINS = (47, 266)
"""Cepstral bins (0-based, inclusive) searched for the peak: F0 of 16000/266 to 16000/47 Hz."""

_CPP_FIRST_CENTRE = 641
"""1-based centre sample of the first frame; centres follow every hop up to length - 640."""

_BLOCK_FRAMES = 128
"""Frames per block: the block's arrays (about 0.7 MB each) then stay in the core's cache,
which makes CPP 1.5-2x faster than blocks of CHUNK_FRAMES."""

_GENERATOR = 3
"""A primitive root of 641: its powers 3^0 .. 3^639 (mod 641) are the bins 1 .. 640."""

_HALF = (CPP_FRAME - 1) // 2
"""320: the distinct bins of a real frame's spectrum besides bin 0, and 3^320 = -1 (mod 641)."""


class _RaderTables:
    """Constants of both FFTs: bin permutation, window, and the correlation kernels' spectra.

    ``bins[p]`` = g^p mod 641. First FFT: with a[p] = y[g^p] and the Hartley kernel
    h[m] = cos(2 pi g^m / 641) - sin(2 pi g^m / 641), the cyclic correlation
    s[q] = sum_p a[p] h[p - q] (length 640) holds re + im of the FFT's bin g^-q (minus y[0]) at
    q and re - im at q + 320, because g^(m + 320) = -g^m flips the sine and keeps the cosine.
    Second FFT: the log spectrum L is real and even, so its FFT at bin g^-s is
    L[0] + 2 sum_u L[g^-u] cos(2 pi g^-(u + s) / 641) over u < 320, a length-320 convolution of
    the log spectrum as the first FFT leaves it ordered (by q) with c[m] = cos(2 pi g^m / 641),
    read at -s. ``positions`` are those reading points for the searched bins 47..266 in order.
    """

    def __init__(self) -> None:
        self.bins = np.array([pow(_GENERATOR, p, CPP_FRAME) for p in range(CPP_FRAME - 1)])
        i = np.arange(1, CPP_FRAME + 1)
        window = 0.5 - 0.5 * np.cos(2 * np.pi * i / (CPP_FRAME + 1))
        self.window_at_zero = float(window[0])
        self.permuted_window = window[self.bins]
        angles = 2 * np.pi * self.bins / CPP_FRAME
        self.hartley = np.conj(scipy.fft.rfft(np.cos(angles) - np.sin(angles)))
        self.cosines = scipy.fft.rfft(np.cos(angles[:_HALF]))
        log_of_bin = {int(b): p for p, b in enumerate(self.bins)}
        searched = np.arange(CPP_PEAK_BINS[0], CPP_PEAK_BINS[1] + 1)
        # Bin b = g^e is g^-s for s = -e (mod 640); s and s - 320 give the same (even) value.
        s = np.array([-log_of_bin[int(b)] % (CPP_FRAME - 1) % _HALF for b in searched])
        self.positions = -s % _HALF
        self.centred_bins = searched - searched.mean()


@cache
def _rader_tables() -> _RaderTables:
    """The tables, built once per process (a few milliseconds)."""
    return _RaderTables()


@numba.njit(cache=True)
def _permuted_frames(
    emphasised: np.ndarray, starts: np.ndarray, bins: np.ndarray, window: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each frame's windowed samples in Rader's order, a[p] = y[g^p] (``window`` permuted
    alike), gathered straight from the signal, and its unwindowed first sample."""
    frames = np.empty((starts.size, bins.size))
    for row in range(starts.size):
        start = starts[row]
        for p in range(bins.size):
            frames[row, p] = emphasised[start + bins[p]] * window[p]
    return frames, emphasised[starts]


@numba.njit(cache=True)
def _magnitudes(
    correlation: np.ndarray, frames: np.ndarray, first: np.ndarray, window_at_zero: float
) -> tuple[np.ndarray, np.ndarray]:
    """|FFT| of each frame at bins g^-q (q < 320), and at bin 0 (the frame's sum).

    Bin g^-q is y0 + re + i im, with re + im and re - im at q and q + 320 of the correlation,
    so |.|^2 = ((y0 + s[q])^2 + (y0 + s[q + 320])^2) / 2.
    """
    rows = correlation.shape[0]
    magnitudes = np.empty((rows, _HALF))
    at_zero = np.empty(rows)
    for row in range(rows):
        y0 = first[row] * window_at_zero
        for q in range(_HALF):
            plus = y0 + correlation[row, q]
            minus = y0 + correlation[row, q + _HALF]
            magnitudes[row, q] = np.sqrt(0.5 * (plus * plus + minus * minus))
        at_zero[row] = abs(y0 + frames[row].sum())
    return magnitudes, at_zero


def _decibels(magnitude: np.ndarray) -> np.ndarray:
    """PathBench's 20 log10(|FFT| + eps), in place (numpy's vectorised log is 8x numba's)."""
    magnitude += np.finfo(np.float64).eps
    np.log10(magnitude, out=magnitude)
    magnitude *= 20.0
    return magnitude


@numba.njit(cache=True)
def _prominence_sum(
    convolution: np.ndarray, at_zero: np.ndarray, positions: np.ndarray, centred: np.ndarray
) -> float:
    """Sum over frames of the searched cepstrum's peak above its least-squares line.

    The cepstrum at searched bin j is |L[0] + 2 convolution[positions[j]]|; the line through
    the bins' centred indices has the cepstrum's mean at the centre; the first maximum wins.
    """
    n = positions.size
    spread = 0.0
    for j in range(n):
        spread += centred[j] * centred[j]
    cepstrum = np.empty(n)
    total = 0.0
    for row in range(convolution.shape[0]):
        mean = 0.0
        moment = 0.0
        peak = 0
        for j in range(n):
            value = abs(at_zero[row] + 2.0 * convolution[row, positions[j]])
            cepstrum[j] = value
            mean += value
            moment += value * centred[j]
            if value > cepstrum[peak]:
                peak = j
        line = mean / n + moment / spread * centred[peak]
        total += cepstrum[peak] - line
    return total


def cpp(audio: np.ndarray, fs: int) -> float:
    """PathBench's cepstral peak prominence: mean over 10-ms frames of the linear-cepstrum peak
    (60-333 Hz) above a least-squares line through the searched cepstral bins.

    Raises NoScore(too_short) when the signal holds no complete frame (fewer than 1281 samples).
    """
    require_rate(fs)
    x = np.asarray(audio, dtype=np.float64)
    last_centre = x.size - (CPP_FRAME - 1)
    if last_centre < _CPP_FIRST_CENTRE:
        raise NoScore(TOO_SHORT, f"{x.size} samples hold no {CPP_FRAME}-sample CPP frame")
    n_frames = (last_centre - _CPP_FIRST_CENTRE) // CPP_HOP + 1
    emphasised = np.concatenate((x[:1], x[1:] - CPP_PRE_EMPHASIS * x[:-1]))
    first_start = _CPP_FIRST_CENTRE - (CPP_FRAME + 1) // 2
    starts = first_start + CPP_HOP * np.arange(n_frames)
    tables = _rader_tables()
    total = 0.0
    for start, stop in chunks(n_frames, _BLOCK_FRAMES):
        frames, first = _permuted_frames(
            emphasised, starts[start:stop], tables.bins, tables.permuted_window
        )
        spectrum = scipy.fft.rfft(frames, axis=1)
        spectrum *= tables.hartley
        correlation = scipy.fft.irfft(spectrum, CPP_FRAME - 1, axis=1, overwrite_x=True)
        magnitudes, at_zero = _magnitudes(correlation, frames, first, tables.window_at_zero)
        cepstra = scipy.fft.rfft(_decibels(magnitudes), axis=1)
        cepstra *= tables.cosines
        convolution = scipy.fft.irfft(cepstra, _HALF, axis=1, overwrite_x=True)
        total += _prominence_sum(
            convolution, _decibels(at_zero), tables.positions, tables.centred_bins
        )
    return total / n_frames
