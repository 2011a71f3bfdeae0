"""A config that breaks the schema stops the run with one short line per problem: the key, the
config file and line it is on, the keys allowed there and the nearest one, not Snakemake's dump
of the whole schema."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pathbench_flow.runtime.preflight import ConfigError
from pathbench_flow.schemas.config import schema_problems
from pathbench_flow.testing import REPO
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
DEMO_CONFIG = (REPO / "config" / "config.yaml").read_text()
TOP_LEVEL_KEYS = ", ".join(SCHEMA["properties"])


def _misspelt(text: str, key: str, typo: str) -> str:
    """The config text with its one top-level ``key:`` line renamed ``typo:``."""
    assert text.count(f"\n{key}:") == 1
    return text.replace(f"\n{key}:", f"\n{typo}:")


def _line_of(text: str, start: str) -> int:
    """The 1-based number of the one line of ``text`` that starts with ``start``."""
    (number,) = [n for n, line in enumerate(text.splitlines(), 1) if line.startswith(start)]
    return number


def _problems(text: str, tmp_path: Path) -> list[str]:
    source = tmp_path / "bad.yaml"
    source.write_text(text)
    return schema_problems(yaml.safe_load(text), SCHEMA, [source])


def test_the_demo_config_has_no_schema_problem(tmp_path):
    assert _problems(DEMO_CONFIG, tmp_path) == []


def test_a_misspelt_top_level_key_is_named_with_its_line_and_the_nearest_key(tmp_path):
    text = _misspelt(DEMO_CONFIG, "evaluators", "evaluator")
    assert _problems(text, tmp_path) == [
        f"evaluator ({tmp_path / 'bad.yaml'}, line {_line_of(text, 'evaluator:')}): unknown key; "
        f"did you mean `evaluators`? allowed here: {TOP_LEVEL_KEYS}"
    ]


@pytest.mark.parametrize(
    ("block", "typo", "problem"),
    [
        (
            "datasets:\n  mine:\n    path: data/mine\n",
            "    refrence: data/ctl\n",
            "datasets.mine.refrence (LOCATION, line 4): unknown key; did you mean `reference`? "
            "allowed here: path, reference, trim_backend, corpus, task, condition, score_scale",
        ),
        (
            "datasets:\n  mine:\n    path: data/mine\nopenset:\n  enabled: true\n",
            "  max_outer_fold: 3\n",
            "openset.max_outer_fold (LOCATION, line 6): unknown key; did you mean "
            "`max_outer_folds`? allowed here: enabled, known_folds, max_outer_folds, "
            "max_tuning_folds, grid",
        ),
    ],
)
def test_a_misspelt_nested_key_gets_the_same_treatment(tmp_path, block, typo, problem):
    assert _problems(block + typo, tmp_path) == [
        problem.replace("LOCATION", str(tmp_path / "bad.yaml"))
    ]


def test_every_problem_is_listed_at_once_in_key_order(tmp_path):
    text = "evaluators: [vsa, 3]\nshard_size: many\n"
    source = tmp_path / "bad.yaml"
    assert _problems(text, tmp_path) == [
        f"the config ({source}): 'datasets' is a required property",
        f"evaluators[1] ({source}, line 1): 3 is not of type 'string'",
        f"shard_size ({source}, line 2): 'many' is not of type 'integer'",
    ]


def test_a_key_is_located_in_the_last_config_file_that_sets_it(tmp_path):
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    first.write_text("datasets:\n  mine:\n    path: a\nshard_size: many\n")
    second.write_text("\n\nshard_size: lots\n")
    config = {"datasets": {"mine": {"path": "a"}}, "shard_size": "lots"}
    assert schema_problems(config, SCHEMA, [first, second]) == [
        f"shard_size ({second}, line 3): 'lots' is not of type 'integer'"
    ]


def test_a_key_in_no_config_file_is_named_without_a_place(tmp_path):
    """A ``--config`` value is in the config but in no file."""
    config = {"datasets": {"mine": {"path": "a"}}, "evaluator": ["vsa"]}
    (problem,) = schema_problems(config, SCHEMA, [])
    assert problem.startswith("evaluator: unknown key; did you mean `evaluators`?")


def test_a_misspelt_key_stops_snakemake_in_under_twenty_lines(tmp_path):
    workdir = copy_workflow(tmp_path / "wf")
    text = _misspelt(DEMO_CONFIG, "evaluators", "evaluator")
    (workdir / "bad.yaml").write_text(text)
    result = snakemake(workdir, "-n", "--configfile", "bad.yaml", check=False)
    console = (result.stdout + result.stderr).splitlines()
    assert result.returncode != 0
    assert len(console) < 20, "\n".join(console)
    assert f"{ConfigError.__name__} in file" in result.stdout
    expected = (
        f"evaluator ({workdir / 'bad.yaml'}, line {_line_of(text, 'evaluator:')}): unknown key; "
        f"did you mean `evaluators`? allowed here: {TOP_LEVEL_KEYS}"
    )
    assert f"  - {expected}" in console
    assert not (workdir / "results").exists()
