"""P-STOI and P-ESTOI: (E)STOI of pathological speech against a template built from references.

STOI and ESTOI need a clean version of the very signal being judged, which pathological speech
never has. Janbakhshi, Kodrasi and Bourlard (ICASSP 2019) therefore build a clean-speech
*template* from healthy speakers saying the same utterance, time-align the test to it with DTW
and run the (E)STOI correlations on the aligned envelopes. This module reproduces the variant
used by PathBench so scores stay comparable with published numbers; where the
numerical details matter (LTFAT's Gabor transform, the DTW path order and frame deletions) they
follow that implementation's behaviour.

The computation is split so the workflow can cache and share work: :func:`pestoi_features` runs
once per signal, :func:`pestoi_template` once per group of references, and :func:`p_estoi` /
:func:`p_stoi` once per test utterance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pathbench_flow import SAMPLE_RATE, tracks
from pathbench_flow.common.status import (
    ERROR,
    NO_REFERENCES,
    TOO_FEW_REFERENCES,
    TOO_SHORT,
    NoScore,
)
from pathbench_flow.measures.dtw_path import warping_path

WINDOW = 512
"""Gabor window length in samples (32 ms), as in PathBench."""
HOP = 256
"""Gabor time shift in samples (16 ms)."""
CHANNELS = 512
"""Number of Gabor modulations (FFT size); 257 non-negative frequencies are kept."""
PEAK = 0.8
"""Every signal is scaled to this peak so recording level does not enter the template average."""
N_BANDS = 15
"""One-third-octave bands, as in STOI."""
LOWEST_CENTRE_HZ = 150.0
"""Centre of the first band, as in STOI."""
SMOOTHING_FRAMES = 5
"""Moving-average length that smooths band envelopes across the gaps left by deleted frames."""
SEGMENT_FRAMES = 15
"""Frames per (E)STOI analysis window (N in the STOI papers)."""
CLIP_FACTOR = 1.0 + 10.0 ** (15.0 / 20.0)
"""STOI's clipping of the scaled test envelope: its lower signal-to-distortion bound, -15 dB."""

_EPS = np.finfo(float).eps


@cache
def _tight_window() -> np.ndarray:
    """Canonical tight window of LTFAT's ``gabtight('hamming', 256, 512)``, in frame order.

    LTFAT's ``firwin('hamming', 512)`` samples 0.54 + 0.46 cos(2 pi x) at x = -0.5 .. 0.5 - 1/512
    and forces the x = -0.5 sample to zero. The frame is painless (window length <= channels),
    so the canonical tight window is the window divided pointwise by the square root of
    ``CHANNELS`` times the sum of its squares over all hop shifts. Any prior scaling of the window
    (LTFAT's normalisation) cancels in that division, so none is applied.

    Returned in time order: element k multiplies the sample at offset k - 256 from the frame
    centre, so element 0 is the zeroed boundary sample.
    """
    offsets = np.arange(-WINDOW // 2, WINDOW // 2)
    window = 0.54 + 0.46 * np.cos(2.0 * np.pi * offsets / WINDOW)
    window[np.abs(offsets) >= WINDOW // 2] = 0.0
    hop_energy = (window**2).reshape(WINDOW // HOP, HOP).sum(axis=0)
    tight = window / np.sqrt(CHANNELS * np.tile(hop_energy, WINDOW // HOP))
    tight.flags.writeable = False  # shared through the cache
    return tight


def gabor_magnitudes(signal: np.ndarray) -> np.ndarray:
    """Magnitudes of LTFAT ``dgtreal(signal, tight hamming, 256, 512)``, shape (257, frames).

    LTFAT pads the signal with zeros to a multiple of lcm(hop, channels) = 512 and treats it as
    periodic: frame n is centred on sample n * 256, so frame 0 wraps around to the end of the
    padded signal. Only magnitudes are returned because the phase convention (frequency- vs
    time-invariant) only multiplies coefficients by unit-modulus factors.
    """
    signal = np.asarray(signal, dtype=np.float64)
    period = int(np.lcm(HOP, CHANNELS))
    length = max(1, -(-signal.size // period)) * period
    padded = np.zeros(length)
    padded[: signal.size] = signal
    half = WINDOW // 2
    circular = np.concatenate([padded[-half:], padded, padded[:half]])
    frames = sliding_window_view(circular, WINDOW)[::HOP][: length // HOP]
    return np.abs(np.fft.rfft(frames * _tight_window(), n=CHANNELS, axis=1)).T


@cache
def third_octave_matrix() -> np.ndarray:
    """Band-summing matrix (15, 257) of STOI's ``thirdoct`` for 16 kHz and a 512-point FFT.

    Every band edge is centre * 2**(-1/6) (left) or centre * 2**(1/6) (right), i.e. the
    geometric mean of neighbouring centres; the outermost edges use the same formula, as STOI
    does. Each edge snaps to the nearest bin (the lower bin on a tie) and a band runs from its
    left edge bin up to, not including, its right edge bin.
    """
    bin_hz = np.arange(CHANNELS // 2 + 1) * SAMPLE_RATE / CHANNELS
    centres = LOWEST_CENTRE_HZ * 2.0 ** (np.arange(N_BANDS) / 3.0)
    matrix = np.zeros((N_BANDS, bin_hz.size))
    for band, centre in enumerate(centres):
        left = np.argmin(np.abs(bin_hz - centre * 2.0 ** (-1.0 / 6.0)))
        right = np.argmin(np.abs(bin_hz - centre * 2.0 ** (1.0 / 6.0)))
        matrix[band, left:right] = 1.0
    matrix.flags.writeable = False  # shared through the cache
    return matrix


def pestoi_features(audio: np.ndarray) -> np.ndarray:
    """:func:`envelopes` of 16 kHz ``audio`` through the shared track ``pestoi_envelopes``
    (:mod:`pathbench_flow.tracks`): computed once per recording, however many reference-scoring
    jobs compare with it. Read-only."""
    return tracks.as_matrix(tracks.value(tracks.PESTOI_ENVELOPES, audio, SAMPLE_RATE))


def envelope_arrays(audio: np.ndarray, fs: int) -> tracks.Arrays:
    """The ``pestoi_envelopes`` track's analysis: :func:`envelopes` as a track value."""
    if fs != SAMPLE_RATE:
        raise ValueError(f"P-(E)STOI features need {SAMPLE_RATE} Hz audio, got {fs} Hz")
    return tracks.as_arrays(envelopes(audio))


def envelopes(audio: np.ndarray) -> np.ndarray:
    """Mean-removed log one-third-octave envelopes, shape (15, frames), of 16 kHz ``audio``.

    An all-zero signal has no envelope at all and yields a (15, 0) array; :func:`p_estoi`
    scores it 0.0, as PathBench does. Frames holding an exactly-zero Gabor coefficient (digital
    silence, which has no finite logarithm) are deleted before the bands are formed, then the
    5-frame moving average smooths over the resulting joins.

    Raises:
        NoScore: ``too_short`` when a non-silent signal leaves fewer than 5 frames to smooth.
    """
    audio = np.asarray(audio, dtype=np.float64)
    peak = np.max(np.abs(audio), initial=0.0)
    if peak == 0.0:
        return np.empty((N_BANDS, 0))
    magnitudes = gabor_magnitudes(audio * (PEAK / peak))
    magnitudes = magnitudes[:, np.all(magnitudes != 0.0, axis=0)]
    if magnitudes.shape[1] < SMOOTHING_FRAMES:
        raise NoScore(
            TOO_SHORT,
            f"{magnitudes.shape[1]} usable 16 ms frames; P-(E)STOI smooths over {SMOOTHING_FRAMES}",
        )
    bands = np.sqrt(third_octave_matrix() @ magnitudes**2)
    smoothed = sliding_window_view(bands, SMOOTHING_FRAMES, axis=1).mean(axis=-1)
    log_bands = np.log10(smoothed)
    return log_bands - log_bands.mean(axis=1, keepdims=True)


def _first_of_runs(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep only the first path step of each run of equal ``keys`` (with its ``values``).

    This is PathBench's frame deletion: a frame that DTW repeats would otherwise count several
    times in the correlations. "First" is in the order of the path as given, which (as
    librosa's, :mod:`.dtw_path`) runs from the end of both sequences back to their start.
    """
    keep = np.ones(keys.size, dtype=bool)
    keep[1:] = keys[1:] != keys[:-1]
    return keys[keep], values[keep]


TemplatePart = tuple[np.ndarray, np.ndarray]
"""What one reference adds to a template: centroid frames and the linear envelope columns of
the reference that DTW assigns to them."""


def template_part(centroid: np.ndarray, reference: np.ndarray) -> TemplatePart:
    """The reference's share of a template on ``centroid``'s timing: DTW-aligned to the
    centroid, each centroid frame takes exactly one aligned reference frame."""
    path = warping_path(centroid, reference)
    centroid_frames, reference_frames = _first_of_runs(path[:, 0], path[:, 1])
    return centroid_frames, 10.0 ** reference[:, reference_frames]


def pestoi_template(
    ref_features: Sequence[np.ndarray],
    part: Callable[[int, int], TemplatePart] | None = None,
) -> np.ndarray:
    """Clean-speech template (15, frames of the first reference) from reference features.

    The first reference is the centroid that fixes the template's timing; every other
    reference is DTW-aligned to it (:func:`template_part`), and the template is the log of the
    mean linear envelope of the aligned frames. The centroid itself is not averaged in (as in
    PathBench), so at least two references are needed. Silent references (no frames) carry no
    envelope and are skipped.

    ``part(centroid, reference)``, given indices into ``ref_features``, returns that
    reference's :func:`template_part`. Test utterances of one text whose reference sets differ
    only by their own speaker share the centroid and most references, so a caller that keeps
    the parts of earlier templates aligns each pair once; the sum runs in the same order
    either way, so the template is the same to the last bit.

    Raises:
        NoScore: ``no_references`` without any non-silent reference, ``too_few_references``
            with only one.
    """
    usable = [i for i, features in enumerate(ref_features) if features.shape[1] > 0]
    if not usable:
        raise NoScore(NO_REFERENCES, "P-(E)STOI needs reference recordings; none had sound")
    if len(usable) < 2:
        raise NoScore(
            TOO_FEW_REFERENCES,
            "P-(E)STOI averages the references aligned to the first one, so it needs at least 2",
        )
    centroid, others = usable[0], usable[1:]
    energy = np.zeros_like(ref_features[centroid])
    for reference in others:
        centroid_frames, linear = (
            part(centroid, reference)
            if part
            else template_part(ref_features[centroid], ref_features[reference])
        )
        energy[:, centroid_frames] += linear
    return np.log10(energy / len(others))


def _aligned_envelopes(
    test_features: np.ndarray, template: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Template (X) and test (Y) linear envelopes on a one-to-one DTW alignment, in time order.

    As in PathBench, DTW runs with the test as the first sequence; repeats of a template frame
    are deleted first, then repeats of a test frame, which leaves a strictly monotone pairing.
    """
    path = warping_path(test_features, template)
    template_frames, test_frames = _first_of_runs(path[:, 1], path[:, 0])
    test_frames, template_frames = _first_of_runs(test_frames, template_frames)
    return 10.0 ** template[:, template_frames[::-1]], 10.0 ** test_features[:, test_frames[::-1]]


def _is_constant(values: np.ndarray, axis: int) -> np.ndarray:
    """Whether ``values`` is exactly constant along ``axis``, judged without rounding error."""
    return np.ptp(values, axis=axis) == 0.0


def _pearson(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    """Pearson correlation along ``axis``; 0 where either side is constant (no information)."""
    a_centred = a - a.mean(axis=axis, keepdims=True)
    b_centred = b - b.mean(axis=axis, keepdims=True)
    numerator = np.sum(a_centred * b_centred, axis=axis)
    denominator = np.sqrt(np.sum(a_centred**2, axis=axis) * np.sum(b_centred**2, axis=axis))
    constant = _is_constant(a, axis) | _is_constant(b, axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(constant, 0.0, numerator / denominator)


def _segments(envelopes: np.ndarray) -> np.ndarray:
    """All windows of ``min(15, frames)`` consecutive frames, hop 1: (bands, windows, frames)."""
    return sliding_window_view(envelopes, min(SEGMENT_FRAMES, envelopes.shape[1]), axis=1)


def _stoi_windows(clean: np.ndarray, degraded: np.ndarray) -> np.ndarray:
    """Per-window STOI correlations (bands, windows) of aligned linear envelopes."""
    x, y = _segments(clean), _segments(degraded)
    gain = np.sqrt(np.sum(x**2, axis=-1, keepdims=True) / np.sum(y**2, axis=-1, keepdims=True))
    clipped = np.minimum(gain * y, CLIP_FACTOR * x)
    return _pearson(x, clipped, axis=-1)


def _zscore_bands(segments: np.ndarray) -> np.ndarray:
    """Standardise each band within each window; a band constant there contributes zeros.

    The epsilon in the divisor is ESTOI's (and PathBench's) guard; the explicit constant test
    makes a flat band exactly zero rather than rounding noise divided by epsilon.
    """
    centred = segments - segments.mean(axis=-1, keepdims=True)
    scaled = centred / (segments.std(axis=-1, keepdims=True) + _EPS)
    return np.where(_is_constant(segments, -1)[..., None], 0.0, scaled)


def _estoi_windows(clean: np.ndarray, degraded: np.ndarray) -> np.ndarray:
    """Per-window ESTOI correlations (windows, frames): across bands, of band-standardised data."""
    return _pearson(_zscore_bands(_segments(clean)), _zscore_bands(_segments(degraded)), axis=0)


def _score(
    test_features: np.ndarray,
    template: np.ndarray,
    correlations: Callable[[np.ndarray, np.ndarray], np.ndarray],
    window_axis: int,
) -> float:
    """Mean of ``correlations`` over every analysis window free of NaN."""
    if test_features.shape[1] == 0:
        return 0.0
    values = correlations(*_aligned_envelopes(test_features, template))
    other_axes = tuple(axis for axis in range(values.ndim) if axis != window_axis)
    finite = ~np.isnan(values).any(axis=other_axes)
    if not finite.any():
        raise NoScore(ERROR, "every (E)STOI analysis window contained NaN")
    return float(np.mean(np.take(values, np.flatnonzero(finite), axis=window_axis)))


def p_estoi(test_features: np.ndarray, template: np.ndarray) -> float:
    """P-ESTOI of a test utterance against a template; higher means more intelligible.

    Silent test audio (no frames) scores 0.0, as in PathBench.
    """
    return _score(test_features, template, _estoi_windows, window_axis=0)


def p_stoi(test_features: np.ndarray, template: np.ndarray) -> float:
    """P-STOI of a test utterance against a template; higher means more intelligible.

    Silent test audio (no frames) scores 0.0, as in PathBench.
    """
    return _score(test_features, template, _stoi_windows, window_axis=1)


def _features_of(references: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Features of each reference recording."""
    return [pestoi_features(reference) for reference in references]


def p_estoi_from_audio(test: np.ndarray, references: Sequence[np.ndarray]) -> float:
    """P-ESTOI straight from 16 kHz audio, for one-off use; the workflow caches the steps."""
    return p_estoi(pestoi_features(test), pestoi_template(_features_of(references)))
