"""The validation stage's outputs: manifest schema, shards and the findings report."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

from pathbench_flow.data.manifest import assign_shards, in_utterance_order, load_manifest
from pathbench_flow.data.validation import DatasetError
from pathbench_flow.schemas.tables import MANIFEST_SCHEMA
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.kaldi_builder import build_dataset, write_lines


def test_manifest_schema_sort_and_metadata(tmp_path):
    root = build_dataset(tmp_path / "d")
    validate_dataset(root, tmp_path / "m.parquet", tmp_path / "v.json", n_shards=2)
    table = pq.read_table(tmp_path / "m.parquet")
    assert table.schema.remove_metadata() == MANIFEST_SCHEMA
    assert b"pathbench.config_digest" in table.schema.metadata
    frame = load_manifest(tmp_path / "m.parquet")
    assert list(frame["utt_id"]) == sorted(frame["utt_id"])
    # Shards follow the text ("a dog ran" before "the cat sat"), the rows the utt_id.
    assert list(frame["shard"]) == [1, 0, 1, 0]
    assert list(load_manifest(tmp_path / "m.parquet", shard=1)["utt_id"]) == ["spk1_u0", "spk2_u0"]
    report = json.loads((tmp_path / "v.json").read_text())
    assert report["outcome"] == "ok" and report["counts"]["utterances"] == 4


def test_shards_do_not_depend_on_line_order(tmp_path):
    ids = [f"u{k:03d}" for k in range(10)]
    texts = [f"word {k % 4}" for k in range(10)]
    forward = dict(zip(ids, assign_shards(ids, texts, 3), strict=True))
    backward = dict(zip(ids[::-1], assign_shards(ids[::-1], texts[::-1], 3), strict=True))
    assert forward == backward
    assert sorted(set(forward.values())) == [0, 1, 2]
    assert [list(forward.values()).count(s) for s in range(3)] == [4, 3, 3]


def test_recordings_of_one_text_share_a_shard():
    """Blocks follow the text, so each text's readers are together whoever reads it."""
    speakers, words = [f"s{k}" for k in range(5)], [f"w{k}" for k in range(6)]
    ids = [f"{s}_{w}" for s in speakers for w in words]
    texts = [w for _s in speakers for w in words]
    shards = assign_shards(ids, texts, 6)
    by_text = {w: {int(shards[i]) for i, t in enumerate(texts) if t == w} for w in words}
    assert by_text == {w: {k} for k, w in enumerate(words)}


def test_same_input_gives_byte_identical_outputs(tmp_path):
    root = build_dataset(tmp_path / "d")
    for name in ("a", "b"):
        validate_dataset(root, tmp_path / f"{name}.parquet", tmp_path / f"{name}.json", n_shards=1)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_failed_validation_still_writes_its_report(tmp_path):
    """Beside the declared outputs, which Snakemake deletes when the job fails."""
    root = build_dataset(tmp_path / "d")
    write_lines(root / "spk2gender", ["spk1 q", "spk2 m"])
    with pytest.raises(DatasetError, match="spk2gender:1"):
        validate_dataset(root, tmp_path / "m.parquet", tmp_path / "v.json", n_shards=1)
    report = json.loads((tmp_path / "v.failed.json").read_text())
    assert report["outcome"] == "failed" and report["findings"][0]["value"] == "q"
    assert not (tmp_path / "m.parquet").exists() and not (tmp_path / "v.json").exists()


def test_drop_policy_lists_dropped_utterances(tmp_path):
    root = build_dataset(tmp_path / "d")
    (root / "wav" / "spk1_u1.wav").unlink()
    validate_dataset(root, tmp_path / "m.parquet", tmp_path / "v.json", n_shards=1, on_error="drop")
    report = json.loads((tmp_path / "v.json").read_text())
    assert report["dropped_utterances"] == ["spk1_u1"] and report["counts"]["utterances"] == 3


def test_shard_frames_join_in_utt_id_order_whatever_the_split():
    """Text-ordered shards hold a speaker's utterances out of utt_id order; joined, the rows
    come back in one order, ties (one utterance's several rows) in their shard order."""
    first = pd.DataFrame({"utt_id": ["s2_b", "s1_b", "s1_b"], "value": [1.0, 2.0, 3.0]})
    second = pd.DataFrame({"utt_id": ["s1_a", "s2_a"], "value": [4.0, 5.0]})
    joined = in_utterance_order([first, second])
    assert joined["utt_id"].tolist() == ["s1_a", "s1_b", "s1_b", "s2_a", "s2_b"]
    assert joined["value"].tolist() == [4.0, 2.0, 3.0, 5.0, 1.0]
    assert joined.index.tolist() == list(range(5))
    speakers = pd.DataFrame({"speaker_id": ["b", "a"], "value": [1.0, 2.0]})
    assert in_utterance_order([speakers])["speaker_id"].tolist() == ["b", "a"]
