"""Blind signal-to-noise ratio by waveform amplitude distribution analysis (WADA).

Kim & Stern (2008), "Robust signal-to-noise ratio estimation based on waveform amplitude
distribution analysis", Interspeech. Clean speech amplitudes are modelled as Gamma distributed
with shape alpha = 0.4 and the noise as additive Gaussian. The statistic
``G = ln E|z| - E ln|z|`` of the noisy waveform z then depends on the SNR alone (it is scale
invariant), so a table of the expected G against SNR turns a measured G into an SNR.

The table is derived here, deterministically, by numerical integration of that model rather
than shipped as magic numbers; :func:`g_table` documents the derivation.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.special import digamma, erf, gammaln, xlogy

from pathbench.status import TOO_SHORT, UNVOICED, NoScore

SPEECH_GAMMA_SHAPE = 0.4
"""Shape of the Gamma model of clean-speech amplitude used by Kim & Stern (2008)."""

SNR_GRID_DB = np.arange(-20.0, 101.0)
"""SNRs (dB) at which the expected G is tabulated; estimates are clamped to this range."""

AMPLITUDE_FLOOR = 1e-10
"""Keeps ln|x| finite at exact zeros (digital silence, zero crossings)."""

_STEPS_PER_DB = 4
"""Integration steps per dB of SNR; the integration grid is aligned with the SNR grid so that
every SNR reuses one precomputed set of inner expectations (see :func:`g_table`)."""

_LOG_S_RANGE = (-52.0, np.log(40.0))
"""Range of ln(speech amplitude) integrated over: Gamma(0.4) mass outside it is below 1e-9."""

_SERIES_LIMIT = 12.0
"""Amplitude-to-noise ratio above which E ln|r + Z| uses its asymptotic expansion."""


def _expected_abs(r: np.ndarray) -> np.ndarray:
    """E|r + Z| for standard normal Z (mean of a folded normal)."""
    return np.sqrt(2.0 / np.pi) * np.exp(-0.5 * r**2) + r * erf(r / np.sqrt(2.0))


def _expected_log_abs(r: np.ndarray) -> np.ndarray:
    """E ln|r + Z| for standard normal Z, r >= 0.

    (r + Z)^2 is non-central chi-square with one degree of freedom and non-centrality r^2, a
    Poisson(r^2 / 2) mixture of central chi-squares, whose log-means are ln 2 + psi(1/2 + j).
    That series is exact but needs ever more terms as r grows, so beyond ``_SERIES_LIMIT`` the
    expansion ln r - E[u^2]/2 - E[u^4]/4 - E[u^6]/6 of E ln(1 + u), u = Z / r, takes over
    (its next term is below 1e-8 there).
    """
    out = np.empty_like(r)
    near = r <= _SERIES_LIMIT
    mean = 0.5 * r[near, None] ** 2
    j = np.arange(int(_SERIES_LIMIT**2) + 200, dtype=np.float64)
    weights = np.exp(xlogy(j, mean) - mean - gammaln(j + 1.0))
    out[near] = 0.5 * (np.log(2.0) + weights @ digamma(j + 0.5))
    far = r[~near]
    out[~near] = np.log(far) - 0.5 / far**2 - 0.75 / far**4 - 2.5 / far**6
    return out


@cache
def g_table() -> np.ndarray:
    """Expected G of Gamma(alpha = 0.4) speech plus Gaussian noise at each SNR in SNR_GRID_DB.

    With speech amplitude s ~ Gamma(alpha, 1) (random sign) and noise N(0, sigma^2), where
    sigma^2 = E[s^2] / 10^(SNR/10) = alpha (alpha + 1) / 10^(SNR/10), conditioning on s gives
    closed forms for the inner expectations over the noise:

        E|z| = sigma E_s[m(s / sigma)],   m(r) = E|r + Z|
        E ln|z| = ln sigma + E_s[h(s / sigma)],   h(r) = E ln|r + Z|

    so G = ln E_s[m(s / sigma)] - E_s[h(s / sigma)]. The outer expectation over the Gamma
    density is a trapezoid rule in u = ln s, where the integrand is smooth and its tails decay
    exponentially. The step in u divides the per-dB step of ln sigma exactly, so all SNRs
    index windows of a single grid of r = s / sigma and m, h are evaluated once. At high SNR
    G tends to ln(alpha) - psi(alpha) (clean Gamma), at low SNR to the Gaussian value
    ln sqrt(2 / pi) + (gamma_E + ln 2) / 2 ~ 0.409.
    """
    alpha = SPEECH_GAMMA_SHAPE
    du = np.log(10.0) / 20.0 / _STEPS_PER_DB
    u = np.arange(_LOG_S_RANGE[0], _LOG_S_RANGE[1], du)
    weights = np.exp(alpha * u - np.exp(u) - gammaln(alpha))
    weights /= weights.sum()

    # ln sigma falls by one dB-step per SNR step; r = exp(u - ln sigma) for the lowest SNR
    # starts the grid and every higher SNR shifts the window by _STEPS_PER_DB samples.
    log_sigma_max = 0.5 * (np.log(alpha * (alpha + 1.0)) - SNR_GRID_DB[0] * np.log(10.0) / 10.0)
    n_shift = (SNR_GRID_DB.size - 1) * _STEPS_PER_DB
    r = np.exp(u[0] - log_sigma_max + du * np.arange(u.size + n_shift))
    m_windows = sliding_window_view(_expected_abs(r), u.size)[::_STEPS_PER_DB]
    h_windows = sliding_window_view(_expected_log_abs(r), u.size)[::_STEPS_PER_DB]
    return np.log(m_windows @ weights) - h_windows @ weights


def wada_snr(audio: np.ndarray, fs: int) -> float:
    """Blind SNR estimate in dB, clamped to [-20, 100].

    ``fs`` is unused: the amplitude distribution does not depend on the sampling rate; it is
    accepted so that every signal measure has the same signature.
    """
    x = np.asarray(audio, dtype=np.float64)
    if x.size == 0:
        raise NoScore(TOO_SHORT, "empty signal")
    magnitude = np.abs(x)
    peak = magnitude.max()
    if peak == 0.0:
        raise NoScore(UNVOICED, "digital silence has no signal-to-noise ratio")
    magnitude = np.maximum(magnitude / peak, AMPLITUDE_FLOOR)
    g = np.log(magnitude.mean()) - np.log(magnitude).mean()
    return float(np.interp(g, g_table(), SNR_GRID_DB))
