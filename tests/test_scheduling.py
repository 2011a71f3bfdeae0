"""The scheduler's timed re-evaluations coalesced (pathbench_flow/scheduling.py).

Snakemake's own timer method is the one wrapped and run here, on an object with the semaphore
the scheduler's loop waits on; each release is one pass of that loop. Whole runs with the
patch installed are tests/test_resume.py's and the demo's.
"""

from __future__ import annotations

import threading

from snakemake.scheduling.job_scheduler import JobScheduler

from pathbench_flow.scheduling import _METHOD, _coalesced

SNAKEMAKES = JobScheduler.__dict__[_METHOD]


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
    schedule = _coalesced(SNAKEMAKES)
    for _ in range(20):
        schedule(loop, 0.05)
    assert loop.passes(within=1.0) == 1


def test_the_pass_a_timer_starts_arms_the_next() -> None:
    """A re-evaluation still follows every pass: after the timer fired, a call arms a new
    one, which wakes the loop again."""
    loop = Loop()
    schedule = _coalesced(SNAKEMAKES)
    for round_ in range(3):
        schedule(loop, 0.05)
        schedule(loop, 0.05)
        assert loop.passes(within=1.0) == 1, f"round {round_}"


def test_the_timer_does_not_hold_the_process() -> None:
    """A daemon thread: a finished run exits without waiting for a pending re-evaluation."""
    loop = Loop()
    before = set(threading.enumerate())
    _coalesced(SNAKEMAKES)(loop, 30.0)
    (timer,) = set(threading.enumerate()) - before
    assert timer.daemon
    timer.cancel()
