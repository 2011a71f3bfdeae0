"""Fetching pinned models and LMs with huggingface_hub's real download code, offline: a local
stand-in for the hub on 127.0.0.1 (pathbench_flow/testing/hub_standin.py) serves tiny models
built with save_pretrained. The LMs' archive: test_lm_archive.py."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pathbench_flow import fetching
from pathbench_flow.testing.hub_standin import HubStandIn, Repo

COMMIT = "1" * 40


@pytest.fixture(scope="module")
def char_model(tmp_path_factory) -> Path:
    pytest.importorskip("torch", reason="model-based measures need the neural extra (torch)")
    from pathbench_flow.testing.tiny_models import build_char_model

    return build_char_model(tmp_path_factory.mktemp("model") / "char")


@pytest.fixture
def hub(char_model, tmp_path, monkeypatch):
    standin = HubStandIn(repos={"tiny/char": Repo(COMMIT, char_model)})
    standin.start()
    monkeypatch.setenv("HF_ENDPOINT", standin.endpoint)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    yield standin
    standin.stop()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def entry(model: Path, sha256: str | None) -> dict:
    return {
        "id": "tiny/char",
        "kind": "ctc",
        "revision": COMMIT,
        "weights": "model.safetensors",
        "sha256": sha256,
    }


def test_the_lock_pins_every_pathbench_checkpoint_at_a_full_commit():
    lock = fetching.lock()
    assert len(lock["models"]) == 7
    for model in lock["models"]:
        assert len(model["revision"]) == 40 and int(model["revision"], 16) >= 0
        assert (model["sha256"] is None) == (model["pinned"] == fetching.FIRST_USE)
    # per language the path PathBench's code names, fetched from Zenodo's one archive, which
    # the lock pins by Zenodo's MD5 and size, and by the member a public record describes
    named = {lm["language"]: lm["path"] for lm in lock["lms"]}
    assert named == {
        "en": "lms/wiki_en_token.arpa",
        "nl": "lms/wiki_nl_token.arpa",
        "es": "lms/wiki_es_token.arpa.bin",
        "it": "lms/wiki_it_token.arpa.bin",
        "cmn": "lms/wiki_zh_token.arpa",
    }
    (archive,) = lock["archives"]
    assert {lm["archive"] for lm in lock["lms"]} == {archive["file"]}
    assert len(archive["md5"]) == 32 and archive["url"].startswith("https://")
    (english,) = archive["members"]
    assert english["name"] == "lms/wiki_en_token.arpa.bin" and english["crc32"] == "5afb90ef"
    assert english["size"] == 14_600_342_241 and english["compressed_size"] == 8_582_666_912


def test_a_pinned_model_is_fetched_at_its_commit_and_a_second_fetch_asks_nothing(
    hub, char_model, tmp_path
):
    pinned = entry(char_model, digest(char_model / "model.safetensors"))
    target = tmp_path / "fetched"
    record = fetching.fetch_model(pinned, target)
    assert record["files"]["model.safetensors"] == pinned["sha256"]
    assert all(f"/resolve/{COMMIT}/" in path for _, path, _ in hub.requests)
    from pathbench_flow.neural import models

    assert models.model_problems(target, ctc=True) == []
    asked = len(hub.requests)
    assert fetching.fetch_model(pinned, target) == record
    assert len(hub.requests) == asked


def test_a_corrupted_download_is_refused_naming_both_digests(hub, char_model, tmp_path):
    wrong = "0" * 64
    with pytest.raises(fetching.DigestMismatch) as caught:
        fetching.fetch_model(entry(char_model, wrong), tmp_path / "fetched")
    actual = digest(char_model / "model.safetensors")
    message = str(caught.value)
    assert "model.safetensors" in message and wrong in message and actual in message
    assert not (tmp_path / "fetched" / fetching.RECORD_FILE).exists()
    assert not (tmp_path / "fetched" / "model.safetensors").exists()


def _weights_changed_on_disk(target: Path, hub: HubStandIn, served: Path) -> str:
    """The fetched weights change and their mtime does not (bit rot, an overwrite that keeps
    times): huggingface_hub's metadata still vouches for them, so a rerun does not download them
    again, and only a pin tells."""
    weights = target / "model.safetensors"
    times = weights.stat()
    weights.write_bytes(weights.read_bytes()[:-1] + b"\0")
    os.utime(weights, ns=(times.st_atime_ns, times.st_mtime_ns))
    return weights.name


def _vocabulary_changed_on_the_hub(target: Path, hub: HubStandIn, served: Path) -> str:
    """The hub serves another vocabulary at the same commit, and the fetched one is gone, so
    the next fetch downloads the changed one (a file no public record gives a digest of)."""
    changed = shutil.copytree(served, target.parent / "changed")
    vocabulary = json.loads((changed / "vocab.json").read_text(encoding="utf-8"))
    first, second = list(vocabulary)[-2:]
    vocabulary[first], vocabulary[second] = vocabulary[second], vocabulary[first]
    (changed / "vocab.json").write_text(json.dumps(vocabulary), encoding="utf-8")
    hub.repos["tiny/char"] = Repo(COMMIT, changed)
    (target / "vocab.json").unlink()
    return "vocab.json"


@pytest.mark.parametrize("change", [_weights_changed_on_disk, _vocabulary_changed_on_the_hub])
@pytest.mark.parametrize("forced", [False, True], ids=["record kept", "forced rerun"])
def test_a_first_use_model_is_recorded_and_a_changed_file_is_refused_later(
    hub, char_model, tmp_path, change, forced
):
    """Also on a forced rerun: Snakemake deletes the record (the rule's output) before it
    reruns the fetch, and the first fetch's pins must still hold."""
    target = tmp_path / "fetched"
    record_path = target / fetching.RECORD_FILE
    record = fetching.fetch_model(entry(char_model, None), target)
    assert record["files"]["model.safetensors"] == digest(char_model / "model.safetensors")
    if forced:  # an unchanged rerun takes the same files
        record_path.unlink()
        assert fetching.fetch_model(entry(char_model, None), target) == record
        record_path.unlink()
    name = change(target, hub, char_model)
    with pytest.raises(fetching.DigestMismatch, match=record["files"][name]) as caught:
        fetching.fetch_model(entry(char_model, None), target)
    assert f"{name}:" in str(caught.value)
    assert (target / f"{name}.rejected").exists() and not (target / name).exists()


def test_a_changed_commit_is_pinned_anew_and_the_first_stays_pinned(hub, char_model, tmp_path):
    """First-use pins hold for the lock entry they were taken under: a lock naming another
    commit names other files, which the first fetch of that commit pins; back at the first
    commit, its pins hold again."""
    target = tmp_path / "fetched"
    first = fetching.fetch_model(entry(char_model, None), target)
    changed = _vocabulary_changed_on_the_hub(target, hub, char_model)
    other = "2" * 40
    hub.repos["tiny/char"] = Repo(other, hub.repos["tiny/char"].directory)
    record = fetching.fetch_model(entry(char_model, None) | {"revision": other}, target)
    assert record["files"][changed] == digest(target / changed) != first["files"][changed]
    hub.repos["tiny/char"] = Repo(COMMIT, hub.repos["tiny/char"].directory)
    with pytest.raises(fetching.DigestMismatch, match=first["files"][changed]):
        fetching.fetch_model(entry(char_model, None), target)


@pytest.fixture(scope="module")
def larger_model(tmp_path_factory) -> Path:
    """A character model whose weights (about 35 MB) span several of huggingface_hub's
    download chunks (``DOWNLOAD_CHUNK_SIZE``, 10 MB): it writes a chunk only once it is whole,
    so only a download cut after a whole chunk has anything to resume from."""
    pytest.importorskip("torch", reason="model-based measures need the neural extra (torch)")
    from pathbench_flow.testing.tiny_models import TINY, build_char_model

    sizes = TINY | {"hidden_size": 256, "intermediate_size": 1024}
    return build_char_model(tmp_path_factory.mktemp("model") / "larger", **sizes)


def _weights_gets(standin: HubStandIn) -> list[str | None]:
    """The Range header of each GET of the weights."""
    return [r for m, path, r in standin.requests if m == "GET" and path.endswith(".safetensors")]


def test_an_interrupted_model_download_resumes_with_a_range_request(
    larger_model, tmp_path, monkeypatch
):
    """The stand-in drops the connection after a chunk and a half of the weights;
    huggingface_hub's own retry asks for the rest only, and the digest is the pinned one."""
    from huggingface_hub.constants import DOWNLOAD_CHUNK_SIZE

    weights = larger_model / "model.safetensors"
    assert weights.stat().st_size > 3 * DOWNLOAD_CHUNK_SIZE
    cut = DOWNLOAD_CHUNK_SIZE * 3 // 2
    standin = HubStandIn(
        repos={"tiny/char": Repo(COMMIT, larger_model)}, cut={"model.safetensors": cut}
    ).start()
    monkeypatch.setenv("HF_ENDPOINT", standin.endpoint)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    try:
        pinned = entry(larger_model, digest(weights))
        record = fetching.fetch_model(pinned, tmp_path / "fetched")
    finally:
        standin.stop()
    assert _weights_gets(standin) == [None, f"bytes={DOWNLOAD_CHUNK_SIZE}-"]
    assert record["files"]["model.safetensors"] == pinned["sha256"]


def test_a_fetch_killed_midway_is_fetched_whole_again_and_its_partial_file_removed(
    larger_model, tmp_path, monkeypatch
):
    """huggingface_hub (2.4, since its PR 4228) downloads into a file unique to its process
    and never resumes another process's: after a killed fetch, the next one fetches
    the whole file, and removes the partial file the killed one left, which nothing would
    ever read (a checkpoint's is up to 1.3 GB)."""
    from huggingface_hub.constants import DOWNLOAD_CHUNK_SIZE

    weights = larger_model / "model.safetensors"
    standin = HubStandIn(
        repos={"tiny/char": Repo(COMMIT, larger_model)},
        stall={"model.safetensors": 2 * DOWNLOAD_CHUNK_SIZE - 1},  # one whole chunk arrives
    ).start()
    monkeypatch.setenv("HF_ENDPOINT", standin.endpoint)
    monkeypatch.setenv("HF_HUB_DOWNLOAD_TIMEOUT", "120")  # no retry during the stall
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    pinned = entry(larger_model, digest(weights))
    target = tmp_path / "fetched"
    code = (
        "from pathlib import Path\nfrom pathbench_flow import fetching\n"
        f"fetching.fetch_model({pinned!r}, Path({str(target)!r}))\n"
    )
    try:
        first = subprocess.Popen([sys.executable, "-c", code], env=os.environ.copy())
        assert _stable_incomplete_size(target, first) == DOWNLOAD_CHUNK_SIZE
        first.kill()
        first.wait()
        record = fetching.fetch_model(pinned, target)
    finally:
        standin.stop()
    assert record["files"]["model.safetensors"] == pinned["sha256"]
    assert _weights_gets(standin) == [None, None]
    assert not list(target.rglob("*.incomplete"))


def _stable_incomplete_size(target: Path, process: subprocess.Popen, seconds: float = 60) -> int:
    """The size of the ``.incomplete`` download under ``target`` once it has stopped growing
    for a second."""
    deadline = time.monotonic() + seconds
    seen: list[int] = []
    while time.monotonic() < deadline and process.poll() is None:
        sizes = [p.stat().st_size for p in target.rglob("*.incomplete")]
        seen.append(sizes[0] if sizes else 0)
        if seen[-1] and seen[-5:] == [seen[-1]] * 5:
            return seen[-1]
        time.sleep(0.25)
    raise AssertionError(f"no partial download appeared (process exit {process.poll()})")


def test_a_job_that_would_download_fails_instead(hub, tmp_path):
    """Every job runs with OFFLINE_VARIABLES (settings.smk): huggingface_hub then refuses
    to download, though the stand-in serves the model."""
    code = (
        "from huggingface_hub import hf_hub_download\n"
        f"hf_hub_download('tiny/char', 'config.json', revision={COMMIT!r}, "
        f"local_dir={str(tmp_path / 'job')!r})\n"
    )
    environment = os.environ | fetching.OFFLINE_VARIABLES
    done = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True
    )
    assert done.returncode != 0 and "LocalEntryNotFoundError" in done.stderr
    assert not hub.requests
    assert not (tmp_path / "job" / "config.json").exists()


def test_fetching_rewrites_model_options_to_fetched_paths_and_plans_pathbench_lms(tmp_path):
    config = {
        "fetch": {"enabled": True, "directory": str(tmp_path / "fetched")},
        "evaluators": ["artp", "artp_double_asr", "nad"],
        "evaluator_options": {"nad": {"features": "mfcc"}},
        "fa_trim": {"backend": "auto"},
        "datasets": {"mine": {"trim_backend": "wav2vec2"}},
    }
    from pathbench_flow.fetching.plan import TRIMMING, plan_fetches

    plan = plan_fetches(config)
    # the phone model and the five ASR models; NAD on MFCCs runs no model
    assert len(plan.models) == 6 and "facebook/wav2vec2-large" not in plan.models
    assert len(plan.lms) == 5
    options = config["evaluator_options"]["artp_double_asr"]
    assert options["model"] == str(
        fetching.model_directory(tmp_path / "fetched", "facebook/wav2vec2-xlsr-53-espeak-cv-ft")
    )
    assert options["lm"]["es"].endswith("lms/wiki_es_token.arpa.bin")
    assert options["lm"]["en"].endswith("lms/wiki_en_token.arpa")
    assert len(plan.targets()) == 11
    # each job waits for what it reads: artp for the phone model only, the trimming backend
    # (wav2vec2 for one dataset) for the same phone model, artp_double_asr for all eleven
    phone = str(Path(options["model"]) / fetching.RECORD_FILE)
    assert plan.of_reader("artp") == plan.of_reader(TRIMMING) == [phone]
    assert config["fa_trim"]["wav2vec2_model_dir"] == options["model"]
    assert plan.of_reader("artp_double_asr") == sorted(plan.targets())
    assert plan.of_reader("nad") == []
    assert plan.of_model(Path(options["model"]).resolve()) == [phone]
    assert plan.of_model(str(tmp_path)) == plan.of_model(None) == []
