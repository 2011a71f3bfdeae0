"""Tests of two dependent correlations sharing a variable: Williams' t, Steiger's Z, Zou's interval.

Expected numbers come from the literature, each with its source beside it; the Monte-Carlo
test checks what the methods promise (their error rate and coverage) on simulated data
instead of recomputing any formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pathbench_flow.stats.dependent_correlations import (
    DependentComparison,
    compare_dependent,
    steiger_z,
    williams_t,
    zou_interval,
)

# Silver, Hittner & May (2006), "A FORTRAN 77 program for comparing dependent correlations"
# (DEPCOR), Applied Psychological Measurement 30, 152-153: r_jk = .3, r_jh = .4, r_kh = .5,
# n = 100, to 4 decimals, as quoted by the test suite of the R package cocor (Diedenhofen &
# Musch 2015, PLoS ONE 10(4): e0121945; its tests/testthat/tests.r).
DEPCOR = (0.3, 0.4, 0.5, 100)


def test_williams_t_matches_depcor() -> None:
    t, df, p = williams_t(*DEPCOR)
    assert df == 97
    assert t == pytest.approx(-1.0767, abs=5e-5)
    assert p == pytest.approx(0.2843, abs=5e-5)


def test_steiger_z_matches_depcor() -> None:
    z, p = steiger_z(*DEPCOR)
    assert z == pytest.approx(-1.0718, abs=5e-5)
    assert p == pytest.approx(0.2838, abs=5e-5)


def test_steiger_z_matches_steiger_1980_case_a() -> None:
    # Steiger (1980), Psychological Bulletin 87, p. 249, case A: r_jk = .4, r_jh = .5,
    # r_kh = .1, N = 103 gives Z = -.8913, computed from a covariance rounded to .0042, hence
    # the tolerance. Unrounded, the same example gives -0.8887185 (cocor's test suite, which
    # notes the rounding): that pins the formula to 7 decimals.
    z, _ = steiger_z(0.4, 0.5, 0.1, 103)
    assert z == pytest.approx(-0.8913, abs=0.003)
    assert z == pytest.approx(-0.8887185, abs=5e-8)


def test_zou_interval_matches_zou_2007_overlapping_example() -> None:
    # Zou (2007), Psychological Methods 12(4), 399-413, the example of two overlapping
    # correlations: r12 = .396, r13 = .179, r23 = .088, n = 66, 95% interval (-.093, .517)
    # (also checked by cocor's test suite).
    low, high = zou_interval(0.396, 0.179, 0.088, 66)
    assert (round(low, 3), round(high, 3)) == (-0.093, 0.517)


def test_a_higher_level_widens_zou_interval() -> None:
    at_95 = zou_interval(0.396, 0.179, 0.088, 66)
    at_99 = zou_interval(0.396, 0.179, 0.088, 66, level=0.99)
    assert at_99[0] < at_95[0] < 0.396 - 0.179 < at_95[1] < at_99[1]


@pytest.mark.parametrize("method", ["williams", "steiger"])
def test_compare_dependent_reports_the_chosen_test_and_zou_interval(method: str) -> None:
    result = compare_dependent(*DEPCOR, method=method, level=0.9)
    assert isinstance(result, DependentComparison)
    if method == "williams":
        statistic, df, p = williams_t(*DEPCOR)
        assert result.method.startswith("Williams' t")
    else:
        (statistic, p), df = steiger_z(*DEPCOR), None
        assert result.method.startswith("Steiger's Z")
    assert "Steiger 1980" in result.method
    assert (result.statistic, result.df, result.p_value) == (statistic, df, p)
    assert (result.ci_low, result.ci_high) == zou_interval(*DEPCOR, level=0.9)
    inputs = (result.r_jk, result.r_jh, result.r_kh, result.n, result.level)
    assert inputs == (0.3, 0.4, 0.5, 100, 0.9)
    assert result.difference == 0.3 - 0.4


def test_numpy_scalars_are_accepted() -> None:
    as_numpy = (np.float64(0.3), np.float32(0.4), np.float64(0.5), np.int64(100))
    result = compare_dependent(*as_numpy)
    assert result.statistic == pytest.approx(williams_t(*DEPCOR)[0], rel=1e-6)
    assert type(result.n) is int and type(result.r_jh) is float


# Correlations strictly inside (-1, 1), as the module refuses ±1; each test keeps only the
# triples a data set can have (a positive determinant of their matrix).
unit = st.floats(-0.999, 0.999, allow_nan=False)


def determinant(r_jk: float, r_jh: float, r_kh: float) -> float:
    return 1 - r_jk**2 - r_jh**2 - r_kh**2 + 2 * r_jk * r_jh * r_kh


PROPERTIES = settings(max_examples=300, deadline=None)


@PROPERTIES
@given(r_jk=unit, r_jh=unit, r_kh=unit, n=st.integers(4, 500))
def test_swapping_k_and_h_negates_statistic_and_interval(
    r_jk: float, r_jh: float, r_kh: float, n: int
) -> None:
    assume(determinant(r_jk, r_jh, r_kh) > 1e-6)
    t, df, p_t = williams_t(r_jk, r_jh, r_kh, n)
    assert williams_t(r_jh, r_jk, r_kh, n) == (-t, df, p_t)
    z, p_z = steiger_z(r_jk, r_jh, r_kh, n)
    assert steiger_z(r_jh, r_jk, r_kh, n) == (-z, p_z)
    low, high = zou_interval(r_jk, r_jh, r_kh, n)
    assert zou_interval(r_jh, r_jk, r_kh, n) == (-high, -low)
    # Every statistic points the way the difference does, inside an interval within [-2, 2].
    difference = r_jk - r_jh
    assert t * difference >= 0 and z * difference >= 0
    assert -2 <= low <= difference <= high <= 2


@PROPERTIES
@given(r_jk=unit, r_jh=unit, r_kh=unit, n=st.integers(4, 500))
def test_reversing_the_ratings_negates_statistic_and_interval(
    r_jk: float, r_jh: float, r_kh: float, n: int
) -> None:
    # Rating j on a reversed scale negates both of its correlations and leaves r_kh.
    assume(determinant(r_jk, r_jh, r_kh) > 1e-6)
    t, df, p_t = williams_t(r_jk, r_jh, r_kh, n)
    assert williams_t(-r_jk, -r_jh, r_kh, n) == pytest.approx((-t, df, p_t), rel=1e-9)
    low, high = zou_interval(r_jk, r_jh, r_kh, n)
    assert zou_interval(-r_jk, -r_jh, r_kh, n) == pytest.approx((-high, -low), abs=1e-12)


@PROPERTIES
@given(r=unit, r_kh=unit, n=st.integers(4, 500))
def test_equal_correlations_give_statistic_zero_and_p_one(r: float, r_kh: float, n: int) -> None:
    assume(determinant(r, r, r_kh) > 1e-6)
    assert williams_t(r, r, r_kh, n) == (0.0, n - 3, 1.0)
    assert steiger_z(r, r, r_kh, n) == (0.0, 1.0)
    low, high = zou_interval(r, r, r_kh, n)
    assert low == -high and low < 0


@PROPERTIES
@given(
    r_jk=unit,
    r_jh=unit,
    r_kh=unit,
    n=st.integers(4, 300),
    more=st.integers(1, 300),
    method=st.sampled_from(["williams", "steiger"]),
)
def test_more_speakers_give_a_smaller_p_for_the_same_correlations(
    r_jk: float, r_jh: float, r_kh: float, n: int, more: int, method: str
) -> None:
    assume(determinant(r_jk, r_jh, r_kh) > 1e-6 and abs(r_jk - r_jh) >= 0.01)
    fewer = compare_dependent(r_jk, r_jh, r_kh, n, method=method)
    larger = compare_dependent(r_jk, r_jh, r_kh, n + more, method=method)
    assert abs(larger.statistic) > abs(fewer.statistic)
    assert larger.p_value < fewer.p_value or larger.p_value == fewer.p_value == 0
    # Not a theorem (Zou's half-widths need not shrink together), but no case is known where
    # more speakers widen the interval: 200 000 random triples found none.
    assert larger.ci_high - larger.ci_low < fewer.ci_high - fewer.ci_low


def sample_correlations(
    rho_jk: float, rho_jh: float, rho_kh: float, n: int, repeats: int, seed: int
) -> np.ndarray:
    """Sample correlations (r_jk, r_jh, r_kh) of ``repeats`` normal samples of n speakers."""
    population = np.array([[1, rho_jk, rho_jh], [rho_jk, 1, rho_kh], [rho_jh, rho_kh, 1]])
    draws = np.random.default_rng(seed).multivariate_normal(
        np.zeros(3), population, size=(repeats, n)
    )
    centred = draws - draws.mean(axis=1, keepdims=True)
    scaled = centred / np.sqrt((centred**2).sum(axis=1, keepdims=True))
    matrices = np.einsum("rni,rnj->rij", scaled, scaled)
    return np.stack([matrices[:, 0, 1], matrices[:, 0, 2], matrices[:, 1, 2]], axis=1)


@pytest.mark.parametrize(
    ("rho", "n"),
    [((0.4, 0.4, 0.5), 15), ((0.6, 0.3, 0.4), 15), ((0.7, 0.7, 0.8), 40)],
)
def test_error_rate_and_coverage_hold_on_simulated_speakers(
    rho: tuple[float, float, float], n: int
) -> None:
    # With 2000 samples the standard error of a 5% rate (and of 95% coverage) is 0.5 points;
    # the bound of 2 points leaves room for the methods' own small-sample approximation.
    samples = sample_correlations(*rho, n, repeats=2000, seed=20260101)
    true_difference = rho[0] - rho[1]
    covered = [
        low <= true_difference <= high
        for low, high in (zou_interval(*r, n) for r in samples.tolist())
    ]
    assert np.mean(covered) == pytest.approx(0.95, abs=0.02)
    if true_difference == 0:
        williams = [williams_t(*r, n)[2] < 0.05 for r in samples.tolist()]
        steiger = [steiger_z(*r, n)[1] < 0.05 for r in samples.tolist()]
        assert np.mean(williams) == pytest.approx(0.05, abs=0.02)
        assert np.mean(steiger) == pytest.approx(0.05, abs=0.02)


def test_a_singular_matrix_gives_williams_an_infinite_t() -> None:
    # j = k - h exactly: with r_jk = -r_jh Williams' variance estimate is 0 (see the module).
    assert williams_t(0.5, -0.5, 0.5, 20) == (math.inf, 17, 0.0)
    assert williams_t(-0.5, 0.5, 0.5, 20)[0] == -math.inf
    z, p = steiger_z(0.5, -0.5, 0.5, 20)
    assert math.isfinite(z) and 0 < p < 1e-5
    # The same in floating point, where the determinant comes out at -5.6e-17.
    assert williams_t(0.3, -0.3, 1 - 2 * 0.3**2, 20)[0] == math.inf


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((1.2, 0.4, 0.5, 20), r"r_jk = 1\.2 lies outside \[-1, 1\]"),
        ((0.3, -1.01, 0.5, 20), r"r_jh = -1\.01 lies outside"),
        ((0.3, 0.4, math.inf, 20), r"r_kh = inf lies outside"),
        ((math.nan, 0.4, 0.5, 20), r"r_jk is NaN"),
        ((0.3, 0.4, 1.0, 20), r"r_kh = 1\.0: a correlation of exactly ±1"),
        ((-1.0, 0.4, 0.5, 20), r"r_jk = -1\.0: a correlation of exactly ±1"),
        (("0.3", 0.4, 0.5, 20), r"r_jk = '0\.3' is not a number"),
        ((True, 0.4, 0.5, 20), r"r_jk = True is not a number"),
        ((0.3, 0.4, 0.5, 3), r"n = 3 speakers is too few: the tests need n >= 4"),
        ((0.3, 0.4, 0.5, 20.0), r"n = 20\.0 is not a whole number"),
        ((0.3, 0.4, 0.5, True), r"n = True is not a number of speakers"),
        ((0.9, 0.1, 0.9, 20), r"cannot come from one data set: .* determinant -0\.468"),
        ((0.9, -0.9, 0.9, 20), r"cannot come from one data set"),
    ],
)
def test_unusable_inputs_are_refused_by_every_method(arguments: tuple, message: str) -> None:
    for method in (williams_t, steiger_z, zou_interval):
        with pytest.raises(ValueError, match=message):
            method(*arguments)
    with pytest.raises(ValueError, match=message):
        compare_dependent(*arguments, method="steiger")


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.95, math.nan, "0.95"])
def test_a_level_outside_zero_one_is_refused(level: object) -> None:
    with pytest.raises(ValueError, match="is not a confidence level: pass a number in"):
        zou_interval(*DEPCOR, level=level)  # type: ignore[arg-type]


def test_an_unknown_method_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="method = 'hotelling' is unknown: use one of williams"):
        compare_dependent(*DEPCOR, method="hotelling")
