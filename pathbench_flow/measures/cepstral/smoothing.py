"""Praat's smoothing of the cepstrogram: interpolating means over time and over quefrency.

Both are fixed linear maps, built once as sparse matrices whose weights integrate the
piecewise-linear interpolation of the samples over each averaging window, as Praat does.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from scipy import sparse

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.measures.cepstral.power_cepstrogram import quefrency_grid
from pathbench_flow.measures.cepstral.praat_settings import (
    QUEFRENCY_AVERAGING,
    TIME_AVERAGING,
    TIME_STEP,
)


def _interval_mean_weights(n: int, low: np.ndarray, high: np.ndarray, reach: int) -> np.ndarray:
    """Weights of Praat's interpolating mean of n samples over windows [low, high].

    ``low`` and ``high`` are in sample units (sample k at k). Praat averages the piecewise-linear
    interpolation of the samples, which extends half a sample past the end samples as a
    constant and is undefined beyond, over the window clipped to that support. A sample's weight
    is therefore the integral of its hat function over the clipped window, divided by the
    clipped length. Returns shape (len(low), 2 * reach + 1): weights of samples k - reach ..
    k + reach for window k (zero outside 0..n-1).
    """
    low = np.maximum(low, -0.5)
    high = np.minimum(high, n - 0.5)
    sample = np.arange(len(low))[:, None] + np.arange(-reach, reach + 1)[None, :]

    def hat_integral(u: np.ndarray) -> np.ndarray:
        """Integral of each sample's hat function from -inf to u."""
        s = u[:, None] - sample
        rising = np.clip(s, -1.0, 0.0)
        left = np.where(sample == 0, np.clip(s, -0.5, 0.0) + 0.5, 0.5 * (rising + 1.0) ** 2)
        falling = np.clip(s, 0.0, 1.0)
        right = np.where(sample == n - 1, np.clip(s, 0.0, 0.5), falling - 0.5 * falling**2)
        return left + right

    weights = (hat_integral(high) - hat_integral(low)) / (high - low)[:, None]
    weights[(sample < 0) | (sample >= n)] = 0.0
    return weights


def _averaging_matrix(n: int, low: np.ndarray, high: np.ndarray, step: float) -> sparse.csr_array:
    """Sparse n x n matrix applying :func:`_interval_mean_weights` (bounds in physical units)."""
    reach = int(np.ceil(np.max(high - low) / (2 * step))) + 1
    weights = _interval_mean_weights(n, low / step, high / step, reach)
    rows = np.repeat(np.arange(n), 2 * reach + 1)
    columns = (np.arange(n)[:, None] + np.arange(-reach, reach + 1)[None, :]).ravel()
    keep = (columns >= 0) & (columns < n)
    return sparse.csr_array((weights.ravel()[keep], (rows[keep], columns[keep])), shape=(n, n))


@cache
def quefrency_averaging() -> sparse.csr_array:
    """Praat's quefrency smoothing: mean over +-0.25 ms, clipped to the quefrency domain.

    Only the rows CPPS reads (up to the tilt range's end and the peak search's right
    neighbour) are kept, and only the columns they average: the bins of the power cepstrum
    beyond them (about a fifth) need no flattening or smoothing.
    """
    grid = quefrency_grid()
    q = grid.quefrencies
    half = 0.5 * QUEFRENCY_AVERAGING
    full = _averaging_matrix(
        grid.n_quefrencies,
        np.maximum(q - half, 0.0),
        np.minimum(q + half, grid.max_quefrency),
        grid.dq,
    )
    read = full[: max(grid.tilt.stop, grid.peak_bins[1] + 2)]
    return read[:, : int(read.indices.max()) + 1]


def time_averaging(times: np.ndarray, n_samples: int) -> sparse.csr_array:
    """Praat's time smoothing: mean over +-10 ms, clipped to the sound's time domain."""
    half = 0.5 * TIME_AVERAGING
    duration = n_samples / SAMPLE_RATE
    low = np.maximum(times - half, 0.0) - times[0]
    high = np.minimum(times + half, duration) - times[0]
    return _averaging_matrix(len(times), low, high, TIME_STEP)
