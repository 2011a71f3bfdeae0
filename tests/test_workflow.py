"""The whole workflow on the embedded demo corpus, as README command 1 runs it."""

from __future__ import annotations

import csv
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from pathbench_flow import __version__
from pathbench_flow.common.io import read_parquet
from pathbench_flow.testing.report_page import (
    graph_rules,
    report_variable,
    result_bytes,
    rulegraph_rules,
    table_cells,
)
from pathbench_flow.testing.workflow_run import copy_workflow, output_files, snakemake

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("workflow"))
    snakemake(workdir, "--cores", "2")
    return workdir


def test_dry_run_lists_the_plan(tmp_path):
    workdir = copy_workflow(tmp_path)
    plan = snakemake(workdir, "-n", "--quiet", "rules").stdout
    for rule in (
        "make_demo",
        "validate_dataset",
        "score_utterances",
        "score_reference",
        "aggregate_speakers",
        "correlate",
        "results_table",
        "openset_features",
    ):
        assert rule in plan, plan


def test_unknown_config_key_stops_before_any_job(tmp_path):
    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "-n", "--config", "shard_sise=3", check=False)
    assert result.returncode != 0 and "shard_sise" in result.stdout + result.stderr
    assert not (workdir / "results").exists()


def test_manifests_and_scores(demo_run):
    manifest = read_parquet(demo_run / "results/demo/manifest.parquet")
    truth = json.loads((demo_run / "resources/demo/truth.json").read_text())
    assert len(manifest) == sum(
        1 for _ in (demo_run / "resources/demo/pathological/utt2spk").read_text().splitlines()
    )
    assert manifest["shard"].nunique() == 2 and list(manifest["utt_id"]) == sorted(
        manifest["utt_id"]
    )
    assert set(manifest["speaker_id"]) <= set(truth["speakers"])
    report = json.loads((demo_run / "results/demo/validation.json").read_text())
    assert report["outcome"] == "ok" and report["counts"]["errors"] == 0
    scores = pd.concat(
        read_parquet(p) for p in (demo_run / "results/demo/scores").rglob("*.parquet")
    )
    counts = scores.groupby(["evaluator", "variant"])["utt_id"].nunique()
    assert (counts == len(manifest)).all(), counts


# Metrics with a strong designed effect in the demo generator, and the knob behind each.
DESIGNED_EFFECTS = {
    "cpp": "breathiness",
    "cpps": "breathiness",
    "cpps_fa": "breathiness",
    "vsa": "vowel_centralisation",
    "speech_rate_fa": "rate",
    "wpm_fa": "rate",
    "nad_control": "severity",
}


def test_designed_effects_are_recovered(demo_run):
    truth = json.loads((demo_run / "resources/demo/truth.json").read_text())
    speakers = read_parquet(demo_run / "results/demo/speakers.parquet")
    ground_truth = speakers.drop_duplicates("speaker_id").set_index("speaker_id")["ground_truth"]
    for speaker, score in ground_truth.items():
        assert score == pytest.approx(truth["speakers"][speaker]["score"])
    correlations = read_parquet(demo_run / "results/demo/correlations.parquet").set_index("metric")
    for metric, knob in DESIGNED_EFFECTS.items():
        knob_values = [truth["speakers"][s][knob] for s in ground_truth.index]
        severities = [truth["speakers"][s]["severity"] for s in ground_truth.index]
        assert abs(np.corrcoef(knob_values, severities)[0, 1]) > 0.9, knob
        assert correlations.loc[metric, "aligned_r"] >= 0.6, correlations.loc[metric]


def test_results_table_plots_and_report(demo_run):
    table = pd.read_csv(demo_run / "results/results_table.csv")
    assert {"metric", "category", "demo", "Avg"} <= set(table.columns)
    # The demo is no PathBench corpus: PathBench's table gives it a column of its own, filled
    # for the rows the demo runs (all but the six model and text measures), and the published
    # comparison says in words why there is nothing to compare.
    pathbench = pd.read_csv(demo_run / "results/pathbench_table.csv", dtype=str)
    assert list(pathbench.columns[-2:]) == ["Avg", "demo"] and len(pathbench) == 12
    assert pathbench["demo"].notna().sum() == 6, pathbench[["Metric", "demo"]]
    published = pd.read_csv(demo_run / "results/pathbench_published_vs_measured.csv")
    assert published["column"].tolist() == ["demo"]
    assert "PathBench published" in published.at[0, "reason"]
    # One sign per metric: the demo's correlations.csv carries the table's sign and value.
    correlations = pd.read_csv(demo_run / "results/demo/correlations.csv").set_index("metric")
    cells = table.set_index("metric")
    assert (correlations["sign_rule"] == cells.loc[correlations.index, "sign_rule"]).all()
    assert np.allclose(
        correlations["r_aligned"].round(2), cells.loc[correlations.index, "demo"], equal_nan=True
    )
    for png in [
        demo_run / "results/demo/plots/aligned_r.png",
        demo_run / "results/plots/results_heatmap.png",
        *sorted((demo_run / "results/demo/plots/scatter").glob("*.png")),
    ]:
        assert png.stat().st_size > 1000, png
    snakemake(demo_run, "--report", "report.html")
    assert (demo_run / "report.html").stat().st_size > 10_000


def test_the_report_shows_its_tables_graph_and_run(demo_run):
    """What a reader of report.html sees: every CSV beside its HTML page of the same rows (each
    page's first column, the row's key, is the CSV's column of that name), each rule of
    --rulegraph drawn once, and the landing page naming version and config."""
    report = demo_run / "report.html"
    if not report.exists():
        snakemake(demo_run, "--report", "report.html")
    results = report_variable(report, "results")
    tables = sorted(path for path in results if path.endswith(".csv"))
    assert "results/results_table.csv" in tables and "results/demo/correlations.csv" in tables
    for path in tables:
        page = path.removesuffix(".csv") + ".html"
        assert results[page]["mime_type"] == "text/html", page
        shown = table_cells(result_bytes(results[page]).decode())
        with (demo_run / path).open(newline="", encoding="utf-8") as file:
            header, *rows = list(csv.reader(file))
        key = header.index(shown[0][0])
        assert [row[0] for row in shown[1:]] == [row[key] for row in rows], page

    rulegraph = rulegraph_rules(snakemake(demo_run, "--rulegraph").stdout)
    drawn = graph_rules(report)
    assert sorted(drawn) == sorted(rulegraph) and len(set(drawn)) == len(drawn)

    landing = report_variable(report, "workflow_desc")
    config = yaml.safe_load((demo_run / "config/config.yaml").read_text())
    assert f"pathbench-flow {__version__}" in landing
    for name in [*config["datasets"], *config["evaluators"]]:
        assert f">{name}<" in landing, name
    assert "took" in landing and "No run record" not in landing


def test_rerun_has_nothing_to_do_and_outputs_are_stable(demo_run):
    before = output_files(demo_run)
    result = snakemake(demo_run, "-n")
    assert "Nothing to be done" in result.stdout + result.stderr
    assert output_files(demo_run) == before


def test_adding_an_evaluator_reruns_only_its_jobs(demo_run):
    config = (demo_run / "config/config.yaml").read_text()
    extended = config.replace("  - p_estoi\n", "  - p_estoi\n  - p_stoi\n", 1)
    assert extended != config
    (demo_run / "extended.yaml").write_text(extended)
    plan = snakemake(demo_run, "-n", "--configfile", "extended.yaml").stdout
    scoring = [
        line for line in plan.splitlines() if "reference_scores/" in line or "/scores/" in line
    ]
    assert scoring and all("p_stoi" in line for line in scoring), scoring
    assert "score_utterances" not in plan and "score_speakers" not in plan
