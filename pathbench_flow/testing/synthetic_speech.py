"""Vowel-like audio that any machine rebuilds bit for bit from a short recipe.

Values frozen from a run of PathBench must be recomputable where PathBench is not installed,
from the same samples. espeak-ng's speech changes with its version and real recordings cannot
be committed in bulk, but a harmonic source shaped by vowel formants, written as 16-bit PCM,
is the same everywhere: the arithmetic is plain numpy, and rounding to integers absorbs the
last-bit differences between maths libraries. :func:`pcm_digest` lets a test prove it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

FORMANTS: Mapping[str, tuple[float, float, float]] = {
    "a": (800.0, 1200.0, 2500.0),
    "e": (500.0, 1900.0, 2600.0),
    "i": (300.0, 2300.0, 3000.0),
    "o": (500.0, 900.0, 2400.0),
    "u": (320.0, 800.0, 2400.0),
    "_": (500.0, 1500.0, 2500.0),  # a pause: silent, formants only carry the transition
}
"""First three formants (Hz) of each vowel symbol of a recipe."""
BANDWIDTH_HZ = 90.0


def vowels(
    sequence: str,
    seconds_per_vowel: float = 0.25,
    f0: float = 120.0,
    sample_rate: int = 16000,
    seed: int = 0,
    noise: float = 0.003,
) -> np.ndarray:
    """16-bit samples of ``sequence`` (vowels of :data:`FORMANTS`, ``_`` for a pause).

    Formants glide linearly between vowel centres, the pitch falls slowly with a 3 Hz
    vibrato, each vowel rises and decays with a raised cosine, and seeded noise keeps pauses
    from being digital silence. Peak level is half of full scale.
    """
    n = int(round(len(sequence) * seconds_per_vowel * sample_rate))
    t = np.arange(n) / sample_rate
    centres = (np.arange(len(sequence)) + 0.5) * seconds_per_vowel
    tracks = np.array([FORMANTS[v] for v in sequence])
    formants = np.stack([np.interp(t, centres, tracks[:, k]) for k in range(3)])
    pitch = f0 * (1.0 - 0.1 * t / max(t[-1], 1e-9)) * (1.0 + 0.03 * np.sin(2 * np.pi * 3.0 * t))
    phase = 2 * np.pi * np.cumsum(pitch) / sample_rate
    signal = np.zeros(n)
    for harmonic in range(1, int(0.45 * sample_rate / f0) + 1):
        frequency = harmonic * pitch
        gain = sum(1.0 / (1.0 + ((frequency - formants[k]) / BANDWIDTH_HZ) ** 2) for k in range(3))
        signal += gain * np.sin(harmonic * phase) / harmonic
    within = (t % seconds_per_vowel) / seconds_per_vowel
    voiced = np.array([v != "_" for v in sequence])[
        np.minimum((t // seconds_per_vowel).astype(int), len(sequence) - 1)
    ]
    signal *= np.where(voiced, 0.5 - 0.5 * np.cos(2 * np.pi * within), 0.0)
    signal = 0.5 * signal / np.abs(signal).max()
    signal += noise * np.random.default_rng(seed).standard_normal(n)
    return np.round(np.clip(signal, -1.0, 1.0) * 32767).astype(np.int16)


def write(path: Path, recipe: Mapping[str, Any]) -> Path:
    """Write the WAV a recipe (:func:`vowels` keyword arguments) describes."""
    samples = vowels(**recipe)
    sf.write(str(path), samples, int(recipe.get("sample_rate", 16000)), subtype="PCM_16")
    return path


def pcm_digest(path: Path) -> str:
    """SHA-256 of a WAV's samples as 16-bit integers, and its rate: equal digests mean
    identical input to both implementations, whatever wrote the file's header."""
    samples, rate = sf.read(str(path), dtype="int16", always_2d=True)
    digest = hashlib.sha256(f"{rate}:{samples.shape}".encode())
    digest.update(np.ascontiguousarray(samples, dtype="<i2").tobytes())
    return digest.hexdigest()
