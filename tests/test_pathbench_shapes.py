"""One end-to-end run over every PathBench shape: all 21 columns of its results table at once.

Why: each corpus has been run on its own; this run checks that the shapes of all of them
(``pathbench_flow/testing/pathbench_shapes.py``: cut from the published Kaldi metadata, or
built in MDSC's and YouTube's shape) go through one workflow with one config, that the results table
takes all 21 column names from PathBench's directory layout alone, that every condition's control
set works as the reference set of a reference-audio measure, and that open-set evaluation, switched
on for every dataset, reports COPAS's word shape as not applicable instead of failing the run.

The evaluators are the cheapest pair that covers what the assertions read: CPP (PathBench's
signal row, its fa variant) and P-ESTOI in both variants against the ``all`` reference set
(PathBench's P-ESTOI row): the other speakers of the dataset and every speaker of the
condition's control set, so the control sets are validated, trimmed, analysed and read as
references. The default evaluators would add about 170 jobs for no shape the run does not
already exercise, and the ``control`` reference type another 42 (its gender matching has its
own tests); both would take the run past its few minutes. Open-set uses one outer and one
tuning fold and a one-candidate grid: every rule of the stage runs, and its cost does not grow
12-fold with 21 datasets.
"""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from pathbench_flow.common.io import read_parquet
from pathbench_flow.testing.pathbench_shapes import COLUMNS, build
from pathbench_flow.testing.speech_fixtures import require_espeak
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

pytestmark = pytest.mark.slow

PATHBENCH_HEADER = (
    "Metric,Category,UASpeech Word MC,UASpeech Word EX,NeuroVoz Sentence MC,NeuroVoz Sentence EX,"
    "EasyCall Word MC,EasyCall Word EX,EasyCall Sentence MC,EasyCall Sentence EX,COPAS Word MC,"
    "COPAS Word EX,COPAS Word Full,COPAS Sentence MC,COPAS Sentence EX,COPAS Sentence Full,"
    "TORGO Word MC,TORGO Word EX,TORGO Sentence MC,TORGO Sentence EX,MDSC Command MC,"
    "MDSC Command EX,YT Sentence Full,Avg"
)
"""The header line of PathBench's published ``results_table.csv`` (github.com/karkirowle/
pathbench at e26aa32), a fact copied here because CI has no PathBench checkout."""
PATHBENCH_COLUMNS = PATHBENCH_HEADER.split(",")[2:-1]

CONFIG = {
    "evaluators": ["cpp", "p_estoi"],
    "variants": ["raw", "fa"],
    "reference_types": ["all"],
    "fa_trim": {"backend": "auto"},
    "correlation": {"n_boot": 100},  # the schema minimum: no interval is asserted here
    "openset": {
        "enabled": True,
        "known_folds": 2,
        "max_outer_folds": 1,
        "max_tuning_folds": 1,
        "grid": {
            "feature_masks": {"voice": ["f0_median_hz", "f0_std_st", "hnr_db", "cpps_db"]},
            "components": [1],
            "relevance": [2.0],
            "variance_floor": [0.01],
            "absolute_threshold": [0.0],
            "margin_threshold": [0.0],
        },
    },
}
COPAS_WORD = [c.name for c in COLUMNS if (c.corpus, c.task) == ("copas", "word")]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """The 21 datasets built, the workflow run on them with 2 cores, and its report made."""
    require_espeak()
    workdir = copy_workflow(tmp_path_factory.mktemp("pathbench_shapes"))
    started = time.monotonic()
    built = build(workdir)
    synthesised = time.monotonic()
    config = CONFIG | {"datasets": built.datasets}
    (workdir / "shapes.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    assert snakemake(workdir, "--cores", "2", "--configfile", "shapes.yaml").returncode == 0
    finished = time.monotonic()
    assert (
        snakemake(workdir, "--configfile", "shapes.yaml", "--report", "report.html").returncode == 0
    )
    print(
        f"\n{len(built.datasets)} datasets, {built.n_recordings} recordings, "
        f"{built.seconds:.0f} s of audio; build {synthesised - started:.0f} s, "
        f"snakemake --cores 2 {finished - synthesised:.0f} s, "
        f"report {time.monotonic() - finished:.0f} s"
    )
    print((workdir / "results" / "pathbench_table.csv").read_text())
    return workdir


def test_the_report_is_written(run: Path) -> None:
    assert (run / "report.html").stat().st_size > 0


def test_pathbench_table_has_pathbench_header(run: Path) -> None:
    lines = (run / "results" / "pathbench_table.csv").read_text().splitlines()
    assert lines[0] == PATHBENCH_HEADER


def test_every_column_is_named_from_its_path(run: Path) -> None:
    """No dataset sets corpus/task/condition keys: the 21 labels come from the layout."""
    table = pd.read_csv(run / "results" / "results_table.csv", keep_default_na=False)
    assert [c for c in table.columns if c in PATHBENCH_COLUMNS] == PATHBENCH_COLUMNS


def test_every_column_has_a_signal_measure_value(run: Path) -> None:
    """CPP (fa, PathBench's row) has a correlation in each of the 21 columns of both tables."""
    pathbench = pd.read_csv(run / "results" / "pathbench_table.csv", keep_default_na=False)
    cpp = pathbench.set_index("Metric").loc["CPP"]
    assert cpp["Category"] == "Reference-Free (Signal)"
    empty = [c for c in PATHBENCH_COLUMNS if cpp[c] == ""]
    assert not empty, f"CPP has no value in {empty}"
    ours = pd.read_csv(run / "results" / "results_table.csv", keep_default_na=False)
    signal = ours[ours["category"] == "Reference-Free (Signal)"]
    empty = [c for c in PATHBENCH_COLUMNS if (signal[c] == "").all()]
    assert not empty, f"no signal measure has a value in {empty}"


def test_reference_audio_measure_reads_each_control_set(run: Path) -> None:
    """Every P-ESTOI score has as references the dataset's other speakers of its text and every
    utterance of the control set with that text, and each utterance of a corpus with controls
    has some: the reference set was read, not ignored. YouTube has neither."""
    wrong, without_control = {}, []
    for column in COLUMNS:
        results = run / "results" / column.name
        own = read_parquet(results / "manifest.parquet")
        reference = results / "reference" / "manifest.parquet"
        control = read_parquet(reference) if reference.is_file() else own.iloc[:0]
        folder = results / "reference_scores" / "p_estoi"
        scores = pd.concat(read_parquet(p) for p in sorted(folder.rglob("*.parquet")))
        scores = scores[scores["reference_type"] == "all"]
        scores = scores.merge(own[["utt_id", "text_clean"]], on="utt_id", validate="many_to_one")
        for row in scores.itertuples(index=False):
            same_text = own[own["text_clean"] == row.text_clean]
            from_control = int((control["text_clean"] == row.text_clean).sum())
            expected = int((same_text["speaker_id"] != row.speaker_id).sum()) + from_control
            if row.n_references != expected or (expected > 0) != np.isfinite(row.score):
                wrong[column.name, row.utt_id, row.variant] = (row.n_references, expected)
            if column.corpus != "youtube" and from_control == 0:
                without_control.append((column.name, row.utt_id))
    assert not wrong, wrong
    assert not without_control, without_control


@pytest.mark.parametrize("dataset", COPAS_WORD)
def test_copas_word_open_set_is_not_applicable_with_a_reason(run: Path, dataset: str) -> None:
    status = pd.read_csv(
        run / "results" / dataset / "openset" / "status.csv", keep_default_na=False
    )
    assert status["status"].tolist() == ["not_applicable"]
    assert "one recording group" in status.loc[0, "reason"], status.loc[0, "reason"]


@pytest.mark.parametrize(
    "dataset", ["youtube", "neurovoz_utterances_balanced", "neurovoz_utterances_unbalanced"]
)
def test_utterance_rated_datasets_have_utterance_correlations(run: Path, dataset: str) -> None:
    """YouTube's ``utt2score`` (and NeuroVoz's, which the published metadata ships) gives
    utterance-level correlations; CPP, measured on every utterance, has an r."""
    path = run / "results" / dataset / "utterance_correlations.csv"
    rows = {row["metric"]: row for row in csv.DictReader(io.StringIO(path.read_text()))}
    cpp = rows["cpp_fa"]
    assert np.isfinite(float(cpp["r_raw"])), cpp
    # The speaker-level table's sign, applied to the utterance-level r as well.
    assert float(cpp["r_aligned"]) == int(cpp["sign"]) * float(cpp["r_raw"]), cpp
