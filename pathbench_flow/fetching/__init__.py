"""Fetching PathBench's models and n-gram LMs once, pinned and verified (config ``fetch``).

The lock shipped with the package (:data:`LOCK_FILE`; config ``fetch.lock`` names another, a
test's or a mirror's) names, per checkpoint, its hub id, a full commit of its repository and
the SHA-256 of the weights file fetched (the LFS object id the hub publishes); per LM its file
name, SHA-256, and either its URL or the archive and member it is extracted from; per archive
its URL and the MD5 its record publishes. An entry whose digest no public record gives is
``"pinned": "first-use"``: the first fetch records what it got in
:data:`RECORD_FILE` beside the files, and every later fetch verifies against that record.

Models come through huggingface_hub's own ``hf_hub_download`` at the pinned commit: a dropped
connection is resumed by its retry with a ``Range`` request, but a fetch process that is killed
starts the file again (huggingface_hub 2.4 downloads into a file unique to each process and
never reads another's; :func:`fetch_model` removes such leftovers). LMs come through one HTTP
GET that resumes a partial ``.part`` file with a ``Range`` request, across processes too. A
digest that differs stops the fetch, naming the file, the expected and the actual digest, and
the file is moved aside, never used.

Only the fetch rules (local rules, on the host with internet) call this module's downloads;
every other job runs with ``HF_HUB_OFFLINE=1`` (:data:`OFFLINE_VARIABLES`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import urllib.request
import zipfile
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pathbench_flow.io import write_json

LOCK_FILE = Path(__file__).with_name("pathbench_models.lock.json")
RECORD_FILE = "fetched.lock.json"
"""What a fetch got (every file's SHA-256, the commit), beside a fetched model."""
LM_RECORD_SUFFIX = ".fetched.json"
"""Beside a fetched LM file ``x``: ``x.fetched.json``, its record."""
OFFLINE_VARIABLES = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
"""Set for every job: a model a job would download is an error, not a download."""
PUBLIC_RECORD = "public-record"
FIRST_USE = "first-use"
CTC_FILES = (
    "config.json",
    "preprocessor_config.json",
    "processor_config.json",
    "vocab.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
)
"""What a CTC checkpoint may hold besides its weights (the ones a repository lacks are
skipped): the files ``from_pretrained`` of the model, tokenizer and feature extractor read."""
ENCODER_FILES = ("config.json",)
HF_DOWNLOAD_DIRECTORY = Path(".cache", "huggingface", "download")
"""Where ``hf_hub_download`` into a ``local_dir`` keeps its metadata and partial files."""
CHUNK = 1 << 20


class DigestMismatch(RuntimeError):
    """A fetched file is not the pinned one."""


@cache
def lock(path: str | Path = LOCK_FILE) -> dict[str, Any]:
    """The lock in ``path``: by default the shipped one of PathBench's model set."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def model_entry(hub_id: str, lock_file: str | Path = LOCK_FILE) -> dict[str, Any] | None:
    """The lock's entry of checkpoint ``hub_id``, or None if the lock does not name it."""
    return next((m for m in lock(lock_file)["models"] if m["id"] == hub_id), None)


def lm_entry(file: str, lock_file: str | Path = LOCK_FILE) -> dict[str, Any] | None:
    """The lock's entry of LM ``file``, or None if the lock does not name it."""
    return next((lm for lm in lock(lock_file)["lms"] if lm["file"] == file), None)


def default_lms(lock_file: str | Path = LOCK_FILE) -> dict[str, dict[str, Any]]:
    """Language → the lock's entry of the LM PathBench reads for it."""
    return {lm["language"]: lm for lm in lock(lock_file)["lms"] if lm["default"]}


def model_directory(root: str | Path, hub_id: str) -> Path:
    """Where checkpoint ``hub_id`` is fetched to under ``root`` (config ``fetch.directory``)."""
    return Path(root) / "models" / hub_id.replace("/", "--")


def lm_path(root: str | Path, file: str) -> Path:
    """Where LM ``file`` is fetched to under ``root``."""
    return Path(root) / "lms" / file


def fetched_identity(entry: Mapping[str, Any]) -> str:
    """The identity (``neural.model_tracks``) of a fetched checkpoint: its id, commit and
    pinned weights digest, known before the fetch, so the workflow plans the model's tracks
    before the files exist, and the same after (the record carries the entry)."""
    key = {k: entry.get(k) for k in ("id", "revision", "weights", "sha256")}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def file_digest(path: Path, algorithm: str = "sha256") -> str:
    digest = hashlib.new(algorithm)
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _verify(path: Path, expected: str | None, algorithm: str = "sha256") -> str:
    """The file's digest; a mismatch with ``expected`` moves the file aside and raises."""
    actual = file_digest(path, algorithm)
    if expected is not None and actual != expected:
        rejected = path.with_name(path.name + ".rejected")
        path.replace(rejected)
        raise DigestMismatch(
            f"{path}: {algorithm.upper()} {actual}, but the lock pins {expected}; the file is "
            f"moved to {rejected.name} and not used (a changed or corrupted download: delete "
            "it and fetch again, or check the lock)"
        )
    return actual


def _read_record(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def fetch_model(entry: Mapping[str, Any], target: Path) -> dict[str, Any]:
    """Checkpoint ``entry`` in ``target``, at its pinned commit, every file verified.

    A complete earlier fetch (its record, and every file matching it) fetches nothing. The
    weights must match the lock's digest, or, for a first-use entry, the earlier record's.

    Raises:
        DigestMismatch: a file is not the pinned or recorded one.
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import RemoteEntryNotFoundError

    record_path = target / RECORD_FILE
    earlier = _read_record(record_path)
    expected = dict(earlier["files"]) if earlier else {}
    if entry.get("sha256"):
        expected[entry["weights"]] = entry["sha256"]
    if earlier and all((target / name).is_file() for name in expected):
        for name, digest in sorted(expected.items()):
            _verify(target / name, digest)
        return earlier
    for leftover in (target / HF_DOWNLOAD_DIRECTORY).glob("*.incomplete"):
        leftover.unlink()  # a killed fetch's partial file, which huggingface_hub never reads
    names = (CTC_FILES if entry["kind"] == "ctc" else ENCODER_FILES) + (entry["weights"],)
    files: dict[str, str] = {}
    for name in names:
        try:
            hf_hub_download(
                entry["id"],
                name,
                revision=entry["revision"],
                local_dir=str(target),
                endpoint=os.environ.get("HF_ENDPOINT"),  # read now, not at import
            )
        except RemoteEntryNotFoundError:  # the repository has no such file
            if name == entry["weights"] or name == "config.json":
                raise
            continue
        files[name] = _verify(target / name, expected.get(name))
    record = {"entry": dict(entry), "identity": fetched_identity(entry), "files": files}
    write_json(record, record_path)
    return record


def archive_entry(name: str, lock_file: str | Path = LOCK_FILE) -> dict[str, Any] | None:
    """The lock's entry of archive ``name`` (a file several LMs are extracted from)."""
    return next((a for a in lock(lock_file).get("archives", []) if a["file"] == name), None)


def archive_path(root: str | Path, name: str) -> Path:
    """Where archive ``name`` is fetched to under ``root``."""
    return Path(root) / "archives" / name


def fetch_archive(entry: Mapping[str, Any], target: Path) -> dict[str, Any]:
    """Archive ``entry`` at ``target``, downloaded over HTTP once (a partial ``.part`` file is
    resumed with a ``Range`` request) and verified by the MD5 its record (Zenodo) publishes.

    Raises:
        DigestMismatch: the archive is not the published one.
    """
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        _http_get(entry["url"], partial)
        partial.replace(target)
    record = {"entry": dict(entry), "md5": _verify(target, entry["md5"], "md5")}
    write_json(record, target.with_name(target.name + LM_RECORD_SUFFIX))
    return record


def fetch_lm(entry: Mapping[str, Any], target: Path, archive: Path | None = None) -> dict[str, Any]:
    """LM ``entry`` at ``target``: extracted from its ``member`` of the fetched ``archive``
    (:func:`fetch_archive`) for an entry with an ``archive``, else downloaded from its ``url``
    over HTTP once (a partial ``.part`` file is resumed with a ``Range`` request); verified
    against the lock, or for a first-use entry against the record of the first fetch.

    Raises:
        DigestMismatch: the file is not the pinned or recorded one.
    """
    record_path = target.with_name(target.name + LM_RECORD_SUFFIX)
    earlier = _read_record(record_path)
    expected = entry.get("sha256") or (earlier or {}).get("sha256")
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        if entry.get("archive"):
            if archive is None:
                raise ValueError(f"{entry['file']} comes from archive {entry['archive']}")
            with (
                zipfile.ZipFile(archive) as opened,
                opened.open(entry["member"]) as member,  # zipfile checks the member's CRC
                partial.open("wb") as handle,
            ):
                shutil.copyfileobj(member, handle, CHUNK)
        else:
            _http_get(entry["url"], partial)
        partial.replace(target)
    record = {"entry": dict(entry), "sha256": _verify(target, expected)}
    if record != earlier:
        write_json(record, record_path)
    return record


def _http_get(url: str, partial: Path) -> None:
    """``url`` into ``partial``, continuing after the bytes it already holds."""
    have = partial.stat().st_size if partial.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    with urllib.request.urlopen(request, timeout=60) as response:
        mode = "ab" if have and response.status == 206 else "wb"
        with partial.open(mode) as handle:
            while block := response.read(CHUNK):
                handle.write(block)


def offline_environment() -> None:
    """Make this process (and every job it starts) refuse to download models."""
    os.environ.update(OFFLINE_VARIABLES)
