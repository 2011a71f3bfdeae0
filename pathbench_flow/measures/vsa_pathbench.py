"""Vowel space area as PathBench computes it (the ``vsa`` evaluator's default).

Per speaker, over all utterances:

1. gender: the one given, else female when the mean of the per-utterance mean voiced F0
   (Praat's default pitch analysis, the shared track of :func:`pitch.pitch_track`) exceeds
   165 Hz, and female when no utterance is voiced;
2. formants: Praat Burg (five formants up to 5500 Hz for women, 5000 Hz for men, 50 ms window,
   10 ms step); F1 and F2 are read at the time of every voiced pitch frame, frames where
   either is undefined are skipped;
3. outliers: a scikit-learn GaussianMixture with min(4, n) components (random_state=0) is
   fitted to the raw (F1, F2) points in Hz, and points whose log-likelihood is more than two
   standard deviations below the mean are dropped;
4. clusters: scikit-learn KMeans seeded with the language's vowel table
   (:data:`vowel_tables.PATHBENCH_TABLES`, one cluster per vowel), n_init=1, random_state=0;
5. the area (Hz^2) of the convex hull of the cluster centres.

Every failure (no voiced formant frames, fewer than four points, fewer points than vowels
after filtering, a degenerate hull) is a :class:`NoScore`; the ``vsa`` evaluator records it
as 0.0 with the status, which is PathBench's rule. :mod:`pathbench_flow.measures.vsa` is this
project's own corner-vowel variant (``vsa_corners``).

scikit-learn runs on one thread here: its k-means adds per-thread partial sums in completion
order, so more threads could change the last bits of a result between runs.
"""

from __future__ import annotations

import numpy as np
import parselmouth
from scipy.spatial import ConvexHull
from sklearn.cluster import KMeans
from sklearn.mixture import GaussianMixture
from threadpoolctl import threadpool_limits

from pathbench_flow.common.status import TOO_SHORT, UNSUPPORTED_LANGUAGE, UNVOICED, NoScore
from pathbench_flow.measures.pitch import pitch_track
from pathbench_flow.measures.vowel_tables import PATHBENCH_TABLES, pathbench_seeds
from pathbench_flow.measures.vsa import pooled_points

FEMALE_MEAN_F0_HZ = 165.0
"""Mean F0 above which a speaker without a stated gender is treated as female."""

MAX_FORMANT_HZ = {"female": 5500.0, "male": 5000.0}
"""Burg formant ceilings per gender."""

FORMANT_SETTINGS = {"time_step": 0.01, "max_number_of_formants": 5, "window_length": 0.05}
"""Praat "To Formant (burg)" settings besides the ceiling (pre-emphasis from 50 Hz)."""

MAX_MIXTURE_COMPONENTS = 4
OUTLIER_SD = 2.0
"""Points this many SDs of log-likelihood below the mean are outliers."""


def estimated_gender(f0s: list[np.ndarray]) -> str:
    """ "female" when the mean of per-utterance mean voiced F0 exceeds 165 Hz or is unknown.

    ``f0s`` holds each utterance's F0 per pitch frame (0 = unvoiced).
    """
    means = [np.mean(f0[f0 > 0]) for f0 in f0s if np.any(f0 > 0)]
    if means and np.mean(means) <= FEMALE_MEAN_F0_HZ:
        return "male"
    return "female"


def formant_points(
    audio: np.ndarray, fs: int, track: tuple[np.ndarray, np.ndarray], ceiling: float
) -> np.ndarray:
    """(n, 2) (F1, F2) in Hz at the voiced frames of the utterance's pitch ``track``.

    The formants are read at each voiced pitch frame's time, as Praat's "Get time from frame
    number" gives it (the track's frame times are those values).
    """
    times, f0 = track
    if not np.any(f0 > 0):
        return np.empty((0, 2))
    sound = parselmouth.Sound(np.asarray(audio, dtype=np.float64), sampling_frequency=fs)
    try:
        formant = sound.to_formant_burg(maximum_formant=ceiling, **FORMANT_SETTINGS)
    except parselmouth.PraatError:
        return np.empty((0, 2))
    points = []
    for time in times[f0 > 0]:
        pair = (formant.get_value_at_time(1, time), formant.get_value_at_time(2, time))
        if not np.isnan(pair).any():
            points.append(pair)
    return np.asarray(points, dtype=np.float64).reshape(-1, 2)


def _without_outliers(points: np.ndarray) -> np.ndarray:
    mixture = GaussianMixture(n_components=min(MAX_MIXTURE_COMPONENTS, len(points)), random_state=0)
    log_likelihood = mixture.fit(points).score_samples(points)
    floor = np.mean(log_likelihood) - OUTLIER_SD * np.std(log_likelihood)
    return points[log_likelihood >= floor]


def vsa_pathbench(
    audios: list[np.ndarray], fs: int, language: str, gender: str | None = None
) -> float:
    """Vowel space area (Hz^2) of one speaker; ``gender`` "male"/"female" or None (estimate).

    ``language`` is a base code with a table in :data:`PATHBENCH_TABLES`. Raises
    :class:`NoScore` (``unsupported_language``, ``unvoiced``, ``too_short``) when there is no
    area; scikit-learn and Qhull errors propagate and are recorded as ``error``.
    """
    if language not in PATHBENCH_TABLES:
        raise NoScore(UNSUPPORTED_LANGUAGE, f"no PathBench vowel table for {language!r}")
    tracks = [pitch_track(audio, fs) for audio in audios]
    chosen = gender or estimated_gender([f0 for _, f0 in tracks])
    seeds = pathbench_seeds(language, chosen)
    ceiling = MAX_FORMANT_HZ[chosen]
    points = pooled_points(formant_points, audios, fs, tracks, ceiling)
    if len(points) == 0:
        raise NoScore(UNVOICED, "no voiced frame with two formants in the speaker's audio")
    if len(points) < MAX_MIXTURE_COMPONENTS:
        raise NoScore(TOO_SHORT, f"{len(points)} formant points; the outlier model needs 4")
    with threadpool_limits(limits=1):
        kept = _without_outliers(points)
        if len(kept) < len(seeds):
            raise NoScore(
                TOO_SHORT, f"{len(kept)} points after outlier removal for {len(seeds)} vowels"
            )
        centres = KMeans(n_clusters=len(seeds), init=seeds, n_init=1, random_state=0).fit(kept)
    return float(ConvexHull(centres.cluster_centers_).volume)  # in 2-D, "volume" is the area
