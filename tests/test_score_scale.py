"""``datasets.<name>.score_scale``: a dataset rated for severity is correlated as intelligibility.

The committed dataset (.test/data/mine) and a copy whose ratings are reversed (max + min -
score, a severity scale) go through the stages the ratings reach, called directly: validation
(which echoes the scale), aggregation (which applies it), correlation, the run's signs and the
readers' tables. Read with ``score_scale: severity`` the copy must give the original's tables;
read as intelligibility, its every r is inverted, which is what the key is for. The scores are
made up: no stage between validation and aggregation reads a rating.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from pathbench_flow.common.io import read_parquet, write_parquet
from pathbench_flow.data.score_scale import (
    DEFAULT_SCALE,
    SEVERITY,
    as_intelligibility,
    score_scale_of,
)
from pathbench_flow.reporting.results_table import aligned_r, write_signs
from pathbench_flow.schemas.config import schema_problems
from pathbench_flow.schemas.tables import SCORE_SCHEMA
from pathbench_flow.stages.aggregate import aggregate_speakers
from pathbench_flow.stages.analysis import align_correlations, correlate, correlate_utterances
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.workflow_run import REPO, copy_workflow, dry_run

DATASET = REPO / ".test" / "data" / "mine"
USER_CONFIG = yaml.safe_load((REPO / ".test" / "config" / "config.yaml").read_text())
SCORES = {"cpp": [9.1, 8.7, 12.5, 11.0, 10.2, 9.9, 13.4, 12.8], "wpm": [95, 120, 150, 140]}
"""Made-up values per utterance in utt_id order (wpm: per speaker, both utterances alike);
cpp rises with the ratings but not in rank order, so r, rho and the intervals all differ."""
UTT2SCORE = [40.0, 45.0, 70.0, 75.0, 55.0, 60.0, 85.0, 90.0]
"""Utterance ratings, in utt_id order, on the same scale as spk2score."""


def reversed_lines(path: Path, values: list[float] | None = None) -> str:
    """A Kaldi ratings file with every value v replaced by max + min - v (or ``values``)."""
    ids, old = zip(*(line.split() for line in path.read_text().splitlines()), strict=True)
    numbers = [float(v) for v in old] if values is None else values
    top, bottom = max(numbers), min(numbers)
    return "".join(f"{i} {top + bottom - v:g}\n" for i, v in zip(ids, numbers, strict=True))


def copies(tmp_path: Path) -> tuple[Path, Path]:
    """The committed dataset with utt2score added, and its copy rated for severity."""
    original, severe = tmp_path / "original", tmp_path / "severe"
    shutil.copytree(DATASET, original)
    utterances = sorted(line.split()[0] for line in (original / "utt2spk").read_text().splitlines())
    (original / "utt2score").write_text(
        "".join(f"{u} {v:g}\n" for u, v in zip(utterances, UTT2SCORE, strict=True))
    )
    shutil.copytree(original, severe)
    for name in ("spk2score", "utt2score"):
        (severe / name).write_text(reversed_lines(original / name))
    return original, severe


def run_stages(dataset: Path, scale: str, out: Path) -> dict:
    """Validation to the readers' tables for ``dataset`` read on ``scale``: its aligned
    speaker and utterance correlations and validation's ``ratings``."""
    out.mkdir()
    manifest = out / "manifest.parquet"
    validate_dataset(
        dataset, manifest, out / "validation.json", n_shards=1, check_audio=False, score_scale=scale
    )
    rows = read_parquet(manifest)[["utt_id", "speaker_id"]].sort_values("utt_id")
    frames = [
        rows.assign(metric=name, evaluator=name, variant="raw", status="ok", message="").assign(
            score=np.repeat(values, len(rows) // len(values)).astype(float)
        )
        for name, values in SCORES.items()
    ]
    scores = out / "scores.parquet"
    write_parquet(pd.concat(frames), scores, SCORE_SCHEMA, ["utt_id", "metric"])
    speakers, correlations = out / "speakers.parquet", out / "correlations.parquet"
    aggregate_speakers(manifest, [scores], [], speakers, out / "aggregation.json", (), scale)
    correlate(speakers, correlations, allowlist=(), n_boot=200, seed=7)
    signs = write_signs(aligned_r({"d": read_parquet(correlations)}), out / "signs.csv")
    tables = {
        "speakers": align_correlations(
            correlations, signs, out / "c.csv", out / "c.html", score_scale=scale
        ),
        "utterances": correlate_utterances(
            manifest,
            dataset / "utt2score",
            [scores],
            signs,
            out / "u.csv",
            out / "u.html",
            score_scale=scale,
        ),
    }
    ratings = json.loads((out / "validation.json").read_text())["ratings"]
    return tables | {"ratings": ratings, "signs": signs.read_text()}


def test_severity_ratings_reversed_give_the_original_tables(tmp_path):
    original, severe = copies(tmp_path)
    want = run_stages(original, DEFAULT_SCALE, tmp_path / "a")
    got = run_stages(severe, SEVERITY, tmp_path / "b")
    assert got["signs"] == want["signs"]
    for level, name in (("speakers", "spk2score"), ("utterances", "utt2score")):
        assert set(want[level]["ground_truth"]) == {name}
        assert set(got[level]["ground_truth"]) == {f"-{name}"}
        pd.testing.assert_frame_equal(
            got[level].drop(columns="ground_truth"),
            want[level].drop(columns="ground_truth"),
            check_exact=False,
            rtol=1e-9,
        )
    assert want["speakers"]["r_raw"].notna().all()
    assert got["ratings"]["score_scale"] == SEVERITY
    assert got["ratings"]["ground_truth"] == "-spk2score"
    assert got["ratings"]["n_rated_speakers"] == 4
    assert "correlated as -spk2score" in got["ratings"]["summary"]
    assert "PathBench's convention" in want["ratings"]["summary"]


def test_without_the_key_severity_ratings_invert_every_r(tmp_path):
    """What the key prevents: the reversed copy read as intelligibility flips each raw r."""
    original, severe = copies(tmp_path)
    want = run_stages(original, DEFAULT_SCALE, tmp_path / "a")["speakers"]
    silent = run_stages(severe, DEFAULT_SCALE, tmp_path / "b")["speakers"]
    np.testing.assert_allclose(silent["r_raw"], -want["r_raw"], rtol=1e-9)


def test_negation_keeps_unrated_speakers_unrated():
    ratings = pd.Series([3.0, np.nan, 0.0], index=["a", "b", "c"])
    turned = as_intelligibility(ratings, SEVERITY)
    assert turned.tolist()[0] == -3.0 and np.isnan(turned["b"]) and turned["c"] == 0
    assert as_intelligibility(ratings, DEFAULT_SCALE) is ratings
    with pytest.raises(ValueError, match="score_scale must be one of intelligibility, severity"):
        as_intelligibility(ratings, "sev")
    assert score_scale_of({"datasets": {"d": {"path": "x"}}}, "d") == DEFAULT_SCALE


def test_the_workflow_accepts_the_key_and_a_bad_value_names_it(tmp_path):
    def config(scale: str) -> dict:
        entry = {"path": str(DATASET), "score_scale": scale}
        return USER_CONFIG | {"datasets": {"mine": entry}}

    plan = dry_run(copy_workflow(tmp_path / "wf"), config(SEVERITY)).stdout
    assert "results/mine/speakers.parquet" in plan
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    (problem,) = schema_problems(config("worse"), schema, [])
    assert problem.startswith("datasets.mine.score_scale")
    assert "'worse' is not one of ['intelligibility', 'severity']" in problem
