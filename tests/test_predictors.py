"""Your own predictor (config ``predictors``): its CSVs checked before any job, imported as a
metric like any evaluator's, and tested against the best built-in measure of each category."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from pathbench_flow.common.io import read_parquet
from pathbench_flow.data.kaldi import Finding
from pathbench_flow.demo.corpus import make_demo
from pathbench_flow.evaluators import categories
from pathbench_flow.predictors.check import check_predictors, read_checked
from pathbench_flow.predictors.comparisons import best_per_category, dataset_comparisons
from pathbench_flow.predictors.config import SPEAKERS, UTTERANCES, PredictorFile
from pathbench_flow.predictors.csv_file import read_score_csv
from pathbench_flow.reporting.results_table import aligned_r, sign_aligned
from pathbench_flow.runtime.preflight import ConfigError
from pathbench_flow.schemas.tables import SCORE_SCHEMA, SPEAKER_SCORE_SCHEMA
from pathbench_flow.stages.aggregate import aggregate_speakers
from pathbench_flow.stages.analysis import metric_metadata
from pathbench_flow.stages.predictors import import_predictor
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.stats.correlation import correlate_metrics
from pathbench_flow.stats.dependent_correlations import METHODS, compare_dependent
from pathbench_flow.testing import REPO
from pathbench_flow.testing.kaldi_builder import write_kaldi, write_tone
from pathbench_flow.testing.workflow_run import copy_workflow, dry_run, snakemake

SPEAKER_HEADER = ["speaker_id", "score"]
RATINGS = {"s1": "10", "s2": "25", "s3": "N/A", "s4": "60", "s5": "80"}
"""A dataset's spk2score: four rated speakers and one control (N/A)."""


def rated_dataset(root: Path, ratings: dict[str, str] = RATINGS) -> Path:
    """A real Kaldi dataset of two 1 s recordings per speaker, rated as ``ratings`` says."""
    (root / "wav").mkdir(parents=True)
    wav, text, utt2spk = [], [], []
    for speaker in ratings:
        for k in (1, 2):
            utt = f"{speaker}_u{k}"
            write_tone(root / "wav" / f"{utt}.wav", 1.0, f"{root.name} {utt}")
            wav.append(f"{utt} wav/{utt}.wav")
            text.append(f"{utt} the cat sat")
            utt2spk.append(f"{utt} {speaker}")
    write_kaldi(root, wav, text, utt2spk, {s: ("f", score) for s, score in ratings.items()})
    return root


def write_csv(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def schema_valid(config: dict) -> dict:
    """``config`` checked against the workflow's schema, with its defaults, as a run sees it."""
    validate(config, str(REPO / "workflow/schemas/config.schema.yaml"))
    return config


def where(findings: list[Finding]) -> list[tuple[str, int, str]]:
    """(file name, line, value) of every error finding, in order."""
    return [(Path(f.file).name, f.line, f.value) for f in findings if f.severity == "error"]


# --- the CSV -----------------------------------------------------------------------------------


def test_a_csv_as_pathbench_writes_it_is_read_with_its_lines(tmp_path):
    """PathBench's evaluate_spk2score.py writes ``speaker_id,score`` and six decimals; blank
    lines are skipped as Python's csv module skips them, and a quoted id keeps its comma."""
    path = write_csv(
        tmp_path / "p.csv", ["speaker_id,score", "F01,2.500000", "", '"M,03",-4.25', " C16 , 1e3 "]
    )
    findings: list[Finding] = []
    rows = read_score_csv(path, SPEAKER_HEADER, findings)
    assert findings == []
    assert {key: (row.value, row.line) for key, row in rows.items()} == {
        "F01": (2.5, 2),
        "M,03": (-4.25, 4),
        "C16": (1000.0, 5),
    }


def test_every_defect_of_a_row_is_a_finding_at_its_line(tmp_path):
    path = write_csv(
        tmp_path / "p.csv",
        [
            "speaker_id,score",
            "F01,1.5",
            "F01,2.5",  # duplicate
            "F02,N/A",  # a predictor has no N/A
            "F03,nan",
            "F04,inf",
            "F05,high",
            "F06,1,2",  # three fields
            ",3",  # no id
            "F07,",  # no score
            '"F08,1',  # an unclosed quote
        ],
    )
    findings: list[Finding] = []
    rows = read_score_csv(path, SPEAKER_HEADER, findings)
    assert where(findings) == [
        ("p.csv", 3, "F01"),
        ("p.csv", 4, "N/A"),
        ("p.csv", 5, "nan"),
        ("p.csv", 6, "inf"),
        ("p.csv", 7, "high"),
        ("p.csv", 8, "F06,1,2"),
        ("p.csv", 9, ",3"),
        ("p.csv", 10, ""),
        ("p.csv", 11, '"F08,1'),
    ]
    assert "duplicate speaker_id (first seen on line 2)" in str(findings[0])
    assert "score of 'F02' is not a finite number" in str(findings[1])
    assert "is not a CSV row" in str(findings[-1])
    # Ids of refused scores stay known, so that they are not also reported missing.
    assert set(rows) == {"F01", "F02", "F03", "F04", "F05", "F07"}
    assert math.isnan(rows["F05"].value) and rows["F01"].value == 1.5


@pytest.mark.parametrize(
    ("content", "line", "problem"),
    [
        (None, 0, "does not exist"),
        (b"", 0, "is empty"),
        (b"spk,score\nF01,1\n", 1, "is not the header 'speaker_id,score'"),
        (b"F01,1\nF02,2\n", 1, "is not the header 'speaker_id,score'"),  # no header at all
        (b"speaker_id,score\n", 1, "has no rows after the header"),
        (b"\xff\xfes\x00", 1, "UTF-16"),
    ],
)
def test_a_file_that_is_no_such_csv_is_one_finding(tmp_path, content, line, problem):
    path = tmp_path / "p.csv"
    if content is not None:
        path.write_bytes(content)
    findings: list[Finding] = []
    assert read_score_csv(path, SPEAKER_HEADER, findings) == {}
    assert [(f.line, problem in str(f)) for f in findings] == [(line, True)]
    assert str(findings[0]).startswith(f"{path}")


def test_a_byte_order_mark_is_a_warning_and_a_directory_an_error(tmp_path):
    path = tmp_path / "p.csv"
    path.write_bytes(b"\xef\xbb\xbfspeaker_id,score\nF01,1\n")
    findings: list[Finding] = []
    assert set(read_score_csv(path, SPEAKER_HEADER, findings)) == {"F01"}
    assert [f.severity for f in findings] == ["warning"]
    read_score_csv(tmp_path, SPEAKER_HEADER, findings)
    assert "is not a regular file" in str(findings[-1])


# --- the CSV against its dataset -----------------------------------------------------------------


def test_speakers_must_be_exactly_the_rated_ones(tmp_path):
    """PathBench's rule: an extra id (unrated: N/A, or absent) is named at its CSV line, a
    missing rated speaker at its spk2score line."""
    data = rated_dataset(tmp_path / "data")
    good = write_csv(tmp_path / "good.csv", ["speaker_id,score", "s1,1", "s2,2", "s4,4", "s5,5"])
    rows, findings = read_checked(PredictorFile(SPEAKERS, good), data)
    assert findings == [] and sorted(rows) == ["s1", "s2", "s4", "s5"]
    bad = write_csv(tmp_path / "bad.csv", ["speaker_id,score", "s1,1", "s3,3", "x9,9", "s5,5"])
    _, findings = read_checked(PredictorFile(SPEAKERS, bad), data)
    assert where(findings) == [
        ("bad.csv", 3, "s3"),
        ("bad.csv", 4, "x9"),
        ("spk2score", 2, "s2"),
        ("spk2score", 4, "s4"),
    ]
    assert "speaker is not rated in" in str(findings[0]) and "(absent, or N/A)" in str(findings[0])
    assert f"rated speaker has no row in {bad}" in str(findings[2])


def test_an_utterance_csv_covers_the_rated_speakers_through_utt2spk(tmp_path):
    data = rated_dataset(tmp_path / "data")
    path = write_csv(
        tmp_path / "u.csv",
        ["utt_id,score", "s1_u1,1", "s1_u2,2", "s2_u2,3", "s3_u1,4", "nope,5", "s5_u1,6"],
    )
    rows, findings = read_checked(PredictorFile(UTTERANCES, path), data)
    assert where(findings) == [
        ("u.csv", 6, "nope"),
        ("u.csv", 5, "s3"),
        ("spk2score", 4, "s4"),
    ]
    assert "utterance is not in" in str(findings[0])
    assert "speaker of this line's utterance is not rated" in str(findings[1])
    assert "rated speaker has no utterance in" in str(findings[2])
    assert len(rows) == 6


def test_the_preflight_names_the_key_and_refuses_taken_names_and_unknown_datasets(tmp_path):
    data = rated_dataset(tmp_path / "data")
    good = write_csv(tmp_path / "good.csv", ["speaker_id,score", "s1,1", "s2,2", "s4,4", "s5,5"])
    bad = write_csv(tmp_path / "bad.csv", ["speaker_id,score", "s1,1", "s2,2", "s4,4"])

    def config(**predictors):
        return schema_valid({"datasets": {"mine": {"path": str(data)}}, "predictors": predictors})

    def entry(path, dataset="mine"):
        return {"direction": 1, "datasets": {dataset: {"speakers": str(path)}}}

    check_predictors(config(mine_model=entry(good)), generated=lambda path: False)
    with pytest.raises(ConfigError) as caught:
        check_predictors(
            config(
                cpp=entry(good),
                cpp_fa=entry(good),
                p_estoi=entry(good),
                p_estoi_fa_all=entry(good),
                late=entry(bad),
                lost=entry(good, "elsewhere"),
            ),
            generated=lambda path: False,
        )
    assert caught.value.problems == [
        "predictors.cpp: 'cpp' is an evaluator; give the predictor a name of its own",
        "predictors.cpp_fa: 'cpp_fa' is a metric of the evaluator 'cpp'; give the predictor a "
        "name of its own",
        f"predictors.late.datasets.mine.speakers: {data}/spk2score:5: 's5' rated speaker has "
        f"no row in {bad} (add a row 'speaker_id,score' there; PathBench's rule: a predictor "
        "scores exactly the speakers rated in spk2score)",
        "predictors.lost.datasets.elsewhere: no dataset is called 'elsewhere'; configured: mine",
        "predictors.p_estoi: 'p_estoi' is an evaluator; give the predictor a name of its own",
        "predictors.p_estoi_fa_all: 'p_estoi_fa_all' is a metric of the evaluator 'p_estoi'; "
        "give the predictor a name of its own",
    ]


def test_a_dataset_the_workflow_generates_is_checked_by_the_job(tmp_path):
    """Before the demo exists only the CSV itself can be read: a valid one passes the parse
    (its speakers are checked by the import job), a broken one does not."""
    good = write_csv(tmp_path / "good.csv", ["speaker_id,score", "P01,1"])
    config = schema_valid(
        {
            "datasets": {"demo": {"path": str(tmp_path / "demo/pathological")}},
            "predictors": {"mine": {"direction": 1, "datasets": {"demo": {"speakers": str(good)}}}},
        }
    )
    check_predictors(config, generated=lambda path: True)
    write_csv(good, ["speaker,score", "P01,1"])
    with pytest.raises(ConfigError, match="is not the header 'speaker_id,score'"):
        check_predictors(config, generated=lambda path: True)


def test_the_schema_offers_exactly_the_known_categories():
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    entry = schema["properties"]["predictors"]["additionalProperties"]["properties"]
    assert entry["category"]["enum"] == [c.key for c in categories.CATEGORIES]
    assert entry["category"]["default"] == categories.EXTERNAL.key
    method = schema["properties"]["predictor_comparison"]["properties"]["method"]
    assert method["enum"] == list(METHODS)


# --- the import job --------------------------------------------------------------------------


@pytest.fixture
def validated(tmp_path):
    """A rated dataset and its real manifest; s2_u2's recording is missing, so validation with
    ``on_error: drop`` leaves that utterance out."""
    data = rated_dataset(tmp_path / "data")
    (data / "wav" / "s2_u2.wav").unlink()
    manifest = tmp_path / "manifest.parquet"
    validate_dataset(data, manifest, tmp_path / "validation.json", n_shards=1, on_error="drop")
    return data, manifest


def test_an_utterance_csv_becomes_a_score_table_averaged_like_a_measure(validated, tmp_path):
    data, manifest = validated
    scores = {
        "s1_u1": 1.0,
        "s1_u2": 4.0,
        "s2_u1": 2.0,
        "s2_u2": 100.0,
        "s4_u1": 7.0,
        "s5_u2": 9.5,
    }
    path = write_csv(tmp_path / "u.csv", ["utt_id,score", *(f"{u},{v}" for u, v in scores.items())])
    out = tmp_path / "mine.parquet"
    import_predictor("mine", UTTERANCES, path, data, manifest, out)
    table = read_parquet(out)
    assert list(table.columns) == SCORE_SCHEMA.names
    # s2_u2 was dropped by validation, so its score is dropped too.
    assert list(table["utt_id"]) == ["s1_u1", "s1_u2", "s2_u1", "s4_u1", "s5_u2"]
    assert list(table["speaker_id"]) == ["s1", "s1", "s2", "s4", "s5"]
    assert set(table["metric"]) == set(table["evaluator"]) == {"mine"}
    speakers = aggregate_speakers(manifest, [out], [], tmp_path / "s.parquet", tmp_path / "a.json")
    values = speakers.set_index("speaker_id")["value"]
    assert values[["s1", "s2", "s4", "s5"]].tolist() == [2.5, 2.0, 7.0, 9.5]
    assert math.isnan(values["s3"])  # the control has no value, as for any measure


def test_a_speaker_csv_becomes_a_speaker_score_table(validated, tmp_path):
    data, manifest = validated
    path = write_csv(tmp_path / "p.csv", ["speaker_id,score", "s5,5", "s1,1", "s2,2", "s4,4"])
    out = tmp_path / "mine.parquet"
    import_predictor("mine", SPEAKERS, path, data, manifest, out)
    table = read_parquet(out)
    assert list(table.columns) == SPEAKER_SCORE_SCHEMA.names
    assert table[["speaker_id", "score", "n_utterances"]].values.tolist() == [
        ["s1", 1.0, 2],
        ["s2", 2.0, 1],
        ["s4", 4.0, 2],
        ["s5", 5.0, 2],
    ]
    write_csv(path, ["speaker_id,score", "s1,1"])
    with pytest.raises(ValueError, match=r"predictor mine: .* \(3 problem\(s\)\):\n  - .*'s2'"):
        import_predictor("mine", SPEAKERS, path, data, manifest, out)


def test_correlation_reads_a_predictor_s_direction_and_category_from_the_config():
    scores = pd.DataFrame({"metric": ["cpp", "mine"], "evaluator": ["cpp", "mine"]})
    meta = metric_metadata(scores, {"mine": {"direction": -1, "category": "external predictor"}})
    assert meta.values.tolist() == [
        ["cpp", 1, "reference-free signal"],
        ["mine", -1, "external predictor"],
    ]


def test_the_results_table_aligns_a_predictor_by_its_declared_direction():
    """PathBench's vote would flip a metric negative in most columns; a predictor's row keeps
    the direction it declared, so one that fails everywhere shows it."""
    correlations = {
        name: pd.DataFrame(
            {"metric": ["mine"], "category": ["external predictor"], "pearson_r": [r]}
        )
        for name, r in (("a", -0.5), ("b", -0.25))
    }
    assert aligned_r(correlations).sign_rules["mine"] == "vote: flipped"
    aligned = aligned_r(correlations, declared={"mine": 1})
    assert aligned.sign_rules["mine"] == "declared +1"
    assert aligned.values.loc["mine"].tolist() == [-0.5, -0.25]
    assert aligned.rows.set_index("metric").at["mine", "category"] == "External Predictor"


# --- the comparisons ---------------------------------------------------------------------------


def speakers_table(values: dict[str, np.ndarray], truth: np.ndarray) -> pd.DataFrame:
    """A long speakers table (aggregate_speakers' shape) of metrics over speakers s00, s01, …"""
    ids = [f"s{i:02d}" for i in range(len(truth))]
    return pd.DataFrame(
        [
            {"speaker_id": s, "metric": m, "evaluator": m, "value": float(v), "ground_truth": t}
            for m, column in values.items()
            for s, v, t in zip(ids, column, truth, strict=True)
        ]
    )


METADATA = pd.DataFrame(
    {
        "metric": ["mine", "neg", "cpp", "cpps", "wada_snr", "spk2age", "vsa"],
        "direction": [1, -1, 1, 1, 1, -1, 1],
        "category": [
            "external predictor",
            "external predictor",
            "reference-free signal",
            "reference-free signal",
            "reference-free signal",
            "lookup",
            "reference-free speaker",
        ],
    }
)


@pytest.fixture
def benchmark():
    """Ten speakers: a good predictor, the same predictor negated with direction -1, and
    built-in measures of three categories (wada_snr allowlisted, with two speakers missing;
    vsa constant, so without a correlation)."""
    rng = np.random.Generator(np.random.PCG64(5))
    truth = np.linspace(10, 90, 10)
    mine = truth + rng.normal(0, 8, 10)
    wada = truth + rng.normal(0, 30, 10)
    wada[[0, 3]] = np.nan
    values = {
        "mine": mine,
        "neg": -mine,
        "cpp": truth + rng.normal(0, 20, 10),
        "cpps": truth + rng.normal(0, 40, 10),
        "wada_snr": wada,
        "spk2age": -truth + rng.normal(0, 25, 10),
        "vsa": np.full(10, 3.0),
    }
    speakers = speakers_table(values, truth)
    ground_truth = speakers.drop_duplicates("speaker_id").set_index("speaker_id")["ground_truth"]
    correlations = correlate_metrics(speakers, ground_truth, METADATA, n_boot=200)
    return speakers, ground_truth, correlations


def signs_of(correlations: pd.DataFrame) -> pd.DataFrame:
    """The signs a run of this one dataset gives, the predictors' as they declare them."""
    return aligned_r({"d": correlations}, declared={"mine": 1, "neg": -1}).signs


def test_the_best_measure_of_a_category_has_the_highest_aligned_r_and_ties_go_by_name(benchmark):
    _, _, raw = benchmark
    correlations = sign_aligned(raw, signs_of(raw))
    aligned = correlations.set_index("metric")["r_aligned"]
    best = best_per_category(correlations, ["mine", "neg"])
    signal = max(["cpp", "cpps", "wada_snr"], key=lambda m: aligned[m])
    assert best == {
        "reference-free signal": signal,
        "reference-free speaker": "",  # vsa is constant: no correlation to compare with
        "lookup": "spk2age",
    }
    tied = correlations.copy()
    tied.loc[tied["metric"] == "cpps", "r_aligned"] = aligned[signal]
    tied.loc[tied["metric"] == "cpp", "r_aligned"] = aligned[signal]
    assert best_per_category(tied, ["mine", "neg"])["reference-free signal"] == "cpp"


def test_each_predictor_is_tested_against_each_category_s_best(benchmark):
    speakers, ground_truth, correlations = benchmark
    rows = dataset_comparisons(
        "d",
        speakers,
        ground_truth,
        correlations,
        signs_of(correlations),
        ["mine", "neg", "absent"],
        allowlist=("wada_snr", "spk2age"),
        method="williams",
        level=0.95,
    )
    by = {(r["predictor"], r["category"]): r for r in rows}
    assert sorted(by) == [
        (p, c)
        for p in ("mine", "neg")
        for c in ("lookup", "reference-free signal", "reference-free speaker")
    ]
    # A negated predictor declared -1 is the same predictor: the same numbers, bit for bit.
    for category in ("lookup", "reference-free signal"):
        mine, neg = by["mine", category], by["neg", category]
        assert {k: v for k, v in mine.items() if k != "predictor"} == {
            k: v for k, v in neg.items() if k != "predictor"
        }
    lookup = by["mine", "lookup"]
    table = sign_aligned(correlations, signs_of(correlations)).set_index("metric")
    assert lookup["metric"] == "spk2age" and lookup["method"] == METHODS["williams"]
    assert lookup["r_jk"] == pytest.approx(table.at["mine", "r_aligned"], abs=1e-12)
    assert lookup["r_jh"] == pytest.approx(table.at["spk2age", "r_aligned"], abs=1e-12)
    wide = speakers.pivot(index="speaker_id", columns="metric", values="value")
    r_kh = np.corrcoef(wide["mine"], wide["spk2age"])[0, 1] * -1
    assert lookup["r_kh"] == pytest.approx(r_kh, abs=1e-12)
    expected = compare_dependent(lookup["r_jk"], lookup["r_jh"], lookup["r_kh"], 10)
    assert lookup["p_value"] == expected.p_value and lookup["reason"] == ""
    assert by["mine", "reference-free speaker"]["reason"].startswith("no built-in measure")


def test_an_allowlisted_measure_is_compared_on_the_speakers_both_have(benchmark):
    speakers, ground_truth, correlations = benchmark
    only_wada = correlations[correlations["metric"].isin(["mine", "wada_snr"])]
    (row,) = dataset_comparisons(
        "d",
        speakers,
        ground_truth,
        only_wada,
        signs_of(correlations),
        ["mine"],
        allowlist=("wada_snr",),
        method="steiger",
        level=0.9,
    )
    assert row["metric"] == "wada_snr" and row["n"] == 8 and row["df"] is None
    kept = ground_truth.drop(["s00", "s03"])
    wide = speakers.pivot(index="speaker_id", columns="metric", values="value").loc[kept.index]
    assert row["r_jk"] == pytest.approx(np.corrcoef(kept, wide["mine"])[0, 1], abs=1e-12)
    assert row["ci_low"] < row["difference"] < row["ci_high"] and row["level"] == 0.9


def test_a_comparison_that_cannot_run_says_why(benchmark):
    speakers, ground_truth, correlations = benchmark
    few = speakers[speakers["speaker_id"].isin(["s01", "s04", "s07"])]
    truth = ground_truth.loc[["s01", "s04", "s07"]]
    rows = dataset_comparisons(
        "d",
        few,
        truth,
        few_correlations := correlate_metrics(few, truth, METADATA, n_boot=200),
        signs_of(few_correlations),
        ["mine", "neg"],
        allowlist=(),
        method="williams",
        level=0.95,
    )
    assert {r["category"]: r["reason"][:40] for r in rows} == {
        "reference-free signal": "n = 3 speakers is too few: the tests nee",
        "reference-free speaker": "no built-in measure of this category has",
        "lookup": "n = 3 speakers is too few: the tests nee",
    }


def test_a_measure_the_vote_flips_is_compared_as_the_table_shows_it(benchmark):
    """wada_snr, rising with the truth, is the best signal measure once cpp and cpps are
    left out; where PathBench's vote flips it (most datasets negative), r_jh is the flipped r
    of the results table, not r times the evaluator's direction (+1)."""
    speakers, ground_truth, correlations = benchmark
    only_wada = correlations[correlations["metric"].isin(["mine", "wada_snr"])]
    signs = signs_of(only_wada)

    def compare() -> list[dict]:
        return dataset_comparisons(
            "d",
            speakers,
            ground_truth,
            only_wada,
            signs,
            ["mine"],
            allowlist=("wada_snr",),
            method="williams",
            level=0.95,
        )

    kept = compare()
    signs.loc["wada_snr"] = [-1, "vote: flipped"]
    flipped = compare()
    assert kept[0]["r_jh"] > 0 and flipped[0]["r_jh"] == -kept[0]["r_jh"]
    assert flipped[0]["r_kh"] == -kept[0]["r_kh"] and flipped[0]["r_jk"] == kept[0]["r_jk"]


# --- the workflow --------------------------------------------------------------------------------


def demo_datasets(root: Path) -> dict[str, Path]:
    """Three small synthetic corpora (five rated speakers, two utterances each)."""
    return {
        name: make_demo(root / name, seed=seed, n_pathological=5, n_control=1, n_utterances=2)
        / "pathological"
        for seed, name in enumerate(("alpha", "beta", "gamma"), start=101)
    }


def predictor_config(workdir: Path) -> dict:
    """Scores near the truth: speaker CSVs for alpha and beta, utterance CSVs for gamma."""
    data = demo_datasets(workdir / "data")
    (workdir / "preds").mkdir()
    files = {}
    for name, directory in data.items():
        ratings = [line.split() for line in (directory / "spk2score").read_text().splitlines()]
        if name == "gamma":
            lines = ["utt_id,score"] + [
                f"{utt},{float(dict(ratings)[spk]) + (-1) ** i * 7}"
                for i, (utt, spk) in enumerate(
                    line.split() for line in (directory / "utt2spk").read_text().splitlines()
                )
            ]
            files[name] = {"utterances": f"preds/{name}.csv"}
        else:
            lines = ["speaker_id,score"] + [
                f"{spk},{float(score) + 9 * math.sin(i)}" for i, (spk, score) in enumerate(ratings)
            ]
            files[name] = {"speakers": f"preds/{name}.csv"}
        write_csv(workdir / "preds" / f"{name}.csv", lines)
    return {
        "datasets": {name: {"path": str(path.relative_to(workdir))} for name, path in data.items()},
        "evaluators": ["cpp", "wada_snr", "spk2age"],
        "variants": ["raw"],
        "predictors": {"mine": {"direction": 1, "datasets": files}},
    }


def test_a_mismatching_csv_stops_the_run_before_any_job(tmp_path):
    workdir = copy_workflow(tmp_path / "wf")
    config = predictor_config(workdir)
    plan = dry_run(workdir, config).stdout
    assert "import_predictor" in plan and "compare_predictors" in plan
    lines = (workdir / "preds/alpha.csv").read_text().splitlines()
    write_csv(workdir / "preds/alpha.csv", [*lines[:2], *lines[3:], "P99,3"])
    result = dry_run(workdir, config, check=False)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert (
        "predictors.mine.datasets.alpha.speakers: preds/alpha.csv:6: 'P99' speaker is not "
        "rated in data/alpha/pathological/spk2score" in output
    )
    assert (
        "predictors.mine.datasets.alpha.speakers: data/alpha/pathological/spk2score:2: 'P02' "
        "rated speaker has no row in preds/alpha.csv" in output
    )
    assert not (workdir / "results").exists()


@pytest.mark.slow
def test_a_predictor_runs_to_the_table_the_comparisons_and_the_report(tmp_path):
    workdir = copy_workflow(tmp_path / "wf")
    config = predictor_config(workdir)
    (workdir / "my.yaml").write_text(yaml.safe_dump(config))
    snakemake(workdir, "--configfile", "my.yaml", "--cores", "2")
    results = workdir / "results"

    # Gamma's utterance scores are averaged per speaker as a built-in measure's are.
    utterances = pd.read_csv(workdir / "preds/gamma.csv")
    utterances["speaker_id"] = utterances["utt_id"].str.split("_").str[0]
    speakers = read_parquet(results / "gamma/speakers.parquet")
    mine = speakers[speakers["metric"] == "mine"].dropna(subset=["value"])
    expected = utterances.groupby("speaker_id")["score"].mean()
    assert mine.set_index("speaker_id")["value"].to_dict() == pytest.approx(expected.to_dict())

    aligned = {}
    for name in config["datasets"]:
        correlations = read_parquet(results / name / "correlations.parquet").set_index("metric")
        assert correlations.at["mine", "n"] == 5
        assert correlations.at["mine", "category"] == "external predictor"
        aligned[name] = correlations["pearson_r"]  # mine is declared +1
        assert (results / name / "plots/scatter/mine.png").stat().st_size > 0
        exported = pd.read_csv(results / name / "speaker_csv/mine.csv")
        assert list(exported.columns) == ["speaker_id", "score"] and len(exported) == 5

    table = pd.read_csv(results / "results_table.csv").set_index("metric")
    row = table.loc["mine"]
    assert (row["category"], row["sign_rule"], row["n_datasets"]) == (
        "External Predictor",
        "declared +1",
        3,
    )
    for name in config["datasets"]:
        assert row[name] == pytest.approx(round(aligned[name]["mine"], 2), abs=1e-9)
    assert "mine" not in (results / "pathbench_table.csv").read_text()

    text = {"metric": str, "reason": str}
    comparisons = pd.read_csv(results / "predictor_comparisons.csv", dtype=text)
    comparisons[list(text)] = comparisons[list(text)].fillna("")
    assert len(comparisons) == 3 * 2  # three datasets, two categories of built-in measures
    assert set(comparisons["method"]) == {METHODS["williams"]}
    groups = {"reference-free signal": ["cpp", "wada_snr"], "lookup": ["spk2age"]}
    for record in comparisons.to_dict(orient="records"):
        dataset_r = aligned[record["dataset"]]
        best = dataset_r[groups[record["category"]]].dropna()
        assert record["metric"] == (best.idxmax() if len(best) else "")
        if record["n"] == 5:  # wada_snr, allowlisted, may lack a speaker
            assert record["r_jk"] == pytest.approx(dataset_r["mine"], abs=1e-9)
        if record["metric"] and not record["reason"]:
            assert 0 <= record["p_value"] <= 1
            assert record["ci_low"] <= record["difference"] <= record["ci_high"]
    assert (comparisons["reason"] == "").sum() >= 4

    snakemake(workdir, "--configfile", "my.yaml", "--report", "report.html")
    assert "predictor_comparisons.csv" in (workdir / "report.html").read_text()

    # Nothing reruns; a changed CSV reruns its import and what depends on it, nothing else.
    again = snakemake(workdir, "-n", "--configfile", "my.yaml")
    assert "Nothing to be done" in again.stdout + again.stderr
    lines = (workdir / "preds/beta.csv").read_text().splitlines()
    write_csv(workdir / "preds/beta.csv", [lines[0], *lines[1:-1], lines[-1] + "1"])
    plan = snakemake(workdir, "-n", "--quiet", "rules", "--configfile", "my.yaml").stdout
    assert "import_predictor" in plan and "score_utterances" not in plan
