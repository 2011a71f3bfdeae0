"""The speaker bootstrap, rank and pairwise summaries and the meta-analysis
(``pathbench_flow.stats.uncertainty``), against scipy's bootstrap and R's metafor."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pathbench_flow.stats.uncertainty import (
    METHODS,
    _draws,
    bootstrap_averages,
    bootstrap_p,
    category_verdicts,
    cell_r,
    design_of,
    holm,
    meta_analysis,
    pairwise_table,
    rank_summary,
    weighted_r,
)

METAFOR = Path(__file__).parent / "data" / "metafor"


def _column(
    rng: np.random.Generator, n: int, slope: float
) -> tuple[list[str], np.ndarray, np.ndarray]:
    y = rng.normal(size=n)
    return [f"s{i:02d}" for i in range(n)], slope * y + rng.normal(size=n), y


@pytest.mark.parametrize("case", ["heterogeneous", "homogeneous", "two_corpora", "negative"])
def test_meta_analysis_agrees_with_metafor(case: str) -> None:
    """REML τ², pooled r, CI, prediction interval, I² and Q within 1e-6 of metafor's rma on
    the same Fisher-z inputs (values frozen by benchmarks/metafor_reference.R)."""
    cases = pd.read_csv(METAFOR / "cases.csv")
    reference = pd.read_csv(METAFOR / "reference.csv").set_index("case").loc[case]
    rows = cases[cases["case"] == case]
    ours = asdict(meta_analysis(rows["r"], rows["n"]))
    for key, value in ours.items():
        assert value == pytest.approx(reference[key], abs=1e-6), key


def test_meta_analysis_refuses_one_column() -> None:
    with pytest.raises(ValueError, match="two columns"):
        meta_analysis([0.5], [20])


@pytest.mark.parametrize("method", METHODS)
def test_one_column_is_scipys_bootstrap(method: str) -> None:
    """With one corpus and one cell, Avg is r and the bootstrap is scipy's paired bootstrap of
    Pearson r: the same draws from the same seed, the same interval."""
    ids, x, y = _column(np.random.default_rng(3), 20, 0.6)
    design = design_of(["a"], [("c", "C")], [("a", "c", ids, x, y)])
    ours = bootstrap_averages(design, 2000, 7, method=method)
    theirs = stats.bootstrap(
        (x, y),
        lambda a, b, axis=-1: stats.pearsonr(a, b, axis=axis).statistic,
        paired=True,
        vectorized=True,
        n_resamples=2000,
        method=method,
        rng=np.random.default_rng(7),
    )
    assert ours.low[0] == pytest.approx(theirs.confidence_interval.low, abs=1e-12)
    assert ours.high[0] == pytest.approx(theirs.confidence_interval.high, abs=1e-12)
    assert ours.estimate[0] == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)


def test_weighted_r_is_r_of_the_repeated_speakers() -> None:
    ids, x, y = _column(np.random.default_rng(1), 12, 0.5)
    counts = np.random.default_rng(2).integers(0, 3, size=12).astype(float)
    repeated = np.repeat(np.arange(12), counts.astype(int))
    expected = np.corrcoef(x[repeated], y[repeated])[0, 1]
    assert weighted_r(counts, x[:, None], y)[0] == pytest.approx(expected, abs=1e-12)


def test_one_draw_per_corpus_serves_all_its_columns() -> None:
    """Two columns of one corpus over the same speakers with the same values have the same r
    in every replicate; a column of another corpus, drawn independently, does not."""
    ids, x, y = _column(np.random.default_rng(4), 15, 0.7)
    design = design_of(
        ["a"],
        [("MC", "A"), ("EX", "A"), ("other", "B")],
        [
            ("a", "MC", ids, x, y),
            ("a", "EX", ids[::-1], x[::-1], y[::-1]),
            ("a", "other", ids, x, y),
        ],
    )
    r = cell_r(design, _draws(design, 200, 5)[0])
    np.testing.assert_array_equal(r[:, 0, 0], r[:, 0, 1])
    assert not np.allclose(r[:, 0, 0], r[:, 0, 2])


def test_deterministic_and_summaries_consistent() -> None:
    rng = np.random.default_rng(6)
    cells = []
    for column in ("A MC", "A EX", "B", "C"):
        ids, _, y = _column(rng, 18, 0.0)
        for metric, slope in (("good", 1.5), ("fair", 0.5), ("none", 0.0)):
            cells.append((metric, column, ids, slope * y + rng.normal(size=18), y))
    columns = [("A MC", "A"), ("A EX", "A"), ("B", "B"), ("C", "C")]
    design = design_of(["good", "fair", "none"], columns, cells)
    first = bootstrap_averages(design, 500, 11)
    second = bootstrap_averages(design, 500, 11)
    np.testing.assert_array_equal(first.replicates, second.replicates)
    ranks = rank_summary(first)
    assert ranks["p_rank_1"].sum() == pytest.approx(1.0)
    assert (ranks["rank_low"] <= ranks["rank"]).all() and (
        ranks["rank"] <= ranks["rank_high"]
    ).all()
    pairs = pairwise_table(first)
    assert len(pairs) == 3
    assert (pairs["ci_low"] <= pairs["difference"]).all()
    assert (pairs["difference"] <= pairs["ci_high"]).all()
    assert (pairs["p_holm"] >= pairs["p"]).all()


def test_holm_matches_the_step_down_rule() -> None:
    np.testing.assert_allclose(holm(np.array([0.01, 0.04, 0.03, 0.2])), [0.04, 0.09, 0.09, 0.2])


def test_bootstrap_p_is_the_wald_p_of_the_bootstrap_standard_error() -> None:
    replicates = np.random.default_rng(0).normal(0.1, 0.05, size=(1, 4000))
    expected = 2 * stats.norm.sf(0.1 / replicates.std(ddof=1))
    assert bootstrap_p(np.array([0.1]), replicates)[0] == pytest.approx(expected)
    assert bootstrap_p(np.array([0.0]), np.zeros((1, 10)))[0] == 1.0


def test_category_verdicts_name_each_outcome() -> None:
    pairwise = pd.DataFrame(
        {
            "metric": ["mine", "mine", "ArtP", "mine"],
            "other": ["CPP", "PER", "mine", "NAD"],
            "difference": [0.2, 0.01, 0.3, 0.1],
            "p_holm": [0.001, 0.8, 0.002, 0.01],
        }
    )
    category = {"CPP": "Signal", "PER": "Text", "ArtP": "Text", "NAD": "Audio"}
    verdicts = category_verdicts(pairwise, ["mine"], category).set_index("category")["verdict"]
    assert verdicts["Signal"] == "mine is better than every measure of Signal on average (CPP)"
    assert verdicts["Text"] == "mine: indistinguishable from PER; worse than ArtP"
    assert verdicts["Audio"] == "mine is better than every measure of Audio on average (NAD)"


def test_a_draw_without_an_r_is_drawn_again() -> None:
    """A corpus whose second column has 4 of its 8 speakers: some draws hit fewer than three
    of them, and are drawn again, so every replicate has every cell's r."""
    ids, x, y = _column(np.random.default_rng(8), 8, 1.0)
    design = design_of(
        ["a"],
        [("all", "A"), ("half", "A")],
        [("a", "all", ids, x, y), ("a", "half", ids[:4], x[:4], y[:4])],
    )
    result = bootstrap_averages(design, 2000, 3)
    assert result.redrawn > 0
    assert np.isfinite(result.replicates).all()
    (counts,), _ = _draws(design, 2000, 3)
    assert ((counts[:, :4] > 0).sum(axis=1) >= 3).all()
