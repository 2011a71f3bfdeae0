"""The console of a run (pathbench_flow/console.py), fed the log records Snakemake 9 logs.

The records are built with the fields Snakemake's scheduler, jobs and executors give them
(snakemake/scheduling/job_scheduler.py, jobs.py, exceptions.py); the handler is the real one,
replacing a real Snakemake console handler with its own filter and formatter. The run itself
is tested in tests/test_resume.py (`test_the_console_of_a_run`).
"""

from __future__ import annotations

import io
import logging
import re
import threading
from pathlib import Path

import pytest
from snakemake.logging import ColorizingTextHandler, DefaultFilter, DefaultFormatter
from snakemake_interface_logger_plugins.common import LogEvent

from pathbench_flow.runtime.console import (
    MAX_LINE,
    ConsoleHandler,
    closing_lines,
    file_list,
    resume_command,
)

PROGRESS = re.compile(r"^\[\d\d:\d\d:\d\d\] (\d+) of (≥?)(\d+) jobs done(?: \((\d+)%\))?: ")

WAVS = [f"resources/demo/pathological/wav/speaker{i:02d}_utt{i:04d}.wav" for i in range(300)]


class Run:
    """A ConsoleHandler in place of Snakemake's, and the records a run logs."""

    def __init__(self, argv=("snakemake", "--cores", "2")) -> None:
        self.out = io.StringIO()
        replaced = ColorizingTextHandler(nocolor=True, stream=self.out)
        replaced.addFilter(DefaultFilter(None, False, False, False, False))
        replaced.setFormatter(DefaultFormatter())
        self.checkpoints_done = False
        self.console = ConsoleHandler(
            replaced, lambda: self.checkpoints_done, list(argv), clock=lambda: "12:00:00"
        )

    def log(self, msg=None, level=logging.INFO, thread=None, **extra) -> None:
        """Log a record from ``thread`` (a job's; the main thread's by default)."""
        record = logging.makeLogRecord(
            {"msg": msg, "levelno": level, "levelname": logging.getLevelName(level), **extra}
        )
        record.thread = thread if thread is not None else threading.get_ident()
        self.console.handle(record)

    def start(self, jobid, rule, **wildcards) -> None:
        self.log(
            f" Rule: {rule}, Jobid: {jobid}",
            event=LogEvent.JOB_INFO,
            jobid=jobid,
            rule_name=rule,
            wildcards=wildcards,
            input=WAVS,
            output=[f"results/{rule}/{jobid}.parquet"],
            log=[f"logs/{rule}/{jobid}.log"],
        )

    def finish(self, jobid, done, total) -> None:
        self.log(f"Finished jobid: {jobid}", event=LogEvent.JOB_FINISHED, job_id=jobid)
        self.log(None, event=LogEvent.PROGRESS, done=done, total=total)

    def job_error(self, jobid, rule, exception_text, thread=1) -> None:
        """A job's error as its thread logs it: the exception, then the job's record."""
        self.log(
            exception_text, logging.ERROR, thread, event=LogEvent.ERROR, exception="RuleException"
        )
        self.log(
            f"Error in rule {rule}, jobid: {jobid}",
            logging.ERROR,
            thread,
            event=LogEvent.JOB_ERROR,
            rule_name=rule,
            rule_msg=None,
            jobid=jobid,
            input=WAVS,
            output=[f"results/{rule}/{jobid}.parquet"],
            log=[f"logs/{rule}/{jobid}.log"],
            conda_env=None,
            shellcmd=None,
            aux={},
        )

    def end_unfinished(self) -> None:
        self.log(
            "WorkflowError:\nAt least one job did not complete successfully.",
            logging.ERROR,
            event=LogEvent.ERROR,
            exception="WorkflowError",
        )

    @property
    def lines(self) -> list[str]:
        return self.out.getvalue().splitlines()


def test_one_line_per_finished_job_and_no_percentage_before_the_total_is_known():
    run = Run()
    run.start(5, "make_demo")
    run.log("Select jobs to execute...")
    run.finish(5, 1, 67)
    run.log("Updating checkpoint dependencies.")
    run.start(7, "score_utterances", dataset="demo", evaluator="cpps", shard="0003")
    run.checkpoints_done = True
    run.finish(7, 51, 87)
    assert run.lines == [
        "[12:00:00] 1 of ≥67 jobs done: make_demo",
        "[12:00:00] 51 of 87 jobs done (58%): "
        "score_utterances (dataset=demo, evaluator=cpps, shard=0003)",
    ]


def test_a_failed_job_names_its_log_in_lines_a_person_reads():
    run = Run()
    run.start(9, "score_utterances", dataset="demo", evaluator="cpps", shard="0001")
    cause = "RuleException:\nCalledProcessError in file score.smk, line 40:\nexit status 1."
    run.job_error(9, "score_utterances", cause)
    lines = run.lines
    assert lines[:3] == cause.splitlines()
    assert lines[3] == (
        "[12:00:00] Error in score_utterances (dataset=demo, evaluator=cpps, shard=0001), job 9:"
    )
    assert lines[4] == "    log: logs/score_utterances/9.log (the job's output: the cause is there)"
    assert lines[6].startswith(f"    input: {len(WAVS)} files: {WAVS[0]}, {WAVS[1]}")
    assert max(map(len, lines)) <= MAX_LINE
    # Not an interrupt: Snakemake's closing error stays as it is.
    run.end_unfinished()
    assert run.lines[-1] == "At least one job did not complete successfully."


@pytest.mark.parametrize(
    "forcing",
    [["--forceall"], ["-F"], ["--force"], ["-R", "score_utterances", "aggregate_speakers"]],
)
def test_the_resume_command_keeps_finished_jobs(forcing):
    """A run started with a forcing option resumes without it: with it, the resume would run
    every finished job again."""
    argv = ["/venv/bin/snakemake", *forcing, "--cores", "2", "--configfile", "my.yaml"]
    assert resume_command(argv) == "snakemake --cores 2 --configfile my.yaml"
    assert resume_command([*argv, "--forcerun=cpp"]) == resume_command(argv)


def test_ctrl_c_is_reported_as_an_interrupt_with_the_resume_command():
    run = Run(["/venv/bin/snakemake", "--cores", "2", "--configfile", "my config.yaml"])
    run.start(3, "make_demo")
    run.finish(3, 1, 67)
    run.start(4, "validate_dataset", dataset="demo")
    run.start(6, "validate_reference", dataset="demo")
    run.start(8, "shard_manifest")
    # A job's death can be logged before the scheduler's own interrupt message.
    died = "RuleException:\nCommand 'python x.py' died with <Signals.SIGINT: 2>."
    run.job_error(4, "validate_dataset", died, thread=11)
    run.log("Terminating processes on user request, this might take some time.")
    run.job_error(6, "validate_reference", died, thread=12)
    # A job hit while its Python was starting exits with status 1.
    run.job_error(8, "shard_manifest", "RuleException:\nexit status 1.", thread=13)
    run.end_unfinished()
    assert run.lines[1:] == [
        "[12:00:00] stopped by SIGINT: validate_dataset (dataset=demo); "
        "log: logs/validate_dataset/4.log",
        "[12:00:00] SIGINT received: starting no new jobs, stopping the run.",
        "[12:00:00] stopped by SIGINT: validate_reference (dataset=demo); "
        "log: logs/validate_reference/6.log",
        "[12:00:00] stopped by SIGINT: shard_manifest; log: logs/shard_manifest/8.log",
        "Interrupted (SIGINT): 1 of ≥67 jobs done, 3 running jobs stopped.",
        "Resume with `snakemake --cores 2 --configfile 'my config.yaml'`: finished jobs are "
        "kept, stopped ones start over.",
    ]
    assert "Error" not in run.out.getvalue()


def test_sigterm_lets_the_running_jobs_finish_and_says_so_once():
    run = Run()
    run.checkpoints_done = True
    run.start(1, "correlate", dataset="demo")
    for _ in range(3):
        run.log("Will exit after finishing currently running jobs (scheduler).")
    run.finish(1, 80, 87)
    run.end_unfinished()
    assert run.lines == [
        "[12:00:00] SIGTERM received: starting no new jobs, waiting for the running jobs.",
        "[12:00:00] 80 of 87 jobs done (91%): correlate (dataset=demo)",
        "Interrupted (SIGTERM): 80 of 87 jobs done, 0 running jobs stopped.",
        "Resume with `snakemake --cores 2`: finished jobs are kept, stopped ones start over.",
    ]


def test_other_messages_pass_as_snakemake_writes_them():
    run = Run()
    run.log("Provided cores: 2", event=LogEvent.RESOURCES_INFO, cores=2)
    run.log("Some warning\nover two lines", logging.WARNING)
    assert run.lines == ["Provided cores: 2", "Some warning", "over two lines"]


def test_a_long_file_list_keeps_to_one_line_and_says_how_many():
    line = file_list("input", WAVS)
    assert len(line) <= MAX_LINE and line.endswith(", …")
    assert line.startswith(f"    input: 300 files: {WAVS[0]}")
    assert file_list("output", ["a.parquet", "b.json"]) == "    output: a.parquet, b.json"


def test_the_closing_lines_name_the_results_and_the_report_command_of_this_config(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    # A run of some targets only (no results table): where the results are, nothing to open.
    assert closing_lines(["demo"], [], []) == [f"Done. Results are in {tmp_path / 'results'}/."]
    Path("results").mkdir()
    Path("results/results_table.csv").write_text("metric\n")
    lines = closing_lines(["demo"], [tmp_path / "my.yaml"], ["shard_size=10"])
    assert lines[0] == f"Done. Results are in {tmp_path / 'results'}/; open first:"
    assert [line.split(":")[0].strip() for line in lines[1:4]] == [
        "results/results_table.csv",
        "results/demo/correlations.csv",
        "report.html",
    ]
    assert lines[-1].strip() == (
        "snakemake --configfile my.yaml --config shard_size=10 --report report.html"
    )
    two = closing_lines(["a", "b"], [], [])
    assert "results/<dataset>/correlations.csv (datasets: a, b)" in two[2]
    assert two[-1].strip() == "snakemake --report report.html"
    assert max(len(line) for line in lines + two) <= MAX_LINE
    # The uncertainty stage's warnings come last, wrapped.
    Path("results/uncertainty").mkdir()
    Path("results/uncertainty/warnings.txt").write_text(f"warning: {'wada_snr flagged ' * 20}\n")
    warned = closing_lines(["demo"], [], [])
    at = warned.index("Warnings (results/uncertainty/warnings.txt):")
    wrapped = warned[at + 1 :]
    assert wrapped[0].startswith("  warning: ") and wrapped[1].startswith("    wada_snr")
    assert " ".join(wrapped).split() == ["warning:", *("wada_snr flagged " * 20).split()]
    assert max(map(len, wrapped)) <= 100


def test_after_directory_the_report_command_runs_from_where_the_run_was_started(
    tmp_path, monkeypatch
):
    # `snakemake --directory .test --configfile .test/my.yaml` from the checkout: Snakemake
    # enters .test and holds the config file as an absolute path.
    workdir = tmp_path / ".test"
    (workdir / "results").mkdir(parents=True)
    (workdir / "results/results_table.csv").write_text("metric\n")
    monkeypatch.chdir(workdir)
    argv = ["snakemake", "--directory", ".test", "--cores", "2"]
    lines = closing_lines(["demo"], [workdir / "my.yaml"], [], argv)
    assert lines[-1].strip() == (
        "snakemake --directory .test --configfile .test/my.yaml --report report.html"
    )
    assert lines[3].startswith("  .test/report.html: ")
    # -d and --directory=, and a config file outside the start directory stays absolute.
    short = closing_lines(["demo"], [Path("/elsewhere/c.yaml")], [], ["snakemake", "-d", ".test"])
    assert short[-1].strip() == (
        "snakemake --directory .test --configfile /elsewhere/c.yaml --report report.html"
    )
    joined = closing_lines(["demo"], [], ["x=1"], ["snakemake", "--directory=./.test"])
    assert joined[-1].strip() == "snakemake --directory ./.test --config x=1 --report report.html"
    # An absolute --directory: the start directory is unknown, the config file stays absolute.
    absolute = closing_lines(["demo"], [workdir / "my.yaml"], [], ["snakemake", "-d", str(workdir)])
    assert absolute[-1].strip() == (
        f"snakemake --directory {workdir} --configfile {workdir / 'my.yaml'} --report report.html"
    )


def test_a_job_failing_on_its_own_during_an_interrupt_stays_an_error():
    run = Run()
    run.start(2, "correlate", dataset="demo")
    run.log("Will exit after finishing currently running jobs (scheduler).")
    run.job_error(2, "correlate", "RuleException:\nexit status 1.")
    run.end_unfinished()
    lines = run.lines
    assert lines[3] == "[12:00:00] Error in correlate (dataset=demo), job 2:"
    assert lines[-3:] == [
        "At least one job did not complete successfully.",
        "Interrupted (SIGTERM): no job done, 0 running jobs stopped, 1 failed (above).",
        "Resume with `snakemake --cores 2`: finished jobs are kept, stopped ones start over.",
    ]
