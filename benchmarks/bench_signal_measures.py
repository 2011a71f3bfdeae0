"""Throughput of the signal measures, in seconds of audio per CPU second (x real time).

Run: ``python benchmarks/bench_signal_measures.py [--seconds 60]``. The audio is a synthetic
speaker: 5-s utterances of voiced syllables (vowel formants, drifting F0) with pauses and
background noise, so that voicing, formant and peak picking all do real work. CPU time
(``time.process_time``) is used because the benchmark machines are shared.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from scipy.signal import lfilter

from pathbench import SAMPLE_RATE
from pathbench.measures.pitch import f0_range, std_pitch
from pathbench.measures.speech_rate import pause_fraction, speech_rate
from pathbench.measures.vsa import vsa
from pathbench.measures.wada_snr import g_table, wada_snr

UTTERANCE_S = 5.0
SYLLABLE_S = 0.25
VOWELS = [(342, 2322), (588, 1952), (768, 1333), (378, 997), (500, 1500)]


def synthetic_utterance(rng: np.random.Generator) -> np.ndarray:
    """One utterance: syllables at 4/s, each a random vowel; a 0.5 s pause mid-way."""
    n = int(SYLLABLE_S * SAMPLE_RATE)
    syllables = []
    for index in range(int(UTTERANCE_S / SYLLABLE_S)):
        if index == UTTERANCE_S / SYLLABLE_S / 2:
            syllables.append(np.zeros(2 * n))
            continue
        f0 = rng.uniform(100, 140) * np.linspace(1.05, 0.95, n)
        phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
        signal = sum(np.sin(k * phase) / k for k in range(1, 25))
        for hz, bandwidth in zip(VOWELS[rng.integers(len(VOWELS))], (80, 100), strict=True):
            radius = np.exp(-np.pi * bandwidth / SAMPLE_RATE)
            b1 = 2 * radius * np.cos(2 * np.pi * hz / SAMPLE_RATE)
            signal = lfilter([1 - b1 + radius**2], [1, -b1, radius**2], signal)
        envelope = np.sin(np.pi * np.arange(n) / n) ** 2
        syllables.append(signal * envelope / np.abs(signal).max())
    speech = 0.3 * np.concatenate(syllables)
    return speech + 0.003 * rng.standard_normal(speech.size)


def throughput(measure: Callable[[], object], audio_seconds: float) -> float:
    start = time.process_time()
    measure()
    return audio_seconds / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="audio to synthesise")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    utterances = [synthetic_utterance(rng) for _ in range(int(np.ceil(args.seconds / 5.0)))]
    total = sum(len(u) for u in utterances) / SAMPLE_RATE
    g_table()  # one-off derivation of the WADA table (tens of ms), not part of steady state

    def per_utterance(measure: Callable[[np.ndarray, int], float]) -> Callable[[], object]:
        return lambda: [measure(u, SAMPLE_RATE) for u in utterances]

    results = {
        "std_pitch": per_utterance(std_pitch),
        "f0_range (speaker)": lambda: f0_range(utterances, SAMPLE_RATE),
        "speech_rate": per_utterance(speech_rate),
        "pause_fraction": per_utterance(pause_fraction),
        "wada_snr": per_utterance(wada_snr),
        "vsa (speaker)": lambda: vsa(utterances, SAMPLE_RATE, "en", None),
    }
    print(f"{total:.0f} s of synthetic audio in {len(utterances)} utterances")
    for name, measure in results.items():
        print(f"{name:20s} {throughput(measure, total):10.0f} x real time")


if __name__ == "__main__":
    main()
