"""The ``export_speaker_csv`` rule's function: the speakers table in, PathBench's
external-predictor CSVs out, which ``pathbench-flow correlate`` must read back to the same result
the workflow's own ``correlate`` rule reports; and the ``correlate_utterances`` rule's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pathbench_flow.common.io import read_parquet, write_parquet
from pathbench_flow.schemas.tables import REFERENCE_SCORE_SCHEMA, SCORE_SCHEMA, SPEAKERS_SCHEMA
from pathbench_flow.stages.analysis import correlate, correlate_utterances, export_speaker_csv
from pathbench_flow.stats.correlation import correlate_predictions, read_predictions_csv

SPEAKERS = ["a,b", 'q"x', "S03", "S01", "S02", "C01", "C02"]
"""Kaldi speaker ids may hold commas and quotes; the last two are unrated controls."""


@pytest.fixture
def speakers_path(tmp_path: Path) -> Path:
    """A speakers table as ``aggregate_speakers`` writes it: ``cpp_fa`` has no value for one
    rated speaker, ``vsa`` for nobody."""
    rng = np.random.default_rng(3)
    truth = [20.0, 35.0, 50.0, 65.0, 80.0, np.nan, np.nan]
    cpp = rng.normal(10.0, 2.0, len(SPEAKERS)) + np.nan_to_num(truth) / 20
    cpp[2] = np.nan
    rows = [
        (speaker, metric, evaluator, variant, value, 4, 0 if np.isnan(value) else 4, t)
        for metric, evaluator, variant, values in (
            ("cpp_fa", "cpp", "fa", cpp),
            ("vsa", "vsa", "raw", np.full(len(SPEAKERS), np.nan)),
        )
        for speaker, value, t in zip(SPEAKERS, values, truth, strict=True)
    ]
    path = tmp_path / "speakers.parquet"
    frame = pd.DataFrame(rows, columns=SPEAKERS_SCHEMA.names)
    write_parquet(frame, path, SPEAKERS_SCHEMA, ["metric", "speaker_id"])
    return path


def test_one_csv_per_metric_with_the_valued_speakers_sorted(speakers_path, tmp_path):
    out = tmp_path / "speaker_csv" / "nested"
    export_speaker_csv(speakers_path, out)
    assert sorted(p.name for p in out.iterdir()) == ["cpp_fa.csv", "vsa.csv"]
    assert (out / "vsa.csv").read_text() == "speaker_id,score\n"
    speakers = read_parquet(speakers_path)
    cpp = speakers[speakers["metric"] == "cpp_fa"].dropna(subset=["value"])
    exported = read_predictions_csv(out / "cpp_fa.csv")
    assert list(exported.index) == sorted(cpp["speaker_id"])
    assert "S03" not in exported.index
    # Scores are written in full precision: the CSV gives back the same floats.
    assert exported.to_dict() == dict(zip(cpp["speaker_id"], cpp["value"], strict=True))
    text = (out / "cpp_fa.csv").read_text()
    assert '"a,b",' in text and '"q""x",' in text


def test_the_csv_reproduces_the_workflow_correlation(speakers_path, tmp_path):
    correlations = tmp_path / "correlations.parquet"
    table = correlate(speakers_path, correlations, allowlist=(), n_boot=200, seed=5)
    export_speaker_csv(speakers_path, tmp_path / "csv")
    speakers = read_parquet(speakers_path)
    truth = speakers.drop_duplicates("speaker_id").set_index("speaker_id")["ground_truth"]
    again = correlate_predictions(
        read_predictions_csv(tmp_path / "csv" / "cpp_fa.csv"), truth, n_boot=200, seed=5
    )
    row = table.set_index("metric").loc["cpp_fa"]
    assert (again.n, again.n_no_value) == (row["n"], row["n_no_value"]) == (4, 1)
    assert again.pearson_r == row["pearson_r"]
    assert (again.ci_low, again.ci_high) == (row["ci_low"], row["ci_high"])


def test_rerun_writes_the_same_bytes_and_refuses_unsafe_metric_names(speakers_path, tmp_path):
    export_speaker_csv(speakers_path, tmp_path / "one")
    export_speaker_csv(speakers_path, tmp_path / "two")
    for name in ("cpp_fa.csv", "vsa.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    speakers = read_parquet(speakers_path)
    speakers.loc[speakers["metric"] == "vsa", "metric"] = "../vsa"
    bad = tmp_path / "bad.parquet"
    write_parquet(speakers, bad, SPEAKERS_SCHEMA, ["metric", "speaker_id"])
    with pytest.raises(ValueError, match="unusable as file names"):
        export_speaker_csv(bad, tmp_path / "three")
    assert not (tmp_path / "vsa.csv").exists()


def test_utterance_correlations_of_a_dataset_with_utt2score(tmp_path, capsys):
    """The ``correlate_utterances`` rule's function on a small dataset that ships utt2score:
    every utterance-level metric (a reference measure too) gets PathBench's r over the rated
    manifest utterances; ratings of utterances outside the manifest are ignored and logged."""
    utterances = [f"S{s}_{k}" for s in range(3) for k in range(2)]
    dataset = tmp_path / "yt"
    dataset.mkdir()
    ratings = [3.4, 2.9, "N/A", 1.5, 4.1, 2.2]
    (dataset / "utt2score").write_text(
        "".join(f"{u} {r}\n" for u, r in zip(utterances, ratings, strict=True)) + "dropped 5\n"
    )
    manifest = tmp_path / "manifest.parquet"
    pd.DataFrame({"utt_id": utterances, "speaker_id": [u[:2] for u in utterances]}).to_parquet(
        manifest
    )
    cpp = [3.0, 2.5, 9.0, 1.0, 4.4, 1.9]
    estoi = [0.7, 0.6, 0.1, 0.2, 0.9, np.nan]
    scores = tmp_path / "cpp.parquet"
    references = tmp_path / "p_estoi.parquet"
    frame = pd.DataFrame(
        {
            "utt_id": utterances,
            "speaker_id": [u[:2] for u in utterances],
            "metric": "cpp",
            "evaluator": "cpp",
            "variant": "raw",
            "score": cpp,
            "status": "ok",
            "message": "",
        }
    )
    write_parquet(frame, scores, SCORE_SCHEMA, ["utt_id"])
    reference = frame.assign(
        metric="p_estoi_fa_all",
        evaluator="p_estoi",
        variant="fa",
        score=estoi,
        reference_type="all",
        n_references=2,
    )
    write_parquet(reference, references, REFERENCE_SCORE_SCHEMA, ["utt_id"])
    out = tmp_path / "utterance_correlations.csv"
    page = tmp_path / "utterance_correlations.html"
    # The speaker-level table flipped cpp by PathBench's vote: so are its utterances.
    signs = tmp_path / "sign_rules.csv"
    signs.write_text(
        "metric,row,sign,sign_rule\ncpp,cpp,-1,vote: flipped\n"
        "p_estoi_fa_all,P-ESTOI,1,expected +1\n"
    )
    correlate_utterances(manifest, dataset / "utt2score", [scores, references], signs, out, page)

    table = pd.read_csv(out).set_index("metric")
    assert table.at["cpp", "r_aligned"] == -table.at["cpp", "r_raw"] < 0
    assert table.at["cpp", "sign_rule"] == "vote: flipped"
    assert table.at["p_estoi_fa_all", "r_aligned"] == table.at["p_estoi_fa_all", "r_raw"]
    assert "direction" not in table.columns and "aligned_r" not in table.columns
    used = [0, 1, 3, 4]  # S1_0 is unrated, S2_1 has no P-ESTOI
    truth = np.array([3.4, 2.9, 1.5, 4.1])
    assert table.at["cpp", "r_raw"] == pytest.approx(
        np.corrcoef(np.array(cpp)[used], truth)[0, 1], abs=1e-9
    )
    assert table.at["p_estoi_fa_all", "r_raw"] == pytest.approx(
        np.corrcoef(np.array(estoi)[used], truth)[0, 1], abs=1e-9
    )
    assert table["n"].tolist() == [4, 4] and table["n_speakers"].tolist() == [3, 3]
    assert table.at["cpp", "excluded_by"] == "p_estoi_fa_all: 1"
    assert "5 of 6 manifest utterances rated; 1 rated utterance(s) not in the manifest, " in (
        capsys.readouterr().err
    )
    first = out.read_bytes()
    correlate_utterances(manifest, dataset / "utt2score", [scores, references], signs, out, page)
    assert out.read_bytes() == first
    correlate_utterances(
        manifest, dataset / "utt2score", [], signs, out, page
    )  # speaker measures only
    assert out.read_text().startswith("metric,row,category,sign,sign_rule,r_aligned,n,")
    assert len(out.read_text().splitlines()) == 1
