"""Running the real workflow in a scratch copy of the repository."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO

import yaml

from pathbench_flow.runtime.results_run import RESULTS_RECORD
from pathbench_flow.testing import REPO

WORKFLOW_FILES = ("Snakefile", "workflow", "scripts", "profiles", "config")

LOCAL_RUN = {"SLURM_CONF": os.devnull}
"""Environment changes for a Snakemake whose jobs run locally. Snakemake imports every
installed executor plugin at start, and the SLURM plugin asks the controller
(``scontrol show config``) for a setting's default; where a slurm.conf names a controller that
is not running, that question costs every start 9 s. An empty SLURM configuration makes it fail
at once; a local run reads SLURM's configuration nowhere else."""


def copy_workflow(target: Path) -> Path:
    """The workflow files (not results or resources) copied into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    return target


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run snakemake from the same environment as the tests, capturing its output."""
    command = [sys.executable, "-m", "snakemake", *args]
    result = subprocess.run(
        command, cwd=workdir, capture_output=True, text=True, env=os.environ | LOCAL_RUN
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} failed ({result.returncode}):\n{result.stderr[-6000:]}"
        )
    return result


def dry_run(workdir: Path, config: dict, check: bool = True) -> subprocess.CompletedProcess:
    """``snakemake -n`` in ``workdir`` with ``config`` as its one config file (``my.yaml``)."""
    (workdir / "my.yaml").write_text(yaml.safe_dump(config))
    return snakemake(workdir, "-n", "--configfile", "my.yaml", check=check)


def start_snakemake(
    workdir: Path, log: IO[str], *args: str, environment: Mapping[str, str] | None = None
) -> subprocess.Popen:
    """Start snakemake writing to ``log``, in a process group of its own so that the caller can
    stop it with every job it started (``os.killpg``); standard input is closed.
    ``environment`` changes the inherited environment (:data:`LOCAL_RUN` for a local run)."""
    return subprocess.Popen(
        [sys.executable, "-m", "snakemake", *args],
        cwd=workdir,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=os.environ | dict(environment or {}),
    )


def wait_or_kill(process: subprocess.Popen, timeout_s: float) -> int | None:
    """The return code of a run started by :func:`start_snakemake`, or None when it outlived
    ``timeout_s`` and was killed with every job it started, so a hung run fails its test
    instead of the whole suite."""
    try:
        return process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return None


def full_log(workdir: Path) -> str:
    """Snakemake's full log of the latest run in ``workdir`` (``.snakemake/log/``, one file per
    run, named by its start time): every job's start, outputs and end, which the console
    (pathbench_flow/console.py) leaves out. Empty before the run has opened it."""
    logs = sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"))
    return logs[-1].read_text() if logs else ""


def output_files(workdir: Path) -> dict[str, bytes]:
    """Every Parquet, CSV and JSON result, by path relative to ``workdir``; not the record of
    which run made them (results/run.json), which names the config files as the run was
    given them and stays in the working directory when the results go to a storage provider."""
    return {
        str(path.relative_to(workdir)): path.read_bytes()
        for pattern in ("*.parquet", "*.csv", "*.json")
        for path in sorted((workdir / "results").rglob(pattern))
        if path.relative_to(workdir) != RESULTS_RECORD
    }
