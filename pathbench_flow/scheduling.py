"""One pending re-evaluation of the job queue at a time in Snakemake's scheduler.

Snakemake's scheduler makes a pass over the ready jobs when a job ends, and at the end of every
pass that saw jobs waiting it arms a timer (``--max-jobs-per-timespan``'s timespan) that makes
another pass, in case the job rate limit held jobs back. A pass made by that timer arms the
next one, so every job that ends while others wait for a core starts a chain of passes that
lasts until no job waits: after ``k`` jobs, ``k`` timers fire per timespan. Each pass stats the
inputs of every ready job (``update_input_sizes``) and selects among them, so the scheduler's
CPU grew with the square of the job count times the ready jobs (py-spy of the main process on
a UASpeech-sized corpus with cheap jobs: 40 % of its samples in job selection, most of them
stat calls, and another 39 % starting timer threads; benchmarks/README.md has the numbers).

:func:`install` keeps at most one such timer pending: a pass arms one only when none is
pending, and the timer clears that mark before it wakes the scheduler, so the pass it causes
arms the next. A re-evaluation therefore still follows every pass within the timespan, as
before, and jobs still start the moment a core frees up (a job's end wakes the scheduler
directly). The timer is a daemon thread: the run no longer waits for it to fire before it
exits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

_PENDING = "_pathbench_reevaluation_pending"
_METHOD = "_schedule_reevalutation"  # Snakemake's spelling


def _coalesced(schedule: Callable[[Any, float], None]) -> Callable[[Any, float], None]:
    """Snakemake's ``schedule`` (arm a timer that wakes the scheduler's loop) made a no-op
    while a re-evaluation is pending."""

    def schedule_once(scheduler: Any, delay: float) -> None:
        """Called by the scheduler's loop only (one thread), so the check and the mark need no
        lock; the timer clears the mark before Snakemake's own wake-up (``schedule`` with no
        delay), so the pass that wake-up starts arms the next one."""
        if getattr(scheduler, _PENDING, False):
            return
        setattr(scheduler, _PENDING, True)

        def fire() -> None:
            setattr(scheduler, _PENDING, False)
            schedule(scheduler, 0)

        timer = threading.Timer(delay, fire)
        timer.daemon = True
        timer.start()

    return schedule_once


def install(workflow: Any) -> None:
    """Coalesce the scheduler's timed re-evaluations in the main process of a real run (a dry
    run selects no jobs). Snakemake versions whose scheduler has no such timer method are left
    as they are, with a warning: the run is correct either way, only the main process's CPU
    differs."""
    if not workflow.is_main_process or workflow.output_settings.dryrun:
        return
    from snakemake.scheduling.job_scheduler import JobScheduler

    schedule = getattr(JobScheduler, _METHOD, None)
    if not callable(schedule):
        logging.getLogger("snakemake.logging").warning(
            "pathbench_flow.scheduling: this Snakemake's scheduler has no %s; its timed "
            "re-evaluations are left uncoalesced (more CPU in the main process on large runs)",
            _METHOD,
        )
        return
    if not getattr(schedule, "coalesced", False):
        coalesced = _coalesced(schedule)
        coalesced.coalesced = True  # type: ignore[attr-defined]
        setattr(JobScheduler, _METHOD, coalesced)
