"""Value types, their construction-time invariants and the frozen feature schema."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from pathbench_flow.openset import (
    FEATURE_NAMES,
    SCHEMA_ID,
    AggregateMetrics,
    EvalError,
    EvalErrorKind,
    ModelConfig,
    OpenSetDataset,
    OpenSetFold,
)
from pathbench_flow.openset.types import MAX_COUNT
from pathbench_flow.schemas.openset import FULL_MASK, mask_columns, mask_from_names, mask_text

VALID = {
    "mask": 0b101,
    "components": 2,
    "relevance": 16.0,
    "variance_floor": 1e-3,
    "absolute_threshold": 0.5,
    "margin_threshold": 1.0,
}


def test_schema_is_the_frozen_24_feature_list() -> None:
    assert SCHEMA_ID == "pathbench-acoustic-24/1"
    assert len(FEATURE_NAMES) == len(set(FEATURE_NAMES)) == 24
    assert FEATURE_NAMES[:3] == ("f0_median_hz", "f0_std_st", "f0_range_st")
    assert FEATURE_NAMES[9:13] == (
        "spectral_tilt_db_oct",
        "f1_median_hz",
        "f2_median_hz",
        "f3_median_hz",
    )
    assert FEATURE_NAMES[-3:] == ("wada_snr_db", "speech_rate_syll_s", "pause_fraction")


def test_mask_bit_i_selects_feature_i() -> None:
    assert mask_from_names(["f0_median_hz"]) == 1
    assert mask_from_names(["pause_fraction", "f0_std_st"]) == (1 << 23) | (1 << 1)
    assert mask_columns(mask_from_names(["hnr_db", "cpps_db"])) == (6, 7)
    assert mask_from_names(FEATURE_NAMES) == FULL_MASK == 2**24 - 1


def test_a_mask_reads_as_its_feature_names_in_schema_order() -> None:
    assert mask_text(mask_from_names(["pause_fraction", "f0_std_st"])) == (
        "f0_std_st+pause_fraction"
    )
    assert mask_text(FULL_MASK) == "+".join(FEATURE_NAMES)


@pytest.mark.parametrize("names", [["f0_median_hz", "no_such_feature"], ["hnr_db", "hnr_db"]])
def test_mask_from_names_refuses_typos(names: list[str]) -> None:
    with pytest.raises(ValueError):
        mask_from_names(names)


def test_error_kinds_are_exactly_the_contract() -> None:
    assert [kind.name for kind in EvalErrorKind] == [
        "EmptyCandidates",
        "EmptyTuningFolds",
        "DuplicateCandidate",
        "DuplicateTuningFold",
        "InvalidCandidate",
        "InvalidFold",
        "FoldOutsideOuterTraining",
        "GroupLeakage",
        "OpenSetViolation",
        "CountOverflow",
        "Model",
    ]
    error = EvalError(EvalErrorKind.GroupLeakage, "g1 on both sides")
    assert error.kind is EvalErrorKind.GroupLeakage and "g1" in str(error)


def test_model_config_normalises_numbers() -> None:
    config = ModelConfig(**{**VALID, "relevance": 16, "absolute_threshold": -0.0})
    assert isinstance(config.relevance, float)
    assert str(config.absolute_threshold) == "0.0"  # negative zero folded
    assert config == ModelConfig(**{**VALID, "relevance": 16.0, "absolute_threshold": 0.0})
    assert config.fit_key == (0b101, 2, 16.0, 1e-3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.mask = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("mask", 0),
        ("mask", 1 << 24),
        ("mask", -1),
        ("mask", 1.0),
        ("mask", True),
        ("components", 0),
        ("components", 2.0),
        ("relevance", 0.0),
        ("relevance", -1.0),
        ("relevance", float("inf")),
        ("variance_floor", 0.0),
        ("variance_floor", float("nan")),
        ("absolute_threshold", float("nan")),
        ("absolute_threshold", float("-inf")),
        ("margin_threshold", float("inf")),
        ("margin_threshold", "1.0"),
    ],
)
def test_model_config_rejects_invalid_settings(field: str, value: object) -> None:
    with pytest.raises(EvalError) as caught:
        ModelConfig(**{**VALID, field: value})
    assert caught.value.kind is EvalErrorKind.InvalidCandidate


def test_model_config_order_is_the_tie_break_order() -> None:
    base = ModelConfig(**VALID)
    bigger_mask_smaller_rest = ModelConfig(
        mask=0b110, components=1, relevance=1.0, variance_floor=1e-6,
        absolute_threshold=-9.0, margin_threshold=-9.0,
    )  # fmt: skip
    assert base < bigger_mask_smaller_rest
    for field in list(VALID)[1:]:
        larger = dataclasses.replace(base, **{field: getattr(base, field) + 1})
        assert base < larger
    assert dataclasses.replace(base, absolute_threshold=-1.0) < base


def test_fold_keeps_order_and_repeats_but_refuses_non_integers() -> None:
    fold = OpenSetFold("s1", np.array([3, 1, 1]), [2], (0,))
    assert fold.train == (3, 1, 1)
    assert all(type(i) is int for i in fold.train)
    assert fold.canonical() == OpenSetFold("s1", (1, 1, 3), (2,), (0,))
    for bad in ([1.0], [True], "12", [[1, 2]], None):
        with pytest.raises(EvalError) as caught:
            OpenSetFold("s1", bad, [2], [0])  # type: ignore[arg-type]
        assert caught.value.kind is EvalErrorKind.InvalidFold
    with pytest.raises(EvalError):
        OpenSetFold(7, [1], [2], [0])  # type: ignore[arg-type]


def _frame(utt_ids: list[str]) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(len(utt_ids), 24)), columns=list(FEATURE_NAMES))
    frame.insert(0, "utt_id", utt_ids)
    frame.insert(1, "speaker_id", [u[0] for u in utt_ids])
    frame.insert(2, "group_id", [u[:2] for u in utt_ids])
    frame["extra_column"] = "ignored"
    return frame


def test_dataset_rows_are_sorted_by_utt_id_whatever_the_input_order() -> None:
    frame = _frame(["b2x", "a1y", "a1x", "b1x"])
    dataset = OpenSetDataset.from_frame(frame)
    shuffled = OpenSetDataset.from_frame(frame.iloc[[2, 0, 3, 1]])
    assert dataset.utt_ids == shuffled.utt_ids == ("a1x", "a1y", "b1x", "b2x")
    assert np.array_equal(dataset.features, shuffled.features)
    assert np.array_equal(dataset.features[0], frame.loc[2, list(FEATURE_NAMES)].to_numpy(float))
    assert dataset.speakers == ("a", "b")
    assert dataset.speaker_codes.tolist() == [0, 0, 1, 1]
    assert dataset.group_codes.tolist() == [0, 0, 1, 2]
    assert not dataset.features.flags.writeable


def test_dataset_keeps_unmeasured_features_and_marks_them() -> None:
    frame = _frame(["a1x", "a1y"])
    frame.loc[1, "hnr_db"] = np.nan
    dataset = OpenSetDataset.from_frame(frame)
    hnr = FEATURE_NAMES.index("hnr_db")
    assert dataset.measured.sum() == 2 * 24 - 1 and not dataset.measured[1, hnr]
    assert not dataset.measured.flags.writeable
    assert dataset.measured_rows(1 << hnr).tolist() == [True, False]
    assert dataset.measured_rows(1 << (hnr + 1)).tolist() == [True, True]


def test_dataset_rejects_duplicates_infinite_and_missing_values() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        OpenSetDataset.from_frame(_frame(["a1x", "a1x"]))
    broken = _frame(["a1x", "a1y"])
    broken.loc[1, "hnr_db"] = -np.inf
    with pytest.raises(ValueError, match="infinite.*a1y"):
        OpenSetDataset.from_frame(broken)
    with pytest.raises(ValueError, match="infinite"):
        OpenSetDataset(("a", "b"), ("s", "s"), ("g", "g"), np.full((2, 24), np.inf))
    with pytest.raises(ValueError, match="lacks columns"):
        OpenSetDataset.from_frame(_frame(["a1x"]).drop(columns="cpps_db"))
    no_speaker = _frame(["a1x"])
    no_speaker.loc[0, "speaker_id"] = None
    with pytest.raises(ValueError, match="missing"):
        OpenSetDataset.from_frame(no_speaker)
    with pytest.raises(ValueError, match="sorted"):
        OpenSetDataset(("b", "a"), ("s", "s"), ("g", "g"), np.zeros((2, 24)))


def test_metrics_rates_and_zero_denominators() -> None:
    metrics = AggregateMetrics(10, 6, 1, 3, 4, 3, 1)
    assert metrics.known_identification_rate == 0.6
    assert metrics.known_misidentification_rate == 0.1
    assert metrics.known_rejection_rate == 0.3
    assert metrics.unknown_rejection_rate == 0.75
    assert metrics.unknown_acceptance_rate == 0.25
    assert metrics.balanced_open_set_rate == 0.675
    empty = AggregateMetrics(0, 0, 0, 0, 0, 0, 0)
    assert empty.known_identification_rate == empty.unknown_rejection_rate == 0.0
    assert empty.balanced_open_set_rate == 0.0
    assert metrics + empty == metrics
    assert metrics + metrics == AggregateMetrics(20, 12, 2, 6, 8, 6, 2)


def test_metrics_counts_are_checked() -> None:
    AggregateMetrics(MAX_COUNT, MAX_COUNT, 0, 0, 0, 0, 0)
    with pytest.raises(EvalError) as caught:
        AggregateMetrics(MAX_COUNT + 1, MAX_COUNT + 1, 0, 0, 0, 0, 0)
    assert caught.value.kind is EvalErrorKind.CountOverflow
    one = AggregateMetrics(1, 1, 0, 0, 0, 0, 0)
    with pytest.raises(EvalError) as caught:
        AggregateMetrics(MAX_COUNT, MAX_COUNT, 0, 0, 0, 0, 0) + one
    assert caught.value.kind is EvalErrorKind.CountOverflow
    with pytest.raises(ValueError):
        AggregateMetrics(3, 1, 1, 0, 0, 0, 0)
    with pytest.raises(ValueError):
        AggregateMetrics(1, 1, 0, 0, 1, 1, 1)
    with pytest.raises(ValueError):
        AggregateMetrics(0, 1, -1, 0, 0, 0, 0)
    with pytest.raises(TypeError):
        AggregateMetrics(1.0, 1, 0, 0, 0, 0, 0)  # type: ignore[arg-type]
    assert AggregateMetrics(np.uint64(2), 2, 0, 0, 0, 0, 0).known_total == 2
