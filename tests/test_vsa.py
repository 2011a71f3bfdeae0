"""Vowel space area on synthetic vowels, its statistical steps, and its failure statuses."""

import numpy as np
import pytest
from scipy.signal import lfilter

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.status import TOO_SHORT, UNSUPPORTED_LANGUAGE, UNVOICED, NoScore
from pathbench_flow.measures.vowel_tables import VOWEL_FORMANTS, corner_vowels
from pathbench_flow.measures.vsa import drop_outliers, polygon_area, seeded_kmeans, vsa

# Hillenbrand et al. (1995) corner vowels /i ae a u/, men and women.
MALE_CORNERS = np.array([(342, 2322), (588, 1952), (768, 1333), (378, 997)], dtype=float)
FEMALE_CORNERS = np.array([(437, 2761), (669, 2349), (936, 1551), (459, 1105)], dtype=float)


def resonate(signal: np.ndarray, hz: float, bandwidth_hz: float) -> np.ndarray:
    """Second-order formant resonator with unit gain at 0 Hz."""
    radius = np.exp(-np.pi * bandwidth_hz / SAMPLE_RATE)
    b1 = 2 * radius * np.cos(2 * np.pi * hz / SAMPLE_RATE)
    return lfilter([1 - b1 + radius**2], [1, -b1, radius**2], signal)


def vowel(f1: float, f2: float, f0: float, seconds: float = 0.4) -> np.ndarray:
    """Source-filter vowel: glottal pulse train through a cascade of five formants.

    F3-F5 sit at typical adult values so that, as in speech, Praat's five-formant analysis
    finds real resonances everywhere below its ceiling.
    """
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    cycles = np.cumsum(f0 * (1 + 0.02 * np.sin(2 * np.pi * 3 * t))) / SAMPLE_RATE
    pulses = np.diff(np.floor(cycles), prepend=0.0)
    signal = lfilter([1.0], [1.0, -0.97], pulses)  # glottal spectral tilt
    for hz, bandwidth in [(f1, 80), (f2, 100), (max(2700, f2 + 500), 150), (3700, 200)]:
        signal = resonate(signal, hz, bandwidth)
    signal = resonate(signal, 4500, 250) * np.hanning(t.size)
    return 0.5 * signal / np.abs(signal).max()


def speaker(corners: np.ndarray, spread: float, f0: float, n_utterances: int = 2) -> list:
    """Utterances of the corner vowels pulled towards their centre (spread 1 = as given)."""
    centre = corners.mean(axis=0)
    targets = centre + spread * (corners - centre)
    utterance = np.concatenate([vowel(f1, f2, f0) for f1, f2 in targets])
    return [utterance] * n_utterances


@pytest.mark.parametrize(
    ("corners", "f0"), [(MALE_CORNERS, 120.0), (FEMALE_CORNERS, 210.0)], ids=["male", "female"]
)
def test_area_shrinks_as_vowels_centralise(corners, f0):
    areas = [vsa(speaker(corners, s, f0), SAMPLE_RATE, "en", None) for s in (1.0, 0.85, 0.7)]
    assert areas[0] > areas[1] > areas[2] > 0
    # Synthetic vowels are measured accurately, so the area is close to the targets' polygon.
    assert areas[0] == pytest.approx(polygon_area(corners), rel=0.1)


def test_stated_gender_sets_the_formant_ceiling_and_seeds():
    female_voice = speaker(FEMALE_CORNERS, 1.0, 210.0)
    estimated = vsa(female_voice, SAMPLE_RATE, "en-US", None)
    assert vsa(female_voice, SAMPLE_RATE, "en", "F") == pytest.approx(estimated)
    assert vsa(female_voice, SAMPLE_RATE, "en", "male") != pytest.approx(estimated)


@pytest.mark.parametrize(
    ("audios", "language", "status"),
    [
        (speaker(MALE_CORNERS, 1.0, 120.0), "ja", UNSUPPORTED_LANGUAGE),
        ([np.zeros(SAMPLE_RATE)] * 2, "en", UNVOICED),
        ([], "en", UNVOICED),
        ([vowel(342, 2322, 120.0, seconds=0.15)], "en", TOO_SHORT),
    ],
    ids=["unsupported-language", "silence", "no-audio", "too-little-voicing"],
)
def test_failures_raise_no_score_with_status(audios, language, status):
    with pytest.raises(NoScore) as caught:
        vsa(audios, SAMPLE_RATE, language, None)
    assert caught.value.status == status


def test_drop_outliers_removes_far_points_deterministically():
    rng = np.random.default_rng(0)
    blobs = np.concatenate([rng.normal(centre, (30, 80), size=(60, 2)) for centre in MALE_CORNERS])
    far = np.array([[1500.0, 300.0], [100.0, 4000.0], [1400.0, 3800.0]])
    kept = drop_outliers(np.concatenate([blobs, far]))
    assert not any((kept == point).all(axis=1).any() for point in far)
    assert len(kept) >= 0.9 * len(blobs)
    assert np.array_equal(kept, drop_outliers(np.concatenate([blobs, far])))


def test_seeded_kmeans_drops_vowels_the_speaker_never_produced():
    rng = np.random.default_rng(1)
    near_i_and_a = np.concatenate([rng.normal(MALE_CORNERS[k], 20, size=(40, 2)) for k in (0, 2)])
    centroids = seeded_kmeans(near_i_and_a, MALE_CORNERS)
    assert len(centroids) == 2
    assert np.allclose(np.sort(centroids[:, 0]), [342, 768], atol=15)


def test_polygon_area():
    assert polygon_area(np.array([[0, 0], [0, 2], [3, 2], [3, 0], [1, 1]])) == pytest.approx(6)
    assert polygon_area(np.array([[0, 0], [1, 1], [2, 2]])) == 0.0
    assert polygon_area(np.array([[0, 0], [1, 1]])) == 0.0


@pytest.mark.parametrize("language", sorted(VOWEL_FORMANTS))
def test_vowel_tables_are_plausible(language):
    male, female = corner_vowels(language, "male"), corner_vowels(language, "female")
    assert len(male) >= 3 and male.shape == female.shape
    assert np.all(male[:, 0] < male[:, 1])
    # Shorter vocal tracts: women's mean formants are higher than men's.
    assert np.all(female.mean(axis=0) > male.mean(axis=0))
    assert polygon_area(male) > 1e5
