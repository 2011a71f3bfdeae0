"""PathBench's n-gram LMs, fetched as PathBench's code opens them, from the byte ranges of
Zenodo's ``lms.zip`` that hold them.

PathBench's Double ASR and DArtP name one path per language in a ``lms/`` folder (the lock's
``lms`` entries: ``lms/wiki_en_token.arpa``, ``lms/wiki_es_token.arpa.bin``, ...) and open
``<path>.bin`` instead of a ``.arpa`` path wherever that exists
(:func:`pathbench_flow.neural.lm.opened_lm_file`). With the archive's members in that folder,
English is decoded with ``lms/wiki_en_token.arpa.bin`` (a public record gives it as a member):
so the fetch picks, per language, the member PathBench would open, and writes it under its own
name beside the named path, which stays what the evaluators are given.

The 35 GB archive is never downloaded whole when its server answers ``Range`` requests:
:func:`read_directory` (rule ``fetch_archive``) reads its end records and central directory
and records every member (:data:`DIRECTORY_SUFFIX`), pinned on first use; :func:`fetch_lm`
(rule ``fetch_lm``) downloads the chosen member's local header and compressed bytes (into a
``.part`` file a later process continues), inflates them and checks the directory's CRC-32
and the SHA-256 the lock or the first fetch pins. A server that ignores ``Range`` gets the
archive downloaded whole and verified by the MD5 its record publishes, members then read from
the local copy. What the first fetch pins (the directory, a member's SHA-256) is kept beside
the record, not in it (:func:`~pathbench_flow.fetching.pinned.pins_path`), so that a rerun
that deletes the record still verifies against it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pathbench_flow.common.io import write_json
from pathbench_flow.fetching import ranges
from pathbench_flow.fetching.pinned import (
    CHUNK,
    LOCK_FILE,
    DigestMismatch,
    first_use_pins,
    keep_first_use_pins,
    lock,
    pins_path,
    read_record,
    reject,
    verify,
)
from pathbench_flow.fetching.ziparchive import (
    TAIL_BYTES,
    ArchiveError,
    Member,
    check_method,
    data_offset,
    inflate,
    local_header_bytes,
    locate_directory,
    read_members,
)
from pathbench_flow.neural.lm import BINARY_SUFFIX
from pathbench_flow.neural.models import LM_RECORD_SUFFIX

LMS_FOLDER = "lms"
"""PathBench's ``lms_dir``: its named paths, and the archive's members, lie in it."""
DIRECTORY_SUFFIX = ".directory.json"
"""Beside a fetched archive's name ``a``: ``a.directory.json``, its members."""
Reader = Callable[[int, int], bytes]
"""Bytes ``first`` to ``last`` (inclusive) of an archive."""


class MissingMember(LookupError):
    """The archive holds nothing PathBench would open for a language."""


def lm_entry(file: str, lock_file: str | Path = LOCK_FILE) -> dict[str, Any]:
    """The lock's LM entry whose named path is ``lms/<file>``."""
    path = f"{LMS_FOLDER}/{file}"
    found = next((lm for lm in lock(lock_file)["lms"] if lm["path"] == path), None)
    if found is None:
        raise ValueError(f"{path} is no LM path of {lock_file}")
    return found


def pathbench_lms(lock_file: str | Path = LOCK_FILE) -> dict[str, dict[str, Any]]:
    """Language → the lock's entry of the path PathBench names for it."""
    return {lm["language"]: lm for lm in lock(lock_file)["lms"]}


def archive_entry(name: str, lock_file: str | Path = LOCK_FILE) -> dict[str, Any]:
    """The lock's entry of archive ``name``."""
    found = next((a for a in lock(lock_file)["archives"] if a["file"] == name), None)
    if found is None:
        raise ValueError(f"{name!r} is no archive of {lock_file}")
    return found


def lm_path(root: str | Path, entry: Mapping[str, Any]) -> Path:
    """PathBench's named path of LM ``entry`` under the fetch directory ``root``."""
    return Path(root) / entry["path"]


def archive_path(root: str | Path, name: str) -> Path:
    """Where archive ``name`` is downloaded whole, from a server that ignores ``Range``."""
    return Path(root) / "archives" / name


def directory_path(root: str | Path, name: str) -> Path:
    """The record of archive ``name``'s members (rule ``fetch_archive``'s output)."""
    return archive_path(root, name + DIRECTORY_SUFFIX)


def lm_directory(root: str | Path, file: str, lock_file: str | Path = LOCK_FILE) -> Path:
    """The directory record the fetch of LM path ``lms/<file>`` reads (its input)."""
    return directory_path(root, lm_entry(file, lock_file)["archive"])


def lm_identity(entry: Mapping[str, Any], archive: Mapping[str, Any]) -> str:
    """What the fetched LM of ``entry`` is, known before the fetch and the same after: the
    named path within the archive the lock pins by its MD5 determines the member opened."""
    return f"fetched {entry['path']} of {archive['file']} (MD5 {archive['md5']})"


def candidates(path: str) -> list[str]:
    """The members PathBench's code would open for its named ``path``, first choice first."""
    return [path + BINARY_SUFFIX, path] if path.endswith(".arpa") else [path]


def _local_reader(archive: Path) -> Reader:
    def read(first: int, last: int) -> bytes:
        with archive.open("rb") as handle:
            handle.seek(first)
            return handle.read(last - first + 1)

    return read


def _members(read: Reader, tail: bytes, size: int) -> list[Member]:
    """Every member of an archive of ``size`` bytes ending in ``tail``; the central directory
    is read by ``read`` unless the tail holds it."""
    directory = locate_directory(tail, size)
    before_tail = size - len(tail)
    if directory.offset >= before_tail:
        start = directory.offset - before_tail
        central = tail[start : start + directory.size]
    else:
        central = read(directory.offset, directory.offset + directory.size - 1)
    return read_members(central, directory.entries)


def _check_pins(archive: Mapping[str, Any], members: list[Member], size: int) -> None:
    """What public records say of the archive (its size, its known members) holds."""
    if archive.get("size") not in (None, size):
        raise DigestMismatch(f"{archive['file']}: {size} bytes, the lock says {archive['size']}")
    found = {member.name: member.as_record() for member in members}
    for known in archive.get("members", []):
        listed = found.get(known["name"], {})
        differing = [
            key for key in ("size", "compressed_size", "crc32") if listed.get(key) != known[key]
        ]
        if differing:
            raise DigestMismatch(
                f"{archive['file']}: member {known['name']} is {listed or 'missing'} in its "
                f"directory, the lock pins {known} ({', '.join(differing)} differ)"
            )


def read_directory(archive: Mapping[str, Any], root: str | Path) -> dict[str, Any]:
    """Archive ``archive``'s members, read from its end by ``Range`` requests (its whole
    download if the server ignores them) and recorded beside the fetch; a directory that
    differs from what the lock pins, or from the first fetch's of the same archive (its URL,
    MD5 and size in the lock), stops the fetch.

    Raises:
        DigestMismatch: the directory is not the one the lock or the first fetch pins.
    """
    record_path = directory_path(root, archive["file"])
    local = archive_path(root, archive["file"])
    ranged = not local.is_file()
    if ranged:
        local.parent.mkdir(parents=True, exist_ok=True)
        with ranges.open_range(archive["url"], f"-{TAIL_BYTES}") as response:
            ranged = response.status == 206
            if ranged:
                size = ranges.content_range(response)[2]
                tail = response.read()
            else:  # the server ignores Range: this is the whole archive
                partial = local.with_name(local.name + ".part")
                ranges.save(response, partial, "wb")
                partial.replace(local)
    if ranged:
        members = _members(lambda a, b: ranges.read_range(archive["url"], a, b), tail, size)
    else:
        verify(local, archive["md5"], "md5")
        size = local.stat().st_size
        read = _local_reader(local)
        members = _members(read, read(max(0, size - TAIL_BYTES), size - 1), size)
    _check_pins(archive, members, size)
    record = {
        "archive": archive["file"],
        "url": archive["url"],
        "size": size,
        "ranges": ranged,
        "members": [member.as_record() for member in members],
    }
    key = {name: archive.get(name) for name in ("url", "md5", "size")}
    pinned = first_use_pins(record_path, key)
    if pinned is not None and pinned != record["members"]:
        changed = sorted(
            {json.dumps(m, sort_keys=True) for m in pinned}
            ^ {json.dumps(m, sort_keys=True) for m in record["members"]}
        )
        raise DigestMismatch(
            f"{archive['file']}: its directory differs from the one first fetched "
            f"({pins_path(record_path)}): {'; '.join(changed[:6])}"
        )
    keep_first_use_pins(record_path, key, record["members"])
    write_json(record, record_path)
    return record


def choose_member(entry: Mapping[str, Any], members: list[Member]) -> Member:
    """The member PathBench's code opens for ``entry``'s named path: the ``.arpa.bin`` over
    the ``.arpa`` where both exist.

    Raises:
        MissingMember: neither is a member; the message lists what the directory holds for
            the language and in the folder.
    """
    by_name = {member.name: member for member in members}
    for name in candidates(entry["path"]):
        if name in by_name:
            check_method(by_name[name])
            return by_name[name]
    folder, _, file = entry["path"].rpartition("/")
    stem = file.split(".")[0]
    related = sorted(n for n in by_name if n.rpartition("/")[2].startswith(stem))
    beside = sorted(n for n in by_name if n.rpartition("/")[0] == folder)
    raise MissingMember(
        f"the archive holds no {' or '.join(candidates(entry['path']))}, what PathBench's code "
        f"opens for language {entry['language']!r}; it holds for that language: "
        f"{', '.join(related) or 'nothing'}; in {folder}/: {', '.join(beside) or 'nothing'}"
    )


def _copy_range(archive: Path, start: int, length: int, partial: Path) -> None:
    """``length`` bytes of ``archive`` from ``start`` into ``partial``, block by block (a
    member is up to 8.6 GB compressed)."""
    with archive.open("rb") as source, partial.open("wb") as sink:
        source.seek(start)
        while length > 0 and (block := source.read(min(CHUNK, length))):
            sink.write(block)
            length -= len(block)


def _compressed_bytes(
    directory: Mapping[str, Any], member: Member, local: Path, partial: Path
) -> None:
    """``member``'s compressed bytes into ``partial``: by ``Range`` (continuing what it holds)
    or from the archive downloaded whole."""
    read = (
        (lambda a, b: ranges.read_range(directory["url"], a, b))
        if directory["ranges"]
        else _local_reader(local)
    )
    start = data_offset(read(member.offset, member.offset + local_header_bytes(member) - 1), member)
    if partial.exists() and partial.stat().st_size > member.compressed_size:
        partial.unlink()  # not this member's bytes
    if member.compressed_size == 0:
        partial.touch()
    elif directory["ranges"]:
        if not partial.exists() or partial.stat().st_size < member.compressed_size:
            ranges.download(directory["url"], partial, start, start + member.compressed_size - 1)
    else:
        _copy_range(local, start, member.compressed_size, partial)
    if partial.stat().st_size != member.compressed_size:
        raise ConnectionError(
            f"{member.name}: {partial.stat().st_size} of {member.compressed_size} bytes arrived"
        )


def _extract(member: Member, partial: Path, file: Path, pinned: str | None) -> str:
    """Inflate ``partial`` into ``file`` if its CRC-32 (and SHA-256, if ``pinned``) match;
    else move the inflated bytes aside, drop ``partial`` and raise. Returns the SHA-256."""
    inflating = file.with_name(file.name + ".inflating")
    try:
        crc, sha256 = inflate(partial, member, inflating)
    except ArchiveError as error:
        sha256, problem = None, str(error)
    else:
        problem = None
        if crc != member.crc32:
            problem = f"CRC-32 {crc}, but the archive's directory gives {member.crc32}"
        elif pinned is not None and sha256 != pinned:
            problem = f"SHA-256 {sha256}, but the lock or the first fetch pins {pinned}"
    if problem is not None:
        partial.unlink()  # its bytes are not the member's: the next fetch downloads anew
        raise reject(
            inflating, file.with_name(file.name + ".rejected"), f"{member.name}: {problem}"
        )
    inflating.replace(file)
    partial.unlink()
    return str(sha256)


def fetch_lm(
    entry: Mapping[str, Any], archive: Mapping[str, Any], root: str | Path
) -> dict[str, Any]:
    """LM ``entry`` under ``root``: the member PathBench opens for it, from the archive whose
    directory :func:`read_directory` recorded, written under its own name beside the named
    path, with its record (:data:`~pathbench_flow.neural.models.LM_RECORD_SUFFIX`) beside that:
    ``file`` (the chosen member's name on disk), ``member`` (its directory entry) and
    ``sha256``.

    Raises:
        MissingMember: the archive holds nothing PathBench would open for the language.
        DigestMismatch: the member's CRC-32 is not the directory's, or its SHA-256 not the
            lock's or, else, the first fetch's of the same directory entry.
    """
    directory = read_record(directory_path(root, archive["file"]))
    if directory is None:
        raise FileNotFoundError(
            f"{directory_path(root, archive['file'])}: read the directory first"
        )
    member = choose_member(entry, [Member(**m) for m in directory["members"]])
    named = lm_path(root, entry)
    file = Path(root) / member.name
    preferred = candidates(entry["path"])
    shadowing = [n for n in preferred[: preferred.index(member.name)] if (Path(root) / n).exists()]
    if shadowing:
        raise FileExistsError(
            f"{Path(root) / shadowing[0]} is no member of the archive, but PathBench's code "
            f"would open it instead of {member.name}: remove it"
        )
    record_path = named.with_name(named.name + LM_RECORD_SUFFIX)
    known = {m["name"]: m for m in archive.get("members", [])}
    pinned = known.get(member.name, {}).get("sha256") or first_use_pins(
        record_path, member.as_record()
    )
    if file.is_file():
        sha256 = verify(file, pinned)
    else:
        file.parent.mkdir(parents=True, exist_ok=True)
        partial = file.with_name(file.name + ".part")
        _compressed_bytes(directory, member, archive_path(root, archive["file"]), partial)
        sha256 = _extract(member, partial, file, pinned)
    record = {
        "language": entry["language"],
        "path": entry["path"],
        "archive": archive["file"],
        "file": file.name,
        "member": member.as_record(),
        "sha256": sha256,
        "identity": lm_identity(entry, archive),
    }
    keep_first_use_pins(record_path, member.as_record(), sha256)
    if record != read_record(record_path):
        write_json(record, record_path)
    return record
