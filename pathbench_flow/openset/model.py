"""Open-set speaker models: a diagonal GMM background with MAP-adapted speaker means.

This is the classic GMM-UBM recipe, kept small so that hundreds of candidates can be fitted per
fold: the background model describes speech in general, each enrolled speaker shifts only the
component means toward its own rows (so a speaker with little data stays close to the
background), and a row's score for a speaker is the log-likelihood ratio against the background.
Everything is float64 in the log domain, and nothing uses random numbers, so a fit is a pure
function of its training rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_ITERATIONS = 200
RELATIVE_TOLERANCE = 1e-8
"""EM stops once the total log-likelihood changes by less than this fraction of itself."""

_OCCUPANCY_FLOOR = 10 * np.finfo(np.float64).eps
"""Added to component occupancies so an emptied component divides by a tiny number, not zero."""


class ModelError(Exception):
    """The training rows cannot support the requested model (too few rows, constant feature)."""


def _log_densities(x: np.ndarray, means: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """``log N(x_n; means[m, k], diag variances[k])`` as an ``(n, M, K)`` array.

    The quadratic form is expanded into matrix products so that scoring every speaker's
    adapted means costs one BLAS call; the inputs are z-scored and variances floored, which keeps
    the expansion's cancellation error far below anything that could flip a decision.
    """
    n_models, n_components, dim = means.shape
    precisions = 1.0 / variances
    constant = -0.5 * (dim * math.log(2.0 * math.pi) + np.log(variances).sum(axis=1))
    squares = (x * x) @ precisions.T
    scaled_means = means * precisions
    cross = (x @ scaled_means.reshape(-1, dim).T).reshape(len(x), n_models, n_components)
    mean_terms = (means * scaled_means).sum(axis=2)
    return constant - 0.5 * (squares[:, None, :] - 2.0 * cross + mean_terms[None])


def _first_principal_projection(x: np.ndarray) -> np.ndarray:
    """Each row's coordinate on the first principal axis of the (already centred) rows.

    The axis's sign is fixed by making its largest-magnitude loading positive, so the ordering
    used for initialisation does not depend on the eigen-solver's arbitrary sign.
    """
    _, vectors = np.linalg.eigh(x.T @ x / len(x))
    axis = vectors[:, -1]
    if axis[np.argmax(np.abs(axis))] < 0:
        axis = -axis
    return x @ axis


@dataclass(frozen=True, eq=False)
class Background:
    """A fitted diagonal GMM on z-scored features."""

    log_weights: np.ndarray
    means: np.ndarray
    variances: np.ndarray
    iterations: int

    def joint_log_densities(self, x: np.ndarray) -> np.ndarray:
        """``log w_k + log N(x_n; mu_k, sigma_k)`` as an ``(n, K)`` array."""
        return _log_densities(x, self.means[None], self.variances)[:, 0, :] + self.log_weights

    def responsibilities(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        """Posterior component probabilities per row, and the total log-likelihood."""
        from scipy.special import logsumexp  # here: the workflow's parse reads fold counts

        joint = self.joint_log_densities(x)
        per_row = logsumexp(joint, axis=1)
        return np.exp(joint - per_row[:, None]), float(per_row.sum())


def fit_background(x: np.ndarray, components: int, variance_floor: float) -> Background:
    """Fit a ``components``-component diagonal GMM to z-scored rows ``x`` by EM.

    Initialisation, without random numbers: rows are sorted (stably) by their coordinate on the
    first principal axis and cut into ``components`` contiguous slices of near-equal size; each
    component starts at its slice's mean with the overall per-feature variance and equal
    weight. Slices along the axis of greatest spread start the components apart, which is what a
    random start tries to achieve, but reproducibly. EM runs for at most
    :data:`MAX_ITERATIONS` M-steps and stops when the total log-likelihood's relative change
    falls below :data:`RELATIVE_TOLERANCE`; every variance is floored at ``variance_floor``.
    """
    if len(x) < components:
        raise ModelError(f"{len(x)} training rows cannot initialise {components} components")
    order = np.argsort(_first_principal_projection(x), kind="stable")
    means = np.stack([x[rows].mean(axis=0) for rows in np.array_split(order, components)])
    variances = np.tile(np.maximum(x.var(axis=0), variance_floor), (components, 1))
    model = Background(np.full(components, -math.log(components)), means, variances, 0)
    previous = None
    for iteration in range(MAX_ITERATIONS):
        resp, log_likelihood = model.responsibilities(x)
        if not math.isfinite(log_likelihood):
            raise ModelError("the background log-likelihood is not finite")
        if previous is not None and abs(log_likelihood - previous) < RELATIVE_TOLERANCE * abs(
            previous
        ):
            break
        previous = log_likelihood
        occupancy = resp.sum(axis=0) + _OCCUPANCY_FLOOR
        means = (resp.T @ x) / occupancy[:, None]
        second_moments = (resp.T @ (x * x)) / occupancy[:, None]
        variances = np.maximum(second_moments - means * means, variance_floor)
        model = Background(np.log(occupancy / occupancy.sum()), means, variances, iteration + 1)
    return model


@dataclass(frozen=True, eq=False)
class BestScores:
    """Per row: the best-scoring speaker, its LLR and the runner-up LLR.

    These three numbers are all a decision needs, so threshold sweeps keep only them.
    ``runner_up`` is ``-inf`` when only one speaker is enrolled: then any margin is met.
    """

    best_label: np.ndarray
    best: np.ndarray
    runner_up: np.ndarray


@dataclass(frozen=True, eq=False)
class SpeakerModel:
    """Training-set normalisation, the background and one adapted mean set per speaker."""

    centre: np.ndarray
    scale: np.ndarray
    background: Background
    labels: np.ndarray
    """Speaker labels, ascending; row ``s`` of ``speaker_means`` belongs to ``labels[s]``."""
    speaker_means: np.ndarray

    def llr(self, features: np.ndarray) -> np.ndarray:
        """``log p(x | speaker) - log p(x | background)`` as an ``(n, speakers)`` array."""
        from scipy.special import logsumexp

        x = (np.asarray(features, dtype=np.float64) - self.centre) / self.scale
        background = self.background
        per_speaker = _log_densities(x, self.speaker_means, background.variances)
        speaker = logsumexp(per_speaker + background.log_weights, axis=2)
        scores = speaker - logsumexp(background.joint_log_densities(x), axis=1)[:, None]
        if not np.isfinite(scores).all():
            raise ModelError("a log-likelihood ratio is not finite")
        return scores

    def best_two(self, features: np.ndarray) -> BestScores:
        """The best and runner-up speaker LLR per row; ties go to the smaller label."""
        scores = self.llr(features)
        best_position = np.argmax(scores, axis=1)
        best = scores[np.arange(len(scores)), best_position]
        if scores.shape[1] == 1:
            runner_up = np.full(len(scores), -np.inf)
        else:
            runner_up = np.partition(scores, -2, axis=1)[:, -2]
        return BestScores(self.labels[best_position], best, runner_up)


def fit_speaker_model(
    features: np.ndarray,
    labels: np.ndarray,
    components: int,
    relevance: float,
    variance_floor: float,
) -> SpeakerModel:
    """Fit the background and every speaker's adapted means from training rows only.

    ``features`` are the masked raw features of the training rows and ``labels`` their speaker
    labels (any integers). Features are z-scored with the training mean and population standard
    deviation; a feature constant over the training rows cannot be z-scored and raises
    :class:`ModelError` rather than being dropped, because that would silently change the
    candidate. Means are adapted by MAP with relevance ``r``:
    ``mu'_k = alpha_k * xbar_k + (1 - alpha_k) * mu_k`` with ``alpha_k = n_k / (n_k + r)``, written
    as ``(F_k + r * mu_k) / (n_k + r)`` (``F_k`` the first-order statistic) so that a component
    the speaker never occupies needs no division by zero.
    """
    raw = np.asarray(features, dtype=np.float64)
    constant = np.ptp(raw, axis=0) == 0
    if constant.any():
        raise ModelError(f"masked feature columns {np.flatnonzero(constant).tolist()} are constant")
    centre, scale = raw.mean(axis=0), raw.std(axis=0)
    x = (raw - centre) / scale
    background = fit_background(x, components, variance_floor)
    resp, _ = background.responsibilities(x)
    speakers, speaker_of_row = np.unique(np.asarray(labels), return_inverse=True)
    adapted = []
    for speaker in range(len(speakers)):
        rows = speaker_of_row == speaker
        occupancy = resp[rows].sum(axis=0)
        first_order = resp[rows].T @ x[rows]
        adapted.append(
            (first_order + relevance * background.means) / (occupancy + relevance)[:, None]
        )
    return SpeakerModel(centre, scale, background, speakers, np.stack(adapted))


def accepts(
    best: np.ndarray,
    runner_up: np.ndarray,
    absolute_threshold: np.ndarray | float,
    margin_threshold: np.ndarray | float,
) -> np.ndarray:
    """Whether each row is accepted as its best speaker (else it is declared unknown).

    Accept only if ``best >= absolute_threshold`` and ``best - runner_up >= margin_threshold``;
    with a ``-inf`` runner-up the margin always holds. Broadcasts, so ``best[:, None]`` against
    threshold vectors sweeps many threshold pairs over one set of scores.
    """
    return (best >= absolute_threshold) & (best - runner_up >= margin_threshold)
