"""Cepstral peak prominence: PathBench CPP, Praat CPPS and its numpy re-implementation."""

import subprocess
import sys
from functools import cache

import numpy as np
import parselmouth
import pytest
import scipy.fft
from parselmouth.praat import call

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.status import TOO_SHORT, NoScore
from pathbench_flow.measures.cepstral import cpp, cpps, cpps_praat, framing, pathbench_cpp
from pathbench_flow.measures.cepstral.pair_counts import (
    count_descending_pairs,
    descending_pair_counts,
    sorted_pair_slopes,
)
from pathbench_flow.measures.cepstral.power_cepstrogram import (
    emphasised_and_padded,
    frame_times,
    power_cepstra,
    to_db,
)
from pathbench_flow.measures.cepstral.praat_settings import (
    MAXIMUM_FREQUENCY,
    PITCH_FLOOR,
    PRE_EMPHASIS_FROM,
    TIME_STEP,
)
from pathbench_flow.measures.cepstral.smoothing import time_averaging
from pathbench_flow.measures.cepstral.theil_sen import medians, theil_sen_slope
from pathbench_flow.testing import RECORDINGS as FIXTURES

PUBLISHED_CPPS_JAPANESE10 = 9.836
"""Praat CPPS (dB) of BLUE_japanese10.wav as published by PathBench."""

PRAAT_TOLERANCE_DB = 0.05

# Praat needs ~20 CPU s per second of audio, so comparisons use short signals: the BLUE words
# (0.18-0.27 s), 0.25 s of test_audio.wav (a stationary 110 Hz harmonic complex) and 0.3 s of
# synthetic voice; about 18 CPU s of Praat in all.
PRAAT_EXCERPT_S = 0.25
SYNTHETIC_S = 0.3


def voice(seconds: float, aspiration: float, seed: int = 0) -> np.ndarray:
    """Harmonic source (F0 120 Hz with 4 Hz vibrato, 1/k amplitudes, unit RMS) plus white
    aspiration noise of RMS ``aspiration``: more noise is a breathier voice."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    f0 = 120.0 * (1 + 0.03 * np.sin(2 * np.pi * 4 * t))
    phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    source = sum(np.cos(k * phase) / k for k in range(1, 60))
    noise = np.random.default_rng(seed).standard_normal(t.size)
    return 0.1 * (source / np.std(source) + aspiration * noise)


@cache
def signal(name: str) -> np.ndarray:
    if name == "synthetic voice":
        return voice(SYNTHETIC_S, aspiration=0.3)
    audio = load_audio(FIXTURES / f"{name}.wav")
    return audio[: int(PRAAT_EXCERPT_S * SAMPLE_RATE)] if name == "test_audio" else audio


@cache
def praat_value(name: str) -> float:
    return cpps_praat(signal(name), SAMPLE_RATE)


def test_japanese10_reproduces_published_cpps():
    assert praat_value("BLUE_japanese10") == pytest.approx(PUBLISHED_CPPS_JAPANESE10, abs=1e-3)
    assert cpps(signal("BLUE_japanese10"), SAMPLE_RATE) == pytest.approx(
        PUBLISHED_CPPS_JAPANESE10, abs=PRAAT_TOLERANCE_DB
    )


@pytest.mark.parametrize(
    "name",
    ["BLUE_japanese10", "BLUE_english32", "BLUE_english33", "BLUE_english34", "test_audio",
     "synthetic voice"],
)  # fmt: skip
def test_cpps_agrees_with_praat(name):
    assert cpps(signal(name), SAMPLE_RATE) == pytest.approx(
        praat_value(name), abs=PRAAT_TOLERANCE_DB
    )


PRAAT_RELATIVE_BOUND = 1e-4
"""The fidelity bound of the fast CPPS: each value within this relative difference of Praat's."""


@pytest.mark.parametrize(
    "name", ["BLUE_japanese10", "BLUE_english32", "BLUE_english33", "BLUE_english34", "test_audio"]
)
def test_cpps_within_relative_bound_of_praat(name):
    """The fixture recordings (test_audio.wav's first 0.25 s, to keep Praat's cost down; the
    whole file is within the bound too, see benchmarks/README.md): float32 cepstra and the
    approximate tilt fit together stay within the bound."""
    assert cpps(signal(name), SAMPLE_RATE) == pytest.approx(
        praat_value(name), rel=PRAAT_RELATIVE_BOUND, abs=0
    )


def test_cpps_is_deterministic():
    """The same bits in one process and in a fresh one (numba's cached kernels, FFT plans)."""
    audio = signal("BLUE_english32")
    first = cpps(audio, SAMPLE_RATE)
    assert cpps(audio, SAMPLE_RATE).hex() == first.hex()
    script = (
        "from pathbench_flow.common.audio import load_audio\n"
        "from pathbench_flow.measures.cepstral import cpps\n"
        f"print(cpps(load_audio({str(FIXTURES / 'BLUE_english32.wav')!r}), {SAMPLE_RATE}).hex())"
    )
    fresh = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert fresh == first.hex()


def test_cepstrogram_frames_match_praat():
    """Framing, window, pre-emphasis and FFT scaling reproduce Praat's PowerCepstrogram."""
    audio = signal("BLUE_english32")
    settings = (PITCH_FLOOR, TIME_STEP, MAXIMUM_FREQUENCY, PRE_EMPHASIS_FROM)
    sound = parselmouth.Sound(audio, sampling_frequency=SAMPLE_RATE)
    praat = call(call(sound, "To PowerCepstrogram", *settings), "To Matrix").values.T
    _, starts = frame_times(audio.size)
    ours = power_cepstra(emphasised_and_padded(audio), starts)
    assert ours.shape == praat.shape
    # dB, the scale CPPS works on; exact to rounding except where the power is near 0.
    np.testing.assert_allclose(to_db(ours), to_db(praat), atol=1e-6)


def test_breathier_voice_has_lower_cpp_and_cpps():
    modal, breathy = voice(1.0, aspiration=0.1), voice(1.0, aspiration=0.6)
    assert cpp(breathy, SAMPLE_RATE) < 0.7 * cpp(modal, SAMPLE_RATE)
    assert cpps(breathy, SAMPLE_RATE) < cpps(modal, SAMPLE_RATE) - 3.0


def test_too_short_signals_have_no_score():
    shortest_cpp = 2 * pathbench_cpp.CPP_FRAME - 1  # first centre 641, 640 samples after it
    assert np.isfinite(cpp(voice(1.0, 0.1)[:shortest_cpp], SAMPLE_RATE))
    with pytest.raises(NoScore) as caught:
        cpp(np.ones(shortest_cpp - 1), SAMPLE_RATE)
    assert caught.value.status == TOO_SHORT
    window = int(0.1 * SAMPLE_RATE)
    assert np.isfinite(cpps(voice(1.0, 0.1)[:window], SAMPLE_RATE))
    for measure in (cpps, cpps_praat):
        with pytest.raises(NoScore) as caught:
            measure(np.ones(window - 1), SAMPLE_RATE)
        assert caught.value.status == TOO_SHORT


def test_other_sample_rates_are_rejected():
    for measure in (cpp, cpps, cpps_praat):
        with pytest.raises(ValueError, match="16000"):
            measure(np.zeros(48000), 48000)


def cpp_by_loop(audio: np.ndarray) -> float:
    """PathBench's CPP written out frame by frame, straight from its definition."""
    emphasised = np.empty_like(audio)
    emphasised[0] = audio[0]
    for n in range(1, audio.size):
        emphasised[n] = audio[n] - 0.97 * audio[n - 1]
    length = 641
    window = np.array(
        [0.5 - 0.5 * np.cos(2 * np.pi * i / (length + 1)) for i in range(1, length + 1)]
    )
    bins = np.arange(47, 267)
    prominences = []
    centre = 641
    while centre <= audio.size - 640:
        frame = emphasised[centre - 321 : centre + 320] * window
        log_spectrum = 20 * np.log10(np.abs(np.fft.fft(frame)) + np.finfo(float).eps)
        cepstrum = np.abs(np.fft.fft(log_spectrum))[bins]
        slope, intercept = np.polyfit(bins, cepstrum, 1)
        peak = np.argmax(cepstrum)
        prominences.append(cepstrum[peak] - (slope * bins[peak] + intercept))
        centre += 160
    return float(np.mean(prominences))


@pytest.mark.parametrize("name", ["BLUE_english32", "synthetic voice"])
def test_cpp_matches_frame_by_frame_definition(name):
    audio = signal(name)
    assert cpp(audio, SAMPLE_RATE) == pytest.approx(cpp_by_loop(audio), rel=1e-9)


def test_cpp_frames_cover_chunk_boundaries():
    audio = voice(12.0, aspiration=0.3)  # > 1000 frames: several processing blocks
    assert cpp(audio, SAMPLE_RATE) == pytest.approx(cpp_by_loop(audio), rel=1e-9)


def test_rader_spectrum_equals_the_641_point_fft():
    """Rader's permuted Hartley correlation gives |FFT| of every frame at every bin: bins
    3^-q (mod 641) for q < 320, which are one of each pair k, 641 - k, and bin 0."""
    tables = pathbench_cpp._rader_tables()
    assert sorted(tables.bins) == list(range(1, 641))
    audio = signal("BLUE_english32")
    starts = np.array([0, 1000, audio.size - 641])
    frames, first = pathbench_cpp._permuted_frames(
        audio, starts, tables.bins, tables.permuted_window
    )
    spectrum = scipy.fft.rfft(frames, axis=1) * tables.hartley
    correlation = scipy.fft.irfft(spectrum, 640, axis=1)
    magnitudes, at_zero = pathbench_cpp._magnitudes(
        correlation, frames, first, tables.window_at_zero
    )
    direct = np.abs(np.fft.fft(audio[starts[:, None] + np.arange(641)] * np.hanning(643)[1:-1]))
    inverse_bins = [pow(3, (640 - q) % 640, 641) for q in range(320)]
    scale = direct.max()
    np.testing.assert_allclose(magnitudes, direct[:, inverse_bins], rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(at_zero, direct[:, 0], rtol=0, atol=1e-12 * scale)


def test_cpps_is_independent_of_processing_blocks(monkeypatch):
    audio = voice(1.5, aspiration=0.3)  # 701 frames
    blocked = cpps(audio, SAMPLE_RATE)
    monkeypatch.setattr(framing, "CHUNK_FRAMES", 10_000)
    assert cpps(audio, SAMPLE_RATE) == pytest.approx(blocked, abs=1e-12)
    monkeypatch.setattr(framing, "CHUNK_FRAMES", 97)
    assert cpps(audio, SAMPLE_RATE) == pytest.approx(blocked, abs=1e-12)


def descending_pairs_by_brute_force(z: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(z.shape[1], 1)
    return np.count_nonzero(z[:, j] <= z[:, i], axis=1)


@pytest.mark.parametrize("n", [785, 60, 29, 2])
def test_pair_count_is_exact(n):
    rng = np.random.default_rng(n)
    z = rng.standard_normal((9, n))
    z[0] = np.sort(z[0])  # no descending pair
    z[1] = np.sort(z[1])[::-1]  # all pairs descending
    z[2] = np.round(z[2])  # many exact ties
    z[3] = 50.0 + np.arange(n) % 3 * 1e-12  # long runs of exact ties
    z[4] = 0.0
    # Distinct values that the 32-bit sort keys merge into one run (an outlier far below them
    # stretches the range the keys divide).
    z[5] = 50.0 + 1e-9 * rng.permutation(n)
    z[5, 0] = -1e6
    counts, order = count_descending_pairs(z, np.zeros(len(z)))
    np.testing.assert_array_equal(counts, descending_pairs_by_brute_force(z))
    np.testing.assert_array_equal(descending_pair_counts(z, np.zeros(len(z))), counts)
    # The order sorts each row, equal values latest index first.
    ordered = np.take_along_axis(z, order, axis=1)
    assert np.all(np.diff(ordered, axis=1) >= 0)
    tied = np.diff(ordered, axis=1) == 0
    assert np.all(np.diff(order, axis=1)[tied] < 0)


def test_pair_count_at_a_slope_counts_pairwise_slopes():
    """The count at slope t is the number of pairwise slopes at most t (Theil's C(t))."""
    rng = np.random.default_rng(3)
    n = 300
    values = -0.02 * np.arange(n) + rng.standard_normal((5, n))
    slopes = np.array([-0.02, -0.5, 0.5, 0.0, -0.021])
    i, j = np.triu_indices(n, 1)
    pairwise = (values[:, j] - values[:, i]) / (j - i)
    expected = np.count_nonzero(pairwise <= slopes[:, None], axis=1)
    counts, _ = count_descending_pairs(values, slopes)
    # Floating-point z = y - t k can only disagree for slopes within rounding of t.
    near = np.count_nonzero(np.isclose(pairwise, slopes[:, None], rtol=1e-12), axis=1)
    assert np.all(np.abs(counts - expected) <= near)


@pytest.mark.parametrize("pairs", [500, 2000])
def test_sorted_pair_slopes_equal_numpy_sorted_slopes(pairs):
    """The keyed sort gives np.sort's values bit for bit, also where float32 rounding merges
    slopes (tiny spreads, huge values) and ties abound. Zero slopes are +0.0 here, as from any
    dB values (x - x is +0.0); np.sort leaves -0.0 and +0.0 in either order."""
    rng = np.random.default_rng(pairs)
    n = 785
    first = rng.integers(0, n - 1, size=pairs)
    second = first + 1 + rng.integers(0, n - 1 - first)
    values = rng.standard_normal((7, n)) * 10
    values[1] = np.round(values[1]) + 0.0  # many equal slopes, zeros among them
    values[2] = 0.0
    values[3] = 50.0 + 1e-9 * rng.standard_normal(n)  # slopes float32 cannot tell apart
    values[4] *= 1e30
    values[5] = -values[0]
    values[6] = np.arange(n) * 0.25  # one slope everywhere
    expected = np.sort((values[:, second] - values[:, first]) / (second - first), axis=1)
    result = sorted_pair_slopes(values, first, second)
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(np.signbit(result), np.signbit(expected))


@pytest.mark.parametrize("how", ["sorted", "nearly sorted", "random"])
def test_medians_equal_numpy_medians(how):
    """The median search is exact whatever order it starts from (a bad one costs a sort)."""
    rng = np.random.default_rng(5)
    values = rng.standard_normal((6, 785)) * 10
    values[1] = np.round(values[1])  # ties at the median
    order = np.argsort(values, axis=1)
    if how == "nearly sorted":
        order = np.argsort(values + rng.standard_normal(values.shape), axis=1)
    elif how == "random":
        order = np.stack([rng.permutation(785) for _ in values])
    np.testing.assert_array_equal(medians(values, order), np.median(values, axis=1))
    even = values[:, :-1]
    np.testing.assert_array_equal(
        medians(np.ascontiguousarray(even), np.argsort(even, axis=1)),
        np.median(even, axis=1),
    )


def test_theil_sen_slope_is_close_to_the_exact_median():
    """Rank of the estimate among all pairwise slopes, on noisy cepstrum-like rows (a line plus
    log-chi-square noise, heavy lower tail): a few hundred of ~300 000 at most."""
    rng = np.random.default_rng(7)
    n = 785
    k = np.arange(n)
    rows = -0.03 * k + 50 + 10 * np.log10(rng.chisquare(1, size=(12, n)))
    estimate, _ = theil_sen_slope(rows)
    i, j = np.triu_indices(n, 1)
    slopes = (rows[:, j] - rows[:, i]) / (j - i)
    rank_error = np.count_nonzero(slopes <= estimate[:, None], axis=1) - slopes.shape[1] / 2
    assert np.all(np.abs(rank_error) < 600)


def exact_median_slope(row: np.ndarray) -> float:
    i, j = np.triu_indices(row.size, 1)
    return float(np.median((row[j] - row[i]) / (j - i)))


def test_theil_sen_slope_with_equal_values():
    """Equal values (silence, 0-dB stretches) put many slopes at exactly 0; the estimate must
    still land on the median, whether the tie block holds it or not."""
    n = 785
    k = np.arange(n, dtype=float)
    noise = np.random.default_rng(1).standard_normal(n)
    rows = [np.full(n, -300.0), 0.25 * k - 4.0]
    for flat, slope in [(100, 0.0005), (200, 0.0005), (100, -0.001)]:
        row = slope * k + noise
        row[200 : 200 + flat] = 0.0
        rows.append(row)
    expected = [exact_median_slope(row) for row in rows]
    assert expected[3] == 0.0 != expected[2]  # tie block holds the median in one row only
    estimate, _ = theil_sen_slope(np.stack(rows))
    np.testing.assert_allclose(estimate, expected, atol=1e-5)


def test_time_smoothing_weights_follow_praat_interpolating_mean():
    """Interior frames: trapezoid rule over +-5 frames (the linear interpolant's mean). First
    frame: the curve starts half a frame before it (constant there), so the window covers 5.5
    frames: weights 1, 1, 1, 1, 1, 0.5 over 5.5."""
    n_samples = len(signal("BLUE_japanese10"))
    times, _ = frame_times(n_samples)
    weights = time_averaging(times, n_samples).toarray()
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    trapezoid = np.r_[0.5, np.ones(9), 0.5] / 10
    np.testing.assert_allclose(weights[20, 15:26], trapezoid, atol=1e-12)
    np.testing.assert_allclose(weights[0, :6], np.r_[np.ones(5), 0.5] / 5.5, atol=1e-12)
