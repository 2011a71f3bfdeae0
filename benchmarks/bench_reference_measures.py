"""Timing of the reference-based measures (P-ESTOI, NAD) against their speed goals.

Goals: P-ESTOI of one 0.2 s test against three 0.2 s references well under 0.05 s; NAD with
MFCCs at least 200x real time. Each case is timed twice: from audio (every feature computed
in the call) and with the reference side cached, which is how the workflow runs it. The first
call, which includes numba's JIT compilation (or loading its on-disk cache), is reported apart.

Run: ``python benchmarks/bench_reference_measures.py [--repeats N]``. On a shared machine set
``OPENBLAS_NUM_THREADS=1``: multi-threaded BLAS on busy cores inflates the small matrix
products here by an order of magnitude.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.measures.nad import nad, nad_features, nad_from_audio
from pathbench_flow.measures.pestoi import (
    p_estoi,
    p_estoi_from_audio,
    pestoi_features,
    pestoi_template,
)

PESTOI_GOAL_S = 0.05
NAD_GOAL_REAL_TIME = 200.0


def modulated_noise(seconds: float, seed: int) -> np.ndarray:
    """Noise with a 4 Hz syllable-like envelope: the measures' cost depends on length only."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    noise = np.random.default_rng(seed).standard_normal(t.size)
    return noise * (0.1 + np.sin(np.pi * 4 * t) ** 2)


def timed(call: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(first call, median of ``repeats`` further calls) in seconds."""
    start = time.perf_counter()
    call()
    first = time.perf_counter() - start
    durations = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        durations.append(time.perf_counter() - start)
    return first, float(np.median(durations))


def report(name: str, first: float, median: float, verdict: str) -> None:
    """One result line."""
    print(f"{name:<44} first {first * 1e3:8.2f} ms  median {median * 1e3:8.3f} ms  {verdict}")


def bench_pestoi(repeats: int) -> None:
    """P-ESTOI: one 0.2 s test against three 0.2 s references."""
    test = modulated_noise(0.2, 0)
    references = [modulated_noise(0.2, seed) for seed in (1, 2, 3)]
    template = pestoi_template([pestoi_features(r) for r in references])
    cases = {
        "P-ESTOI 0.2 s vs 3 x 0.2 s, from audio": lambda: p_estoi_from_audio(test, references),
        "P-ESTOI 0.2 s, template cached": lambda: p_estoi(pestoi_features(test), template),
    }
    for name, call in cases.items():
        first, median = timed(call, repeats)
        verdict = "ok" if median < PESTOI_GOAL_S else f"SLOWER than {PESTOI_GOAL_S} s"
        report(name, first, median, verdict)


def bench_nad(repeats: int, seconds: float = 3.0) -> None:
    """NAD with MFCCs: a ``seconds`` test against three references of the same length."""
    test = modulated_noise(seconds, 0)
    references = [modulated_noise(seconds, seed) for seed in (1, 2, 3)]
    reference_features = [nad_features(r) for r in references]
    cases = {
        f"NAD {seconds:g} s vs 3 x {seconds:g} s, from audio": lambda: nad_from_audio(
            test, references
        ),
        f"NAD {seconds:g} s, reference features cached": lambda: nad(
            nad_features(test), reference_features
        ),
    }
    for name, call in cases.items():
        first, median = timed(call, repeats)
        speed = seconds / median
        verdict = f"{speed:6.0f}x real time " + ("ok" if speed >= NAD_GOAL_REAL_TIME else "SLOW")
        report(name, first, median, verdict)


def main() -> None:
    """Run both benchmarks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50, help="timed calls per case")
    repeats = parser.parse_args().repeats
    bench_pestoi(repeats)
    bench_nad(repeats)


if __name__ == "__main__":
    main()
