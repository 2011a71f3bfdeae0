"""PathBench's espeak-ng, fetched as source, verified by its digest and built by the workflow.

Why: which phones come out of espeak-ng depends on its version, and PathBench phonemises with a
build of commit :data:`COMMIT` (after 1.52.0; Italian ``ɾ`` versus ``r``, among others). No
package ships that commit, so with fetching on (config ``fetch.enabled``) the local rule
``build_espeak`` downloads its source archive once, checks the archive's SHA-256, configures and
makes it into the fetch directory, and every job that phonemises points phonemizer at the result
(:func:`phonemiser_environment`; :mod:`pathbench_flow.neural.phonemes` reads it).

The digest: GitHub publishes none for a commit's archive, so unless the config names one
(``fetch.espeak_ng.sha256``) it is pinned on first use: the first download records its digest in
a lock beside the build (:data:`LOCK_NAME`, keyed by URL) and every later download of that URL
must match it, or the build stops naming both digests.

The build is espeak-ng's autotools one (``autogen.sh`` when the archive has no ``configure``,
then ``configure`` and ``make install``), which the pinned commit and Debian's source packages
share; PathBench's own cmake build has the same defaults (extended dictionaries on), and
``--with-async=no`` matches its ``-DUSE_ASYNC=OFF``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from pathbench_flow.common.io import write_json

COMMIT = "2ea4121054e245301d3b2b7aa1b7cf8599b479b8"
"""The espeak-ng commit PathBench pins (its README: ``git checkout 2ea41210``), in full."""
SOURCE_URL = f"https://github.com/espeak-ng/espeak-ng/archive/{COMMIT}.tar.gz"
"""GitHub's source archive of :data:`COMMIT` (config ``fetch.espeak_ng.url`` by default)."""
BUILD_NAME = "espeak-ng"
"""The build's folder in the fetch directory."""
LOCK_NAME = "espeak-ng.lock.json"
"""The digests pinned on first use, beside the build (not inside: a rebuild keeps them)."""
CONFIGURE_OPTIONS = ("--with-async=no",)
LIBRARY = Path("lib", "libespeak-ng.so")
DATA = Path("share", "espeak-ng-data")
CHUNK = 1 << 20


class DigestMismatch(RuntimeError):
    """A downloaded archive is not the one pinned."""


def build_directory(fetch_directory: str | Path) -> Path:
    """Where the build lives: ``<fetch directory>/espeak-ng``."""
    return Path(fetch_directory, BUILD_NAME)


def phonemiser_environment(build: Path) -> dict[str, str]:
    """The variables that point phonemizer at a build: its library and its data (absolute,
    since a job may load them from any working directory)."""
    return {
        "PHONEMIZER_ESPEAK_LIBRARY": str(build.resolve() / LIBRARY),
        "PHONEMIZER_ESPEAK_DATA_PATH": str(build.resolve() / DATA),
    }


def download(url: str, destination: Path) -> str:
    """Stream ``url`` into ``destination``; the SHA-256 of what arrived."""
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=60) as response, destination.open("wb") as out:
        while chunk := response.read(CHUNK):
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def verify(url: str, actual: str, expected: str, lock: Path, log: TextIO) -> None:
    """Check ``actual`` against the config's digest, else the lock's, else record it there.

    Raises:
        DigestMismatch: naming the URL, the expected and the actual digest.
    """
    pinned: dict[str, str] = json.loads(lock.read_text()) if lock.is_file() else {}
    source = "config fetch.espeak_ng.sha256"
    if not expected and url in pinned:
        expected, source = pinned[url], str(lock)
    if not expected:
        write_json(dict(sorted({**pinned, url: actual}.items())), lock)
        print(f"{url}: SHA-256 {actual} pinned on first use in {lock}", file=log)
        return
    if actual != expected:
        raise DigestMismatch(
            f"{url}: SHA-256 {actual}, but {source} expects {expected}; the archive is not "
            "the one pinned (delete its entry from the lock only if the new one is trusted)"
        )
    print(f"{url}: SHA-256 {actual} as pinned ({source})", file=log)


def unpack(archive: Path, into: Path) -> Path:
    """Extract ``archive`` (tar, any compression) into ``into``; its one top-level folder."""
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    (top,) = into.iterdir()
    return top


def make(source: Path, prefix: Path, log: TextIO) -> None:
    """espeak-ng's autotools build of ``source``, installed under ``prefix``."""

    def run(*command: str) -> None:
        log.flush()
        subprocess.run(command, cwd=source, stdout=log, stderr=subprocess.STDOUT, check=True)

    if not (source / "configure").is_file():
        run("./autogen.sh")
    run("./configure", f"--prefix={prefix}", *CONFIGURE_OPTIONS)
    run("make")
    run("make", "install")


def build_espeak(url: str, sha256: str, output: str | Path, lock: str | Path) -> None:
    """The rule ``build_espeak``: download, verify, build into ``output``.

    Work happens in a scratch folder beside ``output`` (same file system, removed after); the
    build's messages go to stderr, the rule's log.
    """
    prefix, lock = Path(output).resolve(), Path(lock)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=prefix.parent, prefix=".espeak-build-") as scratch:
        archive = Path(scratch, "source.tar")
        verify(url, download(url, archive), sha256, lock, sys.stderr)
        source = unpack(archive, Path(scratch, "source"))
        make(source, prefix, sys.stderr)  # a failed job's output is removed by Snakemake
    missing = [p for p in phonemiser_environment(prefix).values() if not Path(p).exists()]
    if missing:
        raise FileNotFoundError(f"the espeak-ng build installed no {', '.join(missing)}")


def check_environment(build: Path, environment: Mapping[str, str]) -> None:
    """Refuse a run whose environment already points phonemizer at another library.

    Raises:
        ValueError: naming the variable, its value and the build's.
    """
    for name, value in phonemiser_environment(build).items():
        if environment.get(name, value) != value:
            raise ValueError(
                f"{name}={environment[name]}, but fetching is on and phonemises with the "
                f"workflow's build ({value}): unset {name} or switch fetching off"
            )
