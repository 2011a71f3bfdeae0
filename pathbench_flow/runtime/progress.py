"""Progress lines in a job's log, so a user of a multi-hour run sees where each job is.

A long job (scoring a shard, trimming it, extracting its features) writes to standard error,
which every script redirects to the job's log file, a line such as::

    score_utterances cpps demo/0003: 120/250 utterances, 4.1 utt/s, eta 32 s

at most every :data:`EVERY_S` seconds, and one final line when it has seen every item. Lines
are flushed as they are written, so ``tail -f`` on the log shows them at once. Logs are not
outputs: nothing here touches what a job writes, so results stay byte-identical.

The clock and the stream are parameters, so the tests drive time by hand instead of sleeping.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TextIO, TypeVar

T = TypeVar("T")

EVERY_S = 15.0
"""Seconds between two progress lines of one job: often enough to follow a job, rarely enough
that a job of thousands of utterances writes a few hundred lines at most."""

_SHORT_UNITS = {"utterances": "utt", "speakers": "spk"}


def duration(seconds: float) -> str:
    """Seconds as a person reads a remaining time: ``32 s``, ``14 min``, ``2.5 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """Counts the items of one job and writes a line now and then, and one at the end.

    ``label`` names the job (rule, evaluator, dataset/shard); ``total`` is the number of items
    it will see, ``unit`` what they are. ``stream`` defaults to the current ``sys.stderr``,
    looked up when writing, because scripts point it at the log after importing this module.
    """

    def __init__(
        self,
        label: str,
        total: int,
        unit: str = "utterances",
        *,
        every_s: float = EVERY_S,
        clock: Callable[[], float] = time.monotonic,
        stream: TextIO | None = None,
    ) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.every_s, self.clock, self.stream = every_s, clock, stream
        self.done = 0
        self.started = clock()
        self._last_line = self.started
        self._finished = False

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more items done; write a line if :attr:`every_s` passed since the last
        (none for the last item: :meth:`finish` reports it)."""
        self.done += n
        if self.done >= self.total:
            return
        now = self.clock()
        if now - self._last_line >= self.every_s:
            self._write(self.line(now))
            self._last_line = now

    def finish(self) -> None:
        """Write the final line (once): items done, elapsed time and mean rate."""
        if self._finished:
            return
        self._finished = True
        now = self.clock()
        elapsed = now - self.started
        self._write(
            f"{self.label}: {self.done}/{self.total} {self.unit} in {duration(elapsed)}"
            f"{self._rate(elapsed)}, done"
        )

    def line(self, now: float) -> str:
        """The progress line at time ``now``: done/total, mean rate, and the remaining time
        at that rate (none before the first item is done)."""
        elapsed = now - self.started
        text = f"{self.label}: {self.done}/{self.total} {self.unit}{self._rate(elapsed)}"
        if self.done and elapsed > 0 and self.done < self.total:
            remaining = (self.total - self.done) * elapsed / self.done
            text += f", eta {duration(remaining)}"
        return text

    def _rate(self, elapsed: float) -> str:
        """Items per second, or seconds per item when that reads better (slow items)."""
        if elapsed <= 0 or not self.done:
            return ""
        short = _SHORT_UNITS.get(self.unit, self.unit)
        per_second = self.done / elapsed
        if per_second >= 1:
            return f", {per_second:.1f} {short}/s"
        return f", {elapsed / self.done:.1f} s/{short}"

    def _write(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(text + "\n")
        stream.flush()

    def iterate(self, items: Iterable[T]) -> Iterator[T]:
        """Yield ``items``, counting each one done when the next is asked for (or at the end)."""
        first = True
        for item in items:
            if not first:
                self.advance()
            first = False
            yield item
        if not first:
            self.advance()

    def over(self, items: Sequence[T]) -> Sequence[T]:
        """``items`` as a sequence whose iteration counts progress (for batch interfaces that
        take a sequence, such as :func:`pathbench_flow.evaluators.base.evaluate_all`)."""
        return _CountedSequence(items, self)


class _CountedSequence(Sequence[T]):
    """A read-only view of a sequence that reports each iterated item to a :class:`Progress`.

    Indexing and ``len`` pass through uncounted; only a pass of ``for`` over the view counts.
    """

    def __init__(self, items: Sequence[T], progress: Progress) -> None:
        self._items, self._progress = items, progress

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: Any) -> Any:
        return self._items[index]

    def __iter__(self) -> Iterator[T]:
        return self._progress.iterate(self._items)


def progress(
    items: Sequence[T],
    label: str,
    unit: str = "utterances",
    *,
    every_s: float = EVERY_S,
    clock: Callable[[], float] = time.monotonic,
    stream: TextIO | None = None,
) -> Iterator[T]:
    """Iterate ``items`` with progress lines and the final line (a loop's one-line wrapper)."""
    meter = Progress(label, len(items), unit, every_s=every_s, clock=clock, stream=stream)
    yield from meter.iterate(items)
    meter.finish()
