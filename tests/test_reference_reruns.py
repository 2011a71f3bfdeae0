"""Reference-audio measures rerun after an edit exactly where their inputs changed.

Their analyses (P-ESTOI envelopes, NAD's MFCCs) are one track file per set and variant (rule
``compute_set_track``), a ``control`` job reads its own shard's rows only, and every job that
reads the shard checkpoint's files is decided again after it has run. Checked on a small demo
corpus whose every text is read by every speaker (two test shards, two reference shards): an
edited test recording reruns the test set's tracks, every ``all`` job (each reads that
recording as a reference), the ``control`` jobs of its own shard only and the speaker-level
measure; an edited reference recording reruns the reference set's tracks and every reference
job, and leaves the test set's tracks and the speaker-level measure alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import soundfile as sf
import yaml

from pathbench_flow.common.io import read_parquet
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

pytestmark = pytest.mark.slow

CONFIG = {
    "demo": {"n_pathological": 4, "n_control": 4, "n_utterances": 2},
    "datasets": {
        "demo": {
            "path": "resources/demo/pathological",
            "reference": "resources/demo/control",
            "trim_backend": "energy",
        }
    },
    "evaluators": ["p_estoi", "f0_range"],
    "variants": ["raw", "fa"],
    "reference_types": ["control", "all"],
    "shard_size": 4,
    "openset": {"enabled": False},
}
VARIANTS = ("raw", "fa")
SPEAKERS = {"speaker_scores/f0_range.parquet"}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    workdir = copy_workflow(tmp_path_factory.mktemp("reference_reruns"))
    (workdir / "small.yaml").write_text(yaml.safe_dump(CONFIG))
    _run(workdir)
    return workdir


def _run(workdir: Path) -> None:
    snakemake(workdir, "--cores", "2", "--configfile", "small.yaml")


def _stamps(workdir: Path) -> dict[str, int]:
    """Modification time of every score and track file, by path below results/demo."""
    results = workdir / "results" / "demo"
    files = [
        *results.rglob("reference_scores/**/*.parquet"),
        *results.rglob("speaker_scores/*.parquet"),
        *results.rglob("tracks/**/*.parquet"),
    ]
    return {str(path.relative_to(results)): path.stat().st_mtime_ns for path in files}


def _rewritten(workdir: Path, before: dict[str, int]) -> set[str]:
    after = _stamps(workdir)
    assert after.keys() == before.keys()
    return {name for name in before if after[name] != before[name]}


def _edit(workdir: Path, manifest: str, utterance_index: int) -> tuple[str, int]:
    """Halve the samples of one recording of ``manifest`` (same length, new content); its
    utterance and shard."""
    row = read_parquet(workdir / manifest).iloc[utterance_index]
    path = workdir / row["audio_path"]  # the demo's paths are relative to the workdir
    audio, rate = sf.read(path, dtype="float64")
    sf.write(path, audio * 0.5, rate, subtype="PCM_16")
    return row["utt_id"], int(row["shard"])


def _scores(reftypes=("control", "all"), shards=("0000", "0001")) -> set[str]:
    return {
        f"reference_scores/p_estoi/{variant}/{reftype}/{shard}.parquet"
        for variant in VARIANTS
        for reftype in reftypes
        for shard in shards
    }


def _pitch(shards=("0000", "0001")) -> set[str]:
    return {f"tracks/pitch/{variant}/{shard}.parquet" for variant in VARIANTS for shard in shards}


def _envelopes(root: str) -> set[str]:
    return {f"{root}tracks/pestoi_envelopes/{variant}.parquet" for variant in VARIANTS}


def test_reference_tracks_are_one_file_per_set_and_variant(run):
    assert set(_stamps(run)) == (
        _scores() | _envelopes("") | _envelopes("reference/") | _pitch() | SPEAKERS
    )


def test_an_edited_test_recording_leaves_other_shards_control_jobs_alone(run):
    before = _stamps(run)
    _utterance, shard = _edit(run, "results/demo/manifest.parquet", -1)
    own = (f"{shard:04d}",)
    _run(run)
    assert _rewritten(run, before) == (
        _scores(reftypes=("all",))
        | _scores(reftypes=("control",), shards=own)
        | _envelopes("")
        | _pitch(shards=own)
        | SPEAKERS
    )
    plan = snakemake(run, "-n", "--configfile", "small.yaml")
    assert "Nothing to be done" in plan.stdout + plan.stderr


def test_an_edited_reference_recording_reruns_every_reference_job(run):
    before = _stamps(run)
    _edit(run, "results/demo/reference/manifest.parquet", 0)
    _run(run)
    assert _rewritten(run, before) == _scores() | _envelopes("reference/")
