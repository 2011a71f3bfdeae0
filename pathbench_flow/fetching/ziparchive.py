"""A ZIP archive's directory and members read from byte ranges, not from a whole local file.

Zenodo's ``lms.zip`` is 35 GB, and PathBench opens one or two of its members per language:
its end records and central directory (a few MB at its end) say where each member lies, so a
fetch reads those, then each chosen member's local header and compressed bytes only. The
archive exceeds 4 GiB, so its offsets and the large members' sizes are in the ZIP64 records
(APPNOTE 4.3.14-4.3.15, and the ZIP64 extra field 4.5.3), which are read where present.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

END = struct.Struct("<4s4H2LH")
"""End of central directory record (signature ``PK\\5\\6``), without its comment."""
ZIP64_LOCATOR = struct.Struct("<4sLQL")
ZIP64_END = struct.Struct("<4sQ2H2L4Q")
CENTRAL = struct.Struct("<4s6H3L5H2L")
LOCAL = struct.Struct("<4s5H3L2H")
TAIL_BYTES = END.size + 0xFFFF + ZIP64_LOCATOR.size + ZIP64_END.size
"""The end of an archive that holds its end records whatever its comment's length."""
ZIP64_EXTRA = 0x0001
UTF8_FLAG = 0x800
STORED, DEFLATED = 0, 8
CHUNK = 1 << 20


class ArchiveError(RuntimeError):
    """The bytes are not the ZIP structure they should be."""


@dataclass(frozen=True)
class Member:
    """One central directory entry: what a fetch needs to find, inflate and check it."""

    name: str
    size: int
    compressed_size: int
    crc32: str
    """Eight lower-case hex digits, as published records quote it."""
    method: int
    offset: int
    """Of the member's local header in the archive."""

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Directory:
    """Where an archive's central directory lies, read from its end records."""

    offset: int
    size: int
    entries: int


def locate_directory(tail: bytes, archive_size: int) -> Directory:
    """The central directory of an archive of ``archive_size`` bytes whose last ``len(tail)``
    bytes are ``tail``: from its ZIP64 end record where the locator precedes the end record,
    else from the end record (a small archive)."""
    at = tail.rfind(b"PK\5\6")
    if at < 0:
        raise ArchiveError("no end of central directory record in the archive's last bytes")
    _, _, _, _, entries, size, offset, _ = END.unpack_from(tail, at)
    locator = at - ZIP64_LOCATOR.size
    if locator >= 0 and tail[locator : locator + 4] == b"PK\6\7":
        _, _, end64, _ = ZIP64_LOCATOR.unpack_from(tail, locator)
        start = end64 - (archive_size - len(tail))
        if start < 0 or tail[start : start + 4] != b"PK\6\6":
            raise ArchiveError(f"no ZIP64 end record at offset {end64}")
        fields = ZIP64_END.unpack_from(tail, start)
        entries, size, offset = fields[7], fields[8], fields[9]
    elif 0xFFFFFFFF in (size, offset) or entries == 0xFFFF:
        raise ArchiveError("the end record defers to a ZIP64 end record the archive lacks")
    return Directory(offset, size, entries)


def _zip64_values(extra: bytes, wanted: int) -> list[int]:
    """The first ``wanted`` 8-byte values of the ZIP64 extra field in ``extra``."""
    at = 0
    while at + 4 <= len(extra):
        kind, length = struct.unpack_from("<2H", extra, at)
        if kind == ZIP64_EXTRA:
            return list(struct.unpack_from(f"<{wanted}Q", extra, at + 4))
        at += 4 + length
    raise ArchiveError("a member's sizes defer to a ZIP64 extra field it lacks")


def read_members(directory: bytes, expected: int) -> list[Member]:
    """The entries of the central directory ``directory`` (which holds ``expected``)."""
    members: list[Member] = []
    at = 0
    while at < len(directory):
        fields = CENTRAL.unpack_from(directory, at)
        if fields[0] != b"PK\1\2":
            raise ArchiveError(f"no central directory entry at its byte {at}")
        flags, method, crc, compressed, size = fields[3], fields[4], fields[7], fields[8], fields[9]
        name_length, extra_length, comment_length, offset = (
            fields[10],
            fields[11],
            fields[12],
            fields[16],
        )
        name_end = at + CENTRAL.size + name_length
        raw_name = directory[at + CENTRAL.size : name_end]
        extra = directory[name_end : name_end + extra_length]
        deferred = [v for v in (size, compressed, offset) if v == 0xFFFFFFFF]
        values = iter(_zip64_values(extra, len(deferred)) if deferred else [])
        size = next(values) if size == 0xFFFFFFFF else size
        compressed = next(values) if compressed == 0xFFFFFFFF else compressed
        offset = next(values) if offset == 0xFFFFFFFF else offset
        name = raw_name.decode("utf-8" if flags & UTF8_FLAG else "cp437")
        members.append(Member(name, size, compressed, f"{crc:08x}", method, offset))
        at = name_end + extra_length + comment_length
    if len(members) != expected:
        raise ArchiveError(f"the central directory holds {len(members)} entries, not {expected}")
    return members


def local_header_bytes(member: Member) -> int:
    """How many bytes from a member's offset hold its local header up to its name (the
    extra field's length is read from them)."""
    return LOCAL.size + len(member.name.encode())


def data_offset(header: bytes, member: Member) -> int:
    """Where ``member``'s compressed bytes start, from the first
    :func:`local_header_bytes` of its local header."""
    fields = LOCAL.unpack_from(header)
    name_length, extra_length = fields[9], fields[10]
    if (
        fields[0] != b"PK\3\4"
        or header[LOCAL.size : LOCAL.size + name_length] != member.name.encode()
    ):
        raise ArchiveError(f"no local header of {member.name} at offset {member.offset}")
    return member.offset + LOCAL.size + name_length + extra_length


def check_method(member: Member) -> None:
    """Stop before a download that could not be inflated here."""
    if member.method not in (STORED, DEFLATED):
        raise ArchiveError(
            f"{member.name}: compression method {member.method} (only stored, 0, "
            "and deflate, 8, are read)"
        )


def inflate(compressed: Path, member: Member, target: Path) -> tuple[str, str]:
    """Write ``member`` from its ``compressed`` bytes to ``target``; its (CRC-32, SHA-256).

    Raises:
        ArchiveError: the bytes are no valid deflate stream of the member's size.
    """
    check_method(member)
    inflater = zlib.decompressobj(-zlib.MAX_WBITS) if member.method == DEFLATED else None
    crc, digest, written = 0, hashlib.sha256(), 0
    with compressed.open("rb") as source, target.open("wb") as sink:
        while block := source.read(CHUNK):
            try:
                data = inflater.decompress(block) if inflater else block
            except zlib.error as error:
                raise ArchiveError(
                    f"{member.name}: not a valid deflate stream ({error})"
                ) from error
            crc = zlib.crc32(data, crc)
            digest.update(data)
            written += len(data)
            sink.write(data)
    if written != member.size or (inflater is not None and not inflater.eof):
        raise ArchiveError(
            f"{member.name}: {written} bytes inflated, the directory says {member.size}"
        )
    return f"{crc:08x}", digest.hexdigest()
