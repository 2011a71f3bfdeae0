"""What a run prints on the console: one line per finished job, errors that name the job's log,
an interrupt reported as an interrupt, and where the results are at the end.

Snakemake's own console prints every job's inputs, outputs, resources and reason as it starts
(on the demo 1,374 lines, one of 3,190 characters listing a shard's recordings), its percentage
falls when a checkpoint adds jobs, and a Ctrl-C ends in "Error in rule ... died with SIGINT"
and "At least one job did not complete successfully". :class:`ConsoleHandler` takes the place
of Snakemake's console handler in the main process of a run
(:func:`~pathbench_flow.runtime.snakemake_patches.patch_console`, called by
``workflow/Snakefile``); Snakemake's full log (``.snakemake/log/``) and each job's log under
``logs/`` keep everything, as before.

Why not a logger plugin (``--logger``, ``snakemake-interface-logger-plugins``): Snakemake finds
plugins by scanning ``sys.path`` for ``snakemake_logger_plugin_*`` packages
(``pkgutil.iter_modules``), which does not see a package of an editable install (``pip install
-e .``, this project's documented install, maps it through an import hook), and a profile that
names a logger Snakemake cannot find refuses every command, ``--lint`` and ``-n`` included. The
Snakefile runs in every install, and replacing only Snakemake's stream handler leaves a logger
plugin that a user selects, the log file and ``--quiet`` working as they did.
"""

from __future__ import annotations

import logging
import re
import shlex
import textwrap
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snakemake.logging import ColorizingTextHandler, show_logs
from snakemake_interface_logger_plugins.common import LogEvent

MAX_LINE = 300
"""Longest line this console writes itself (Snakemake's and a job's error texts pass as they
are: an error may be long, and cutting it would hide the cause)."""

_SIGNAL_DEATH = re.compile(
    r"died with <Signals\.(?P<signal>SIGINT|SIGTERM): \d+>"
    r"|returned non-zero exit status (?P<status>130|143)\b"
)
"""How a job's error reads when the job was stopped by a signal (a shell reports 128 + n)."""
_STATUS_SIGNALS = {"130": "SIGINT", "143": "SIGTERM"}

_SIGINT_MESSAGE = "Terminating processes on user request"
_SIGTERM_MESSAGE = "Will exit after finishing currently running jobs"
_UNFINISHED_MESSAGE = "At least one job did not complete successfully."
_CHATTER = (
    "Select jobs to execute...",
    "Updating checkpoint dependencies.",
    "DAG of jobs will be updated after completion.",
    "Job rate limit reached, waiting for free slots.",
    "Shutting down, this might take some time.",
    "Waiting for queue input...",
)
"""Scheduler messages that say nothing a person acts on; the full log keeps them."""


@dataclass(frozen=True)
class Job:
    """What the console needs of a started job: its rule and wildcards name it."""

    rule: str
    wildcards: Mapping[str, str]

    def describe(self) -> str:
        if not self.wildcards:
            return self.rule
        values = ", ".join(f"{key}={value}" for key, value in self.wildcards.items())
        return f"{self.rule} ({values})"


def fit(text: str, width: int = MAX_LINE) -> str:
    """``text`` cut to ``width`` characters, with an ellipsis where it was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def file_list(label: str, paths: Sequence[str], indent: str = "    ") -> str:
    """``label: a, b, c`` or, when that would pass :data:`MAX_LINE`, the count and the first
    paths (a shard's job reads hundreds of recordings; the rule names them all)."""
    line = f"{indent}{label}: {', '.join(paths)}"
    if len(line) <= MAX_LINE:
        return line
    shown: list[str] = []
    for path in paths:
        head = f"{indent}{label}: {len(paths)} files: {', '.join([*shown, path])}"
        if len(head) + len(f", … {len(paths)} in all") > MAX_LINE:
            break
        shown.append(path)
    return fit(f"{indent}{label}: {len(paths)} files: {', '.join(shown)}, …")


def progress_line(done: int, total: int, total_known: bool, jobs: Iterable[Job], now: str) -> str:
    """``[12:03:04] 51 of 87 jobs done (58%): rule (wildcards)``; while a checkpoint has still
    to add its jobs the total is a count so far, ``12 of ≥67 jobs done``, without a
    percentage (the percentage falls when the total grows). The percentage is rounded down,
    so 100 % means every job."""
    if total_known:
        count = f"{done} of {total} jobs done ({done * 100 // max(total, 1)}%)"
    else:
        count = f"{done} of ≥{total} jobs done"
    names = "; ".join(job.describe() for job in jobs)
    return fit(f"[{now}] {count}: {names}" if names else f"[{now}] {count}")


FORCE_FLAGS = frozenset({"-F", "--forceall", "-f", "--force"})
"""Options that rerun finished jobs: a resume drops them, or it would redo the whole run."""
FORCE_LISTS = frozenset({"-R", "--forcerun"})
"""Options that rerun the rules named after them (up to the next option)."""


def resume_command(argv: Sequence[str]) -> str:
    """The command that resumes a run: the run's own command line, as ``snakemake ...``,
    without the options that force finished jobs to run again."""
    kept: list[str] = []
    naming_rules = False
    for argument in argv[1:]:
        if naming_rules and not argument.startswith("-"):
            continue
        naming_rules = argument in FORCE_LISTS
        if naming_rules or argument in FORCE_FLAGS or argument.startswith("--forcerun="):
            continue
        kept.append(argument)
    return shlex.join(["snakemake", *kept])


class ConsoleHandler(ColorizingTextHandler):
    """Snakemake's console, one line per finished job (see the module's docstring).

    ``total_known`` says whether the run's job count is final, i.e. no checkpoint job is
    left to add jobs; ``argv`` is the run's command line, for the resume command.
    Snakemake's own filters (``--quiet``) stay in front of it.
    """

    def __init__(
        self,
        replaced: ColorizingTextHandler,
        total_known: Callable[[], bool],
        argv: Sequence[str],
        *,
        show_failed_logs: bool = False,
        clock: Callable[[], str] = lambda: time.strftime("%H:%M:%S"),
    ) -> None:
        super().__init__(nocolor=replaced.nocolor, stream=replaced.stream)
        for log_filter in replaced.filters:
            self.addFilter(log_filter)
        if replaced.formatter is not None:
            self.setFormatter(replaced.formatter)
        self.name = "PathbenchConsole"
        self.total_known, self.argv = total_known, argv
        self.show_failed_logs, self.clock = show_failed_logs, clock
        self.jobs: dict[int, Job] = {}
        self.running: set[int] = set()
        self.finished: list[int] = []
        self.stopped: set[int] = set()
        self.failed: set[int] = set()
        self.done, self.total, self.known = 0, 0, False
        self.interrupt: str | None = None
        self._signal_deaths: dict[int | None, str] = {}
        self._main_thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        """Write what :meth:`render` makes of ``record``, if anything, as Snakemake's handler
        writes (colour by level, flushed)."""
        try:
            text = self.render(record)
            if text:
                self.stream.write(self.decorate(record, text) + self.terminator)
                self.flush()
        except (KeyboardInterrupt, SystemExit):
            pass  # Snakemake's handler does the same: the interrupt is handled elsewhere.
        except Exception:
            self.handleError(record)

    def render(self, record: logging.LogRecord) -> str:
        """The console text for one record ("" for none), updating what the run has done."""
        event = getattr(record, "event", None)
        message = record.getMessage() if record.msg is not None else ""
        if event == LogEvent.JOB_INFO:
            jobid = record.jobid  # type: ignore[attr-defined]
            self.jobs[jobid] = Job(record.rule_name, dict(record.wildcards))  # type: ignore[attr-defined]
            self.running.add(jobid)
            return ""
        if event == LogEvent.JOB_FINISHED:
            self.running.discard(record.job_id)  # type: ignore[attr-defined]
            self.finished.append(record.job_id)  # type: ignore[attr-defined]
            return ""
        if event == LogEvent.PROGRESS:
            return self._progress(record.done, record.total)  # type: ignore[attr-defined]
        if event == LogEvent.JOB_ERROR:
            return self._job_error(record)
        if event == LogEvent.ERROR:
            return self._error(record, message)
        if event in (LogEvent.JOB_STARTED, LogEvent.WORKFLOW_STARTED):
            # The start of each job is in its progress line when it ends; the run's header
            # (host, command, config) is in the full log.
            return ""
        if message.startswith(_SIGINT_MESSAGE):
            return self._interrupted("SIGINT", "stopping the run")
        if message.startswith(_SIGTERM_MESSAGE):
            return self._interrupted("SIGTERM", "waiting for the running jobs")
        if message in _CHATTER:
            return ""
        return self.format(record)

    def _progress(self, done: int, total: int) -> str:
        self.done, self.total = done, total
        self.known = self.total_known()
        jobs = [self.jobs[jobid] for jobid in self.finished if jobid in self.jobs]
        self.finished = []
        return progress_line(done, total, self.known, jobs, self.clock())

    def _interrupted(self, signal: str, what: str) -> str:
        if self.interrupt is not None:
            return ""
        self.interrupt = signal
        return f"[{self.clock()}] {signal} received: starting no new jobs, {what}."

    def _error(self, record: logging.LogRecord, message: str) -> str:
        """A job's exception, or the run's last one. A job stopped by a signal is reported with
        its job (the JOB_ERROR record its thread logs next): one that died of SIGINT or
        SIGTERM, and after a SIGINT every job that ends in an error (a job hit while Python
        starts exits with status 1). The run's closing "did not complete" becomes an
        interrupt's summary when the run was interrupted (after the error itself when a job
        also failed on its own)."""
        death = _SIGNAL_DEATH.search(message)
        if death:
            self._signal_deaths[record.thread] = death["signal"] or _STATUS_SIGNALS[death["status"]]
            return ""
        if self.interrupt == "SIGINT" and record.thread != self._main_thread:
            self._signal_deaths[record.thread] = self.interrupt
            return ""
        exception = getattr(record, "exception", None)
        if exception == "KeyboardInterrupt":
            self.interrupt = self.interrupt or "SIGINT"
            return self.interrupt_summary()
        if _UNFINISHED_MESSAGE in message and self.interrupt is not None:
            summary = self.interrupt_summary()
            return f"{self.format(record)}\n{summary}" if self.failed else summary
        return self.format(record)

    def _job_error(self, record: logging.LogRecord) -> str:
        info: dict[str, Any] = record.__dict__
        jobid = info["jobid"]
        self.running.discard(jobid)
        job = self.jobs.get(jobid, Job(info["rule_name"], {}))
        signal = self._signal_deaths.pop(record.thread, None)
        if signal is None and self.interrupt == "SIGINT":
            signal = self.interrupt
        if signal is not None:
            self.stopped.add(jobid)
            logs = ", ".join(info.get("log") or []) or "none"
            return fit(f"[{self.clock()}] stopped by {signal}: {job.describe()}; log: {logs}")
        self.failed.add(jobid)
        return "\n".join(self.error_lines(job, jobid, info))

    def error_lines(self, job: Job, jobid: int, info: Mapping[str, Any]) -> list[str]:
        """A failed job: its rule and wildcards, its log first (the cause is there), then what
        Snakemake says of it, file lists shortened to a line."""
        lines = [fit(f"[{self.clock()}] Error in {job.describe()}, job {jobid}:")]
        logs = list(info.get("log") or [])
        if logs:
            lines.append(fit(f"    log: {', '.join(logs)} (the job's output: the cause is there)"))
        else:
            lines.append("    log: none (this rule keeps no log; the error is above)")
        if info.get("rule_msg"):
            lines.append(f"    message: {info['rule_msg']}")
        if info.get("output"):
            lines.append(file_list("output", info["output"]))
        if info.get("input"):
            lines.append(file_list("input", info["input"]))
        if info.get("conda_env"):
            lines.append(f"    conda-env: {info['conda_env']}")
        if info.get("shellcmd"):
            lines.append(f"    shell: {info['shellcmd']}")
        lines += [f"    {key}: {value}" for key, value in (info.get("aux") or {}).items()]
        if self.show_failed_logs and logs:
            lines += show_logs(logs)
        return lines

    def interrupt_summary(self) -> str:
        """What an interrupted run says last: how far it got, what was stopped, how to go on."""
        stopped = self.stopped | self.running
        bound = "" if self.known else "≥"
        count = f"{self.done} of {bound}{self.total} jobs done" if self.total else "no job done"
        what = f"{len(stopped)} running job{'s' if len(stopped) != 1 else ''} stopped"
        if self.failed:
            what += f", {len(self.failed)} failed (above)"
        return "\n".join(
            [
                f"Interrupted ({self.interrupt}): {count}, {what}.",
                fit(
                    f"Resume with `{resume_command(self.argv)}`: finished jobs are kept, "
                    "stopped ones start over."
                ),
            ]
        )


DIRECTORY_OPTIONS = ("--directory", "-d")
"""Snakemake's options naming the working directory it enters before the run."""


def run_directory(argv: Sequence[str]) -> str | None:
    """The working directory a run's command line gives (``--directory D``, ``-d D``,
    ``--directory=D``), as typed, or None when it gives none."""
    for at, argument in enumerate(argv[1:], start=1):
        if argument in DIRECTORY_OPTIONS and at + 1 < len(argv):
            return argv[at + 1]
        if argument.startswith("--directory="):
            return argument.split("=", 1)[1]
    return None


def invocation_directory(directory: str | None) -> Path | None:
    """The directory the run was started in, from the working directory Snakemake entered
    (the current one) and the ``--directory`` given: None when that cannot be told (an
    absolute ``--directory``, one with ``..``, or a symbolic link on the way)."""
    cwd = Path.cwd()
    if directory is None:
        return cwd
    given = Path(directory)
    if given.is_absolute() or ".." in given.parts:
        return None
    start = cwd
    for _ in [part for part in given.parts if part != "."]:
        start = start.parent
    return start if (start / given).resolve() == cwd.resolve() else None


def closing_lines(
    datasets: Sequence[str],
    configfiles: Sequence[Path],
    config_args: Sequence[str],
    argv: Sequence[str] = (),
) -> list[str]:
    """What a finished run says last: where the results are and, when the run made the
    results table (not a run of some targets only), the three files to open first and the
    command that makes the report, with the run's working directory and config options so
    the report is of this run. The results' paths are relative to the working directory,
    which Snakemake has entered; the report command is for the directory the run was
    started in: it repeats the run's ``--directory`` (from ``argv``, the run's command line)
    and gives the config files (absolute, as Snakemake holds them) relative to that directory
    when they are under it."""
    cwd = Path.cwd()
    table = Path("results/results_table.csv")
    if not table.is_file():
        return [fit(f"Done. Results are in {cwd / 'results'}/.")]
    directory = run_directory(argv)
    start = invocation_directory(directory)
    report = ["snakemake"]
    if directory is not None:
        report += ["--directory", directory]
    if configfiles:
        report += [
            "--configfile",
            *(
                str(p.relative_to(start))
                if start is not None and p.is_relative_to(start)
                else str(p)
                for p in configfiles
            ),
        ]
    if config_args:
        report += ["--config", *config_args]
    report += ["--report", "report.html"]
    if len(datasets) == 1:
        correlations = f"results/{datasets[0]}/correlations.csv"
    else:
        correlations = f"results/<dataset>/correlations.csv (datasets: {', '.join(datasets)})"
    return [
        fit(f"Done. Results are in {cwd / 'results'}/; open first:"),
        f"  {table}: every metric against every dataset, "
        "sign-aligned Pearson r in PathBench's layout",
        fit(
            f"  {correlations}: per metric r, Spearman rho, p-values, bootstrap interval, "
            "speakers used and left out"
        ),
        f"  {'report.html' if directory is None else Path(directory) / 'report.html'}: "
        "the tables, plots and captions in one page, made by",
        fit(f"    {shlex.join(report)}"),
        *stage_warnings(),
    ]


UNCERTAINTY_WARNINGS = Path("results/uncertainty/warnings.txt")
"""The uncertainty stage's warnings (a measure flagged, datasets sharing speakers)."""
WARNING_WIDTH = 100


def stage_warnings() -> list[str]:
    """The uncertainty stage's warnings, wrapped, for the end of the run: they change how its
    intervals read, and a job's log is not where a reader looks."""
    warnings = (
        UNCERTAINTY_WARNINGS.read_text().splitlines() if UNCERTAINTY_WARNINGS.exists() else []
    )
    if not warnings:
        return []
    lines = [f"Warnings ({UNCERTAINTY_WARNINGS}):"]
    for warning in warnings:
        lines += textwrap.wrap(
            warning, WARNING_WIDTH, initial_indent="  ", subsequent_indent="    "
        )
    return lines
