"""Config problems the schema cannot see stop the run at parse time, naming the key and fix."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from kaldi_builder import build_dataset

from pathbench_flow import registry
from pathbench_flow.preflight import ConfigError, check_config

PLUGIN = """
from pathlib import Path

from pathbench_flow.evaluator import ReferenceFreeEvaluator


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
