"""What every rule that runs package code states about itself, checked on the parsed workflow.

A rule with a ``script:`` runs this package, so it needs: ``params.version`` equal to the
package's ``__version__`` (a changed package reruns its jobs), a ``log:`` (where the script's
messages go; a cluster job has no terminal), ``threads: 1`` (settings.smk: one thread each, for
determinism), and its memory and time from the ``RESOURCES`` table of settings.smk (one place
where a site reads and changes them). Its script is ``scripts/<rule>.py``, except
for the documented shares below.

Rules without a script are exempt: ``all`` only names the final targets, and Snakemake runs no
code for it, so it has no package version to rerun on, nothing to log and nothing to schedule.
The exemption holds only for rules that run nothing at all (no shell, run, notebook, wrapper).

The workflow is parsed on the demo config through Snakemake's API, as ``snakemake --list-rules``
does (a workflow object, nothing planned or run), so the test reads what Snakemake itself made
of the rules, derived ``use rule`` ones included, rather than the .smk text.
"""

from __future__ import annotations

import itertools
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from snakemake.api import SnakemakeApi
from snakemake.iocontainers import Wildcards
from snakemake.rules import Rule
from snakemake.settings.enums import Quietness
from snakemake.settings.types import OutputSettings, ResourceSettings
from snakemake.workflow import Workflow

from pathbench_flow import __version__
from pathbench_flow.testing import REPO

SCRIPTS = REPO / "scripts"

# Rules that run another rule's script (`use rule ... as`): the reference set's copy of a rule
# runs the same program on the reference dataset's files, and a track of a whole set the
# program of a shard's track.
SHARES_SCRIPT = {
    "validate_reference": "validate_dataset",
    "fa_trim_reference": "fa_trim",
    "compute_reference_track": "compute_track",
    "compute_set_track": "compute_track",
    "compute_reference_set_track": "compute_track",
}

# Programs whose jobs take another RESOURCES entry than their own name's.
SHARES_ENTRY = {
    # the speaker-level correlation's work, over utterances (analysis.smk)
    "correlate_utterances": ("correlate",),
    # a track that runs a model gets the model's memory and time (track_resources.smk)
    "compute_track": ("compute_track", "compute_model_track"),
}

# A wildcard constraint listing its values (``raw|fa``): resources are evaluated for each.
ALTERNATIVES = re.compile(r"[\w-]+(\|[\w-]+)*")


@dataclass(frozen=True)
class RuleFacts:
    """What one parsed rule states, read while the workflow is loaded."""

    name: str
    where: str
    """``file:line`` of the rule's definition, relative to the repository."""
    script: Path | None
    runs_nothing: bool
    params: dict[str, Any]
    logs: tuple[str, ...]
    threads: Any
    """As written in the rule; None when the rule has no ``threads:``."""
    resources: tuple[dict[str, Any], ...]
    """The resources the table names, for every enumerable combination of wildcard values."""
    container: str | None
    """The image of its jobs under ``--sdm apptainer``."""
    conda_env: Path | None
    """The environment file of its jobs under ``--sdm conda``."""

    @property
    def label(self) -> str:
        """How a problem names the rule: where it is defined, and its name."""
        return f"{self.where}: rule {self.name}"

    @property
    def program(self) -> str:
        """The script's name this rule should run (its own, unless it shares one)."""
        return SHARES_SCRIPT.get(self.name, self.name)

    @property
    def program_script(self) -> Path:
        return SCRIPTS / f"{self.program}.py"


@dataclass(frozen=True)
class Parsed:
    """Every rule of the workflow, and the RESOURCES table as settings.smk built it."""

    rules: tuple[RuleFacts, ...]
    table: dict[str, dict[str, Any]]

    def script_rules(self) -> list[RuleFacts]:
        return [rule for rule in self.rules if rule.script is not None]


@contextmanager
def _process_state_kept() -> Iterator[None]:
    """Undo what parsing the workflow leaves in this process: settings.smk exports the device
    variable for its jobs, and Snakemake puts the workflow's directories on sys.path."""
    path, environment = list(sys.path), dict(os.environ)
    try:
        yield
    finally:
        sys.path[:] = path
        os.environ.clear()
        os.environ.update(environment)


def _wildcard_cases(rule: Rule, workflow: Workflow) -> list[dict[str, str]]:
    constraints = {**workflow.wildcard_constraints, **rule.wildcard_constraints}
    choices = {
        name: constraints[name].split("|")
        for name in sorted(rule.wildcard_names)
        if ALTERNATIVES.fullmatch(constraints.get(name, ""))
    }
    return [
        dict(zip(choices, values, strict=True)) for values in itertools.product(*choices.values())
    ]


def _table_resources(rule: Rule, workflow: Workflow, names: set[str]) -> tuple[dict, ...]:
    """The rule's resources named in the table, evaluated by Snakemake as for a job, once per
    wildcard combination (a resource may depend on them: compute_track's on the track)."""
    skip = set(rule.resources.keys()) - names - {"_cores"}
    found = []
    for case in _wildcard_cases(rule, workflow):
        job = rule.expand_resources(Wildcards(fromdict=case), [], 1, skip_evaluation=skip)
        evaluated = dict(job.items())  # a ResourceList is a list: `in` would test its values
        values = {name: evaluated[name] for name in sorted(names) if name in evaluated}
        if values not in found:
            found.append(values)
    return tuple(found)


def _facts(rule: Rule, workflow: Workflow, names: set[str]) -> RuleFacts:
    # a path, or for a `use rule` a SourceFile: its str is the path, the linemaps' key
    snakefile = str(rule.snakefile)
    script = None
    if rule.is_script:
        script = Path(rule.basedir.join(rule.script).get_path_or_uri(secret_free=True)).resolve()
    conda_env = None
    if rule.conda_env:
        conda_env = Path(rule.basedir.join(rule.conda_env).get_path_or_uri(secret_free=True))
    return RuleFacts(
        name=rule.name,
        # Snakemake numbers a rule by its line in the compiled Python; its linemap gives the
        # .smk line, as Snakemake's own error messages do.
        where=f"{Path(snakefile).relative_to(REPO)}:{workflow.linemaps[snakefile][rule.lineno]}",
        script=script,
        runs_nothing=rule.norun,
        params=dict(rule.params.items()),
        logs=tuple(str(log) for log in rule.log),
        threads=rule.ruleinfo.threads,
        resources=_table_resources(rule, workflow, names),
        container=rule.container_img,
        conda_env=conda_env.resolve() if conda_env else None,
    )


@pytest.fixture(scope="module")
def parsed() -> Parsed:
    output = OutputSettings(quiet={Quietness.ALL}, enable_file_logging=False)
    with _process_state_kept(), SnakemakeApi(output) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(),
            snakefile=REPO / "workflow" / "Snakefile",
            workdir=REPO,
        )
        # The loaded workflow object, as WorkflowApi.list_rules reads it: the API has no
        # public accessor for its rules.
        workflow = workflow_api._workflow
        table = workflow.globals["RESOURCES"]
        names = {name for entry in table.values() for name in entry}
        rules = tuple(_facts(rule, workflow, names) for rule in workflow.rules)
    return Parsed(rules, table)


def _resource_problems(rule: RuleFacts, table: dict[str, dict[str, Any]]) -> list[str]:
    entries = SHARES_ENTRY.get(rule.program, (rule.program,))
    known = [entry for entry in entries if entry in table]
    if not known:
        return [
            f"{rule.label}: RESOURCES (workflow/rules/settings.smk) has no entry "
            f"{rule.program!r}; add one with its mem_mb and runtime"
        ]
    expected = " or ".join(f"RESOURCES[{entry!r}] = {table[entry]}" for entry in known)
    return [
        f"{rule.label}: resources {values or 'none'} are not {expected}; read them from the "
        f'table: `**RESOURCES["{known[0]}"],` under resources:'
        for values in rule.resources
        if not any(values == table[entry] for entry in known)
    ]


def _rule_problems(rule: RuleFacts, table: dict[str, dict[str, Any]]) -> list[str]:
    problems = []
    if "version" not in rule.params:
        problems.append(
            f"{rule.label}: params has no version; add `version=VERSION,` so that a changed "
            "package reruns its jobs"
        )
    elif rule.params["version"] != __version__:
        problems.append(
            f"{rule.label}: params.version is {rule.params['version']!r}, not the package's "
            f"{__version__!r}; set it to VERSION (settings.smk)"
        )
    if not rule.logs:
        problems.append(f"{rule.label}: no log:; add one under logs/ naming the rule")
    if rule.threads != 1:
        problems.append(
            f"{rule.label}: threads is {rule.threads}, not 1; write `threads: 1` "
            "(settings.smk: every rule runs on one thread)"
        )
    return problems + _resource_problems(rule, table)


def _shown(path: Path) -> str:
    return os.path.relpath(path, REPO)


def _report(problems: list[str]) -> str:
    return f"{len(problems)} rule convention problem(s):\n" + "\n".join(problems)


def test_rules_that_run_package_code_state_version_log_threads_and_table_resources(parsed):
    assert parsed.script_rules(), "no rule with a script: the workflow did not parse its rules"
    problems = [p for rule in parsed.script_rules() for p in _rule_problems(rule, parsed.table)]
    assert not problems, _report(problems)


def test_each_rule_runs_its_own_script_or_a_documented_share(parsed):
    rules = {rule.name: rule for rule in parsed.script_rules()}
    fix = (
        f"name the script after the rule, or add the rule to SHARES_SCRIPT in "
        f"{Path(__file__).name} saying why it runs another rule's script"
    )
    problems = [
        f"{rule.label}: runs {_shown(rule.script)}, not {_shown(rule.program_script)}; {fix}"
        for rule in rules.values()
        if rule.script != rule.program_script
    ]
    problems += [
        f"SHARES_SCRIPT names {name!r}, which is no rule with a script; remove the entry"
        for name in SHARES_SCRIPT
        if name not in rules
    ]
    used = {rule.script for rule in rules.values()}
    problems += [
        f"{_shown(script)}: no rule runs it; remove it or give it its rule"
        for script in sorted(SCRIPTS.glob("*.py"))
        if script not in used
    ]
    assert not problems, _report(problems)


def test_rules_without_a_script_run_nothing(parsed):
    """The exemption from the conventions is for rules that only name targets."""
    problems = [
        f"{rule.label}: runs code without a script: (shell, run, notebook or wrapper), so the "
        "conventions cannot be checked; move the code into scripts/"
        for rule in parsed.rules
        if rule.script is None and not rule.runs_nothing
    ]
    assert not problems, _report(problems)
    assert "all" in {rule.name for rule in parsed.rules if rule.script is None}


def test_every_resources_entry_belongs_to_a_program(parsed):
    """No entry of the table is dead, and no documented share is stale. The demo config plans
    no model track, so compute_model_track is checked as declared, not as evaluated."""
    programs = {rule.program for rule in parsed.script_rules()}
    shared = {entry for entries in SHARES_ENTRY.values() for entry in entries}
    problems = [
        f"RESOURCES[{entry!r}]: no rule's program is called so and SHARES_ENTRY lists it for "
        "none; remove the entry from workflow/rules/settings.smk"
        for entry in parsed.table
        if entry not in programs | shared
    ]
    problems += [
        f"SHARES_ENTRY names {program!r}, which no rule runs; remove the entry"
        for program in SHARES_ENTRY
        if program not in programs
    ]
    assert not problems, _report(problems)


def test_the_workflow_has_one_global_wildcard_constraints_block():
    """Snakemake re-applies global constraints to the rules defined so far whenever it meets a
    ``wildcard_constraints:`` block, and for outputs mapped to a storage provider the re-applied
    pattern loses the earlier block's constraints: ``results/{dataset}/trim/...`` then matches
    a reference set's files too. One block, before every rule, keeps them."""
    blocks = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted((REPO / "workflow").rglob("*.smk")) + [REPO / "workflow" / "Snakefile"]
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if line.startswith("wildcard_constraints:")
    ]
    assert len(blocks) == 1 and blocks[0].startswith("workflow/rules/scope.smk:"), (
        f"global wildcard_constraints blocks at {blocks}: keep exactly one, in "
        "workflow/rules/scope.smk (rule-level ones are fine)"
    )


def test_every_rule_that_runs_a_job_has_the_image_and_the_environment(parsed):
    """Under ``--sdm apptainer`` a rule without the image runs on the node's own Python without
    a word, and under ``--sdm conda`` one without the environment likewise: Snakemake gives the
    Snakefile's global ``container:`` only to rules defined after it, so a rule file included
    above it (or a rule with its own ``container:``/``conda:``) would fall out of both."""
    image = f"pathbench-flow-{__version__}.sif"
    environment = REPO / "workflow" / "envs" / "pathbench.yaml"
    running = [rule for rule in parsed.rules if not rule.runs_nothing]
    assert running, "no rule runs a job: the workflow did not parse its rules"
    problems = [
        f"{rule.label}: container is {rule.container!r}, not {image!r}; define the rule after "
        "the global `container:` of workflow/Snakefile"
        for rule in running
        if rule.container != image
    ]
    problems += [
        f"{rule.label}: conda env is {rule.conda_env and _shown(rule.conda_env)}, not "
        f'{_shown(environment)}; add `conda: "../envs/pathbench.yaml"`'
        for rule in running
        if rule.conda_env != environment
    ]
    assert not problems, _report(problems)
