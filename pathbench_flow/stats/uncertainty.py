"""How certain the results table's ranking is: a speaker bootstrap of every Avg, rank
probabilities, pairwise differences, and a random-effects meta-analysis per metric.

Why a bespoke resampling: the table's columns are not independent samples. The MC, EX and
Full columns of one corpus, and its word and sentence tasks, rate the same speakers, so a
bootstrap that resampled each column on its own would treat one speaker's luck as many
independent draws. Here a *corpus* (a dataset's ``corpus``, from PathBench's path layout or
the config's ``corpus:`` key; a dataset without one is a corpus of its own) is the unit: each
replicate draws its rated speakers (identified by id across its columns) once, with
replacement, and that one draw weights every cell of every column of the corpus. Each cell's
sign-aligned Pearson r is recomputed on the draw (a weighted r with the draw's counts as
weights, which is the r of the resampled speakers), and each metric's Avg is the unrounded
mean of its row's cells.

Every statistic is taken over the replicates in which what it needs is defined: an Avg over
those in which each cell of its row has an r (a cell has none when the draw leaves it fewer
than three distinct speakers, or its metric or its ratings constant), a pairwise difference
over those in which both Avgs are defined, a metric's rank over those in which its own Avg
is. No draw is made again, so no metric's results are conditioned on another metric being
defined; a metric whose Avg is undefined in more than ``UNDEFINED_LIMIT`` of the replicates
is flagged, because its own results then describe only the draws that happen to make it
vary. Whether a cell has an r on a draw is :mod:`pathbench_flow.stats.resampled_r`'s rule,
the one the correlation stage's per-dataset interval uses too, with the same limit for a
flag: with a single cell, the Avg's interval is that interval of the same r.

Intervals are percentile intervals by default, BCa (bias-corrected and accelerated) on
request: ``benchmarks/uncertainty_coverage.py`` measures the coverage of both on simulated
benchmarks of PathBench's dependence structure (corpora of 8 to 30 speakers, the size of its
smaller ones; its columns have from 8 to 216 rated speakers), and
``benchmarks/README.md`` has its table: the percentile interval covered the true Avg at
least as often as BCa, whose jackknife acceleration is noisy with so few speakers.

Written here rather than through :func:`scipy.stats.bootstrap`: scipy resamples and
computes BCa well, but it resamples each sample on its own, not one draw of a corpus's
speakers shared by all its columns, and it cannot leave a statistic undefined in some
replicates only. The BCa formulas are scipy's for several samples; the jackknife is one
speaker left out at a time. Also written here: the weighted r, the rank summaries, the
p-value of a difference (by inverting its interval; :func:`bootstrap_p` says why) and
Holm's adjustment (statsmodels' ``multipletests`` would do, but is not a dependency for
five lines).

The meta-analysis pools Fisher-z r over columns whose speakers do not overlap (one per
corpus) with a random-effects model whose between-corpus variance τ² is estimated by REML,
as R's metafor ``rma`` does by default. Its intervals are Knapp-Hartung's by default
(``META_TESTS``): with PathBench's seven corpora the Wald (normal) interval covers the pooled
r less often than its level says (``benchmarks/uncertainty_coverage.py``). I² is metafor's
(τ² over τ² plus the typical within-corpus variance). Written here because statsmodels'
``combine_effects`` offers no REML and its I² is Q-based; scipy's ``brentq`` solves the REML
score equation. ``benchmarks/metafor_reference.R`` recomputes the frozen reference values the
tests compare with, for each test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import optimize, special

from pathbench_flow.common.lazy import lazy_module
from pathbench_flow.stats.resampled_r import UNDEFINED_LIMIT, draw_counts, weighted_r

# ~0.5 s to import: a job imports this module before it runs, and ranks need it only then.
stats = lazy_module("scipy.stats")

N_BOOT = 20_000
"""Default replicates (the config's ``uncertainty.n_boot``). A pair's smallest p is
``2 / (N_BOOT + 1)`` ≈ 1e-4 (:func:`bootstrap_p`), so Holm over the demo's 378 pairs can still
call a pair different (378 × 1e-4 < 0.05); PathBench's shape takes ~3 s."""
METHODS = ("percentile", "BCa")
META_TESTS = ("knha_truncated", "knha", "z")
"""The meta-analysis's interval: Knapp-Hartung with its scale truncated at 1 (metafor's
``test="adhoc"``), Knapp-Hartung as metafor's ``test="knha"``, or Wald (``test="z"``)."""


@dataclass(frozen=True)
class Cell:
    """The metrics of one column that share one speaker set, as the bootstrap reads them.

    ``positions`` index the column's corpus speakers; ``x`` (speakers × metrics) holds the
    metrics' values times their sign, so the weighted r is the sign-aligned r; ``y`` the
    speakers' ratings.
    """

    column: int
    metrics: np.ndarray
    positions: np.ndarray
    x: np.ndarray
    y: np.ndarray


@dataclass(frozen=True)
class Design:
    """What the bootstrap resamples: corpora of speakers and the cells that read them."""

    metrics: list[str]
    columns: list[str]
    corpus_of_column: list[int]
    corpus_speakers: list[list[str]]
    cells: list[Cell]

    @property
    def present(self) -> np.ndarray:
        """metric × column: the cells with a value, the ones each Avg is taken over."""
        mask = np.zeros((len(self.metrics), len(self.columns)), dtype=bool)
        for cell in self.cells:
            mask[cell.metrics, cell.column] = True
        return mask


def design_of(
    metrics: Sequence[str],
    columns: Sequence[tuple[str, str]],
    cells: Sequence[tuple[str, str, Sequence[str], np.ndarray, np.ndarray]],
) -> Design:
    """A :class:`Design` from plain inputs.

    ``columns``: (column label, corpus) in table order. ``cells``: (metric, column label,
    speaker ids, aligned values, ratings); a metric's cells that share a speaker list are
    grouped, so the bootstrap multiplies one weight matrix per group.
    """
    labels = [label for label, _ in columns]
    corpora = list(dict.fromkeys(corpus for _, corpus in columns))
    corpus_of_column = [corpora.index(corpus) for _, corpus in columns]
    speakers: list[set[str]] = [set() for _ in corpora]
    for _, label, ids, _, _ in cells:
        speakers[corpus_of_column[labels.index(label)]].update(ids)
    corpus_speakers = [sorted(s) for s in speakers]
    groups: dict[tuple[int, tuple[str, ...]], list[tuple[int, np.ndarray, np.ndarray]]] = {}
    for metric, label, ids, x, y in cells:
        column = labels.index(label)
        order = np.argsort(np.asarray(ids, dtype=object), kind="stable")
        key = (column, tuple(np.asarray(ids, dtype=object)[order]))
        groups.setdefault(key, []).append(
            (list(metrics).index(metric), np.asarray(x, float)[order], np.asarray(y, float)[order])
        )
    built = []
    for (column, ids), members in sorted(groups.items(), key=lambda item: item[0]):
        ys = [y for _, _, y in members]
        if any(not np.array_equal(ys[0], y) for y in ys[1:]):
            raise ValueError(f"column {labels[column]!r}: one speaker with two ratings")
        position = {s: i for i, s in enumerate(corpus_speakers[corpus_of_column[column]])}
        built.append(
            Cell(
                column,
                np.array([m for m, _, _ in members]),
                np.array([position[s] for s in ids]),
                np.column_stack([x for _, x, _ in members]),
                ys[0],
            )
        )
    return Design(list(metrics), labels, corpus_of_column, corpus_speakers, built)


def cell_r(design: Design, counts: Sequence[np.ndarray]) -> np.ndarray:
    """Every cell's sign-aligned r under per-corpus draw counts: … × metric × column."""
    batch = counts[0].shape[:-1]
    r = np.full((*batch, len(design.metrics), len(design.columns)), np.nan)
    for cell in design.cells:
        weights = counts[design.corpus_of_column[cell.column]][..., cell.positions]
        r[..., cell.metrics, cell.column] = weighted_r(weights, cell.x, cell.y)
    return r


def averages(design: Design, counts: Sequence[np.ndarray]) -> np.ndarray:
    """Every metric's unrounded Avg under per-corpus draw counts: … × metric. A replicate in
    which one of a row's cells has no r gives that row NaN, not a mean of fewer columns."""
    present = design.present
    r = cell_r(design, counts)
    return np.where(present, r, 0.0).sum(axis=-1) / present.sum(axis=-1)


@dataclass(frozen=True)
class BootstrapResult:
    """Replicates of every Avg and the intervals of Avgs and their pairwise differences."""

    metrics: list[str]
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    replicates: np.ndarray
    """metric × replicate Avgs, NaN where one of the metric's cells has no r."""
    pairs: list[tuple[int, int]]
    pair_low: np.ndarray
    pair_high: np.ndarray
    pair_p: np.ndarray
    """Two-sided p-value of each pair's difference, by inverting its interval
    (:func:`bootstrap_p`)."""
    pair_bound: np.ndarray
    """Whether no replicate of the pair fell on the other side of zero: its p is then the
    smallest the replicates can give, an upper bound."""
    method: str
    level: float

    @property
    def undefined(self) -> np.ndarray:
        """Per metric, the share of replicates in which its Avg has no value."""
        return np.mean(~np.isfinite(self.replicates), axis=1)

    @property
    def flagged(self) -> np.ndarray:
        """Per metric, whether its Avg is undefined in more than ``UNDEFINED_LIMIT`` of the
        replicates."""
        return self.undefined > UNDEFINED_LIMIT


def _draws(design: Design, n_boot: int, seed: int) -> list[np.ndarray]:
    """Per corpus, ``n_boot`` × speakers counts of a draw with replacement of its speakers:
    one draw per corpus and replicate, shared by every column of the corpus.

    No draw is made again: a draw that leaves a cell without an r (fewer than
    ``MIN_SPEAKERS`` distinct speakers, a metric or the ratings constant on the draw) leaves
    only the Avgs of that cell's metrics undefined, in that replicate. Redrawing it, as an
    earlier version did, conditioned every metric on every other metric being defined.
    """
    rng = np.random.default_rng(seed)
    draws = []
    for speakers in design.corpus_speakers:
        n = len(speakers)
        if n == 0:  # a corpus none of whose cells has an r: nothing of it to resample
            draws.append(np.zeros((n_boot, 0)))
            continue
        draws.append(draw_counts(rng, n, n_boot))
    return draws


def _jackknife(design: Design) -> list[np.ndarray]:
    """Per corpus, the Avgs with one of its speakers left out (speakers × metric), the
    others' corpora whole: the jackknife BCa's acceleration is estimated from."""
    sizes = [len(s) for s in design.corpus_speakers]
    return [
        averages(
            design,
            [
                1.0 - np.eye(n) if c == left else np.ones((sizes[left], n))
                for c, n in enumerate(sizes)
            ],
        )
        for left in range(len(sizes))
    ]


def _bca_constants(
    replicates: np.ndarray, estimate: np.ndarray, jackknife: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """BCa's bias ``z0`` and acceleration per statistic (row), with scipy's formulas for
    several samples (``scipy.stats._resampling._bca_interval``): bias from the defined
    replicates below the estimate, acceleration from each sample's jackknife."""
    finite = np.isfinite(replicates)
    with np.errstate(invalid="ignore"):
        below = (replicates < estimate[:, None]).sum(axis=1) / finite.sum(axis=1)
    z0 = special.ndtri(below)
    numerator = denominator = 0.0
    for values in jackknife:
        u = (len(values) - 1) * (np.nanmean(values, axis=0) - values)
        numerator = numerator + np.nansum(u**3, axis=0)
        denominator = denominator + np.nansum(u**2, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        acceleration = numerator / (6 * denominator**1.5)
    return z0, acceleration


def _bca_level(tail: float, z0: np.ndarray, acceleration: np.ndarray) -> np.ndarray:
    """The percentile level BCa reads for the nominal level ``tail``."""
    z = special.ndtri(tail)
    return special.ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))


def _nominal_level(share: np.ndarray, z0: np.ndarray, acceleration: np.ndarray) -> np.ndarray:
    """The inverse of :func:`_bca_level`: the nominal level whose BCa percentile is
    ``share``. BCa's percentiles stop short of 0 and 1 (at ``ndtr(z0 − 1/acceleration)``):
    a share beyond that end is beyond every nominal level, 0 or 1."""
    w = special.ndtri(share) - z0
    ratio = 1 + acceleration * w
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.where((ratio > 0) & np.isfinite(w), w / ratio, np.sign(w) * np.inf)
    return special.ndtr(u - z0)


def _intervals(
    replicates: np.ndarray, levels: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's interval at its percentile ``levels`` (low, high), over the replicates in
    which the row is defined; NaN where none is."""
    low, high = np.full(len(replicates), np.nan), np.full(len(replicates), np.nan)
    for i, row in enumerate(replicates):
        row = row[np.isfinite(row)]
        if len(row) and np.isfinite(levels[0][i]) and np.isfinite(levels[1][i]):
            low[i], high[i] = np.quantile(row, [levels[0][i], levels[1][i]])
    return low, high


def bootstrap_p(
    replicates: np.ndarray, bca: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided p-value that a difference is zero, per row, by inverting the interval it
    sits beside: the smallest ``1 − level`` whose interval reaches zero. Also, per row,
    whether it is the smallest p the replicates can give, ``2 / (B + 1)`` for ``B`` defined
    replicates (no replicate on the far side of zero): an upper bound rather than a value.

    Each tail's share counts zero itself and adds one replicate (``(1 + count) / (B + 1)``),
    so p is never 0 and a 95 % interval that excludes zero goes with p < 0.05 (up to the
    interpolation of the interval's ends). ``bca``: BCa's ``(z0, acceleration)``, whose level
    mapping is inverted too. An earlier version divided the difference by its bootstrap
    standard error: its p could disagree with the percentile interval beside it, and its
    tiny values (3e-31) were extrapolations of a normal tail far beyond the replicates.
    """
    finite = np.isfinite(replicates)
    count = finite.sum(axis=1)
    below = ((replicates <= 0) & finite).sum(axis=1)
    above = ((replicates >= 0) & finite).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        low_share, high_share = (1 + below) / (1 + count), (1 + above) / (1 + count)
        if bca is not None:
            low_share = _nominal_level(low_share, *bca)
            high_share = 1 - _nominal_level(1 - high_share, *bca)
        smallest = 2 / (1 + count)
        p = np.clip(2 * np.minimum(low_share, high_share), smallest, 1.0)
    bound = (np.minimum(below, above) == 0) | (p <= smallest)
    return np.where(count > 0, p, np.nan), (count > 0) & bound


def bootstrap_averages(
    design: Design, n_boot: int, seed: int, level: float = 0.95, method: str = "percentile"
) -> BootstrapResult:
    """The speaker bootstrap of the module docstring (draws as :func:`_draws` makes them).

    Every statistic is taken over the replicates in which it is defined: an Avg over those in
    which every cell of its row has an r, a difference over those in which both Avgs have a
    value, so no metric's results depend on another metric being defined.
    """
    if method not in METHODS:
        raise ValueError(f"bootstrap method {method!r} is not one of {list(METHODS)}")
    m = len(design.metrics)
    pairs = list(combinations(range(m), 2))
    first = np.array([i for i, _ in pairs], dtype=int)
    second = np.array([j for _, j in pairs], dtype=int)

    def statistic(counts: list[np.ndarray]) -> np.ndarray:
        """Every Avg, then every pair's difference (first − second): … × statistic."""
        avg = averages(design, counts)
        return np.concatenate([avg, avg[..., first] - avg[..., second]], axis=-1)

    estimate = statistic([np.ones(len(s)) for s in design.corpus_speakers])
    replicates = statistic(_draws(design, n_boot, seed)).T
    tails = np.full(len(estimate), (1 - level) / 2), np.full(len(estimate), (1 + level) / 2)
    bca = None
    if method == "BCa":
        jackknife = [
            np.concatenate([a, a[:, first] - a[:, second]], axis=1) for a in _jackknife(design)
        ]
        bca = _bca_constants(replicates, estimate, jackknife)
        tails = _bca_level(tails[0], *bca), _bca_level(tails[1], *bca)
    low, high = _intervals(replicates, tails)
    p, bound = bootstrap_p(replicates[m:], None if bca is None else (bca[0][m:], bca[1][m:]))
    return BootstrapResult(
        metrics=list(design.metrics),
        estimate=estimate[:m],
        low=low[:m],
        high=high[:m],
        replicates=replicates[:m],
        pairs=pairs,
        pair_low=low[m:],
        pair_high=high[m:],
        pair_p=p,
        pair_bound=bound,
        method=method,
        level=level,
    )


def rank_summary(result: BootstrapResult) -> pd.DataFrame:
    """Per metric, its rank by Avg (1 = highest) in the replicates: the probability of
    ranking first and the central ``level`` interval of its rank, with the whole
    distribution (``p_rank_<k>``) for the figure.

    A metric's rank in a replicate is one plus the number of metrics with a higher Avg in it,
    and its distribution is over the replicates in which it has an Avg; a metric without an
    Avg in a replicate takes no place in it. So the probabilities of rank 1 add up to 1 only
    when every Avg is defined in every replicate.
    """
    replicates = result.replicates
    m = len(result.metrics)
    defined = np.isfinite(replicates)
    with np.errstate(invalid="ignore"):
        ranks = 1 + (replicates[None, :, :] > replicates[:, None, :]).sum(axis=1)
    tail = (1 - result.level) / 2
    ends = np.full((m, 2), np.nan)
    shares = np.full((m, m), np.nan)
    for i in range(m):
        mine = ranks[i, defined[i]]
        if len(mine):
            ends[i] = np.quantile(mine, [tail, 1 - tail], method="inverted_cdf")
            shares[i] = np.bincount(mine - 1, minlength=m) / len(mine)
    frame = pd.DataFrame(
        {
            "metric": result.metrics,
            "rank": stats.rankdata(-result.estimate, method="min").astype(int),
            "p_rank_1": shares[:, 0] if m else [],
            "rank_low": pd.array(ends[:, 0], dtype="Int64"),
            "rank_high": pd.array(ends[:, 1], dtype="Int64"),
        }
    )
    for k in range(1, m + 1):
        frame[f"p_rank_{k}"] = shares[:, k - 1]
    return frame


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment of ``p`` (familywise error over all of them)."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p, kind="stable")
    steps = (len(p) - np.arange(len(p))) * p[order]
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(steps))
    return adjusted


def pairwise_table(result: BootstrapResult) -> pd.DataFrame:
    """Every pair of metrics: the difference of Avg (first − second), its interval, the
    p-value of that interval (:func:`bootstrap_p`), whether it is a bound, the replicates
    both are defined in, and the Holm-adjusted p-value over all pairs."""
    replicates = result.replicates
    first = np.array([i for i, _ in result.pairs], dtype=int)
    second = np.array([j for _, j in result.pairs], dtype=int)
    both = np.isfinite(replicates[first]) & np.isfinite(replicates[second])
    return pd.DataFrame(
        {
            "metric": [result.metrics[i] for i in first],
            "other": [result.metrics[j] for j in second],
            "difference": result.estimate[first] - result.estimate[second],
            "ci_low": result.pair_low,
            "ci_high": result.pair_high,
            "p": result.pair_p,
            "p_is_bound": result.pair_bound,
            "p_holm": holm(result.pair_p),
            "replicates": both.sum(axis=1),
        }
    )


@dataclass(frozen=True)
class MetaAnalysis:
    """A random-effects pooled r (REML τ²) over k columns with independent speakers."""

    k: int
    pooled_r: float
    ci_low: float
    ci_high: float
    pi_low: float
    pi_high: float
    tau2: float
    i2: float
    q: float
    pooled_z: float
    se_z: float
    """The standard error of ``pooled_z`` the intervals use (Knapp-Hartung's, if so)."""
    test: str


def _reml_score(tau2: float, z: np.ndarray, v: np.ndarray) -> float:
    """The derivative of the REML log-likelihood in τ² (up to a factor ½):
    ``y'PPy − tr(P)`` of an intercept-only model."""
    w = 1 / (v + tau2)
    mu = (w * z).sum() / w.sum()
    residual = w * (z - mu)
    trace = w.sum() - (w * w).sum() / w.sum()
    return float((residual * residual).sum() - trace)


def reml_tau2(z: np.ndarray, v: np.ndarray) -> float:
    """REML's τ² of effects ``z`` with sampling variances ``v``: 0 where the score at 0 is
    not positive (no excess heterogeneity), else the root of the score."""
    if len(z) < 2 or _reml_score(0.0, z, v) <= 0:
        return 0.0
    upper = max(float(np.var(z)), float(v.max()))
    while _reml_score(upper, z, v) > 0:
        upper *= 2
    return float(optimize.brentq(_reml_score, 0.0, upper, args=(z, v), xtol=1e-15, rtol=1e-15))


def meta_analysis(
    r: Sequence[float], n: Sequence[int], level: float = 0.95, test: str = "knha_truncated"
) -> MetaAnalysis:
    """Random-effects meta-analysis of Pearson r on Fisher's z (variance 1/(n−3)), as
    metafor's ``rma(yi, vi, method="REML", test=...)`` computes it (``test``: one of
    ``META_TESTS``); results back on the r scale.

    Knapp-Hartung scales the standard error by ``sqrt(s)``, ``s`` the weighted residual
    variance ``sum w (z − mu)² / (k − 1)`` (truncated at 1 unless ``test`` is ``knha``), and
    takes both intervals from Student's t with k − 1 degrees of freedom; the prediction
    interval's spread is ``sqrt(τ² + se²)`` with that se, as metafor's ``predict`` has it.
    """
    if test not in META_TESTS:
        raise ValueError(f"meta-analysis test {test!r} is not one of {list(META_TESTS)}")
    r, n = np.asarray(r, float), np.asarray(n, float)
    if len(r) < 2 or (n <= 3).any():
        raise ValueError("a meta-analysis needs two columns or more, each of 4 speakers or more")
    z, v = np.arctanh(r), 1 / (n - 3)
    k = len(z)
    tau2 = reml_tau2(z, v)
    w = 1 / (v + tau2)
    mu, se = (w * z).sum() / w.sum(), 1 / np.sqrt(w.sum())
    crit = special.ndtri(1 - (1 - level) / 2)
    if test != "z":
        scale = float((w * (z - mu) ** 2).sum() / (k - 1))
        se *= np.sqrt(max(1.0, scale) if test == "knha_truncated" else scale)
        crit = stats.t.ppf(1 - (1 - level) / 2, k - 1)
    fixed = 1 / v
    q = float((fixed * (z - (fixed * z).sum() / fixed.sum()) ** 2).sum())
    typical = (k - 1) * fixed.sum() / (fixed.sum() ** 2 - (fixed * fixed).sum())
    spread = np.sqrt(tau2 + se * se)
    return MetaAnalysis(
        k=k,
        pooled_r=float(np.tanh(mu)),
        ci_low=float(np.tanh(mu - crit * se)),
        ci_high=float(np.tanh(mu + crit * se)),
        pi_low=float(np.tanh(mu - crit * spread)),
        pi_high=float(np.tanh(mu + crit * spread)),
        tau2=tau2,
        i2=float(100 * tau2 / (tau2 + typical)),
        q=q,
        pooled_z=float(mu),
        se_z=float(se),
        test=test,
    )


def category_verdicts(
    pairwise: pd.DataFrame,
    predictors: Sequence[str],
    category_of: Mapping[str, str],
    alpha: float = 0.05,
) -> pd.DataFrame:
    """For each predictor and each category of built-in measures, one sentence: better than
    every measure of the category on average, or which it is better than, indistinguishable
    from and worse than (Holm-adjusted p < ``alpha`` decides)."""
    rows = []
    for predictor in predictors:
        mine = pairwise[(pairwise["metric"] == predictor) | (pairwise["other"] == predictor)]
        verdict: dict[str, tuple[str, float]] = {}
        for row in mine.itertuples(index=False):
            other, sign = (row.other, 1) if row.metric == predictor else (row.metric, -1)
            if other in predictors:
                continue
            difference = sign * row.difference
            outcome = "indistinguishable from"
            if row.p_holm < alpha:
                outcome = "better than" if difference > 0 else "worse than"
            verdict[other] = (outcome, row.p_holm)
        for category in dict.fromkeys(category_of[m] for m in verdict):
            members = [m for m in verdict if category_of[m] == category]
            outcomes = {o: [m for m in members if verdict[m][0] == o] for o in _OUTCOMES}
            if len(outcomes["better than"]) == len(members):
                sentence = (
                    f"{predictor} is better than every measure of {category} on average "
                    f"({', '.join(members)})"
                )
            else:
                sentence = f"{predictor}: " + "; ".join(
                    f"{outcome} {', '.join(names)}" for outcome, names in outcomes.items() if names
                )
            rows.append({"predictor": predictor, "category": category, "verdict": sentence})
    return pd.DataFrame(rows, columns=["predictor", "category", "verdict"])


_OUTCOMES = ("better than", "indistinguishable from", "worse than")
