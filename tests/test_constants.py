"""One source for every constant: the config schema's defaults (YAML cannot import Python) must
equal the values the code uses when called without a config, or a run from the command line
and a run from the workflow would differ without anyone noticing."""

from __future__ import annotations

import inspect
from pathlib import Path

import yaml

from pathbench_flow.common.languages import LANGUAGES, canonical_language
from pathbench_flow.common.seeds import BOOTSTRAP_SEED, DEMO_SEED
from pathbench_flow.data.kaldi import NOT_RATED, parse_score
from pathbench_flow.demo.corpus import make_demo
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.stats.correlation import CI_LEVEL, DEFAULT_ALLOWLIST, N_BOOT, read_spk2score
from pathbench_flow.stats.uncertainty import META_TESTS, METHODS
from pathbench_flow.stats.uncertainty import N_BOOT as UNCERTAINTY_N_BOOT

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


def schema_defaults(section: str) -> dict[str, object]:
    properties = yaml.safe_load(SCHEMA.read_text())["properties"][section]["properties"]
    return {key: spec["default"] for key, spec in properties.items() if "default" in spec}


def parameter_defaults(function) -> dict[str, object]:
    return {
        name: p.default
        for name, p in inspect.signature(function).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def test_demo_defaults_match_the_generator():
    defaults = schema_defaults("demo")
    assert defaults["seed"] == DEMO_SEED
    generator = parameter_defaults(make_demo)
    for key in ("seed", "n_pathological", "n_control", "n_utterances", "word_mode"):
        assert defaults[key] == generator[key], key


def test_correlation_defaults_match_the_statistics():
    defaults = schema_defaults("correlation")
    assert defaults == {
        "allowlist": list(DEFAULT_ALLOWLIST),
        "n_boot": N_BOOT,
        "seed": BOOTSTRAP_SEED,
    }


def test_uncertainty_defaults_match_the_statistics():
    """The speaker bootstrap defaults to its own replicates (enough for Holm's smallest p),
    the correlation bootstrap's seed and level, and to the interval methods the coverage
    benchmark chose (the first of METHODS and of META_TESTS)."""
    assert schema_defaults("uncertainty") == {
        "n_boot": UNCERTAINTY_N_BOOT,
        "seed": BOOTSTRAP_SEED,
        "level": CI_LEVEL,
        "method": METHODS[0],
        "meta_test": META_TESTS[0],
        "meta_analysis": {},
    }


def test_validation_defaults_match_the_stage():
    """Every key of the config's `validation` block is a keyword of the stage, with its
    default; the stage's other keywords are the rule's inputs and outputs, and the dataset's
    own ``score_scale`` (a key of ``datasets.<name>``, not of the block)."""
    stage = parameter_defaults(validate_dataset)
    schema = schema_defaults("validation")
    assert schema == {key: stage[key] for key in schema}
    assert set(stage) - set(schema) == {"test_manifest", "test_directory", "score_scale"}


def test_languages_and_aliases():
    assert canonical_language("ZH") == "cmn" and canonical_language("Nl") == "nl"
    assert canonical_language("klingon") == "klingon"
    assert len(set(LANGUAGES)) == len(LANGUAGES) == 5


def test_one_reading_of_spk2score_values(tmp_path):
    """Validation and ``pathbench-flow correlate`` read spk2score with the same rule."""
    assert parse_score(NOT_RATED) != parse_score(NOT_RATED)  # NaN
    assert parse_score("72.5") == 72.5
    assert [parse_score(raw) for raw in ("nan", "inf", "x", "n/a")] == [None] * 4
    path = tmp_path / "spk2score"
    path.write_text(f"a 1.5\nb {NOT_RATED}\n", encoding="utf-8")
    scores = read_spk2score(path)
    assert scores["a"] == 1.5 and scores.isna().tolist() == [False, True]
