"""Speaker-level correlations: numbers against scipy, the speaker-set rules, the readers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pathbench_flow.common.io import read_parquet
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.metric import FA, MetricKey
from pathbench_flow.stats.correlation import (
    CORRELATION_COLUMNS,
    analysis_speakers,
    bootstrap_pearson_ci,
    correlate_metrics,
    correlate_predictions,
    read_predictions_csv,
    read_spk2score,
    read_utt2score,
    speaker_sets,
    utterance_correlations,
    write_correlations,
)
from pathbench_flow.stats.resampled_r import MIN_SPEAKERS, UNDEFINED_LIMIT
from pathbench_flow.testing import FIXTURES

SPEAKERS = [f"S{i:02d}" for i in range(1, 11)]
TRUTH = pd.Series(
    [12.0, 35.0, 48.0, 20.0, 77.0, 90.0, 64.0, 5.0, 55.0, 83.0], index=SPEAKERS, dtype="float64"
)
NOISY = pd.Series(
    [1.1, 2.9, 4.4, 2.5, 6.1, 8.8, 5.0, 0.7, 5.9, 7.2], index=SPEAKERS, dtype="float64"
)


def long_table(values: dict[str | MetricKey, dict[str, float]]) -> pd.DataFrame:
    """The workflow's long speakers table from ``{metric: {speaker: value}}``; a metric given
    by name is the raw variant of the evaluator of that name."""
    keys = {key: key if isinstance(key, MetricKey) else MetricKey(key) for key in values}
    rows = [
        (speaker, keys[key].name, keys[key].evaluator, value)
        for key, by_speaker in values.items()
        for speaker, value in by_speaker.items()
    ]
    return pd.DataFrame(rows, columns=["speaker_id", "metric", "evaluator", "value"])


def metadata(*metrics: str, direction: int = 1) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "metric": list(metrics),
            "direction": [direction] * len(metrics),
            "category": ["reference-free signal"] * len(metrics),
        }
    )


def test_statistics_equal_scipy_on_a_hand_made_table() -> None:
    result = correlate_predictions(NOISY, TRUTH)
    pearson = stats.pearsonr(NOISY, TRUTH)
    spearman = stats.spearmanr(NOISY, TRUTH)
    assert result.n == 10
    assert result.reason == ""
    assert result.pearson_r == pytest.approx(pearson.statistic, abs=1e-12)
    assert result.pearson_r == pytest.approx(np.corrcoef(NOISY, TRUTH)[0, 1], abs=1e-12)
    assert result.pearson_p == pytest.approx(pearson.pvalue, rel=1e-9)
    assert result.spearman_rho == pytest.approx(spearman.statistic, abs=1e-12)
    assert result.spearman_p == pytest.approx(spearman.pvalue, rel=1e-9)
    assert result.aligned_r == result.pearson_r


def test_negative_direction_flips_r_and_its_interval() -> None:
    plain = correlate_predictions(NOISY, TRUTH, direction=1)
    flipped = correlate_predictions(NOISY, TRUTH, direction=-1)
    assert flipped.pearson_r == plain.pearson_r
    assert flipped.aligned_r == -plain.pearson_r
    assert (flipped.aligned_ci_low, flipped.aligned_ci_high) == (-plain.ci_high, -plain.ci_low)


def test_invalid_direction_is_rejected() -> None:
    with pytest.raises(ValueError, match="direction"):
        correlate_predictions(NOISY, TRUTH, direction=0)


def test_bootstrap_is_reproducible_and_independent_of_input_order() -> None:
    first = correlate_predictions(NOISY, TRUTH)
    again = correlate_predictions(NOISY, TRUTH)
    shuffled = correlate_predictions(NOISY.iloc[::-1], TRUTH.sample(frac=1, random_state=3))
    other_seed = correlate_predictions(NOISY, TRUTH, seed=7)
    assert (first.ci_low, first.ci_high) == (again.ci_low, again.ci_high)
    assert (first.ci_low, first.ci_high) == (shuffled.ci_low, shuffled.ci_high)
    assert (first.ci_low, first.ci_high) != (other_seed.ci_low, other_seed.ci_high)


def test_strong_correlation_interval_contains_r() -> None:
    result = correlate_predictions(NOISY, TRUTH)
    assert result.pearson_r > 0.9
    assert 0.5 < result.ci_low < result.pearson_r < result.ci_high <= 1.0


def test_vectorised_bootstrap_equals_a_resample_by_resample_loop() -> None:
    x, y = NOISY.to_numpy(), TRUTH.to_numpy()
    rng = np.random.Generator(np.random.PCG64(11))
    rs = [np.corrcoef(x[i], y[i])[0, 1] for i in rng.integers(0, len(x), size=(300, len(x)))]
    expected = np.percentile(rs, [2.5, 97.5])
    interval = bootstrap_pearson_ci(x, y, n_boot=300, seed=11)
    assert interval[:2] == pytest.approx(expected, abs=1e-12)


def test_resamples_without_r_are_dropped_counted_and_flag_the_interval() -> None:
    # Few speakers and tied values: many resamples have a constant side, or two distinct
    # speakers (|r| = 1 by construction), and so no r, as in the uncertainty stage. Centring a
    # row of 0.1s leaves rounding noise that would pass for r = +-1 if not dropped.
    x, y = np.array([0.1, 0.1, 0.1, 0.3]), np.array([1.0, 2.0, 3.0, 4.0])
    rng = np.random.Generator(np.random.PCG64(1))
    draws = rng.integers(0, len(x), size=(500, len(x)))
    defined = [
        i for i in draws if np.ptp(x[i]) > 0 and np.ptp(y[i]) > 0 and len(set(i)) >= MIN_SPEAKERS
    ]
    expected = np.percentile([np.corrcoef(x[i], y[i])[0, 1] for i in defined], [2.5, 97.5])
    interval = bootstrap_pearson_ci(x, y, n_boot=500, seed=1)
    assert interval[:2] == pytest.approx(expected, abs=1e-12)
    assert interval.undefined_share == 1 - len(defined) / 500
    assert interval.flagged and interval.undefined_share > UNDEFINED_LIMIT
    ids = pd.Index(list("abcd"), dtype=object)
    row = correlate_predictions(pd.Series(x, ids), pd.Series(y, ids), n_boot=500, seed=1)
    assert (row.ci_undefined_share, row.ci_flagged) == (interval.undefined_share, True)
    assert row.interval == (
        "percentile bootstrap over speakers, 95 %, 500 resamples where r is defined"
    )


def test_speakers_without_ground_truth_are_excluded() -> None:
    truth = pd.concat([TRUTH, pd.Series({"C01": np.nan, "C02": np.nan})])
    predictions = pd.concat([NOISY, pd.Series({"C01": 1000.0, "C02": -1000.0})])
    assert correlate_predictions(predictions, truth) == correlate_predictions(NOISY, TRUTH)


def test_missing_predictions_are_counted() -> None:
    predictions = NOISY.copy()
    predictions["S03"] = np.nan
    result = correlate_predictions(predictions.drop("S04"), TRUTH)
    assert (result.n, result.n_no_value) == (8, 2)


@pytest.mark.parametrize(
    ("predictions", "truth", "reason"),
    [
        (NOISY.iloc[:2], TRUTH, "2 speaker(s)"),
        (pd.Series(3.0, index=SPEAKERS), TRUTH, "prediction is constant"),
        (NOISY, pd.Series(50.0, index=SPEAKERS), "ground truth is constant"),
    ],
)
def test_uncorrelatable_input_gives_nan_and_a_reason(
    predictions: pd.Series, truth: pd.Series, reason: str
) -> None:
    result = correlate_predictions(predictions, truth)
    assert reason in result.reason
    statistics = [
        result.pearson_r,
        result.pearson_p,
        result.spearman_rho,
        result.spearman_p,
        result.ci_low,
        result.ci_high,
        result.aligned_r,
        result.aligned_ci_low,
        result.aligned_ci_high,
    ]
    assert all(math.isnan(value) for value in statistics)


def test_duplicate_speakers_and_infinite_values_are_rejected() -> None:
    with pytest.raises(ValueError, match="duplicate speakers: S01"):
        correlate_predictions(pd.concat([NOISY, NOISY.iloc[:1]]), TRUTH)
    with pytest.raises(ValueError, match="infinite predictions for speakers: S02"):
        correlate_predictions(NOISY.replace(NOISY["S02"], np.inf), TRUTH)


def test_the_allowlist_names_evaluators_read_from_the_evaluator_column() -> None:
    """Every variant and reference set of an allowlisted evaluator is allowlisted, known from
    the evaluator column; a name is never parsed, so without that column (a hand-made table)
    ``wada_snr_fa`` is a metric of its own and not allowlisted."""
    partial = {**NOISY.to_dict(), "S03": np.nan}
    values = {
        "cpp": NOISY.to_dict(),
        MetricKey("wada_snr", FA): partial,
        MetricKey("p_estoi", FA, "all"): partial,
    }
    sets = speaker_sets(long_table(values), TRUTH, allowlist=("wada_snr", "p_estoi"))
    assert sets.constraining == ["cpp"]
    assert set(sets.not_constraining) == {"wada_snr_fa", "p_estoi_fa_all"}
    assert sets.used["cpp"] == SPEAKERS
    unnamed = long_table(values).drop(columns="evaluator")
    assert speaker_sets(unnamed, TRUTH, allowlist=("wada_snr",)).constraining == [
        "cpp",
        "p_estoi_fa_all",
        "wada_snr_fa",
    ]


def coverage_table() -> pd.DataFrame:
    """Four metrics over S01–S10 plus a control; each misses different speakers."""
    full = NOISY.to_dict()
    return long_table(
        {
            "cpp": {**full, "S01": np.nan, "C01": 3.0},
            "per": {k: v for k, v in full.items() if k != "S02"},
            MetricKey("wada_snr", FA): {**full, "S03": np.nan, "S04": np.nan},
            "spk2age": {k: v for k, v in full.items() if k != "S05"},
        }
    )


def test_common_speaker_set_and_allowlist() -> None:
    truth = pd.concat([TRUTH, pd.Series({"C01": np.nan})])
    sets = analysis_speakers(coverage_table(), truth)
    common = [s for s in SPEAKERS if s not in ("S01", "S02")]
    assert sets["cpp"] == common
    assert sets["per"] == common
    assert sets["wada_snr_fa"] == [s for s in SPEAKERS if s not in ("S03", "S04")]
    assert sets["spk2age"] == [s for s in SPEAKERS if s != "S05"]


def test_correlate_metrics_uses_the_common_set() -> None:
    table = correlate_metrics(
        coverage_table(), TRUTH, metadata("cpp", "per", "wada_snr_fa", "spk2age"), n_boot=200
    )
    assert list(table.columns) == list(CORRELATION_COLUMNS)
    rows = table.set_index("metric")
    assert list(rows.index) == ["cpp", "per", "spk2age", "wada_snr_fa"]
    assert rows["n"].to_dict() == {"cpp": 8, "per": 8, "spk2age": 9, "wada_snr_fa": 8}
    assert rows["n_no_value"].to_dict() == {"cpp": 1, "per": 1, "spk2age": 1, "wada_snr_fa": 2}
    common = [s for s in SPEAKERS if s not in ("S01", "S02")]
    expected = stats.pearsonr(NOISY[common], TRUTH[common]).statistic
    assert rows.at["cpp", "pearson_r"] == pytest.approx(expected, abs=1e-12)
    assert rows.at["per", "pearson_r"] == pytest.approx(expected, abs=1e-12)
    assert (rows["reason"] == "").all()


def test_allowlist_is_a_parameter() -> None:
    sets = analysis_speakers(coverage_table(), TRUTH, allowlist=("cpp",))
    assert sets["cpp"] == SPEAKERS[1:]
    # cpp's missing S01 no longer counts, but wada_snr_fa and spk2age now shrink the set.
    assert sets["per"] == ["S01", *SPEAKERS[5:]]


def test_metric_without_any_value_does_not_empty_the_common_set() -> None:
    speakers = pd.concat([coverage_table(), long_table({"vsa": dict.fromkeys(SPEAKERS, np.nan)})])
    table = correlate_metrics(
        speakers, TRUTH, metadata("cpp", "per", "wada_snr_fa", "spk2age", "vsa"), n_boot=50
    ).set_index("metric")
    assert table.at["cpp", "n"] == 8
    assert table.at["vsa", "n"] == 0
    assert table.at["vsa", "n_no_value"] == 10
    assert "0 speaker(s)" in table.at["vsa", "reason"]


def test_correlate_metrics_aligns_by_direction_and_keeps_metadata() -> None:
    meta = pd.DataFrame({"metric": ["per"], "direction": [-1], "category": ["reference-text"]})
    row = correlate_metrics(long_table({"per": (-NOISY).to_dict()}), TRUTH, meta).iloc[0]
    assert (row["category"], row["direction"]) == ("reference-text", -1)
    assert row["pearson_r"] < 0 < row["aligned_r"]
    assert row["aligned_r"] == -row["pearson_r"]


def test_every_category_an_evaluator_declares_is_correlated() -> None:
    """The categories come from one list: the model measures' category, once missing here,
    stopped every run with artp_old, artp_double_asr or double_asr at this stage."""
    declared = sorted({registry.info(name).category for name in registry.names()})
    assert "reference-free model" in declared
    meta = pd.DataFrame({"metric": declared, "direction": 1, "category": declared})
    speakers = long_table({name: NOISY.to_dict() for name in declared})
    table = correlate_metrics(speakers, TRUTH, meta, n_boot=50).set_index("metric")
    assert table["category"].to_dict() == {name: name for name in declared}
    with pytest.raises(ValueError, match=r"unknown metric categories \['vibes'\]; known: "):
        correlate_metrics(speakers, TRUTH, meta.assign(category="vibes"), n_boot=50)


def test_metadata_of_metrics_not_run_is_ignored() -> None:
    meta = pd.concat(
        [
            metadata("cpp"),
            pd.DataFrame({"metric": ["spk2age"], "direction": [-1], "category": ["lookup"]}),
            pd.DataFrame({"metric": ["unused"], "direction": [0], "category": ["vibes"]}),
        ]
    )
    speakers = long_table({"cpp": NOISY.to_dict(), "spk2age": NOISY.to_dict()})
    table = correlate_metrics(speakers, TRUTH, meta, n_boot=50).set_index("metric")
    assert table["category"].to_dict() == {"cpp": "reference-free signal", "spk2age": "lookup"}
    assert table.at["spk2age", "aligned_r"] == -table.at["spk2age", "pearson_r"]


def test_correlate_metrics_validates_its_inputs() -> None:
    speakers = long_table({"cpp": NOISY.to_dict()})
    with pytest.raises(ValueError, match="no entry for: cpp"):
        correlate_metrics(speakers, TRUTH, metadata("per"))
    with pytest.raises(ValueError, match="S01/cpp"):
        correlate_metrics(pd.concat([speakers, speakers.iloc[:1]]), TRUTH, metadata("cpp"))
    bad_category = metadata("cpp").assign(category="vibes")
    with pytest.raises(ValueError, match="vibes"):
        correlate_metrics(speakers, TRUTH, bad_category)


def test_correlation_table_round_trips_through_parquet(tmp_path: Path) -> None:
    table = correlate_metrics(coverage_table(), TRUTH, metadata(*coverage_table().metric.unique()))
    write_correlations(table, tmp_path / "correlations.parquet")
    back = read_parquet(tmp_path / "correlations.parquet")
    pd.testing.assert_frame_equal(back, table, check_dtype=False)


def test_read_spk2score_maps_na_to_nan(tmp_path: Path) -> None:
    path = tmp_path / "spk2score"
    path.write_text("M01 15\nF02 7.4\nFC01 N/A\n")
    scores = read_spk2score(path)
    assert list(scores.index) == ["M01", "F02", "FC01"]
    assert scores["F02"] == 7.4
    assert math.isnan(scores["FC01"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("M01 15\nM02\n", r"spk2score:2: .*fields"),
        ("M01 15\nM02 high\n", r"spk2score:2: score 'high' of speaker 'M02'"),
        ("M01 nan\n", r"spk2score:1: score 'nan'"),
        ("M01 15\nM01 16\n", r"spk2score:2: .*duplicate"),
    ],
)
def test_read_spk2score_names_file_and_line_of_a_bad_line(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "spk2score"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        read_spk2score(path)


def test_read_spk2score_reads_every_published_dataset() -> None:
    files = sorted((FIXTURES / "kaldi-metadata").rglob("spk2score"))
    assert files, f"fixtures missing under {FIXTURES}"
    uaspeech = read_spk2score(
        FIXTURES / "kaldi-metadata/uaspeech/pathological/word/balanced/spk2score"
    )
    assert (len(uaspeech), uaspeech["M12"]) == (14, 7.4)
    for path in files:
        read_spk2score(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("speaker,score\nS01,1\n", "header must be 'speaker_id,score'"),
        ("speaker_id,score\nS01,1\nS01,2\n", "duplicate speakers: S01"),
        ("speaker_id,score\nS01,1\nS02,\nS03,x\n", "speakers: S02, S03"),
        ("", "empty file"),
    ],
)
def test_read_predictions_csv_rejects_bad_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "preds.csv"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        read_predictions_csv(path)


def test_excluded_speakers_are_named_with_the_metric_that_removed_them() -> None:
    table = correlate_metrics(
        coverage_table(), TRUTH, metadata("cpp", "per", "wada_snr_fa", "spk2age"), n_boot=50
    ).set_index("metric")
    assert table["n_excluded"].to_dict() == {"cpp": 1, "per": 1, "spk2age": 0, "wada_snr_fa": 0}
    assert table.at["cpp", "excluded_speakers"] == "S02 (by per)"
    assert table.at["per", "excluded_speakers"] == "S01 (by cpp)"
    sets = speaker_sets(coverage_table(), TRUTH)
    assert sets.excluded["cpp"] == {"S02": ["per"]}
    assert sets.constraining == ["cpp", "per"]
    assert set(sets.not_constraining) == {"spk2age", "wada_snr_fa"}


def test_constant_or_nearly_empty_metrics_do_not_shrink_the_common_set() -> None:
    """A failed trim scored 0.0 for some speakers and NaN for the rest must not cost the
    other metrics those speakers: a metric with a single value, or with too few rated
    speakers, does not constrain the speakers that every correlation shares."""
    constant = dict.fromkeys(SPEAKERS[:6], 0.0) | dict.fromkeys(SPEAKERS[6:], np.nan)
    two_values = {"S01": 0.3, "S02": 0.5} | dict.fromkeys(SPEAKERS[2:], np.nan)
    speakers = long_table({"cpp": NOISY.to_dict(), "p_estoi_fa": constant, "nad": two_values})
    table = correlate_metrics(speakers, TRUTH, metadata("cpp", "p_estoi_fa", "nad"), n_boot=50)
    rows = table.set_index("metric")
    assert rows.at["cpp", "n"] == 10 and rows.at["cpp", "n_excluded"] == 0
    assert rows.at["p_estoi_fa", "reason"] and np.isnan(rows.at["p_estoi_fa", "pearson_r"])
    sets = speaker_sets(speakers, TRUTH)
    assert sets.common == SPEAKERS and sets.constraining == ["cpp"]
    assert "same value" in sets.not_constraining["p_estoi_fa"]
    assert "2 rated speaker(s)" in sets.not_constraining["nad"]


def test_read_utt2score_checks_lines_as_spk2score_and_lists_every_bad_one(tmp_path: Path) -> None:
    path = tmp_path / "utt2score"
    path.write_bytes(b"\xef\xbb\xbfu1 3.4\nu2 N/A\nu3 2.9\n")
    scores = read_utt2score(path)  # a byte-order mark is a warning, not an error
    assert scores.index.name == "utt_id" and list(scores.index) == ["u1", "u2", "u3"]
    assert scores["u1"] == 3.4 and math.isnan(scores["u2"])
    path.write_text("u1 3.4\nu2 good\nu3\nu1 2\n")
    with pytest.raises(ValueError) as raised:
        read_utt2score(path)
    lines = str(raised.value).splitlines()
    assert len(lines) == 3
    assert "utt2score:2: score 'good' of utterance 'u2'" in str(raised.value)
    assert any("utt2score:3:" in line and "fields" in line for line in lines)
    assert any("utt2score:4:" in line and "duplicate" in line for line in lines)


def test_read_utt2score_reads_the_published_neurovoz_files() -> None:
    files = sorted((FIXTURES / "kaldi-metadata").rglob("utt2score"))
    assert files, f"fixtures missing under {FIXTURES}"
    for path in files:
        assert read_utt2score(path).notna().all(), path


UTTERANCES = [f"{s}_{k}" for s in ("A", "B", "C") for k in range(3)]


def utterance_scores(values: dict[str, list[float]]) -> pd.DataFrame:
    """Utterance scores (``scores/<evaluator>/<shard>.parquet`` rows) of ``UTTERANCES``."""
    return pd.DataFrame(
        [
            (utt, utt[0], metric, metric, value)
            for metric, column in values.items()
            for utt, value in zip(UTTERANCES, column, strict=True)
        ],
        columns=["utt_id", "speaker_id", "metric", "evaluator", "score"],
    )


def test_utterance_correlations_are_pathbench_r_on_one_utterance_set() -> None:
    """One set for every metric: rated utterances (A_0 is N/A) with a value for every
    constraining metric (cpp has none for B_1); r is np.corrcoef's, not sign-aligned."""
    truth = pd.Series([np.nan, 2.0, 3.5, 1.0, 4.0, 2.5, 5.0, 3.0, 4.5], index=UTTERANCES)
    cpp = [9.0, 2.2, 3.1, 1.5, np.nan, 2.0, 4.9, 3.3, 4.0]
    per = [0.1, 0.8, 0.5, 0.9, 0.2, 0.7, 0.1, 0.6, 0.3]
    few = [np.nan] * 7 + [1.0, 2.0]  # two values: too few to correlate, so it removes nobody
    scores = utterance_scores({"cpp": cpp, "per": per, "few": few})
    meta = pd.DataFrame(
        {"metric": ["cpp", "per", "few"], "direction": [1, -1, 1], "category": "reference-text"}
    )
    table = utterance_correlations(scores, truth, meta).set_index("metric")
    used = [u for u in UTTERANCES if u not in ("A_0", "B_1")]
    values = scores.pivot(index="utt_id", columns="metric", values="score").loc[used]
    for metric, direction in (("cpp", 1), ("per", -1)):
        row = table.loc[metric]
        r = np.corrcoef(values[metric], truth[used])[0, 1]
        assert row["pearson_r"] == r and row["aligned_r"] == direction * r
        rho = stats.spearmanr(values[metric], truth[used]).statistic
        assert row["spearman_rho"] == pytest.approx(rho)
        assert (row["n"], row["n_speakers"], row["reason"]) == (7, 3, "")
    assert table.at["per", "excluded_by"] == "cpp: 1" and table.at["per", "n_excluded"] == 1
    assert table.at["cpp", "n_no_value"] == 1 and table.at["cpp", "n_excluded"] == 0
    assert table.at["few", "reason"] == "2 utterance(s) to correlate, at least 3 are needed"
    assert math.isnan(table.at["few", "pearson_r"])
    assert list(table.columns) == [
        "category",
        "direction",
        "n",
        "n_speakers",
        "n_no_value",
        "n_excluded",
        "pearson_r",
        "spearman_rho",
        "aligned_r",
        "reason",
        "excluded_by",
    ]
    with pytest.raises(ValueError, match=r"infinite predictions for utterances \(cpp\): B_2"):
        utterance_correlations(utterance_scores({"cpp": cpp[:5] + [np.inf] + cpp[6:]}), truth, meta)
