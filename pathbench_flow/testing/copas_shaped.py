"""Datasets shaped like COPAS's word task, the shape no open-set fold can be built on.

Shaped like `tests/fixtures/kaldi-metadata/copas/pathological/word/balanced`: Dutch words,
speaker ids C16/D72 (control, dysarthric), one recording per speaker (``<speaker>_A18``, the
A18 word list) cut into words by ``segments``, utterance ids ``<recording>_<nnn>``, ages in
``spk2age`` and the task's intelligibility score in ``spk2score``. Every speaker's words come
from one recording, so every speaker has one recording group.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile as sf

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.testing.kaldi_builder import write_kaldi, write_lines

# speaker: (gender, age, A18 score)
SPEAKERS = {"C16": ("m", 14, 17), "C28": ("f", 7, 17), "D63": ("m", 35, 9), "D72": ("f", 52, 4)}
WORDS = ("sop", "geep", "diet", "zoef")
GAP_S = 0.4


def write_copas_words(root: Path, speech: Callable[[str, int], np.ndarray]) -> Path:
    """Write the dataset at ``root``; ``speech(word, k)`` is speaker ``k``'s audio of ``word``
    at 16 kHz. Words are separated by :data:`GAP_S` of quiet noise in each recording."""
    (root / "wav").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20260101)
    wav, text, utt2spk, segments = [], [], [], []
    for k, speaker in enumerate(SPEAKERS):
        recording = f"{speaker}_A18"
        gap = np.zeros(int(GAP_S * SAMPLE_RATE))
        pieces, start = [gap], GAP_S
        for n, word in enumerate(WORDS, start=1):
            audio = speech(word, k)
            utt = f"{recording}_{n:03d}"
            end = start + len(audio) / SAMPLE_RATE
            segments.append(f"{utt} {recording} {start:.3f} {end:.3f}")
            text.append(f"{utt} {word}")
            utt2spk.append(f"{utt} {speaker}")
            pieces += [audio, gap]
            start = end + GAP_S
        signal = np.concatenate(pieces)
        signal += rng.normal(0.0, 1e-3, signal.size)
        sf.write(root / "wav" / f"{recording}.wav", signal, SAMPLE_RATE, subtype="PCM_16")
        wav.append(f"{recording} wav/{recording}.wav")
    scores = {spk: (gender, str(score)) for spk, (gender, _, score) in SPEAKERS.items()}
    write_kaldi(root, wav, text, utt2spk, scores, language="nl")
    write_lines(root / "segments", segments)
    write_lines(root / "spk2age", [f"{spk} {age}" for spk, (_, age, _) in SPEAKERS.items()])
    return root
