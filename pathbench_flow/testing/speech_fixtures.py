"""Speech for the trimming and recognition tests: espeak-ng sentences and pocketsphinx-testdata.

Tests need real speech with known words and known boundaries. espeak-ng (Debian package
``espeak-ng``) synthesises it from text, and its clean output gives the true speech
boundaries; ``pocketsphinx-testdata`` ships read speech (LibriVox, a card-game grammar) with
transcriptions. When either is missing the test fails in CI (``CI=true``), where the packages
are installed, and is skipped with the reason elsewhere.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from scipy.signal import resample_poly

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.testing import RECORDINGS
from pathbench_flow.trimming.sphinx import SphinxModels

TESTDATA = Path("/usr/share/pocketsphinx/test/data")
FIXTURES = RECORDINGS

SENTENCES = [
    "the quick brown fox jumps over the lazy dog",
    "she sells sea shells by the sea shore",
    "a large red ball rolled down the hill",
    "please bring me a glass of cold water",
    "the children played in the park after school",
    "my brother drives a small green car",
    "we walked along the river until sunset",
    "the old man sat quietly on the bench",
    "five birds flew over the tall trees",
    "it rained all day and the streets were wet",
    "the teacher wrote a long sentence on the board",
    "turn off the light before you leave the room",
    "fresh bread smells wonderful in the morning",
    "the train arrived at the station at noon",
    "he forgot his umbrella at the office",
    "a yellow cat slept in the warm sun",
    "they built a wooden house near the lake",
    "the doctor asked me to open my mouth",
    "our neighbors have a very friendly dog",
    "she found a silver coin under the table",
    "the wind blew the leaves across the yard",
    "thank you for helping me with the heavy boxes",
]

ONSET_THRESHOLD = 1e-3
"""Absolute sample level (-60 dBFS) that marks the true start and end of espeak-ng speech."""


def require(available: bool, what: str) -> None:
    """Fail in CI, skip elsewhere, when a test's external speech source is missing."""
    if available:
        return
    message = f"{what} is not installed (Debian package needed for this test)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(reason=message)


ESPEAK_SOURCE_VARIABLE = "PATHBENCH_ESPEAK_SOURCE"
ESPEAK_BUILD_TOOLS = ("autoreconf", "automake", "libtoolize", "make", "gcc")


def espeak_source() -> Path:
    """Debian's espeak-ng source archive (``.ci/run`` downloads it with apt and names it in
    ``$PATHBENCH_ESPEAK_SOURCE``), with the tools the workflow's ``build_espeak`` rule needs:
    what a test builds espeak-ng from, as the rule builds PathBench's commit."""
    source = Path(os.environ.get(ESPEAK_SOURCE_VARIABLE, ""))
    require(source.is_file(), f"Debian's espeak-ng source archive (${ESPEAK_SOURCE_VARIABLE})")
    for tool in ESPEAK_BUILD_TOOLS:
        require(shutil.which(tool) is not None, tool)
    return source


def require_espeak() -> None:
    """espeak-ng must be on PATH."""
    require(shutil.which("espeak-ng") is not None, "espeak-ng")


def require_testdata() -> None:
    """pocketsphinx-testdata must be installed."""
    require((TESTDATA / "librivox" / "transcription").is_file(), "pocketsphinx-testdata")


def speak(text: str) -> np.ndarray:
    """espeak-ng's US English voice saying ``text``, resampled to 16 kHz (polyphase, exact)."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "speech.wav"
        subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(path), text], check=True)
        audio, rate = sf.read(path, dtype="float64")
    divisor = np.gcd(rate, SAMPLE_RATE)
    return resample_poly(audio, SAMPLE_RATE // divisor, rate // divisor)


@functools.cache
def spoken_sentences() -> tuple[np.ndarray, ...]:
    """All :data:`SENTENCES`, synthesised once per test session."""
    require_espeak()
    return tuple(speak(text) for text in SENTENCES)


@dataclass(frozen=True)
class PaddedSpeech:
    """Speech inside background noise, with its true boundaries in seconds."""

    audio: np.ndarray
    start_s: float
    end_s: float


def coloured_noise(rng: np.random.Generator, n: int, exponent: float) -> np.ndarray:
    """Unit-variance noise with power falling as ``1 / f**exponent``.

    0 is white (hiss), 1 pink (the usual spectrum of room and handling noise), 2 brown (rumble).
    """
    spectrum = np.fft.rfft(rng.normal(size=n))
    freqs = np.fft.rfftfreq(n)
    freqs[0] = freqs[1]
    noise = np.fft.irfft(spectrum / freqs ** (exponent / 2), n)
    return noise / np.std(noise)


def pad_in_noise(
    speech: np.ndarray, rng: np.random.Generator, snr_db: float = 20.0, exponent: float = 0.0
) -> PaddedSpeech:
    """Put 0.3-1.0 s of silence before and after ``speech`` and add noise throughout.

    The noise (see :func:`coloured_noise`) is ``snr_db`` below the RMS of the speech between
    its true boundaries, so the padding is background noise rather than digital silence; the
    true boundaries are the first and last samples of the clean speech above
    :data:`ONSET_THRESHOLD`.
    """
    loud = np.flatnonzero(np.abs(speech) > ONSET_THRESHOLD)
    first, last = int(loud[0]), int(loud[-1])
    rms = np.sqrt(np.mean(speech[first : last + 1] ** 2))
    before, after = (int(rng.uniform(0.3, 1.0) * SAMPLE_RATE) for _ in range(2))
    padded = np.concatenate([np.zeros(before), speech, np.zeros(after)])
    padded += coloured_noise(rng, len(padded), exponent) * rms * 10 ** (-snr_db / 20)
    return PaddedSpeech(padded, (before + first) / SAMPLE_RATE, (before + last + 1) / SAMPLE_RATE)


def add_noise(speech: np.ndarray, snr_db: float, seed: int) -> np.ndarray:
    """``speech`` plus white noise ``snr_db`` below its RMS (reproducible by ``seed``)."""
    rms = np.sqrt(np.mean(speech[np.abs(speech) > ONSET_THRESHOLD] ** 2))
    noise = np.random.default_rng(seed).normal(0.0, rms * 10 ** (-snr_db / 20), len(speech))
    return speech + noise


def recorded_utterances() -> list[tuple[Path, str]]:
    """(wav path, transcription) of every pocketsphinx-testdata recording with one."""
    require_testdata()
    utterances = []
    for corpus, listing in (("librivox", "transcription"), ("cards", "cards.transcription")):
        for line in (TESTDATA / corpus / listing).read_text().splitlines():
            text, _, name = line.rpartition("(")
            words = text.replace("<s>", " ").replace("</s>", " ").split()
            utterances.append((TESTDATA / corpus / f"{name.strip(' )')}.wav", " ".join(words)))
    return utterances


@functools.cache
def shared_models() -> SphinxModels:
    """One set of decoders for the whole session, as one workflow job would hold."""
    return SphinxModels()
