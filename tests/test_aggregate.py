"""Speaker aggregation: the report names every speaker a metric's correlation will lose."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from pathbench_flow.common.io import write_parquet
from pathbench_flow.evaluators.metric import FA, MetricKey
from pathbench_flow.stages.aggregate import aggregate_speakers
from pathbench_flow.stages.score import SCORE_SCHEMA

SPEAKERS = {"A": 10.0, "B": 30.0, "C": 50.0, "D": 70.0, "E": 90.0, "K": np.nan}


def _write_inputs(tmp_path, scores: dict[MetricKey, dict[str, float]]):
    manifest = pd.DataFrame(
        {
            "utt_id": [f"{s}_1" for s in SPEAKERS],
            "speaker_id": list(SPEAKERS),
            "score": list(SPEAKERS.values()),
        }
    )
    manifest.to_parquet(tmp_path / "manifest.parquet")
    rows = [
        {
            "utt_id": f"{speaker}_1",
            "speaker_id": speaker,
            "metric": metric.name,
            "evaluator": metric.evaluator,
            "variant": metric.variant,
            "score": value,
            "status": "ok" if np.isfinite(value) else "no_references",
            "message": "",
        }
        for metric, by_speaker in scores.items()
        for speaker, value in by_speaker.items()
    ]
    path = tmp_path / "scores.parquet"
    write_parquet(pd.DataFrame(rows), path, SCORE_SCHEMA, ["utt_id", "metric"])
    return tmp_path / "manifest.parquet", [path]


def test_report_names_excluded_speakers_and_the_metric_that_removed_them(tmp_path):
    manifest, scores = _write_inputs(
        tmp_path,
        {
            MetricKey("cpp"): {"A": 1.0, "B": 2.0, "C": 2.5, "D": 4.0, "E": 4.5, "K": 3.0},
            MetricKey("vsa"): {"A": 1.0, "B": np.nan, "C": 2.0, "D": 3.0, "E": 5.0, "K": 1.0},
            # 0.0 for a failed trim and NaN elsewhere: constant, so it removes nobody
            MetricKey("p_estoi", FA): {
                "A": 0.0,
                "B": 0.0,
                "C": 0.0,
                "D": np.nan,
                "E": np.nan,
                "K": 0.0,
            },
        },
    )
    aggregate_speakers(
        manifest, scores, [], tmp_path / "speakers.parquet", tmp_path / "aggregation.json"
    )
    report = json.loads((tmp_path / "aggregation.json").read_text())
    common = report["common_speaker_set"]
    assert common["speakers"] == ["A", "C", "D", "E"]
    assert common["constraining_metrics"] == ["cpp", "vsa"]
    assert common["excluded_speakers"]["cpp"] == {"B": ["vsa"]}
    assert common["excluded_speakers"]["vsa"] == {}
    assert "same value" in common["not_constraining"]["p_estoi_fa"]
    assert report["speakers_without_value"]["p_estoi_fa"] == ["D", "E"]


def test_a_speakers_mean_does_not_depend_on_how_shards_split_the_utterances(tmp_path):
    """Shards follow the text, so shard files concatenate out of utt_id order; a mean summed
    in that order would differ in its last bits from one summed in utt_id order."""
    values = np.random.default_rng(0).uniform(0, 0.001, 40)
    rows = pd.DataFrame(
        {
            "utt_id": [f"A_{k:02d}" for k in range(40)],
            "speaker_id": "A",
            "metric": "cpp",
            "evaluator": "cpp",
            "variant": "raw",
            "score": values,
            "status": "ok",
            "message": "",
        }
    )
    manifest = tmp_path / "manifest.parquet"
    rows[["utt_id", "speaker_id", "score"]].assign(score=50.0).to_parquet(manifest)
    whole = tmp_path / "whole.parquet"
    write_parquet(rows, whole, SCORE_SCHEMA, ["utt_id", "metric"])
    # Every other utterance in a second shard, listed first.
    shards = [tmp_path / "odd.parquet", tmp_path / "even.parquet"]
    for path, part in zip(shards, (rows.iloc[1::2], rows.iloc[::2]), strict=True):
        write_parquet(part, path, SCORE_SCHEMA, ["utt_id", "metric"])
    in_order = rows.groupby("speaker_id")["score"].mean().iloc[0]
    shuffled = pd.concat([rows.iloc[1::2], rows.iloc[::2]])
    assert shuffled.groupby("speaker_id")["score"].mean().iloc[0] != in_order

    outputs = {}
    for name, paths in (("whole", [whole]), ("split", shards)):
        out = tmp_path / f"{name}_speakers.parquet"
        aggregate_speakers(manifest, paths, [], out, tmp_path / f"{name}.json")
        outputs[name] = out.read_bytes()
    assert outputs["split"] == outputs["whole"]
