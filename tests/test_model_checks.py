"""What stands between a configured model and a run: the up-front check that a model directory
holds a loadable model, the device the models run on and the GPU their jobs ask for, and a
job whose every utterance fails. On a tiny random wav2vec2 phone model
(pathbench_flow/testing/tiny_models.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from pathbench_flow.evaluators import registry
from pathbench_flow.neural import models
from pathbench_flow.runtime.preflight import ConfigError, check_config
from pathbench_flow.stages.score import ScoringFailed, score_utterances
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.kaldi_builder import build_dataset
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake


@pytest.fixture(scope="module")
def phone_model(tmp_path_factory) -> Path:
    pytest.importorskip("torch", reason="model-based measures need the neural extra (torch)")
    pytest.importorskip("transformers", reason="model-based measures need transformers")
    from pathbench_flow.testing.tiny_models import build_phone_model

    return build_phone_model(tmp_path_factory.mktemp("model") / "phone")


def broken(model: Path, target: Path, drop: tuple[str, ...] = (), **config) -> Path:
    """A copy of ``model`` without the files ``drop`` and with ``config`` set in config.json."""
    shutil.copytree(model, target, ignore=shutil.ignore_patterns(*drop))
    if config:
        path = target / "config.json"
        path.write_text(json.dumps(json.loads(path.read_text()) | config))
    return target


def preflight_error(name: str, options: dict) -> str:
    with pytest.raises(models.ModelUnavailable) as caught:
        registry.info(name).cls.preflight(options)
    return str(caught.value)


# --- a model directory must hold a loadable model -------------------------------------------


def test_a_directory_without_a_loadable_model_is_a_preflight_error_naming_the_option(
    phone_model, tmp_path
):
    empty = tmp_path / "empty"
    empty.mkdir()
    message = preflight_error("artp", {"model": str(empty)})
    assert message.startswith(f"evaluator_options.artp.model: {empty} is not a loadable model: ")
    assert "no config.json" in message and "no weights (model.safetensors" in message
    assert "save_pretrained" in message

    config_only = tmp_path / "config_only"
    config_only.mkdir()
    shutil.copy(phone_model / "config.json", config_only)
    message = preflight_error("artp_old", {"model": str(config_only)})
    assert message.startswith("evaluator_options.artp_old.model: ")
    assert "no config.json" not in message and "no weights" in message
    assert "neither preprocessor_config.json nor processor_config.json" in message
    assert "no vocab.json" in message

    no_weights = broken(phone_model, tmp_path / "no_weights", drop=("model.safetensors",))
    message = preflight_error("dper", {"model": str(no_weights)})
    assert re.fullmatch(
        rf"evaluator_options\.dper\.model: {re.escape(str(no_weights))} is not a loadable "
        r"model: no weights \(model\.safetensors, .*\); " + re.escape(models.MODEL_DIRECTORY_FIX),
        message,
    )


def test_an_incomplete_copy_or_the_wrong_kind_of_model_is_refused(phone_model, tmp_path):
    truncated = broken(phone_model, tmp_path / "truncated", drop=("model.safetensors",))
    weights = (phone_model / "model.safetensors").read_bytes()
    (truncated / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    assert "model.safetensors is truncated" in preflight_error("artp", {"model": str(truncated)})
    # A pre-trained checkpoint has no CTC head: loaded for CTC its output layer would be random.
    pretrained = broken(
        phone_model, tmp_path / "pretrained", architectures=["Wav2Vec2ForPreTraining"]
    )
    assert "declares no CTC head" in preflight_error("artp", {"model": str(pretrained)})
    asr = {"models": {"en": str(pretrained)}}
    assert preflight_error("per", asr).startswith("evaluator_options.per.models.en: ")
    sharded = broken(phone_model, tmp_path / "sharded", drop=("model.safetensors",))
    (sharded / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"lm_head.weight": "model-00001-of-00002.safetensors"}})
    )
    assert "no model-00001-of-00002.safetensors" in preflight_error("artp", {"model": str(sharded)})


def test_an_incomplete_model_in_the_hugging_face_cache_says_to_fetch_it_again(
    phone_model, tmp_path, monkeypatch
):
    from pathbench_flow.testing.tiny_models import as_hf_cache

    partial = broken(phone_model, tmp_path / "partial", drop=("model.safetensors",))
    as_hf_cache(partial, tmp_path / "cache", "tiny/partial")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    message = preflight_error("artp", {"model": "tiny/partial"})
    assert message.startswith("evaluator_options.artp.model: 'tiny/partial' (")
    assert "no weights" in message and message.endswith(
        "fetch it again: `hf download tiny/partial`"
    )


def test_nad_needs_a_wav2vec2_config_and_weights_but_no_tokenizer(phone_model, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    message = preflight_error("nad", {"model": str(empty)})
    assert message.startswith(f"evaluator_options.nad.model: {empty} is not a loadable model")
    assert "no weights" in message and "vocab.json" not in message
    encoder = broken(
        phone_model,
        tmp_path / "encoder",
        drop=("vocab.json", "tokenizer_config.json", "preprocessor_config.json"),
    )
    registry.info("nad").cls.preflight({"model": str(encoder)})
    hubert = broken(phone_model, tmp_path / "hubert", model_type="hubert")
    assert "model_type 'hubert'" in preflight_error("nad", {"model": str(hubert)})


def test_a_valid_tiny_model_passes_and_the_check_reads_no_torch(phone_model):
    for name in ("artp", "artp_old", "dper", "nad"):
        registry.info(name).cls.preflight({"model": str(phone_model)})
    code = (
        "import sys\nfrom pathbench_flow.evaluators import registry\n"
        f"registry.info('artp_old').cls.preflight({{'model': {str(phone_model)!r}}})\n"
        f"registry.info('nad').cls.preflight({{'model': {str(phone_model)!r}}})\n"
        "print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


def test_the_workflow_check_lists_the_broken_model_under_its_option(phone_model, tmp_path):
    data = build_dataset(tmp_path / "data")
    config = {
        "datasets": {"mine": {"path": str(data)}},
        "evaluators": ["artp_old", "cpp"],
        "evaluator_options": {"artp_old": {"model": str(tmp_path)}},
    }
    with pytest.raises(ConfigError) as caught:
        check_config(config, generated=lambda path: False)
    (problem,) = caught.value.problems
    assert problem.startswith("evaluator_options.artp_old.model: ") and "no config.json" in problem


# --- a job whose every utterance fails stops --------------------------------------------------


@pytest.fixture
def manifest(tmp_path) -> Path:
    path = tmp_path / "manifest.parquet"
    validate_dataset(
        build_dataset(tmp_path / "data"), path, tmp_path / "validation.json", n_shards=1
    )
    return path


def test_a_model_that_will_not_load_fails_the_job_naming_the_first_utterance(
    phone_model, manifest, tmp_path
):
    """config.json and the weights disagree (the check reads no weights, loading fails): every
    utterance gets status error, so the job stops instead of writing a table of errors."""
    corrupt = broken(phone_model, tmp_path / "corrupt", hidden_size=24)
    registry.info("artp_old").cls.preflight({"model": str(corrupt)})
    output = tmp_path / "scores.parquet"
    with pytest.raises(ScoringFailed) as failed:
        score_utterances(manifest, 0, "artp_old", output, options={"model": str(corrupt)})
    message = str(failed.value)
    assert message.startswith(f"artp_old: all 4 rows of {output} have status error")
    assert "utt_id 'spk1_u0' (artp_old): RuntimeError: " in message
    assert not output.exists()
    written = score_utterances(manifest, 0, "artp_old", output, options={"model": str(phone_model)})
    assert (written["status"] == "ok").all() and output.is_file()


# --- the device models run on, and the GPU their jobs ask for ----------------------------------


def fake_torch(cuda: bool) -> SimpleNamespace:
    return SimpleNamespace(
        __version__="2.x",
        version=SimpleNamespace(cuda=None),
        cuda=SimpleNamespace(is_available=lambda: cuda),
    )


@pytest.mark.parametrize(
    ("device", "cuda", "placed"),
    [
        (None, True, "cuda"),
        (None, False, "cpu"),
        ("auto", True, "cuda"),
        ("auto", False, "cpu"),
        ("cpu", True, "cpu"),
        ("cpu", False, "cpu"),
        ("cuda", True, "cuda"),
    ],
)
def test_the_device_decides_where_models_run(monkeypatch, device, cuda, placed):
    if device is None:
        monkeypatch.delenv(models.DEVICE_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(models.DEVICE_VARIABLE, device)
    assert models._device(fake_torch(cuda)) == placed


def test_device_cuda_without_a_gpu_fails_clearly_and_a_wrong_value_is_refused(monkeypatch):
    monkeypatch.setenv(models.DEVICE_VARIABLE, "cuda")
    with pytest.raises(models.DeviceUnavailable, match="device: cuda, but torch 2.x sees no CUDA"):
        models._device(fake_torch(False))
    monkeypatch.setenv(models.DEVICE_VARIABLE, "gpu")
    with pytest.raises(ValueError, match="device 'gpu' \\(PATHBENCH_DEVICE\\): one of auto"):
        models._device(fake_torch(True))
    assert [models.gpus_requested(d, True) for d in models.DEVICES] == [0, 0, 1]
    assert [models.gpus_requested(d, False) for d in models.DEVICES] == [0, 0, 0]


def test_device_cuda_fails_a_model_job_at_its_start_on_a_cpu_node(
    phone_model, manifest, tmp_path, monkeypatch
):
    import torch

    if torch.cuda.is_available():
        pytest.skip(reason="this machine has a CUDA device")
    monkeypatch.setenv(models.DEVICE_VARIABLE, "cuda")
    output = tmp_path / "scores.parquet"
    with pytest.raises(models.DeviceUnavailable, match="run the model jobs on a GPU node"):
        score_utterances(manifest, 0, "artp_old", output, options={"model": str(phone_model)})
    assert not output.exists()
    score_utterances(manifest, 0, "cpp", output)  # a job without a model does not care


def gpu_resources(plan: str) -> dict[str, int]:
    """Output file → ``gpu`` resource of every job a dry run lists."""
    found, output = {}, None
    for line in plan.splitlines():
        if line.strip().startswith("output: "):
            output = line.split("output: ", 1)[1].split(",")[0].strip()
        match = re.search(r"resources: .*\bgpu=(\d+)", line)
        if match and output is not None:
            found[output] = int(match.group(1))
    return found


@pytest.mark.parametrize(("device", "gpu"), [(None, 0), ("auto", 0), ("cpu", 0), ("cuda", 1)])
def test_only_device_cuda_asks_for_a_gpu_and_only_for_model_jobs(
    phone_model, tmp_path, device, gpu
):
    workdir = copy_workflow(tmp_path / "wf")
    build_dataset(workdir / "data" / "mine")
    config = {
        "datasets": {"mine": {"path": "data/mine", "trim_backend": "wav2vec2"}},
        "evaluators": ["cpp", "artp_old", "nad"],
        "evaluator_options": {"artp_old": {"model": str(phone_model)}},
        "fa_trim": {"wav2vec2_model_dir": str(phone_model)},
        "reference_types": ["all"],
    } | ({} if device is None else {"device": device})
    config["evaluator_options"]["nad"] = {"model": str(phone_model)}
    (workdir / "my.yaml").write_text(yaml.safe_dump(config))
    plan = gpu_resources(snakemake(workdir, "-n", "--configfile", "my.yaml").stdout)
    expected = {
        "results/mine/trim/0000.parquet": gpu,
        "results/mine/scores/cpp/0000.parquet": 0,
        "results/mine/scores/artp_old/0000.parquet": gpu,
        "results/mine/reference_scores/nad/raw/all/0000.parquet": gpu,
        "results/mine/reference_scores/nad/fa/all/0000.parquet": gpu,
    }
    assert {output: plan.get(output) for output in expected} == expected
    assert set(plan.values()) == {0, gpu}  # no other job asks for a GPU unless told to


@pytest.mark.slow
def test_a_failing_model_job_fails_the_run_and_says_why_in_its_log(phone_model, tmp_path):
    """Through the real workflow: ``device: cuda`` reaches the job (on a machine without CUDA
    the job stops at its start), and a model that will not load stops its job instead of
    writing a table of errors; either way the run exits non-zero and the log says why."""
    import torch

    workdir = copy_workflow(tmp_path / "wf")
    build_dataset(workdir / "data" / "mine")
    corrupt = broken(phone_model, tmp_path / "corrupt", hidden_size=24)
    runs = {
        "cpu": (corrupt, "ScoringFailed: artp_old: all 4 rows of"),
        "cuda": (phone_model, "DeviceUnavailable: device: cuda, but torch"),
    }
    if torch.cuda.is_available():
        del runs["cuda"]
    for device, (model, expected) in runs.items():
        config = {
            "datasets": {"mine": {"path": "data/mine", "trim_backend": "energy"}},
            "evaluators": ["artp_old"],
            "evaluator_options": {"artp_old": {"model": str(model)}},
            "device": device,
        }
        (workdir / "my.yaml").write_text(yaml.safe_dump(config))
        target = "results/mine/scores/artp_old/0000.parquet"
        shutil.rmtree(workdir / "logs", ignore_errors=True)
        run = snakemake(workdir, target, "--cores", "1", "--configfile", "my.yaml", check=False)
        assert run.returncode != 0 and not (workdir / target).exists()
        logs = [path.read_text() for path in sorted((workdir / "logs").rglob("*.log"))]
        assert any(expected in log for log in logs), (device, run.stderr[-3000:])


# --- both layouts save_pretrained writes ------------------------------------------------------


@pytest.fixture(scope="module")
def processor_model(tmp_path_factory) -> Path:
    """The phone model's seed saved as transformers 5 saves a processor."""
    pytest.importorskip("torch", reason="model-based measures need the neural extra (torch)")
    from pathbench_flow.testing.tiny_models import build_phone_model

    return build_phone_model(tmp_path_factory.mktemp("model") / "processor", processor=True)


def test_a_processor_saved_by_transformers_5_is_accepted_and_loads_like_the_old_layout(
    phone_model, processor_model
):
    import numpy as np

    assert (processor_model / models.PROCESSOR_FILE).is_file()
    assert not (processor_model / models.FEATURE_EXTRACTOR_FILE).exists()
    assert (phone_model / models.FEATURE_EXTRACTOR_FILE).is_file()
    assert not (phone_model / models.PROCESSOR_FILE).exists()
    for name in ("artp", "dper", "nad"):
        registry.info(name).cls.preflight({"model": str(processor_model)})
    audio = np.sin(np.arange(8000) / 7.0).astype(np.float32)
    new, old = (models.load_ctc(str(d)) for d in (processor_model, phone_model))
    assert new.vocab == old.vocab and new.blank == old.blank
    (new_out,), (old_out,) = new.log_posteriors([audio]), old.log_posteriors([audio])
    np.testing.assert_array_equal(new_out, old_out)


def test_a_processor_without_its_feature_extractor_is_refused_naming_both_layouts(
    processor_model, tmp_path
):
    hollow = broken(processor_model, tmp_path / "hollow")
    path = hollow / models.PROCESSOR_FILE
    path.write_text(json.dumps({"processor_class": "Wav2Vec2Processor"}))
    message = preflight_error("artp", {"model": str(hollow)})
    assert (
        "processor_config.json holds no 'feature_extractor' object and there is no "
        "preprocessor_config.json" in message
    )
    path.unlink()
    message = preflight_error("artp", {"model": str(hollow)})
    assert "neither preprocessor_config.json nor processor_config.json" in message
