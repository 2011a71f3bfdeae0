"""Leakage-safe open-set folds: building them deterministically and checking any fold.

A fold makes one speaker the pseudo-unknown speaker and splits the remaining speakers' rows into
training and known-test rows. Two things would make the reported rates optimistic, and both are
ruled out here: a recording group (``group_id``) seen on both sides of a split, and an
"unknown" speaker the models were trained on. Folds are built only by sorting and partitioning,
never with random numbers, so the same feature table always yields the same fold files. When a
dataset's shape allows no fold, :func:`build_nested_folds` says why, with the counts, instead of
failing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pathbench_flow.openset.types import EvalError, EvalErrorKind, OpenSetDataset, OpenSetFold

FOLD_SETS = ("train", "known_test", "unknown_test")
FOLD_KEYS = ("pseudo_unknown_speaker", *FOLD_SETS)

MIN_SPEAKERS = 3
"""Speakers a nested open-set evaluation needs: one held out as the unknown speaker and, inside
the training rows, one more held out for tuning beside one that stays enrolled."""


def _rows_of(dataset: OpenSetDataset, fold: OpenSetFold) -> dict[str, np.ndarray]:
    """The fold's three index sets as arrays, after checking they are nonempty and in range."""
    parts = {}
    for name in FOLD_SETS:
        indices = getattr(fold, name)
        if not indices:
            raise EvalError(EvalErrorKind.InvalidFold, f"{name} is empty")
        if not all(0 <= index < dataset.n_rows for index in indices):
            raise EvalError(
                EvalErrorKind.InvalidFold, f"{name} has an index outside 0..{dataset.n_rows - 1}"
            )
        parts[name] = np.asarray(indices, dtype=np.int64)
    return parts


def validate_fold(
    dataset: OpenSetDataset,
    fold: OpenSetFold,
    universe: Sequence[int] | np.ndarray | None = None,
) -> None:
    """Raise :class:`EvalError` unless ``fold`` is a complete, leakage-free open-set split.

    ``universe`` is the set of rows the fold must partition exactly: every active row for a
    held-out fold, the held-out training rows for a tuning fold. ``None`` checks the fold against
    its own rows only (all rules except completeness), for callers that see a single fold.

    Rules, in the order checked: index sets nonempty, in range and pairwise disjoint without
    repeats (``InvalidFold``); no row outside the universe (``FoldOutsideOuterTraining``) and none
    of it left out (``InvalidFold``); no group on both the training and the test side
    (``GroupLeakage``); the pseudo-unknown speaker is one of the fold's speakers
    (``InvalidFold``) with no training or known-test row, every unknown-test row belongs to a
    speaker without training rows and every known-test row to one with training rows
    (``OpenSetViolation``).
    """
    parts = _rows_of(dataset, fold)
    rows = np.concatenate(list(parts.values()))
    if np.unique(rows).size != rows.size:
        raise EvalError(
            EvalErrorKind.InvalidFold, "an index repeats within or across the fold's sets"
        )
    if universe is not None:
        universe_rows = np.unique(np.asarray(universe, dtype=np.int64))
        outside = np.setdiff1d(rows, universe_rows)
        if outside.size:
            raise EvalError(
                EvalErrorKind.FoldOutsideOuterTraining,
                f"rows {outside[:5].tolist()} are not in the held-out training partition",
            )
        left_out = np.setdiff1d(universe_rows, rows)
        if left_out.size:
            raise EvalError(
                EvalErrorKind.InvalidFold, f"rows {left_out[:5].tolist()} are in no set"
            )
    train = parts["train"]
    known, unknown = parts["known_test"], parts["unknown_test"]
    groups = dataset.group_codes
    leaked = np.intersect1d(groups[train], groups[np.concatenate([known, unknown])])
    if leaked.size:
        names = sorted({dataset.group_ids[i] for i in train if groups[i] in leaked})
        raise EvalError(EvalErrorKind.GroupLeakage, f"groups {names[:5]} are on both sides")
    _check_open_set(dataset, fold.pseudo_unknown_speaker, train, known, unknown)


def _check_open_set(
    dataset: OpenSetDataset,
    pseudo_unknown: str,
    train: np.ndarray,
    known: np.ndarray,
    unknown: np.ndarray,
) -> None:
    """The speaker rules of :func:`validate_fold` (groups and indices already checked)."""
    codes = dataset.speaker_codes
    fold_speakers = {
        dataset.speakers[c] for c in np.unique(codes[np.concatenate([train, known, unknown])])
    }
    if pseudo_unknown not in fold_speakers:
        raise EvalError(
            EvalErrorKind.InvalidFold, f"pseudo-unknown speaker {pseudo_unknown!r} has no row"
        )
    enrolled = np.unique(codes[train])
    unknown_code = dataset.speakers.index(pseudo_unknown)
    if unknown_code in enrolled:
        raise EvalError(
            EvalErrorKind.OpenSetViolation, f"pseudo-unknown {pseudo_unknown!r} has training rows"
        )
    if unknown_code in codes[known]:
        raise EvalError(
            EvalErrorKind.OpenSetViolation, f"pseudo-unknown {pseudo_unknown!r} is known-test"
        )
    if np.isin(codes[unknown], enrolled).any():
        raise EvalError(
            EvalErrorKind.OpenSetViolation, "an unknown-test row's speaker has training rows"
        )
    if not np.isin(codes[known], enrolled).all():
        raise EvalError(
            EvalErrorKind.OpenSetViolation, "a known-test row's speaker has no training rows"
        )


def _deal_known_groups(dataset: OpenSetDataset, rest: np.ndarray, parts: int) -> list[list[int]]:
    """Deal the groups of ``rest`` (rows outside the unknown speaker's groups) into ``parts``.

    Groups go in key order to parts in rotation; a group may join a part only if every speaker
    in it still has training rows when that part is the known-test side. A group that fits no
    part stays on the training side of every fold (for instance a speaker's only group).
    """
    codes, groups = dataset.speaker_codes[rest], dataset.group_codes[rest]
    n_speakers = len(dataset.speakers)
    remaining = np.tile(np.bincount(codes, minlength=n_speakers), (parts, 1))
    dealt: list[list[int]] = [[] for _ in range(parts)]
    for group in np.unique(groups):
        in_group = np.bincount(codes[groups == group], minlength=n_speakers)
        for turn in range(parts):
            part = (sum(map(len, dealt)) + turn) % parts
            if np.all(remaining[part] > in_group, where=in_group > 0):
                dealt[part].append(int(group))
                remaining[part] -= in_group
                break
    return dealt


def _folds_within(
    dataset: OpenSetDataset, universe: np.ndarray, known_folds: int
) -> list[OpenSetFold]:
    """Every fold of ``universe``: speakers in sorted order, then known-test parts in order.

    The unknown speaker's groups go wholly to the test side; other speakers' rows in them are
    known-test rows if that speaker keeps training rows, else unknown-test rows (a speaker seen
    only beside the unknown speaker is unseen too). The other groups are dealt into
    ``max(known_folds, 2)`` parts and the first ``known_folds`` parts each give one fold, so
    ``known_folds = 1`` tests on about half of the known speakers' groups and ``k >= 2`` is
    ordinary k-fold cross-validation over groups.
    """
    codes, groups = dataset.speaker_codes, dataset.group_codes
    folds = []
    for speaker in np.unique(codes[universe]):
        unknown_groups = np.unique(groups[universe][codes[universe] == speaker])
        beside_unknown = np.isin(groups[universe], unknown_groups)
        test_side, rest = universe[beside_unknown], universe[~beside_unknown]
        for part in _deal_known_groups(dataset, rest, max(known_folds, 2))[:known_folds]:
            if not part:
                continue
            in_part = np.isin(groups[rest], part)
            train = rest[~in_part]
            enrolled = np.isin(codes[test_side], codes[train])
            folds.append(
                OpenSetFold(
                    pseudo_unknown_speaker=dataset.speakers[speaker],
                    train=train,
                    known_test=np.sort(np.concatenate([rest[in_part], test_side[enrolled]])),
                    unknown_test=test_side[~enrolled],
                )
            )
    return folds


def _evenly_spaced(folds: list[OpenSetFold], cap: int | None) -> tuple[OpenSetFold, ...]:
    """Keep ``cap`` folds at positions ``i * m // cap`` of the ``m`` in order.

    Spreading the kept folds over the sorted list lets a capped run still cycle through
    speakers from the first to the last, instead of testing only the alphabetically first.
    """
    if cap is None or cap >= len(folds):
        return tuple(folds)
    if cap < 1:
        raise ValueError("a fold cap must be at least 1")
    return tuple(folds[i * len(folds) // cap] for i in range(cap))


def _check_known_folds(known_folds: int) -> None:
    if isinstance(known_folds, bool) or not isinstance(known_folds, int) or known_folds < 1:
        raise ValueError("known_folds must be a positive integer")


def build_folds(
    dataset: OpenSetDataset, known_folds: int, max_outer_folds: int | None = None
) -> tuple[OpenSetFold, ...]:
    """The outer (held-out) folds over every active row.

    Each speaker in sorted order is the pseudo-unknown speaker of up to ``known_folds`` folds;
    a speaker whose removal leaves no group that can be tested gives none, so the result may be
    shorter than ``speakers x known_folds`` or empty. ``max_outer_folds`` keeps evenly spaced
    folds (see :func:`_evenly_spaced`).
    """
    _check_known_folds(known_folds)
    universe = np.arange(dataset.n_rows, dtype=np.int64)
    return _evenly_spaced(_folds_within(dataset, universe, known_folds), max_outer_folds)


@dataclass(frozen=True)
class NestedFolds:
    """The outer folds that can be evaluated, each with its tuning folds, and why others cannot.

    ``reason`` says why there is no outer fold at all (empty when there is one); ``skipped``
    holds ``(pseudo-unknown speaker, reason)`` for each outer fold left out because its
    training rows allow no tuning fold. Reasons are data, not errors: a dataset whose shape
    rules the evaluation out is a finding about the dataset, not a failed run.
    """

    outer: tuple[tuple[OpenSetFold, tuple[OpenSetFold, ...]], ...]
    skipped: tuple[tuple[str, str], ...]
    reason: str


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _untestable_reason(dataset: OpenSetDataset, rows: Sequence[int] | np.ndarray) -> str:
    """Why no fold can be built within ``rows``, with the counts that show it.

    A known speaker's test rows need a recording group of their own, apart from the groups of
    its training rows, so a fold needs some speaker with rows in two or more groups besides
    the one held out.
    """
    rows = np.asarray(rows, dtype=np.int64)
    codes, groups = dataset.speaker_codes[rows], dataset.group_codes[rows]
    speakers = np.unique(codes)
    counts = (
        f"{_plural(speakers.size, 'speaker')}, {_plural(np.unique(groups).size, 'recording group')}"
        f", {_plural(rows.size, 'utterance')}"
    )
    if speakers.size < 2:
        return f"only one speaker is left ({counts}), so none can be held out beside another"
    several = [dataset.speakers[s] for s in speakers if np.unique(groups[codes == s]).size > 1]
    if not several:
        return (
            f"every speaker's utterances come from one recording group ({counts}), so no fold "
            "can keep groups apart and hold a speaker out: a known speaker's test utterances "
            "need a recording group apart from its training utterances"
        )
    return (
        f"no speaker can be held out so that another keeps one recording group for testing "
        f"and another for training ({counts}; only {len(several)} of them with utterances in "
        f"two or more groups: {', '.join(several[:5])}{', ...' if len(several) > 5 else ''})"
    )


def build_nested_folds(
    dataset: OpenSetDataset,
    known_folds: int,
    max_outer_folds: int | None = None,
    max_tuning_folds: int | None = None,
) -> NestedFolds:
    """The outer folds of :func:`build_folds` with their tuning folds, or why there are none.

    Caps apply as in :func:`build_folds` and :func:`build_tuning_folds`; an outer fold kept by
    the cap whose training rows allow no tuning fold is skipped with its reason (it cannot
    select a configuration), so fewer than ``max_outer_folds`` folds may remain.
    """
    _check_known_folds(known_folds)
    if len(dataset.speakers) < MIN_SPEAKERS:
        names = ", ".join(dataset.speakers)
        return NestedFolds(
            (),
            (),
            f"only {_plural(len(dataset.speakers), 'speaker')} ({names}) with a measured "
            f"utterance, and open-set evaluation needs {MIN_SPEAKERS}: one held out as "
            "the unknown speaker and, inside the training rows, one more held out for tuning "
            "beside an enrolled one",
        )
    outer = build_folds(dataset, known_folds, max_outer_folds)
    if not outer:
        return NestedFolds((), (), _untestable_reason(dataset, np.arange(dataset.n_rows)))
    kept, untuned = [], []
    for fold in outer:
        tuning = build_tuning_folds(dataset, fold, known_folds, max_tuning_folds)
        if tuning:
            kept.append((fold, tuning))
        else:
            untuned.append((fold.pseudo_unknown_speaker, _untestable_reason(dataset, fold.train)))
    skipped = [
        (speaker, f"its training rows allow no tuning fold: in them, {why}")
        for speaker, why in untuned
    ]
    reason = ""
    if not kept:
        whys = list(dict.fromkeys(why for _, why in untuned))
        more = f"; and {len(whys) - 3} other reasons" if len(whys) > 3 else ""
        reason = (
            f"none of the {_plural(len(outer), 'outer fold')} can select a configuration, "
            "because no tuning fold can be built inside its training rows: in them, "
            + "; or ".join(whys[:3])
            + more
        )
    return NestedFolds(tuple(kept), tuple(skipped), reason)


def build_tuning_folds(
    dataset: OpenSetDataset,
    outer_fold: OpenSetFold,
    known_folds: int,
    max_tuning_folds: int | None = None,
) -> tuple[OpenSetFold, ...]:
    """The tuning folds inside ``outer_fold``'s training rows, built as :func:`build_folds`.

    The outer fold is validated first: tuning folds drawn from a leaking outer fold would leak.
    """
    _check_known_folds(known_folds)
    validate_fold(dataset, outer_fold, universe=np.arange(dataset.n_rows))
    universe = np.sort(np.asarray(outer_fold.train, dtype=np.int64))
    return _evenly_spaced(_folds_within(dataset, universe, known_folds), max_tuning_folds)


def fold_to_dict(fold: OpenSetFold) -> dict[str, Any]:
    """A JSON-ready fold: the speaker and the three index sets as sorted lists of ints."""
    canonical = fold.canonical()
    return {
        "pseudo_unknown_speaker": canonical.pseudo_unknown_speaker,
        "train": list(canonical.train),
        "known_test": list(canonical.known_test),
        "unknown_test": list(canonical.unknown_test),
    }


def fold_from_dict(data: Mapping[str, Any]) -> OpenSetFold:
    """Read a fold written by :func:`fold_to_dict`; other keys or non-integer indices fail.

    The result is not validated against a dataset here; the evaluation does that.
    """
    if set(data) != set(FOLD_KEYS):
        raise EvalError(EvalErrorKind.InvalidFold, f"fold keys must be exactly {FOLD_KEYS}")
    for name in FOLD_SETS:
        if not isinstance(data[name], list):
            raise EvalError(EvalErrorKind.InvalidFold, f"{name} must be a list")
    return OpenSetFold(**{name: data[name] for name in FOLD_KEYS})
