"""Each process imports only the libraries it runs: the workflow's parse and each kind of job.

A run has hundreds of jobs, each a fresh Python process; a library imported by a job that
never calls it costs that job its import time (Praat, PocketSphinx, librosa, matplotlib,
scikit-learn and numba together were ~1.4 s per job). Each test runs a fresh interpreter,
does what the process does (the dry run; a rule script's imports; building an evaluator and
scoring a real recording; running a stage), and compares the heavy libraries it ended with
against the ones that work needs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pathbench_flow.common.io import read_parquet, write_parquet
from pathbench_flow.common.lazy import lazy_module
from pathbench_flow.schemas.tables import SPEAKERS_SCHEMA
from pathbench_flow.testing.job_imports import DRY_RUN, run_fresh, script_imports
from pathbench_flow.testing.speech_fixtures import FIXTURES, require_espeak
from pathbench_flow.testing.workflow_run import LOCAL_RUN, REPO, copy_workflow

SCRIPTS = REPO / "scripts"
BLUE = FIXTURES / "BLUE_japanese10.wav"
REFERENCES = [FIXTURES / f"BLUE_english{n}.wav" for n in (32, 33, 34)]


def test_the_dry_run_imports_no_heavy_library(tmp_path, monkeypatch):
    """``snakemake -n`` on the demo config: the parse reads every configured evaluator's
    metadata and runs their preflight checks, and needs none of their libraries."""
    for name, value in LOCAL_RUN.items():
        monkeypatch.setenv(name, value)
    run = run_fresh(DRY_RUN, cwd=copy_workflow(tmp_path / "wf"))
    assert {
        "pathbench_flow.evaluators.registry",
        "pathbench_flow.runtime.preflight",
        "pathbench_flow.stages.openset",
    } <= run.modules
    assert run.heavy() == set()


@pytest.mark.parametrize("script", sorted(SCRIPTS.glob("*.py")), ids=lambda path: path.stem)
def test_a_rule_script_imports_no_heavy_library_before_its_stage_runs(script: Path):
    imports = script_imports(script)
    assert "pathbench_flow" in imports
    assert run_fresh(imports).heavy() == set()


def _scoring_job(code: str) -> str:
    """The score_utterances script's imports, then ``code``, which prints status and value."""
    return script_imports(SCRIPTS / "score_utterances.py") + "\n" + code


@pytest.mark.parametrize(
    ("evaluator", "options", "libraries"),
    [
        ("cpp", {}, {"numba"}),
        ("cpps", {}, {"numba"}),
        ("wada_snr", {}, set()),
        ("std_pitch", {}, {"parselmouth"}),
        # Praat's own CPPS; the cepstral package's numba implementations load with it.
        ("cpps", {"implementation": "praat"}, {"parselmouth", "numba"}),
    ],
)
def test_an_utterance_scoring_job_loads_only_its_measures_libraries(evaluator, options, libraries):
    run = run_fresh(
        _scoring_job(
            "from pathbench_flow.evaluators.base import Item\n"
            "from pathbench_flow.stages.score import build_evaluator\n"
            f"evaluator = build_evaluator({evaluator!r}, {options!r}, {{}})\n"
            f"score = evaluator.evaluate(Item('blue', {str(BLUE)!r}))\n"
            "print(score.status, score.value)"
        )
    )
    status, value = run.stdout.split()
    assert status == "ok" and np.isfinite(float(value))
    assert run.heavy() == libraries


def test_a_reference_scoring_job_loads_numba_but_not_librosa_for_p_estoi():
    refs = tuple((str(path), 0.0, -1.0) for path in REFERENCES)
    run = run_fresh(
        script_imports(SCRIPTS / "score_reference.py")
        + "\nfrom pathbench_flow.evaluators.base import Item\n"
        + "from pathbench_flow.stages.score import build_evaluator\n"
        + f"item = Item('blue', {str(BLUE)!r}, reference_audios={refs!r})\n"
        + "score = build_evaluator('p_estoi', {}, {}).evaluate(item)\n"
        + "print(score.status, score.value)"
    )
    status, value = run.stdout.split()
    assert status == "ok" and 0 < float(value) < 1
    assert run.heavy() == {"numba"}  # its DTW path; librosa's would load scipy.signal too


@pytest.mark.parametrize(("backend", "libraries"), [("energy", set()), ("auto", {"pocketsphinx"})])
def test_a_trimming_job_loads_pocketsphinx_only_to_align(backend, libraries):
    run = run_fresh(
        script_imports(SCRIPTS / "fa_trim.py")
        + "\nfrom pathbench_flow.trimming.forced_alignment import FATrimmer\n"
        + f"trimmer = FATrimmer.from_config({{'backend': {backend!r}}})\n"
        + f"print(trimmer.trim({str(BLUE)!r}, 'blue', 'en').record.backend)"
    )
    assert run.stdout.strip() == ("energy" if backend == "energy" else "pocketsphinx")
    assert run.heavy() == libraries


def test_the_correlate_job_loads_only_scipy_stats(tmp_path):
    truth = [20.0, 35.0, 50.0, 65.0, 80.0]
    rows = [
        (f"S{i}", "cpp", "cpp", "raw", value, 4, 4, t)
        for i, (value, t) in enumerate(zip([1.0, 3.0, 2.0, 5.0, 4.0], truth, strict=True))
    ]
    speakers = tmp_path / "speakers.parquet"
    frame = pd.DataFrame(rows, columns=SPEAKERS_SCHEMA.names)
    write_parquet(frame, speakers, SPEAKERS_SCHEMA, ["metric", "speaker_id"])
    out = tmp_path / "correlations.parquet"
    run = run_fresh(
        script_imports(SCRIPTS / "correlate.py")
        + f"\ncorrelate({str(speakers)!r}, {str(out)!r}, allowlist=(), n_boot=50, seed=1)"
    )
    assert read_parquet(out)["pearson_r"].notna().all()
    assert run.heavy() == {"scipy.stats"}


@pytest.fixture(scope="module")
def model_tracks_written(tmp_path_factory) -> tuple[Path, list[Path], dict[str, dict]]:
    """The tiny phone and character models' track files (and their n-gram transcription's)
    of one shard, as the workflow's track jobs write them: the manifest, the files, and each
    model measure's options."""
    pytest.importorskip("torch", reason="the track jobs run the tiny models with torch")
    require_espeak()
    from test_neural import NEURAL, options

    from pathbench_flow import tracks
    from pathbench_flow.evaluators import registry
    from pathbench_flow.stages.validate import validate_dataset
    from pathbench_flow.testing.kaldi_builder import build_tone_dataset
    from pathbench_flow.testing.tiny_models import build_char_model, build_phone_model, write_arpa
    from pathbench_flow.testing.track_jobs import write_track_files

    root = tmp_path_factory.mktemp("model_tracks")
    tiny = {
        "phone": str(build_phone_model(root / "phone")),
        "char": str(build_char_model(root / "char")),
        "lm": str(write_arpa(root / "lm.arpa", ["blue", "the", "cat", "water"])),
    }
    manifest = root / "manifest.parquet"
    validate_dataset(build_tone_dataset(root / "data"), manifest, root / "check.json", n_shards=1)
    chosen = {name: options(tiny, name) for name in NEURAL}
    planned = tracks.merge_uses(
        use for name in NEURAL for use in registry.info(name).cls.track_uses(chosen[name])
    )
    files, _ = write_track_files(manifest, planned, root)
    return manifest, list(files.values()), chosen


@pytest.mark.parametrize(
    "evaluator", ["artp", "artp_old", "dper", "per", "double_asr", "artp_double_asr"]
)
def test_a_model_measures_job_reading_track_files_imports_neither_torch_nor_transformers(
    model_tracks_written, evaluator, tmp_path
):
    """Its values come from the track files, its decoding from the model's tokenizer files
    (read without transformers, which imports torch): ~1.7 s of imports it never used."""
    manifest, files, chosen = model_tracks_written
    output = tmp_path / f"{evaluator}.parquet"
    run = run_fresh(
        script_imports(SCRIPTS / "score_utterances.py")
        + f"\nscored = score_utterances({str(manifest)!r}, 0, {evaluator!r}, {str(output)!r}, "
        + f"options={chosen[evaluator]!r}, track_paths={[str(f) for f in files]!r})"
        + "\nprint(sorted(set(scored['status'])), tracks.counts())"
    )
    assert read_parquet(output)["status"].eq("ok").all()
    assert "computed" not in run.stdout  # every model output came from the files
    assert run.heavy() & {"torch", "transformers"} == set()


def test_a_lazy_module_imports_on_the_first_attribute_read(tmp_path, monkeypatch):
    (tmp_path / "lazy_probe_ok.py").write_text("VALUE = 41 + 1\n")
    (tmp_path / "lazy_probe_broken.py").write_text("import lazy_probe_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ok = lazy_module("lazy_probe_ok")
    assert "lazy_probe_ok" not in sys.modules
    assert ok.VALUE == 42 and "lazy_probe_ok" in sys.modules
    broken = lazy_module("lazy_probe_broken")
    for _ in range(2):  # the import error each time, never a half-loaded module
        with pytest.raises(ModuleNotFoundError, match="lazy_probe_no_such_dependency"):
            _ = broken.anything
    with pytest.raises(ModuleNotFoundError, match="lazy_probe_missing"):
        lazy_module("lazy_probe_missing")
