"""Every change pathbench-flow makes to Snakemake's own objects, and the one internal it reads.

Snakemake offers no hook for what these do, so the workflow replaces a few of its attributes
when ``workflow/Snakefile`` is read. Each :class:`Patch` below says what it replaces, the
Snakemake versions it is applied on (``supported``) and those its target was read on
(``checked``: the installed 9.27.1, and 9.20.0, the oldest the project accepts), the upstream
issue it works around, and what a run loses without it. Outside ``supported`` the function
leaves Snakemake alone and warns once per process; tests/test_snakemake_patches.py fails when
Snakemake changes what a patch relies on, or stops doing what it works around, so that the
patch can be adapted or dropped.

Ranges: the scheduler's patches wrap private methods whose bodies they depend on (a timer armed
per pass, the ``_input_sizes`` dict), so they are applied only up to the last minor version
read (``<9.28``), and a newer Snakemake runs unpatched, correct and slower, until they are read
again. The others replace or read names whose contract is their signature (a report's graph,
its stylesheet, a logging handler, two ``Workflow`` methods), and would at worst have no
effect: they follow the project's own requirement, ``>=9.20,<10``.

What each patch does lives with its subject: :mod:`~pathbench_flow.runtime.scheduling`,
:mod:`~pathbench_flow.runtime.console`, :mod:`~pathbench_flow.runtime.results_run`, and the
report's graph and stylesheet in :mod:`pathbench_flow.reporting.report_graph`, which the
Snakefile hands to this module (reporting sits above runtime).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from pathbench_flow.runtime import results_run, scheduling
from pathbench_flow.runtime.console import ConsoleHandler

_PROJECT_RANGE = ">=9.20,<10"
_READ_RANGE = ">=9.20,<9.28"
_CHECKED = ("9.20.0", "9.27.1")
_WARNED: set[str] = set()


@cache
def snakemake_version() -> Version:
    """The installed Snakemake's version (its distribution's, without importing it)."""
    return Version(version("snakemake"))


def _warn(message: str, *args: Any) -> None:
    logging.getLogger("snakemake.logging").warning(message, *args)


@dataclass(frozen=True)
class Patch:
    """One change to Snakemake (or, for :data:`LANDING_PAGE`, one internal read)."""

    name: str
    target: str
    """What it replaces or reads, as Snakemake names it."""
    supported: str
    """The Snakemake versions it is applied on (a PEP 440 specifier)."""
    issue: str
    """The upstream issue it works around, or what was searched when none was found."""
    without: str
    """What a run loses when the patch is not applied."""
    checked: tuple[str, ...] = _CHECKED

    def applies(self) -> bool:
        """Whether the installed Snakemake is in :attr:`supported`; if not, warn once."""
        if snakemake_version() in SpecifierSet(self.supported):
            return True
        if self.name not in _WARNED:
            _WARNED.add(self.name)
            _warn(
                "pathbench_flow: Snakemake %s is outside %s, the versions the %s patch (%s) "
                "was checked for; Snakemake is left as it is: %s",
                snakemake_version(),
                self.supported,
                self.name,
                self.target,
                self.without,
            )
        return False


REEVALUATION_TIMER = Patch(
    "re-evaluation timer",
    "snakemake.scheduling.job_scheduler.JobScheduler._schedule_reevalutation",
    _READ_RANGE,
    "no upstream issue found (searched: scheduler reevaluation timer, max-jobs-per-timespan "
    "CPU many jobs); the nearest, https://github.com/snakemake/snakemake/issues/2967, sees "
    "the main process's threads and CPU grow over a long run",
    "one timer chain per finished job (the main process's CPU grows with the square of the "
    "job count)",
)
INPUT_SIZES = Patch(
    "input sizes",
    "JobScheduler.update_input_sizes and JobScheduler._finish_jobs",
    _READ_RANGE,
    "https://github.com/snakemake/snakemake/issues/4240 (slow scheduling: per-pass costs over "
    "the ready jobs) and https://github.com/snakemake/snakemake/issues/3955 (stat calls)",
    "every pass stats every input of every ready job",
)
REPORT_GRAPH = Patch(
    "report graph",
    "snakemake.report.html_reporter.rulegraph_spec",
    _PROJECT_RANGE,
    "no upstream issue found (searched: report rulegraph duplicate nodes, report workflow "
    "graph same rule twice)",
    "the report draws a rule once per depth of its jobs",
)
REPORT_STYLE = Patch(
    "report stylesheet",
    "snakemake.report.html_reporter.Reporter.__post_init__ (custom_stylesheet)",
    _PROJECT_RANGE,
    "https://github.com/snakemake/snakemake/issues/3906 (views centred, the top of a tall "
    "figure out of reach; figures shrunk to the window)",
    "the report centres every view and shrinks wide figures",
)
CONSOLE = Patch(
    "console",
    "the 'DefaultStreamHandler' of the 'snakemake.logging' logger",
    _PROJECT_RANGE,
    "https://github.com/snakemake/snakemake/issues/3856 (one line per job); a logger plugin "
    "instead: no upstream issue found on plugins of an editable install going unseen "
    "(searched: logger plugin not found editable install pkgutil iter_modules)",
    "Snakemake's own console (every job's inputs, outputs and reason)",
)
RESULTS_CHECK = Patch(
    "results check",
    "snakemake.workflow.Workflow.execute and Workflow.create_report",
    _PROJECT_RANGE,
    "https://github.com/snakemake/snakemake/issues/2948 (a Snakefile cannot tell a run from a "
    "dry run, nor from a report)",
    "results/ is not checked for another configuration's run before a run or a report",
)
LANDING_PAGE = Patch(
    "report landing page",
    "snakemake.report.FileRecord.job.rule.module_globals, read by workflow/report/workflow.rst",
    _PROJECT_RANGE,
    "https://github.com/snakemake/snakemake/issues/3395 (the report's index page says little; "
    "its template is given the config only)",
    "the report's landing page may fail to render",
)
PATCHES = (
    REEVALUATION_TIMER,
    INPUT_SIZES,
    REPORT_GRAPH,
    REPORT_STYLE,
    CONSOLE,
    RESULTS_CHECK,
    LANDING_PAGE,
)

_MARK = "pathbench_patched"


def _replace(owner: Any, name: str, wrap: Callable[[Any], Any]) -> None:
    """Replace ``owner.name`` by ``wrap`` of it, once per process (a Snakefile can be read
    twice in one process: a report after a run, the tests)."""
    original = getattr(owner, name)
    if not getattr(original, _MARK, False):
        patched = wrap(original)
        patched.__wrapped__ = original
        setattr(patched, _MARK, True)
        setattr(owner, name, patched)


def _has(owner: type, names: tuple[str, ...], patch: Patch) -> bool:
    """Whether ``owner`` has every method in ``names``; if not, warn once, as out of range."""
    absent = [name for name in names if not callable(getattr(owner, name, None))]
    if absent and patch.name not in _WARNED:
        _WARNED.add(patch.name)
        _warn("pathbench_flow: Snakemake's %s has no %s; %s", owner.__name__, absent, patch.without)
    return not absent


def patch_scheduler(workflow: Any) -> None:
    """In the main process of a real run (a dry run selects no jobs), one pending timed
    re-evaluation at a time, and each input's size read once
    (:mod:`~pathbench_flow.runtime.scheduling`). The sizes are kept only with the finished
    jobs' outputs forgotten: both methods or neither."""
    if not workflow.is_main_process or workflow.output_settings.dryrun:
        return
    from snakemake.scheduling.job_scheduler import JobScheduler

    timer = ("_schedule_reevalutation",)  # Snakemake's spelling
    if REEVALUATION_TIMER.applies() and _has(JobScheduler, timer, REEVALUATION_TIMER):
        _replace(JobScheduler, timer[0], scheduling.coalesced)
    sizes = ("update_input_sizes", "_finish_jobs")
    if INPUT_SIZES.applies() and _has(JobScheduler, sizes, INPUT_SIZES):
        _replace(JobScheduler, sizes[0], scheduling.measured_once)
        _replace(JobScheduler, sizes[1], scheduling.forgetting_outputs)


def patch_report_graph(rulegraph_spec: Callable[[Any], Any]) -> None:
    """Make the HTML report draw ``rulegraph_spec(dag)``: its reporter looks the name up in
    its module when it renders, so replacing that name is enough."""
    if REPORT_GRAPH.applies():
        from snakemake.report import html_reporter

        html_reporter.rulegraph_spec = rulegraph_spec


def patch_report_style(style: str) -> None:
    """Give the HTML report ``style`` ahead of any ``--report-stylesheet``, whose rules then
    still win. The reporter reads its stylesheet in ``__post_init__``: the style is added
    after it."""
    if not REPORT_STYLE.applies():
        return
    from snakemake.report.html_reporter import Reporter

    def styled(setup: Callable[[Any], None]) -> Callable[[Any], None]:
        def post_init(reporter: Any) -> None:
            setup(reporter)
            reporter.custom_stylesheet = style + (reporter.custom_stylesheet or "")

        return post_init

    _replace(Reporter, "__post_init__", styled)


def patch_console(workflow: Any) -> None:
    """Put a :class:`~pathbench_flow.runtime.console.ConsoleHandler` in place of Snakemake's
    console handler, in the main process of a run. Nothing changes for a dry run (it lists
    every job on purpose), ``--verbose`` or ``--debug-dag`` (asked for detail), a job's own
    process, or when a logger plugin writes the console instead of Snakemake's handler."""
    settings = workflow.output_settings
    if (
        not workflow.is_main_process
        or settings.dryrun
        or settings.verbose
        or settings.debug_dag
        or not workflow.modifier.is_main_snakefile()
        or not CONSOLE.applies()
    ):
        return
    from snakemake.logging import ColorizingTextHandler

    logger = logging.getLogger("snakemake.logging")
    for index, handler in enumerate(logger.handlers):
        if handler.name == "DefaultStreamHandler" and isinstance(handler, ColorizingTextHandler):
            logger.handlers[index] = ConsoleHandler(
                handler,
                lambda: all(workflow.dag.finished(job) for job in workflow.dag.checkpoint_jobs),
                sys.argv,
                show_failed_logs=settings.show_failed_logs,
            )
            return


def patch_results_check(workflow: Any, current: results_run.RunRecord, replace: bool) -> None:
    """Check ``results/`` (:mod:`~pathbench_flow.runtime.results_run`) when Snakemake's main
    process starts a real run (not a dry run or ``--touch``) or a report, before it plans any
    job. Wrapping the workflow's own ``execute`` and ``create_report`` sees exactly what
    Snakemake does, however it was asked (command line, profile, API); the Snakefile, read
    before, cannot tell a run from a report or ``--lint``."""
    if not RESULTS_CHECK.applies():
        return

    def checked_execute(execute: Callable[..., Any]) -> Callable[..., Any]:
        def run(executor_plugin: Any, *args: Any, **kwargs: Any) -> Any:
            settings = executor_plugin.common_settings
            if not (settings.dryrun_exec or settings.touch_exec):
                results_run.check_run(current, replace, sys.argv)
                if workflow.execution_settings.no_hooks:
                    # The workflow's onstart, which records the run once its jobs are planned,
                    # will not run: record it now rather than leave its results unnamed.
                    results_run.write_record(current)
            return execute(executor_plugin, *args, **kwargs)

        return run

    def checked_report(create_report: Callable[..., Any]) -> Callable[..., Any]:
        def report(*args: Any, **kwargs: Any) -> Any:
            results_run.check_report(current, sys.argv)
            return create_report(*args, **kwargs)

        return report

    _replace(workflow, "execute", checked_execute)
    _replace(workflow, "create_report", checked_report)


def check_landing_page() -> None:
    """The landing page's template reads the workflow's globals (``RUN``, ``VERSION``,
    ``run_summary``) through the first report file's job; warn once when this Snakemake is
    not one that was checked to offer them."""
    LANDING_PAGE.applies()
