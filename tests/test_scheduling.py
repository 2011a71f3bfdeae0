"""The scheduler's timed re-evaluations coalesced and its inputs stat'ed once
(pathbench_flow/runtime/scheduling.py, put in place by runtime/snakemake_patches.py).

Snakemake's own timer method is the one wrapped and run here, on an object with the semaphore
the scheduler's loop waits on; each release is one pass of that loop. The input sizes are
checked on the state of Snakemake's scheduler those methods touch, on real files, and in a real
small run that counts every size Snakemake reads. Whole runs with the patch installed are
tests/test_resume.py's and the demo's.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from snakemake.scheduling.job_scheduler import JobScheduler

from pathbench_flow.runtime import scheduling
from pathbench_flow.runtime.scheduling import coalesced, forgetting_outputs, measured_once
from pathbench_flow.testing.workflow_run import LOCAL_RUN

SNAKEMAKES = JobScheduler.__dict__["_schedule_reevalutation"]


class Loop:
    """What Snakemake's timer wakes: the scheduler loop's semaphore."""

    def __init__(self) -> None:
        self._open_jobs = threading.Semaphore(0)

    def passes(self, within: float) -> int:
        """Wake-ups (loop passes) counted until none comes for ``within`` seconds."""
        count = 0
        while self._open_jobs.acquire(timeout=within):
            count += 1
        return count


def test_snakemakes_timers_pile_up() -> None:
    """The cost being fixed: every call arms its own timer, so passes multiply."""
    loop = Loop()
    for _ in range(20):
        SNAKEMAKES(loop, 0.05)
    assert loop.passes(within=1.0) == 20


def test_one_pending_timer_wakes_the_loop_once() -> None:
    loop = Loop()
    schedule = coalesced(SNAKEMAKES)
    for _ in range(20):
        schedule(loop, 0.05)
    assert loop.passes(within=1.0) == 1


def test_the_pass_a_timer_starts_arms_the_next() -> None:
    """A re-evaluation still follows every pass: after the timer fired, a call arms a new
    one, which wakes the loop again."""
    loop = Loop()
    schedule = coalesced(SNAKEMAKES)
    for round_ in range(3):
        schedule(loop, 0.05)
        schedule(loop, 0.05)
        assert loop.passes(within=1.0) == 1, f"round {round_}"


def test_the_timer_does_not_hold_the_process() -> None:
    """A daemon thread: a finished run exits without waiting for a pending re-evaluation."""
    loop = Loop()
    before = set(threading.enumerate())
    coalesced(SNAKEMAKES)(loop, 30.0)
    (timer,) = set(threading.enumerate()) - before
    assert timer.daemon
    timer.cancel()


class File(str):
    """A path with the two awaitables Snakemake's ``update_input_sizes`` calls on an input
    (``_IOFile.exists`` and ``_IOFile.size``), reading the real file system."""

    async def exists(self) -> bool:
        return os.path.exists(self)

    async def size(self) -> int:
        return os.path.getsize(self)


@dataclass(eq=False)
class Job:
    """A ready job as the two methods read it; hashed by identity, as Snakemake's are."""

    input: list[File] = field(default_factory=list)
    output: list[File] = field(default_factory=list)
    jobs: tuple[Job, ...] = ()

    def is_group(self) -> bool:
        return bool(self.jobs)


class Scheduler:
    """The state of Snakemake's scheduler the two input-size methods touch."""

    def __init__(self) -> None:
        self._input_sizes: dict[File, int | None] = {}
        self._tofinish: list[Job] = []
        self.finished: list[Job] = []

    def finish(self, jobs: list[Job]) -> None:
        """One pass's ``_finish_jobs`` with ``jobs`` ended, Snakemake's own work recorded."""
        self._tofinish = list(jobs)
        forgetting_outputs(lambda scheduler: scheduler.finished.extend(scheduler._tofinish))(self)
        self._tofinish.clear()


def measure(scheduler: Scheduler, jobs: list[Job]) -> dict[File, int | None]:
    """One pass's ``update_input_sizes``; the sizes the selector then reads."""
    update = measured_once(JobScheduler.__dict__["update_input_sizes"])
    asyncio.run(update(scheduler, jobs))
    return dict(scheduler._input_sizes)


def test_a_size_measured_is_kept_until_a_job_that_writes_the_file_ends(tmp_path: Path) -> None:
    """Rewriting a file behind the scheduler's back shows the size is not measured again;
    once a job that lists it as output ends, it is."""
    common, written = File(tmp_path / "common"), File(tmp_path / "written")
    common_bytes = b"abc"
    Path(common).write_bytes(common_bytes)
    Path(written).write_bytes(b"12345")
    scheduler = Scheduler()
    readers = [Job(input=[common, written]) for _ in range(3)]
    assert measure(scheduler, readers) == {common: 3, written: 5}
    Path(common).write_bytes(b"a much longer content")
    Path(written).write_bytes(b"1")
    assert measure(scheduler, readers) == {common: 3, written: 5}
    scheduler.finish([Job(jobs=(Job(output=[written]), Job(output=[File(tmp_path / "x")])))])
    assert scheduler.finished, "Snakemake's own _finish_jobs ran"
    assert measure(scheduler, readers) == {common: 3, written: 1}


def test_a_missing_input_is_looked_for_again(tmp_path: Path) -> None:
    late = File(tmp_path / "late")
    scheduler = Scheduler()
    assert measure(scheduler, [Job(input=[late])]) == {late: None}
    Path(late).write_bytes(b"here")
    assert measure(scheduler, [Job(input=[late])]) == {late: 4}


def test_sizes_no_ready_job_reads_are_dropped_past_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory stays bounded: past the bound, only the ready jobs' inputs keep their sizes,
    and the next pruning waits until twice as many are kept."""
    monkeypatch.setattr(scheduling, "_KEPT", 2)
    files = [File(tmp_path / str(i)) for i in range(6)]
    for file in files:
        Path(file).write_bytes(b"x")
    scheduler = Scheduler()
    assert len(measure(scheduler, [Job(input=files[:2])])) == 2
    assert measure(scheduler, [Job(input=files[2:3])]) == {files[2]: 1}
    assert measure(scheduler, [Job(input=files[3:4])]) == {files[2]: 1, files[3]: 1}
    assert measure(scheduler, [Job(input=files[4:6])]) == {files[4]: 1, files[5]: 1}


COUNTING_SNAKEFILE = """\
import json
from collections import Counter

import snakemake.io

from pathbench_flow.runtime import snakemake_patches
snakemake_patches.patch_scheduler(workflow)
SIZED = Counter()
_size = snakemake.io._IOFile.size


async def counted_size(self):
    SIZED[str(self)] += 1
    return await _size(self)


snakemake.io._IOFile.size = counted_size
INPUTS = [f"inputs/{i}.txt" for i in range(5)]


onsuccess:
    with open("sized.json", "w") as out:
        json.dump(SIZED, out)


rule all:
    input:
        expand("done/{job}", job=range(12)),


rule job:
    input:
        INPUTS,
        "shared.tmp",
    output:
        "done/{job}",
    shell:
        "touch {output}"


rule shared:
    output:
        temp("shared.tmp"),
    shell:
        "echo shared > {output}"
"""


@pytest.mark.parametrize("scheduler", ["greedy", "ilp"])
def test_a_real_run_stats_each_input_once(tmp_path: Path, scheduler: str) -> None:
    """Twelve jobs on one core, all ready at once and reading the same five files and a temp
    file another job makes (whose size the ILP weighs): Snakemake's scheduler made a pass per
    finished job and read the five sizes in each; with the patch installed it reads each once.
    The other reads are one per job that read the file, linear in the jobs: Snakemake's record
    of a finished job reads each input's size to decide whether to checksum it."""
    (tmp_path / "Snakefile").write_text(COUNTING_SNAKEFILE)
    (tmp_path / "inputs").mkdir()
    for i in range(5):
        (tmp_path / "inputs" / f"{i}.txt").write_text("x" * (i + 1))
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "--scheduler", scheduler],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=os.environ | LOCAL_RUN,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    sized = json.loads((tmp_path / "sized.json").read_text())
    inputs = [f"inputs/{i}.txt" for i in range(5)]
    assert {path: sized.get(path) for path in inputs} == {path: 1 + 12 for path in inputs}
