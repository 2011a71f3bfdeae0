"""Pearson r on a bootstrap resample of speakers, and when a resample has one.

Both intervals of r the workflow reports use this module, so that "a resample where r is
defined" means one thing: the correlation stage's per-dataset interval of each r
(:func:`pathbench_flow.stats.correlation.bootstrap_pearson_ci`) and the uncertainty stage's
corpus bootstrap of every Avg (:mod:`pathbench_flow.stats.uncertainty`). With one dataset and
one metric the two are the same statistic, so a different definition would give the same r
two intervals. Numpy only: the correlation stage is imported by aggregation and plotting,
which must not pay for scipy.
"""

from __future__ import annotations

import numpy as np

MIN_SPEAKERS = 3
"""Fewest distinct speakers an r is computed on, in the data or in a resample: with two
points |r| is always 1."""
UNDEFINED_LIMIT = 0.05
"""Share of resamples without an r above which an interval is flagged: it then describes only
the draws in which r exists, which over-represent the few speakers that make a metric vary."""


def draw_counts(rng: np.random.Generator, n_speakers: int, n_boot: int) -> np.ndarray:
    """``n_boot`` × ``n_speakers`` counts of draws with replacement of ``n_speakers``
    speakers, one row per resample, from one call to ``rng.integers`` (reproducible)."""
    return counts_of(rng.integers(0, n_speakers, size=(n_boot, n_speakers)), n_speakers)


def counts_of(indices: np.ndarray, size: int) -> np.ndarray:
    """How often each of ``size`` speakers is drawn, per row of ``indices`` (… × draws)."""
    flat = indices.reshape(-1, indices.shape[-1])
    offsets = flat + size * np.arange(len(flat))[:, None]
    counts = np.bincount(offsets.ravel(), minlength=size * len(flat)).reshape(len(flat), size)
    return counts.reshape(*indices.shape[:-1], size).astype(np.float64)


def weighted_r(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of ``x`` (speakers × k) with ``y`` under each row of ``weights`` (… ×
    speakers, counts of a resample): shape … × k, the r of the resampled speakers.

    NaN where the resample has no r: fewer than ``MIN_SPEAKERS`` distinct speakers, or x or y
    constant on it. Constancy is judged against the whole sample's spread, because centring
    a constant resample leaves rounding noise that would otherwise pass for r = ±1.
    """
    xc, yc = x - x.mean(axis=0), y - y.mean()
    total = np.maximum(weights.sum(axis=-1)[..., None], 1.0)  # no draw: invalid below
    sx, sy = weights @ xc, (weights @ yc)[..., None]
    vx = weights @ (xc * xc) - sx * sx / total
    vy = (weights @ (yc * yc))[..., None] - sy * sy / total
    cov = weights @ (xc * yc[:, None]) - sx * sy / total
    scale_x, scale_y = (xc * xc).sum(axis=0), (yc * yc).sum()
    valid = (
        (vx > 1e-12 * scale_x)
        & (vy > 1e-12 * scale_y)
        & ((weights > 0).sum(axis=-1) >= MIN_SPEAKERS)[..., None]
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.sqrt(vx * vy)
    return np.where(valid, np.clip(r, -1.0, 1.0), np.nan)
