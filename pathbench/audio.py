"""Audio loading shared by every stage.

All evaluators see mono float64 audio at :data:`pathbench.SAMPLE_RATE`; converting here, once,
keeps resampling out of the evaluators and makes every stage see identical samples.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

from pathbench import SAMPLE_RATE


def load_audio(
    path: str | Path, start: float = 0.0, end: float = -1.0, sample_rate: int = SAMPLE_RATE
) -> np.ndarray:
    """Read ``path`` between ``start`` and ``end`` seconds (``end < 0``: to the end of the file).

    Reads only the requested frames from disk, down-mixes by averaging channels and resamples
    with a polyphase filter, which is deterministic (unlike FFT resampling of odd lengths).
    """
    with sf.SoundFile(str(path)) as handle:
        native_rate = handle.samplerate
        first = max(0, int(round(start * native_rate)))
        last = handle.frames if end < 0 else min(handle.frames, int(round(end * native_rate)))
        handle.seek(first)
        data = handle.read(max(0, last - first), dtype="float64", always_2d=True)
    mono = data.mean(axis=1)
    if native_rate != sample_rate:
        divisor = np.gcd(native_rate, sample_rate)
        mono = resample_poly(mono, sample_rate // divisor, native_rate // divisor)
    return np.ascontiguousarray(mono, dtype=np.float64)


def cut(
    audio: np.ndarray, start_s: float, end_s: float, sample_rate: int = SAMPLE_RATE
) -> np.ndarray:
    """Slice already-loaded audio by times relative to its first sample (used by trimming)."""
    first = max(0, int(round(start_s * sample_rate)))
    last = min(len(audio), int(round(end_s * sample_rate)))
    return audio[first : max(first, last)]


@lru_cache(maxsize=64)
def load_shared(path: str, start: float = 0.0, end: float = -1.0) -> np.ndarray:
    """:func:`load_audio` memoised per job, returned read-only.

    A job scores an utterance in several variants (raw, trimmed) and reuses reference
    recordings across test utterances; the cache makes each of those one decode.
    """
    audio = load_audio(path, start, end)
    audio.setflags(write=False)
    return audio
