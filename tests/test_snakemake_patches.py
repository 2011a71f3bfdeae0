"""Each Snakemake patch (pathbench_flow/runtime/snakemake_patches.py) against the Snakemake
installed: what it replaces still exists with the signature it wraps, and Snakemake still does
what it works around. A failure here means Snakemake changed: adapt the patch, or drop it when
Snakemake no longer needs it. Read from Snakemake's own source, unwrapped, so a patch applied
earlier in the process changes nothing; what each patch does is tested with its subject
(tests/test_scheduling.py, test_console.py, test_results_run.py, test_report.py).
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import snakemake.api  # noqa: F401  (imports snakemake.workflow without an import cycle)
from packaging.version import Version
from snakemake import logging as snakemake_logging
from snakemake.report import FileRecord, auto_report, html_reporter
from snakemake.report import rulegraph_spec as snakemake_rulegraph
from snakemake.rules import Rule
from snakemake.scheduling.job_scheduler import JobScheduler
from snakemake.workflow import Workflow
from snakemake_interface_common import plugin_registry
from snakemake_interface_executor_plugins.settings import CommonSettings

from pathbench_flow.runtime import snakemake_patches
from pathbench_flow.runtime.snakemake_patches import PATCHES


def _source(function: Callable[..., Any]) -> str:
    return inspect.getsource(inspect.unwrap(function))


def _parameters(function: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(inspect.unwrap(function)).parameters)


def test_the_installed_snakemake_is_one_the_patches_were_checked_on() -> None:
    """A new Snakemake: read what each patch relies on again, then add it to ``checked`` (and
    widen ``supported`` where it was narrowed to the versions read)."""
    installed = str(snakemake_patches.snakemake_version())
    for patch in PATCHES:
        assert installed in patch.checked, patch.name
        assert patch.applies(), patch.name
        assert patch.issue, patch.name


def test_reevaluation_timer_snakemake_arms_a_timer_per_call() -> None:
    """The chain of timers coalesced: each call arms a new one, with no note of one pending."""
    assert _parameters(JobScheduler._schedule_reevalutation) == ["self", "delay"]
    source = _source(JobScheduler._schedule_reevalutation)
    assert "threading.Timer(" in source and "self._open_jobs.release()" in source
    assert "pending" not in source.lower()
    assert "self._schedule_reevalutation(" in inspect.getsource(JobScheduler.schedule)


def test_input_sizes_snakemake_stats_every_input_of_every_ready_job() -> None:
    """Each pass measures every path again, into the dict the patch keeps its sizes in."""
    update = inspect.unwrap(JobScheduler.update_input_sizes)
    assert inspect.iscoroutinefunction(update)
    assert _parameters(update) == ["self", "jobs"]
    source = _source(update)
    assert "for job in jobs for path in job.input" in source
    assert "self._input_sizes.update(" in source
    assert "self._input_sizes = {}" in inspect.getsource(JobScheduler.__init__)
    assert _parameters(JobScheduler._finish_jobs) == ["self"]
    assert "self._tofinish" in _source(JobScheduler._finish_jobs)


def test_report_graph_snakemake_draws_a_rule_once_per_level() -> None:
    """The reporter looks the graph's function up by its module's name when it renders, and
    Snakemake's keeps one job of a rule per level of the DAG's topological sort (the drawing
    itself: tests/test_report.py)."""
    assert _parameters(snakemake_rulegraph.rulegraph_spec) == ["dag"]
    source = inspect.getsource(snakemake_rulegraph)
    assert "for level in dag.toposorted()" in source and "get_representatives(level" in source
    assert "rulegraph_spec(self.dag)" in inspect.getsource(html_reporter.Reporter)
    assert callable(html_reporter.rulegraph_spec)


def test_report_style_snakemake_centres_its_views_and_reads_the_stylesheet_in_post_init() -> None:
    setup = inspect.unwrap(html_reporter.Reporter.__post_init__)
    assert _parameters(setup) == ["self"]
    assert "self.custom_stylesheet =" in inspect.getsource(setup)
    assert "custom_stylesheet=self.custom_stylesheet" in inspect.getsource(html_reporter.Reporter)
    content = Path(html_reporter.__file__).parent / "template/components/content.js"
    assert "grow flex items-center justify-center h-screen overflow-auto" in content.read_text()


def test_console_snakemakes_handler_is_named_and_prints_every_jobs_files() -> None:
    """The handler replaced is found by its name and class; Snakemake's prints each job's
    inputs, outputs and logs as it starts; and a logger plugin is found only by scanning
    ``sys.path``, which does not see a package of an editable install."""
    assert 'name = "DefaultStreamHandler"' in inspect.getsource(snakemake_logging)
    assert _parameters(snakemake_logging.ColorizingTextHandler)[:2] == ["nocolor", "stream"]
    formatter = inspect.getsource(snakemake_logging.DefaultFormatter)
    assert 'for item in ["input", "output", "log"]' in formatter
    assert "pkgutil.iter_modules()" in inspect.getsource(plugin_registry)


def test_results_check_workflow_methods_and_the_settings_that_tell_a_dry_run() -> None:
    """A dry run and ``--touch`` go through ``Workflow.execute`` too, told apart only by the
    executor's settings; the Snakefile is read before either is known."""
    assert _parameters(Workflow.execute)[:2] == ["self", "executor_plugin"]
    assert _parameters(Workflow.create_report)[0] == "self"
    fields = {field.name for field in dataclasses.fields(CommonSettings)}
    assert {"dryrun_exec", "touch_exec"} <= fields
    assert "workflow.execute(" in inspect.getsource(snakemake.api.DAGApi.execute_workflow)


def test_landing_page_snakemake_gives_its_template_only_the_config() -> None:
    """The landing page reads the workflow's globals through a report file's job's rule,
    because the template of the workflow's description is given the config alone."""
    assert "job" in {field.name for field in dataclasses.fields(FileRecord)}
    assert "self.module_globals" in inspect.getsource(Rule)
    source = inspect.getsource(auto_report)
    assert "config = dag.workflow.config" in source
    assert "snakemake=Snakemake, categories=results, files=files" in " ".join(source.split())


def test_outside_its_versions_a_patch_leaves_snakemake_alone_and_warns_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(snakemake_patches, "snakemake_version", lambda: Version("10.0"))
    monkeypatch.setattr(snakemake_patches, "_WARNED", set())
    drawing = html_reporter.rulegraph_spec
    with caplog.at_level(logging.WARNING, logger="snakemake.logging"):
        snakemake_patches.patch_report_graph(lambda dag: None)
        snakemake_patches.patch_report_graph(lambda dag: None)
    assert html_reporter.rulegraph_spec is drawing
    warnings = [r.getMessage() for r in caplog.records if "report graph" in r.getMessage()]
    assert len(warnings) == 1 and "10.0" in warnings[0]
