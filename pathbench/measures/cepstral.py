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
  counting instead of sorting slopes (see :func:`_theil_sen_slope`), the counts by small
  numba kernels over numpy's integer sort: on speech the value stays within a thousandth of a
  dB of Praat's (about 0.01 dB on pure tones, the hardest case found) at 15-20x real time on
  one core (``benchmarks/evaluators.py``), three orders of magnitude less CPU than Praat.

All three take audio at :data:`pathbench.SAMPLE_RATE`; at that rate Praat analyses the samples
as given (its maximum frequency of 8 kHz needs no resampling), so numpy and Praat see the same
signal.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import numba
import numpy as np
import parselmouth
import scipy.fft
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


@cache
def _scaled_window() -> np.ndarray:
    """The Gaussian window times the sample period, Praat's scaling of the spectrum."""
    return _gaussian_window() / SAMPLE_RATE


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
    are kept so that its additive floors act on the same magnitudes; the first is folded into
    the window. The log power spectrum is real and even, so its inverse FFT is a type-1 DCT of
    the nfft / 2 + 1 bins (a third cheaper).
    """
    grid = _grid()
    frames = sliding_window_view(padded, grid.window)[starts + grid.window]
    frames = (frames - frames.mean(axis=1, keepdims=True)) * _scaled_window()
    spectrum = np.fft.rfft(frames, grid.nfft, axis=1)
    log_power = np.log(spectrum.real**2 + spectrum.imag**2 + _SPECTRUM_FLOOR)
    cepstrum = scipy.fft.dct(log_power, type=1, axis=1) * (SAMPLE_RATE / grid.nfft)
    return cepstrum**2


def _to_db(power: np.ndarray) -> np.ndarray:
    return 10.0 * np.log10(power + _POWER_FLOOR)


@numba.njit(cache=True, inline="always")
def _detrend(values: np.ndarray, slope: float, out: np.ndarray) -> None:
    """out[k] = values[k] - slope * k: the z of :func:`_count_descending_pairs`."""
    for index in range(values.size):
        out[index] = values[index] - slope * index


@numba.njit(cache=True, inline="always")
def _ones(word: np.uint64) -> np.uint64:
    """Set bits of a 64-bit word (branch-free SWAR population count)."""
    word = word - ((word >> np.uint64(1)) & np.uint64(0x5555555555555555))
    pairs = np.uint64(0x3333333333333333)
    word = (word & pairs) + ((word >> np.uint64(2)) & pairs)
    word = (word + (word >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (word * np.uint64(0x0101010101010101)) >> np.uint64(56)


@numba.njit(cache=True)
def _index_inversions(order: np.ndarray) -> int:
    """Pairs of positions a < b with order[a] > order[b].

    Indices already seen are kept as a bitset plus, per 64-index word, the number seen in that
    word and all later ones; the count of seen indices above each new one is then one lookup
    and one population count. Every step does the same work (no data-dependent branches),
    which on rows in random order is three times faster than a Fenwick tree.
    """
    n = order.size
    words = (n + 63) // 64
    seen = np.zeros(words, dtype=np.uint64)
    from_word = np.zeros(words + 1, dtype=np.int64)
    inversions = 0
    for position in range(n):
        index = order[position]
        word, bit = index >> 6, np.uint64(index & 63)
        inversions += from_word[word + 1] + _ones(seen[word] >> bit)
        seen[word] |= np.uint64(1) << bit
        for other in range(words):
            from_word[other] += other <= word
    return inversions


@numba.njit(cache=True)
def _index_bits(n: int) -> int:
    """Bits that hold any index below n."""
    bits = 1
    while (1 << bits) < n:
        bits += 1
    return bits


@numba.njit(cache=True)
def _sort_keys(values: np.ndarray, slopes: np.ndarray) -> np.ndarray:
    """32-bit keys whose integer order is the value order of each row's z up to rounding, and
    which carry each value's index: numpy sorts them twice as fast as it argsorts the floats.

    The key's high bits are those of z - min(z) as a float32 (non-negative, so its bits are
    ordered as its values, and small spreads keep their relative resolution), its low bits
    n - 1 - index. Values merged by rounding come out latest index first;
    :func:`_count_sorted` puts them in exact order.
    """
    rows, n = values.shape
    low = np.uint32((1 << _index_bits(n)) - 1)
    z = np.empty(n)
    narrow = np.empty(n, dtype=np.float32)
    bits = narrow.view(np.uint32)
    keys = np.empty((rows, n), dtype=np.uint32)
    for row in range(rows):
        _detrend(values[row], slopes[row], z)
        smallest = z.min()
        for index in range(n):
            narrow[index] = z[index] - smallest
        for index in range(n):
            keys[row, index] = (bits[index] & ~low) | (low - np.uint32(index))
    return keys


_SHORT_RUN = 16
"""Runs of merged keys up to this length are put in order by insertion, longer ones by merge
sort, which bounds the repair at O(n log n) even when rounding merges a whole row."""


@numba.njit(cache=True)
def _order_runs(z: np.ndarray, keys: np.ndarray, low: np.uint32, order: np.ndarray) -> None:
    """Decode sorted ``keys`` into ``order`` and sort each run of keys with equal high bits by
    exact value, stably, so that equal values keep their latest-index-first order."""
    n = z.size
    for position in range(n):
        order[position] = np.int64(low - (keys[position] & low))
    start = 0
    for stop in range(1, n + 1):
        if stop < n and (keys[stop] & ~low) == (keys[start] & ~low):
            continue
        if stop - start > _SHORT_RUN:
            run = order[start:stop].copy()
            order[start:stop] = run[np.argsort(z[run], kind="mergesort")]
        else:
            for position in range(start + 1, stop):
                moving = order[position]
                slot = position
                while slot > start and z[order[slot - 1]] > z[moving]:
                    order[slot] = order[slot - 1]
                    slot -= 1
                order[slot] = moving
        start = stop


@numba.njit(cache=True)
def _count_sorted(
    values: np.ndarray, slopes: np.ndarray, keys: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Descending pairs of each row's z and its exact sorted order, from its sorted keys.

    In that order (values ascending, equal values latest index first) a pair i < j is
    descending, z[j] <= z[i], exactly when j comes first: the count is the number of index
    inversions of the order.
    """
    rows, n = values.shape
    low = np.uint32((1 << _index_bits(n)) - 1)
    order = np.empty((rows, n), dtype=np.int64)
    counts = np.empty(rows, dtype=np.int64)
    z = np.empty(n)
    for row in range(rows):
        _detrend(values[row], slopes[row], z)
        _order_runs(z, keys[row], low, order[row])
        counts[row] = _index_inversions(order[row])
    return counts, order


def _count_descending_pairs(
    values: np.ndarray, slopes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each row, the number of index pairs i < j with z[j] <= z[i], where
    z[k] = values[k] - slope * k, and the order sorting z (equal values latest index first).

    That count is the number of pairwise slopes of ``values`` at most ``slope``. Rows are
    sorted by numpy's vectorised integer sort (:func:`_sort_keys`) and counted over the sorted
    order (:func:`_index_inversions`): O(n log n) per row, exact (ties included), and no
    pairwise slope is ever formed.
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    slopes = np.ascontiguousarray(slopes, dtype=np.float64)
    keys = _sort_keys(values, slopes)
    keys.sort(axis=1)
    return _count_sorted(values, slopes, keys)


@numba.njit(cache=True)
def _pair_slopes(values: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Slopes (y[second] - y[first]) / (second - first) of the given index pairs, per row."""
    slopes = np.empty((values.shape[0], first.size))
    for row in range(values.shape[0]):
        for pair in range(first.size):
            rise = values[row, second[pair]] - values[row, first[pair]]
            slopes[row, pair] = rise / (second[pair] - first[pair])
    return slopes


_MEDIAN_WINDOW = 64
"""Positions either side of the middle of a nearly right order searched for the median."""


@numba.njit(cache=True)
def _select(values: np.ndarray, order: np.ndarray, rank: int) -> float:
    """The value of 0-based ``rank`` in ``values``, given ``order``, a nearly sorting order.

    The sought value is almost always among the few values ordered near that rank. They are
    sorted, and a binary search among them looks for the value v with
    #(values < v) <= rank < #(values <= v), each probe one branch-free pass over the row. If
    none fits, the order was too far off and the whole row is sorted instead.
    """
    n = values.size
    first = max(0, rank - _MEDIAN_WINDOW)
    candidates = np.sort(values[order[first : min(n, rank + _MEDIAN_WINDOW + 1)]])
    low, high = 0, candidates.size - 1
    while low <= high:
        probe = (low + high) // 2
        value = candidates[probe]
        below = 0
        not_above = 0
        for other in values:
            below += other < value
            not_above += other <= value
        if rank < below:
            high = probe - 1
        elif rank >= not_above:
            low = probe + 1
        else:
            return value
    return np.sort(values)[rank]


@numba.njit(cache=True)
def _medians(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Median of each row of ``values`` (as np.median), given a nearly sorting order per row."""
    rows, n = values.shape
    result = np.empty(rows)
    for row in range(rows):
        upper = _select(values[row], order[row], n // 2)
        if n % 2:
            result[row] = upper
        else:
            result[row] = (_select(values[row], order[row], n // 2 - 1) + upper) / 2
    return result


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


def _theil_sen_slope(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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

    Also returns each row's sorted order at t1, a nearly sorting order of the residuals
    y - slope * k whose median is Theil's intercept (:func:`_medians`).
    """
    rows, n = values.shape
    n_pairs = n * (n - 1) // 2
    target = n_pairs / 2 + 0.5  # between the two middle slopes of an even count
    first, second = _sampled_pairs(n)
    sample = np.sort(_pair_slopes(values, first, second), axis=1)
    middle = _SAMPLED_PAIRS // 2
    guess = 0.5 * (sample[:, middle - 1] + sample[:, middle])
    first_count, _ = _count_descending_pairs(values, guess)
    excess = first_count - target
    # Read the sample quantile displaced by the exact rank error, interpolating linearly.
    position = np.clip((0.5 - excess / n_pairs) * _SAMPLED_PAIRS - 0.5, 0, _SAMPLED_PAIRS - 1)
    below = np.minimum(np.floor(position).astype(np.int64), _SAMPLED_PAIRS - 2)
    fraction = position - below
    row = np.arange(rows)
    second_guess = (1 - fraction) * sample[row, below] + fraction * sample[row, below + 1]
    second_count, order = _count_descending_pairs(values, second_guess)
    second_excess = second_count - target
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
        if tied.size:
            slope[tied] = _slope_with_ties(values[tied], ordered[jumps], target)
    return slope, order


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
    below = _count_descending_pairs(values, np.full(rows, -_ZERO_SLOPE))[0]
    above = _count_descending_pairs(values, np.full(rows, _ZERO_SLOPE))[0]
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
        count = _count_descending_pairs(values[active], trial)[0]
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

    Theil's intercept is the median of y - slope * x over the fitted points, found from the
    order the slope search left (:func:`_medians`).
    """
    grid = _grid()
    fitted = np.ascontiguousarray(db[:, grid.tilt])
    slope, order = _theil_sen_slope(fitted)
    slope /= grid.dq
    intercept = _medians(fitted - slope[:, None] * grid.tilt_quefrencies, order)
    return slope, intercept


def _flatten(power: np.ndarray) -> np.ndarray:
    """Subtract the tilt line in dB and clip at 0 dB, as Praat does before smoothing.

    Praat evaluates the line at dq / 2 for the zero-quefrency bin; values below the line become
    0 dB (power 1).
    """
    grid = _grid()
    db = _to_db(power)
    slope, intercept = _tilt_lines(db)
    quefrencies = grid.quefrencies[: power.shape[1]].copy()
    quefrencies[0] = 0.5 * grid.dq
    above = np.maximum(db - (slope[:, None] * quefrencies + intercept[:, None]), 0.0)
    return np.exp(above * (np.log(10.0) / 10.0))


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
    """Praat's quefrency smoothing: mean over +-0.25 ms, clipped to the quefrency domain.

    Only the rows CPPS reads (up to the tilt range's end and the peak search's right
    neighbour) are kept, and only the columns they average: the bins of the power cepstrum
    beyond them (about a fifth) need no flattening or smoothing.
    """
    grid = _grid()
    q = grid.quefrencies
    half = 0.5 * QUEFRENCY_AVERAGING
    full = _averaging_matrix(
        grid.n_quefrencies,
        np.maximum(q - half, 0.0),
        np.minimum(q + half, grid.max_quefrency),
        grid.dq,
    )
    read = full[: max(grid.tilt.stop, grid.peak_bins[1] + 2)]
    return read[:, : int(read.indices.max()) + 1]


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
        averaging = _quefrency_averaging()
        flattened = _flatten(_power_cepstra(padded, starts[low:high])[:, : averaging.shape[1]])
        smoothed = rows[:, low:high] @ flattened
        db = _to_db((averaging @ smoothed.T).T)
        slope, intercept = _tilt_lines(db)
        peak, quefrency = _peaks(db)
        total += float(np.sum(peak - (slope * quefrency + intercept)))
    return total / len(times)
