"""Plan validation, the threshold sweep, pooling, selection and the composed evaluation."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pathbench_flow.common.io import read_parquet, write_parquet
from pathbench_flow.openset import (
    COUNTS_SCHEMA,
    FEATURE_NAMES,
    AggregateMetrics,
    EvalError,
    EvalErrorKind,
    EvaluationPlan,
    EvaluationResult,
    ModelConfig,
    OpenSetDataset,
    OpenSetFold,
    build_folds,
    build_tuning_folds,
    candidate_grid,
    evaluate,
    fit_and_count,
    pool_counts,
    score_held_out,
    select,
    validate_plan,
)
from pathbench_flow.openset.evaluate import CONFIG_COLUMNS, COUNT_COLUMNS
from pathbench_flow.openset.folds import FOLD_SETS
from pathbench_flow.openset.types import MAX_COUNT
from pathbench_flow.testing.openset_frames import speaker_frame

GRID = {
    "feature_masks": {"all": list(FEATURE_NAMES), "voice": list(FEATURE_NAMES[:8])},
    "components": [1, 2],
    "relevance": [4.0],
    "variance_floor": [1e-3],
    "absolute_threshold": [-1.0, 0.0, 1.0],
    "margin_threshold": [0.0, 0.5],
}


def base_plan(frame: pd.DataFrame | None = None) -> EvaluationPlan:
    dataset = OpenSetDataset.from_frame(speaker_frame() if frame is None else frame)
    held_out = build_folds(dataset, known_folds=2)[0]
    tuning = build_tuning_folds(dataset, held_out, known_folds=2, max_tuning_folds=4)
    return EvaluationPlan(dataset, tuning, held_out, candidate_grid(GRID))


@pytest.fixture(scope="module")
def plan() -> EvaluationPlan:
    return base_plan()


@pytest.fixture(scope="module")
def result(plan: EvaluationPlan) -> EvaluationResult:
    return evaluate(plan)


def test_evaluate_is_composed_of_the_workflow_pieces(
    plan: EvaluationPlan, result: EvaluationResult
) -> None:
    tables = [fit_and_count(plan.dataset, fold, plan.candidates) for fold in plan.tuning_folds]
    pooled = pool_counts(tables)
    assert result.selected_config == select(pooled)
    assert [e.config for e in result.candidate_evaluations] == sorted(plan.candidates)
    for evaluation, (_, row) in zip(result.candidate_evaluations, pooled.iterrows(), strict=True):
        assert evaluation.tuning == AggregateMetrics(**{n: int(row[n]) for n in COUNT_COLUMNS})
    held_out = score_held_out(plan.dataset, plan.held_out_fold, result.selected_config)
    assert result.held_out == held_out
    assert held_out.known_total == len(plan.held_out_fold.known_test)
    assert held_out.unknown_total == len(plan.held_out_fold.unknown_test)
    # the data are separable enough that the selection is better than chance
    assert result.held_out.balanced_open_set_rate > 0.5


def test_results_do_not_depend_on_input_order(
    plan: EvaluationPlan, result: EvaluationResult
) -> None:
    shuffled_rows = speaker_frame().sample(frac=1.0, random_state=3)
    assert evaluate(base_plan(shuffled_rows)) == result

    def reversed_fold(fold: OpenSetFold) -> OpenSetFold:
        return OpenSetFold(
            fold.pseudo_unknown_speaker,
            fold.train[::-1],
            fold.known_test[::-1],
            fold.unknown_test[::-1],
        )

    reordered = EvaluationPlan(
        plan.dataset,
        tuple(reversed_fold(f) for f in reversed(plan.tuning_folds)),
        reversed_fold(plan.held_out_fold),
        tuple(reversed(plan.candidates)),
    )
    assert evaluate(reordered) == result
    assert validate_plan(reordered).tuning_folds == validate_plan(plan).tuning_folds


def test_threshold_sweep_equals_separate_fits(plan: EvaluationPlan) -> None:
    fold = plan.tuning_folds[0]
    table = fit_and_count(plan.dataset, fold, plan.candidates).set_index(list(CONFIG_COLUMNS))
    for config in plan.candidates[::5]:
        alone = fit_and_count(plan.dataset, fold, [config]).set_index(list(CONFIG_COLUMNS))
        key = dataclasses.astuple(config)
        assert alone.loc[key].tolist() == table.loc[key].tolist()
    assert (table["known_total"] == len(fold.known_test)).all()
    assert table.index.is_monotonic_increasing


def moved(fold: OpenSetFold, rows: tuple[int, ...], source: str, target: str) -> OpenSetFold:
    """``fold`` with ``rows`` moved from one of its index sets to another."""
    sets = {name: list(getattr(fold, name)) for name in ("train", "known_test", "unknown_test")}
    sets[source] = [i for i in sets[source] if i not in rows]
    sets[target] += rows
    return OpenSetFold(fold.pseudo_unknown_speaker, **sets)


def group_rows(plan: EvaluationPlan, fold: OpenSetFold, source: str) -> tuple[int, ...]:
    """All rows of the group of ``fold``'s first ``source`` row, within ``source``."""
    group = plan.dataset.group_codes[getattr(fold, source)[0]]
    return tuple(i for i in getattr(fold, source) if plan.dataset.group_codes[i] == group)


def with_tuning(plan: EvaluationPlan, first: OpenSetFold) -> EvaluationPlan:
    return dataclasses.replace(plan, tuning_folds=(first, *plan.tuning_folds[1:]))


VIOLATIONS: dict[EvalErrorKind, Callable[[EvaluationPlan], EvaluationPlan]] = {
    EvalErrorKind.EmptyCandidates: lambda p: dataclasses.replace(p, candidates=()),
    EvalErrorKind.EmptyTuningFolds: lambda p: dataclasses.replace(p, tuning_folds=()),
    EvalErrorKind.DuplicateCandidate: lambda p: dataclasses.replace(
        p, candidates=(*p.candidates, dataclasses.replace(p.candidates[3]))
    ),
    EvalErrorKind.DuplicateTuningFold: lambda p: dataclasses.replace(
        p,
        tuning_folds=(
            *p.tuning_folds,
            dataclasses.replace(p.tuning_folds[0], train=p.tuning_folds[0].train[::-1]),
        ),
    ),
    EvalErrorKind.InvalidCandidate: lambda p: dataclasses.replace(
        p, candidates=(*p.candidates, (1, 1, 4.0, 1e-3, 0.0, 0.0))
    ),
    # the held-out fold leaves one known-test row in no set
    EvalErrorKind.InvalidFold: lambda p: dataclasses.replace(
        p,
        held_out_fold=dataclasses.replace(
            p.held_out_fold, known_test=p.held_out_fold.known_test[1:]
        ),
    ),
    # a held-out unknown-test row also appears in a tuning fold's unknown-test rows
    EvalErrorKind.FoldOutsideOuterTraining: lambda p: with_tuning(
        p,
        dataclasses.replace(
            p.tuning_folds[0],
            unknown_test=(*p.tuning_folds[0].unknown_test, p.held_out_fold.unknown_test[0]),
        ),
    ),
    # one row of a tuning fold's training group moves to its known-test side, the rest stays
    EvalErrorKind.GroupLeakage: lambda p: with_tuning(
        p, moved(p.tuning_folds[0], p.tuning_folds[0].train[:1], "train", "known_test")
    ),
    # a whole group of a tuning fold's pseudo-unknown speaker moves into its training rows
    EvalErrorKind.OpenSetViolation: lambda p: with_tuning(
        p,
        moved(
            p.tuning_folds[0],
            group_rows(p, p.tuning_folds[0], "unknown_test"),
            "unknown_test",
            "train",
        ),
    ),
    EvalErrorKind.Model: lambda p: dataclasses.replace(
        p, candidates=(*p.candidates, dataclasses.replace(p.candidates[0], components=1000))
    ),
}


@pytest.mark.parametrize("kind", list(VIOLATIONS), ids=lambda kind: kind.name)
def test_each_rule_fails_closed_with_its_own_kind(
    plan: EvaluationPlan, kind: EvalErrorKind
) -> None:
    with pytest.raises(EvalError) as caught:
        evaluate(VIOLATIONS[kind](plan))
    assert caught.value.kind is kind


def test_every_kind_is_covered() -> None:
    # CountOverflow cannot come from a plan (it needs 2^64 rows); it is raised by pooling below
    assert set(VIOLATIONS) | {EvalErrorKind.CountOverflow} == set(EvalErrorKind)


def test_the_pieces_validate_their_own_inputs(plan: EvaluationPlan) -> None:
    leaky = VIOLATIONS[EvalErrorKind.GroupLeakage](plan).tuning_folds[0]
    with pytest.raises(EvalError) as caught:
        fit_and_count(plan.dataset, leaky, plan.candidates)
    assert caught.value.kind is EvalErrorKind.GroupLeakage
    partial = plan.tuning_folds[0]  # valid on its own rows, but not a held-out partition
    fit_and_count(plan.dataset, partial, plan.candidates[:1])
    with pytest.raises(EvalError) as caught:
        score_held_out(plan.dataset, partial, plan.candidates[0])
    assert caught.value.kind is EvalErrorKind.InvalidFold
    with pytest.raises(EvalError) as caught:
        fit_and_count(plan.dataset, partial, [plan.candidates[0]] * 2)
    assert caught.value.kind is EvalErrorKind.DuplicateCandidate


def config(**changes: float) -> ModelConfig:
    settings = dict(
        mask=1, components=1, relevance=1.0, variance_floor=1.0,
        absolute_threshold=0.0, margin_threshold=0.0,
    )  # fmt: skip
    return ModelConfig(**{**settings, **changes})


def count_table(*rows: tuple[ModelConfig, tuple[int, ...]]) -> pd.DataFrame:
    """A hand-made count table; each row is a config and its seven counts in field order."""
    return pd.DataFrame(
        [{**dataclasses.asdict(c), **dict(zip(COUNT_COLUMNS, n, strict=True))} for c, n in rows]
    )


SMALL, LARGE = config(), config(mask=2)


@pytest.mark.parametrize(
    ("small_counts", "large_counts"),
    [
        # balanced open-set rate: 0.70 beats 0.65
        ((10, 7, 0, 3, 10, 6, 4), (10, 8, 0, 2, 10, 6, 4)),
        # equal balanced rate 3/5 exactly (floats would say 0.6 < 0.6000000000000001):
        # higher known identification wins
        ((5, 2, 0, 3, 5, 4, 1), (5, 3, 0, 2, 5, 3, 2)),
        # equal rates: fewer known misidentifications win
        ((10, 8, 2, 0, 10, 6, 4), (10, 8, 0, 2, 10, 6, 4)),
    ],
    ids=["balanced", "known_identification", "misidentifications"],
)
def test_selection_levels_decide_before_the_configuration(
    small_counts: tuple[int, ...], large_counts: tuple[int, ...]
) -> None:
    assert select(count_table((SMALL, small_counts), (LARGE, large_counts))) == LARGE
    assert select(count_table((SMALL, large_counts), (LARGE, small_counts))) == SMALL


def test_unknown_rejection_level_agrees_with_the_exact_rule() -> None:
    # equal balanced rate and equal known identification force equal unknown rejection, so the
    # third level can never decide; the configuration breaks the tie
    counts = (4, 2, 1, 1, 8, 6, 2)
    assert select(count_table((LARGE, counts), (SMALL, counts))) == SMALL


@pytest.mark.parametrize("field", CONFIG_COLUMNS)
def test_configuration_tie_break_is_lexicographic(field: str) -> None:
    counts = (4, 2, 1, 1, 4, 3, 1)
    smaller = config()
    larger = dataclasses.replace(smaller, **{field: getattr(smaller, field) + 1})
    # every later field of the larger candidate is smaller, so only the order of fields decides
    later = CONFIG_COLUMNS[CONFIG_COLUMNS.index(field) + 1 :]
    smaller = dataclasses.replace(smaller, **{name: getattr(smaller, name) + 5 for name in later})
    assert select(count_table((larger, counts), (smaller, counts))) == smaller


def test_negative_zero_is_zero_in_tables() -> None:
    counts = (1, 1, 0, 0, 1, 1, 0)
    table = count_table((config(margin_threshold=1.0), counts), (config(), counts))
    table.loc[0, "margin_threshold"] = -0.0
    with pytest.raises(EvalError) as caught:
        select(table)
    assert caught.value.kind is EvalErrorKind.DuplicateCandidate
    assert select(count_table((config(margin_threshold=-1.0), counts), (config(), counts))) == (
        config(margin_threshold=-1.0)
    )


def test_pooling_sums_and_fails_closed() -> None:
    first = count_table((SMALL, (2, 1, 1, 0, 1, 1, 0)), (LARGE, (2, 0, 0, 2, 1, 0, 1)))
    second = count_table((LARGE, (1, 1, 0, 0, 3, 3, 0)), (SMALL, (1, 0, 0, 1, 3, 2, 1)))
    pooled = pool_counts([first, second])
    assert pooled[list(COUNT_COLUMNS)].to_numpy().tolist() == [
        [3, 1, 1, 1, 4, 3, 1],
        [3, 1, 0, 2, 4, 3, 1],
    ]
    assert (pooled.dtypes[list(COUNT_COLUMNS)] == np.uint64).all()
    huge = count_table((SMALL, (MAX_COUNT, MAX_COUNT, 0, 0, 0, 0, 0)))
    assert pool_counts([huge])["known_total"].tolist() == [MAX_COUNT]
    with pytest.raises(EvalError) as caught:
        pool_counts([huge, count_table((SMALL, (1, 1, 0, 0, 0, 0, 0)))])
    assert caught.value.kind is EvalErrorKind.CountOverflow
    with pytest.raises(ValueError, match="different candidates"):
        pool_counts([first, count_table((SMALL, (1, 0, 0, 1, 3, 2, 1)))])
    with pytest.raises(EvalError) as caught:
        pool_counts([count_table((SMALL, (1, 0, 0, 1, 0, 0, 0)), (SMALL, (1, 0, 0, 1, 0, 0, 0)))])
    assert caught.value.kind is EvalErrorKind.DuplicateCandidate
    with pytest.raises(EvalError) as caught:
        pool_counts([])
    assert caught.value.kind is EvalErrorKind.EmptyTuningFolds
    with pytest.raises(ValueError, match="lacks columns"):
        select(first.drop(columns="known_rejected"))


def unmeasured_dataset(speaker: str, names: list[str]) -> OpenSetDataset:
    """The plan's rows with ``names`` unmeasured (NaN) in every row of ``speaker``."""
    frame = speaker_frame()
    frame.loc[frame["speaker_id"] == speaker, names] = np.nan
    return OpenSetDataset.from_frame(frame)


VOICE = candidate_grid({**GRID, "feature_masks": {"voice": list(FEATURE_NAMES[:8])}})
SPECTRUM = candidate_grid({**GRID, "feature_masks": {"mfcc": list(FEATURE_NAMES[17:21])}})


def test_features_a_candidate_does_not_use_change_nothing(plan: EvaluationPlan) -> None:
    dataset = unmeasured_dataset("spk3", ["f0_median_hz", "hnr_db"])
    fold = plan.held_out_fold
    pd.testing.assert_frame_equal(
        fit_and_count(dataset, fold, SPECTRUM), fit_and_count(plan.dataset, fold, SPECTRUM)
    )


def test_unmeasured_rows_are_not_fitted_and_are_declared_unknown(plan: EvaluationPlan) -> None:
    """A speaker whose F0 is unmeasured stays in the fold: a candidate using F0 fits on the
    other training rows (exactly as if the speaker's rows were not there) and declares each
    of its test rows unknown; every candidate is counted on the same test rows."""
    dataset = unmeasured_dataset("spk3", ["f0_median_hz", "hnr_db"])
    fold = plan.held_out_fold
    assert fold.pseudo_unknown_speaker != "spk3"
    spk3 = set(np.flatnonzero(np.array(dataset.speaker_ids) == "spk3").tolist())
    without = OpenSetFold(
        fold.pseudo_unknown_speaker,
        *([i for i in getattr(fold, name) if i not in spk3] for name in FOLD_SETS),
    )
    unmeasured_known = len(spk3 & set(fold.known_test))
    assert unmeasured_known and not spk3 & set(fold.unknown_test)
    expected = fit_and_count(plan.dataset, without, VOICE)
    expected["known_total"] += np.uint64(unmeasured_known)
    expected["known_rejected"] += np.uint64(unmeasured_known)
    pd.testing.assert_frame_equal(fit_and_count(dataset, fold, VOICE), expected)
    held_out = score_held_out(dataset, fold, VOICE[0])
    assert held_out.known_total == len(fold.known_test)
    assert held_out.known_rejected >= unmeasured_known


@pytest.mark.parametrize("measured_rows", [0, 1])
def test_a_candidate_that_measures_too_few_training_rows_declares_everything_unknown(
    plan: EvaluationPlan, measured_rows: int
) -> None:
    fold = plan.held_out_fold
    frame = speaker_frame()
    kept = frame.loc[sorted(fold.train)[:measured_rows], "pause_fraction"]
    frame["pause_fraction"] = np.nan
    frame.loc[kept.index, "pause_fraction"] = kept
    dataset = OpenSetDataset.from_frame(frame)
    table = fit_and_count(dataset, fold, [config(mask=1 << FEATURE_NAMES.index("pause_fraction"))])
    known, unknown = len(fold.known_test), len(fold.unknown_test)
    assert table[list(COUNT_COLUMNS)].to_numpy().tolist() == [
        [known, 0, 0, known, unknown, unknown, 0]
    ]


def test_count_tables_survive_parquet(plan: EvaluationPlan, tmp_path: Path) -> None:
    table = fit_and_count(plan.dataset, plan.tuning_folds[0], plan.candidates)
    path = tmp_path / "counts.parquet"
    write_parquet(table, path, COUNTS_SCHEMA, sort_by=CONFIG_COLUMNS)
    again = read_parquet(path)
    pd.testing.assert_frame_equal(again, table)
    assert select(pool_counts([again])) == select(table)


def test_candidate_grid_is_the_sorted_product() -> None:
    grid = candidate_grid(GRID)
    assert len(grid) == 2 * 2 * 1 * 1 * 3 * 2
    assert grid == sorted(grid)
    assert {c.mask for c in grid} == {2**24 - 1, 2**8 - 1}


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        ({"feature_masks": {"bad": ["no_such_feature"]}}, EvalErrorKind.InvalidCandidate),
        ({"feature_masks": {"none": []}}, EvalErrorKind.InvalidCandidate),
        ({"relevance": [0.0]}, EvalErrorKind.InvalidCandidate),
        ({"margin_threshold": [float("nan")]}, EvalErrorKind.InvalidCandidate),
        ({"components": []}, EvalErrorKind.EmptyCandidates),
        ({"feature_masks": {}}, EvalErrorKind.EmptyCandidates),
        ({"absolute_threshold": [0.0, 0.0]}, EvalErrorKind.DuplicateCandidate),
        (
            {"feature_masks": {"a": ["hnr_db", "cpps_db"], "b": ["cpps_db", "hnr_db"]}},
            EvalErrorKind.DuplicateCandidate,
        ),
    ],
)
def test_candidate_grid_fails_closed(change: dict[str, object], kind: EvalErrorKind) -> None:
    with pytest.raises(EvalError) as caught:
        candidate_grid({**GRID, **change})
    assert caught.value.kind is kind


@pytest.mark.parametrize(
    "grid",
    [
        {k: v for k, v in GRID.items() if k != "relevance"},
        {**GRID, "typo": [1]},
        {**GRID, "components": 2},
        {**GRID, "feature_masks": ["hnr_db"]},
    ],
)
def test_malformed_grids_raise_value_error(grid: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        candidate_grid(grid)
