"""The GMM background, MAP speaker adaptation, LLR scoring and the decision rule."""

from __future__ import annotations

import numpy as np
import pytest

from pathbench_flow.openset.model import (
    MAX_ITERATIONS,
    ModelError,
    accepts,
    fit_background,
    fit_speaker_model,
)

DIM = 4
CENTRES = 6.0 * np.eye(DIM)
"""Four known speakers, one per axis, six standard deviations from the origin."""


def gaussian_speakers(
    centres: np.ndarray, rows_per_speaker: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    features = np.concatenate([c + rng.normal(size=(rows_per_speaker, DIM)) for c in centres])
    labels = np.repeat(np.arange(len(centres)), rows_per_speaker)
    return features, labels


@pytest.mark.parametrize("components", [1, 2])
def test_separated_speakers_are_identified(components: int) -> None:
    # (with as many components as speakers the background already puts one component on each
    # speaker, MAP moves nothing and every LLR is ~0: the GMM-UBM needs shared structure)
    features, labels = gaussian_speakers(CENTRES, 40, seed=0)
    model = fit_speaker_model(features, labels, components, relevance=4.0, variance_floor=1e-3)
    test_features, test_labels = gaussian_speakers(CENTRES, 25, seed=1)
    scores = model.best_two(test_features)
    assert np.mean(scores.best_label == test_labels) >= 0.95


def test_an_unseen_speaker_is_rejected_with_a_suitable_threshold() -> None:
    features, labels = gaussian_speakers(CENTRES, 40, seed=0)
    model = fit_speaker_model(features, labels, 1, relevance=4.0, variance_floor=1e-3)
    test_features, test_labels = gaussian_speakers(CENTRES, 25, seed=1)
    known = model.best_two(test_features)
    # the unseen speaker sits amid the enrolled ones, where every speaker model is worse than
    # the background on average, so a small positive LLR threshold rejects it
    unseen, _ = gaussian_speakers(CENTRES.mean(axis=0, keepdims=True), 50, seed=2)
    unknown = model.best_two(unseen)
    threshold = 0.3
    known_correct = accepts(known.best, known.runner_up, threshold, 0.0) & (
        known.best_label == test_labels
    )
    assert known_correct.mean() >= 0.95
    assert not accepts(unknown.best, unknown.runner_up, threshold, 0.0).any()
    assert accepts(unknown.best, unknown.runner_up, -1.0, 0.0).any()  # the threshold matters


def test_infinite_relevance_gives_back_the_background() -> None:
    features, labels = gaussian_speakers(CENTRES, 30, seed=3)
    model = fit_speaker_model(features, labels, 2, relevance=1e12, variance_floor=1e-3)
    assert np.allclose(model.speaker_means, model.background.means[None], atol=1e-9)
    assert np.abs(model.llr(features)).max() < 1e-6


def test_map_adaptation_follows_the_relevance_formula() -> None:
    features, labels = gaussian_speakers(CENTRES, 10, seed=4)
    relevance = 3.0
    model = fit_speaker_model(features, labels, 1, relevance, variance_floor=1e-3)
    z = (features - features.mean(axis=0)) / features.std(axis=0)
    for speaker in range(len(CENTRES)):
        rows = z[labels == speaker]
        alpha = len(rows) / (len(rows) + relevance)  # one component: n_k is the row count
        expected = alpha * rows.mean(axis=0) + (1 - alpha) * model.background.means[0]
        assert np.allclose(model.speaker_means[speaker, 0], expected)
    assert np.allclose(model.background.means[0], 0.0, atol=1e-12)


def test_em_finds_two_clusters_and_respects_floor_and_iteration_cap() -> None:
    # clusters apart along a correlated direction, as speaker differences in acoustic features
    # are: the first principal axis then separates them from the start
    features, labels = gaussian_speakers(np.array([[-3.0] * DIM, [3.0] * DIM]), 200, seed=5)
    z = (features - features.mean(0)) / features.std(0)
    background = fit_background(z, 2, 1e-3)
    assert np.isclose(np.exp(background.log_weights).sum(), 1.0)
    assert np.allclose(np.exp(background.log_weights), 0.5, atol=0.05)
    cluster_means = np.stack([z[labels == 0].mean(0), z[labels == 1].mean(0)])
    assert np.allclose(
        background.means[np.argsort(background.means[:, 0])], cluster_means, atol=0.05
    )
    assert 0 < background.iterations < MAX_ITERATIONS
    floored = fit_background(features / features.std(0), 2, variance_floor=10.0)
    assert np.all(floored.variances == 10.0)


def test_fitting_is_deterministic() -> None:
    features, labels = gaussian_speakers(CENTRES, 20, seed=6)
    first = fit_speaker_model(features, labels, 3, 8.0, 1e-3)
    second = fit_speaker_model(features.copy(), labels.copy(), 3, 8.0, 1e-3)
    assert np.array_equal(first.speaker_means, second.speaker_means)
    assert np.array_equal(first.llr(features), second.llr(features))


def test_model_errors() -> None:
    features, labels = gaussian_speakers(CENTRES, 3, seed=7)
    with pytest.raises(ModelError, match="components"):
        fit_speaker_model(features, labels, len(features) + 1, 4.0, 1e-3)
    constant = features.copy()
    constant[:, 2] = 7.5
    with pytest.raises(ModelError, match=r"\[2\]"):
        fit_speaker_model(constant, labels, 1, 4.0, 1e-3)


def test_scores_stay_finite_far_from_the_data() -> None:
    features, labels = gaussian_speakers(CENTRES, 20, seed=8)
    model = fit_speaker_model(features, labels, 2, 4.0, 1e-3)
    far = np.full((1, DIM), 1e4)
    assert np.isfinite(model.llr(far)).all()


def test_best_two_labels_ties_and_a_single_speaker() -> None:
    features, labels = gaussian_speakers(CENTRES[:2], 20, seed=9)
    model = fit_speaker_model(features, labels + 10, 1, 4.0, 1e-3)
    scores = model.best_two(features)
    assert set(scores.best_label.tolist()) <= {10, 11}
    assert np.all(scores.best >= scores.runner_up)
    single = fit_speaker_model(features, np.zeros(len(features)), 1, 4.0, 1e-3)
    alone = single.best_two(features)
    assert np.all(alone.runner_up == -np.inf)
    assert accepts(alone.best, alone.runner_up, -np.inf, 1e300).all()


def test_decision_rule_boundaries_are_inclusive() -> None:
    best = np.array([1.0, 1.0, 1.0, 0.5])
    runner_up = np.array([0.0, 0.5, -np.inf, 0.0])
    assert accepts(best, runner_up, 1.0, 1.0).tolist() == [True, False, True, False]
    sweep = accepts(best[:, None], runner_up[:, None], np.array([0.5, 2.0]), np.array([0.0, 0.0]))
    assert sweep.tolist() == [[True, False]] * 4
