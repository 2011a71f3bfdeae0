"""The DTW warping path P-(E)STOI aligns with: librosa's ``sequence.dtw`` at its defaults.

PathBench aligns envelopes with ``librosa.sequence.dtw(X, Y, metric="euclidean")``: Euclidean
local cost, the steps (1, 1), (0, 1), (1, 0) with no weights, the first of equal-cost steps in
that order, and the path listed from the last frames back to the first. Importing
``librosa.sequence`` also loads scipy.signal and librosa's filters (about 1.4 CPU-s), which
every reference-scoring job paid for a recursion of a few lines; this module is that recursion
alone. Every sum runs in the order librosa's and scipy's do (the squared differences over the
features in order, then each step's cost added to its predecessor), so costs, ties and
therefore paths are the same to the last bit.
"""

from __future__ import annotations

import numba
import numpy as np

_DIAGONAL, _LEFT, _UP = 0, 1, 2
"""Step indices in librosa's default order: (1, 1), (0, 1), (1, 0)."""


@numba.njit(cache=True, inline="always")
def frame_distance(x: np.ndarray, i: int, y: np.ndarray, j: int) -> float:
    """Euclidean distance between frame ``i`` of ``x`` and frame ``j`` of ``y`` (rows).

    Inlined into its caller, so it sums as the caller's compiler flags allow: in order here,
    as scipy's ``cdist`` does; NAD's recursion lets the compiler vectorise the sum.
    """
    squares = 0.0
    for k in range(x.shape[1]):
        difference = x[i, k] - y[j, k]
        squares += difference * difference
    return np.sqrt(squares)


@numba.njit(cache=True)
def _steps(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The step that reaches each cell at least cost; ``x`` (n, dims) and ``y`` (m, dims)."""
    rows, cols = x.shape[0], y.shape[0]
    accumulated = np.full((rows + 1, cols + 1), np.inf)
    steps = np.zeros((rows, cols), dtype=np.int8)
    for i in range(rows):
        for j in range(cols):
            cost = frame_distance(x, i, y, j)
            if i == 0 and j == 0:
                accumulated[1, 1] = cost
                continue
            best, step = np.inf, _DIAGONAL
            for candidate, previous in (
                (_DIAGONAL, accumulated[i, j]),
                (_LEFT, accumulated[i + 1, j]),
                (_UP, accumulated[i, j + 1]),
            ):
                total = previous + cost
                if total < best:
                    best, step = total, candidate
            accumulated[i + 1, j + 1] = best
            steps[i, j] = step
    return steps


@numba.njit(cache=True)
def _backtrack(steps: np.ndarray) -> np.ndarray:
    """The path from the last cell to (0, 0), following the stored steps."""
    i, j = steps.shape[0] - 1, steps.shape[1] - 1
    path = np.empty((i + j + 1, 2), dtype=np.int64)
    n = 0
    path[n] = (i, j)
    while i > 0 or j > 0:
        step = steps[i, j]
        if step != _LEFT:
            i -= 1
        if step != _UP:
            j -= 1
        n += 1
        path[n] = (i, j)
    return path[: n + 1]


def warping_path(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Warping path (steps, 2) between feature sequences ``x`` (dims, n) and ``y`` (dims, m),
    from (n - 1, m - 1) back to (0, 0), as ``librosa.sequence.dtw(X=x, Y=y)[1]``."""
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"feature sizes differ: {x.shape[0]} vs {y.shape[0]}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("DTW features hold non-finite values")
    frames_x = np.ascontiguousarray(x.T, dtype=np.float64)
    frames_y = np.ascontiguousarray(y.T, dtype=np.float64)
    return _backtrack(_steps(frames_x, frames_y))
