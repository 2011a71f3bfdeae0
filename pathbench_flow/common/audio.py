"""Audio loading shared by every stage.

All evaluators see mono float64 audio at :data:`pathbench_flow.SAMPLE_RATE`; converting here, once,
keeps resampling out of the evaluators and makes every stage see identical samples, the same
samples PathBench's ``librosa.load(sr=16000)`` gives.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import soundfile as sf

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.staging import located


def load_audio(
    path: str | Path, start: float = 0.0, end: float = -1.0, sample_rate: int = SAMPLE_RATE
) -> np.ndarray:
    """Read ``path`` between ``start`` and ``end`` seconds (``end < 0``: to the end of the file).

    The samples equal ``librosa.load(path, sr=sample_rate, mono=True, offset=start,
    duration=end - start)`` (float32, soxr resampling, channels averaged, segment bounds
    truncated to whole native frames), widened to float64: PathBench loads audio that way, so
    every measure sees the samples PathBench's measures saw, also for files stored at another
    rate and for ``segments``. A whole mono file already at ``sample_rate`` is read directly
    (the same float32 decode without librosa's overhead; tests prove the two identical).
    """
    path = located(path)
    duration = None if end < 0 else end - start
    if duration is not None and duration <= 0:
        return np.empty(0)
    with sf.SoundFile(str(path)) as handle:
        if (
            start == 0
            and duration is None
            and handle.samplerate == sample_rate
            and handle.channels == 1
        ):
            return handle.read(dtype="float32").astype(np.float64)
    import librosa  # imported here: it costs a second, and most corpora are 16 kHz files

    audio, _ = librosa.load(
        str(path), sr=sample_rate, mono=True, offset=start, duration=duration, dtype=np.float32
    )
    return np.ascontiguousarray(audio, dtype=np.float64)


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
