"""HTTP byte ranges for the fetches: a small range read whole, a large one into a ``.part``
file that a later process continues (RFC 9110 section 14: ``Range``, ``206``,
``Content-Range``)."""

from __future__ import annotations

import re
import urllib.request
from http.client import HTTPResponse
from pathlib import Path

CHUNK = 1 << 20
TIMEOUT = 60
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")


class RangeIgnored(RuntimeError):
    """The server answered a ``Range`` request with the whole file (``200``)."""


def open_range(url: str, byte_range: str | None) -> HTTPResponse:
    """The response to a GET of ``url`` asking for ``byte_range`` (``a-b``, ``a-`` or
    ``-n``, the last ``n`` bytes), or for the whole file."""
    headers = {"Range": f"bytes={byte_range}"} if byte_range else {}
    return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT)


def content_range(response: HTTPResponse) -> tuple[int, int, int]:
    """The first and last byte a ``206`` answer holds, and the whole file's size."""
    found = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", ""))
    if response.status != 206 or found is None:
        raise RangeIgnored(f"status {response.status}, Content-Range {found and found[0]!r}")
    first, last, total = (int(group) for group in found.groups())
    return first, last, total


def read_range(url: str, first: int, last: int) -> bytes:
    """Bytes ``first`` to ``last`` (inclusive) of ``url``."""
    with open_range(url, f"{first}-{last}") as response:
        if content_range(response)[:2] != (first, last):
            raise RangeIgnored(f"asked for bytes {first}-{last} of {url}, got another range")
        data = response.read()
    if len(data) != last - first + 1:
        raise ConnectionError(f"bytes {first}-{last} of {url}: {len(data)} arrived")
    return data


def save(response: HTTPResponse, partial: Path, mode: str) -> None:
    """The body of ``response`` written (``wb``) or appended (``ab``) to ``partial`` block by
    block, so a dropped connection leaves every byte that arrived."""
    with partial.open(mode) as handle:
        while block := response.read(CHUNK):
            handle.write(block)


def download(url: str, partial: Path, first: int = 0, last: int | None = None) -> None:
    """Bytes ``first`` to ``last`` (the end if None) of ``url`` into ``partial``, continuing
    after the bytes it already holds. Asking the whole file, a ``200`` starts it again;
    asking part of it, a ``200`` raises :class:`RangeIgnored`."""
    have = partial.stat().st_size if partial.exists() else 0
    start = first + have
    wanted = f"{start}-{'' if last is None else last}" if start else None
    with open_range(url, wanted) as response:
        if response.status == 206:
            if content_range(response)[0] != start:
                raise RangeIgnored(f"asked for {url} from byte {start}, got another range")
            save(response, partial, "ab")
        elif first == 0 and last is None:
            save(response, partial, "wb")
        else:
            raise RangeIgnored(f"asked for bytes {wanted} of {url}, the server sent all of it")
