"""Per-shard inputs: each job's manifest slice and the audio files it declares."""

from __future__ import annotations

import json

from pathbench_flow.common.io import read_parquet
from pathbench_flow.data.shard_plan import listed_audio, reference_shards, shard_audio
from pathbench_flow.stages.shards import shard_manifest, write_shards
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.kaldi_builder import build_dataset, write_lines


def test_listed_audio_keeps_existing_files_only(tmp_path):
    root = build_dataset(tmp_path / "d")
    lines = (root / "wav.scp").read_text().splitlines()
    write_lines(root / "wav.scp", [*lines, "spk9_u0 wav/missing.wav", "spk9_u1 sox x.wav - |"])
    assert listed_audio(root) == sorted(str(p) for p in (root / "wav").glob("*.wav"))
    assert listed_audio(tmp_path / "nowhere") == []


def test_shard_slices_and_their_audio(tmp_path):
    test = build_dataset(tmp_path / "test")
    control = build_dataset(tmp_path / "control")
    manifest, reference = tmp_path / "m.parquet", tmp_path / "r.parquet"
    # One utterance a shard, in text order: "a dog ran" (spk1_u1, spk2_u1) before "the cat sat".
    validate_dataset(test, manifest, tmp_path / "v.json", n_shards=4)
    validate_dataset(control, reference, tmp_path / "rv.json", n_shards=1)
    # The two builds' speaker ids collide: different people here (shared_speaker_ids below).
    outputs = {
        name: tmp_path / f"0.{name}.parquet" for name in ("rows", "related", "reference_related")
    }
    outputs["audio"] = tmp_path / "0.json"
    by_kind = {kind: [path] for kind, path in outputs.items()}
    write_shards(manifest, [0], by_kind, reference, ("control", "all"), "distinct")

    rows = read_parquet(outputs["rows"])
    assert list(rows["utt_id"]) == ["spk1_u1"] and set(rows["shard"]) == {0}
    # same text as shard 0: spk2's reading of it (shard 1) and the control set's two
    assert list(read_parquet(outputs["related"])["utt_id"]) == ["spk1_u1", "spk2_u1"]
    assert list(read_parquet(outputs["reference_related"])["utt_id"]) == ["spk1_u1", "spk2_u1"]
    own = [str(test / "wav" / "spk1_u1.wav")]
    assert shard_audio(outputs["audio"]) == own
    # control: same text and gender (f, spk1) in the control set only
    assert shard_audio(outputs["audio"], "control") == sorted(
        own + [str(control / "wav" / "spk1_u1.wav")]
    )
    everyone = shard_audio(outputs["audio"], "all")
    assert str(test / "wav" / "spk2_u1.wav") in everyone and len(everyone) == 4
    assert reference_shards(outputs["audio"], "control") == ([], [0])
    assert reference_shards(outputs["audio"], "all") == ([1], [0])
    first = outputs["audio"].read_bytes()
    write_shards(manifest, [0], by_kind, reference, ("control", "all"), "distinct")
    assert outputs["audio"].read_bytes() == first, "rewriting must give the same bytes"
    assert json.loads(first)["references"]["control"]["shards"] == []


def test_listed_audio_for_a_storage_provider_keeps_missing_files_but_no_commands(tmp_path):
    root = build_dataset(tmp_path / "d")
    lines = (root / "wav.scp").read_text().splitlines()
    write_lines(root / "wav.scp", [*lines, "spk9_u0 wav/missing.wav", "spk9_u1 sox x.wav - |"])
    assert listed_audio(root, existing_only=False) == sorted(
        [*(str(p) for p in (root / "wav").glob("*.wav")), str(root / "wav" / "missing.wav")]
    )


def test_one_job_writes_every_shard_as_a_job_per_shard_would(tmp_path):
    """The shard checkpoint writes every shard of every dataset and reference set in one job:
    each file is the bytes a call for its shard alone writes. Two datasets, the first with a
    reference set of one shard, the second with none."""
    first, control, second = (build_dataset(tmp_path / name) for name in ("a", "ctl", "b"))
    manifests = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    reference = tmp_path / "ctl.parquet"
    validate_dataset(first, manifests[0], tmp_path / "av.json", n_shards=2)
    validate_dataset(control, reference, tmp_path / "cv.json", n_shards=1)
    validate_dataset(second, manifests[1], tmp_path / "bv.json", n_shards=2)
    suffixes = {
        "rows": "parquet",
        "related": "related.parquet",
        "reference_related": "reference_related.parquet",
        "audio": "json",
    }
    together = tmp_path / "together"
    together.mkdir()
    outputs = {
        kind: [together / f"{name}{shard}.{suffix}" for name in "ab" for shard in (0, 1)]
        for kind, suffix in suffixes.items()
    }
    outputs["reference_rows"] = [together / "ctl0.parquet"]
    outputs["reference_audio"] = [together / "ctl0.json"]
    datasets = [
        {"shards": [0, 1], "reference_shards": [0]},
        {"shards": [0, 1], "reference_shards": []},
    ]
    shard_manifest(datasets, manifests, [reference], outputs, ("control", "all"))

    alone = tmp_path / "alone"
    alone.mkdir()
    for name, manifest, references in (("a", manifests[0], reference), ("b", manifests[1], None)):
        for shard in (0, 1):
            files = {kind: [alone / f"{name}{shard}.{suffix}"] for kind, suffix in suffixes.items()}
            write_shards(manifest, [shard], files, references, ("control", "all"))
    write_shards(reference, [0], {"rows": [alone / "ctl0.parquet"], "audio": [alone / "ctl0.json"]})
    written = sorted(path.name for path in together.iterdir())
    assert written == sorted(path.name for path in alone.iterdir()) and len(written) == 18
    for name in written:
        assert (together / name).read_bytes() == (alone / name).read_bytes(), name
