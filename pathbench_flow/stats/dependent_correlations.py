"""Two correlations sharing a variable: does metric k agree with the listeners better than h?

In the benchmark both metrics are correlated with the same ratings j of the same n speakers, so
r_jk and r_jh are dependent: their sampling errors move together as far as k and h do (r_kh).
A test for independent correlations (the difference of Fisher z's with variance 2/(n - 3))
ignores that covariance and, for two metrics that correlate positively, is too conservative.
The tests here account for it through r_kh (notation of Steiger 1980: j is the shared
variable).

* :func:`williams_t`: Williams' (1959) t, with n - 3 degrees of freedom, in the form Steiger
  (1980, p. 246, eq. 7) gives and recommends for this case; the default.
* :func:`steiger_z`: Steiger's (1980, p. 247, eq. 14) Z, Dunn and Clark's (1969) test of the
  difference of Fisher z's with the covariance of the two correlations estimated from their
  mean r (eq. 10) rather than from each, which keeps its size under the null hypothesis.
* :func:`zou_interval`: Zou's (2007, p. 409) confidence interval for r_jk - r_jh, built from the
  Fisher-z interval of each correlation and the correlation between the two, so that it is
  asymmetric where r is near ±1 as the sampling distribution of r is.

All three assume Pearson correlations of multivariate-normal data. For sign-aligned
correlations (a metric whose values fall as intelligibility rises counted with -r), flip a
metric's r_kh together with its r_j*: reversing the direction of k maps (r_jk, r_jh, r_kh) to
(-r_jk, r_jh, -r_kh).

Inputs fail closed with a ValueError naming the value and the fix: NaN or infinite values, a
correlation outside [-1, 1], fewer than 4 speakers (Williams' t needs n - 3 >= 1 degrees of
freedom, both Fisher-z methods a variance 1/(n - 3)), or three correlations no data set can
have (the 3 x 3 correlation matrix has a negative determinant; rounding slack of
``DETERMINANT_SLACK`` is tolerated). A correlation of exactly ±1 is refused too: its Fisher z
is infinite, and with r_kh = ±1 the two metrics are one up to sign, so there is nothing to
compare. A singular matrix (determinant 0: j is an exact linear combination of k and h in the
sample) is accepted; where it leaves Williams' variance estimate at 0 (mean r of 0) his t is
±inf with p = 0, which is the limit of the formula.

References:

* Diedenhofen, B., & Musch, J. (2015). cocor: A comprehensive solution for the statistical
  comparison of correlations. PLoS ONE, 10(4), e0121945.
* Dunn, O. J., & Clark, V. A. (1969). Correlation coefficients measured on the same
  individuals. Journal of the American Statistical Association, 64, 366-377.
* Hittner, J. B., May, K., & Silver, N. C. (2003). A Monte Carlo evaluation of tests for
  comparing dependent correlations. The Journal of General Psychology, 130, 149-168.
* Steiger, J. H. (1980). Tests for comparing elements of a correlation matrix. Psychological
  Bulletin, 87(2), 245-251.
* Williams, E. J. (1959). The comparison of regression variables. Journal of the Royal
  Statistical Society, Series B, 21(2), 396-399.
* Zou, G. Y. (2007). Toward using confidence intervals to compare correlations. Psychological
  Methods, 12(4), 399-413.
"""

from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass

from scipy import stats

METHODS: dict[str, str] = {
    "williams": "Williams' t (Williams 1959; Steiger 1980, eq. 7)",
    "steiger": "Steiger's Z (Steiger 1980, eq. 14; Dunn & Clark 1969 with pooled r)",
}
"""The tests :func:`compare_dependent` runs, by name, with the label its result carries."""

MIN_N = 4
"""Fewest speakers: Williams' t has n - 3 degrees of freedom, Fisher's z a variance 1/(n - 3)."""

DETERMINANT_SLACK = 1e-12
"""How far below 0 the determinant of the correlation matrix may fall before the three
correlations are refused: a singular matrix computed in floating point can come out a few
ulps negative, and refusing it would reject correlations a data set can have."""


@dataclass(frozen=True)
class DependentComparison:
    """One test of r_jk against r_jh with Zou's interval for their difference."""

    method: str
    r_jk: float
    r_jh: float
    r_kh: float
    n: int
    difference: float
    statistic: float
    df: int | None
    p_value: float
    ci_low: float
    ci_high: float
    level: float


def _checked_determinant(r_jk: float, r_jh: float, r_kh: float, n: int) -> float:
    """The determinant of the correlation matrix of j, k and h, once the inputs are usable.

    Every method calls this first, so no formula ever sees a value it would turn into a silent
    NaN or a complex root.
    """
    for name, value in (("r_jk", r_jk), ("r_jh", r_jh), ("r_kh", r_kh)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"{name} = {value!r} is not a number: pass a correlation in (-1, 1)")
        if math.isnan(value):
            raise ValueError(f"{name} is NaN: a metric without a correlation cannot be compared")
        if abs(value) > 1:
            raise ValueError(f"{name} = {value} lies outside [-1, 1]: it is not a correlation")
        if abs(value) == 1:
            raise ValueError(
                f"{name} = {value}: a correlation of exactly ±1 has no sampling error to test "
                "(its Fisher z is infinite); compare only correlations strictly inside (-1, 1)"
            )
    if isinstance(n, bool):
        raise ValueError(f"n = {n!r} is not a number of speakers: pass an integer >= {MIN_N}")
    try:
        count = operator.index(n)
    except TypeError:
        raise ValueError(
            f"n = {n!r} is not a whole number of speakers: pass an integer >= {MIN_N}"
        ) from None
    if count < MIN_N:
        raise ValueError(
            f"n = {count} speakers is too few: the tests need n >= {MIN_N} "
            "(Williams' t has n - 3 degrees of freedom)"
        )
    determinant = 1 - (r_jk * r_jk + r_jh * r_jh) - r_kh * r_kh + 2 * (r_jk * r_jh) * r_kh
    if determinant < -DETERMINANT_SLACK:
        raise ValueError(
            f"r_jk = {r_jk}, r_jh = {r_jh} and r_kh = {r_kh} cannot come from one data set: "
            f"their correlation matrix has determinant {determinant:.6g} < 0; compute all "
            "three on the same speakers"
        )
    return max(determinant, 0.0)


def _correlation_between_correlations(r_a: float, r_b: float, r_kh: float) -> float:
    """Large-sample correlation between r_ja and r_jb (and between their Fisher z's).

    Pearson and Filon's covariance (Steiger 1980, eq. 3) divided by the two variances; this is
    Dunn and Clark's (1969) c and Zou's (2007, p. 409) corr(r12, r13) in another arrangement.
    Steiger's eq. 10 is the same expression evaluated at the mean of the two correlations.
    Written symmetrically in r_a and r_b, so swapping k and h changes no bit of it.
    """
    squares = r_a * r_a + r_b * r_b
    product = r_a * r_b
    covariance = r_kh * (1 - squares) - 0.5 * product * (1 - squares - r_kh * r_kh)
    return covariance / ((1 - r_a * r_a) * (1 - r_b * r_b))


def williams_t(r_jk: float, r_jh: float, r_kh: float, n: int) -> tuple[float, int, float]:
    """Williams' t for r_jk = r_jh: (t, degrees of freedom n - 3, two-sided p).

    Williams (1959) in the form of Steiger (1980, eq. 7), with |R| the determinant of the
    correlation matrix and r̄ the mean of r_jk and r_jh::

        t = (r_jk - r_jh) * sqrt((n - 1)(1 + r_kh) / (2 (n - 1)/(n - 3) |R| + r̄² (1 - r_kh)³))

    This is Hittner et al.'s (2003) "standard Williams' t", not Hendrickson, Stanley and Hills'
    (1970) modification. t > 0 means r_jk > r_jh.
    """
    determinant = _checked_determinant(r_jk, r_jh, r_kh, n)
    mean_r = (r_jk + r_jh) / 2
    variance = 2 * (n - 1) / (n - 3) * determinant + mean_r * mean_r * (1 - r_kh) ** 3
    difference = r_jk - r_jh
    if variance == 0:
        # Only a singular matrix with mean r 0, where r_jk = -r_jh != 0: no sampling error left.
        statistic = math.copysign(math.inf, difference)
    else:
        statistic = difference * math.sqrt((n - 1) * (1 + r_kh) / variance)
    df = n - 3
    return statistic, df, float(2 * stats.t.sf(abs(statistic), df))


def steiger_z(r_jk: float, r_jh: float, r_kh: float, n: int) -> tuple[float, float]:
    """Steiger's Z for r_jk = r_jh: (Z, two-sided p from the standard normal).

    Steiger (1980, eq. 14): the difference of Fisher z's over its standard error, with the
    correlation between them (Dunn & Clark 1969) estimated at the mean r (eq. 10), as the null
    hypothesis says both correlations are that one::

        Z = (z_jk - z_jh) * sqrt(n - 3) / sqrt(2 - 2 c̄)

    Z > 0 means r_jk > r_jh.
    """
    _checked_determinant(r_jk, r_jh, r_kh, n)
    mean_r = (r_jk + r_jh) / 2
    pooled = _correlation_between_correlations(mean_r, mean_r, r_kh)
    statistic = (math.atanh(r_jk) - math.atanh(r_jh)) * math.sqrt((n - 3) / (2 - 2 * pooled))
    return statistic, float(2 * stats.norm.sf(abs(statistic)))


def _fisher_interval(r: float, n: int, level: float) -> tuple[float, float]:
    """The usual interval of one correlation: Fisher's z ± the normal quantile, back-transformed."""
    half_width = stats.norm.ppf((1 + level) / 2) / math.sqrt(n - 3)
    z = math.atanh(r)
    return math.tanh(z - half_width), math.tanh(z + half_width)


def _spread(distance_a: float, distance_b: float, correlation: float) -> float:
    """Zou's (2007) half-width on one side: the two distances combined as correlated errors.

    The clamp only absorbs rounding: with |correlation| <= 1 the sum is never negative.
    """
    squared = (
        distance_a * distance_a
        + distance_b * distance_b
        - 2 * correlation * (distance_a * distance_b)
    )
    return math.sqrt(max(squared, 0.0))


def zou_interval(
    r_jk: float, r_jh: float, r_kh: float, n: int, level: float = 0.95
) -> tuple[float, float]:
    """Zou's (2007) confidence interval (low, high) for r_jk - r_jh at ``level``.

    With (l1, u1) and (l2, u2) the Fisher-z intervals of r_jk and r_jh and c the correlation
    between the two correlations (Zou 2007, p. 409, his example of overlapping correlations)::

        low  = r_jk - r_jh - sqrt((r_jk - l1)² + (u2 - r_jh)² - 2c (r_jk - l1)(u2 - r_jh))
        high = r_jk - r_jh + sqrt((u1 - r_jk)² + (r_jh - l2)² - 2c (u1 - r_jk)(r_jh - l2))

    The interval excludes 0 when the difference is significant at 1 - ``level``.
    """
    _checked_determinant(r_jk, r_jh, r_kh, n)
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < 1:
        raise ValueError(f"level = {level!r} is not a confidence level: pass a number in (0, 1)")
    low_k, high_k = _fisher_interval(r_jk, n, level)
    low_h, high_h = _fisher_interval(r_jh, n, level)
    correlation = _correlation_between_correlations(r_jk, r_jh, r_kh)
    difference = r_jk - r_jh
    below = _spread(r_jk - low_k, high_h - r_jh, correlation)
    above = _spread(high_k - r_jk, r_jh - low_h, correlation)
    return difference - below, difference + above


def compare_dependent(
    r_jk: float,
    r_jh: float,
    r_kh: float,
    n: int,
    method: str = "williams",
    level: float = 0.95,
) -> DependentComparison:
    """Test r_jk against r_jh with ``method`` ("williams" or "steiger"), with Zou's interval.

    The interval is Zou's whichever test runs: both tests give a p-value only, and a benchmark
    table needs the size of the difference too.
    """
    if method not in METHODS:
        raise ValueError(f"method = {method!r} is unknown: use one of {', '.join(METHODS)}")
    df: int | None
    if method == "williams":
        statistic, df, p_value = williams_t(r_jk, r_jh, r_kh, n)
    else:
        statistic, p_value = steiger_z(r_jk, r_jh, r_kh, n)
        df = None
    ci_low, ci_high = zou_interval(r_jk, r_jh, r_kh, n, level)
    return DependentComparison(
        method=METHODS[method],
        r_jk=float(r_jk),
        r_jh=float(r_jh),
        r_kh=float(r_kh),
        n=operator.index(n),
        difference=float(r_jk - r_jh),
        statistic=statistic,
        df=df,
        p_value=p_value,
        ci_low=ci_low,
        ci_high=ci_high,
        level=float(level),
    )
