"""Fold building and validation: every built fold is valid, every corruption is caught."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from pathbench_flow.openset import (
    EvalError,
    EvalErrorKind,
    OpenSetDataset,
    OpenSetFold,
    build_folds,
    build_tuning_folds,
    fold_from_dict,
    fold_to_dict,
    validate_fold,
)
from pathbench_flow.openset.folds import FOLD_SETS, MIN_SPEAKERS, build_nested_folds


def make_dataset(rows: list[tuple[int, int]]) -> OpenSetDataset:
    """Rows given as (speaker, group); features do not matter to folds, so they are zero."""
    return OpenSetDataset(
        utt_ids=tuple(f"u{i:03d}" for i in range(len(rows))),
        speaker_ids=tuple(f"s{speaker}" for speaker, _ in rows),
        group_ids=tuple(f"g{group}" for _, group in rows),
        features=np.zeros((len(rows), 24)),
    )


def own_groups(speakers: int, groups: int, rows: int) -> OpenSetDataset:
    """Each speaker has its own ``groups`` groups of ``rows`` rows."""
    return make_dataset(
        [(s, s * groups + g) for s in range(speakers) for g in range(groups) for _ in range(rows)]
    )


@st.composite
def datasets(draw: st.DrawFn) -> OpenSetDataset:
    """Small datasets: speakers with own groups of varying size, plus rows in shared groups."""
    n_speakers = draw(st.integers(2, 5))
    rows: list[tuple[int, int]] = []
    n_groups = 0
    for speaker in range(n_speakers):
        for size in draw(st.lists(st.integers(1, 2), min_size=1, max_size=6)):
            rows += [(speaker, n_groups)] * size
            n_groups += 1
    shared = st.tuples(st.integers(0, n_speakers - 1), st.integers(0, n_groups - 1))
    rows += draw(st.lists(shared, max_size=6))
    return make_dataset(rows)


def all_folds(
    dataset: OpenSetDataset, known_folds: int
) -> list[tuple[OpenSetFold, np.ndarray, OpenSetFold | None]]:
    """Every outer and tuning fold with its universe and (for tuning folds) its outer fold."""
    everything = np.arange(dataset.n_rows)
    found: list[tuple[OpenSetFold, np.ndarray, OpenSetFold | None]] = []
    for outer in build_folds(dataset, known_folds):
        found.append((outer, everything, None))
        for tuning in build_tuning_folds(dataset, outer, known_folds):
            found.append((tuning, np.asarray(outer.train), outer))
    return found


FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(dataset=datasets(), known_folds=st.integers(1, 3))
def test_every_built_fold_is_valid(dataset: OpenSetDataset, known_folds: int) -> None:
    folds = all_folds(dataset, known_folds)
    event(f"{min(len(folds), 10)} folds")
    for fold, universe, _ in folds:
        validate_fold(dataset, fold, universe)
        assert fold == fold.canonical()


def expected_after_move(
    dataset: OpenSetDataset, fold: OpenSetFold, source: str, target: str, row: int
) -> EvalErrorKind | None:
    """The error a valid fold must raise after ``row`` moves from ``source`` to ``target``.

    ``None`` marks moves whose outcome may legitimately be valid (a whole group changing side).
    """
    if len(getattr(fold, source)) == 1:
        return EvalErrorKind.InvalidFold  # the source set becomes empty
    side = {"train": "train", "known_test": "test", "unknown_test": "test"}
    if side[source] == side[target]:
        return EvalErrorKind.OpenSetViolation  # an enrolled speaker becomes "unknown" or v.v.
    same_side = [
        i
        for name in FOLD_SETS
        if side[name] == side[source]
        for i in getattr(fold, name)
        if i != row
    ]
    if dataset.group_codes[row] in dataset.group_codes[same_side]:
        return EvalErrorKind.GroupLeakage
    return None


@FAST
@given(dataset=datasets(), known_folds=st.integers(1, 2), data=st.data())
def test_corrupting_one_index_fails_with_the_right_error(
    dataset: OpenSetDataset, known_folds: int, data: st.DataObject
) -> None:
    folds = all_folds(dataset, known_folds)
    tuning = [item for item in folds if item[2] is not None]
    assume(folds)
    use_tuning = bool(tuning) and data.draw(st.booleans())
    event(f"tuning fold: {use_tuning}")
    fold, universe, outer = data.draw(st.sampled_from(tuning if use_tuning else folds))
    name = data.draw(st.sampled_from(FOLD_SETS))
    indices = list(getattr(fold, name))
    position = data.draw(st.integers(0, len(indices) - 1))
    corruptions = ["out_of_range", "negative", "repeat", "drop", "move"]
    if outer is not None:
        corruptions.append("outside_outer_training")
    corruption = data.draw(st.sampled_from(corruptions))
    event(corruption)
    row = indices[position]
    others = [i for n in FOLD_SETS for i in getattr(fold, n) if i != row]
    target = name
    if corruption == "out_of_range":
        indices[position], expected = dataset.n_rows, EvalErrorKind.InvalidFold
    elif corruption == "negative":
        indices[position], expected = -1, EvalErrorKind.InvalidFold
    elif corruption == "repeat":
        indices[position], expected = data.draw(st.sampled_from(others)), EvalErrorKind.InvalidFold
    elif corruption == "drop":
        del indices[position]
        expected = EvalErrorKind.InvalidFold
    elif corruption == "outside_outer_training":
        assert outer is not None
        outer_test = [*outer.known_test, *outer.unknown_test]
        indices[position] = data.draw(st.sampled_from(outer_test))
        expected = EvalErrorKind.FoldOutsideOuterTraining
    else:
        target = data.draw(st.sampled_from([n for n in FOLD_SETS if n != name]))
        move_expectation = expected_after_move(dataset, fold, name, target, row)
        assume(move_expectation is not None)
        expected = move_expectation
        del indices[position]
    parts = {n: list(getattr(fold, n)) for n in FOLD_SETS}
    parts[name] = indices
    if target != name:
        parts[target].append(row)
    corrupted = OpenSetFold(fold.pseudo_unknown_speaker, **parts)
    event(f"expect {expected.name}")
    with pytest.raises(EvalError) as caught:
        validate_fold(dataset, corrupted, universe)
    assert caught.value.kind is expected


def test_folds_are_deterministic_and_cover_each_speaker() -> None:
    dataset = own_groups(speakers=4, groups=4, rows=2)
    folds = build_folds(dataset, known_folds=2)
    assert folds == build_folds(dataset, known_folds=2)
    assert [f.pseudo_unknown_speaker for f in folds] == [
        "s0",
        "s0",
        "s1",
        "s1",
        "s2",
        "s2",
        "s3",
        "s3",
    ]
    first, second = folds[:2]
    # the two known-test sets of one pseudo-unknown speaker are disjoint and cover its rest
    assert not set(first.known_test) & set(second.known_test)
    assert set(first.known_test) | set(second.known_test) == set(range(8, 32))
    assert set(first.unknown_test) == set(range(8))


def test_known_folds_one_tests_about_half_and_keeps_every_speaker_enrolled() -> None:
    dataset = own_groups(speakers=3, groups=4, rows=1)
    (fold, *_) = build_folds(dataset, known_folds=1)
    assert len(fold.known_test) == len(fold.train) == 4
    assert {dataset.speaker_ids[i] for i in fold.train} == {"s1", "s2"}


def test_a_speakers_only_group_is_never_tested() -> None:
    # s2 has a single group: testing it would leave s2 without training rows
    dataset = make_dataset([(0, 0), (1, 1), (1, 2), (2, 3), (2, 3)])
    folds = build_folds(dataset, known_folds=2)
    assert [f.pseudo_unknown_speaker for f in folds] == ["s0", "s0", "s2", "s2"]
    assert all(dataset.speaker_ids[i] != "s2" for f in folds for i in f.known_test)


def test_rows_sharing_a_group_with_the_unknown_speaker_are_test_only() -> None:
    # group 0 holds s0 (the first pseudo-unknown) and one row of s1 and of s2;
    # s1 has training rows elsewhere, s2 does not
    dataset = make_dataset([(0, 0), (1, 0), (2, 0), (1, 1), (1, 2), (3, 3), (3, 4)])
    fold = build_folds(dataset, known_folds=1)[0]
    assert fold.pseudo_unknown_speaker == "s0"
    assert fold.unknown_test == (0, 2)  # s0 itself, and s2 which is never enrolled
    assert 1 in fold.known_test  # s1's row beside s0 is scored as a known speaker
    validate_fold(dataset, fold, np.arange(dataset.n_rows))


def test_caps_keep_evenly_spaced_folds() -> None:
    dataset = own_groups(speakers=5, groups=4, rows=1)
    everything = build_folds(dataset, known_folds=2)
    assert len(everything) == 10
    capped = build_folds(dataset, known_folds=2, max_outer_folds=3)
    assert capped == (everything[0], everything[3], everything[6])
    assert build_folds(dataset, known_folds=2, max_outer_folds=50) == everything
    all_tuning = build_tuning_folds(dataset, everything[0], known_folds=1)
    assert len(all_tuning) == 4
    capped_tuning = build_tuning_folds(dataset, everything[0], 1, max_tuning_folds=2)
    assert capped_tuning == (all_tuning[0], all_tuning[2])
    with pytest.raises(ValueError):
        build_folds(dataset, known_folds=2, max_outer_folds=0)
    with pytest.raises(ValueError):
        build_folds(dataset, known_folds=0)


def test_tuning_folds_need_a_valid_outer_fold() -> None:
    dataset = own_groups(speakers=3, groups=2, rows=2)
    outer = build_folds(dataset, known_folds=1)[0]
    leaky = OpenSetFold(
        outer.pseudo_unknown_speaker,
        outer.train[1:],
        (*outer.known_test, outer.train[0]),
        outer.unknown_test,
    )
    with pytest.raises(EvalError) as caught:
        build_tuning_folds(dataset, leaky, known_folds=1)
    assert caught.value.kind is EvalErrorKind.GroupLeakage


def test_json_round_trip_writes_sorted_plain_lists() -> None:
    fold = OpenSetFold("s1", (5, 3), (4,), (1, 0))
    text = json.dumps(fold_to_dict(fold))
    assert json.loads(text) == {
        "pseudo_unknown_speaker": "s1",
        "train": [3, 5],
        "known_test": [4],
        "unknown_test": [0, 1],
    }
    assert fold_from_dict(json.loads(text)) == fold.canonical()


@pytest.mark.parametrize(
    "change",
    [{"extra": 1}, {"train": [1.0]}, {"train": [True]}, {"train": "3"}, {"known_test": 4}],
)
def test_fold_from_dict_refuses_malformed_input(change: dict[str, object]) -> None:
    data = {**fold_to_dict(OpenSetFold("s1", (3,), (4,), (0,))), **change}
    with pytest.raises(EvalError) as caught:
        fold_from_dict(data)
    assert caught.value.kind is EvalErrorKind.InvalidFold


def test_validation_without_universe_checks_everything_but_completeness() -> None:
    dataset = own_groups(speakers=3, groups=2, rows=1)
    fold = OpenSetFold("s0", (2, 4), (3,), (0,))  # row 1 (s0) and row 5 (s2) are left out
    validate_fold(dataset, fold)
    with pytest.raises(EvalError) as caught:
        validate_fold(dataset, fold, np.arange(dataset.n_rows))
    assert caught.value.kind is EvalErrorKind.InvalidFold


@FAST
@given(dataset=datasets(), known_folds=st.integers(1, 3), cap=st.none() | st.integers(1, 4))
def test_nested_folds_keep_the_tunable_outer_folds_and_say_why_others_go(
    dataset: OpenSetDataset, known_folds: int, cap: int | None
) -> None:
    nested = build_nested_folds(dataset, known_folds, cap, 2)
    if len(dataset.speakers) < MIN_SPEAKERS:
        assert not nested.outer and not nested.skipped
        assert nested.reason.startswith(f"only {len(dataset.speakers)} speaker")
        return
    outer = build_folds(dataset, known_folds, cap)
    tuned = [(f, build_tuning_folds(dataset, f, known_folds, 2)) for f in outer]
    assert nested.outer == tuple((f, t) for f, t in tuned if t)
    assert [s for s, _ in nested.skipped] == [f.pseudo_unknown_speaker for f, t in tuned if not t]
    assert all(
        why.startswith("its training rows allow no tuning fold") for _, why in nested.skipped
    )
    assert (nested.reason == "") == bool(nested.outer)
    event("applicable" if nested.outer else nested.reason.split(" ")[0])


def test_one_recording_group_per_speaker_allows_no_fold_and_says_so() -> None:
    nested = build_nested_folds(own_groups(speakers=4, groups=1, rows=3), known_folds=2)
    assert nested.outer == nested.skipped == ()
    assert nested.reason.startswith(
        "every speaker's utterances come from one recording group (4 speakers, 4 recording "
        "groups, 12 utterances), so no fold can keep groups apart and hold a speaker out"
    )


def test_two_speakers_are_too_few_and_are_named() -> None:
    nested = build_nested_folds(own_groups(speakers=2, groups=3, rows=2), known_folds=2)
    assert nested.outer == () and nested.reason.startswith("only 2 speakers (s0, s1) with a")


def test_outer_folds_without_tuning_folds_are_skipped_with_the_reason() -> None:
    # two groups per speaker: testing one in the outer fold leaves one to train on, none to tune
    nested = build_nested_folds(own_groups(speakers=3, groups=2, rows=2), known_folds=2)
    assert nested.outer == ()
    assert [s for s, _ in nested.skipped] == ["s0", "s0", "s1", "s1", "s2", "s2"]
    assert nested.reason.startswith(
        "none of the 6 outer folds can select a configuration, because no tuning fold can be "
        "built inside its training rows: in them, every speaker's utterances come from one "
        "recording group (2 speakers, 2 recording groups, 4 utterances)"
    )
    # a speaker with a third group makes its own folds tunable; the others stay skipped
    mixed = make_dataset([(0, 0), (0, 1), (1, 2), (1, 3), (1, 4), (2, 5), (2, 6), (2, 7)])
    nested = build_nested_folds(mixed, known_folds=2)
    assert [f.pseudo_unknown_speaker for f, _ in nested.outer] == ["s0", "s0", "s1", "s2"]
    assert [s for s, _ in nested.skipped] == ["s1", "s2"] and nested.reason == ""
