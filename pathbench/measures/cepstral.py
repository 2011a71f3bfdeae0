"""Cepstral peak prominence (CPP) and its smoothed, Praat-defined variant (CPPS).

A periodic voice has a harmonic spectrum, whose log spectrum ripples at the F0 spacing; the
cepstrum turns that ripple into a peak at quefrency 1/F0. The peak's height above the
cepstrum's overall trend ("prominence") falls as aspiration noise, jitter and shimmer blur the
harmonics, which is why CPP/CPPS track dysphonia and, in pathological speech, intelligibility.

Three functions:

* :func:`cpp` reproduces PathBench's frame-wise CPP exactly (its framing, window and linear
  cepstrum, hence values in the hundreds).
* :func:`cpps_praat` is the reference CPPS: Praat's "To PowerCepstrogram" and "Get CPPS" run
  through parselmouth with the settings below.
* :func:`cpps` recomputes that Praat value with numpy. Praat fits its cepstral tilt line with
  Theil's complete method, sorting all ~300 000 pairwise slopes of every 2-ms frame, twice;
  that takes tens of CPU seconds per second of audio. Here the median slope is found by
  counting instead of sorting (see :func:`_theil_sen_slope`): on speech the value stays within
  a thousandth of a dB of Praat's (about 0.01 dB on pure tones, the hardest case found) at two
  orders of magnitude less CPU.

All three take audio at :data:`pathbench.SAMPLE_RATE`; at that rate Praat analyses the samples
as given (its maximum frequency of 8 kHz needs no resampling), so numpy and Praat see the same
signal.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import numpy as np
import parselmouth
from numpy.lib.stride_tricks import sliding_window_view
from parselmouth.praat import call
from scipy import sparse

from pathbench import SAMPLE_RATE
from pathbench.status import TOO_SHORT, NoScore

# --- PathBench CPP -------------------------------------------------------------------------

CPP_FRAME = 641
"""Samples per CPP frame (40 ms at 16 kHz); also the length of both FFTs, as in PathBench."""

CPP_HOP = 160
"""Samples between CPP frames (10 ms)."""

CPP_PRE_EMPHASIS = 0.97
"""First-order pre-emphasis coefficient applied to the whole signal before framing."""

CPP_PEAK_BINS = (47, 266)
"""Cepstral bins (0-based, inclusive) searched for the peak: F0 of 16000/266 to 16000/47 Hz."""

_CPP_FIRST_CENTRE = 641
"""1-based centre sample of the first frame; centres follow every hop up to length - 640."""

_CHUNK_FRAMES = 512
"""Frames analysed per block; bounds memory on long recordings (arrays scale with frames)."""

# --- Praat CPPS settings --------------------------------------------------------------------

PITCH_FLOOR = 60.0
"""Hz. Praat's analysis window holds three periods of it: a 2 * 3 / 60 = 0.1 s Gaussian."""

TIME_STEP = 0.002
"""Seconds between cepstrogram frames."""

MAXIMUM_FREQUENCY = 8000.0
"""Hz. Praat analyses at twice this rate, i.e. at SAMPLE_RATE without resampling."""

PRE_EMPHASIS_FROM = 50.0
"""Hz. Praat's pre-emphasis coefficient is exp(-2 pi * 50 Hz / fs)."""

TIME_AVERAGING = 0.02
"""Seconds of cepstrogram averaged over time for the smoothing in CPPS."""

QUEFRENCY_AVERAGING = 0.0005
"""Seconds of quefrency averaged within each frame for the smoothing in CPPS."""

PEAK_PITCH_RANGE = (60.0, 330.0)
"""Hz. The cepstral peak is searched between quefrencies 1/330 s and 1/60 s."""

PEAK_TOLERANCE = 0.05
"""Passed to Praat's "Get CPPS"; it only shapes a rahmonics-to-noise column, not CPPS."""

TILT_RANGE = (0.001, 0.05)
"""Seconds of quefrency over which the tilt (trend) line is fitted, before and after smoothing."""

_POWER_FLOOR = 1e-30
"""Praat adds this to cepstral power before taking dB, so that 0 maps to -300 dB."""

_SPECTRUM_FLOOR = 1e-300
"""Praat adds this to spectral power before its natural logarithm."""


def _require_rate(fs: int) -> None:
    """Both definitions are tied to 16 kHz (FFT lengths, bins); other rates are caller bugs."""
    if fs != SAMPLE_RATE:
        raise ValueError(f"cepstral measures need audio at {SAMPLE_RATE} Hz, got {fs} Hz")


def _chunks(n_frames: int) -> Iterator[tuple[int, int]]:
    """[start, stop) frame ranges of at most _CHUNK_FRAMES frames covering all frames."""
    for start in range(0, n_frames, _CHUNK_FRAMES):
        yield start, min(start + _CHUNK_FRAMES, n_frames)


# --- PathBench CPP -------------------------------------------------------------------------


@cache
def _cpp_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hann window, cosine matrix of the second FFT, and centred bin indices of the line fit.

    The log magnitude spectrum of a real frame is real and symmetric (L[k] = L[641 - k]), so its
    641-point FFT is real: C[q] = L[0] + 2 sum_{k=1}^{320} L[k] cos(2 pi k q / 641). Evaluating
    that for the 220 searched bins only is one matrix product, cheaper than a prime-length FFT.
    """
    i = np.arange(1, CPP_FRAME + 1)
    window = 0.5 - 0.5 * np.cos(2 * np.pi * i / (CPP_FRAME + 1))
    k = np.arange(CPP_FRAME // 2 + 1)[:, None]
    q = np.arange(CPP_PEAK_BINS[0], CPP_PEAK_BINS[1] + 1)[None, :]
    cosines = np.where(k == 0, 1.0, 2.0) * np.cos(2 * np.pi * k * q / CPP_FRAME)
    centred_bins = q[0] - q[0].mean()
    return window, cosines, centred_bins


def cpp(audio: np.ndarray, fs: int) -> float:
    """PathBench's cepstral peak prominence: mean over 10-ms frames of the linear-cepstrum peak
    (60-333 Hz) above a least-squares line through the searched cepstral bins.

    Raises NoScore(too_short) when the signal holds no complete frame (fewer than 1281 samples).
    """
    _require_rate(fs)
    x = np.asarray(audio, dtype=np.float64)
    last_centre = x.size - (CPP_FRAME - 1)
    if last_centre < _CPP_FIRST_CENTRE:
        raise NoScore(TOO_SHORT, f"{x.size} samples hold no {CPP_FRAME}-sample CPP frame")
    n_frames = (last_centre - _CPP_FIRST_CENTRE) // CPP_HOP + 1
    emphasised = np.concatenate((x[:1], x[1:] - CPP_PRE_EMPHASIS * x[:-1]))
    first_start = _CPP_FIRST_CENTRE - (CPP_FRAME + 1) // 2
    frames = sliding_window_view(emphasised, CPP_FRAME)[first_start::CPP_HOP]
    window, cosines, centred_bins = _cpp_tables()
    total = 0.0
    for start, stop in _chunks(n_frames):
        spectrum = np.abs(np.fft.rfft(frames[start:stop] * window, axis=1))
        log_spectrum = 20 * np.log10(spectrum + np.finfo(float).eps)
        cepstrum = np.abs(log_spectrum @ cosines)
        slope = cepstrum @ centred_bins / (centred_bins @ centred_bins)
        peak = np.argmax(cepstrum, axis=1)
        rows = np.arange(stop - start)
        line_at_peak = cepstrum.mean(axis=1) + slope * centred_bins[peak]
        total += float(np.sum(cepstrum[rows, peak] - line_at_peak))
    return total / n_frames


# --- Praat CPPS via parselmouth -------------------------------------------------------------


@cache
def _window_samples() -> int:
    """Samples in Praat's analysis window: 2 * (3 / pitch floor) seconds, rounded."""
    return round(2.0 * (3.0 / PITCH_FLOOR) * SAMPLE_RATE)


def _require_window(n_samples: int) -> None:
    """Praat shrinks the window to the sound when it is shorter, changing the FFT size and
    quefrency grid; below one window there is no CPPS comparable with longer signals."""
    if n_samples < _window_samples():
        raise NoScore(
            TOO_SHORT,
            f"{n_samples} samples are shorter than the {_window_samples()}-sample CPPS window",
        )


def cpps_praat(audio: np.ndarray, fs: int) -> float:
    """Smoothed CPP (dB) computed by Praat: the reference that :func:`cpps` reproduces.

    Praat settings: To PowerCepstrogram (pitch floor 60 Hz, time step 2 ms, maximum frequency
    8 kHz, pre-emphasis from 50 Hz); Get CPPS (tilt subtracted before smoothing, 20 ms time and
    0.5 ms quefrency averaging, peak search 60-330 Hz, tolerance 0.05, parabolic interpolation,
    straight tilt line fitted over 1-50 ms quefrency by Theil's robust (slow) method).
    """
    _require_rate(fs)
    _require_window(len(audio))
    sound = parselmouth.Sound(np.asarray(audio, dtype=np.float64), sampling_frequency=fs)
    cepstrogram = call(
        sound, "To PowerCepstrogram", PITCH_FLOOR, TIME_STEP, MAXIMUM_FREQUENCY, PRE_EMPHASIS_FROM
    )
    return call(
        cepstrogram,
        "Get CPPS",
        True,
        TIME_AVERAGING,
        QUEFRENCY_AVERAGING,
        *PEAK_PITCH_RANGE,
        PEAK_TOLERANCE,
        "Parabolic",
        *TILT_RANGE,
        "Straight",
        "Robust slow",
    )


# --- Praat CPPS in numpy --------------------------------------------------------------------


class _Grid:
    """Quefrency grid and bin ranges of Praat's power cepstrogram at SAMPLE_RATE.

    Bin ranges use Praat's rule (first bin at or above the lower bound, last at or below the
    upper one) on the same floating-point quotients, so boundary bins match Praat's choice.
    """

    def __init__(self) -> None:
        self.window = _window_samples()
        self.nfft = 1 << (self.window - 1).bit_length()
        self.n_quefrencies = self.nfft // 2 + 1
        self.max_quefrency = 0.5 * self.nfft / SAMPLE_RATE
        self.dq = self.max_quefrency / (self.n_quefrencies - 1)
        self.tilt = slice(
            int(np.ceil(TILT_RANGE[0] / self.dq)), int(np.floor(TILT_RANGE[1] / self.dq)) + 1
        )
        self.peak_quefrencies = (1.0 / PEAK_PITCH_RANGE[1], 1.0 / PEAK_PITCH_RANGE[0])
        self.peak_bins = (
            int(np.ceil(self.peak_quefrencies[0] / self.dq)),
            int(np.floor(self.peak_quefrencies[1] / self.dq)),
        )
        self.quefrencies = np.arange(self.n_quefrencies) * self.dq
        self.tilt_quefrencies = self.quefrencies[self.tilt]


@cache
def _grid() -> _Grid:
    return _Grid()


@cache
def _gaussian_window() -> np.ndarray:
    """Praat's Gaussian analysis window: exp(-12) at its edges, shifted and scaled to 0..1."""
    n = _window_samples()
    i = np.arange(1, n + 1)
    edge = np.exp(-12.0)
    return (np.exp(-48.0 * (i - 0.5 * (n + 1)) ** 2 / (n + 1) ** 2) - edge) / (1.0 - edge)


def _frame_times(n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Centre times and 0-based first samples of Praat's cepstrogram frames.

    Frames are centred on the signal as a whole (Praat's short-term analysis rule); each frame's
    first sample is the nearest to its centre minus half a window. The arithmetic follows
    Praat's, because half-sample ties are decided by the last bit of these times.
    """
    dx = 1.0 / SAMPLE_RATE
    x1 = 0.5 * dx
    duration = dx * n_samples
    window_duration = 2.0 * (3.0 / PITCH_FLOOR)
    n_frames = int(np.floor((duration - window_duration) / TIME_STEP)) + 1
    first_time = (x1 - 0.5 * dx + 0.5 * duration) - 0.5 * (n_frames * TIME_STEP) + 0.5 * TIME_STEP
    times = first_time + np.arange(n_frames) * TIME_STEP
    nearest = np.floor((times - window_duration / 2 - x1) / dx + 1.0 + 0.5).astype(np.int64)
    return times, nearest - 1


def _emphasised_and_padded(x: np.ndarray) -> np.ndarray:
    """Praat's pre-emphasis of the whole sound, with one window of zeros on both sides because
    Praat reads zeros outside the sound when a frame overhangs it."""
    coefficient = np.exp(-2.0 * np.pi * PRE_EMPHASIS_FROM / SAMPLE_RATE)
    padding = np.zeros(_window_samples())
    return np.concatenate((padding, x[:1], x[1:] - coefficient * x[:-1], padding))


def _power_cepstra(padded: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Praat's power cepstrum of each frame: squared real cepstrum of the Gaussian-windowed,
    mean-removed frame, from a zero-padded FFT (ln power spectrum, inverse FFT).

    ``padded`` comes from :func:`_emphasised_and_padded`; ``starts`` index the unpadded signal.
    Praat's amplitude scalings (sample period on the spectrum, frequency step on the inverse)
    are kept so that its additive floors act on the same magnitudes.
    """
    grid = _grid()
    frames = sliding_window_view(padded, grid.window)[starts + grid.window]
    frames = (frames - frames.mean(axis=1, keepdims=True)) * _gaussian_window()
    spectrum = np.fft.rfft(frames, grid.nfft, axis=1) / SAMPLE_RATE
    log_power = np.log(spectrum.real**2 + spectrum.imag**2 + _SPECTRUM_FLOOR)
    cepstrum = np.fft.irfft(log_power, grid.nfft, axis=1)[:, : grid.n_quefrencies] * SAMPLE_RATE
    return cepstrum**2


def _to_db(power: np.ndarray) -> np.ndarray:
    return 10.0 * np.log10(power + _POWER_FLOOR)


_BLOCK = 28
"""Block size of the pair count; near sqrt(785), which balances its brute-force and grid parts."""


def _count_descending_pairs(z: np.ndarray) -> np.ndarray:
    """For each row, the number of index pairs i < j with z[j] <= z[i].

    Pairs are split three ways so that no part needs all n^2 / 2 comparisons: pairs within one
    index block are compared directly, pairs within one value block (consecutive in sorted
    order) are ordered by their index blocks, and all remaining pairs lie in different index
    blocks and different value blocks, so a 2-D histogram of (index block, value block) counts
    them with prefix sums. Padding is +inf at the end, which forms pairs only among itself.
    Equal values in different blocks are ordered as the sort leaves them; they arise only when
    t is exactly one of the pairwise slopes, and then shift C(t) by at most those ties.
    """
    rows, n = z.shape
    n_blocks = -(-n // _BLOCK)
    size = n_blocks * _BLOCK
    padding = size - n
    z = np.concatenate((z, np.full((rows, padding), np.inf)), axis=1)
    order = np.argsort(z, axis=1)
    index_block = (order // _BLOCK).astype(np.int16)
    # (row, position within block, block) layout makes each shifted comparison contiguous.
    by_index = np.ascontiguousarray(z.reshape(rows, n_blocks, _BLOCK).transpose(0, 2, 1))
    by_value = np.ascontiguousarray(index_block.reshape(rows, n_blocks, _BLOCK).transpose(0, 2, 1))
    count = np.zeros(rows, dtype=np.int64)
    for lag in range(1, _BLOCK):
        count += np.count_nonzero(by_index[:, lag:] <= by_index[:, :-lag], axis=(1, 2))
        # In sorted order the later element has the larger value: it must come first in time.
        count += np.count_nonzero(by_value[:, lag:] < by_value[:, :-lag], axis=(1, 2))
    # Value blocks are numbered downwards so that "larger value" becomes a prefix sum.
    value_block = (n_blocks - 1) - np.arange(size, dtype=np.int32) // _BLOCK
    cell = index_block.astype(np.int32) * n_blocks + value_block
    cell += (np.arange(rows, dtype=np.int32) * n_blocks * n_blocks)[:, None]
    cells = np.bincount(cell.ravel(), minlength=rows * n_blocks * n_blocks)
    cells = cells.reshape(rows, n_blocks, n_blocks).astype(np.int32)
    earlier = np.cumsum(np.cumsum(cells, axis=2, dtype=np.int32), axis=1, dtype=np.int32)
    count += np.einsum("rij,rij->r", cells[:, 1:, 1:], earlier[:, :-1, :-1], dtype=np.int64)
    return count - padding * (padding - 1) // 2


_SAMPLED_PAIRS = 500
"""Random pairs whose slopes give the first guess and the local shape of the slope distribution."""


@cache
def _sampled_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """A fixed (seeded) uniform sample of index pairs i < j, so results are reproducible."""
    rng = np.random.default_rng(20130906)
    first = rng.integers(0, n, size=_SAMPLED_PAIRS)
    second = rng.integers(0, n - 1, size=_SAMPLED_PAIRS)
    second += second >= first
    return np.minimum(first, second), np.maximum(first, second)


def _theil_sen_slope(values: np.ndarray) -> np.ndarray:
    """Median of all pairwise slopes (y_j - y_i) / (j - i) of each row: Theil's complete method,
    which Praat's "Robust slow" tilt fit uses, up to a rank error of a few dozen pairs.

    With C(t) the number of pairs whose slope is at most t, the median is where C crosses half
    the N pairs. C(t) equals the number of pairs i < j with z_j <= z_i for z_k = y_k - t * k, an
    exact count (:func:`_count_descending_pairs`) that needs no slopes at all. A seeded sample
    of pairs gives a first guess t0 (its median) and, through its quantiles, a second guess t1
    that corrects t0 by the exact rank error C(t0) - N/2; the secant through the exact counts
    at t0 and t1 then lands within ~50 of ~300 000 ranks of the median (a slope error ~0.3 dB/s,
    negligible for CPPS). Rows whose equal values put many slopes at exactly 0 are finished by
    :func:`_slope_with_ties` when that jump in C could lie under the secant.
    """
    rows, n = values.shape
    n_pairs = n * (n - 1) // 2
    target = n_pairs / 2 + 0.5  # between the two middle slopes of an even count
    first, second = _sampled_pairs(n)
    sample = np.sort((values[:, second] - values[:, first]) / (second - first), axis=1)
    middle = _SAMPLED_PAIRS // 2
    guess = 0.5 * (sample[:, middle - 1] + sample[:, middle])
    index = np.arange(n)
    excess = _count_descending_pairs(values - guess[:, None] * index) - target
    # Read the sample quantile displaced by the exact rank error, interpolating linearly.
    position = np.clip((0.5 - excess / n_pairs) * _SAMPLED_PAIRS - 0.5, 0, _SAMPLED_PAIRS - 1)
    below = np.minimum(np.floor(position).astype(np.int64), _SAMPLED_PAIRS - 2)
    fraction = position - below
    row = np.arange(rows)
    second_guess = (1 - fraction) * sample[row, below] + fraction * sample[row, below + 1]
    second_excess = _count_descending_pairs(values - second_guess[:, None] * index) - target
    rise = second_excess - excess
    moved = rise != 0
    step = np.where(moved, excess / np.where(moved, rise, 1), 0.0)
    slope = np.where(moved, guess - step * (second_guess - guess), second_guess)
    # Equal values give pairs of slope exactly 0, a jump in C(t) at 0 that a secant spanning 0
    # cannot see; where it could matter, the rows are solved by bracketing instead.
    spans_zero = np.minimum(np.minimum(guess, second_guess), slope) <= 0
    spans_zero &= np.maximum(np.maximum(guess, second_guess), slope) >= 0
    candidates = np.flatnonzero(spans_zero)
    if candidates.size:
        ordered = np.sort(values[candidates], axis=1)
        jumps = _equal_value_pairs(ordered) > _NEGLIGIBLE_JUMP
        tied = candidates[jumps]
        slope[tied] = _slope_with_ties(values[tied], ordered[jumps], target)
    return slope


def _equal_value_pairs(ordered: np.ndarray) -> np.ndarray:
    """Pairs of exactly equal values in each sorted row: a run of m equal values holds
    m (m - 1) / 2, the sum over the run of each value's number of equal predecessors."""
    same = ordered[:, 1:] == ordered[:, :-1]
    run = np.cumsum(same, axis=1)
    run -= np.maximum.accumulate(np.where(same, 0, run), axis=1)
    return run.sum(axis=1)


_NEGLIGIBLE_JUMP = 50
"""Tied pairs whose jump the secant may ignore: it shifts the median's rank by at most that."""

_ZERO_SLOPE = 1e-9
"""dB per bin. Counting at +-this instead of at 0 keeps equal values apart (z then differs by
at least this), and slopes this small are indistinguishable from the zeros ties produce."""

_MAX_ITERATIONS = 60
"""Safeguard on the regula falsi steps of :func:`_slope_with_ties`, which needs 10-20."""


def _slope_with_ties(values: np.ndarray, ordered: np.ndarray, target: float) -> np.ndarray:
    """Median pairwise slope of rows holding equal values (``ordered``: each row sorted).

    Equal values (0-dB stretches where clipping flattened a whole smoothing window, digital
    silence) make pairs of slope exactly 0, so C(t) jumps at t = 0 and the secant's straight
    line through C misplaces the median. Counts just below and above 0 show whether the jump
    spans the middle ranks (the median is 0). Otherwise the median lies on one side, where C
    is gradual again: regula falsi (Illinois variant) between the jump and the largest possible
    slope (the value range per unit lag) narrows in on it until one rank step is left.
    """
    rows, n = values.shape
    n_pairs = n * (n - 1) // 2
    index = np.arange(n)
    below = _count_descending_pairs(values + _ZERO_SLOPE * index)
    above = _count_descending_pairs(values - _ZERO_SLOPE * index)
    negative = target <= below
    off_zero = negative | (target > above)
    limit = ordered[:, -1] - ordered[:, 0] + 1.0
    low = np.where(negative, -limit, _ZERO_SLOPE)
    high = np.where(negative, -_ZERO_SLOPE, limit)
    low_count = np.where(negative, 0, above)
    high_count = np.where(negative, below, n_pairs)
    # Interpolation weights: the counts' distances from the target, halved by Illinois' rule.
    low_weight, high_weight = target - low_count, high_count - target
    kept = np.zeros(rows, dtype=np.int8)  # end left unchanged by the last step: -1 low, +1 high
    for _ in range(_MAX_ITERATIONS):
        active = np.flatnonzero(off_zero & (high_count - low_count > 1))
        if active.size == 0:
            break
        lo, hi = low[active], high[active]
        trial = (lo * high_weight[active] + hi * low_weight[active]) / (
            low_weight[active] + high_weight[active]
        )
        count = _count_descending_pairs(values[active] - trial[:, None] * index)
        rises = count > target
        # Illinois: an end that survives twice in a row has its weight halved.
        low_weight[active] = np.where(
            rises, low_weight[active] / np.where(kept[active] == -1, 2, 1), target - count
        )
        high_weight[active] = np.where(
            rises, count - target, high_weight[active] / np.where(kept[active] == 1, 2, 1)
        )
        low[active] = np.where(rises, lo, trial)
        high[active] = np.where(rises, trial, hi)
        low_count[active] = np.where(rises, low_count[active], count)
        high_count[active] = np.where(rises, count, high_count[active])
        kept[active] = np.where(rises, -1, 1)
    return np.where(off_zero, 0.5 * (low + high), 0.0)


def _tilt_lines(db: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Slope (dB/s) and intercept (dB) of Praat's robust tilt line for each frame.

    Theil's intercept is the median of y - slope * x over the fitted points.
    """
    grid = _grid()
    fitted = db[:, grid.tilt]
    slope = _theil_sen_slope(fitted) / grid.dq
    intercept = np.median(fitted - slope[:, None] * grid.tilt_quefrencies, axis=1)
    return slope, intercept


def _flatten(power: np.ndarray) -> np.ndarray:
    """Subtract the tilt line in dB and clip at 0 dB, as Praat does before smoothing.

    Praat evaluates the line at dq / 2 for the zero-quefrency bin; values below the line become
    0 dB (power 1).
    """
    grid = _grid()
    db = _to_db(power)
    slope, intercept = _tilt_lines(db)
    quefrencies = grid.quefrencies.copy()
    quefrencies[0] = 0.5 * grid.dq
    above = np.maximum(db - (slope[:, None] * quefrencies + intercept[:, None]), 0.0)
    return 10.0 ** (above / 10.0)


def _interval_mean_weights(n: int, low: np.ndarray, high: np.ndarray, reach: int) -> np.ndarray:
    """Weights of Praat's interpolating mean of n samples over windows [low, high].

    ``low`` and ``high`` are in sample units (sample k at k). Praat averages the piecewise-linear
    interpolation of the samples, which extends half a sample past the end samples as a
    constant and is undefined beyond, over the window clipped to that support. A sample's weight
    is therefore the integral of its hat function over the clipped window, divided by the
    clipped length. Returns shape (len(low), 2 * reach + 1): weights of samples k - reach ..
    k + reach for window k (zero outside 0..n-1).
    """
    low = np.maximum(low, -0.5)
    high = np.minimum(high, n - 0.5)
    sample = np.arange(len(low))[:, None] + np.arange(-reach, reach + 1)[None, :]

    def hat_integral(u: np.ndarray) -> np.ndarray:
        """Integral of each sample's hat function from -inf to u."""
        s = u[:, None] - sample
        rising = np.clip(s, -1.0, 0.0)
        left = np.where(sample == 0, np.clip(s, -0.5, 0.0) + 0.5, 0.5 * (rising + 1.0) ** 2)
        falling = np.clip(s, 0.0, 1.0)
        right = np.where(sample == n - 1, np.clip(s, 0.0, 0.5), falling - 0.5 * falling**2)
        return left + right

    weights = (hat_integral(high) - hat_integral(low)) / (high - low)[:, None]
    weights[(sample < 0) | (sample >= n)] = 0.0
    return weights


def _averaging_matrix(n: int, low: np.ndarray, high: np.ndarray, step: float) -> sparse.csr_array:
    """Sparse n x n matrix applying :func:`_interval_mean_weights` (bounds in physical units)."""
    reach = int(np.ceil(np.max(high - low) / (2 * step))) + 1
    weights = _interval_mean_weights(n, low / step, high / step, reach)
    rows = np.repeat(np.arange(n), 2 * reach + 1)
    columns = (np.arange(n)[:, None] + np.arange(-reach, reach + 1)[None, :]).ravel()
    keep = (columns >= 0) & (columns < n)
    return sparse.csr_array((weights.ravel()[keep], (rows[keep], columns[keep])), shape=(n, n))


@cache
def _quefrency_averaging() -> sparse.csr_array:
    """Praat's quefrency smoothing: mean over +-0.25 ms, clipped to the quefrency domain."""
    grid = _grid()
    q = grid.quefrencies
    half = 0.5 * QUEFRENCY_AVERAGING
    return _averaging_matrix(
        grid.n_quefrencies,
        np.maximum(q - half, 0.0),
        np.minimum(q + half, grid.max_quefrency),
        grid.dq,
    )


def _time_averaging(times: np.ndarray, n_samples: int) -> sparse.csr_array:
    """Praat's time smoothing: mean over +-10 ms, clipped to the sound's time domain."""
    half = 0.5 * TIME_AVERAGING
    duration = n_samples / SAMPLE_RATE
    low = np.maximum(times - half, 0.0) - times[0]
    high = np.minimum(times + half, duration) - times[0]
    return _averaging_matrix(len(times), low, high, TIME_STEP)


def _peaks(db: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Praat's cepstral maximum in the pitch range: dB value and quefrency (s) per frame.

    As Praat does: start from the larger end value, take any interior local maximum (strictly
    above its left neighbour, at least its right one) whose parabolic peak is higher, and clip
    the quefrency to the search range.
    """
    grid = _grid()
    first, last = grid.peak_bins
    centre = db[:, first : last + 1]
    left = db[:, first - 1 : last]
    right = db[:, first + 1 : last + 2]
    is_peak = (centre > left) & (centre >= right)
    slope = 0.5 * (right - left)
    curvature = np.where(is_peak, 2 * centre - left - right, 1.0)
    height = np.where(is_peak, centre + 0.5 * slope**2 / curvature, -np.inf)
    offset = np.where(is_peak, slope / curvature, 0.0)
    best = np.argmax(height, axis=1)
    row = np.arange(db.shape[0])
    end_is_last = db[:, last] > db[:, first]
    end_value = np.where(end_is_last, db[:, last], db[:, first])
    end_bin = np.where(end_is_last, last, first)
    interior = height[row, best] > end_value
    value = np.where(interior, height[row, best], end_value)
    position = np.where(interior, first + best + offset[row, best], end_bin)
    return value, np.clip(position * grid.dq, *grid.peak_quefrencies)


def cpps(audio: np.ndarray, fs: int) -> float:
    """Smoothed cepstral peak prominence (dB) as Praat computes it (see :func:`cpps_praat`).

    Pipeline per frame, as in Praat: power cepstrum; robust tilt line subtracted (clipping at
    0 dB); power averaged over 20 ms of frames and 0.5 ms of quefrency; robust tilt line fitted
    again; prominence of the parabolically interpolated 60-330 Hz peak above it. CPPS is the
    mean prominence. Raises NoScore(too_short) below one 0.1-s analysis window.
    """
    _require_rate(fs)
    _require_window(len(audio))
    x = np.asarray(audio, dtype=np.float64)
    padded = _emphasised_and_padded(x)
    times, starts = _frame_times(x.size)
    time_averaging = _time_averaging(times, x.size)
    total = 0.0
    for start, stop in _chunks(len(times)):
        rows = time_averaging[start:stop]
        # Only the frames these rows average over (a few beyond the block) need analysing.
        low, high = int(rows.indices.min()), int(rows.indices.max()) + 1
        flattened = _flatten(_power_cepstra(padded, starts[low:high]))
        smoothed = rows[:, low:high] @ flattened
        db = _to_db((_quefrency_averaging() @ smoothed.T).T)
        slope, intercept = _tilt_lines(db)
        peak, quefrency = _peaks(db)
        total += float(np.sum(peak - (slope * quefrency + intercept)))
    return total / len(times)
