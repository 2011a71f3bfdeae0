"""Value types of the open-set speaker evaluation and the one error type it raises.

Every type is a frozen dataclass: plans, folds and results are handed between Snakemake jobs
and compared for equality in tests, so nothing may change one after it is built. Invariants that
concern a single value (a configuration's ranges, a fold's index types, a dataset's row order)
are enforced on construction; rules that relate several values (a fold against the dataset,
tuning folds against the held-out fold) are checked by
:func:`pathbench_flow.openset.folds.validate_fold` and
:func:`pathbench_flow.openset.evaluate.validate_plan`, so each rule fails in one place with its
own :class:`EvalErrorKind`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from enum import Enum
from fractions import Fraction
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from pathbench_flow.schemas.openset import FEATURE_NAMES, FULL_MASK, N_FEATURES, mask_columns

MAX_COUNT = 2**64 - 1
"""Counts are stored as unsigned 64-bit integers in count tables; pooling beyond this fails."""

ID_COLUMNS = ("utt_id", "speaker_id", "group_id")


class EvalErrorKind(Enum):
    """Why an evaluation refused to run; one member per rule so callers and tests can tell."""

    EmptyCandidates = "EmptyCandidates"
    EmptyTuningFolds = "EmptyTuningFolds"
    DuplicateCandidate = "DuplicateCandidate"
    DuplicateTuningFold = "DuplicateTuningFold"
    InvalidCandidate = "InvalidCandidate"
    InvalidFold = "InvalidFold"
    FoldOutsideOuterTraining = "FoldOutsideOuterTraining"
    GroupLeakage = "GroupLeakage"
    OpenSetViolation = "OpenSetViolation"
    CountOverflow = "CountOverflow"
    Model = "Model"


class EvalError(Exception):
    """The evaluation failed closed: no partial or silently repaired result is ever returned."""

    def __init__(self, kind: EvalErrorKind, detail: str) -> None:
        super().__init__(f"{kind.name}: {detail}")
        self.kind = kind
        self.detail = detail


def _candidate_int(value: Any, name: str) -> int:
    """An integer setting; bools and floats are refused because they signal a typo in a grid."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise EvalError(EvalErrorKind.InvalidCandidate, f"{name} must be an integer, got {value!r}")
    return int(value)


def _candidate_float(value: Any, name: str) -> float:
    """A finite float setting with negative zero folded into positive zero.

    Folding ``-0.0`` makes equality, hashing and ordering agree: with NaN and infinities refused
    and no negative zero left, the ordinary float order *is* IEEE total order, so the dataclass
    ordering used for tie-breaking is total and two candidates compare equal exactly when they
    behave identically.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise EvalError(EvalErrorKind.InvalidCandidate, f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise EvalError(EvalErrorKind.InvalidCandidate, f"{name} must be finite, got {number!r}")
    return number + 0.0


@dataclass(frozen=True, order=True)
class ModelConfig:
    """One candidate: which features, how the speaker models are built, and how to decide.

    Field order is the tie-break order of model selection (mask as an integer, then components,
    relevance, variance floor, absolute and margin threshold), which is why ``order=True`` is
    the whole of the final tie-break.
    """

    mask: int
    components: int
    relevance: float
    variance_floor: float
    absolute_threshold: float
    margin_threshold: float

    def __post_init__(self) -> None:
        mask = _candidate_int(self.mask, "mask")
        if not 0 < mask <= FULL_MASK:
            raise EvalError(
                EvalErrorKind.InvalidCandidate,
                f"mask {mask:#x} must select at least one of bits 0..{N_FEATURES - 1} and no other",
            )
        components = _candidate_int(self.components, "components")
        if components < 1:
            raise EvalError(EvalErrorKind.InvalidCandidate, "components must be at least 1")
        relevance = _candidate_float(self.relevance, "relevance")
        variance_floor = _candidate_float(self.variance_floor, "variance_floor")
        for name, value in (("relevance", relevance), ("variance_floor", variance_floor)):
            if value <= 0.0:
                raise EvalError(EvalErrorKind.InvalidCandidate, f"{name} must be positive")
        object.__setattr__(self, "mask", mask)
        object.__setattr__(self, "components", components)
        object.__setattr__(self, "relevance", relevance)
        object.__setattr__(self, "variance_floor", variance_floor)
        for name in ("absolute_threshold", "margin_threshold"):
            object.__setattr__(self, name, _candidate_float(getattr(self, name), name))

    @property
    def fit_key(self) -> tuple[int, int, float, float]:
        """The settings a fitted model depends on; candidates sharing it share one fit."""
        return (self.mask, self.components, self.relevance, self.variance_floor)


def _index_tuple(values: Iterable[int], name: str) -> tuple[int, ...]:
    """Row indices as a tuple of Python ints, in the caller's order and with repeats kept.

    Order and repeats are preserved on purpose: the validator must be able to see a duplicated
    index, so nothing here may quietly deduplicate or sort. Bools and floats are refused rather
    than converted, because ``1.0`` or ``True`` in a fold file means the file is corrupt.
    """
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise EvalError(EvalErrorKind.InvalidFold, f"{name} must be a sequence of integers")
    items = tuple(values)
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in items):
        raise EvalError(EvalErrorKind.InvalidFold, f"{name} must contain only integers")
    return tuple(int(v) for v in items)


@dataclass(frozen=True, order=True)
class OpenSetFold:
    """One split of a set of active rows (indices into rows sorted by ``utt_id``).

    ``pseudo_unknown_speaker`` plays the unseen speaker: all of its rows are ``unknown_test``
    rows and it contributes nothing to ``train``.
    """

    pseudo_unknown_speaker: str
    train: tuple[int, ...]
    known_test: tuple[int, ...]
    unknown_test: tuple[int, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.pseudo_unknown_speaker, str):
            raise EvalError(EvalErrorKind.InvalidFold, "pseudo_unknown_speaker must be a string")
        for name in ("train", "known_test", "unknown_test"):
            object.__setattr__(self, name, _index_tuple(getattr(self, name), name))

    def canonical(self) -> OpenSetFold:
        """The same split with sorted index sets.

        Two folds are the same split exactly when their canonical forms are equal, and the
        dataclass order on canonical forms gives tuning folds a caller-independent order.
        """
        return OpenSetFold(
            self.pseudo_unknown_speaker,
            tuple(sorted(self.train)),
            tuple(sorted(self.known_test)),
            tuple(sorted(self.unknown_test)),
        )


@dataclass(frozen=True, eq=False)
class OpenSetDataset:
    """The active rows: one per utterance, sorted by ``utt_id``, with the 24 schema features.

    Sorting by ``utt_id`` makes row indices (and so fold files) independent of the order in
    which a feature table happened to be written. Equality is identity because the feature
    matrix is a NumPy array.

    A feature the signal did not support is NaN (unmeasured) and stays NaN: a row is not
    dropped for it, because the rows that lose features (little voicing, very short words) are
    the most impaired speakers'. Each candidate uses only the rows measured on its own mask
    (:meth:`measured_rows`); see :func:`pathbench_flow.openset.evaluate.fit_and_count`.
    Infinite values are refused: the feature extractor never writes one, so one means a bug.
    """

    utt_ids: tuple[str, ...]
    speaker_ids: tuple[str, ...]
    group_ids: tuple[str, ...]
    features: np.ndarray
    speakers: tuple[str, ...] = field(init=False)
    """Distinct speakers in sorted order; ``speaker_codes`` index into it."""
    speaker_codes: np.ndarray = field(init=False)
    group_codes: np.ndarray = field(init=False)
    measured: np.ndarray = field(init=False)
    """``(n_rows, 24)`` booleans: whether each feature of each row was measured (not NaN)."""

    def __post_init__(self) -> None:
        n_rows = len(self.utt_ids)
        if n_rows == 0:
            raise ValueError("an open-set dataset needs at least one row")
        for name in ID_COLUMNS:
            values = getattr(self, f"{name}s")
            if len(values) != n_rows or not all(isinstance(v, str) for v in values):
                raise ValueError(f"{name}s must be {n_rows} strings")
        if any(a >= b for a, b in pairwise(self.utt_ids)):
            raise ValueError("rows must be sorted by utt_id without duplicates")
        features = np.array(self.features, dtype=np.float64)
        if features.shape != (n_rows, N_FEATURES):
            raise ValueError(f"features must have shape ({n_rows}, {N_FEATURES})")
        if np.isinf(features).any():
            raise ValueError("features must be finite or NaN (unmeasured), not infinite")
        features.flags.writeable = False
        measured = ~np.isnan(features)
        measured.flags.writeable = False
        speakers, speaker_codes = np.unique(np.array(self.speaker_ids), return_inverse=True)
        _, group_codes = np.unique(np.array(self.group_ids), return_inverse=True)
        speaker_codes.flags.writeable = False
        group_codes.flags.writeable = False
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "speakers", tuple(str(s) for s in speakers))
        object.__setattr__(self, "speaker_codes", speaker_codes)
        object.__setattr__(self, "group_codes", group_codes)
        object.__setattr__(self, "measured", measured)

    @property
    def n_rows(self) -> int:
        """Number of active rows."""
        return len(self.utt_ids)

    def measured_rows(self, mask: int) -> np.ndarray:
        """Per row, whether every feature ``mask`` selects was measured: the rows a candidate
        with this mask can fit on and score."""
        return self.measured[:, list(mask_columns(mask))].all(axis=1)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> OpenSetDataset:
        """Build the active rows from a feature table in any row order.

        Ids are compared as strings. Missing ids, duplicate ``utt_id`` values and infinite
        features raise ``ValueError`` naming the offending rows, because repairing or dropping
        them here would change the evaluation without anyone noticing. NaN features are kept as
        unmeasured.
        """
        required = [*ID_COLUMNS, *FEATURE_NAMES]
        missing = [name for name in required if name not in frame.columns]
        if missing:
            raise ValueError(f"feature table lacks columns {missing}")
        if frame[list(ID_COLUMNS)].isna().any().any():
            raise ValueError("feature table has missing utt_id, speaker_id or group_id values")
        ids = frame[list(ID_COLUMNS)].astype(str)
        order = np.argsort(ids["utt_id"].to_numpy(dtype=object), kind="stable")
        ids = ids.iloc[order]
        duplicated = ids["utt_id"][ids["utt_id"].duplicated()].unique().tolist()
        if duplicated:
            raise ValueError(f"duplicate utt_id values: {duplicated[:5]}")
        features = frame[list(FEATURE_NAMES)].to_numpy(dtype=np.float64, na_value=np.nan)[order]
        bad_rows = np.isinf(features).any(axis=1)
        if bad_rows.any():
            bad = ids["utt_id"].to_numpy(dtype=object)[bad_rows].tolist()
            raise ValueError(f"infinite features in rows {bad[:5]}")
        return cls(
            utt_ids=tuple(ids["utt_id"].tolist()),
            speaker_ids=tuple(ids["speaker_id"].tolist()),
            group_ids=tuple(ids["group_id"].tolist()),
            features=features,
        )


@dataclass(frozen=True, eq=False)
class EvaluationPlan:
    """Everything one outer fold's evaluation needs.

    Validation happens in :func:`pathbench_flow.openset.evaluate.validate_plan`, not here, so that a
    plan can be assembled in any order and every broken rule reports its own error kind.
    """

    dataset: OpenSetDataset
    tuning_folds: tuple[OpenSetFold, ...]
    held_out_fold: OpenSetFold
    candidates: tuple[ModelConfig, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "tuning_folds", tuple(self.tuning_folds))
        object.__setattr__(self, "candidates", tuple(self.candidates))


def exact_rate(numerator: int, denominator: int) -> Fraction:
    """``numerator / denominator`` as an exact fraction; an empty denominator gives 0.

    Selection compares rates exactly so that two candidates with the same counts tie however
    their floats would have rounded.
    """
    return Fraction(numerator, denominator) if denominator else Fraction(0)


@dataclass(frozen=True)
class AggregateMetrics:
    """Decision counts over known-test and unknown-test rows, and the rates derived from them."""

    known_total: int
    known_correct: int
    known_misidentified: int
    known_rejected: int
    unknown_total: int
    unknown_rejected: int
    unknown_accepted: int

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{item.name} must be an integer count, got {value!r}")
            value = int(value)
            if value < 0:
                raise ValueError(f"{item.name} must not be negative")
            if value > MAX_COUNT:
                raise EvalError(EvalErrorKind.CountOverflow, f"{item.name} exceeds 2^64 - 1")
            object.__setattr__(self, item.name, value)
        known = self.known_correct + self.known_misidentified + self.known_rejected
        if known != self.known_total:
            raise ValueError("known_correct + known_misidentified + known_rejected != known_total")
        if self.unknown_rejected + self.unknown_accepted != self.unknown_total:
            raise ValueError("unknown_rejected + unknown_accepted != unknown_total")

    def __add__(self, other: AggregateMetrics) -> AggregateMetrics:
        """Pool two count sets (e.g. over tuning folds); overflow raises ``CountOverflow``."""
        return AggregateMetrics(
            **{
                item.name: getattr(self, item.name) + getattr(other, item.name)
                for item in fields(self)
            }
        )

    @property
    def known_identification_rate(self) -> float:
        """Share of known-test rows attributed to their own speaker."""
        return float(exact_rate(self.known_correct, self.known_total))

    @property
    def known_misidentification_rate(self) -> float:
        """Share of known-test rows attributed to another enrolled speaker."""
        return float(exact_rate(self.known_misidentified, self.known_total))

    @property
    def known_rejection_rate(self) -> float:
        """Share of known-test rows wrongly declared unknown."""
        return float(exact_rate(self.known_rejected, self.known_total))

    @property
    def unknown_rejection_rate(self) -> float:
        """Share of unknown-test rows correctly declared unknown."""
        return float(exact_rate(self.unknown_rejected, self.unknown_total))

    @property
    def unknown_acceptance_rate(self) -> float:
        """Share of unknown-test rows wrongly attributed to an enrolled speaker."""
        return float(exact_rate(self.unknown_accepted, self.unknown_total))

    @property
    def exact_balanced_open_set(self) -> Fraction:
        """Mean of known identification and unknown rejection, exactly (used for ranking)."""
        known = exact_rate(self.known_correct, self.known_total)
        unknown = exact_rate(self.unknown_rejected, self.unknown_total)
        return (known + unknown) / 2

    @property
    def balanced_open_set_rate(self) -> float:
        """Mean of known identification and unknown rejection rates."""
        return float(self.exact_balanced_open_set)


@dataclass(frozen=True)
class CandidateEvaluation:
    """A candidate and its counts pooled over all tuning folds."""

    config: ModelConfig
    tuning: AggregateMetrics


@dataclass(frozen=True)
class EvaluationResult:
    """The selected candidate, every candidate's tuning counts and the held-out counts."""

    selected_config: ModelConfig
    candidate_evaluations: tuple[CandidateEvaluation, ...]
    held_out: AggregateMetrics
