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


def write_tone(path: Path, seconds: float, label: str) -> None:
    """A 16 kHz tone whose file carries ``label`` as its title: the samples of every file are
    the same, the bytes differ, as those of real recordings do (validation refuses a reference
    set holding byte-identical copies of its test set's files)."""
    with sf.SoundFile(path, "w", 16000, 1, subtype="PCM_16") as handle:
        handle.title = label
        handle.write(tone(seconds))


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


def build_dataset(root: Path, *, segments: bool = False, id_prefix: str = "") -> Path:
    """Two speakers × two utterances, 1 s tones; with ``segments`` the utterances are cut from
    one 2 s recording per speaker. No two files are byte-identical (see :func:`write_tone`).
    ``id_prefix`` starts every utterance id (not the file names): a reference set built beside
    a test set needs ids of its own, since one id names one recording across both."""
    (root / "wav").mkdir(parents=True, exist_ok=True)
    wav, text, utt2spk, seg = [], [], [], []
    for spk in SPEAKERS:
        if segments:
            rec = f"{spk}_rec"
            write_tone(root / "wav" / f"{rec}.wav", 2.0, f"{root.name} {rec}")
            wav.append(f"{rec} wav/{rec}.wav")
        for k, sentence in enumerate(TEXTS):
            name = f"{spk}_u{k}"
            utt = f"{id_prefix}{name}"
            if segments:
                seg.append(f"{utt} {spk}_rec {k * 1.0:.2f} {k * 1.0 + 0.9:.2f}")
            else:
                write_tone(root / "wav" / f"{name}.wav", 1.0, f"{root.name} {name}")
                wav.append(f"{utt} wav/{name}.wav")
            text.append(f"{utt} {sentence}")
            utt2spk.append(f"{utt} {spk}")
    write_kaldi(root, wav, text, utt2spk, SPEAKERS)
    if segments:
        write_lines(root / "segments", seg)
    return root


def build_tone_dataset(root: Path) -> Path:
    """Two speakers × two texts, each utterance its own 1 s tone: unlike :func:`build_dataset`
    no two utterances have the same samples, so an analysis keyed by the audio computes each."""
    (root / "wav").mkdir(parents=True)
    wav, text, utt2spk = [], [], []
    for k, (speaker, sentence) in enumerate((s, t) for s in SPEAKERS for t in TEXTS):
        utt = f"{speaker}_u{k}"
        sf.write(root / "wav" / f"{utt}.wav", tone(1.0, freq=150.0 + 40 * k), 16000)
        wav.append(f"{utt} wav/{utt}.wav")
        text.append(f"{utt} {sentence}")
        utt2spk.append(f"{utt} {speaker}")
    write_kaldi(root, wav, text, utt2spk, SPEAKERS)
    return root


def references_of(
    dataset: Dataset,
    utt_id: str,
    kind: str,
    reference: Dataset | None = None,
    shared_speaker_ids: str = "same_speaker",
) -> list[ReferenceAudio]:
    """The references the scoring stage selects for ``utt_id`` of a validated dataset."""
    own = index_by_text(dataset.utterances.values())
    others = index_by_text(reference.utterances.values()) if reference is not None else {}
    return select_references(dataset.utterances[utt_id], own, others, kind, shared_speaker_ids)
