"""The workflow with fetching on, end to end: the seven model rows of PathBench (artp,
artp_old, artp_double_asr, per, dper, double_asr, nad on wav2vec2 features) from models and
LMs the fetch rules download through huggingface_hub's real code from a local stand-in hub
(pathbench_flow/testing/hub_standin.py), pinned by a lock naming the stand-in's commits and
digests (config ``fetch.lock``), phonemised by the espeak-ng the workflow builds (Debian's
1.52.0 source standing in for PathBench's commit, as in test_espeak_build); then the same rows
with the stand-in gone, and a corrupted fetched file refused."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pathbench_flow import fetching
from pathbench_flow.evaluators.neural import ASR_DEFAULT
from pathbench_flow.fetching.lms import pathbench_lms
from pathbench_flow.neural.models import NAD_MODEL
from pathbench_flow.testing.hub_standin import HubStandIn, Repo
from pathbench_flow.testing.kaldi_builder import build_dataset, build_tone_dataset
from pathbench_flow.testing.speech_fixtures import espeak_source, require_espeak
from pathbench_flow.testing.tiny_models import write_arpa
from pathbench_flow.testing.workflow_run import copy_workflow, full_log, snakemake

COMMIT = "2" * 40
PHONE_MODEL = "facebook/wav2vec2-xlsr-53-espeak-cv-ft"
UTTERANCE_ROWS = ("artp", "artp_old", "artp_double_asr", "per", "dper", "double_asr")
WEIGHTS = "model.safetensors"
ARCHIVE = "lms.zip"
LM_WORDS = ["the", "cat", "sat", "a", "dog", "ran"]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> dict[str, Path]:
    """Hub id → the tiny model the stand-in serves for it (one phone model, also NAD's
    encoder as in test_model_tracks; one character model for the five ASR languages), and
    the LMs' archive holding a tiny ARPA model at each path of the lock."""
    pytest.importorskip("torch", reason="model-based measures need the neural extra (torch)")
    pytest.importorskip("transformers", reason="model-based measures need transformers")
    require_espeak()
    from pathbench_flow.testing.tiny_models import build_char_model, build_phone_model

    root = tmp_path_factory.mktemp("served")
    phone = build_phone_model(root / "phone")
    char = build_char_model(root / "char", processor=True)  # transformers 5's layout
    models = {PHONE_MODEL: phone, NAD_MODEL: phone} | {
        hub_id: char for hub_id in ASR_DEFAULT.values()
    }
    lms = root / "lms.zip"
    with zipfile.ZipFile(lms, "w") as archive:  # each named path a member, as in Zenodo's
        for lm in pathbench_lms().values():
            archive.write(write_arpa(root / Path(lm["path"]).name, LM_WORDS), lm["path"])
    return models | {ARCHIVE: lms}


def _lock(standin: HubStandIn, served: dict[str, Path]) -> dict:
    """The shipped lock's entries, each pinned to what the stand-in serves."""
    shipped = fetching.lock()
    models = [
        entry
        | {
            "revision": COMMIT,
            "weights": WEIGHTS,
            "sha256": _digest(served[entry["id"]] / WEIGHTS),
            "pinned": fetching.PUBLIC_RECORD,
        }
        for entry in shipped["models"]
    ]
    archive = served[ARCHIVE]
    with zipfile.ZipFile(archive) as opened:
        members = [
            {
                "name": info.filename,
                "size": info.file_size,
                "compressed_size": info.compress_size,
                "crc32": f"{info.CRC:08x}",
                "sha256": hashlib.sha256(opened.read(info)).hexdigest(),
            }
            for info in opened.infolist()
        ]
    archives = [
        {
            "file": ARCHIVE,
            "url": f"{standin.endpoint}/files/{ARCHIVE}",
            "md5": hashlib.md5(archive.read_bytes()).hexdigest(),
            "members": members,
        }
    ]
    return shipped | {"models": models, "archives": archives}


def _rows(workdir: Path) -> dict[str, pd.DataFrame]:
    """Each measure's score table of the one shard."""
    tables = {name: workdir / f"results/mine/scores/{name}/0000.parquet" for name in UTTERANCE_ROWS}
    tables["nad"] = workdir / "results/mine/reference_scores/nad/raw/all/0000.parquet"
    return {name: pd.read_parquet(path) for name, path in tables.items()}


def _fetch_jobs(workdir: Path) -> list[str]:
    """The fetch and build jobs of the latest run."""
    pattern = r"^localrule (fetch_\w+|build_espeak):"
    return re.findall(pattern, full_log(workdir), flags=re.MULTILINE)


@pytest.mark.slow
def test_fetched_models_give_every_model_row_and_a_second_offline_run_fetches_nothing(
    served, tmp_path, monkeypatch
):
    standin = HubStandIn(
        repos={hub_id: Repo(COMMIT, path) for hub_id, path in served.items() if path.is_dir()},
        files={name: path for name, path in served.items() if path.is_file()},
    ).start()
    monkeypatch.setenv("HF_ENDPOINT", standin.endpoint)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))  # no cache outside the test
    workdir = copy_workflow(tmp_path / "run")
    build_tone_dataset(workdir / "data" / "mine")
    build_dataset(workdir / "data" / "ctl", id_prefix="ref_")
    (workdir / "stand-in.lock.json").write_text(json.dumps(_lock(standin, served)))
    config = {
        "datasets": {
            "mine": {"path": "data/mine", "reference": "data/ctl", "trim_backend": "energy"}
        },
        "evaluators": [*UTTERANCE_ROWS, "nad"],
        "evaluator_options": {"nad": {"features": "wav2vec2"}},
        "variants": ["raw"],
        "reference_types": ["all"],
        "openset": {"enabled": False},
        "fetch": {
            "enabled": True,
            "directory": "fetched",
            "lock": "stand-in.lock.json",
            "espeak_ng": {"url": espeak_source().as_uri()},
        },
    }
    (workdir / "fetch.yaml").write_text(yaml.safe_dump(config))
    try:
        snakemake(workdir, "--cores", "2", "--configfile", "fetch.yaml")
        # seven checkpoints, and the five languages' LMs from one archive, each fetched once
        jobs = sorted(_fetch_jobs(workdir))
        assert jobs == ["build_espeak", "fetch_archive"] + ["fetch_lm"] * 5 + ["fetch_model"] * 7
        resolved = [path for _, path, _ in standin.requests if "/resolve/" in path]
        assert resolved and all(f"/resolve/{COMMIT}/" in path for path in resolved)
        for name, table in _rows(workdir).items():
            assert len(table) == 4 and (table["status"] == "ok").all(), (name, table)

        # a checkpoint the hub serves changed is refused, naming both digests; once the hub
        # serves the pinned files again, the fetch takes them
        phone = fetching.model_directory(workdir / "fetched", PHONE_MODEL)
        record = str((phone / fetching.RECORD_FILE).relative_to(workdir))
        changed = shutil.copytree(served[PHONE_MODEL], tmp_path / "changed")
        (changed / WEIGHTS).write_bytes((changed / WEIGHTS).read_bytes()[:-1] + b"\x00")
        standin.repos[PHONE_MODEL] = Repo(COMMIT, changed)
        shutil.rmtree(phone)
        refetch = (record, "--cores", "1", "--configfile", "fetch.yaml")
        assert snakemake(workdir, *refetch, check=False).returncode != 0
        log = (workdir / f"logs/fetch/models/{phone.name}.log").read_text()
        pinned = _digest(served[PHONE_MODEL] / WEIGHTS)
        assert pinned in log and _digest(changed / WEIGHTS) in log and WEIGHTS in log, log
        assert not (phone / WEIGHTS).exists() and (phone / f"{WEIGHTS}.rejected").exists()
        standin.repos[PHONE_MODEL] = Repo(COMMIT, served[PHONE_MODEL])
        snakemake(workdir, *refetch)
        assert _digest(phone / WEIGHTS) == pinned
    finally:
        standin.stop()

    # the stand-in is gone: every row again from the fetched files alone, byte for byte, and
    # nothing is fetched
    asked = len(standin.requests)
    scores = {name: path.read_bytes() for name, path in _score_files(workdir).items()}
    shutil.rmtree(workdir / "results")
    snakemake(workdir, "--cores", "2", "--configfile", "fetch.yaml")
    assert _fetch_jobs(workdir) == [] and len(standin.requests) == asked
    assert len(scores) == 7
    assert {name: path.read_bytes() for name, path in _score_files(workdir).items()} == scores


def _score_files(workdir: Path) -> dict[str, Path]:
    return {
        str(path.relative_to(workdir)): path
        for path in sorted((workdir / "results/mine").rglob("*scores/**/*.parquet"))
    }
