"""A job opens dataset files only at the copies of its declared inputs (common.staging).

Without S3: a storage provider's local copy is a path that ends with the configured one, so a
dataset copied below such a prefix, with the original gone, is what a job without a shared file
system sees. tests/test_object_storage.py runs the same through a real S3 API.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from pathbench_flow.common import staging
from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.io import read_parquet
from pathbench_flow.common.staging import StagedInputs, is_present, located, stage
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.kaldi_builder import build_dataset

STORAGE = Path(".snakemake/storage/s3/bucket/run")


@pytest.fixture(autouse=True)
def no_job_inputs(monkeypatch):
    """Each test starts, and leaves the process, without staged inputs."""
    monkeypatch.setattr(staging, "_staged", None)


def _staged_copy(root: Path, original: Path) -> Path:
    """Copy ``original`` to where a storage provider stages it below ``root``."""
    copy = root / STORAGE / str(original).lstrip("/")
    shutil.copytree(original, copy)
    return copy


def test_a_logical_path_maps_to_the_input_that_is_it_or_ends_with_it():
    inputs = [
        ".test/data/mine/wav.scp",
        f"{STORAGE}/tmp/corpus/pathological/wav/a.wav",
        f"{STORAGE}/corpus/control/utt2spk",
    ]
    staged = StagedInputs(inputs)
    assert staged[".test/data/mine/wav.scp"] == ".test/data/mine/wav.scp"
    assert staged["/tmp/corpus/pathological/wav/a.wav"] == inputs[1]
    assert staged["/tmp/corpus/pathological/./wav/a.wav"] == inputs[1]
    # a dataset configured as an object-store URL
    assert staged["s3://bucket/run/corpus/control/utt2spk"] == inputs[2]
    assert len(staged) == 3 and sorted(staged) == sorted(inputs)


def test_a_path_outside_the_job_inputs_is_refused():
    stage([f"{STORAGE}/tmp/corpus/pathological/wav/a.wav"])
    with pytest.raises(FileNotFoundError, match="not among the job's declared inputs") as caught:
        located("/tmp/corpus/pathological/wav/b.wav")
    assert caught.value.filename == "/tmp/corpus/pathological/wav/b.wav"
    # only whole path components match: "a.wav" of another directory is another file
    with pytest.raises(FileNotFoundError):
        located("/tmp/other/pathological/wav/a.wav")
    assert not is_present("/tmp/corpus/pathological/wav/b.wav")


def test_two_candidate_copies_are_an_error_not_a_guess():
    staged = StagedInputs(["x/data/wav/a.wav", "y/data/wav/a.wav"])
    with pytest.raises(ValueError, match="several of the job's inputs"):
        staged["data/wav/a.wav"]


def test_without_staged_inputs_paths_open_where_they_are(tmp_path):
    assert located(tmp_path / "anything") == tmp_path / "anything"


def test_validation_and_audio_read_the_staged_copy_and_keep_logical_paths(tmp_path, monkeypatch):
    original = build_dataset(tmp_path / "corpus" / "test")
    local = tmp_path / "local"
    validate_dataset(original, local / "m.parquet", local / "v.json", n_shards=1)
    expected = read_parquet(local / "m.parquet")
    first = expected["audio_path"].iloc[0]
    first_audio = load_audio(first)

    job = tmp_path / "job"
    copy = _staged_copy(job, original)
    original.rename(tmp_path / "hidden")  # nothing left at the configured path
    monkeypatch.chdir(job)
    stage(
        os.path.relpath(path, job)
        for path in sorted(copy.rglob("*"))
        if path.is_file() and path.name != "segments"
    )
    validate_dataset(original, job / "m.parquet", job / "v.json", n_shards=1)
    staged_manifest = read_parquet(job / "m.parquet")
    assert staged_manifest.equals(expected)
    assert (job / "v.json").read_bytes() == (local / "v.json").read_bytes()
    assert staged_manifest["audio_path"].str.startswith(str(original)).all()
    np.testing.assert_array_equal(load_audio(first), first_audio)


def test_a_job_without_the_audio_among_its_inputs_reports_it_missing(tmp_path, monkeypatch):
    original = build_dataset(tmp_path / "corpus" / "test")
    copy = _staged_copy(tmp_path / "job", original)
    monkeypatch.chdir(tmp_path / "job")
    stage(str(p.relative_to(tmp_path / "job")) for p in copy.glob("*") if p.is_file())
    with pytest.raises(FileNotFoundError, match="not among the job's declared inputs"):
        load_audio(original / "wav" / "spk1_u0.wav")
