"""The workflow's config handling, seen through real `snakemake -n` runs of a copied workflow.

A user config given with --configfile stands alone (no demo jobs), and config problems stop
the run before any job, naming the key.
"""

from __future__ import annotations

import pytest
import yaml
from kaldi_builder import build_dataset
from workflow_run import copy_workflow, snakemake


@pytest.fixture
def workdir(tmp_path):
    workdir = copy_workflow(tmp_path / "wf")
    build_dataset(workdir / "data" / "mine")
    return workdir


def dry_run(workdir, config: dict, check: bool = True):
    (workdir / "my.yaml").write_text(yaml.safe_dump(config))
    return snakemake(workdir, "-n", "--configfile", "my.yaml", check=check)


USER_CONFIG = {"datasets": {"mine": {"path": "data/mine"}}, "evaluators": ["cpp", "wpm"]}


def test_a_user_config_stands_alone_without_the_demo(workdir):
    plan = dry_run(workdir, USER_CONFIG).stdout
    assert "make_demo" not in plan and "results/demo" not in plan and "resources/demo" not in plan
    assert "results/mine/scores/cpp/0000.parquet" in plan
    # no openset block: the schema's default (disabled) applies instead of a KeyError
    assert "openset" not in plan


def test_openset_without_a_grid_uses_the_default_grid(workdir):
    plan = dry_run(workdir, USER_CONFIG | {"openset": {"enabled": True}}).stdout
    assert "openset_features" in plan and "results/mine/openset/summary.json" in plan


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"evaluators": []}, "evaluators"),
        ({"evaluator_options": {"cpp": {"window": 3}}}, "evaluator_options.cpp: unknown option"),
        ({"datasets": {"mine": {"path": "data/gone"}}}, "datasets.mine.path: directory"),
        ({"datasets": {"mine": {"path": "data/mine/text"}}}, "is a file, not a directory"),
        (
            {"datasets": {"mine": {"path": "data/mine", "reference": "data/ctl"}}},
            "datasets.mine.reference",
        ),
    ],
)
def test_config_problems_stop_before_any_job(workdir, change, expected):
    result = dry_run(workdir, USER_CONFIG | change, check=False)
    assert result.returncode != 0
    assert expected in result.stdout + result.stderr, result.stderr[-3000:]
    assert not (workdir / "results").exists()
