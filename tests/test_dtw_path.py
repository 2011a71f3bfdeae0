"""The P-(E)STOI warping path equals librosa's ``sequence.dtw`` path, ties included."""

from __future__ import annotations

import librosa
import numpy as np
import pytest

from pathbench_flow.common.audio import load_audio
from pathbench_flow.measures.dtw_path import warping_path
from pathbench_flow.measures.pestoi import pestoi_features
from pathbench_flow.testing import RECORDINGS as FIXTURES


def _librosa_path(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return librosa.sequence.dtw(X=x, Y=y, metric="euclidean")[1]


@pytest.mark.parametrize("seed", range(40))
def test_random_sequences_give_librosas_path(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dims, n, m = rng.integers(1, 16), rng.integers(1, 60), rng.integers(1, 60)
    x, y = rng.standard_normal((dims, n)), rng.standard_normal((dims, m))
    np.testing.assert_array_equal(warping_path(x, y), _librosa_path(x, y))


@pytest.mark.parametrize("seed", range(40))
def test_equal_cost_steps_are_broken_as_librosa_breaks_them(seed: int) -> None:
    """Small integers make many paths cost the same: the first step in librosa's order wins."""
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 2, (2, 25)).astype(float), rng.integers(0, 2, (2, 30)).astype(float)
    np.testing.assert_array_equal(warping_path(x, y), _librosa_path(x, y))


def test_speech_envelopes_give_librosas_path() -> None:
    recordings = sorted(FIXTURES.glob("BLUE_*.wav"))
    assert len(recordings) >= 3
    features = [pestoi_features(load_audio(path)) for path in recordings]
    for x in features:
        for y in features:
            np.testing.assert_array_equal(warping_path(x, y), _librosa_path(x, y))


def test_one_frame_each_and_non_finite_features() -> None:
    np.testing.assert_array_equal(warping_path(np.ones((3, 1)), np.zeros((3, 1))), [[0, 0]])
    with pytest.raises(ValueError, match="non-finite"):
        warping_path(np.array([[np.nan, 1.0]]), np.ones((1, 2)))
    with pytest.raises(ValueError, match="feature sizes differ"):
        warping_path(np.ones((2, 3)), np.ones((3, 3)))
