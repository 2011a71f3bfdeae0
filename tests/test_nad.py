"""NAD: the symmetric2 DTW accumulation, MFCC features, the distance's behaviour and statuses.

The synthetic utterances are the ones the P-ESTOI tests use (see ``test_pestoi``), so both
reference-based measures are judged on the same degradations.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import librosa
import numpy as np
import pytest
from test_pestoi import FIXTURES, add_noise, speech_like, stretch

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.status import NO_REFERENCES, TOO_SHORT, NoScore
from pathbench_flow.measures.nad import (
    alignment_distance,
    dtw_accumulate,
    nad,
    nad_features,
    nad_from_audio,
)


def symmetric2_by_loops(test: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """dtw-python's symmetric2 recursion, cell by cell, with an infinite border for the edges."""
    rows, cols = len(test), len(reference)
    padded = np.full((rows + 1, cols + 1), np.inf)
    for i in range(rows):
        for j in range(cols):
            d = math.dist(test[i], reference[j])
            if i == 0 and j == 0:
                padded[1, 1] = d
            else:
                padded[i + 1, j + 1] = min(
                    padded[i, j + 1] + d, padded[i + 1, j] + d, padded[i, j] + 2 * d
                )
    return padded[1:, 1:]


@pytest.mark.parametrize("lengths", [(1, 1), (1, 7), (6, 1), (13, 9), (40, 57)])
def test_accumulation_matches_plain_double_loop(lengths: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(lengths))
    test, reference = (rng.normal(size=(n, 20)) for n in lengths)
    np.testing.assert_allclose(
        dtw_accumulate(test, reference), symmetric2_by_loops(test, reference), rtol=1e-12
    )


def test_non_finite_features_give_nan_and_are_ignored() -> None:
    good = np.random.default_rng(0).normal(size=(30, 20))
    broken = good.copy()
    broken[10, 3] = np.nan
    assert np.isnan(alignment_distance(broken, good))
    assert nad(good, [broken, good]) == 0.0


def test_hand_worked_alignment() -> None:
    # |[0, 1, 2] - [0, 2]| = [[0, 2], [1, 1], [2, 0]]; the best path 0-0, 1-0 (1), 2-1 (2 * 0)
    # costs 1, normalised by 3 + 2 frames.
    distance = alignment_distance(np.array([[0.0], [1.0], [2.0]]), np.array([[0.0], [2.0]]))
    assert distance == pytest.approx(0.2)


def test_mfcc_features_are_librosa_mfccs_minus_their_mean() -> None:
    audio = speech_like(5, 0)
    expected = librosa.feature.mfcc(
        y=audio, sr=SAMPLE_RATE, n_mfcc=20, n_fft=400, win_length=400, hop_length=160
    ).T
    expected -= expected.mean(axis=0)
    np.testing.assert_allclose(nad_features(audio), expected, rtol=0, atol=1e-4)


def test_signal_against_copies_of_itself_is_zero() -> None:
    signal = speech_like(2, 0)
    assert nad_from_audio(signal, [signal, signal]) == 0.0


@pytest.fixture(scope="module")
def distances() -> dict[str, float]:
    """NAD of a test utterance and its degraded versions against three other speakers."""
    test = speech_like(1, 0)
    references = [nad_features(speech_like(1, s)) for s in (1, 2, 3)]
    versions = {"clean": test, "stretched": stretch(test)}
    versions |= {f"{snr} dB": add_noise(test, snr) for snr in (20, 10, 0)}
    return {name: nad(nad_features(audio), references) for name, audio in versions.items()}


def test_noise_raises_the_distance_monotonically(distances: dict[str, float]) -> None:
    values = [distances[name] for name in ("clean", "20 dB", "10 dB", "0 dB")]
    assert values == sorted(values) and values[-1] > 1.5 * values[0]


def test_slower_speech_barely_moves_the_distance(distances: dict[str, float]) -> None:
    """DTW absorbs tempo: 20 % slower costs under a third of what 0 dB noise costs."""
    clean, stretched = distances["clean"], distances["stretched"]
    assert abs(stretched - clean) < (distances["0 dB"] - clean) / 3
    assert stretched < distances["10 dB"]


def test_blue_fixture_gives_a_finite_distance() -> None:
    test = load_audio(FIXTURES / "BLUE_japanese10.wav")
    references = [load_audio(FIXTURES / f"BLUE_english3{i}.wav") for i in (2, 3, 4)]
    distance = nad_from_audio(test, references)
    assert np.isfinite(distance) and distance > 0


def test_no_reference_and_too_short_statuses() -> None:
    with pytest.raises(NoScore) as none:
        nad(nad_features(speech_like(3, 0)), [])
    assert none.value.status == NO_REFERENCES
    with pytest.raises(NoScore) as short:
        nad_features(np.ones(100))
    assert short.value.status == TOO_SHORT


def test_wav2vec2_needs_a_model_directory_and_says_what_is_missing(tmp_path: Path) -> None:
    audio = speech_like(3, 0)
    with pytest.raises(ValueError, match="model_dir"):
        nad_features(audio, kind="wav2vec2")
    missing = tmp_path / "no-such-checkpoint"
    packages_present = all(importlib.util.find_spec(p) for p in ("torch", "transformers"))
    expected = FileNotFoundError if packages_present else ImportError
    with pytest.raises(expected, match="no-such-checkpoint|'torch'|'transformers'"):
        nad_features(audio, kind="wav2vec2", model_dir=missing)
