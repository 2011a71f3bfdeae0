"""WADA SNR: derived G table, estimates on signals with known SNR, PathBench's variant."""

from pathlib import Path

import librosa
import numpy as np
import pytest
import soundfile as sf
from scipy.special import digamma
from scipy.stats import gamma, rankdata

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.status import TOO_SHORT, UNVOICED, NoScore
from pathbench_flow.evaluators.signal import WadaSNREvaluator
from pathbench_flow.measures.wada_snr import (
    KIM_STERN_G_TABLE,
    SNR_GRID_DB,
    SPEECH_GAMMA_SHAPE,
    g_table,
    pathbench_lookup,
    wada_snr,
    wada_snr_pathbench,
)
from pathbench_flow.testing import RECORDINGS as FIXTURES
from pathbench_flow.testing.speech_fixtures import add_noise, require_espeak, spoken_sentences

SNRS_DB = [0.0, 5.0, 10.0, 20.0]


def harmonic(seconds: float = 10.0, f0_hz: float = 125.0) -> np.ndarray:
    """Periodic signal (40 harmonics, fixed random phases) of ``f0_hz``."""
    phases = np.random.default_rng(0).uniform(0, 2 * np.pi, 40)
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return sum(np.sin(2 * np.pi * k * f0_hz * t + p) for k, p in enumerate(phases, start=1))


def gamma_shaped(signal: np.ndarray) -> np.ndarray:
    """Signal re-mapped sample-wise to a Gamma(0.4) magnitude distribution.

    The map is monotone in |x| and keeps the sign, so the waveform stays periodic (harmonic)
    while its amplitude distribution becomes exactly the speech model WADA assumes.
    """
    quantiles = (rankdata(np.abs(signal)) - 0.5) / signal.size
    return np.sign(signal) * gamma.ppf(quantiles, SPEECH_GAMMA_SHAPE)


def with_noise(clean: np.ndarray, snr_db: float, seed: int) -> np.ndarray:
    noise = np.random.default_rng(seed).standard_normal(clean.size)
    noise *= np.sqrt(np.mean(clean**2) / np.mean(noise**2) / 10 ** (snr_db / 10))
    return clean + noise


def test_table_spans_gaussian_to_clean_gamma_and_is_monotone():
    table = g_table()
    assert table.shape == SNR_GRID_DB.shape
    assert np.all(np.diff(table) > 0)
    gaussian = np.log(np.sqrt(2 / np.pi)) + (np.euler_gamma + np.log(2)) / 2
    assert table[0] == pytest.approx(gaussian, abs=1e-3)
    clean = np.log(SPEECH_GAMMA_SHAPE) - digamma(SPEECH_GAMMA_SHAPE)
    assert table[-2] < table[-1] < clean


def test_table_agrees_with_monte_carlo_of_the_model():
    rng = np.random.default_rng(5)
    n = 400_000
    speech = rng.gamma(SPEECH_GAMMA_SHAPE, 1.0, n) * rng.choice([-1.0, 1.0], n)
    noise = rng.standard_normal(n)
    power = SPEECH_GAMMA_SHAPE * (SPEECH_GAMMA_SHAPE + 1)
    for snr in (0, 10, 30):
        z = np.abs(speech + np.sqrt(power / 10 ** (snr / 10)) * noise)
        g = np.log(z.mean()) - np.log(z).mean()
        assert g == pytest.approx(g_table()[snr + 20], abs=5e-3)


@pytest.mark.parametrize("seed", [0, 1])
def test_estimates_known_snr_within_2_db(seed):
    clean = gamma_shaped(harmonic())
    estimates = [wada_snr(with_noise(clean, snr, seed), SAMPLE_RATE) for snr in SNRS_DB]
    assert estimates == pytest.approx(SNRS_DB, abs=2.0)
    assert np.all(np.diff(estimates) > 0)


def test_estimates_rise_with_snr_on_syllabic_speech_like_signal():
    t = np.arange(10 * SAMPLE_RATE) / SAMPLE_RATE
    syllabic = harmonic() * np.clip(np.sin(2 * np.pi * 2 * t), 0, None) ** 2
    estimates = [wada_snr(with_noise(syllabic, snr, 0), SAMPLE_RATE) for snr in SNRS_DB]
    assert np.all(np.diff(estimates) > 0)
    assert estimates[0] == pytest.approx(0.0, abs=3.0)


def test_is_scale_invariant_and_clamped():
    noisy = with_noise(gamma_shaped(harmonic(2.0)), 10.0, 0)
    assert wada_snr(1000 * noisy, SAMPLE_RATE) == pytest.approx(wada_snr(noisy, SAMPLE_RATE))
    noise_only = np.random.default_rng(3).standard_normal(SAMPLE_RATE)
    assert -20.0 <= wada_snr(noise_only, SAMPLE_RATE) < -10.0
    assert wada_snr(gamma_shaped(harmonic(2.0)), SAMPLE_RATE) == 100.0


@pytest.mark.parametrize(
    ("audio", "status"), [(np.zeros(0), TOO_SHORT), (np.zeros(SAMPLE_RATE), UNVOICED)]
)
def test_no_signal_has_no_score(audio, status):
    with pytest.raises(NoScore) as caught:
        wada_snr(audio, SAMPLE_RATE)
    assert caught.value.status == status


def test_inner_expectations_match_closed_forms_and_join_continuously():
    from pathbench_flow.measures.wada_snr import _SERIES_LIMIT, _expected_abs, _expected_log_abs

    # At r = 0 both reduce to moments of |Z|: sqrt(2/pi) and -(gamma_E + ln 2) / 2.
    assert _expected_abs(np.array([0.0]))[0] == pytest.approx(np.sqrt(2 / np.pi))
    assert _expected_log_abs(np.array([0.0]))[0] == pytest.approx(-(np.euler_gamma + np.log(2)) / 2)
    # The exact series and the asymptotic expansion must meet where one hands over to the other.
    either_side = _expected_log_abs(np.array([_SERIES_LIMIT - 1e-9, _SERIES_LIMIT + 1e-9]))
    assert either_side[0] == pytest.approx(either_side[1], abs=1e-7)


# ----------------------------------------------------------- PathBench-compatible (published)


def pathbench_by_hand(path: Path) -> float:
    """PathBench's WADA SNR written out step by step from its description.

    librosa load at 16 kHz, float32 peak normalisation, magnitudes floored at 1e-10,
    G = ln mean|z| - mean ln|z| in float32, then the SNR of the highest published-table entry
    below G, interpolated towards the next entry, and the energy split it implies.
    """
    wav, _ = librosa.load(path, sr=16000)
    wav = wav / np.abs(wav).max()
    magnitude = np.abs(wav)
    magnitude[magnitude < 1e-10] = 1e-10
    g = np.log(magnitude.mean()) - np.log(magnitude).mean()
    assert g.dtype == np.float32
    candidates = [i for i, value in enumerate(KIM_STERN_G_TABLE) if value < g]
    if not candidates:
        snr = -20.0
    elif candidates[-1] == 120:
        snr = 100.0
    else:
        i = candidates[-1]
        snr = np.interp(g, KIM_STERN_G_TABLE[i : i + 2], [i - 20, i - 19])
    energy = float(np.sum(wav.astype(np.float64) ** 2))
    factor = 10 ** (snr / 10)
    return 10 * np.log10((energy * factor / (1 + factor)) / (energy / (1 + factor)))


def test_published_table_spans_minus_20_to_100_db_with_its_known_head():
    assert KIM_STERN_G_TABLE.shape == SNR_GRID_DB.shape == (121,)
    # Estimated from samples: not monotone below -16 dB, increasing from there on.
    assert KIM_STERN_G_TABLE[3] < KIM_STERN_G_TABLE[2]
    assert np.all(np.diff(KIM_STERN_G_TABLE[3:]) > 0)
    assert (KIM_STERN_G_TABLE[0], KIM_STERN_G_TABLE[-1]) == (0.40974774, 1.63204102)


def test_pathbench_value_of_the_published_test_clip():
    audio = load_audio(FIXTURES / "BLUE_japanese10.wav")
    assert WadaSNREvaluator().score_loaded(audio).value == pytest.approx(19.59, abs=0.005)


@pytest.mark.parametrize(
    "name", ["BLUE_japanese10", "BLUE_english32", "BLUE_english33", "BLUE_english34", "test_audio"]
)
def test_pathbench_compat_equals_the_procedure_by_hand(name):
    path = FIXTURES / f"{name}.wav"
    score = WadaSNREvaluator(compat="pathbench").score_loaded(load_audio(path))
    assert score.status == "ok"
    assert score.value == pytest.approx(pathbench_by_hand(path), abs=1e-9)


@pytest.mark.parametrize("snr_db", [5.0, 20.0, 40.0, 60.0])
def test_pathbench_compat_on_noisy_speech_files(tmp_path, snr_db):
    require_espeak()
    path = tmp_path / "noisy.wav"
    sf.write(path, add_noise(spoken_sentences()[0], snr_db, seed=3), SAMPLE_RATE, "PCM_16")
    value = wada_snr_pathbench(load_audio(path), SAMPLE_RATE)
    assert value == pytest.approx(pathbench_by_hand(path), abs=1e-9)


def test_lookup_reads_the_last_entry_below_g_even_in_the_non_monotone_head():
    # G between entries 2 (0.40998566) and 3 (0.40969089), which is above entry 3 but also
    # above entries 0-1: the bracket starts at index 3 (the last entry below), i.e. -17 dB.
    g = 0.40980
    assert pathbench_lookup(g) == pytest.approx(
        -17 + (g - KIM_STERN_G_TABLE[3]) / (KIM_STERN_G_TABLE[4] - KIM_STERN_G_TABLE[3])
    )
    assert pathbench_lookup(0.40) == -20.0
    assert pathbench_lookup(2.0) == 100.0


def test_compat_option_selects_the_table_and_rejects_unknown_values():
    clean = gamma_shaped(harmonic(2.0))
    noisy = with_noise(clean, 60.0, 0)
    published = WadaSNREvaluator().score_loaded(noisy).value
    derived = WadaSNREvaluator(compat="none").score_loaded(noisy).value
    assert derived == pytest.approx(wada_snr(noisy, SAMPLE_RATE))
    assert published == pytest.approx(wada_snr_pathbench(noisy, SAMPLE_RATE))
    assert abs(published - derived) > 0.5  # the tables differ most at high SNR
    assert WadaSNREvaluator().pathbench_compatible
    assert not WadaSNREvaluator(compat="none").pathbench_compatible
    with pytest.raises(ValueError, match=r"evaluator_options\.wada_snr\.compat = 'exact'"):
        WadaSNREvaluator(compat="exact")


@pytest.mark.parametrize(
    ("audio", "status"), [(np.zeros(0), TOO_SHORT), (np.zeros(SAMPLE_RATE), UNVOICED)]
)
def test_pathbench_compat_without_signal_has_no_score(audio, status):
    score = WadaSNREvaluator().score_loaded(audio)
    assert score.value is None and score.status == status
