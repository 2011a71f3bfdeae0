"""Blind signal-to-noise ratio by waveform amplitude distribution analysis (WADA).

Kim & Stern (2008), "Robust signal-to-noise ratio estimation based on waveform amplitude
distribution analysis", Interspeech. Clean speech amplitudes are modelled as Gamma distributed
with shape alpha = 0.4 and the noise as additive Gaussian. The statistic
``G = ln E|z| - E ln|z|`` of the noisy waveform z then depends on the SNR alone (it is scale
invariant), so a table of the expected G against SNR turns a measured G into an SNR.

Two tables are available:

* ``compat="pathbench"`` (the default of the ``wada_snr`` evaluator): the G table published
  with Kim & Stern's MATLAB implementation (:data:`KIM_STERN_G_TABLE`), read the way PathBench
  reads it (:func:`wada_snr_pathbench`), with the amplitude statistics in float32, so values
  equal PathBench's.
* ``compat="none"``: a table derived here, deterministically, by numerical integration of the
  model (:func:`g_table`). The published table was itself estimated from samples: it is not
  monotone below 0 dB and is noisy above 50 dB, where PathBench's values run up to 3.8 dB
  above the model's.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.special import digamma, erf, gammaln, xlogy

from pathbench_flow.common.status import TOO_SHORT, UNVOICED, NoScore

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


KIM_STERN_G_TABLE = np.array(
    [
        0.40974774, 0.40986926, 0.40998566, 0.40969089, 0.40986186, 0.40999006, 0.41027138,
        0.41052627, 0.41101024, 0.41143264, 0.41231718, 0.41337272, 0.41526426, 0.41781920,
        0.42077252, 0.42452799, 0.42918886, 0.43510373, 0.44234195, 0.45161485, 0.46221153,
        0.47491647, 0.48883809, 0.50509236, 0.52353709, 0.54372088, 0.56532427, 0.58847532,
        0.61346212, 0.63954496, 0.66750818, 0.69583724, 0.72454762, 0.75414799, 0.78323148,
        0.81240985, 0.84219775, 0.87166406, 0.90030504, 0.92880418, 0.95655449, 0.98353490,
        1.01047155, 1.03620950, 1.06136425, 1.08579312, 1.10948190, 1.13277995, 1.15472826,
        1.17627308, 1.19703503, 1.21671694, 1.23535898, 1.25364313, 1.27103891, 1.28718029,
        1.30302865, 1.31839527, 1.33294817, 1.34700935, 1.36057270, 1.37345513, 1.38577122,
        1.39733504, 1.40856397, 1.41959619, 1.42983624, 1.43958467, 1.44902176, 1.45804831,
        1.46669568, 1.47486938, 1.48269965, 1.49034339, 1.49748214, 1.50435106, 1.51076426,
        1.51698915, 1.52290970, 1.52857800, 1.53389835, 1.53912110, 1.54390650, 1.54858517,
        1.55310776, 1.55744391, 1.56164927, 1.56566348, 1.56938671, 1.57307767, 1.57654764,
        1.57980083, 1.58304129, 1.58602496, 1.58880681, 1.59162477, 1.59419690, 1.59693155,
        1.59944600, 1.60185011, 1.60408668, 1.60627134, 1.60826199, 1.61004547, 1.61192472,
        1.61369656, 1.61534074, 1.61688905, 1.61838916, 1.61985374, 1.62135878, 1.62268119,
        1.62390423, 1.62513143, 1.62632463, 1.62740270, 1.62842767, 1.62945532, 1.63033070,
        1.63128026, 1.63204102,
    ]
)  # fmt: skip
"""Expected G at each SNR of SNR_GRID_DB, as published with Kim & Stern's implementation
(LabROSA ``snreval``) and used by PathBench; the first entries are not monotone."""


def _statistic(magnitude: np.ndarray) -> np.floating:
    """G = ln E|z| - E ln|z| of peak-normalised magnitudes (in their own float precision)."""
    return np.log(magnitude.mean()) - np.log(magnitude).mean()


def _magnitudes(audio: np.ndarray, dtype: type[np.floating]) -> np.ndarray:
    """|x| / max|x| in ``dtype``, floored at AMPLITUDE_FLOOR; NoScore without a signal."""
    x = np.asarray(audio, dtype=dtype)
    if x.size == 0:
        raise NoScore(TOO_SHORT, "empty signal")
    magnitude = np.abs(x)
    peak = magnitude.max()
    if peak == 0.0:
        raise NoScore(UNVOICED, "digital silence has no signal-to-noise ratio")
    return np.maximum(magnitude / peak, dtype(AMPLITUDE_FLOOR))


def wada_snr(audio: np.ndarray, fs: int) -> float:
    """Blind SNR estimate in dB from the derived table, clamped to [-20, 100].

    ``fs`` is unused: the amplitude distribution does not depend on the sampling rate; it is
    accepted so that every signal measure has the same signature.
    """
    g = _statistic(_magnitudes(audio, np.float64))
    return float(np.interp(g, g_table(), SNR_GRID_DB))


def pathbench_lookup(g: float) -> float:
    """SNR (dB) for a measured G from :data:`KIM_STERN_G_TABLE`, as PathBench looks it up.

    The bracket starts at the highest table entry below G, wherever it lies (the table's
    non-monotone head makes this differ from a sorted search); G at or below every entry
    gives -20 dB, a bracket starting at the last entry gives 100 dB, and otherwise the SNR
    is interpolated linearly towards the next entry.
    """
    below = np.flatnonzero(g > KIM_STERN_G_TABLE)
    if below.size == 0:
        return float(SNR_GRID_DB[0])
    low = int(below[-1])
    if low == SNR_GRID_DB.size - 1:
        return float(SNR_GRID_DB[-1])
    fraction = (g - KIM_STERN_G_TABLE[low]) / (KIM_STERN_G_TABLE[low + 1] - KIM_STERN_G_TABLE[low])
    return float(SNR_GRID_DB[low] + fraction * (SNR_GRID_DB[low + 1] - SNR_GRID_DB[low]))


def wada_snr_pathbench(audio: np.ndarray, fs: int) -> float:
    """Blind SNR estimate in dB as PathBench computes it (its published table and lookup).

    The magnitude statistics are taken in float32, as PathBench casts the waveform, so G
    carries float32 rounding; the lookup itself runs in float64. PathBench then splits the
    signal energy by that SNR and takes 10 log10 of the ratio, which returns the same SNR, so
    that step is left out. ``fs`` is unused (see :func:`wada_snr`).
    """
    return pathbench_lookup(float(_statistic(_magnitudes(audio, np.float32))))
