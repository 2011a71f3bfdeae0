"""The report's workflow graph draws each rule once, its views start at the top; the run record
the landing page reads.

The graph is checked on a three-rule workflow shaped like this one's tracks (an ``fa`` track
job reads the ``raw`` job of the same rule, and a scoring rule reads both), run and reported
by the real Snakemake: its own drawing repeats the two rules whose jobs sit at two depths, and
the workflow's (pathbench_flow.reporting.report_graph) draws what ``--rulegraph`` draws. The
whole workflow's report is checked in tests/test_workflow.py.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime

import pytest

from pathbench_flow.reporting.report_graph import REPORT_STYLE
from pathbench_flow.reporting.run_record import duration, record_finish, record_start, run_summary
from pathbench_flow.testing.report_page import graph_rules, rulegraph_rules
from pathbench_flow.testing.workflow_run import snakemake

TRACKS_SNAKEFILE = """\
from pathbench_flow.reporting.report_graph import REPORT_STYLE, rulegraph_spec
from pathbench_flow.runtime import snakemake_patches

if config["graph"] == "once":
    snakemake_patches.patch_report_graph(rulegraph_spec)
    snakemake_patches.patch_report_style(REPORT_STYLE)


rule all:
    input:
        expand("scored_{variant}.txt", variant=["raw", "fa"]),


rule track:
    input:
        lambda wildcards: ["track_raw.txt"] if wildcards.variant == "fa" else [],
    output:
        "track_{variant}.txt",
    shell:
        "echo {wildcards.variant} > {output}"


rule score:
    input:
        "track_{variant}.txt",
    output:
        "scored_{variant}.txt",
    shell:
        "cat {input} > {output}"
"""


@pytest.fixture(scope="module")
def tracks_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("tracks")
    (workdir / "Snakefile").write_text(TRACKS_SNAKEFILE)
    snakemake(workdir, "--cores", "1", "--config", "graph=snakemake")
    rulegraph = snakemake(workdir, "--rulegraph", "--config", "graph=snakemake").stdout
    return workdir, rulegraph_rules(rulegraph)


def _report_rules(workdir, graph: str) -> list[str]:
    """The rules the report draws with Snakemake's graph (`snakemake`) or the workflow's
    (`once`)."""
    snakemake(workdir, "--report", f"{graph}.html", "--config", f"graph={graph}")
    return graph_rules(workdir / f"{graph}.html")


def test_snakemake_draws_a_rule_once_per_depth_of_its_jobs(tracks_run):
    """Why the workflow draws its own graph: should this fail, Snakemake draws each rule once
    by itself, and snakemake_patches.patch_report_graph can go."""
    workdir, rulegraph = tracks_run
    assert sorted(rulegraph) == ["all", "score", "track"]
    drawn = Counter(_report_rules(workdir, "snakemake"))
    assert drawn == {"all": 1, "track": 2, "score": 2}


def test_the_workflow_draws_each_rule_of_the_rulegraph_once(tracks_run):
    workdir, rulegraph = tracks_run
    drawn = _report_rules(workdir, "once")
    # in dependency order: a track before its scores, everything before `all`
    assert drawn == ["track", "score", "all"]
    assert sorted(drawn) == sorted(rulegraph)


def test_the_report_gets_the_workflows_style_before_the_users(tracks_run):
    """Snakemake centres every view of its report vertically and shrinks figures to the
    window: the workflow's stylesheet undoes both, and a --report-stylesheet still has the
    last word."""
    workdir, _ = tracks_run
    (workdir / "mine.css").write_text("/* the user's */\n")
    snakemake(
        workdir,
        "--report",
        "styled.html",
        "--report-stylesheet",
        "mine.css",
        "--config",
        "graph=once",
    )
    page = (workdir / "styled.html").read_text(encoding="utf-8")
    assert page.count(REPORT_STYLE) == 1
    assert page.index(REPORT_STYLE) < page.index("/* the user's */")
    assert "align-items: flex-start" in REPORT_STYLE and "max-width: none" in REPORT_STYLE


def test_a_run_record_says_when_the_run_started_and_how_long_it_took(tmp_path):
    path = tmp_path / "logs" / "run.json"
    assert "No run record" in run_summary(path)
    record_start("1.2.3", path)
    started = json.loads(path.read_text())
    assert started["finished"] is None and started["version"] == "1.2.3"
    assert "did not finish" in run_summary(path)
    record_finish(path)
    record = json.loads(path.read_text())
    elapsed = datetime.fromisoformat(record["finished"]) - datetime.fromisoformat(record["started"])
    assert record["seconds"] == round(elapsed.total_seconds()) >= 0
    summary = run_summary(path)
    started_text = record["started"].replace("T", " ").replace("+00:00", " UTC")
    assert f"pathbench-flow 1.2.3) started {started_text} and took" in summary
    assert summary.endswith(f"took {duration(record['seconds'])}.")


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(0, "0 s"), (59, "59 s"), (60, "1 min 00 s"), (192, "3 min 12 s"), (7500, "2 h 05 min")],
)
def test_durations_read_as_a_person_says_them(seconds, said):
    assert duration(seconds) == said
