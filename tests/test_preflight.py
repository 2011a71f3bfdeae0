"""Config problems the schema cannot see stop the run at parse time, naming the key and fix."""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pathbench_flow.evaluators import options, registry
from pathbench_flow.neural import models
from pathbench_flow.runtime.preflight import ConfigError, check_config
from pathbench_flow.testing.kaldi_builder import build_dataset
from pathbench_flow.testing.workflow_run import copy_workflow, dry_run

PLUGIN = """
from pathlib import Path

from pathbench_flow.evaluators.base import ReferenceFreeEvaluator


class ModelEvaluator(ReferenceFreeEvaluator):
    name = "model_measure"
    direction = 1
    unit = "a.u."

    def __init__(self, model_dir: str = "missing-model") -> None:
        self.model_dir = model_dir

    @classmethod
    def preflight(cls, options):
        model = options.get("model_dir", "missing-model")
        if not Path(model).is_dir():
            raise ValueError(f"model directory {model} not found; set model_dir")

    def _score_audio(self, audio, fs):
        return 0.0
"""


@pytest.fixture
def model_plugin(tmp_path):
    """A real installed plugin (dist-info with an entry point) whose preflight checks a path."""
    site = tmp_path / "site"
    info = site / "model_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: model-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[pathbench_flow.evaluators]\nmodel_measure = model_plugin:ModelEvaluator\n"
    )
    (site / "model_plugin.py").write_text(PLUGIN)
    sys.path.insert(0, str(site))
    registry._catalogue.cache_clear()
    yield tmp_path
    sys.path.remove(str(site))
    sys.modules.pop("model_plugin", None)
    registry._catalogue.cache_clear()


def config_for(data: Path, **changes) -> dict:
    config = {
        "datasets": {"mine": {"path": str(data)}},
        "evaluators": ["cpp", "cpps"],
        "evaluator_options": {},
    }
    return config | changes


def problems(config: dict) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        check_config(config, generated=lambda path: False)
    return caught.value.problems


@pytest.fixture
def data(tmp_path):
    return build_dataset(tmp_path / "data")


def test_a_valid_config_passes(data):
    check_config(config_for(data), generated=lambda path: False)


def test_empty_evaluator_list_and_unknown_names(data):
    assert problems(config_for(data, evaluators=[])) == [
        "evaluators: the list is empty; name at least one evaluator"
    ]
    (found,) = problems(config_for(data, evaluators=["cqq"]))
    assert found.startswith("evaluators: unknown evaluator 'cqq'; installed: ")


def test_options_are_checked_against_the_constructor(data):
    options = {"cpp": {"window": 3}, "cpps": {"implementation": "praat", "speed": 2}}
    assert problems(config_for(data, evaluator_options=options)) == [
        "evaluator_options.cpp: unknown option(s) window; CPPEvaluator takes no options",
        "evaluator_options.cpps: unknown option(s) speed; CPPSEvaluator takes implementation",
    ]
    typo = problems(config_for(data, evaluator_options={"cps": {}}))
    assert typo == [
        "evaluator_options.cps: no evaluator is called 'cps'; fix the name or remove the entry"
    ]


def test_fa_evaluator_names_of_old_configs_say_how_to_get_the_variant(data):
    """p_estoi_fa and nad_fa are the fa variant of p_estoi and nad, applied by the scoring
    stage; a config that still lists them as evaluators is stopped with the fix."""
    config = config_for(
        data,
        evaluators=["p_estoi_fa", "nad_fa", "cpp_fa"],
        evaluator_options={"nad_fa": {"features": "mfcc"}},
    )
    assert problems(config) == [
        "evaluators: 'p_estoi_fa' is the fa variant of 'p_estoi', not an evaluator; "
        "list 'p_estoi' and keep fa in variants (e.g. [raw, fa])",
        "evaluators: 'nad_fa' is the fa variant of 'nad', not an evaluator; "
        "list 'nad' and keep fa in variants (e.g. [raw, fa])",
        "evaluators: 'cpp_fa' is the fa variant of 'cpp', not an evaluator; "
        "list 'cpp' and keep fa in variants (e.g. [raw, fa])",
        "evaluator_options.nad_fa: the fa variant takes the options of 'nad'; "
        "move them to evaluator_options.nad",
    ]


def test_the_allowlist_names_evaluators(data):
    config = config_for(data, correlation={"allowlist": ["wada_snr", "wada_snr_fa"]})
    assert problems(config) == [
        "correlation.allowlist: 'wada_snr_fa' is not an evaluator; the allowlist names "
        "evaluators, and covers all their variants and reference sets"
    ]


def test_dataset_directories_must_exist_and_be_directories(data, tmp_path):
    datasets = {
        "gone": {"path": str(tmp_path / "nowhere")},
        "file": {"path": str(data / "wav.scp")},
        "empty": {"path": str(tmp_path)},
        "mine": {"path": str(data), "reference": str(tmp_path / "controls")},
    }
    found = problems(config_for(data, datasets=datasets))
    assert [p.split(":")[0] for p in found] == [
        "datasets.empty.path",
        "datasets.file.path",
        "datasets.gone.path",
        "datasets.mine.reference",
    ]
    assert "has no utt2spk" in found[0] and "is a file, not a directory" in found[1]
    assert "does not exist" in found[2] and "does not exist" in found[3]
    generated = {"demo": {"path": str(tmp_path / "demo" / "pathological")}}
    check_config(config_for(data, datasets=generated), generated=lambda path: "demo" in str(path))


def test_evaluator_preflight_runs_with_the_options_and_names_the_key(data, model_plugin):
    (found,) = problems(config_for(data, evaluators=["model_measure"]))
    assert found == (
        "evaluator_options.model_measure: model directory missing-model not found; set model_dir"
    )
    options = {"model_measure": {"model_dir": str(model_plugin)}}
    check_config(
        config_for(data, evaluators=["model_measure"], evaluator_options=options),
        generated=lambda path: False,
    )


# --- option values ----------------------------------------------------------------------------
LANGUAGES = "'en', 'es', 'nl', 'it', 'cmn'"
W2V = "w2v"
"""A wav2vec2 model directory of two layers, relative to where the tests run."""
NEEDS_NEURAL = pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in models.PACKAGES),
    reason="a model directory is checked only where torch and transformers are installed",
)


def bad(name: str, values: dict, expected: str, **param) -> Any:
    """A bad value of an option of evaluator ``name``: its options and the start of the message
    after ``evaluator_options.`` (the key, the value and what is accepted), named by the key."""
    return pytest.param(name, values, expected, **{"id": expected.split()[0].rstrip(":")} | param)


BAD_VALUES = [
    bad(
        "cpps",
        {"implementation": "fastest"},
        "cpps.implementation = 'fastest' is not one of 'fast', 'praat'",
    ),
    bad(
        "std_pitch",
        {"compat": "praat"},
        "std_pitch.compat = 'praat' is not one of 'pathbench', 'none'",
    ),
    bad(
        "praat_speech_rate",
        {"compat": "none"},
        "praat_speech_rate.compat = 'none' is not one of 'pathbench'; "
        "this project's variant is the evaluator 'speech_rate'",
    ),
    bad("vsa", {"use_spk2gender": "yes"}, "vsa.use_spk2gender = 'yes' is not true or false"),
    bad("nad", {"features": "hubert"}, "nad.features = 'hubert' is not one of 'wav2vec2', 'mfcc'"),
    bad("nad", {"features": "mfcc", "layer": -1}, "nad.layer = -1 is not an integer >= 0"),
    bad(
        "nad", {"model": 3}, "nad.model = 3 is not a model: a local directory or a Hugging Face id"
    ),
    bad("per", {"batch_size": 0}, "per.batch_size = 0 is not an integer >= 1"),
    bad(
        "per", {"models": {"de": "x"}}, f"per.models: 'de' is not one of the languages {LANGUAGES}"
    ),
    bad("double_asr", {"lm": {"en": 3}}, "double_asr.lm.en = 3 is not an n-gram file"),
    bad("artp", {"model": ""}, "artp.model = '' is not a model"),
    bad(
        "artp_old",
        {"compat": "strict"},
        "artp_old.compat = 'strict' is not one of 'pathbench', 'none'",
    ),
]
"""One bad value of each kind an option of a built-in evaluator can have."""
LAYER_OF_MODEL = bad(
    "nad",
    {"model": W2V, "layer": 3},
    "nad.layer = 3 is not one of the layers 0..2 of the model ",
    id="nad.layer-of-the-model",
    marks=NEEDS_NEURAL,
)
"""A layer the model does not have: the evaluator's preflight reads the model's config."""


def wav2vec2_dir(directory: Path, **config) -> Path:
    """What the up-front model check reads of a wav2vec2 encoder (config.json and non-empty
    weights), without a real model: the layer check must not need one."""
    directory.mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps({"model_type": "wav2vec2"} | config))
    (directory / "pytorch_model.bin").write_bytes(b"weights")
    return directory


@pytest.fixture
def here(tmp_path, monkeypatch):
    """Tests run in ``tmp_path``, with the model :data:`W2V` there."""
    monkeypatch.chdir(tmp_path)
    wav2vec2_dir(tmp_path / W2V, num_hidden_layers=2)
    return tmp_path


@pytest.mark.parametrize(("name", "values", "expected"), [*BAD_VALUES, LAYER_OF_MODEL])
def test_a_bad_option_value_names_the_key_and_what_is_accepted(data, here, name, values, expected):
    (found,) = problems(config_for(data, evaluators=[name], evaluator_options={name: values}))
    assert found.startswith(f"evaluator_options.{expected}"), found


@pytest.mark.parametrize(("name", "values", "expected"), BAD_VALUES)
def test_the_constructor_refuses_the_same_values(name, values, expected):
    with pytest.raises(ValueError) as caught:
        registry.create(name, **values)
    assert str(caught.value).startswith(f"evaluator_options.{expected}")


def test_every_option_of_every_builtin_evaluator_declares_its_values():
    for cls in registry._BUILTIN:
        declared = options.declared(cls.__init__)
        for parameter in inspect.signature(cls).parameters:
            if parameter not in cls.context_options:
                assert declared.get(parameter), f"{cls.name}: {parameter} declares no values"


def test_values_are_checked_by_type_and_null_asks_for_the_default():
    per, nad = registry.info("per").cls, registry.info("nad").cls
    accepted = {"models": {"en": "m", "cmn": "m"}, "lm": "wiki.arpa", "batch_size": 1}
    assert options.value_problems(per, accepted) == []
    assert options.value_problems(per, {"models": None, "lm": None}) == []
    assert options.value_problems(nad, {"layer": None, "features": "mfcc"}) == []
    assert options.value_problems(per, {"batch_size": True, "compat": None}) == [
        "evaluator_options.per.batch_size = True is not an integer >= 1",
        "evaluator_options.per.compat = None is not one of 'pathbench', 'none'",
    ]
    assert options.value_problems(per, {"lm": 5, "models": "m"}) == [
        "evaluator_options.per.lm = 5 is not an n-gram file (ARPA or kenlm binary) for every "
        f"language, or a mapping of language ({LANGUAGES}) to an n-gram file (ARPA or kenlm "
        "binary)",
        f"evaluator_options.per.models = 'm' is not a mapping of language ({LANGUAGES}) to a "
        "model: a local directory or a Hugging Face id",
    ]


@NEEDS_NEURAL
def test_the_nad_layer_must_be_one_the_model_has(data, here):
    def nad(**values) -> dict:
        return config_for(data, evaluators=["nad"], evaluator_options={"nad": values})

    check_config(nad(model=W2V, layer=2), generated=lambda path: False)
    (default,) = problems(nad(model=W2V))
    assert default.startswith("evaluator_options.nad.layer = 10 is not one of the layers 0..2")
    # A config.json without num_hidden_layers has transformers' default, 12.
    wav2vec2_dir(here / "default")
    check_config(nad(model="default", layer=12), generated=lambda path: False)
    assert problems(nad(model="default", layer=13))[0].endswith(str(here / "default"))


class _TypeCheckingOnly:
    def __init__(self, model: Unimportable = None) -> None:  # noqa: F821 - the point
        self.model = model


def test_a_constructor_whose_annotations_cannot_be_read_declares_nothing():
    """A plugin annotating with a type imported for type checkers only still parses; its
    values are its own preflight's to check."""
    assert options.declared(_TypeCheckingOnly.__init__) == {}


@pytest.mark.parametrize(("name", "values", "expected"), [BAD_VALUES[0], LAYER_OF_MODEL])
def test_a_bad_option_value_stops_the_dry_run_before_any_job(tmp_path, name, values, expected):
    """The workflow's parse runs the checks, so no job starts (and no model loads) to find out.

    Every kind of bad value reaches :func:`check_config` in
    :func:`test_a_bad_option_value_names_the_key_and_what_is_accepted`; the workflow is run for
    a value its options check refuses and for one only the evaluator's preflight can see (it
    reads the model, which the parse finds relative to the working directory)."""
    workdir = copy_workflow(tmp_path / "wf")
    build_dataset(workdir / "data" / "mine")
    wav2vec2_dir(workdir / W2V, num_hidden_layers=2)
    config = {
        "datasets": {"mine": {"path": "data/mine"}},
        "evaluators": [name],
        "evaluator_options": {name: values},
    }
    run = dry_run(workdir, config, check=False)
    assert run.returncode == 1
    output = run.stdout + run.stderr
    assert f"evaluator_options.{expected}" in output, output[-3000:]
    assert "Job stats" not in output and not (workdir / "results").exists()
