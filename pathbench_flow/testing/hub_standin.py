"""A local stand-in for the Hugging Face hub and for Zenodo, on 127.0.0.1.

It answers what huggingface_hub's ``hf_hub_download`` asks (``file_download.py``): ``HEAD``
and ``GET /<repo id>/resolve/<revision>/<file>`` with ``X-Repo-Commit``, ``ETag``, and for
large (LFS) files ``X-Linked-Etag`` (the SHA-256) and ``X-Linked-Size``; a missing file is a
404 with ``X-Error-Code: EntryNotFound``, which the client turns into
``RemoteEntryNotFoundError``; ``Range`` (``a-b``, ``a-`` or the last ``-n`` bytes) gives a 206
with ``Content-Range``. Plain files (the LMs' archive) are served at ``/files/<name>`` with
``Range`` too. ``cut`` makes the first GET of a file stop after that many bytes, as a dropped
connection does, so resuming is exercised; ``stall`` makes it send that many bytes and then
hang (until :meth:`HubStandIn.stop`), as a download does whose process is then killed, so
resuming in another process is exercised.
Every request is logged in :attr:`HubStandIn.requests` as (method, path, Range header).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

LFS_BYTES = 10_000
"""Files from this size are served as the hub serves LFS files (a linked ETag and size)."""


@dataclass
class Repo:
    """A repository at one commit: its files are those of ``directory``."""

    commit: str
    directory: Path


@dataclass
class HubStandIn:
    repos: dict[str, Repo] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)
    cut: dict[str, int] = field(default_factory=dict)
    stall: dict[str, int] = field(default_factory=dict)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> HubStandIn:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return

            def do_HEAD(self) -> None:  # noqa: N802
                standin._answer(self, body=False)

            def do_GET(self) -> None:  # noqa: N802
                standin._answer(self, body=True)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # a stalled answer ends
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _locate(self, path: str) -> tuple[Path | None, dict[str, str]]:
        if path.startswith("/files/"):
            return self.files.get(path.removeprefix("/files/")), {}
        head, _, rest = path.lstrip("/").partition("/resolve/")
        repo = self.repos.get(head)
        revision, _, name = rest.partition("/")
        if repo is None or revision not in (repo.commit, "main"):
            return None, {"X-Error-Code": "RepoNotFound"}
        file = repo.directory / name
        headers = {"X-Repo-Commit": repo.commit}
        if not file.is_file():
            return None, headers | {"X-Error-Code": "EntryNotFound"}
        data = file.read_bytes()
        if len(data) >= LFS_BYTES:
            headers["X-Linked-Etag"] = f'"{hashlib.sha256(data).hexdigest()}"'
            headers["X-Linked-Size"] = str(len(data))
        headers["ETag"] = f'"{hashlib.sha1(data).hexdigest()}"'
        return file, headers

    def _answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        path = handler.path.split("?")[0]
        wanted = handler.headers.get("Range")
        self.requests.append((handler.command, path, wanted))
        file, headers = self._locate(path)
        if file is None:
            handler.send_response(404)
            for key, value in headers.items():
                handler.send_header(key, value)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        data = file.read_bytes()
        start, end = byte_range(wanted, len(data))
        handler.send_response(206 if wanted else 200)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Accept-Ranges", "bytes")
        if wanted:
            handler.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        handler.send_header("Content-Length", str(end - start))
        handler.end_headers()
        if not body:
            return
        payload = data[start:end]
        name = path.rsplit("/", 1)[-1]
        if name in self.cut:
            payload = payload[: self.cut.pop(name)]
        stalled = name in self.stall
        if stalled:
            payload = payload[: self.stall.pop(name)]
        handler.wfile.write(payload)
        handler.wfile.flush()
        if stalled:
            self._stopping.wait()
        if len(payload) < end - start:
            handler.close_connection = True


def byte_range(wanted: str | None, size: int) -> tuple[int, int]:
    """The bytes ``[start, end)`` a ``Range`` header asks for: ``bytes=a-b``, ``bytes=a-`` or
    ``bytes=-n`` (the last ``n``), or the whole file without one. Public for the other local
    servers of the tests, so that every stand-in reads a Range header one way."""
    if not wanted:
        return 0, size
    first, _, last = wanted.removeprefix("bytes=").partition("-")
    if not first:
        return max(0, size - int(last)), size
    return int(first), min(size, int(last) + 1) if last else size
