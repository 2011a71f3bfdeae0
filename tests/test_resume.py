"""Stopping a run and resuming it, and what the console says of a run.

A run stopped by SIGINT (to the Snakemake process, or to its process group as a terminal's
Ctrl-C sends it) or by SIGTERM says it was interrupted, names no failed job, and a plain
`snakemake --cores 2` finishes it with outputs byte-identical to an uninterrupted run (the
default profile sets `rerun-incomplete`).

A run killed with SIGKILL mid-way resumes with `--unlock` and the same command again.

The demo workflow runs in a scratch copy, in its own process group, and the whole group is
killed (controller and running jobs, as a crash or an OOM kill would) once some scoring jobs
have finished while others are still running. After `snakemake --unlock` and
`snakemake --cores 2` the run must be complete, must have run only the jobs
that had not finished (jobs of the second run + jobs finished in the first == jobs of an
uninterrupted run), must not have rewritten any output of a finished job (same inode and
mtime), and every Parquet, CSV and JSON output must be byte-identical to an uninterrupted run.

`reference_run` (one uninterrupted `--cores 2` run per test session) is shared with
test_slurm.py; its console is checked here too. Which jobs a run started and finished is read
from Snakemake's full log (`full_log`), which the console leaves the job details to.
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

from pathbench_flow.runtime.console import MAX_LINE
from pathbench_flow.testing.workflow_run import (
    copy_workflow,
    full_log,
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
    """One uninterrupted demo run (`--cores 2`) per session: its workdir and its console."""
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


def _start_and_wait_for_scoring(workdir: Path, console: Path) -> subprocess.Popen:
    """Start the demo run, writing its console to ``console``, and return once scoring jobs
    have finished while others run."""
    with open(console, "w") as log:
        process = start_snakemake(workdir, log, "--cores", "2")
    deadline = time.monotonic() + RUN_TIMEOUT_S
    try:
        while True:
            if process.poll() is not None:
                raise AssertionError(
                    "the run ended before it could be interrupted:\n" + console.read_text()[-4000:]
                )
            if time.monotonic() > deadline:
                raise AssertionError("no moment with finished and running scoring jobs")
            progress = RunLog.parse(full_log(workdir))
            if progress.n_finished() >= 1 and progress.running():
                return process
            time.sleep(0.2)
    except BaseException:
        _kill_group(process)
        raise


def _interrupted_run(workdir: Path) -> tuple[RunLog, str]:
    """Start the demo run and SIGKILL it once scoring jobs have finished and others run."""
    _kill_group(_start_and_wait_for_scoring(workdir, workdir / "interrupted.log"))
    text = full_log(workdir)
    return RunLog.parse(text), text


def test_killed_run_resumes_without_redoing_finished_jobs(uninterrupted, tmp_path):
    reference_dir, _ = uninterrupted
    total = len(RunLog.parse(full_log(reference_dir)).finished)
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

    # A plain restart is refused by the dead controller's lock, which names the way out
    # (incomplete outputs are rerun: the default profile sets rerun-incomplete).
    locked = snakemake(workdir, "--cores", "2", check=False)
    assert locked.returncode != 0, locked.stderr[-3000:]
    assert "--unlock" in locked.stderr, locked.stderr[-3000:]

    snakemake(workdir, "--unlock")
    snakemake(workdir, "--cores", "2")
    second = RunLog.parse(full_log(workdir))

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


_PROGRESS = re.compile(
    r"^\[\d\d:\d\d:\d\d\] (?P<done>\d+) of (?P<bound>≥?)(?P<total>\d+) jobs done"
    r"(?: \((?P<percent>\d+)%\))?: \S"
)


def test_the_console_of_a_run(uninterrupted):
    """Short lines, one progress line per finished job whose count never goes back and ends
    at the run's true total, and at the end where the results are and how to get the report."""
    workdir, console = uninterrupted
    lines = console.splitlines()
    assert max(map(len, lines)) <= MAX_LINE, max(lines, key=len)[:500]
    finished = len(RunLog.parse(full_log(workdir)).finished)
    progress = [match for line in lines if (match := _PROGRESS.match(line))]
    assert [int(m["done"]) for m in progress] == list(range(1, finished + 1)), console[-4000:]
    # A total shown as final is the run's true total, and stays; a count while checkpoints
    # may still add jobs says so (≥) and is never more than the true total.
    known = [m for m in progress if not m["bound"]]
    assert known and all(int(m["total"]) == finished for m in known)
    assert all(int(m["total"]) <= finished for m in progress)
    first_known = progress.index(known[0])
    assert all(not m["bound"] for m in progress[first_known:])
    percents = [int(m["percent"]) for m in known]
    assert percents == sorted(percents) and percents[-1] == 100
    assert all(m["percent"] is None for m in progress if m["bound"])
    # The closing lines name files that exist and the report command.
    done = next(i for i, line in enumerate(lines) if line.startswith("Done. Results are in"))
    closing = lines[done:]
    assert f"{workdir / 'results'}/" in closing[0]
    named = [line.split(":")[0].strip() for line in closing[1:4]]
    assert named == ["results/results_table.csv", "results/demo/correlations.csv", "report.html"]
    assert all((workdir / path).is_file() for path in named[:2])
    assert any(line.strip() == "snakemake --report report.html" for line in closing)
    assert "Error" not in console


_CONSOLE_LINE = re.compile(r"^(\[\d\d:\d\d:\d\d\] |Interrupted \(|Resume with )")

INTERRUPTS = {
    "sigint-to-snakemake": (signal.SIGINT, False),
    "sigint-to-its-group": (signal.SIGINT, True),
    "sigterm-to-snakemake": (signal.SIGTERM, False),
}


@pytest.fixture
def sigint_reaches_snakemake():
    """SIGINT at its default in the Snakemake the test starts. A shell's background job
    ignores SIGINT and passes that on, and a Python that starts with SIGINT ignored raises no
    KeyboardInterrupt: the test would measure nothing. A signal handled in this process is
    back at its default in a child."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("interrupt", INTERRUPTS)
def test_an_interrupted_run_finishes_with_a_plain_rerun(
    uninterrupted, tmp_path, interrupt, sigint_reaches_snakemake
):
    """SIGINT to Snakemake (`kill -INT`, `timeout -s INT`), to its process group (a terminal's
    Ctrl-C) or SIGTERM (a batch system) mid-run: the console says it was interrupted and how
    to resume, and a plain rerun finishes the run, byte-identical to an uninterrupted one."""
    reference_dir, _ = uninterrupted
    sent, to_group = INTERRUPTS[interrupt]
    workdir = copy_workflow(tmp_path / interrupt)
    console_path = workdir / "interrupted.log"
    process = _start_and_wait_for_scoring(workdir, console_path)
    try:
        if to_group:
            os.killpg(process.pid, sent)
        else:
            os.kill(process.pid, sent)
        process.wait(timeout=RUN_TIMEOUT_S)
    finally:
        _kill_group(process)
    console = console_path.read_text()
    name = signal.Signals(sent).name
    assert process.returncode != 0, console[-3000:]
    assert f"Interrupted ({name}): " in console, console[-3000:]
    assert "Resume with `snakemake --cores 2`" in console, console[-3000:]
    for failure in ("Error in", "did not complete successfully", "died with"):
        assert failure not in console, console[-3000:]
    # The console's own lines are short. A job that Ctrl-C hits while its Python is still
    # starting writes Python's KeyboardInterrupt traceback straight to the terminal, before it
    # could send its output to its log, quoting Snakemake's one-line script preamble: that
    # line is the job's, not the console's.
    own = [line for line in console.splitlines() if _CONSOLE_LINE.match(line)]
    assert own and max(map(len, own)) <= MAX_LINE, console[-3000:]

    rerun = snakemake(workdir, "--cores", "2")
    assert "Done. Results are in" in rerun.stderr, rerun.stderr[-3000:]
    expected, got = output_files(reference_dir), output_files(workdir)
    assert sorted(got) == sorted(expected)
    differing = sorted(name for name in expected if got[name] != expected[name])
    assert not differing, f"outputs differ from an uninterrupted run: {differing}"
