"""Which configuration's run ``results/`` holds: one at a time, named in ``results/run.json``.

Every output path is fixed (``results/results_table.csv``, ``results/<dataset>/...``), so a run
of another configuration in the same working directory would rewrite the headline outputs
(results table, PathBench's table, the uncertainty analysis) with its own datasets only, and a
report made afterwards would embed one run's tables under the other's description. So
Snakemake's main process stops (:func:`check_run`, :func:`check_report`, called before any job
is planned by :func:`~pathbench_flow.runtime.snakemake_patches.patch_results_check`) a real run
or a report of another configuration while that one's results are there; the message names
both runs and the commands that keep both or replace them (config ``replace_results``). A run
records what it is (:class:`RunRecord`) in ``results/run.json`` only when its plan is made and
its first jobs are about to start (the workflow's ``onstart``): one that stops before, or has
nothing to do, leaves ``results/`` and its record as they were. A run with ``--no-hooks``, which
skips ``onstart``, is recorded by the check instead, before its plan.

A run is known by its config files and its datasets' directories (:meth:`RunRecord.identity`):
editing the config file it was run with (an evaluator added, an option changed, a dataset added
or dropped while others stay) is the same run going on (:func:`continues`), which recomputes
what changed as before; other config files, or a dataset list with none of the earlier
datasets left, are another configuration. The record holds no time, so it is as
byte-identical as every other result; the run's times are in ``logs/run.json``
(:mod:`pathbench_flow.reporting.run_record`).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snakemake.exceptions import WorkflowError

from pathbench_flow.common.io import write_json

RESULTS_RECORD = Path("results/run.json")
"""Relative to the working directory, like every output. The local file even when outputs go
to a storage provider: only the main process, which runs here, reads and writes it."""

HEADLINE_OUTPUTS = (
    Path("results/results_table.csv"),
    Path("results/pathbench_table.csv"),
    Path("results/uncertainty"),
)
"""The outputs over every dataset at once, which another configuration's run would replace."""

REPLACE_KEY = "replace_results"
"""The config key that lets a run replace another configuration's results."""


class ResultsOfAnotherRun(WorkflowError):
    """``results/`` holds another configuration's run; the message says what to do."""


@dataclass(frozen=True)
class RunRecord:
    """What a run is (its config files and datasets) and what its report's landing page says
    of it (its ``--config`` options, evaluators and variants).

    Paths are as the working directory sees them: config files relative to it when inside it,
    dataset directories as the config names them after ``datasets_root``.
    """

    configfiles: tuple[str, ...]
    config_args: tuple[str, ...]
    datasets: Mapping[str, str]
    evaluators: tuple[str, ...]
    variants: tuple[str, ...]
    root: str | None = field(default=None, compare=False)
    """The ``datasets_root`` a run of this configuration in another working directory needs
    (the absolute directory its relative datasets are read under here), or None when it names
    none of them relative. Not recorded."""

    @classmethod
    def of(
        cls,
        configfiles: Sequence[str | Path],
        config_args: Sequence[str] | None,
        config: Mapping[str, Any],
        generated: Callable[[Path], bool],
        cwd: Path | None = None,
    ) -> RunRecord:
        """The record of a run of ``config``, read from ``configfiles`` (Snakemake's
        ``workflow.configfiles``: the command line's, absolute, or the Snakefile's default,
        relative) with ``config_args`` (``--config``), in ``cwd`` (the working directory).
        ``generated(path)`` tells the directories the workflow writes (the demo's), which a
        run elsewhere writes there."""
        here = Path.cwd() if cwd is None else cwd
        paths = [Path(entry["path"]) for entry in config["datasets"].values()]
        relative = any(not p.is_absolute() and not generated(p) for p in paths)
        return cls(
            configfiles=tuple(_from(here, path) for path in configfiles),
            config_args=tuple(arg for arg in config_args or () if not _sets_replace(arg)),
            datasets={
                name: os.path.normpath(entry["path"])
                for name, entry in sorted(config["datasets"].items())
            },
            evaluators=tuple(config["evaluators"]),
            variants=tuple(config["variants"]),
            root=str(here / config.get("datasets_root", "")) if relative else None,
        )

    @property
    def identity(self) -> dict[str, Any]:
        """What makes two runs the same run: their config files and datasets."""
        return {"configfiles": list(self.configfiles), "datasets": dict(self.datasets)}

    def to_json(self) -> dict[str, Any]:
        return {
            **self.identity,
            "config_args": list(self.config_args),
            "evaluators": list(self.evaluators),
            "variants": list(self.variants),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunRecord:
        return cls(
            configfiles=tuple(data["configfiles"]),
            config_args=tuple(data["config_args"]),
            datasets=dict(data["datasets"]),
            evaluators=tuple(data["evaluators"]),
            variants=tuple(data["variants"]),
        )

    def describe(self) -> str:
        """One line: the config files and datasets (with their directories)."""
        datasets = ", ".join(f"{name} ({path})" for name, path in self.datasets.items())
        return f"config files {', '.join(self.configfiles)}; datasets {datasets}"

    def label(self) -> str:
        """A short name for a folder of this run's results: its datasets when there are one or
        two, else its last config file's name."""
        if len(self.datasets) <= 2:
            return "-".join(self.datasets)
        return Path(self.configfiles[-1]).stem


def _from(cwd: Path, path: str | Path) -> str:
    absolute = Path(os.path.normpath(cwd / path))
    return str(absolute.relative_to(cwd)) if absolute.is_relative_to(cwd) else str(absolute)


def _sets_replace(arg: str) -> bool:
    return arg.partition("=")[0] == REPLACE_KEY


def read_record(path: Path = RESULTS_RECORD) -> RunRecord | None:
    """The run ``results/`` holds, or None when no run recorded one (none yet, or results of
    a pathbench-flow before this record)."""
    if not path.is_file():
        return None
    return RunRecord.from_json(json.loads(path.read_text(encoding="utf-8")))


def write_record(record: RunRecord, path: Path = RESULTS_RECORD) -> None:
    write_json(record.to_json(), path)


def reported(current: RunRecord, path: Path = RESULTS_RECORD) -> RunRecord:
    """The run a report of ``current`` describes: the one that made the results, which the
    report's check (:func:`check_report`) found to be ``current``'s configuration, though the
    config file may have changed since (an evaluator added and not yet run); ``current`` when
    no run recorded itself."""
    return read_record(path) or current


def differences(earlier: RunRecord, current: RunRecord) -> list[str]:
    """How ``current`` differs from ``earlier`` as runs: datasets added, removed or moved,
    config files."""
    found = []
    added = sorted(set(current.datasets) - set(earlier.datasets))
    removed = sorted(set(earlier.datasets) - set(current.datasets))
    moved = [
        f"{name} ({earlier.datasets[name]} -> {path})"
        for name, path in current.datasets.items()
        if name in earlier.datasets and earlier.datasets[name] != path
    ]
    for what, names in (("added", added), ("removed", removed), ("moved", moved)):
        if names:
            found.append(f"datasets {what}: {', '.join(names)}")
    if earlier.configfiles != current.configfiles:
        found.append(
            f"config files: {', '.join(earlier.configfiles)} -> {', '.join(current.configfiles)}"
        )
    return found


def continues(earlier: RunRecord, current: RunRecord) -> bool:
    """Whether ``current`` is ``earlier`` going on: the same config files, and at least one
    dataset of the earlier run still there at the same directory. A user who adds a corpus to
    the config they ran is extending that run (its tables gain a column); one whose config
    keeps none of the earlier datasets is running another study."""
    kept = {name for name, path in current.datasets.items() if earlier.datasets.get(name) == path}
    return earlier.configfiles == current.configfiles and bool(kept)


def check_run(
    current: RunRecord,
    replace: bool,
    argv: Sequence[str],
    record: Path = RESULTS_RECORD,
    headline: Sequence[Path] = HEADLINE_OUTPUTS,
) -> None:
    """Raise :class:`ResultsOfAnotherRun` when a real run of ``current`` would replace the
    headline outputs of another configuration's run, unless ``replace``. ``argv`` is the
    command line, for the commands the message gives. Nothing is recorded here, before the
    jobs are planned: a run whose plan then fails (a missing input, a plan-time stop) has
    changed nothing, so ``results/`` must still name the run that made it; the workflow's
    ``onstart`` handler records ``current`` (:func:`write_record`) once jobs are to run."""
    earlier = read_record(record)
    present = [path for path in headline if path.exists()]
    if earlier and not continues(earlier, current) and present and not replace:
        keep = [
            f"    mv results results-{earlier.label()}   (then run this command again)",
            "    or run it in a working directory of its own: "
            + _command(_in_directory(argv, current, f"runs/{current.label()}")),
        ]
        raise ResultsOfAnotherRun(
            "\n".join(
                [
                    f"results/ holds another configuration's run ({record}): {earlier.describe()}.",
                    f"This run: {current.describe()}.",
                    f"  It differs by {'; '.join(differences(earlier, current))}.",
                    f"It would replace {', '.join(map(str, present))} with this run's. "
                    "Nothing was changed.",
                    "To keep both, move the earlier results aside:",
                    *keep,
                    f"To replace them: {_command(_with_config(argv, {REPLACE_KEY: 'True'}))}",
                ]
            )
        )


def check_report(current: RunRecord, argv: Sequence[str], record: Path = RESULTS_RECORD) -> None:
    """Raise :class:`ResultsOfAnotherRun` when the results are another configuration's run
    than the report's ``current``: its landing page would describe a run that did not make
    them. The message gives the ``--report`` command for the run that did."""
    earlier = read_record(record)
    if earlier is None or earlier.identity == current.identity:
        return
    raise ResultsOfAnotherRun(
        "\n".join(
            [
                f"results/ holds the run of {earlier.describe()} ({record}),",
                f"  not of this report's configuration: {current.describe()}.",
                f"  It differs by {'; '.join(differences(earlier, current))}.",
                f"Report the results with: {_command(_configured_as(argv, earlier))}",
            ]
        )
    )


# ---------------------------------------------------------------------------------------------
# The commands in the messages: the user's own command line, changed where it must be.

_CONFIG = ("--config", "-C")
_CONFIGFILE = ("--configfile", "--configfiles")
_DIRECTORY = ("--directory", "-d")


def _groups(argv: Sequence[str]) -> list[list[str]]:
    """``argv`` without the program, as options each with the values that follow it (a
    leading group of targets has no option); ``--option=value`` is split in two."""
    groups: list[list[str]] = [[]]
    for argument in argv[1:]:
        if argument.startswith("-"):
            groups.append(argument.split("=", 1) if argument.startswith("--") else [argument])
        else:
            groups[-1].append(argument)
    return [group for group in groups if group]


def _without(groups: list[list[str]], names: Sequence[str]) -> list[list[str]]:
    return [group for group in groups if group[0] not in names]


def _config_values(groups: list[list[str]]) -> list[str]:
    return [value for group in groups if group[0] in _CONFIG for value in group[1:]]


def _with_config(argv: Sequence[str], settings: Mapping[str, str]) -> list[list[str]]:
    """The command with ``settings`` among its ``--config`` values (one ``--config``:
    Snakemake keeps only the last)."""
    groups = _groups(argv)
    kept = [v for v in _config_values(groups) if v.partition("=")[0] not in settings]
    values = kept + [f"{key}={value}" for key, value in settings.items()]
    return [*_without(groups, _CONFIG), ["--config", *values]]


def _in_directory(argv: Sequence[str], current: RunRecord, directory: str) -> list[list[str]]:
    """The command run in ``directory`` instead (Snakemake still reads the command line's
    config files from here), with the ``datasets_root`` its relative datasets need."""
    root = current.root
    groups = _with_config(argv, {"datasets_root": root}) if root else _groups(argv)
    return [*_without(groups, _DIRECTORY), ["--directory", directory]]


def _configured_as(argv: Sequence[str], run: RunRecord) -> list[list[str]]:
    """The command with ``run``'s config files and ``--config`` options. The files are
    absolute when the command names a working directory: Snakemake reads them from where it
    was started."""
    groups = _without(_without(_groups(argv), _CONFIGFILE), _CONFIG)
    elsewhere = any(group[0] in _DIRECTORY for group in groups)
    files = [str(Path.cwd() / path) if elsewhere else path for path in run.configfiles]
    groups.append(["--configfile", *files])
    if run.config_args:
        groups.append(["--config", *run.config_args])
    return groups


def _command(groups: list[list[str]]) -> str:
    return shlex.join(["snakemake", *(part for group in groups for part in group)])
