"""Throughput of the cepstral measures, in seconds of audio per CPU second (x real time).

Goals: PathBench CPP >= 1000x real time; numpy CPPS >= 3x real time and >= 100x faster than
Praat's CPPS (cpps_praat), which sorts ~300 000 pairwise slopes per 2-ms frame, twice.

Run: ``python benchmarks/bench_cepstral.py [--seconds 60] [--praat-seconds 1]``. The audio is
the synthetic speaker of bench_signal_measures.py (voiced syllables, pauses, background noise),
measured per 5-s utterance as the workflow does. ``--praat-seconds`` also times cpps_praat on
that much of it (Praat needs tens of CPU seconds per second). CPU time
(``time.process_time``) is used because the machines are shared; set
``OPENBLAS_NUM_THREADS=1`` there, as CPP's matrix product otherwise spins idle BLAS threads.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_signal_measures import synthetic_utterance, throughput

from pathbench import SAMPLE_RATE
from pathbench.measures.cepstral import cpp, cpps, cpps_praat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="audio to synthesise")
    parser.add_argument(
        "--praat-seconds", type=float, default=0.0, help="audio to time cpps_praat on (0: skip)"
    )
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    utterances = [synthetic_utterance(rng) for _ in range(int(np.ceil(args.seconds / 5.0)))]
    total = sum(len(u) for u in utterances) / SAMPLE_RATE
    cpps(utterances[0][:SAMPLE_RATE], SAMPLE_RATE)  # one-off tables (grid, smoothing matrix)
    print(f"{total:.0f} s of synthetic audio in {len(utterances)} utterances")
    speeds = {}
    for measure in (cpp, cpps):
        speeds[measure.__name__] = throughput(
            lambda measure=measure: [measure(u, SAMPLE_RATE) for u in utterances], total
        )
        print(f"{measure.__name__:12s} {speeds[measure.__name__]:10.1f} x real time")
    if args.praat_seconds > 0:
        excerpt = np.concatenate(utterances)[: int(args.praat_seconds * SAMPLE_RATE)]
        praat = throughput(lambda: cpps_praat(excerpt, SAMPLE_RATE), excerpt.size / SAMPLE_RATE)
        print(f"{'cpps_praat':12s} {praat:10.3f} x real time")
        print(f"cpps is {speeds['cpps'] / praat:.0f}x faster than cpps_praat")


if __name__ == "__main__":
    main()
