"""PathBench's n-gram LMs from a ZIP64 archive served by byte ranges on 127.0.0.1: the
directory read from the archive's end alone, per language the member PathBench's code opens
(the ``.arpa.bin`` beside an ``.arpa``), only its bytes downloaded, a corrupted one refused by
its CRC-32, a cut download continued by a new process, a missing member stopping before any
download, and a server that ignores ``Range`` falling back to the whole archive."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from unittest import mock

import pytest

from pathbench_flow import fetching
from pathbench_flow.fetching import lms
from pathbench_flow.fetching.ziparchive import LOCAL, TAIL_BYTES
from pathbench_flow.neural import model_tracks, models
from pathbench_flow.neural.lm import opened_lm_file
from pathbench_flow.testing.hub_standin import byte_range

BINARY = "lms/wiki_aa_token.arpa.bin"
ARPA = "lms/wiki_aa_token.arpa"
ONLY_ARPA = "lms/wiki_bb_token.arpa"
OTHER = "lms/wiki_cc_token.txt"
FILLERS = 1500
"""Small members enough for the central directory (~90 bytes an entry) to outgrow the tail
read with the end records, so it is read by a range of its own, as the real one (a few MB)."""


@dataclass
class Server:
    """Serves ``archive`` at ``/lms.zip`` with ``Range`` (``a-b`` and ``-n``), unless
    ``ranges`` is off; the first answer starting at byte ``cut_at`` stops after ``cut``
    bytes, as a dropped connection. Each request's Range header is logged in ``requests``."""

    archive: Path
    ranges: bool = True
    cut_at: int | None = None
    cut: int = 0
    requests: list[str | None] = field(default_factory=list)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/lms.zip"

    def start(self) -> Server:
        served = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return

            def do_GET(self) -> None:  # noqa: N802
                served._answer(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def ranges_asked(self) -> list[tuple[int, int]]:
        """The ``[first, last]`` byte ranges asked for (a suffix range by its bytes)."""
        size = self.archive.stat().st_size
        return [_span(wanted, size) for wanted in self.requests if wanted]

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        wanted = handler.headers.get("Range")
        self.requests.append(wanted)
        data = self.archive.read_bytes()
        first, last = _span(wanted, len(data)) if wanted and self.ranges else (0, len(data) - 1)
        payload = data[first : last + 1]
        handler.send_response(206 if wanted and self.ranges else 200)
        if wanted and self.ranges:
            handler.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        if first == self.cut_at:
            self.cut_at = None
            payload = payload[: self.cut]
            handler.close_connection = True
        handler.wfile.write(payload)


def _span(wanted: str, size: int) -> tuple[int, int]:
    """The ``[first, last]`` bytes of ``wanted``, as ``Content-Range`` names them."""
    start, end = byte_range(wanted, size)
    return start, end - 1


def build_archive(path: Path, corrupt: str | None = None) -> dict[str, bytes]:
    """A ZIP64 archive at ``path`` (every offset and size in its ZIP64 records, as in the
    35 GB one) holding two LMs for ``aa`` (the binary stored, as kenlm binaries are, the ARPA
    deflated), an ARPA only for ``bb``, a text for ``cc`` and fillers; ``corrupt``: a member
    whose stored bytes are changed after its CRC was written. Returns name → content."""
    rng = random.Random(0)
    words = [f"w{rng.randrange(10**6)}" for _ in range(40_000)]
    contents = {
        BINARY: rng.randbytes(300_000),
        ARPA: " ".join(words).encode(),
        ONLY_ARPA: " ".join(reversed(words)).encode(),
        OTHER: b"not an LM",
    }
    with mock.patch.object(zipfile, "ZIP64_LIMIT", 64), zipfile.ZipFile(path, "w") as archive:
        for name, content in contents.items():
            method = zipfile.ZIP_STORED if name == BINARY else zipfile.ZIP_DEFLATED
            archive.writestr(name, content, compress_type=method)
        for index in range(FILLERS):
            archive.writestr(f"other/filler_{index:04d}.txt", b"x")
    data = path.read_bytes()
    assert b"PK\6\6" in data and b"PK\6\7" in data  # the ZIP64 end record and its locator
    if corrupt is not None:
        at = data.index(contents[corrupt])
        path.write_bytes(data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
    return contents


@pytest.fixture
def archive(tmp_path) -> tuple[Path, dict[str, bytes]]:
    path = tmp_path / "served" / "lms.zip"
    path.parent.mkdir()
    return path, build_archive(path)


@pytest.fixture
def server(archive) -> Iterator[Server]:
    running = Server(archive[0]).start()
    yield running
    running.stop()


def lm(language: str) -> dict[str, str]:
    return {"language": language, "path": f"lms/wiki_{language}_token.arpa", "archive": "lms.zip"}


def archive_entry(server: Server, **pins: object) -> dict[str, object]:
    md5 = hashlib.md5(server.archive.read_bytes()).hexdigest()
    return {"file": "lms.zip", "url": server.url, "md5": md5} | pins


def member_spans(path: Path) -> dict[str, tuple[int, int]]:
    """Each member's bytes in the archive, local header to compressed data."""
    with zipfile.ZipFile(path) as opened:
        infos = opened.infolist()
    data = path.read_bytes()
    spans = {}
    for info in infos:
        name_length, extra_length = LOCAL.unpack_from(data, info.header_offset)[9:11]
        end = info.header_offset + LOCAL.size + name_length + extra_length + info.compress_size
        spans[info.filename] = (info.header_offset, end - 1)
    return spans


def test_the_directory_is_read_from_the_archive_end_alone(server, tmp_path):
    record = lms.read_directory(archive_entry(server), tmp_path / "fetched")
    with zipfile.ZipFile(server.archive) as opened:
        expected = [
            (i.filename, i.file_size, i.compress_size, f"{i.CRC:08x}", i.compress_type)
            for i in opened.infolist()
        ]
        directory_start = opened.start_dir
    read = [
        (m["name"], m["size"], m["compressed_size"], m["crc32"], m["method"])
        for m in record["members"]
    ]
    assert read == expected and record["ranges"] is True
    size = server.archive.stat().st_size
    assert record["size"] == size and directory_start < size - TAIL_BYTES
    # the tail with the end records, then the central directory, which starts before it:
    # nothing before the directory
    asked = server.ranges_asked()
    assert asked[0] == (size - TAIL_BYTES, size - 1) and asked[1][0] == directory_start
    assert len(asked) == len(server.requests) == 2
    assert record == lms.read_record(lms.directory_path(tmp_path / "fetched", "lms.zip"))


FORCED = pytest.mark.parametrize("forced", [False, True], ids=["record kept", "forced rerun"])
"""Fetching again with the record kept, or deleted as Snakemake deletes a job's output before
it reruns the job (``--forcerun``, a changed parameter): first-use pins hold either way."""


@FORCED
def test_a_changed_directory_or_pinned_member_stops_the_fetch(server, archive, tmp_path, forced):
    root = tmp_path / "fetched"
    record_path = lms.directory_path(root, "lms.zip")
    entry = archive_entry(server)

    def read_again(locked: dict[str, object]) -> dict[str, object]:
        if forced:
            record_path.unlink(missing_ok=True)
        return lms.read_directory(locked, root)

    first = lms.read_directory(entry, root)
    binary = next(m for m in first["members"] if m["name"] == BINARY)
    pinned = {k: binary[k] for k in ("name", "size", "compressed_size", "crc32")}
    with pytest.raises(fetching.DigestMismatch, match="crc32 differ"):
        read_again(entry | {"members": [pinned | {"crc32": "00000000"}]})
    assert read_again(entry | {"members": [pinned]}) == first
    with zipfile.ZipFile(archive[0], "a") as changed:
        changed.writestr("lms/wiki_dd_token.arpa", archive[1][ARPA][:10])
    with pytest.raises(fetching.DigestMismatch, match="wiki_dd_token.arpa") as caught:
        read_again(entry)  # the lock is unchanged, the archive served is not
    assert "lms.zip" in str(caught.value)
    # a lock naming the changed archive (its MD5) names another directory, pinned anew
    assert read_again(archive_entry(server))["members"] != first["members"]


@FORCED
def test_a_first_use_member_changed_on_disk_is_refused(server, tmp_path, forced):
    """The member's SHA-256 is pinned on first use (the lock pins none for ``aa``); a fetch
    again finds the fetched file changed (the served bytes would also fail the directory's
    CRC-32; a file on disk is checked by its pin only)."""
    root = tmp_path / "fetched"
    entry = archive_entry(server)
    lms.read_directory(entry, root)
    named = lms.lm_path(root, lm("aa"))
    record_path = named.with_name(named.name + fetching.LM_RECORD_SUFFIX)
    first = lms.fetch_lm(lm("aa"), entry, root)
    if forced:  # an unchanged rerun gives the same record
        record_path.unlink()
        assert lms.fetch_lm(lm("aa"), entry, root) == first
        record_path.unlink()
    fetched = root / BINARY
    fetched.write_bytes(fetched.read_bytes()[:-1] + b"\0")
    with pytest.raises(fetching.DigestMismatch, match=first["sha256"]) as caught:
        lms.fetch_lm(lm("aa"), entry, root)
    assert f"{fetched}:" in str(caught.value)
    assert fetched.with_name(fetched.name + ".rejected").exists() and not fetched.exists()


def test_each_language_gets_the_member_pathbench_opens_and_only_its_bytes(
    server, archive, tmp_path, monkeypatch
):
    root = tmp_path / "fetched"
    entry = archive_entry(server)
    lms.read_directory(entry, root)
    directory_requests = len(server.requests)
    named = {language: lms.lm_path(root, lm(language)) for language in ("aa", "bb")}
    planned = {}
    for language, path in named.items():
        identity = lms.lm_identity(lm(language), entry)
        monkeypatch.setitem(models.PLANNED_FETCHES, str(path.resolve()), identity)
        planned[language] = model_tracks.lm_identity(path)
        assert planned[language] == identity and entry["md5"] in identity
    binary = lms.fetch_lm(lm("aa"), entry, root)
    arpa = lms.fetch_lm(lm("bb"), entry, root)
    contents = archive[1]
    assert binary["file"] == "wiki_aa_token.arpa.bin" and arpa["file"] == "wiki_bb_token.arpa"
    assert binary["member"]["size"] == len(contents[BINARY])
    assert binary["sha256"] == hashlib.sha256(contents[BINARY]).hexdigest()
    assert opened_lm_file(named["aa"]).read_bytes() == contents[BINARY]
    assert not named["aa"].exists()  # the ARPA beside it is not fetched: PathBench opens the .bin
    assert opened_lm_file(named["bb"]) == named["bb"]
    assert named["bb"].read_bytes() == contents[ONLY_ARPA]
    assert {p.name for p in (root / "lms").iterdir()} == {
        "wiki_aa_token.arpa.bin",
        "wiki_aa_token.arpa.fetched.json",
        "wiki_aa_token.arpa.fetched.first-use.json",  # its SHA-256, kept on a forced rerun
        "wiki_bb_token.arpa",
        "wiki_bb_token.arpa.fetched.json",
        "wiki_bb_token.arpa.fetched.first-use.json",
    }
    # each member's local header, then its compressed bytes: nothing of the others
    spans = member_spans(server.archive)
    asked = server.ranges_asked()[directory_requests:]
    assert len(asked) == 4
    for first, last in asked:
        inside = [name for name, (a, b) in spans.items() if a <= first and last <= b]
        assert inside in ([BINARY], [ONLY_ARPA]), (first, last)
    assert {asked[1][1], asked[3][1]} == {spans[BINARY][1], spans[ONLY_ARPA][1]}
    # the identity is the planned one after the fetch, and a second fetch asks nothing
    assert {language: model_tracks.lm_identity(path) for language, path in named.items()} == planned
    assert lms.fetch_lm(lm("aa"), entry, root) == binary
    assert len(server.requests) == directory_requests + 4


def test_a_corrupted_member_is_refused_by_its_crc(tmp_path):
    path = tmp_path / "lms.zip"
    build_archive(path, corrupt=BINARY)
    server = Server(path).start()
    try:
        root = tmp_path / "fetched"
        entry = archive_entry(server)
        lms.read_directory(entry, root)
        with pytest.raises(fetching.DigestMismatch, match="CRC-32") as caught:
            lms.fetch_lm(lm("aa"), entry, root)
    finally:
        server.stop()
    assert BINARY in str(caught.value)
    on_disk = {p.name for p in (root / "lms").iterdir()}
    assert on_disk == {"wiki_aa_token.arpa.bin.rejected"}  # nothing PathBench's code opens


def test_a_member_download_cut_off_is_continued_by_a_new_process(server, archive, tmp_path):
    root = tmp_path / "fetched"
    entry = archive_entry(server)
    lms.read_directory(entry, root)
    header_end = member_spans(server.archive)[BINARY]
    with zipfile.ZipFile(server.archive) as opened:
        compressed = opened.getinfo(BINARY).compress_size
    data_start = header_end[1] - compressed + 1
    server.cut_at, server.cut = data_start, 100_000
    with pytest.raises(ConnectionError, match="100000 of 300000 bytes"):
        lms.fetch_lm(lm("aa"), entry, root)
    partial = root / "lms" / "wiki_aa_token.arpa.bin.part"
    assert partial.stat().st_size == 100_000
    assert not (root / "lms" / "wiki_aa_token.arpa.bin").exists()
    code = (
        "from pathbench_flow.fetching import lms\n"
        f"lms.fetch_lm({lm('aa')!r}, {entry!r}, {str(root)!r})\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert server.requests[-1] == f"bytes={data_start + 100_000}-{header_end[1]}"
    assert (root / "lms" / "wiki_aa_token.arpa.bin").read_bytes() == archive[1][BINARY]
    assert not partial.exists()


def test_a_language_without_its_member_stops_before_any_member_is_downloaded(server, tmp_path):
    root = tmp_path / "fetched"
    entry = archive_entry(server)
    lms.read_directory(entry, root)
    asked = len(server.requests)
    with pytest.raises(lms.MissingMember) as caught:
        lms.fetch_lm(lm("cc"), entry, root)
    message = str(caught.value)
    assert "lms/wiki_cc_token.arpa.bin or lms/wiki_cc_token.arpa" in message
    assert f"that language: {OTHER};" in message and ONLY_ARPA in message and BINARY in message
    assert len(server.requests) == asked
    assert not (root / "lms").exists()


def test_a_server_ignoring_range_gets_the_whole_archive_verified_by_md5(server, tmp_path):
    server.ranges = False
    root = tmp_path / "fetched"
    entry = archive_entry(server)
    with pytest.raises(fetching.DigestMismatch, match=entry["md5"]):
        lms.read_directory(entry | {"md5": "0" * 32}, root)
    assert (root / "archives" / "lms.zip.rejected").exists()
    record = lms.read_directory(entry, root)
    assert record["ranges"] is False
    assert server.requests == [f"bytes=-{TAIL_BYTES}"] * 2
    assert lms.fetch_lm(lm("bb"), entry, root)["file"] == "wiki_bb_token.arpa"
    assert len(server.requests) == 2  # the members come from the downloaded archive
    assert (root / "lms" / "wiki_bb_token.arpa").read_bytes().startswith(b"w")
