"""Builds small, valid Kaldi dataset directories that a test then breaks in one place."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from pathbench_flow.data.dataset import Dataset
from pathbench_flow.data.references import ReferenceAudio, index_by_text, select_references

SPEAKERS = {"spk1": ("f", "80"), "spk2": ("m", "N/A")}
TEXTS = ("The cat sat.", "A dog ran!")


def tone(seconds: float = 1.0, rate: int = 16000, freq: float = 220.0) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return 0.3 * np.sin(2 * np.pi * freq * t)


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def write_kaldi(
    root: Path,
    wav: list[str],
    text: list[str],
    utt2spk: list[str],
    speakers: dict[str, tuple[str, str]],
    language: str = "en",
) -> None:
    """The files every dataset has, from their lines; ``speakers`` maps a speaker to its
    (gender, score) for spk2gender and spk2score."""
    write_lines(root / "wav.scp", wav)
    write_lines(root / "text", text)
    write_lines(root / "utt2spk", utt2spk)
    write_lines(root / "spk2score", [f"{spk} {score}" for spk, (_, score) in speakers.items()])
    write_lines(root / "spk2gender", [f"{spk} {gender}" for spk, (gender, _) in speakers.items()])
    write_lines(root / "language", [language])


def build_dataset(root: Path, *, segments: bool = False) -> Path:
    """Two speakers × two utterances, 1 s tones; with ``segments`` the utterances are cut from
    one 2 s recording per speaker."""
    (root / "wav").mkdir(parents=True, exist_ok=True)
    wav, text, utt2spk, seg = [], [], [], []
    for spk in SPEAKERS:
        if segments:
            rec = f"{spk}_rec"
            sf.write(root / "wav" / f"{rec}.wav", tone(2.0), 16000, subtype="PCM_16")
            wav.append(f"{rec} wav/{rec}.wav")
        for k, sentence in enumerate(TEXTS):
            utt = f"{spk}_u{k}"
            if segments:
                seg.append(f"{utt} {spk}_rec {k * 1.0:.2f} {k * 1.0 + 0.9:.2f}")
            else:
                sf.write(root / "wav" / f"{utt}.wav", tone(1.0), 16000, subtype="PCM_16")
                wav.append(f"{utt} wav/{utt}.wav")
            text.append(f"{utt} {sentence}")
            utt2spk.append(f"{utt} {spk}")
    write_kaldi(root, wav, text, utt2spk, SPEAKERS)
    if segments:
        write_lines(root / "segments", seg)
    return root


def references_of(
    dataset: Dataset, utt_id: str, kind: str, reference: Dataset | None = None
) -> list[ReferenceAudio]:
    """The references the scoring stage selects for ``utt_id`` of a validated dataset."""
    own = index_by_text(dataset.utterances.values())
    others = index_by_text(reference.utterances.values()) if reference is not None else {}
    return select_references(dataset.utterances[utt_id], own, others, kind)
