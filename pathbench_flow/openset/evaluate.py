"""Nested open-set evaluation: tune on tuning folds, select one candidate, score it held out.

The workflow runs the pieces as separate jobs: :func:`fit_and_count` once per (outer fold,
tuning fold), :func:`pool_counts` and :func:`select` once per outer fold, then
:func:`score_held_out`. :func:`evaluate` composes the same pieces in one process. Held-out rows
influence nothing but the final counts: candidates are ranked on tuning folds drawn from the
held-out training rows alone, and the winner is refitted on those rows before it sees a test row.

Candidates that differ only in their thresholds share one fit per fold: each test row's best
speaker, best LLR and runner-up LLR are computed once and every threshold pair is swept over
those numbers, which gives exactly the decisions separate fits would give.

An unmeasured (NaN) feature never removes a row from the evaluation, and nothing is imputed: a
candidate fits on the training rows measured on its mask and declares a test row it cannot
measure unknown (an error for a known-test row, a correct rejection for an unknown-test row),
so every candidate is counted on the same rows and a feature set that fails on impaired voices
pays for it in its rates. No test row influences a fit either way.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from operator import attrgetter
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from pathbench_flow.openset.folds import FOLD_SETS, validate_fold
from pathbench_flow.openset.model import ModelError, SpeakerModel, accepts, fit_speaker_model
from pathbench_flow.openset.types import (
    AggregateMetrics,
    CandidateEvaluation,
    EvalError,
    EvalErrorKind,
    EvaluationPlan,
    EvaluationResult,
    ModelConfig,
    OpenSetDataset,
    OpenSetFold,
    exact_rate,
)
from pathbench_flow.schemas.openset import mask_columns, mask_from_names

CONFIG_COLUMNS = tuple(item.name for item in fields(ModelConfig))
COUNT_COLUMNS = tuple(item.name for item in fields(AggregateMetrics))

COUNTS_SCHEMA = pa.schema(
    [
        ("mask", pa.int64()),
        ("components", pa.int64()),
        ("relevance", pa.float64()),
        ("variance_floor", pa.float64()),
        ("absolute_threshold", pa.float64()),
        ("margin_threshold", pa.float64()),
        *((name, pa.uint64()) for name in COUNT_COLUMNS),
    ]
)
"""Arrow schema of a count table, for :func:`pathbench_flow.common.io.write_parquet` (sort by
:data:`CONFIG_COLUMNS`). Counts are unsigned 64-bit so that pooled counts up to 2^64 - 1 fit."""

MIN_FIT_ROWS = 2
"""Measured training rows a candidate needs to fit at all (z-scoring needs two values)."""

GRID_KEYS = (
    "feature_masks",
    "components",
    "relevance",
    "variance_floor",
    "absolute_threshold",
    "margin_threshold",
)


def canonical_candidates(candidates: Iterable[ModelConfig]) -> tuple[ModelConfig, ...]:
    """Candidates in tie-break order, refusing an empty list, non-candidates and repeats.

    Sorting makes every result independent of the order candidates were listed in; a repeat is
    refused rather than dropped because it means the grid was not what its author thought.
    """
    items = tuple(candidates)
    if not items:
        raise EvalError(EvalErrorKind.EmptyCandidates, "no candidate configurations")
    for item in items:
        if not isinstance(item, ModelConfig):
            raise EvalError(EvalErrorKind.InvalidCandidate, f"not a ModelConfig: {item!r}")
    ordered = tuple(sorted(items))
    for first, second in itertools.pairwise(ordered):
        if first == second:
            raise EvalError(EvalErrorKind.DuplicateCandidate, f"listed twice: {first}")
    return ordered


def validate_plan(plan: EvaluationPlan) -> EvaluationPlan:
    """The plan with candidates and tuning folds in canonical order, or an :class:`EvalError`.

    The held-out fold must partition every active row; each tuning fold must partition exactly
    the held-out training rows; both under the rules of :func:`validate_fold`. Folds come back
    with sorted indices, so neither caller order nor index order can change a floating-point
    sum downstream.
    """
    candidates = canonical_candidates(plan.candidates)
    if not plan.tuning_folds:
        raise EvalError(EvalErrorKind.EmptyTuningFolds, "no tuning folds")
    dataset, held_out = plan.dataset, plan.held_out_fold
    for fold in (held_out, *plan.tuning_folds):
        if not isinstance(fold, OpenSetFold):
            raise EvalError(EvalErrorKind.InvalidFold, f"not an OpenSetFold: {fold!r}")
    validate_fold(dataset, held_out, universe=np.arange(dataset.n_rows))
    for fold in plan.tuning_folds:
        validate_fold(dataset, fold, universe=held_out.train)
    tuning = tuple(sorted(fold.canonical() for fold in plan.tuning_folds))
    for first, second in itertools.pairwise(tuning):
        if first == second:
            raise EvalError(
                EvalErrorKind.DuplicateTuningFold,
                f"a tuning fold with pseudo-unknown {first.pseudo_unknown_speaker!r} repeats",
            )
    return EvaluationPlan(dataset, tuning, held_out.canonical(), candidates)


def _decisions(
    model: SpeakerModel | None,
    dataset: OpenSetDataset,
    rows: np.ndarray,
    mask: int,
    absolute: np.ndarray,
    margin: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's best speaker code (-1 if unscored) and, per threshold pair, its acceptance.

    A row missing a feature of ``mask`` cannot be scored by the candidate, and every row is
    unscored when the candidate enrolled nobody (``model`` is None); such rows are declared
    unknown, as a deployed system that cannot measure its input would declare it.
    """
    labels = np.full(len(rows), -1, dtype=np.int64)
    accepted = np.zeros((len(rows), len(absolute)), dtype=bool)
    scored = dataset.measured_rows(mask)[rows]
    if model is not None and scored.any():
        scores = model.best_two(dataset.features[np.ix_(rows[scored], mask_columns(mask))])
        labels[scored] = scores.best_label
        accepted[scored] = accepts(
            scores.best[:, None], scores.runner_up[:, None], absolute, margin
        )
    return labels, accepted


def _fold_metrics(
    dataset: OpenSetDataset, fold: OpenSetFold, candidates: Sequence[ModelConfig]
) -> list[AggregateMetrics]:
    """Counts for each of the (sorted, validated) ``candidates`` on one validated fold.

    One model is fitted per ``fit_key`` on the fold's training rows measured on its mask (so
    a speaker none of whose training rows is measured is not enrolled by that candidate); the
    known-test and unknown-test rows are scored once each and the candidates' thresholds are
    swept over the scores. Every test row counts for every candidate, scored or declared
    unknown, so all candidates are compared on the same rows. With fewer than
    :data:`MIN_FIT_ROWS` measured training rows the candidate enrols nobody: one row cannot
    be z-scored, and calling that a constant feature would blame the grid for the voices.
    """
    train, known, unknown = (np.asarray(getattr(fold, name)) for name in FOLD_SETS)
    codes, features = dataset.speaker_codes, dataset.features
    metrics = []
    for fit_key, group in itertools.groupby(candidates, key=attrgetter("fit_key")):
        configs = list(group)
        mask, components, relevance, variance_floor = fit_key
        absolute = np.array([config.absolute_threshold for config in configs])
        margin = np.array([config.margin_threshold for config in configs])
        enrolled = train[dataset.measured_rows(mask)[train]]
        try:
            model = (
                fit_speaker_model(
                    features[np.ix_(enrolled, mask_columns(mask))],
                    codes[enrolled],
                    components,
                    relevance,
                    variance_floor,
                )
                if enrolled.size >= MIN_FIT_ROWS
                else None
            )
            known_labels, known_accepted = _decisions(model, dataset, known, mask, absolute, margin)
            _, unknown_accepted = _decisions(model, dataset, unknown, mask, absolute, margin)
        except ModelError as error:
            settings = f"mask={mask:#08x} components={components} relevance={relevance} "
            raise EvalError(
                EvalErrorKind.Model, f"{settings}variance_floor={variance_floor}: {error}"
            ) from error
        correct = (known_accepted & (known_labels == codes[known])[:, None]).sum(axis=0)
        accepted = known_accepted.sum(axis=0)
        intruders = unknown_accepted.sum(axis=0)
        metrics.extend(
            AggregateMetrics(
                known_total=len(known),
                known_correct=int(correct[i]),
                known_misidentified=int(accepted[i] - correct[i]),
                known_rejected=len(known) - int(accepted[i]),
                unknown_total=len(unknown),
                unknown_rejected=len(unknown) - int(intruders[i]),
                unknown_accepted=int(intruders[i]),
            )
            for i in range(len(configs))
        )
    return metrics


def _counts_frame(
    candidates: Sequence[ModelConfig], metrics: Sequence[AggregateMetrics]
) -> pd.DataFrame:
    """A count table: one row per candidate, configuration columns then count columns."""
    columns: dict[str, Any] = {
        name: [getattr(config, name) for config in candidates] for name in CONFIG_COLUMNS
    }
    for name in COUNT_COLUMNS:
        columns[name] = np.array([getattr(m, name) for m in metrics], dtype=np.uint64)
    frame = pd.DataFrame(columns)
    return frame.astype({"mask": np.int64, "components": np.int64})


def _frame_items(frame: pd.DataFrame) -> list[tuple[ModelConfig, AggregateMetrics]]:
    """Parse a count table back into candidates and counts, validating both."""
    missing = [name for name in (*CONFIG_COLUMNS, *COUNT_COLUMNS) if name not in frame.columns]
    if missing:
        raise ValueError(f"count table lacks columns {missing}")
    values = {name: frame[name].tolist() for name in (*CONFIG_COLUMNS, *COUNT_COLUMNS)}
    return [
        (
            ModelConfig(**{name: values[name][row] for name in CONFIG_COLUMNS}),
            AggregateMetrics(**{name: values[name][row] for name in COUNT_COLUMNS}),
        )
        for row in range(len(frame))
    ]


def fit_and_count(
    dataset: OpenSetDataset, fold: OpenSetFold, candidates: Iterable[ModelConfig]
) -> pd.DataFrame:
    """One tuning job: fit on ``fold``'s training rows, count every candidate's decisions.

    The fold is checked on its own rows (the job does not see the held-out fold; pass both to
    :func:`validate_fold` first to check membership). Returns a table with
    :data:`CONFIG_COLUMNS` and :data:`COUNT_COLUMNS`, sorted by configuration.
    """
    ordered = canonical_candidates(candidates)
    validate_fold(dataset, fold)
    return _counts_frame(ordered, _fold_metrics(dataset, fold.canonical(), ordered))


def pool_counts(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Sum count tables over tuning folds; every table must list the same candidates once.

    Sums use Python integers and fail with ``CountOverflow`` beyond 2^64 - 1 instead of
    wrapping around as unsigned NumPy sums would.
    """
    pooled: dict[ModelConfig, AggregateMetrics] | None = None
    for table in tables:
        items = _frame_items(table)
        canonical_candidates(config for config, _ in items)
        counts = dict(items)
        if pooled is None:
            pooled = counts
        elif counts.keys() != pooled.keys():
            raise ValueError("count tables list different candidates")
        else:
            pooled = {config: pooled[config] + counts[config] for config in pooled}
    if pooled is None:
        raise EvalError(EvalErrorKind.EmptyTuningFolds, "no count tables to pool")
    ordered = sorted(pooled)
    return _counts_frame(ordered, [pooled[config] for config in ordered])


def _selection_key(item: tuple[ModelConfig, AggregateMetrics]) -> tuple[Any, ...]:
    """Smaller is better: the selection rule as one tuple, with rates compared exactly."""
    config, counts = item
    return (
        -counts.exact_balanced_open_set,
        -exact_rate(counts.known_correct, counts.known_total),
        -exact_rate(counts.unknown_rejected, counts.unknown_total),
        counts.known_misidentified,
        config,
    )


def select(candidate_counts_pooled: pd.DataFrame) -> ModelConfig:
    """The winning candidate of a pooled count table.

    Highest balanced open-set rate, then highest known identification rate, then highest
    unknown rejection rate, then fewest known misidentifications, then the smallest
    configuration in :class:`ModelConfig` order. (Given equal balanced rates, equal known
    identification implies equal unknown rejection, so the third level can never decide with
    exact rates; it is kept because it is the documented rule.)
    """
    items = _frame_items(candidate_counts_pooled)
    canonical_candidates(config for config, _ in items)
    return min(items, key=_selection_key)[0]


def score_held_out(
    dataset: OpenSetDataset, fold: OpenSetFold, config: ModelConfig
) -> AggregateMetrics:
    """Refit ``config`` on the held-out fold's training rows; count each test row once."""
    (config,) = canonical_candidates([config])
    validate_fold(dataset, fold, universe=np.arange(dataset.n_rows))
    return _fold_metrics(dataset, fold.canonical(), (config,))[0]


def evaluate(plan: EvaluationPlan) -> EvaluationResult:
    """Validate ``plan``, tune every candidate on every tuning fold, select and score held out."""
    plan = validate_plan(plan)
    tables = (
        _counts_frame(plan.candidates, _fold_metrics(plan.dataset, fold, plan.candidates))
        for fold in plan.tuning_folds
    )
    pooled = pool_counts(tables)
    selected = select(pooled)
    held_out = _fold_metrics(plan.dataset, plan.held_out_fold, (selected,))[0]
    evaluations = tuple(
        CandidateEvaluation(config, counts) for config, counts in _frame_items(pooled)
    )
    return EvaluationResult(selected, evaluations, held_out)


def _grid_values(grid: Mapping[str, Any], key: str) -> list[Any]:
    values = grid[key]
    if not isinstance(values, list | tuple):
        raise ValueError(f"candidate grid {key!r} must be a list")
    return list(values)


def candidate_grid(grid: Mapping[str, Any]) -> list[ModelConfig]:
    """Every combination of a grid's settings, sorted, as candidates.

    ``grid`` has exactly the keys :data:`GRID_KEYS`: ``feature_masks`` maps a mask name to a
    list of feature names; the others list values for the :class:`ModelConfig` field of the
    same name. Unknown features and out-of-range values raise ``InvalidCandidate``, empty lists
    ``EmptyCandidates``, and repeated values or two names for the same feature set
    ``DuplicateCandidate``; a malformed grid (wrong keys, a value that is not a list) raises
    ``ValueError``.
    """
    if set(grid) != set(GRID_KEYS):
        raise ValueError(f"candidate grid keys must be exactly {GRID_KEYS}, got {sorted(grid)}")
    named_masks = grid["feature_masks"]
    if not isinstance(named_masks, Mapping):
        raise ValueError("candidate grid 'feature_masks' must map names to feature lists")
    feature_lists = [_grid_values(named_masks, name) for name in named_masks]
    try:
        masks = [mask_from_names(names) for names in feature_lists]
    except ValueError as error:
        raise EvalError(EvalErrorKind.InvalidCandidate, str(error)) from error
    settings = [_grid_values(grid, key) for key in GRID_KEYS[1:]]
    return list(
        canonical_candidates(
            ModelConfig(*combination) for combination in itertools.product(masks, *settings)
        )
    )
