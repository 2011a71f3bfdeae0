#!/usr/bin/env python3
"""Refuse files over 1,000,000 bytes in the git index, unless the allowlist names them.

Every clone carries every version of a committed file for good, so a large file (a model, a
wheel, generated results) is caught before it lands rather than removed from history later.
Sizes are those of the blobs git stores for the index (what a commit records), not of the
working tree. Run it anywhere inside the repository it checks. The allowlist is
``.ci/large-files-allowlist`` at the repository's top: one path per line, and ``#`` starts a
comment (a line of its own, or after the path: the reason the file is committed).

Exit status: 0 clean, 1 files over the limit or a stale allowlist line, 2 git or the allowlist
could not be read.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

LIMIT = 1_000_000
ALLOWLIST = Path(".ci/large-files-allowlist")
GITLINK = "160000"  # a submodule's entry: a commit of another repository, not a blob here
COMMENT = re.compile(r"(^|\s+)#.*$")


class CheckError(Exception):
    """The check could not run; the message says what to do."""


def git(root: Path | None, *args: str, stdin: bytes | None = None) -> bytes:
    """Output of one git command (in ``root`` if given)."""
    result = subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, check=False)
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip()
        raise CheckError(f"git {' '.join(args)} failed: {message}")
    return result.stdout


def indexed_sizes(root: Path) -> dict[str, int]:
    """Size in bytes of every file in the index, by path."""
    blobs = {}
    for entry in git(root, "ls-files", "-z", "--stage").split(b"\0"):
        if not entry:
            continue
        info, path = entry.split(b"\t", 1)
        mode, blob, _ = info.decode().split(" ")
        if mode != GITLINK:
            blobs[path.decode(errors="surrogateescape")] = blob
    if not blobs:
        return {}
    answer = git(
        root,
        "cat-file",
        "--batch-check=%(objectsize)",
        stdin="".join(f"{blob}\n" for blob in blobs.values()).encode(),
    )
    sizes = [int(size) for size in answer.split()]
    return dict(zip(blobs, sizes, strict=True))


def read_allowlist(path: Path) -> dict[str, int]:
    """The allowlisted paths, each with its line number."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CheckError(
            f"cannot read the allowlist {path}: {error.strerror}; create it (it may hold "
            "only comments)"
        ) from error
    allowed = {}
    for number, line in enumerate(text.splitlines(), start=1):
        entry = COMMENT.sub("", line).strip()
        if entry:
            allowed[entry] = number
    return allowed


def problems(sizes: dict[str, int], allowed: dict[str, int], allowlist: Path) -> list[str]:
    """One message per file over the limit that is not allowlisted, and per stale line."""
    found = [
        f"{path}: {size:,} bytes, over the {LIMIT:,}-byte limit for committed files. Do not "
        f"commit it (`git rm --cached '{path}'`; generate it, or fetch it where it is used), or "
        f"if it must be in every clone, add its path to {allowlist} with a comment saying why"
        for path, size in sorted(sizes.items())
        if size > LIMIT and path not in allowed
    ]
    found += [
        f"{allowlist}:{number}: {path!r} is not a tracked file over {LIMIT:,} bytes; "
        "remove the line"
        for path, number in sorted(allowed.items(), key=lambda item: item[1])
        if sizes.get(path, 0) <= LIMIT
    ]
    return found


def main() -> int:
    try:
        root = Path(git(None, "rev-parse", "--show-toplevel").decode().strip())
        sizes = indexed_sizes(root)
        found = problems(sizes, read_allowlist(root / ALLOWLIST), ALLOWLIST)
    except CheckError as error:
        print(f"check-file-sizes: {error}", file=sys.stderr)
        return 2
    for message in found:
        print(message, file=sys.stderr)
    if found:
        print(f"check-file-sizes: {len(found)} problem(s)", file=sys.stderr)
        return 1
    print(f"check-file-sizes: {len(sizes)} tracked files, none unlisted over {LIMIT:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
