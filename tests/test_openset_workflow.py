"""The open-set stage in the workflow: switched on only by ``openset.enabled``, and a dataset
it cannot apply to (COPAS's word shape) still gives a complete run and a report."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import yaml
from scipy.signal import resample_poly

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.openset.config import NOT_ENABLED, openset_enabled
from pathbench_flow.testing.copas_shaped import SPEAKERS, write_copas_words
from pathbench_flow.testing.speech_fixtures import require_espeak
from pathbench_flow.testing.workflow_run import REPO, copy_workflow, output_files, snakemake

USER_CONFIG = yaml.safe_load((REPO / ".test" / "config" / "config.yaml").read_text())


def test_only_enabled_switches_the_stage_on() -> None:
    warnings: list[str] = []
    assert openset_enabled({"enabled": True, "known_folds": 3}, warnings.append)
    assert not openset_enabled({"enabled": False, "known_folds": 3}, warnings.append)
    assert warnings == []
    assert not openset_enabled({"known_folds": 3}, warnings.append)
    assert warnings == [NOT_ENABLED]


def test_a_block_with_sub_options_only_stays_off_with_a_warning(tmp_path):
    workdir = copy_workflow(tmp_path / "wf")
    shutil.copytree(REPO / ".test" / "data", workdir / ".test" / "data")
    (workdir / "my.yaml").write_text(yaml.safe_dump(USER_CONFIG | {"openset": {"known_folds": 3}}))
    plan = snakemake(workdir, "-n", "--configfile", "my.yaml")
    output = plan.stdout + plan.stderr
    assert "openset_features" not in output and "results/mine/openset" not in output
    assert output.count(NOT_ENABLED) == 1


# ---------------------------------------------------------------- COPAS word shape, whole run
# speaker order of copas_shaped.SPEAKERS: (espeak-ng Dutch voice variant, pitch 0-99)
VOICES = (("m1", 40), ("f2", 75), ("m3", 25), ("f4", 60))
CONFIG = {
    "datasets": {"copas_word": {"path": "data/copas_word"}},
    "evaluators": ["wada_snr", "cpps"],
    "variants": ["raw"],
    "openset": {"enabled": True},
}


def espeak_dutch(word: str, k: int) -> np.ndarray:
    """espeak-ng's Dutch voice saying ``word`` in speaker ``k``'s voice, at 16 kHz."""
    voice, pitch = VOICES[k]
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "word.wav"
        command = ["espeak-ng", "-v", f"nl+{voice}", "-p", str(pitch), "-w", str(path), word]
        subprocess.run(command, check=True)
        audio, rate = sf.read(path, dtype="float64")
    divisor = np.gcd(rate, SAMPLE_RATE)
    return resample_poly(audio, SAMPLE_RATE // divisor, rate // divisor)


@pytest.fixture(scope="module")
def copas_run(tmp_path_factory):
    require_espeak()
    workdir = copy_workflow(tmp_path_factory.mktemp("copas_word"))
    write_copas_words(workdir / "data" / "copas_word", espeak_dutch)
    (workdir / "my.yaml").write_text(yaml.safe_dump(CONFIG))
    snakemake(workdir, "--cores", "2", "--configfile", "my.yaml")
    return workdir


@pytest.mark.slow
def test_copas_word_shape_completes_and_reports_why_open_set_cannot_apply(copas_run):
    results = copas_run / "results" / "copas_word" / "openset"
    summary = json.loads((results / "summary.json").read_text())
    assert summary["status"] == "not_applicable"
    assert summary["reason"].startswith(
        f"every speaker's utterances come from one recording group ({len(SPEAKERS)} speakers"
    )
    status = pd.read_csv(results / "status.csv", keep_default_na=False)
    assert status["reason"].tolist() == [summary["reason"]]
    assert pd.read_csv(results / "per_fold.csv").empty
    log = (copas_run / "logs" / "copas_word" / "openset_summary.log").read_text()
    assert summary["reason"] in log

    snakemake(copas_run, "--configfile", "my.yaml", "--report", "report.html")
    report = (copas_run / "report.html").read_text()
    # the report embeds the status table (base64), reason and all
    assert base64.b64encode((results / "status.csv").read_bytes()).decode() in report

    before = output_files(copas_run)
    plan = snakemake(copas_run, "-n", "--configfile", "my.yaml")
    assert "Nothing to be done" in plan.stdout + plan.stderr
    snakemake(copas_run, "--cores", "2", "--configfile", "my.yaml", "--forcerun", "openset_folds")
    assert output_files(copas_run) == before
