"""WADA SNR: derived G table and estimates on signals with known SNR."""

import numpy as np
import pytest
from scipy.special import digamma
from scipy.stats import gamma, rankdata

from pathbench import SAMPLE_RATE
from pathbench.measures.wada_snr import SNR_GRID_DB, SPEECH_GAMMA_SHAPE, g_table, wada_snr
from pathbench.status import TOO_SHORT, UNVOICED, NoScore

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
    from pathbench.measures.wada_snr import _SERIES_LIMIT, _expected_abs, _expected_log_abs

    # At r = 0 both reduce to moments of |Z|: sqrt(2/pi) and -(gamma_E + ln 2) / 2.
    assert _expected_abs(np.array([0.0]))[0] == pytest.approx(np.sqrt(2 / np.pi))
    assert _expected_log_abs(np.array([0.0]))[0] == pytest.approx(-(np.euler_gamma + np.log(2)) / 2)
    # The exact series and the asymptotic expansion must meet where one hands over to the other.
    either_side = _expected_log_abs(np.array([_SERIES_LIMIT - 1e-9, _SERIES_LIMIT + 1e-9]))
    assert either_side[0] == pytest.approx(either_side[1], abs=1e-7)
