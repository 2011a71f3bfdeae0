"""Validation inside the real workflow: a failed job's findings reach the terminal and survive
Snakemake's deletion of the job's outputs; a reference set is checked against its test set."""

from __future__ import annotations

import json

from pathbench_flow.testing.kaldi_builder import build_dataset, write_lines
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake


def run_validation(tmp_path, config: str, target: str):
    workdir = copy_workflow(tmp_path / "wf")
    (workdir / "user.yaml").write_text(config)
    return workdir, snakemake(workdir, "--configfile", "user.yaml", "-c1", target, check=False)


def test_failed_validation_prints_and_keeps_its_findings(tmp_path):
    root = build_dataset(tmp_path / "wf" / "data" / "bad")
    write_lines(root / "spk2gender", ["spk1 q", "spk2 m"])
    workdir, result = run_validation(
        tmp_path, "datasets:\n  bad:\n    path: data/bad\n", "results/bad/manifest.parquet"
    )
    assert result.returncode != 0
    assert "data/bad/spk2gender:1: 'q' gender is not m or f" in result.stderr
    assert "results/bad/validation.failed.json" in result.stderr
    assert not (workdir / "results/bad/validation.json").exists()
    kept = json.loads((workdir / "results/bad/validation.failed.json").read_text())
    assert kept["outcome"] == "failed" and kept["findings"][0]["value"] == "q"


def test_reference_set_that_is_the_test_set_stops_the_workflow(tmp_path):
    build_dataset(tmp_path / "wf" / "data" / "t")
    config = "datasets:\n  same:\n    path: data/t\n    reference: data/t\n"
    workdir, result = run_validation(tmp_path, config, "results/same/reference/manifest.parquet")
    assert result.returncode != 0
    assert "reference dataset data/t is the test dataset data/t" in result.stderr
    assert (workdir / "results/same/manifest.parquet").exists()
    kept = json.loads((workdir / "results/same/reference/validation.failed.json").read_text())
    assert "is the test dataset" in kept["findings"][0]["problem"]
