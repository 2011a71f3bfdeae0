"""Regenerates .test/data/mine, the tiny dataset of the tests' config, from espeak-ng speech.

The dataset is committed so that a fresh clone can run `.test/config/config.yaml` without a
build step; this script only says how it was made and remakes it: ``python .test/make_data.py``
rewrites it in place, ``python .test/make_data.py OUT`` writes it to OUT instead. The same
espeak-ng release gives the same bytes (its synthesis, the polyphase resampling and the PCM16
quantisation are all deterministic); another release changes the voices' samples, and so the
WAV files and the scores, but not the Kaldi files (tests/test_committed_dataset.py checks both).

Four rated speakers, so that every correlation has the three speakers it needs with one to
spare; their speaking rate rises with their rating, so `wpm` has something to find. Each says
two one-word prompts: 16 kHz PCM16 costs 32 kB per second, and the whole set stays near 100 kB.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.testing.kaldi_builder import write_kaldi, write_lines

ESPEAK_NG_RELEASE = "1.51"
"""The espeak-ng release that made the committed WAV files."""
TARGET = Path(__file__).resolve().parent / "data" / "mine"
PROMPTS = {"go": "Go.", "yes": "Yes."}
EDGE = 0.01
"""Speech starts and ends where the signal first and last exceeds this fraction of its peak
(-40 dB): below it espeak-ng writes only silence and the female voices' breath noise."""
MARGIN_S = 0.02
"""Silence kept on each side, so that the recordings start and end like cut recordings do."""


@dataclass(frozen=True)
class Speaker:
    """One speaker's metadata and the espeak-ng voice that stands in for them."""

    speaker_id: str
    gender: str
    age: int
    score: int
    voice: str
    words_per_minute: int
    pitch: int


SPEAKERS = (
    Speaker("F01", "f", 67, 41, "en-us+f1", 160, 55),
    Speaker("F02", "f", 49, 72, "en-us+f3", 200, 60),
    Speaker("M01", "m", 58, 57, "en-us+m3", 180, 35),
    Speaker("M02", "m", 71, 88, "en-us+m1", 220, 45),
)
"""In the sorted order Kaldi's files keep."""


def espeak_release() -> str:
    """The installed espeak-ng's release, from ``eSpeak NG text-to-speech: 1.51  Data at: …``."""
    banner = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True, check=True)
    return banner.stdout.split(":")[1].split()[0]


def synthesise(text: str, speaker: Speaker) -> np.ndarray:
    """``speaker``'s voice saying ``text`` at 16 kHz, cut to the speech and its margins."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "speech.wav"
        command = [
            "espeak-ng",
            "-v",
            speaker.voice,
            "-s",
            str(speaker.words_per_minute),
            "-p",
            str(speaker.pitch),
            "-w",
            str(path),
            text,
        ]
        subprocess.run(command, check=True)
        audio, rate = sf.read(path, dtype="float64")
    divisor = np.gcd(rate, SAMPLE_RATE)
    audio = resample_poly(audio, SAMPLE_RATE // divisor, rate // divisor)
    loud = np.flatnonzero(np.abs(audio) > EDGE * np.max(np.abs(audio)))
    margin = round(MARGIN_S * SAMPLE_RATE)
    return audio[max(loud[0] - margin, 0) : loud[-1] + 1 + margin]


def write_dataset(target: Path) -> None:
    """The whole dataset in ``target``, with the wav.scp paths relative to it."""
    (target / "wav").mkdir(parents=True, exist_ok=True)
    wav, text, utt2spk = [], [], []
    for speaker in SPEAKERS:
        for key, prompt in PROMPTS.items():
            utt = f"{speaker.speaker_id}_{key}"
            relative = f"wav/{utt}.wav"
            sf.write(target / relative, synthesise(prompt, speaker), SAMPLE_RATE, "PCM_16")
            wav.append(f"{utt} {relative}")
            text.append(f"{utt} {prompt}")
            utt2spk.append(f"{utt} {speaker.speaker_id}")
    genders_and_scores = {s.speaker_id: (s.gender, str(s.score)) for s in SPEAKERS}
    write_kaldi(target, wav, text, utt2spk, genders_and_scores, language="en")
    write_lines(target / "spk2age", [f"{s.speaker_id} {s.age}" for s in SPEAKERS])


if __name__ == "__main__":
    if espeak_release() != ESPEAK_NG_RELEASE:
        print(
            f"espeak-ng {espeak_release()} is not {ESPEAK_NG_RELEASE}, which made the committed "
            "WAV files: the new ones will differ from them",
            file=sys.stderr,
        )
    write_dataset(Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET)
