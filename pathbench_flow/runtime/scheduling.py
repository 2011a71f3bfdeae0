"""Snakemake's scheduler made cheap with many jobs: one pending re-evaluation of the job queue at
a time, and each input's size stat'ed once until a job writes it.

Snakemake's scheduler makes a pass over the ready jobs when a job ends, and at the end of every
pass that saw jobs waiting it arms a timer (``--max-jobs-per-timespan``'s timespan) that makes
another pass, in case the job rate limit held jobs back. A pass made by that timer arms the
next one, so every job that ends while others wait for a core starts a chain of passes that
lasts until no job waits: after ``k`` jobs, ``k`` timers fire per timespan. Each pass stats the
inputs of every ready job (``update_input_sizes``) and selects among them, so the scheduler's
CPU grew with the square of the job count times the ready jobs (py-spy of the main process on
a UASpeech-sized corpus with cheap jobs: 40 % of its samples in job selection, most of them
stat calls, and another 39 % starting timer threads; benchmarks/README.md has the numbers).

:func:`coalesced` keeps at most one such timer pending: a pass arms one only when none is
pending, and the timer clears that mark before it wakes the scheduler, so the pass it causes
arms the next. A re-evaluation therefore still follows every pass within the timespan, as
before, and jobs still start the moment a core frees up (a job's end wakes the scheduler
directly). The timer is a daemon thread: the run no longer waits for it to fire before it
exits.

The other term: each pass stats every input of every ready job (``update_input_sizes``, an
``exists`` and a ``size`` per path, each an asyncio task, to rank jobs by input and temp-file
size: the greedy selector's reward and the ILP's temp term both read them), so with many jobs
ready it grew like the passes times the ready inputs. :func:`measured_once` makes that stat each
path once: a size already measured is kept, only paths not yet measured (or missing when last
looked at) are stat'ed, and a job still ready from the pass before with every input measured
is not looked at again. An input of a ready job is complete, and inside a run a file changes
only when a job writes it (a retry, a job a checkpoint's new DAG reruns, a temp file made again
after its deletion): the outputs of every job that finishes are forgotten before the pass that
follows it (:func:`forgetting_outputs`), so whatever reads them next measures them anew. A stale
size could only change the order jobs start in, never what they compute.

These wrap Snakemake's scheduler methods;
:func:`pathbench_flow.runtime.snakemake_patches.patch_scheduler` puts them in place, for the
Snakemake versions they were checked on.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

_PENDING = "_pathbench_reevaluation_pending"
_MEASURED = "_pathbench_measured_jobs"
_LIMIT = "_pathbench_input_sizes_limit"
_KEPT = 10_000
"""Past this many sizes kept (Snakemake's bound), or twice as many as the last such pruning
left, the sizes of paths no ready job reads are dropped: memory stays bounded by the ready
jobs' inputs, and with more ready inputs than that the pruning does not run in every pass."""


def coalesced(schedule: Callable[[Any, float], None]) -> Callable[[Any, float], None]:
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


async def _size(path: Any) -> tuple[Any, int | None]:
    """Snakemake's measure of one input: its size, or None when it does not exist (yet)."""
    return path, await path.size() if await path.exists() else None


def measured_once(
    update: Callable[[Any, Iterable[Any]], Awaitable[None]],
) -> Callable[[Any, Iterable[Any]], Awaitable[None]]:
    """Snakemake's ``update_input_sizes`` (stat every input of the ready jobs into the
    scheduler's ``_input_sizes``) made to look only at the jobs that were not ready in the
    previous pass, and stat only their paths it has no size for."""

    async def update_new_input_sizes(scheduler: Any, jobs: Iterable[Any]) -> None:
        """Called from the scheduler's loop only. A job stays measured while it stays ready
        with every input's size known; one that leaves the ready jobs and comes back (a retry)
        is looked at again. A scheduler without the dict this fills (a Snakemake that renamed
        it) gets Snakemake's own method."""
        sizes = getattr(scheduler, "_input_sizes", None)
        if not isinstance(sizes, dict):
            await update(scheduler, jobs)
            return
        ready = set(jobs)
        measured = getattr(scheduler, _MEASURED, set()) & ready
        new_jobs = ready - measured
        new = {path for job in new_jobs for path in job.input if sizes.get(path) is None}
        if new:
            sizes.update(await asyncio.gather(*map(_size, new)))
        measured.update(
            job for job in new_jobs if all(sizes[path] is not None for path in job.input)
        )
        setattr(scheduler, _MEASURED, measured)
        if len(sizes) > getattr(scheduler, _LIMIT, _KEPT):
            read = {path for job in ready for path in job.input}
            for path in [path for path in sizes if path not in read]:
                del sizes[path]
            setattr(scheduler, _LIMIT, max(_KEPT, 2 * len(sizes)))

    return update_new_input_sizes


def forgetting_outputs(finish: Callable[[Any], None]) -> Callable[[Any], None]:
    """Snakemake's ``_finish_jobs`` (post-process the jobs that ended, in the scheduler's loop
    before it selects jobs) made to forget first the sizes of what those jobs wrote."""

    def finish_jobs(scheduler: Any) -> None:
        """A group job's own ``output`` leaves out what its members pass to each other, which
        jobs outside the group may read too: its members' outputs are forgotten instead. A
        job's output is normally measured only after the job ends (its readers wait for it);
        if one was measured before, every ready job is looked at again in the next pass."""
        sizes = getattr(scheduler, "_input_sizes", None)
        if isinstance(sizes, dict):
            for job in scheduler._tofinish:
                for member in job.jobs if job.is_group() else (job,):
                    for path in member.output:
                        if path in sizes:
                            del sizes[path]
                            setattr(scheduler, _MEASURED, set())
        finish(scheduler)

    return finish_jobs
