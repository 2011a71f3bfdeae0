"""A scoring failure reads the same whichever layer caught it: inside a measure
(``guarded``), around an evaluator's ``evaluate`` (``contained``), around a whole batch
(``evaluate_all``), or inside a model evaluator's chunk."""

from __future__ import annotations

from collections.abc import Sequence

from pathbench_flow.common.status import NoScore
from pathbench_flow.evaluators.base import (
    Evaluator,
    Item,
    Score,
    contained,
    evaluate_all,
    failure_score,
    guarded,
)

ITEMS = [Item("u0", "a.wav"), Item("u1", "b.wav")]


def _raises(error: Exception):
    def call(*_args: object) -> Score:
        raise error

    return call


class _BatchRaises(Evaluator):
    name = "batch_raises"
    category = "signal"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def evaluate_batch(self, items: Sequence[Item]) -> list[Score]:
        raise self.error


class _OneShort(Evaluator):
    name = "one_short"
    category = "signal"

    def evaluate_batch(self, items: Sequence[Item]) -> list[Score]:
        return [Score(1.0)]


def test_an_exception_is_an_error_row_naming_its_type_and_message() -> None:
    error = ValueError("wav2vec2 expects 16000 Hz audio")
    row = Score(None, "error", "ValueError: wav2vec2 expects 16000 Hz audio")
    assert failure_score(error) == row
    assert guarded(_raises(error)) == row
    assert contained(_raises(error), ITEMS[0]) == row
    assert evaluate_all(_BatchRaises(error), ITEMS) == [row, row]


def test_a_no_score_keeps_its_own_status_and_reason() -> None:
    missing = NoScore("too_short", "120 samples; at least 400")
    row = Score(None, "too_short", "120 samples; at least 400")
    assert failure_score(missing) == row
    assert guarded(_raises(missing)) == row
    assert contained(_raises(missing)) == row
    assert evaluate_all(_BatchRaises(missing), ITEMS) == [row, row]


def test_contained_passes_arguments_and_the_returned_score_through() -> None:
    assert contained(lambda item: Score(2.0, "ok", item.utt_id), ITEMS[1]) == Score(2.0, "ok", "u1")


def test_a_batch_with_the_wrong_number_of_scores_fails_every_item() -> None:
    row = Score(None, "error", "1 scores for 2 items")
    assert evaluate_all(_OneShort(), ITEMS) == [row, row]
