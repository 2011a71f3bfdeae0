"""results/ holds one configuration's run at a time (pathbench_flow/results_run.py): a run or a
report of another configuration stops before any job, and the report describes the run that
made the results."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from pathbench_flow.reporting.run_record import record_start, run_summary
from pathbench_flow.runtime.results_run import (
    RESULTS_RECORD,
    ResultsOfAnotherRun,
    RunRecord,
    check_report,
    check_run,
    differences,
    read_record,
    write_record,
)
from pathbench_flow.testing import REPO
from pathbench_flow.testing.report_page import report_variable
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

DEMO = {
    "datasets": {"demo": {"path": "resources/demo/pathological"}},
    "evaluators": ["cpp", "nad"],
    "variants": ["raw", "fa"],
}
MINE = {
    "datasets": {"mine": {"path": "data/mine"}},
    "evaluators": ["cpp"],
    "variants": ["raw"],
}


def not_generated(path: Path) -> bool:
    return False


def record(config: dict, configfiles=("config/config.yaml",), cwd=Path("/w")) -> RunRecord:
    return RunRecord.of(list(configfiles), [], config, not_generated, cwd=cwd)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A working directory holding the demo's run: its record and a results table."""
    monkeypatch.chdir(tmp_path)
    write_record(record(DEMO, cwd=tmp_path))
    Path("results/results_table.csv").write_text("the demo's\n")
    return tmp_path


def test_a_config_given_on_the_command_line_is_the_same_run_as_the_default():
    """Snakemake lists a --configfile absolute and the Snakefile's default as written."""
    given = RunRecord.of([Path("/w/config/config.yaml")], ["a=1"], DEMO, not_generated, Path("/w"))
    assert (
        given.identity
        == record(DEMO).identity
        == {
            "configfiles": ["config/config.yaml"],
            "datasets": {"demo": "resources/demo/pathological"},
        }
    )
    outside = RunRecord.of([Path("/elsewhere/my.yaml")], [], DEMO, not_generated, Path("/w"))
    assert outside.configfiles == ("/elsewhere/my.yaml",)


def test_differences_name_datasets_added_removed_moved_and_config_files():
    moved = {"datasets": {"demo": {"path": "elsewhere"}, "mine": {"path": "m"}}}
    current = record(DEMO | moved, configfiles=["my.yaml"])
    assert differences(record(DEMO), current) == [
        "datasets added: mine",
        "datasets moved: demo (resources/demo/pathological -> elsewhere)",
        "config files: config/config.yaml -> my.yaml",
    ]


def test_another_configuration_stops_naming_both_runs_and_the_ways_on(workdir):
    argv = ["snakemake", "--cores", "2", "--configfile", "my.yaml", "--config", "a=1"]
    mine = record(MINE, configfiles=["my.yaml"], cwd=workdir)
    with pytest.raises(ResultsOfAnotherRun) as stop:
        check_run(mine, replace=False, argv=argv)
    message = str(stop.value)
    assert "config files config/config.yaml; datasets demo (resources/demo/pathological)" in (
        message
    )
    assert "This run: config files my.yaml; datasets mine (data/mine)" in message
    assert "datasets added: mine; datasets removed: demo" in message
    assert "mv results results-demo" in message
    assert (
        "snakemake --cores 2 --configfile my.yaml --config a=1 "
        f"datasets_root={workdir} --directory runs/mine" in message
    )
    assert "snakemake --cores 2 --configfile my.yaml --config a=1 replace_results=True" in message
    # Nothing changed: the demo's table and record stay.
    assert Path("results/results_table.csv").read_text() == "the demo's\n"
    assert read_record().datasets == {"demo": "resources/demo/pathological"}


def test_replace_results_proceeds_and_records_nothing_before_the_plan(workdir):
    mine = record(MINE, configfiles=["my.yaml"], cwd=workdir)
    check_run(mine, replace=True, argv=["snakemake"])
    assert read_record().datasets == {"demo": "resources/demo/pathological"}


def test_the_same_configuration_edited_goes_on(workdir):
    """An evaluator added to the same config file is the same run; the record follows it."""
    edited = record(DEMO | {"evaluators": ["cpp", "nad", "wpm"]}, cwd=workdir)
    check_run(edited, replace=False, argv=["snakemake"])


def test_a_dataset_added_to_the_same_config_goes_on_but_none_kept_is_another_study(workdir):
    """Adding a corpus to the config that was run extends that run; the same config file
    rewritten to hold none of the earlier datasets is another configuration."""
    with pytest.raises(ResultsOfAnotherRun, match="datasets removed: demo"):
        check_run(record(DEMO | MINE, cwd=workdir), replace=False, argv=["snakemake"])
    extended = DEMO | {"datasets": {**DEMO["datasets"], **MINE["datasets"]}}
    check_run(record(extended, cwd=workdir), replace=False, argv=["snakemake"])


def test_no_headline_output_means_nothing_to_replace(workdir):
    Path("results/results_table.csv").unlink()
    check_run(record(MINE, cwd=workdir), replace=False, argv=["snakemake"])


def test_a_report_of_another_configuration_names_the_command_for_the_results(workdir):
    argv = ["snakemake", "--configfile", "my.yaml", "--report", "r.html"]
    with pytest.raises(ResultsOfAnotherRun) as stop:
        check_report(record(MINE, configfiles=["my.yaml"], cwd=workdir), argv)
    assert "snakemake --report r.html --configfile config/config.yaml" in str(stop.value)
    check_report(record(DEMO | {"evaluators": ["wpm"]}, cwd=workdir), argv)


def test_the_run_time_is_told_only_for_the_results_run(tmp_path):
    path = tmp_path / "run.json"
    record_start("1.0", path, identity=record(DEMO).identity)
    assert "did not finish" in run_summary(path, identity=record(DEMO).identity)
    assert "another configuration" in run_summary(path, identity=record(MINE).identity)


# ---------------------------------------------------------------------------------------------
# The workflow


@pytest.fixture
def demo_results(tmp_path):
    """The workflow, with the demo's record and a headline output written by hand, and a
    config of the committed .test dataset (``my.yaml``)."""
    workdir = copy_workflow(tmp_path)
    shutil.copytree(REPO / ".test" / "data", workdir / "data")
    (workdir / "my.yaml").write_text(yaml.safe_dump({"datasets": MINE["datasets"]}))
    write_record(record(DEMO, cwd=workdir), workdir / RESULTS_RECORD)
    (workdir / "results" / "uncertainty").mkdir()
    return workdir


def test_a_run_of_another_config_stops_before_any_job(demo_results):
    assert snakemake(demo_results, "-n", "--configfile", "my.yaml").returncode == 0
    stopped = snakemake(demo_results, "--cores", "1", "--configfile", "my.yaml", check=False)
    output = stopped.stdout + stopped.stderr
    assert stopped.returncode != 0
    assert "ResultsOfAnotherRun" in output and "Traceback" not in output, output[-3000:]
    assert "datasets demo (resources/demo/pathological)" in output
    assert "--config replace_results=True" in output
    assert not (demo_results / "results" / "mine").exists()
    assert (demo_results / "results" / "uncertainty").is_dir()

    report = snakemake(demo_results, "--configfile", "my.yaml", "--report", "r.html", check=False)
    assert report.returncode != 0
    assert "snakemake --report r.html --configfile config/config.yaml" in report.stderr


def test_replace_results_runs_the_other_config(demo_results):
    """The other config's run is recorded once its jobs start; a first try whose plan fails
    (a target no rule makes) changed nothing, so results/ still names the demo's run."""
    replace = ["--cores", "1", "--configfile", "my.yaml", "--config", "replace_results=True"]
    failed = snakemake(demo_results, "results/mine/no_such_output.csv", *replace, check=False)
    assert failed.returncode != 0
    assert list(read_record(demo_results / RESULTS_RECORD).datasets) == ["demo"]
    args = ["results/mine/manifest.parquet", "--cores", "1", "--configfile", "my.yaml"]
    snakemake(demo_results, *args, "--config", "replace_results=True")
    recorded = read_record(demo_results / RESULTS_RECORD)
    assert recorded.configfiles == ("my.yaml",) and list(recorded.datasets) == ["mine"]
    # The same configuration again goes on.
    again = snakemake(demo_results, *args)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_a_run_without_hooks_records_itself_before_its_plan(demo_results):
    """``--no-hooks`` skips the onstart that records a run: the check records it instead, so
    the results of such a run are still named and still kept from another configuration."""
    args = ["results/mine/manifest.parquet", "--cores", "1", "--configfile", "my.yaml"]
    snakemake(demo_results, *args, "--no-hooks", "--config", "replace_results=True")
    assert list(read_record(demo_results / RESULTS_RECORD).datasets) == ["mine"]


@pytest.mark.slow
def test_the_report_describes_the_run_that_made_the_results(tmp_path):
    """The .test run: its report's landing page names its evaluators and run time though the
    config file names another evaluator since; a report of the demo's config stops."""
    workdir = copy_workflow(tmp_path)
    shutil.copytree(REPO / ".test", workdir / ".test", symlinks=True)
    config = workdir / ".test" / "config" / "config.yaml"
    snakemake(workdir, "--cores", "2", "--configfile", str(config))
    config.write_text(config.read_text().replace(", wpm]", ", wpm, speech_rate]"))
    snakemake(workdir, "--configfile", str(config), "--report", "report.html")
    landing = report_variable(workdir / "report.html", "workflow_desc")
    assert ">cpp<" in landing and ">wpm<" in landing and ">speech_rate<" not in landing
    assert "took" in landing

    demo = snakemake(workdir, "--report", "demo.html", check=False)
    assert demo.returncode != 0
    assert "--configfile .test/config/config.yaml" in demo.stderr
