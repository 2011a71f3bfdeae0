"""The speaker bootstrap, rank and pairwise summaries and the meta-analysis
(``pathbench_flow.stats.uncertainty``), against scipy's bootstrap and R's metafor."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pathbench_flow.stats.correlation import bootstrap_pearson_ci
from pathbench_flow.stats.uncertainty import (
    META_TESTS,
    METHODS,
    UNDEFINED_LIMIT,
    _draws,
    bootstrap_averages,
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


@pytest.mark.parametrize("test", META_TESTS)
@pytest.mark.parametrize("case", ["heterogeneous", "homogeneous", "two_corpora", "negative"])
def test_meta_analysis_agrees_with_metafor(case: str, test: str) -> None:
    """REML τ², pooled r, CI, prediction interval, I² and Q within 1e-6 of metafor 3.8's rma
    on the same Fisher-z inputs, for Wald, Knapp-Hartung (``test="knha"``) and truncated
    Knapp-Hartung (``test="adhoc"``); values frozen by benchmarks/metafor_reference.R."""
    cases = pd.read_csv(METAFOR / "cases.csv")
    reference = pd.read_csv(METAFOR / "reference.csv").set_index(["case", "test"])
    rows = cases[cases["case"] == case]
    ours = asdict(meta_analysis(rows["r"], rows["n"], test=test))
    assert ours.pop("test") == test
    for key, value in ours.items():
        assert value == pytest.approx(reference.loc[(case, test), key], abs=1e-6), key


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
    r = cell_r(design, _draws(design, 200, 5))
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


@pytest.mark.parametrize("method", METHODS)
def test_pairwise_p_agrees_with_the_interval_beside_it(method: str) -> None:
    """Where the pair's interval excludes zero, p < 1 − level, and the other way round; a
    pair no replicate of which crosses zero has the smallest p the replicates allow, marked
    as a bound."""
    rng = np.random.default_rng(12)
    cells = []
    for column in ("A", "B"):
        ids, _, y = _column(rng, 20, 0.0)
        for metric, slope in (("good", 2.0), ("fair", 0.7), ("near", 0.6), ("none", 0.0)):
            cells.append((metric, column, ids, slope * y + rng.normal(size=20), y))
    design = design_of(["good", "fair", "near", "none"], [("A", "A"), ("B", "B")], cells)
    pairs = pairwise_table(bootstrap_averages(design, 999, 4, method=method))
    excludes = (pairs["ci_low"] > 0) | (pairs["ci_high"] < 0)
    np.testing.assert_array_equal(excludes, pairs["p"] < 0.05)
    assert excludes.any() and not excludes.all()
    bound = pairs[pairs["p_is_bound"]]
    if method == "percentile":
        assert len(bound) and np.allclose(bound["p"], 2 / 1000)
    assert (pairs["p"] > 0).all()


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


def _degenerate_design(rng: np.random.Generator) -> tuple:
    """Three corpora of 8 speakers; ``flat`` is 100.0 for 7 of a corpus's speakers, as
    ``wada_snr`` is on the demo, so its r exists only in draws that hold the eighth."""
    cells = []
    for corpus in ("A", "B", "C"):
        ids, x, y = _column(rng, 8, 1.0)
        flat = np.where(np.arange(8) == 5, 90.0, 100.0)
        cells += [("cpp", corpus, ids, x, y), ("flat", corpus, ids, flat, y)]
    columns = [(c, c) for c in "ABC"]
    with_flat = design_of(["cpp", "flat"], columns, cells)
    alone = design_of(["cpp"], columns, [c for c in cells if c[0] == "cpp"])
    return with_flat, alone


def test_a_degenerate_metric_leaves_the_others_untouched() -> None:
    """A metric constant on most speakers has no r in most replicates: it is flagged, and
    every other metric's interval is the one it has without it (the same draws, none made
    again)."""
    with_flat, alone = _degenerate_design(np.random.default_rng(8))
    both = bootstrap_averages(with_flat, 2000, 3)
    single = bootstrap_averages(alone, 2000, 3)
    # The same draws; only the summation order of the matrix products differs.
    np.testing.assert_allclose(both.replicates[0], single.replicates[0], rtol=1e-12)
    assert both.low[0] == pytest.approx(single.low[0], abs=1e-12)
    assert both.high[0] == pytest.approx(single.high[0], abs=1e-12)
    assert both.undefined[0] < 0.01 and both.undefined[1] > UNDEFINED_LIMIT
    assert list(both.flagged) == [False, True]
    pair = pairwise_table(both).iloc[0]
    assert pair["replicates"] == np.isfinite(both.replicates[1]).sum()
    ranks = rank_summary(both).set_index("metric")
    # cpp's rank distribution is over all replicates; flat competes where it has an Avg.
    assert ranks.at["cpp", "p_rank_1"] + ranks.at["cpp", "p_rank_2"] == pytest.approx(1.0)
    assert np.isfinite(ranks.at["flat", "p_rank_1"])


def test_one_cell_interval_is_the_per_dataset_interval() -> None:
    """With one corpus of one column, Avg is the cell's r, and its interval is the
    correlation stage's: the same rule for a resample without an r (dropped and counted, not
    drawn again), so with the same seed and replicates the same draws give the same ends,
    share undefined and flag."""
    ids, x, y = _column(np.random.default_rng(9), 10, 1.0)
    x = np.where(np.arange(10) < 7, 0.0, x)  # three speakers make x vary
    result = bootstrap_averages(design_of(["a"], [("c", "C")], [("a", "c", ids, x, y)]), 20000, 2)
    interval = bootstrap_pearson_ci(x, y, n_boot=20000, seed=2)  # ids are in sorted order
    assert result.undefined[0] > 0.02
    assert (result.low[0], result.high[0]) == pytest.approx(interval[:2], abs=1e-12)
    assert result.undefined[0] == interval.undefined_share
    assert result.flagged[0] == interval.flagged
