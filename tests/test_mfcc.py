"""The MFCC front end of NAD and of the open-set features gives librosa's values to the last bit,
without importing librosa."""

from __future__ import annotations

import subprocess
import sys

import librosa
import numpy as np
import pytest
import scipy.signal

from pathbench_flow.common.audio import load_audio
from pathbench_flow.measures.mfcc import _hann, mel_filters, mfcc
from pathbench_flow.testing import RECORDINGS as FIXTURES


def _librosa_mfcc(audio: np.ndarray, fs: int, n_fft: int, hop: int) -> np.ndarray:
    """The composition NAD has always used: float64 filters over librosa's STFT power."""
    spectrum = librosa.stft(audio, n_fft=n_fft, win_length=n_fft, hop_length=hop)
    filters = librosa.filters.mel(sr=fs, n_fft=n_fft, dtype=np.float64)
    mel_power = filters @ (np.abs(spectrum) ** 2)
    return librosa.feature.mfcc(S=librosa.power_to_db(mel_power), n_mfcc=20)


@pytest.mark.parametrize(("fs", "n_fft"), [(16000, 400), (16000, 512), (22050, 551)])
def test_window_and_filters_are_scipys_and_librosas(fs: int, n_fft: int) -> None:
    np.testing.assert_array_equal(_hann(n_fft), scipy.signal.get_window("hann", n_fft))
    expected = librosa.filters.mel(sr=fs, n_fft=n_fft, dtype=np.float64)
    np.testing.assert_array_equal(mel_filters(fs, n_fft), expected)


@pytest.mark.filterwarnings("ignore:n_fft=")  # librosa warns on signals shorter than a frame
@pytest.mark.parametrize("length", [1, 150, 199, 200, 201, 399, 400, 401, 561, 1000, 4321, 48000])
def test_random_signals_of_every_framing_case(length: int) -> None:
    audio = 0.1 * np.random.default_rng(length).standard_normal(length)
    np.testing.assert_array_equal(
        mfcc(audio, 16000, 20, 400, 160), _librosa_mfcc(audio, 16000, 400, 160)
    )


def test_speech_recordings() -> None:
    recordings = sorted(FIXTURES.glob("*.wav"))
    assert len(recordings) >= 4
    for path in recordings:
        audio = load_audio(path).astype(np.float64)
        for cut in (audio, audio[: audio.size // 3 + 77]):
            np.testing.assert_array_equal(
                mfcc(cut, 16000, 20, 400, 160), _librosa_mfcc(cut, 16000, 400, 160)
            )


def _librosa_float32_mfcc(audio: np.ndarray) -> np.ndarray:
    """What the open-set features have always called: librosa's own single-precision path."""
    return librosa.feature.mfcc(
        y=audio, sr=16000, n_mfcc=5, n_fft=400, hop_length=160, win_length=400
    )


def test_float32_filters_are_librosas() -> None:
    expected = librosa.filters.mel(sr=16000, n_fft=400)
    assert expected.dtype == np.float32
    np.testing.assert_array_equal(mel_filters(16000, 400, dtype=np.float32), expected)


@pytest.mark.filterwarnings("ignore:n_fft=")
@pytest.mark.parametrize("length", [1, 150, 199, 200, 201, 399, 400, 401, 561, 1000, 4321, 48000])
def test_float32_random_signals_of_every_framing_case(length: int) -> None:
    audio = (0.1 * np.random.default_rng(length).standard_normal(length)).astype(np.float32)
    found = mfcc(audio, 16000, 5, 400, 160)
    assert found.dtype == np.float32
    np.testing.assert_array_equal(found, _librosa_float32_mfcc(audio))


def test_float32_speech_recordings() -> None:
    for path in sorted(FIXTURES.glob("*.wav")):
        audio = load_audio(path).astype(np.float32)
        for cut in (audio, audio[: audio.size // 3 + 77]):
            np.testing.assert_array_equal(mfcc(cut, 16000, 5, 400, 160), _librosa_float32_mfcc(cut))


def test_other_sample_types_are_refused() -> None:
    with pytest.raises(TypeError, match="float64 or float32"):
        mfcc(np.zeros(800, dtype=np.int16), 16000, 5, 400, 160)


def test_non_finite_audio_is_refused() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        mfcc(np.array([0.0, np.inf] * 300), 16000, 20, 400, 160)


@pytest.mark.parametrize(
    "call",
    [
        "from pathbench_flow.measures import nad; nad.mfcc_arrays(np.zeros(8000) + 0.01, 16000)",
        "from pathbench_flow.openset.features import utterance_features; "
        "utterance_features(np.random.default_rng(0).normal(size=8000) * 0.1, 16000)",
    ],
    ids=["nad", "open-set features"],
)
def test_mfcc_users_import_no_librosa(call: str) -> None:
    """The point of the module: a job computing MFCCs never loads librosa's core."""
    code = (
        f"import sys, numpy as np; {call}; print(any(m.startswith('librosa') for m in sys.modules))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"
