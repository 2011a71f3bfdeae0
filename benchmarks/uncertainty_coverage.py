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
    METHODS,
    Design,
    bootstrap_averages,
    design_of,
    rank_summary,
)

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


def simulate(rng: np.random.Generator, rho: np.ndarray) -> Design:
    """One simulated benchmark with population r ``rho`` (metric × column)."""
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
        for m, metric in enumerate(metrics):
            cells.append((metric, label, [ids[i] for i in keep], x[keep, m], y[keep]))
    return design_of(metrics, list(zip(COLUMNS, CORPUS, strict=True)), cells)


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
    interval method (the replicates are the same; BCa adds the jackknife)."""
    design = pathbench_shape(np.random.default_rng(0))
    for method in METHODS:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            bootstrap_averages(design, N_BOOT, 1, LEVEL, method)
            times.append(time.perf_counter() - start)
        print(
            f"PathBench's shape (13 rows, 21 columns), {N_BOOT} replicates, {method}: "
            f"min {min(times):.2f} s, max {max(times):.2f} s over {runs} runs"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=int, default=500)
    parser.add_argument("--seed", type=int, default=20260101)
    args = parser.parse_args()
    speed()
    coverage(args.benchmarks, args.seed, drawn=False)
    coverage(args.benchmarks, args.seed, drawn=True)


if __name__ == "__main__":
    main()
