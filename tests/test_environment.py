"""The conda environments pin what pyproject.toml pins: a conda user gets the versions the
suite was run with, and a bound changed in one place only fails here."""

from __future__ import annotations

import re
import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from pathbench_flow.testing import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
ENVIRONMENT = yaml.safe_load((REPO / "environment.yml").read_text())
RULE_ENVIRONMENT = yaml.safe_load((REPO / "workflow" / "envs" / "pathbench.yaml").read_text())
EXTRAS = ("test",)
"""The extras environment.yml installs besides the dependencies (its header says why)."""
CONDA_NAMES = {"snakemake-minimal": "snakemake", "pysoundfile": "soundfile"}
"""conda-forge's name of a package → its PyPI name."""
PLUMBING = {"python", "pip"}
"""Conda entries that are the environment itself, not a dependency of the package."""

Pins = dict[str, tuple[SpecifierSet, frozenset[str]]]


def _pins(requirements: list[str]) -> Pins:
    pins: Pins = {}
    for line in requirements:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name not in pins, f"{name} listed twice"
        pins[name] = (requirement.specifier, frozenset(requirement.extras))
    return pins


def _conda_requirement(entry: str) -> str:
    """A conda match spec (``name>=1,<2``) as a PEP 508 requirement under its PyPI name."""
    name, specifier = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", entry).groups()
    return CONDA_NAMES.get(name, name) + specifier


def _conda_and_pip(environment: dict) -> tuple[list[str], list[str]]:
    conda = [entry for entry in environment["dependencies"] if isinstance(entry, str)]
    (pip,) = [entry["pip"] for entry in environment["dependencies"] if isinstance(entry, dict)]
    return conda, pip


def _python(environment: dict) -> str:
    conda, _ = _conda_and_pip(environment)
    (python,) = [entry for entry in conda if entry.startswith("python=")]
    return python.removeprefix("python=")


def test_environment_yml_pins_exactly_the_dependencies_and_test_extra():
    conda, pip = _conda_and_pip(ENVIRONMENT)
    listed = [
        _conda_requirement(entry)
        for entry in conda
        if re.split(r"[=<>!~ ]", entry)[0] not in PLUMBING
    ]
    listed += [line for line in pip if line != "-e ."]
    expected = list(PYPROJECT["dependencies"])
    for extra in EXTRAS:
        expected += PYPROJECT["optional-dependencies"][extra]
    assert "-e ." in pip, "environment.yml installs the checkout itself"
    assert _pins(listed) == _pins(expected)


def test_the_cluster_extra_is_in_the_test_extra():
    """environment.yml names the `cluster` extra as included through `test`."""
    cluster = _pins(PYPROJECT["optional-dependencies"]["cluster"])
    test = _pins(PYPROJECT["optional-dependencies"]["test"])
    assert cluster.items() <= test.items()


def test_both_environments_run_the_python_the_package_requires():
    python = _python(ENVIRONMENT)
    assert Version(python) in SpecifierSet(PYPROJECT["requires-python"])
    assert _python(RULE_ENVIRONMENT) == python


def test_the_rule_environment_takes_every_pin_from_the_released_package():
    """workflow/envs/pathbench.yaml installs the package by its version and nothing else, so
    its dependencies are pyproject.toml's, through the package's metadata."""
    conda, pip = _conda_and_pip(RULE_ENVIRONMENT)
    assert {re.split(r"[=<>!~ ]", entry)[0] for entry in conda} == PLUMBING
    assert pip == [f"{PYPROJECT['name']}=={PYPROJECT['version']}"]


def test_pyctcdecode_is_installed_at_one_version_everywhere():
    """It is installed without its dependencies (its metadata pins numpy<2), so outside
    pyproject.toml: the README's install lines, CI and the image must agree on the version."""
    places = ("README.md", ".ci/run", "Dockerfile")
    pins = {
        place: set(re.findall(r"pyctcdecode==([\w.]+)", (REPO / place).read_text()))
        for place in places
    }
    assert all(pins.values()), pins
    assert len(set().union(*pins.values())) == 1, pins


def test_the_cpu_image_installs_the_torch_ci_tests():
    """A CPU cluster's image (Dockerfile, TORCH_INDEX_URL) pins torch to the release whose CPU
    build CI runs the model-based measures' tests on."""
    pins = {
        place: set(re.findall(r"torch==([\w.+]+)", (REPO / place).read_text()))
        for place in (".ci/run", "Dockerfile")
    }
    assert all(pins.values()), pins
    assert len(set().union(*pins.values())) == 1, pins
