"""The lock and its model entries, digest checks of fetched files and their records, model
downloads at a pinned commit, and the offline environment of every other job.

The lock shipped with the package (:data:`LOCK_FILE`; config ``fetch.lock`` names another, a
test's or a mirror's) names, per checkpoint, its hub id, a full commit of its repository and
the SHA-256 of the weights file fetched (the LFS object id the hub publishes); per language,
the LM path PathBench's code names and the archive it comes in; per archive its URL, the MD5
and size its record publishes and what public records give of its members. An entry whose
digest no public record gives is ``"pinned": "first-use"``: the first fetch pins what it got
in a file beside its record (:func:`pins_path`), not in the record, which is the fetch rule's
output and so deleted by Snakemake before every rerun; every later fetch verifies against
those pins.

Models come through huggingface_hub's own ``hf_hub_download`` at the pinned commit: a dropped
connection is resumed by its retry with a ``Range`` request, but a fetch process that is killed
starts the file again (huggingface_hub 2.4 downloads into a file unique to each process and
never reads another's; :func:`fetch_model` removes such leftovers). LMs come from byte ranges
of their archive (:mod:`pathbench_flow.fetching.lms`). A digest that differs stops the fetch,
naming the file, the expected and the actual digest, and the file is moved aside, never used.

Only the fetch rules (local rules, on the host with internet) call this module's downloads;
every other job runs with ``HF_HUB_OFFLINE=1`` (:data:`OFFLINE_VARIABLES`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pathbench_flow.common.io import write_json
from pathbench_flow.neural.models import RECORD_FILE

LOCK_FILE = Path(__file__).with_name("pathbench_models.lock.json")
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
PINS_SUFFIX = ".first-use.json"
"""Beside a fetch's record ``r.json``: ``r.first-use.json``, its first-use pins
(:func:`pins_path`)."""


class DigestMismatch(RuntimeError):
    """A fetched file is not the pinned one."""


@cache
def lock(path: str | Path = LOCK_FILE) -> dict[str, Any]:
    """The lock in ``path``: by default the shipped one of PathBench's model set."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def model_entry(hub_id: str, lock_file: str | Path = LOCK_FILE) -> dict[str, Any] | None:
    """The lock's entry of checkpoint ``hub_id``, or None if the lock does not name it."""
    return next((m for m in lock(lock_file)["models"] if m["id"] == hub_id), None)


def model_directory(root: str | Path, hub_id: str) -> Path:
    """Where checkpoint ``hub_id`` is fetched to under ``root`` (config ``fetch.directory``)."""
    return Path(root) / "models" / hub_id.replace("/", "--")


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


def reject(path: Path, rejected: Path, problem: str) -> DigestMismatch:
    """The error refusing the download at ``path``, moved to ``rejected`` so nothing uses it."""
    path.replace(rejected)
    return DigestMismatch(
        f"{problem}; the file is moved to {rejected.name} and not used (a changed or "
        "corrupted download: delete it and fetch again, or check the lock)"
    )


def verify(path: Path, expected: str | None, algorithm: str = "sha256") -> str:
    """The file's digest; a mismatch with ``expected`` moves the file aside and raises."""
    actual = file_digest(path, algorithm)
    if expected is not None and actual != expected:
        problem = (
            f"{path}: {algorithm.upper()} {actual}, but the lock or first fetch pins {expected}"
        )
        raise reject(path, path.with_name(path.name + ".rejected"), problem)
    return actual


def read_record(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def pins_path(record: Path) -> Path:
    """Where the first-use pins of the fetch whose record (rule output) is ``record`` are kept:
    ``<record stem>.first-use.json`` beside it (``fetched.lock.first-use.json`` in a model's
    folder, ``lms/wiki_nl_token.arpa.fetched.first-use.json``,
    ``archives/lms.zip.directory.first-use.json``).

    Not in the record: Snakemake deletes a job's outputs before it reruns the job
    (``--forceall``, ``--forcerun``, a changed parameter or code), so a fetch that kept its pins
    there would find none on a rerun and pin anew whatever the server or the disk then holds.
    No rule declares this file, and its name matches no rule's output, so Snakemake never
    deletes it. It lies beside the record so that it goes where the fetch directory goes and
    sorts next to the record it belongs to, one per record so that concurrent fetch jobs never
    write the same file; deleting it is how a changed file is accepted (as espeak-ng's lock
    beside its build, :data:`pathbench_flow.stages.espeak.LOCK_NAME`)."""
    return record.with_name(record.stem + PINS_SUFFIX)


def first_use_pins(record: Path, key: Any) -> Any:
    """What the first fetch of lock entry ``key`` pinned beside ``record``, or None.

    ``key`` (a JSON value) is what the lock says of the file a fetch should get: a checkpoint's
    :func:`fetched_identity` (its id, commit and weights digest), an archive's URL, MD5 and
    size, a member's directory entry. Pins hold for the key they were taken under only: a lock
    that changes it names another file, which its first fetch pins anew, while the pins of the
    earlier key are kept and hold again should the lock return to it."""
    kept = read_record(pins_path(record)) or {"first_use": []}
    return next((pin["pinned"] for pin in kept["first_use"] if pin["entry"] == key), None)


def keep_first_use_pins(record: Path, key: Any, pinned: Any) -> None:
    """Keep ``pinned`` (what a fetch got and verified) as the first fetch's pins of ``key``,
    unless ``key`` has pins already (which the fetch then matched). Called before the record is
    written, so that a record never exists without its pins."""
    path = pins_path(record)
    kept = read_record(path) or {"first_use": []}
    if all(pin["entry"] != key for pin in kept["first_use"]):
        write_json({"first_use": [*kept["first_use"], {"entry": key, "pinned": pinned}]}, path)


def fetch_model(entry: Mapping[str, Any], target: Path) -> dict[str, Any]:
    """Checkpoint ``entry`` in ``target``, at its pinned commit, every file verified.

    A complete earlier fetch of the same entry (its record, and every file it names) fetches
    nothing. The weights must match the lock's digest; every other file, and the weights of a
    first-use entry, the first fetch's pins (:func:`first_use_pins`).

    Raises:
        DigestMismatch: a file is not the pinned one.
    """
    record_path = target / RECORD_FILE
    identity = fetched_identity(entry)
    expected = dict(first_use_pins(record_path, identity) or {})
    if entry.get("sha256"):
        expected[entry["weights"]] = entry["sha256"]
    earlier = read_record(record_path)
    if (
        earlier is not None
        and earlier["identity"] == identity
        and all((target / name).is_file() for name in earlier["files"])
    ):
        files = {name: verify(target / name, expected.get(name)) for name in earlier["files"]}
    else:
        files = _download(entry, target, expected)
    keep_first_use_pins(record_path, identity, files)
    record = {"entry": dict(entry), "identity": identity, "files": files}
    if record != earlier:
        write_json(record, record_path)
    return record


def _download(
    entry: Mapping[str, Any], target: Path, expected: Mapping[str, str]
) -> dict[str, str]:
    """Each file of checkpoint ``entry`` the repository holds, into ``target``, verified
    against ``expected`` where it names the file: name → SHA-256."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import RemoteEntryNotFoundError

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
        files[name] = verify(target / name, expected.get(name))
    return files


def offline_environment() -> None:
    """Make this process (and every job it starts) refuse to download models."""
    os.environ.update(OFFLINE_VARIABLES)
