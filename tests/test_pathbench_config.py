"""The shipped PathBench config (``config/pathbench.yaml``) plans all 21 of PathBench's columns.

Why: a user reproduces PathBench's table by setting one datasets root in that config; a path
that does not match PathBench's layout, a column missing or a model measure the checks refuse
would stop that run before any job. The dry run reads the config as shipped (only
``datasets_root`` set, as the user sets it) over PathBench's real Kaldi metadata
(``tests/fixtures/kaldi-metadata``: UASpeech, NeuroVoz, EasyCall, COPAS, TORGO) laid out under
a temporary root, plus MDSC and YouTube written in their shape (``pathbench_shapes``), whose
metadata PathBench does not publish. The model checks find PathBench's model ids in a local
Hugging Face cache holding tiny models the test builds: nothing is downloaded.
"""

from __future__ import annotations

import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from pathbench_flow.reporting.results_table import PATHBENCH_COLUMNS, PATHBENCH_ROWS
from pathbench_flow.schemas.config import rooted_datasets
from pathbench_flow.testing import KALDI_METADATA, REPO
from pathbench_flow.testing.pathbench_shapes import (
    COLUMNS,
    Pool,
    mdsc_plans,
    write_plan,
    youtube_plan,
)
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

CONFIG = REPO / "config" / "pathbench.yaml"
PHONE_IDS = ("facebook/wav2vec2-xlsr-53-espeak-cv-ft", "facebook/wav2vec2-large")
ASR_IDS = tuple(
    f"jonatasgrosman/wav2vec2-large-xlsr-53-{language}"
    for language in ("english", "spanish", "dutch", "italian", "chinese-zh-cn")
)


def lay_out(root: Path) -> None:
    """The five published corpora's metadata, and MDSC's and YouTube's in their shape."""
    for corpus in sorted(p for p in KALDI_METADATA.iterdir() if p.is_dir()):
        shutil.copytree(corpus, root / corpus.name)
    for plan in [*mdsc_plans(Pool(root / "audio"), root), youtube_plan(Pool(root / "audio"), root)]:
        plan.hashes = False  # no audio is written, so there is nothing to hash
        write_plan(plan)


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory) -> Path:
    """PathBench's seven model ids in a Hugging Face cache, each a tiny random model."""
    pytest.importorskip("transformers", reason="tiny models need the neural extra (transformers)")
    from pathbench_flow.testing.tiny_models import as_hf_cache, build_char_model, build_phone_model

    base = tmp_path_factory.mktemp("models")
    phone, char = build_phone_model(base / "phone"), build_char_model(base / "char")
    cache = base / "hub"
    for repo_id in PHONE_IDS:
        as_hf_cache(phone, cache, repo_id, link=True)
    for repo_id in ASR_IDS:
        as_hf_cache(char, cache, repo_id, link=True)
    return cache


def test_datasets_root_prefixes_relative_paths_only() -> None:
    """Relative path and reference go under the root; absolute ones and other keys do not."""
    datasets = {
        "a": {"path": "copas/x", "reference": "/data/controls", "trim_backend": "energy"},
    }
    assert rooted_datasets(datasets, "/corpora") == {
        "a": {"path": "/corpora/copas/x", "reference": "/data/controls", "trim_backend": "energy"}
    }
    assert rooted_datasets(datasets, None) == datasets


def test_config_lists_pathbench_rows_and_columns() -> None:
    """Every row's evaluator and one dataset per column, with fetching on."""
    config = yaml.safe_load(CONFIG.read_text())
    assert config["fetch"]["enabled"] is True
    evaluators = set(config["evaluators"])
    for metric, _name, _category in PATHBENCH_ROWS:
        assert any(metric == e or metric.startswith(f"{e}_") for e in evaluators), metric
    assert [Path(d["path"]) for d in config["datasets"].values()] == [
        column.split("pathological") for column in COLUMNS
    ]
    assert len(config["datasets"]) == len(PATHBENCH_COLUMNS)


def test_dry_run_plans_every_column(tmp_path, hub_cache, monkeypatch) -> None:
    """`snakemake -n` with the shipped config and one datasets root plans each of the 21
    datasets' validation and scoring, the table, and the espeak-ng build."""
    workdir = copy_workflow(tmp_path / "run")
    lay_out(tmp_path / "corpora")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    run = snakemake(
        workdir,
        *("-n", "--configfile", "config/pathbench.yaml"),
        *("--config", f"datasets_root={tmp_path / 'corpora'}"),
    )
    jobs: dict[str, set[str]] = defaultdict(set)
    job = re.compile(r"^(?:local)?rule (\w+):\n((?:    .*\n)*)", re.M)
    for rule, body in job.findall(run.stdout):
        found = re.search(r"wildcards: (?:.*, )?dataset=(\w+)", body)
        jobs[rule].add(found[1] if found else "")
    names = set(yaml.safe_load(CONFIG.read_text())["datasets"])
    for rule in ("validate_dataset", "score_utterances", "score_speakers", "results_table"):
        assert jobs[rule] == (names if rule != "results_table" else {""}), rule
    assert jobs["build_espeak"] == {""}  # the phone model's trimming phonemises
