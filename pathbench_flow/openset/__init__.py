"""Leakage-safe open-set speaker identification benchmark on acoustic features.

The public surface: the frozen feature schema, the value types, fold building (with the reason
when a dataset's shape allows no fold) and validation, and the evaluation pieces the Snakemake
rules call one by one (:func:`fit_and_count`, :func:`pool_counts`, :func:`select`,
:func:`score_held_out`) or all at once (:func:`evaluate`).
"""

from pathbench_flow.openset.evaluate import (
    COUNTS_SCHEMA,
    candidate_grid,
    evaluate,
    fit_and_count,
    pool_counts,
    score_held_out,
    select,
    validate_plan,
)
from pathbench_flow.openset.folds import (
    NestedFolds,
    build_folds,
    build_nested_folds,
    build_tuning_folds,
    fold_from_dict,
    fold_to_dict,
    validate_fold,
)
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
)
from pathbench_flow.schemas.openset import FEATURE_NAMES, SCHEMA_ID

__all__ = [
    "COUNTS_SCHEMA",
    "FEATURE_NAMES",
    "SCHEMA_ID",
    "AggregateMetrics",
    "CandidateEvaluation",
    "EvalError",
    "EvalErrorKind",
    "EvaluationPlan",
    "EvaluationResult",
    "ModelConfig",
    "NestedFolds",
    "OpenSetDataset",
    "OpenSetFold",
    "build_folds",
    "build_nested_folds",
    "build_tuning_folds",
    "candidate_grid",
    "evaluate",
    "fit_and_count",
    "fold_from_dict",
    "fold_to_dict",
    "pool_counts",
    "score_held_out",
    "select",
    "validate_fold",
    "validate_plan",
]
