"""The one place that writes result files.

Byte-identical outputs for identical inputs are a project guarantee (reruns, resumes and
cluster runs must agree), so every writer here sorts rows, fixes the schema, drops the pandas
index, strips timestamps and writes through a temporary file that is renamed into place, so a
killed job never leaves a half-written output that looks complete.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import socket
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pathbench_flow import __version__


def config_digest(settings: Any) -> str:
    """SHA-256 of a JSON rendering with sorted keys: the settings that produced a file."""
    text = json.dumps(settings, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_TEMP_SUFFIX = ".tmp"


def _writer_tag() -> str:
    """Host and process of this writer, embedded in temp names so leftovers can be told apart."""
    return f"{socket.gethostname()}-{os.getpid()}"


def _writer_alive(tag: str) -> bool:
    """Whether the writer named by ``tag`` may still be writing: a live process on this host.

    A temp file from another host cannot be checked; Snakemake's directory lock keeps two runs
    from writing the same output at once, so such a file is a leftover too.
    """
    host, _, pid = tag.rpartition("-")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True


def remove_stale_temps(target: Path) -> list[Path]:
    """Delete hidden temp files of ``target`` left by killed writers; return what was removed."""
    removed = []
    for leftover in target.parent.glob(f".{glob.escape(target.name)}.*{_TEMP_SUFFIX}"):
        tag = leftover.name[len(target.name) + 2 : -len(_TEMP_SUFFIX)].rpartition(".")[0]
        if not _writer_alive(tag):
            leftover.unlink(missing_ok=True)
            removed.append(leftover)
    return removed


def _umask() -> int:
    """The process umask: from /proc where Linux shows it, else by setting it and back (a
    brief window in which another thread would create files with 022)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only on success.

    The result gets the permissions an ordinary ``open()`` would give (0666 less the umask),
    not mkstemp's private 0600, so group members on shared storage can read results.
    Leftovers of earlier killed writes of the same file are removed first.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(target)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.{_writer_tag()}.", suffix=_TEMP_SUFFIX, dir=target.parent
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_parquet(
    frame: pd.DataFrame,
    path: str | Path,
    schema: pa.Schema,
    sort_by: Sequence[str],
    settings: Any = None,
) -> None:
    """Write ``frame`` with exactly ``schema``'s columns and types, sorted by ``sort_by``.

    ``settings`` (the parameters that produced the table) is digested into the file's key/value
    metadata with the package version, so a file says where it came from.
    """
    missing = [name for name in schema.names if name not in frame.columns]
    if missing:
        raise ValueError(f"cannot write {path}: columns {missing} missing from the table")
    ordered = frame.loc[:, schema.names].sort_values(list(sort_by), kind="mergesort")
    table = pa.Table.from_pandas(ordered, schema=schema, preserve_index=False)
    metadata = {
        b"pathbench.version": __version__.encode(),
        b"pathbench.config_digest": config_digest(settings).encode(),
    }
    table = table.replace_schema_metadata(metadata)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_statistics=False)


def read_parquet(path: str | Path) -> pd.DataFrame:
    """Read a table written by :func:`write_parquet`."""
    return pq.read_table(path).to_pandas()


def write_json(data: Mapping[str, Any] | Sequence[Any], path: str | Path) -> None:
    """Write JSON with sorted keys and a trailing newline, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n")


def write_text(text: str, path: str | Path) -> None:
    """Write a text file atomically (CSV exports, reports)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
