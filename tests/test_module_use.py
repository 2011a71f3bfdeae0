"""The workflow used as a Snakemake module from a directory outside the repository.

This is what `snakedeploy deploy-workflow` sets up: a Snakefile with a `module` statement
pointing at workflow/Snakefile, `use rule * from ...`, and the user's own config and data. Every
path inside the workflow (schema, rule files, scripts, report captions, environments) must then
resolve against the workflow, not the working directory. The rules' software comes from the
released package (workflow/envs/pathbench.yaml) or the image (Dockerfile), never the checkout.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest
import yaml

from pathbench_flow.testing.workflow_run import REPO, copy_workflow, output_files, snakemake

TEST_CONFIG = REPO / ".test" / "config" / "config.yaml"
DATASET = yaml.safe_load(TEST_CONFIG.read_text())["datasets"]["mine"]["path"]
"""The committed dataset as the tests' config names it: relative to the working directory."""


def copy_dataset(workdir: Path) -> None:
    """The committed dataset where the tests' config, run in ``workdir``, looks for it."""
    shutil.copytree(REPO / DATASET, workdir / DATASET)


def deploy(target, prefix: str = ""):
    """A snakedeploy-style deployment in ``target``: module Snakefile, the tests' config and
    the committed dataset it names."""
    rename = f" as {prefix}*" if prefix else ""
    (target / "config").mkdir(parents=True)
    (target / "config" / "config.yaml").write_bytes(TEST_CONFIG.read_bytes())
    (target / "Snakefile").write_text(
        'configfile: "config/config.yaml"\n\n\n'
        "module pathbench_flow:\n"
        f'    snakefile:\n        "{REPO / "workflow" / "Snakefile"}"\n'
        "    config:\n        config\n\n\n"
        f"use rule * from pathbench_flow{rename}\n"
    )
    copy_dataset(target)
    return target


@pytest.mark.parametrize("prefix", ["", "pathbench_"])
def test_a_module_deployment_plans_every_stage_of_its_own_dataset(tmp_path, prefix):
    workdir = deploy(tmp_path / "deployed", prefix)
    plan = snakemake(workdir, "-n").stdout
    jobs = set(re.findall(r"^(?:rule|checkpoint) (\w+):", plan, re.M))
    expected = {
        "validate_dataset",
        "fa_trim",
        "score_utterances",
        "aggregate_speakers",
        "correlate",
        "results_table",
    }
    assert {prefix + name for name in expected} <= jobs, jobs
    assert not any("make_demo" in job for job in jobs)
    assert "results/mine/scores/cpp/0000.parquet" in plan


@pytest.mark.slow
def test_a_module_run_gives_the_same_bytes_as_a_run_in_the_repository(tmp_path):
    deployed = deploy(tmp_path / "deployed")
    snakemake(deployed, "--cores", "2")
    copied = copy_workflow(tmp_path / "wf")
    (copied / "test.yaml").write_bytes(TEST_CONFIG.read_bytes())
    copy_dataset(copied)
    snakemake(copied, "--cores", "2", "--configfile", "test.yaml")
    produced = output_files(deployed)
    assert "results/results_table.csv" in produced
    assert produced == output_files(copied)


def test_the_rule_environment_installs_the_release_not_the_checkout():
    """Snakemake builds the env from a copy under .snakemake/conda/: a path would be wrong."""
    env = yaml.safe_load((REPO / "workflow" / "envs" / "pathbench.yaml").read_text())
    pip = next(item["pip"] for item in env["dependencies"] if isinstance(item, dict))
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert pip == [f"pathbench-flow=={version}"]
