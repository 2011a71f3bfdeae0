"""A run killed with SIGKILL mid-way resumes with `--unlock` and `--rerun-incomplete`.

The demo workflow runs in a scratch copy, in its own process group, and the whole group is
killed (controller and running jobs, as a crash or an OOM kill would) once some scoring jobs
have finished while others are still running. After `snakemake --unlock` and
`snakemake --cores 2 --rerun-incomplete` the run must be complete, must have run only the jobs
that had not finished (jobs of the second run + jobs finished in the first == jobs of an
uninterrupted run), must not have rewritten any output of a finished job (same inode and
mtime), and every Parquet, CSV and JSON output must be byte-identical to an uninterrupted run.

`reference_run` (one uninterrupted `--cores 2` run per test session) is shared with
test_slurm.py.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pathbench_flow.testing.workflow_run import (
    copy_workflow,
    output_files,
    snakemake,
    start_snakemake,
)

pytestmark = pytest.mark.slow

SCORING_RULES = frozenset({"score_utterances", "score_reference"})
RUN_TIMEOUT_S = 40 * 60
"""Upper bound for one demo run on 2 busy cores (it takes a few minutes)."""

_JOB_HEADER = re.compile(r"^(?:local)?(?:rule|checkpoint) (?P<rule>\w+):$")
_JOB_FIELD = re.compile(r"^\s+(?P<key>\w+): (?P<value>.*)$")
_FINISHED = re.compile(r"^Finished jobid: (?P<jobid>\d+) \(Rule: (?P<rule>\w+)\)$")


@dataclass
class LoggedJob:
    jobid: int
    rule: str
    outputs: list[str] = field(default_factory=list)


@dataclass
class RunLog:
    """The jobs a Snakemake run started and finished, read from its log output."""

    started: dict[int, LoggedJob]
    finished: list[int]

    @classmethod
    def parse(cls, text: str) -> RunLog:
        started: dict[int, LoggedJob] = {}
        finished: list[int] = []
        rule = None
        fields: dict[str, str] = {}

        def close():
            if rule is not None and "jobid" in fields:
                jobid = int(fields["jobid"])
                outputs = [p.strip() for p in fields.get("output", "").split(",") if p.strip()]
                started[jobid] = LoggedJob(jobid, rule, outputs)

        for line in text.splitlines():
            if header := _JOB_HEADER.match(line):
                close()
                rule, fields = header["rule"], {}
                continue
            if rule is not None and (entry := _JOB_FIELD.match(line)):
                fields.setdefault(entry["key"], entry["value"])
                continue
            close()
            rule, fields = None, {}
            if done := _FINISHED.match(line):
                finished.append(int(done["jobid"]))
        close()
        return cls(started, finished)

    def running(self, rules=SCORING_RULES) -> list[LoggedJob]:
        done = set(self.finished)
        return [j for j in self.started.values() if j.rule in rules and j.jobid not in done]

    def n_finished(self, rules=SCORING_RULES) -> int:
        return sum(1 for jobid in self.finished if self.started[jobid].rule in rules)


_REFERENCE: dict[str, tuple[Path, str]] = {}


def reference_run(tmp_path_factory) -> tuple[Path, str]:
    """One uninterrupted demo run (`--cores 2`) per session: its workdir and its log output."""
    if "run" not in _REFERENCE:
        workdir = copy_workflow(tmp_path_factory.mktemp("uninterrupted"))
        result = snakemake(workdir, "--cores", "2")
        _REFERENCE["run"] = (workdir, result.stdout + result.stderr)
    return _REFERENCE["run"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    return reference_run(tmp_path_factory)


def _kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the whole process group and wait until none of its processes is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise AssertionError(f"processes of group {process.pid} survived SIGKILL")


def _stamp(path: Path) -> dict[str, tuple[int, int]]:
    """Inode and mtime of a file, or of a directory and everything in it."""
    paths = [path, *sorted(path.rglob("*"))] if path.is_dir() else [path]
    return {str(p): _stat(p) for p in paths}


def _stat(path: Path) -> tuple[int, int] | None:
    return (path.stat().st_ino, path.stat().st_mtime_ns) if path.exists() else None


def _interrupted_run(workdir: Path) -> tuple[RunLog, str]:
    """Start the demo run and SIGKILL it once scoring jobs have finished and others run."""
    log_path = workdir / "interrupted.log"
    with open(log_path, "w") as log:
        process = start_snakemake(workdir, log, "--cores", "2")
    deadline = time.monotonic() + RUN_TIMEOUT_S
    try:
        while True:
            if process.poll() is not None:
                raise AssertionError(
                    "the run ended before it could be interrupted:\n" + log_path.read_text()[-4000:]
                )
            if time.monotonic() > deadline:
                raise AssertionError("no moment with finished and running scoring jobs")
            progress = RunLog.parse(log_path.read_text())
            if progress.n_finished() >= 1 and progress.running():
                break
            time.sleep(0.2)
    finally:
        _kill_group(process)
    text = log_path.read_text()
    return RunLog.parse(text), text


def test_killed_run_resumes_without_redoing_finished_jobs(uninterrupted, tmp_path):
    reference_dir, reference_log = uninterrupted
    total = len(RunLog.parse(reference_log).finished)
    workdir = copy_workflow(tmp_path / "resumed")

    first, first_text = _interrupted_run(workdir)
    done = set(first.finished)
    interrupted = [job for job in first.started.values() if job.jobid not in done]
    assert first.n_finished() >= 1 and first.running(), first_text[-4000:]
    # Outputs of every job that finished before the kill, as they are now.
    before = {}
    for jobid in first.finished:
        for output in first.started[jobid].outputs:
            before |= _stamp(workdir / output)
    assert before

    # A plain restart is refused: by the dead controller's lock, or, when the kill left an
    # output on disk that Snakemake's metadata marks unfinished, by the incomplete-file check,
    # which Snakemake runs first while building the DAG. Both name the way out.
    locked = snakemake(workdir, "--cores", "2", check=False)
    refusal = locked.stderr.lower()
    assert locked.returncode != 0, locked.stderr[-3000:]
    assert "lock" in refusal or "--rerun-incomplete" in refusal, locked.stderr[-3000:]

    snakemake(workdir, "--unlock")
    second_result = snakemake(workdir, "--cores", "2", "--rerun-incomplete")
    second = RunLog.parse(second_result.stderr + second_result.stdout)

    assert len(second.finished) + len(first.finished) == total, (
        f"first run finished {len(first.finished)} jobs, second ran {len(second.finished)}, "
        f"an uninterrupted run has {total}"
    )
    rerun_outputs = {o for j in second.started.values() for o in j.outputs}
    for job in interrupted:
        assert set(job.outputs) <= rerun_outputs, f"job {job.jobid} ({job.rule}) was not rerun"
    after = {path: _stat(Path(path)) for path in before}
    rewritten = sorted(p for p in before if before[p] != after[p])
    assert not rewritten, f"outputs of finished jobs were rewritten: {rewritten[:10]}"

    expected, got = output_files(reference_dir), output_files(workdir)
    assert sorted(got) == sorted(expected)
    differing = sorted(name for name in expected if got[name] != expected[name])
    assert not differing, f"outputs differ from an uninterrupted run: {differing}"
