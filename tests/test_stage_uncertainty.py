"""The uncertainty stage from correlation and speaker files to its tables, figures and the
interval beside Avg in results_table.csv, on three corpora, one with MC and EX columns."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from test_analysis_outputs import OUTPUTS, speakers_file

from pathbench_flow.reporting.results_table import results_columns
from pathbench_flow.stages.analysis import correlate, results_table
from pathbench_flow.stages.uncertainty import (
    FOREST_NOTE,
    NO_PREDICTORS,
    PAGE_VIEWS,
    corpus_of,
    flagged_warning,
    recording_digests,
    shared_speaker_warnings,
    uncertainty,
)
from pathbench_flow.testing import KALDI_METADATA as KALDI
from pathbench_flow.testing.report_page import table_cells

SETTINGS = {
    "n_boot": 300,
    "seed": 5,
    "level": 0.95,
    "method": "percentile",
    "meta_test": "knha_truncated",
    "meta_analysis": {},
}
TABLES = ("summary", "pairwise", "meta", "verdicts")


def _inputs(tmp_path: Path) -> tuple[dict, dict, dict]:
    """UASpeech Word MC and EX over the same speakers (one corpus), a dataset with its own
    ``corpus:`` key and one with none (a corpus of its own)."""
    settings = {
        "ua_balanced": {"path": str(KALDI / "uaspeech/pathological/word/balanced")},
        "ua_unbalanced": {"path": str(KALDI / "uaspeech/pathological/word/unbalanced")},
        "mine": {"path": "elsewhere/mine", "corpus": "Mine"},
        "other": {"path": "elsewhere/other"},
    }
    speakers, correlations = {}, {}
    for seed, name in enumerate(settings):
        speakers[name] = speakers_file(tmp_path / f"{name}_speakers.parquet", seed)
        correlations[name] = tmp_path / f"{name}_corr.parquet"
        correlate(speakers[name], correlations[name], allowlist=(), n_boot=50, seed=1)
    return correlations, speakers, settings


def _outputs(out: Path) -> dict[str, Path]:
    """Every output of the stage, in ``out``."""
    outputs = {key: out / f"{key}.csv" for key in TABLES}
    outputs |= {"ranks": out / "ranks.png", "matrix": out / "matrix.png", "forest": out / "forest"}
    return outputs | {"warnings": out / "warnings.txt"}


def _run(tmp_path: Path, out: Path, settings: dict = SETTINGS) -> pd.DataFrame:
    correlations, speakers, dataset_settings = _inputs(tmp_path)
    out.mkdir(exist_ok=True)
    outputs = _outputs(out)
    return uncertainty(
        correlations,
        speakers,
        dataset_settings,
        outputs,
        {out / f"{key}.csv": out / f"{key}.html" for key in TABLES},
        allowlist=(),
        settings=settings,
    )


def test_intervals_ranks_pairs_and_meta_analysis(tmp_path: Path) -> None:
    summary = _run(tmp_path, tmp_path / "a").set_index("metric")
    assert sorted(summary.index) == ["cpp_fa", "per", "wada_snr"]
    assert (summary["Avg_ci_low"] < summary["Avg_unrounded"]).all()
    assert (summary["Avg_unrounded"] < summary["Avg_ci_high"]).all()
    assert summary["p_rank_1"].sum() == pytest.approx(1.0)
    assert (summary["n_datasets"] == 4).all()
    pairs = pd.read_csv(tmp_path / "a" / "pairwise.csv")
    assert len(pairs) == 3 and pairs["p_holm"].between(0, 1).all()
    meta = pd.read_csv(tmp_path / "a" / "meta.csv").set_index("metric")
    # One column per corpus: UASpeech's MC (its first column; both have 10 speakers), and
    # the two other corpora: EX shares MC's speakers and stays out.
    assert meta.at["vsa", "reason"] == "fewer than two corpora"  # no r anywhere
    meta = meta.drop(index="vsa")
    assert (meta["k"] == 3).all()
    assert set(meta["columns"]) == {"UASpeech Word MC; Mine; other"}
    assert (meta["estimator"] == "REML").all() and (meta["test"] == "knha_truncated").all()
    assert sorted(p.name for p in (tmp_path / "a" / "forest").iterdir()) == [
        "cpp_fa.png",
        "per.png",
        "wada_snr.png",
    ]
    # The warning the console repeats: the four datasets rate the same speakers in three
    # corpora (300 replicates are enough for Holm over three pairs: no warning of that).
    (shared,) = (tmp_path / "a" / "warnings.txt").read_text().splitlines()
    assert shared.startswith("warning: datasets ua_balanced, ua_unbalanced, mine, other")
    # The report's pages show what a reader needs, each value's interval beside it; the CSVs
    # keep every column (the summary's whole rank distribution).
    page = table_cells((tmp_path / "a" / "summary.html").read_text(encoding="utf-8"))
    assert page[0] == [column.header for column in PAGE_VIEWS["summary"]]
    assert page[0][:3] == ["row", "Avg", "Avg interval"]
    written = pd.read_csv(tmp_path / "a" / "summary.csv", dtype=str).set_index("row")
    for row in page[1:]:
        low, high = written.loc[row[0], ["Avg_ci_low", "Avg_ci_high"]]
        assert row[2] == f"{float(low):.2f} – {float(high):.2f}"
    assert {"p_rank_2", "p_rank_3", "note", "interval"} <= set(written.columns)
    for key in ("pairwise", "meta"):
        header = table_cells((tmp_path / "a" / f"{key}.html").read_text(encoding="utf-8"))[0]
        assert header == [column.header for column in PAGE_VIEWS[key]]
    # Rerun: the same bytes.
    _run(tmp_path, tmp_path / "b")
    for name in ("summary.csv", "pairwise.csv", "meta.csv", "ranks.png", "matrix.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_results_table_shows_the_interval_beside_avg_and_pathbench_file_does_not(
    tmp_path: Path,
) -> None:
    _run(tmp_path, tmp_path / "u")
    correlations, _, settings = _inputs(tmp_path)
    results_table(
        correlations,
        settings,
        tmp_path,
        *(tmp_path / n for n in OUTPUTS),
        {tmp_path / "results_table.csv": tmp_path / "results_table.html"},
        interval=tmp_path / "u" / "summary.csv",
    )
    # The report's page: the row name first (pinned), the values, Avg and its interval beside
    # it, two decimals; the CSV keeps Avg_unrounded and its interval at three.
    page = table_cells((tmp_path / "results_table.html").read_text(encoding="utf-8"))
    labels = ["UASpeech Word MC", "UASpeech Word EX", "Mine", "other"]
    assert page[0][: len(labels) + 4] == ["row", *labels, "Avg", "Avg interval", "n_datasets"]
    assert "Avg_unrounded" not in page[0]
    written = pd.read_csv(tmp_path / "results_table.csv", dtype=str, keep_default_na=False)
    cpp = written.set_index("metric").loc["cpp_fa"]
    (shown,) = [row for row in page[1:] if row[0] == cpp["row"]]
    assert shown[len(labels) + 2] == (
        f"{float(cpp['Avg_ci_low']):.2f} – {float(cpp['Avg_ci_high']):.2f}"
    )
    assert len(cpp["Avg_ci_low"].split(".")[1]) == 3
    table = pd.read_csv(tmp_path / "results_table.csv")
    assert list(table.columns[-5:]) == [
        "Avg",
        "Avg_unrounded",
        "Avg_ci_low",
        "Avg_ci_high",
        "n_datasets",
    ]
    assert table.set_index("metric").loc["vsa", ["Avg", "Avg_ci_low"]].isna().all()
    table = table.dropna(subset=["Avg"])
    assert (table["Avg_ci_low"] <= table["Avg_unrounded"]).all() and (
        table["Avg_unrounded"] <= table["Avg_ci_high"]
    ).all()
    assert (table["Avg"] - table["Avg_unrounded"]).abs().max() <= 0.01
    assert "Avg_ci_low" not in (tmp_path / OUTPUTS[0]).read_text().splitlines()[0]


def test_meta_analysis_column_is_the_users_choice(tmp_path: Path) -> None:
    chosen = {**SETTINGS, "meta_analysis": {"UASpeech": "ua_unbalanced"}}
    _run(tmp_path, tmp_path / "c", chosen)
    meta = pd.read_csv(tmp_path / "c" / "meta.csv").query("k > 0")
    assert set(meta["columns"]) == {"UASpeech Word EX; Mine; other"}
    wrong = {**SETTINGS, "meta_analysis": {"UASpeech": "mine"}}
    with pytest.raises(ValueError, match="not a dataset of that corpus"):
        _run(tmp_path, tmp_path / "d", wrong)


def test_a_run_without_a_single_r_writes_every_output_saying_so(tmp_path: Path) -> None:
    """One rated speaker (a pilot, or a tiny test corpus): no cell has an r, so there is no
    Avg to resample; the stage still writes every table and figure, empty, for the report."""
    speakers = speakers_file(tmp_path / "pilot_speakers.parquet", 0)
    frame = pd.read_parquet(speakers)
    first = frame["speaker_id"].min()
    frame.loc[frame["speaker_id"] != first, "ground_truth"] = float("nan")
    frame.to_parquet(speakers)
    correlations = tmp_path / "pilot_corr.parquet"
    correlate(speakers, correlations, allowlist=(), n_boot=50, seed=1)
    out = tmp_path / "out"
    out.mkdir()
    outputs = _outputs(out)
    summary = uncertainty(
        {"pilot": correlations},
        {"pilot": speakers},
        {"pilot": {"path": "elsewhere/pilot"}},
        outputs,
        {out / f"{key}.csv": out / f"{key}.html" for key in TABLES},
        allowlist=(),
        settings=SETTINGS,
    )
    assert summary.empty
    for key in TABLES:
        assert outputs[key].is_file() and (out / f"{key}.html").is_file()
    assert outputs["ranks"].is_file() and outputs["matrix"].is_file()
    assert outputs["forest"].is_dir()


def test_one_corpus_as_flat_paths_warns_and_with_corpus_pools_as_one() -> None:
    """TORGO's sentence task MC and EX given as flat paths: each is a corpus of its own,
    though they rate the same eight speakers, so the stage warns naming both and the key;
    with ``corpus: TORGO`` they are one corpus, draw together and enter the meta-analysis
    once. A third corpus sharing two ids by chance (``F01``, ``M01``) is not taken for it."""
    torgo = {f"{s}{i:02d}" for s in "FM" for i in range(1, 5)}
    rated = {"torgo_mc": torgo, "torgo_ex": torgo, "other": {"F01", "M01", "X1", "X2", "X3"}}
    flat = {name: {"path": f"elsewhere/{name}"} for name in rated}
    (warning,) = shared_speaker_warnings(results_columns(flat), rated)
    assert "torgo_mc, torgo_ex" in warning and "other" not in warning
    assert "datasets.torgo_mc.corpus" in warning and "datasets.torgo_ex.corpus" in warning
    joined = {
        **flat,
        **{
            name: {**flat[name], "corpus": "TORGO", "task": "Sentence", "condition": condition}
            for name, condition in (("torgo_mc", "MC"), ("torgo_ex", "EX"))
        },
    }
    columns = results_columns(joined)
    assert shared_speaker_warnings(columns, rated) == []
    assert [corpus_of(c) for c in columns] == ["TORGO", "TORGO", "other"]


def test_shared_speakers_warning_says_how_many_recordings_are_identical() -> None:
    """Two flat datasets rating the same three speakers: the warning counts the distinct
    recordings (by the manifests' digests) of those speakers and how many are in both, and
    says the recordings were not compared where a manifest has no digests."""
    manifest = pd.DataFrame(
        {
            "speaker_id": ["A", "A", "B", "C", "Z"],
            "audio_sha256": ["a1", "a2", "b1", "c1", ""],
        }
    )
    copy = manifest.assign(audio_sha256=["a1", "a2", "b1", "c9", "z1"])
    rated = {"first": {"A", "B", "C"}, "second": {"A", "B", "C"}}
    columns = results_columns({name: {"path": f"elsewhere/{name}"} for name in rated})
    digests = {"first": recording_digests(manifest), "second": recording_digests(copy)}
    assert digests["first"] == {"A": {"a1", "a2"}, "B": {"b1"}, "C": {"c1"}}
    (warning,) = shared_speaker_warnings(columns, rated, digests)
    assert "3 of 5 recordings of these speakers identical (SHA-256)" in warning
    unchecked = {**digests, "second": recording_digests(copy.assign(audio_sha256=""))}
    (warning,) = shared_speaker_warnings(columns, rated, unchecked)
    assert "not compared: no audio digests for second" in warning


def test_a_one_dataset_run_says_why_forest_is_empty_and_verdicts_without_predictors(
    tmp_path: Path,
) -> None:
    """One dataset, no predictors (the demo): forest/ holds a note saying why it has no plot
    (one corpus), which the report's ``{metric}.png`` pattern does not match, and
    predictor_verdicts.csv a row saying there are no predictors and how to add one."""
    speakers = speakers_file(tmp_path / "demo_speakers.parquet", 0)
    correlations = tmp_path / "demo_corr.parquet"
    correlate(speakers, correlations, allowlist=(), n_boot=50, seed=1)
    out = tmp_path / "out"
    out.mkdir()
    outputs = _outputs(out)
    uncertainty(
        {"demo": correlations},
        {"demo": speakers},
        {"demo": {"path": "elsewhere/demo"}},
        outputs,
        {},
        allowlist=(),
        settings=SETTINGS,
    )
    assert [p.name for p in outputs["forest"].iterdir()] == [FOREST_NOTE]
    note = (outputs["forest"] / FOREST_NOTE).read_text()
    assert note.startswith("No forest plot") and "this run's corpora (demo)" in note
    verdicts = pd.read_csv(outputs["verdicts"], keep_default_na=False)
    assert verdicts.to_dict("records") == [
        {"predictor": "", "category": "", "verdict": NO_PREDICTORS}
    ]
    assert "docs/own-predictor.md" in NO_PREDICTORS


def test_flagged_measures_share_one_warning() -> None:
    """A small corpus flags most measures at once: one line names them all with their shares,
    and nothing flagged says nothing."""
    summary = pd.DataFrame(
        {
            "metric": ["cpp", "vsa", "wpm"],
            "flagged": [True, False, True],
            "undefined_share": [0.35, 0.0, 0.49],
        }
    )
    (warning,) = flagged_warning(summary)
    assert warning.startswith("warning: 2 of 3 measure(s) flagged")
    assert "cpp 35%, wpm 49%" in warning and "vsa" not in warning
    assert flagged_warning(summary.assign(flagged=False)) == []
