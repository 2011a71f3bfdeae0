"""Speaker-level vowel space area (VSA) from unlabelled speech: the ``vsa_corners`` evaluator.

This project's variant; PathBench's procedure (the ``vsa`` evaluator) is in
:mod:`pathbench_flow.measures.vsa_pathbench`.

Without a transcript the vowels are found statistically: F1/F2 at every voiced frame of all the
speaker's utterances are pooled, frames that fit the speaker's own formant distribution badly
(tracking errors, nasals, transitions) are dropped, k-means seeded with published corner-vowel
formants groups the rest, and the area of the convex hull of the cluster centroids is the VSA
in Hz^2. A reduced (centralised) vowel space, typical of dysarthria, gives a smaller area.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import parselmouth
from parselmouth.praat import call
from scipy.spatial import ConvexHull, QhullError
from scipy.special import logsumexp

from pathbench_flow.common.status import TOO_SHORT, UNSUPPORTED_LANGUAGE, UNVOICED, NoScore
from pathbench_flow.measures.pitch import pitch_track, voicing_at
from pathbench_flow.measures.vowel_tables import VOWEL_FORMANTS, corner_vowels

MAX_FORMANT_HZ = {"male": 5000.0, "female": 5500.0}
"""Praat's recommended formant ceilings: shorter vocal tracts put five formants higher."""

FORMANT_STEP_S = 0.01
"""Formant frame step, equal to the pitch step so every formant frame has its own voicing."""

FEMALE_MEAN_F0_HZ = 165.0
"""Mean F0 above which a speaker of unknown gender is treated as female."""

MIN_POINTS = 30
"""Fewest voiced formant frames (0.3 s of voicing) for a vowel space worth estimating."""

POINTS_PER_COMPONENT = 25
"""Mixture components are added only while each has this many frames to be estimated from."""

MAX_COMPONENTS = 4
"""Cap on mixture components: enough for the broad front/back, high/low vowel regions."""

OUTLIER_SD = 2.0
"""Frames whose log-likelihood is this many SDs below the mean are dropped."""

_EM_ITERATIONS = 200
_EM_TOLERANCE = 1e-6
"""Stop EM when the mean log-likelihood per frame improves by less than this."""

_COVARIANCE_FLOOR = 1e-3
"""Added to covariance diagonals (in standardised units) so no component collapses."""

_KMEANS_ITERATIONS = 100


def burg_formants(
    audio: np.ndarray, fs: int, ceiling: float, count: int
) -> tuple[np.ndarray, np.ndarray]:
    """Frame times (s) and (frames, ``count``) F1, F2, ... in Hz from Praat's Burg analysis.

    Five formants up to ``ceiling``, 25 ms window, FORMANT_STEP_S step: the one formant
    analysis of this variant and of the open-set features. A frame where Praat found fewer
    than k formants holds 0 for Fk. Raises ``PraatError`` for a signal shorter than a window.
    """
    sound = parselmouth.Sound(np.asarray(audio, dtype=np.float64), sampling_frequency=fs)
    formant = sound.to_formant_burg(
        time_step=FORMANT_STEP_S, max_number_of_formants=5, maximum_formant=ceiling
    )
    values = [call(formant, "To Matrix", number).values[0] for number in range(1, count + 1)]
    return np.asarray(formant.xs()), np.column_stack(values)


def _voiced_formants(
    audio: np.ndarray, fs: int, track: tuple[np.ndarray, np.ndarray], ceiling: float
) -> np.ndarray:
    """(n, 2) array of (F1, F2) in Hz at the voiced frames of one utterance (Praat Burg).

    Frames where Praat finds fewer than two formants are skipped rather than imputed.
    """
    frame_times, f0 = track
    if not np.any(f0 > 0):
        return np.empty((0, 2))
    try:
        times, pairs = burg_formants(audio, fs, ceiling, 2)
    except parselmouth.PraatError:
        return np.empty((0, 2))
    keep = voicing_at(times, frame_times, f0)
    keep &= np.all(np.isfinite(pairs) & (pairs > 0), axis=1)
    return pairs[keep]


def pooled_points(
    points_of: Callable[[np.ndarray, int, tuple[np.ndarray, np.ndarray], float], np.ndarray],
    audios: list[np.ndarray],
    fs: int,
    tracks: list[tuple[np.ndarray, np.ndarray]],
    ceiling: float,
) -> np.ndarray:
    """The (n, 2) formant points of all of a speaker's utterances in one array.

    ``points_of(audio, fs, pitch_track, ceiling)`` gives one utterance's points; both
    vowel-space measures pool theirs this way, and no utterance gives an empty (0, 2) array.
    """
    return np.concatenate(
        [np.empty((0, 2))]
        + [
            points_of(audio, fs, track, ceiling)
            for audio, track in zip(audios, tracks, strict=True)
        ]
    )


def normalise_gender(gender: str | None) -> str | None:
    """Map "m"/"male" to "male" and "f"/"female" to "female" (any case); else None (estimate)."""
    initial = (gender or "").strip().lower()[:1]
    return {"m": "male", "f": "female"}.get(initial)


def _log_gaussian(z: np.ndarray, means: np.ndarray, covs: np.ndarray) -> np.ndarray:
    """(n, k) log densities of 2-D points under k full-covariance Gaussians."""
    diff = z[:, None, :] - means[None, :, :]
    inverse = np.linalg.inv(covs)
    mahalanobis = np.einsum("nki,kij,nkj->nk", diff, inverse, diff)
    log_det = np.log(np.linalg.det(covs))
    return -0.5 * (mahalanobis + log_det[None, :]) - np.log(2.0 * np.pi)


def mixture_log_likelihood(points: np.ndarray) -> np.ndarray:
    """Per-point log-likelihood under a Gaussian mixture fitted to the points by EM.

    Deterministic by construction: the points are standardised, sorted by the second
    coordinate (F2, which separates front from back vowels) and cut into equal chunks whose
    means and covariances start EM, so no random initialisation is involved. The number of
    components grows with the data, up to MAX_COMPONENTS, so each is estimated from at least
    POINTS_PER_COMPONENT points.
    """
    # The floor keeps identical points (a perfectly steady synthetic vowel) finite.
    z = (points - points.mean(axis=0)) / np.maximum(points.std(axis=0), 1e-9)
    n = len(z)
    k = int(np.clip(n // POINTS_PER_COMPONENT, 1, MAX_COMPONENTS))
    chunks = np.array_split(np.argsort(z[:, 1], kind="stable"), k)
    floor = _COVARIANCE_FLOOR * np.eye(2)
    means = np.stack([z[c].mean(axis=0) for c in chunks])
    covs = np.stack([np.cov(z[c].T) + floor for c in chunks])
    log_weights = np.full(k, -np.log(k))
    previous = -np.inf
    for _ in range(_EM_ITERATIONS):
        joint = _log_gaussian(z, means, covs) + log_weights
        log_likelihood = logsumexp(joint, axis=1)
        mean_ll = log_likelihood.mean()
        if mean_ll - previous < _EM_TOLERANCE:
            break
        previous = mean_ll
        resp = np.exp(joint - log_likelihood[:, None])
        counts = resp.sum(axis=0) + np.finfo(float).tiny
        log_weights = np.log(counts / n)
        means = resp.T @ z / counts[:, None]
        diff = z[:, None, :] - means[None, :, :]
        covs = np.einsum("nk,nki,nkj->kij", resp, diff, diff) / counts[:, None, None] + floor
    return log_likelihood


def drop_outliers(points: np.ndarray) -> np.ndarray:
    """Points whose mixture log-likelihood is at least mean - OUTLIER_SD * SD."""
    log_likelihood = mixture_log_likelihood(points)
    keep = log_likelihood >= log_likelihood.mean() - OUTLIER_SD * log_likelihood.std()
    return points[keep]


def seeded_kmeans(points: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Centroids of the non-empty clusters of k-means (Lloyd) started from ``seeds``.

    A seed that attracts no point keeps its position while iterating but is not returned: a
    vowel the speaker never produced must not enter the vowel space with its textbook value.
    """
    centroids = seeds.astype(float, copy=True)
    labels = np.full(len(points), -1)
    for _ in range(_KMEANS_ITERATIONS):
        distances = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
        new_labels = distances.argmin(axis=1)
        if np.array_equal(new_labels, labels):
            break
        labels = new_labels
        counts = np.bincount(labels, minlength=len(seeds))
        filled = counts > 0
        for dim in range(points.shape[1]):
            sums = np.bincount(labels, weights=points[:, dim], minlength=len(seeds))
            centroids[filled, dim] = sums[filled] / counts[filled]
    return centroids[np.bincount(labels, minlength=len(seeds)) > 0]


def polygon_area(vertices: np.ndarray) -> float:
    """Convex hull area (Hz^2) of the centroids; 0.0 when they span no area.

    Fewer than three clusters, or collinear ones, mean a collapsed vowel space: a measured
    value of zero, not a failure.
    """
    if len(vertices) < 3:
        return 0.0
    try:
        return float(ConvexHull(vertices).volume)  # in 2-D, "volume" is the area
    except QhullError:
        return 0.0


def vsa(audios: list[np.ndarray], fs: int, language: str, gender: str | None) -> float:
    """Vowel space area in Hz^2 over all of one speaker's utterances.

    ``language`` is a code such as "en" or "en-US" (see :mod:`vowel_tables`); ``gender`` is
    "male"/"female" (or "m"/"f"), and anything else is estimated from the pooled mean F0.
    Raises :class:`NoScore` (``unsupported_language``, ``unvoiced`` or ``too_short``) when no
    area can be estimated; the scoring stage records that as 0.0 with the status, as the
    benchmark specification requires.
    """
    code = language.strip().lower().replace("_", "-").split("-")[0]
    if code not in VOWEL_FORMANTS:
        raise NoScore(UNSUPPORTED_LANGUAGE, f"no vowel formant table for language {language!r}")
    tracks = [pitch_track(audio, fs) for audio in audios]
    f0 = np.concatenate([np.empty(0)] + [track[1][track[1] > 0] for track in tracks])
    if f0.size == 0:
        raise NoScore(UNVOICED, "no voiced frame in any of the speaker's utterances")
    chosen = normalise_gender(gender) or ("female" if f0.mean() > FEMALE_MEAN_F0_HZ else "male")
    ceiling = MAX_FORMANT_HZ[chosen]
    points = pooled_points(_voiced_formants, audios, fs, tracks, ceiling)
    if len(points) < MIN_POINTS:
        raise NoScore(
            TOO_SHORT, f"{len(points)} voiced formant frames, at least {MIN_POINTS} needed"
        )
    centroids = seeded_kmeans(drop_outliers(points), corner_vowels(code, chosen))
    return polygon_area(centroids)
