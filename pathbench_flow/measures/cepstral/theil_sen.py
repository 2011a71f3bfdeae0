"""Theil's robust line (median of all pairwise slopes), as Praat's "Robust slow" tilt fit.

Praat sorts all ~300 000 pairwise slopes of each 2-ms frame, twice per frame; here the median
slope is found by counting pairs (:mod:`.pair_counts`) at a few trial slopes, and the median
residual (Theil's intercept) by a selection that starts from the order the counting left.
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from pathbench_flow.measures.cepstral.pair_counts import (
    count_descending_pairs,
    descending_pair_counts,
    sorted_pair_slopes,
)

_MEDIAN_WINDOW = 64
"""Positions either side of the middle of a nearly right order searched for the median."""


@numba.njit(cache=True)
def _nearly_sorted(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``values[order]`` sorted by insertion: when ``order`` nearly sorts them (a few hundred
    shifts for the 129 values :func:`_select` takes) four times faster than ``np.sort``."""
    result = np.empty(order.size)
    for position in range(order.size):
        value = values[order[position]]
        slot = position
        while slot > 0 and result[slot - 1] > value:
            result[slot] = result[slot - 1]
            slot -= 1
        result[slot] = value
    return result


@numba.njit(cache=True)
def _select(values: np.ndarray, order: np.ndarray, rank: int) -> float:
    """The value of 0-based ``rank`` in ``values``, given ``order``, a nearly sorting order.

    The sought value is almost always among the few values ordered near that rank. They are
    sorted, and a binary search among them looks for the value v with
    #(values < v) <= rank < #(values <= v), each probe one branch-free pass over the row. If
    none fits, the order was too far off and the whole row is sorted instead.
    """
    n = values.size
    first = max(0, rank - _MEDIAN_WINDOW)
    candidates = _nearly_sorted(values, order[first : min(n, rank + _MEDIAN_WINDOW + 1)])
    low, high = 0, candidates.size - 1
    while low <= high:
        probe = (low + high) // 2
        value = candidates[probe]
        below = 0
        not_above = 0
        for other in values:
            below += other < value
            not_above += other <= value
        if rank < below:
            high = probe - 1
        elif rank >= not_above:
            low = probe + 1
        else:
            return value
    return np.sort(values)[rank]


@numba.njit(cache=True)
def medians(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Median of each row of ``values`` (as np.median), given a nearly sorting order per row."""
    rows, n = values.shape
    result = np.empty(rows)
    for row in range(rows):
        upper = _select(values[row], order[row], n // 2)
        if n % 2:
            result[row] = upper
        else:
            result[row] = (_select(values[row], order[row], n // 2 - 1) + upper) / 2
    return result


_SAMPLED_PAIRS = 500
"""Random pairs whose slopes give the first guess and the local shape of the slope distribution
(at most 512, the rows :func:`sorted_pair_slopes` sorts fastest)."""


@cache
def _sampled_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """A fixed (seeded) uniform sample of index pairs i < j, so results are reproducible."""
    rng = np.random.default_rng(20130906)
    first = rng.integers(0, n, size=_SAMPLED_PAIRS)
    second = rng.integers(0, n - 1, size=_SAMPLED_PAIRS)
    second += second >= first
    return np.minimum(first, second), np.maximum(first, second)


def theil_sen_slope(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Median of all pairwise slopes (y_j - y_i) / (j - i) of each row: Theil's complete method,
    which Praat's "Robust slow" tilt fit uses, up to a rank error of a few dozen pairs.

    With C(t) the number of pairs whose slope is at most t, the median is where C crosses half
    the N pairs. C(t) equals the number of pairs i < j with z_j <= z_i for z_k = y_k - t * k, an
    exact count (:func:`count_descending_pairs`) that needs no slopes at all. A seeded sample
    of pairs gives a first guess t0 (its median) and, through its quantiles, a second guess t1
    that corrects t0 by the exact rank error C(t0) - N/2; the secant through the exact counts
    at t0 and t1 then lands within ~50 of ~300 000 ranks of the median (a slope error ~0.3 dB/s,
    negligible for CPPS). Rows whose equal values put many slopes at exactly 0 are finished by
    :func:`_slope_with_ties` when that jump in C could lie under the secant.

    Also returns each row's sorted order at t1, a nearly sorting order of the residuals
    y - slope * k whose median is Theil's intercept (:func:`medians`).
    """
    rows, n = values.shape
    n_pairs = n * (n - 1) // 2
    target = n_pairs / 2 + 0.5  # between the two middle slopes of an even count
    first, second = _sampled_pairs(n)
    sample = sorted_pair_slopes(values, first, second)
    middle = _SAMPLED_PAIRS // 2
    guess = 0.5 * (sample[:, middle - 1] + sample[:, middle])
    first_count = descending_pair_counts(values, guess)
    excess = first_count - target
    # Read the sample quantile displaced by the exact rank error, interpolating linearly.
    position = np.clip((0.5 - excess / n_pairs) * _SAMPLED_PAIRS - 0.5, 0, _SAMPLED_PAIRS - 1)
    below = np.minimum(np.floor(position).astype(np.int64), _SAMPLED_PAIRS - 2)
    fraction = position - below
    row = np.arange(rows)
    second_guess = (1 - fraction) * sample[row, below] + fraction * sample[row, below + 1]
    second_count, order = count_descending_pairs(values, second_guess)
    second_excess = second_count - target
    rise = second_excess - excess
    moved = rise != 0
    step = np.where(moved, excess / np.where(moved, rise, 1), 0.0)
    slope = np.where(moved, guess - step * (second_guess - guess), second_guess)
    # Equal values give pairs of slope exactly 0, a jump in C(t) at 0 that a secant spanning 0
    # cannot see; where it could matter, the rows are solved by bracketing instead.
    spans_zero = np.minimum(np.minimum(guess, second_guess), slope) <= 0
    spans_zero &= np.maximum(np.maximum(guess, second_guess), slope) >= 0
    candidates = np.flatnonzero(spans_zero)
    if candidates.size:
        ordered = np.sort(values[candidates], axis=1)
        jumps = _equal_value_pairs(ordered) > _NEGLIGIBLE_JUMP
        tied = candidates[jumps]
        if tied.size:
            slope[tied] = _slope_with_ties(values[tied], ordered[jumps], target)
    return slope, order


def _equal_value_pairs(ordered: np.ndarray) -> np.ndarray:
    """Pairs of exactly equal values in each sorted row: a run of m equal values holds
    m (m - 1) / 2, the sum over the run of each value's number of equal predecessors."""
    same = ordered[:, 1:] == ordered[:, :-1]
    run = np.cumsum(same, axis=1)
    run -= np.maximum.accumulate(np.where(same, 0, run), axis=1)
    return run.sum(axis=1)


_NEGLIGIBLE_JUMP = 50
"""Tied pairs whose jump the secant may ignore: it shifts the median's rank by at most that."""

_ZERO_SLOPE = 1e-9
"""dB per bin. Counting at +-this instead of at 0 keeps equal values apart (z then differs by
at least this), and slopes this small are indistinguishable from the zeros ties produce."""

_MAX_ITERATIONS = 60
"""Safeguard on the regula falsi steps of :func:`_slope_with_ties`, which needs 10-20."""


def _slope_with_ties(values: np.ndarray, ordered: np.ndarray, target: float) -> np.ndarray:
    """Median pairwise slope of rows holding equal values (``ordered``: each row sorted).

    Equal values (0-dB stretches where clipping flattened a whole smoothing window, digital
    silence) make pairs of slope exactly 0, so C(t) jumps at t = 0 and the secant's straight
    line through C misplaces the median. Counts just below and above 0 show whether the jump
    spans the middle ranks (the median is 0). Otherwise the median lies on one side, where C
    is gradual again: regula falsi (Illinois variant) between the jump and the largest possible
    slope (the value range per unit lag) narrows in on it until one rank step is left.
    """
    rows, n = values.shape
    n_pairs = n * (n - 1) // 2
    below = descending_pair_counts(values, np.full(rows, -_ZERO_SLOPE))
    above = descending_pair_counts(values, np.full(rows, _ZERO_SLOPE))
    negative = target <= below
    off_zero = negative | (target > above)
    limit = ordered[:, -1] - ordered[:, 0] + 1.0
    low = np.where(negative, -limit, _ZERO_SLOPE)
    high = np.where(negative, -_ZERO_SLOPE, limit)
    low_count = np.where(negative, 0, above)
    high_count = np.where(negative, below, n_pairs)
    # Interpolation weights: the counts' distances from the target, halved by Illinois' rule.
    low_weight, high_weight = target - low_count, high_count - target
    kept = np.zeros(rows, dtype=np.int8)  # end left unchanged by the last step: -1 low, +1 high
    for _ in range(_MAX_ITERATIONS):
        active = np.flatnonzero(off_zero & (high_count - low_count > 1))
        if active.size == 0:
            break
        lo, hi = low[active], high[active]
        trial = (lo * high_weight[active] + hi * low_weight[active]) / (
            low_weight[active] + high_weight[active]
        )
        count = descending_pair_counts(values[active], trial)
        rises = count > target
        # Illinois: an end that survives twice in a row has its weight halved.
        low_weight[active] = np.where(
            rises, low_weight[active] / np.where(kept[active] == -1, 2, 1), target - count
        )
        high_weight[active] = np.where(
            rises, count - target, high_weight[active] / np.where(kept[active] == 1, 2, 1)
        )
        low[active] = np.where(rises, lo, trial)
        high[active] = np.where(rises, trial, hi)
        low_count[active] = np.where(rises, low_count[active], count)
        high_count[active] = np.where(rises, count, high_count[active])
        kept[active] = np.where(rises, -1, 1)
    return np.where(off_zero, 0.5 * (low + high), 0.0)
