"""Check the speaker bootstrap by simulation, and time it on PathBench's full shape.

Coverage: each simulated benchmark has four corpora of 8 to 30 rated speakers (drawn per
benchmark). Corpus A has MC and EX columns over the same speakers, B a word and a sentence
task over the same speakers plus a third column over a subset of at least 8 of them, C and D
one column each. Four metrics have a known population correlation per column (``RHO``); a
speaker's metric value in two columns of one corpus shares a speaker trait, so the columns of
a corpus are dependent as PathBench's are. The true Avg of a metric is the mean of its
column correlations. Reported: how often the 95 % interval of Avg covers the true Avg (BCa
and percentile, from the same draws), and the calibration of the rank-1 probability against
which metric truly ranks first. Twice: with the fixed truth ``RHO`` (the top two metrics
0.015 apart, a near tie) and with a truth drawn for each benchmark (:func:`drawn_rho`),
which is the question calibration asks (over benchmarks whose gaps vary, is a predicted 80 %
right 80 % of the time?).

Degenerate designs (:data:`DESIGNS`, fixed truth, percentile): ``degenerate`` adds a fifth
metric floored at a constant on ~85 % of speakers (as ``wada_snr`` is 100.0 for 7 of the
demo's 8), ``constant_ratings`` puts corpus D's ratings at a ceiling for ~80 % of its speakers
(as TORGO's are tied). The other metrics' data and draws are those of the plain design, so
their coverage there must not move; the table also gives each metric's coverage conditioned
on every metric being defined (what the earlier redraws did), the share of replicates without
its Avg and how often it is flagged.

Meta-analysis (:func:`meta_coverage`): k corpora of PathBench's sizes, each with a true z
drawn around a mean with between-corpus spread τ, each r from a bivariate normal sample; how
often each interval (``META_TESTS``) covers the mean, for k = 3 and PathBench's 7.

Speed: PathBench's full shape, 12 rows plus a predictor over 21 columns with its speaker
counts (``PATHBENCH_SPEAKERS``), 2,000 replicates, each interval method, minimum of five
runs on one core
(run with ``OPENBLAS_NUM_THREADS=1``).

``python benchmarks/uncertainty_coverage.py [--benchmarks 500]`` prints both tables as
Markdown for ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pathbench_flow.stats.uncertainty import (
    META_TESTS,
    METHODS,
    UNDEFINED_LIMIT,
    Design,
    bootstrap_averages,
    design_of,
    meta_analysis,
    rank_summary,
)
from pathbench_flow.stats.uncertainty import N_BOOT as DEFAULT_N_BOOT

RHO = np.array(
    [
        [0.80, 0.70, 0.75, 0.65, 0.80, 0.70],
        [0.70, 0.75, 0.70, 0.70, 0.65, 0.75],
        [0.55, 0.50, 0.60, 0.45, 0.55, 0.60],
        [0.30, 0.20, 0.40, 0.35, 0.25, 0.30],
    ]
)
"""Population r per metric (row) and column: A MC, A EX, B word, B sentence, B subset, C
(D reuses C's column value for its own)."""
COLUMNS = ("A MC", "A EX", "B Word", "B Sentence", "B Subset", "C", "D")
CORPUS = ("A", "A", "B", "B", "B", "C", "D")
TRAIT_SHARE = 0.6
"""Share of a metric's noise variance that is the speaker's own (the same in every column of
its corpus)."""
N_BOOT = 2000
"""Replicates per simulated benchmark (the stage's default, ``DEFAULT_N_BOOT``, is larger for
the pairwise p-values' sake; the intervals' coverage does not depend on it)."""
LEVEL = 0.95


def rho_of(rho: np.ndarray, column: int) -> np.ndarray:
    """Population r of every metric in ``column`` (D repeats C's)."""
    return rho[:, min(column, rho.shape[1] - 1)]


def true_avg(rho: np.ndarray) -> np.ndarray:
    return np.mean([rho_of(rho, j) for j in range(len(COLUMNS))], axis=0)


def drawn_rho(rng: np.random.Generator) -> np.ndarray:
    """A truth of its own for one benchmark: each metric's level uniform in 0.2-0.8, each
    column ±0.05 around it, so the gaps between metrics vary from ties to clear leads."""
    level = rng.uniform(0.2, 0.8, size=(RHO.shape[0], 1))
    return np.clip(level + rng.uniform(-0.05, 0.05, size=RHO.shape), 0.0, 0.95)


DESIGNS = ("plain", "degenerate", "constant_ratings")
FLOOR = 1.0
"""The degenerate metric is ``max(latent, FLOOR)``: constant on the ~84 % of speakers whose
standard-normal latent value is below it."""
RATING_FLOOR = 0.5
"""Corpus D's ratings in ``constant_ratings`` are ``max(y, RATING_FLOOR)``: tied for ~69 % of
its speakers, so a draw of 8 has constant ratings about one time in twenty."""
FLAT_RHO = 0.6
"""Population r of the degenerate metric's latent value with the ratings."""


def floored_r(rho: float, metric: bool, size: int = 2_000_000) -> float:
    """Population r when the metric (``metric``, at ``FLOOR``) or the ratings (at
    ``RATING_FLOOR``) are floored: by simulation, as it has no closed form worth the
    trouble."""
    rng = np.random.default_rng(0)
    y = rng.normal(size=size)
    x = rho * y + np.sqrt(1 - rho**2) * rng.normal(size=size)
    return float(
        np.corrcoef(np.maximum(x, FLOOR), y)[0, 1]
        if metric
        else np.corrcoef(x, np.maximum(y, RATING_FLOOR))[0, 1]
    )


def design_truth(design: str) -> np.ndarray:
    """True Avg of every metric of ``design`` under the fixed truth ``RHO``."""
    if design == "degenerate":
        flat = floored_r(FLAT_RHO, metric=True)
        return np.append(true_avg(RHO), flat)
    if design == "constant_ratings":
        d = np.array([floored_r(r, metric=False) for r in rho_of(RHO, len(COLUMNS) - 1)])
        columns = [rho_of(RHO, j) for j in range(len(COLUMNS) - 1)] + [d]
        return np.mean(columns, axis=0)
    return true_avg(RHO)


def simulate(rng: np.random.Generator, rho: np.ndarray, design: str = "plain") -> Design:
    """One simulated benchmark with population r ``rho`` (metric × column), in ``design``
    (``DESIGNS``); its extra randomness comes from a generator of its own, so the other
    metrics' data are those of the plain design."""
    extra = np.random.default_rng(rng.integers(2**32))
    metrics = [f"m{i}" for i in range(RHO.shape[0])]
    cells = []
    by_corpus: dict[str, tuple[np.ndarray, np.ndarray, list[str]]] = {}
    for j, (label, corpus) in enumerate(zip(COLUMNS, CORPUS, strict=True)):
        if corpus not in by_corpus:
            n = int(rng.integers(8, 31))
            ids = [f"{corpus}{i:02d}" for i in range(n)]
            by_corpus[corpus] = (rng.normal(size=n), rng.normal(size=(n, len(metrics))), ids)
        y, trait, ids = by_corpus[corpus]
        keep = np.arange(len(ids))
        if label == "B Subset":
            keep = np.sort(
                rng.choice(len(ids), size=int(rng.integers(8, len(ids) + 1)), replace=False)
            )
        own = rng.normal(size=(len(ids), len(metrics)))
        noise = np.sqrt(TRAIT_SHARE) * trait + np.sqrt(1 - TRAIT_SHARE) * own
        r = rho_of(rho, j)
        x = r * y[:, None] + np.sqrt(1 - r**2) * noise
        floored = design == "constant_ratings" and corpus == "D"
        rating = np.maximum(y, RATING_FLOOR) if floored else y
        for m, metric in enumerate(metrics):
            cells.append((metric, label, [ids[i] for i in keep], x[keep, m], rating[keep]))
        latent = FLAT_RHO * y + np.sqrt(1 - FLAT_RHO**2) * extra.normal(size=len(y))
        flat = np.maximum(latent, FLOOR)
        if design == "degenerate" and np.ptp(flat[keep]) > 0:  # else no r: the cell is empty
            cells.append(("flat", label, [ids[i] for i in keep], flat[keep], y[keep]))
    if np.ptp(rating) == 0 or any(np.ptp(c[4]) == 0 for c in cells):
        return simulate(rng, rho, design)  # a table without this column's r: not the question
    names = [*metrics, "flat"] if design == "degenerate" else metrics
    return design_of(names, list(zip(COLUMNS, CORPUS, strict=True)), cells)


def coverage(n_benchmarks: int, seed: int, drawn: bool) -> None:
    """Print the coverage and calibration tables: the truth ``RHO`` in every benchmark, or
    (``drawn``) a truth drawn for each (:func:`drawn_rho`)."""
    rng = np.random.default_rng(seed)
    covered = {method: np.zeros(RHO.shape[0]) for method in METHODS}
    widths = {method: [] for method in METHODS}
    predicted, truly_first = [], []
    for b in range(n_benchmarks):
        rho = drawn_rho(rng) if drawn else RHO
        truth = true_avg(rho)
        design = simulate(rng, rho)
        for method in METHODS:
            result = bootstrap_averages(design, N_BOOT, seed + b, LEVEL, method)
            covered[method] += (result.low <= truth) & (result.high >= truth)
            widths[method].append(result.high - result.low)
        ranks = rank_summary(result)  # the same replicates whatever the interval method
        predicted.append(ranks["p_rank_1"].to_numpy())
        truly_first.append(np.arange(RHO.shape[0]) == int(np.argmax(truth)))
    truth = "drawn per benchmark" if drawn else "fixed (RHO)"
    print(
        f"\n{n_benchmarks} simulated benchmarks, truth {truth}, {N_BOOT} replicates, "
        f"{LEVEL:.0%} intervals\n"
    )
    print("| metric | true Avg | percentile coverage | BCa coverage | mean width (percentile) |")
    print("|---|---:|---:|---:|---:|")
    for m in range(RHO.shape[0]):
        shown = "drawn" if drawn else f"{true_avg(RHO)[m]:.3f}"
        print(
            f"| m{m} | {shown} | {covered['percentile'][m] / n_benchmarks:.1%} | "
            f"{covered['BCa'][m] / n_benchmarks:.1%} | "
            f"{np.mean([w[m] for w in widths['percentile']]):.3f} |"
        )
    p, hit = np.concatenate(predicted), np.concatenate(truly_first)
    print("\n| P(rank 1) predicted | cases | mean predicted | observed truly first |")
    print("|---|---:|---:|---:|")
    edges = [0.0, 0.05, 0.2, 0.4, 0.6, 0.8, 0.95, 1.0001]
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        inside = (p >= low) & (p < high)
        if inside.any():
            print(
                f"| {low:.2f}–{min(high, 1):.2f} | {inside.sum()} | {p[inside].mean():.3f} | "
                f"{hit[inside].mean():.3f} |"
            )
    print(f"\nBrier score of P(rank 1): {np.mean((p - hit) ** 2):.4f}")


def degenerate_coverage(n_benchmarks: int, seed: int) -> None:
    """Print, per design of ``DESIGNS`` and metric, the percentile coverage of the Avg over
    its own replicates and over the replicates where every metric is defined (the earlier
    redraws' conditioning), the mean share of replicates without its Avg, and how often it
    is flagged (``UNDEFINED_LIMIT``)."""
    print(
        f"\n{n_benchmarks} simulated benchmarks per design, truth fixed (RHO), {N_BOOT} "
        f"replicates, {LEVEL:.0%} percentile intervals\n"
    )
    print(
        "| design | metric | true Avg | coverage | coverage if all defined | "
        "undefined share | flagged |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    tail = (1 - LEVEL) / 2
    for design in DESIGNS:
        truth = design_truth(design)
        rng = np.random.default_rng(seed)  # the same benchmarks in every design
        covered, conditioned = np.zeros(len(truth)), np.zeros(len(truth))
        undefined, flagged = np.zeros(len(truth)), np.zeros(len(truth))
        for b in range(n_benchmarks):
            result = bootstrap_averages(simulate(rng, RHO, design), N_BOOT, seed + b, LEVEL)
            covered += (result.low <= truth) & (result.high >= truth)
            every = np.isfinite(result.replicates).all(axis=0)
            low, high = np.quantile(result.replicates[:, every], [tail, 1 - tail], axis=1)
            conditioned += (low <= truth) & (high >= truth)
            undefined += result.undefined
            flagged += result.flagged
        for m, name in enumerate(["m0", "m1", "m2", "m3", "flat"][: len(truth)]):
            print(
                f"| {design} | {name} | {truth[m]:.3f} | {covered[m] / n_benchmarks:.1%} | "
                f"{conditioned[m] / n_benchmarks:.1%} | {undefined[m] / n_benchmarks:.3f} | "
                f"{flagged[m] / n_benchmarks:.1%} |"
            )
    print(f"\nflagged: Avg undefined in more than {UNDEFINED_LIMIT:.0%} of the replicates")


META_SIZES = (14, 50, 30, 216, 8, 30, 30)
"""Rated speakers of PathBench's seven corpora, each one's largest column
(``PATHBENCH_SPEAKERS``): the n of the column the meta-analysis takes by default."""


def meta_coverage(n_sims: int, seed: int, mean_r: float = 0.5) -> None:
    """Print how often each meta-analysis interval (``META_TESTS``) covers the mean
    correlation, for k = 3 (TORGO, UASpeech, EasyCall sizes) and k = 7 (PathBench's)
    corpora and between-corpus spreads τ on the z scale."""
    rng = np.random.default_rng(seed)
    print(f"\n{n_sims} simulated meta-analyses per row, mean r {mean_r}, {LEVEL:.0%} CIs\n")
    print("| k | τ (z scale) | " + " | ".join(f"{t} coverage" for t in META_TESTS) + " |")
    print("|---:|---:|" + "---:|" * len(META_TESTS))
    for sizes in ((8, 14, 30), META_SIZES):
        for tau in (0.0, 0.1, 0.2, 0.3):
            hits = np.zeros(len(META_TESTS))
            for _ in range(n_sims):
                rho = np.tanh(np.arctanh(mean_r) + tau * rng.normal(size=len(sizes)))
                r = []
                for n, p in zip(sizes, rho, strict=True):
                    y = rng.normal(size=n)
                    r.append(np.corrcoef(p * y + np.sqrt(1 - p * p) * rng.normal(size=n), y)[0, 1])
                for t, test in enumerate(META_TESTS):
                    fit = meta_analysis(r, sizes, LEVEL, test)
                    hits[t] += fit.ci_low <= mean_r <= fit.ci_high
            print(
                f"| {len(sizes)} | {tau} | " + " | ".join(f"{h / n_sims:.1%}" for h in hits) + " |"
            )


PATHBENCH_SPEAKERS = {
    "UASpeech": {"Word MC": 14, "Word EX": 14},
    "NeuroVoz": {"Sentence MC": 50, "Sentence EX": 50},
    "EasyCall": {"Word MC": 30, "Word EX": 30, "Sentence MC": 30, "Sentence EX": 30},
    "COPAS": {
        "Word MC": 11,
        "Word EX": 11,
        "Word Full": 216,
        "Sentence MC": 82,
        "Sentence EX": 82,
        "Sentence Full": 88,
    },
    "TORGO": {"Word MC": 8, "Word EX": 8, "Sentence MC": 8, "Sentence EX": 8},
    "MDSC": {"Command MC": 30, "Command EX": 30},
    "YT": {"Sentence Full": 30},
}
"""Rated speakers per PathBench column: the published spk2score files (tests/fixtures/
kaldi-metadata) for the five corpora it holds; MDSC and YT, not in the fixtures, at 30."""


def pathbench_shape(rng: np.random.Generator) -> Design:
    """13 metrics over PathBench's 21 columns, a corpus's columns over its first speakers."""
    metrics = [f"m{i:02d}" for i in range(13)]
    columns, cells = [], []
    for corpus, sizes in PATHBENCH_SPEAKERS.items():
        y = rng.normal(size=max(sizes.values()))
        for task, n in sizes.items():
            label = f"{corpus} {task}"
            columns.append((label, corpus))
            ids = [f"{corpus}{i:03d}" for i in range(n)]
            for metric in metrics:
                cells.append((metric, label, ids, 0.6 * y[:n] + rng.normal(size=n), y[:n]))
    return design_of(metrics, columns, cells)


def speed(runs: int = 5) -> None:
    """Print the minimum wall time of ``runs`` bootstraps of PathBench's full shape, per
    interval method (the replicates are the same; BCa adds the jackknife), at the
    simulation's replicates and at the stage's default."""
    design = pathbench_shape(np.random.default_rng(0))
    for n_boot in (N_BOOT, DEFAULT_N_BOOT):
        for method in METHODS:
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                bootstrap_averages(design, n_boot, 1, LEVEL, method)
                times.append(time.perf_counter() - start)
            print(
                f"PathBench's shape (13 rows, 21 columns), {n_boot} replicates, {method}: "
                f"min {min(times):.2f} s, max {max(times):.2f} s over {runs} runs"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=int, default=500)
    parser.add_argument("--seed", type=int, default=20260101)
    parser.add_argument(
        "--only", choices=["speed", "coverage", "degenerate", "meta"], help="one part only"
    )
    args = parser.parse_args()
    if args.only in (None, "speed"):
        speed()
    if args.only in (None, "coverage"):
        coverage(args.benchmarks, args.seed, drawn=False)
        coverage(args.benchmarks, args.seed, drawn=True)
    if args.only in (None, "degenerate"):
        degenerate_coverage(args.benchmarks, args.seed)
    if args.only in (None, "meta"):
        meta_coverage(4 * args.benchmarks, args.seed)


if __name__ == "__main__":
    main()
