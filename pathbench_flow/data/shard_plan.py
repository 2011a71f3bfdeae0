"""Which files each workflow job reads, so that Snakemake can rerun exactly the affected jobs.

A job's outputs are only as fresh as its declared inputs: when the audio a score was computed
from is not an input, editing the wav leaves the old score in place. So every job that reads
audio declares the audio files it reads, and per-shard jobs read a per-shard slice of the
manifest instead of the whole manifest, so a change in one shard (a new duration, say) does
not make every shard's job look out of date. Snakemake reruns a job whose input is newer and
has a different checksum (for files up to 1 MB), so rewriting an unchanged slice costs
nothing downstream.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from pathbench_flow.data.kaldi import read_table


def listed_audio(dataset_dir: str | Path, *, existing_only: bool = True) -> list[str]:
    """Existing audio files named by a dataset's ``wav.scp`` (what validation opens).

    Entries that are not existing files (missing audio, pipe commands) are left to validation,
    which reports them by file and line; they cannot be job inputs. Without ``existing_only``
    every file entry is listed (pipe commands still not): where the audio lives in a storage
    provider only, Snakemake checks there that each exists.
    """
    directory = Path(dataset_dir)
    wav_scp = directory / "wav.scp"
    if not wav_scp.is_file():
        return []
    table = read_table(wav_scp, [], n_fields=None, rest_joined=True)
    found = set()
    for entry in table.entries.values():
        location = entry.fields[0]
        if location.endswith("|"):  # a pipe command: validation refuses it
            continue
        path = Path(location)
        path = path if path.is_absolute() else directory / path
        if not existing_only or path.is_file():
            found.add(str(path))
    return sorted(found)


@lru_cache(maxsize=4096)
def _read_plan(path: str, _mtime_ns: int) -> dict:
    """The parsed plan; the modification time is read only by the cache, as part of its key,
    so that a plan rewritten by a later run is parsed again instead of served stale."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _plan(plan_path: str | Path) -> dict:
    path = Path(plan_path)
    return _read_plan(str(path), path.stat().st_mtime_ns)


def shard_audio(plan_path: str | Path, reference_type: str | None = None) -> list[str]:
    """Audio files of a shard (with ``reference_type``: plus the ones its references use)."""
    plan = _plan(plan_path)
    files = set(plan["audio"])
    if reference_type is not None:
        files |= set(plan["references"][reference_type]["audio"])
    return sorted(files)


def reference_shards(plan_path: str | Path, reference_type: str) -> tuple[list[int], list[int]]:
    """Shards of the test and of the reference set holding a shard's references."""
    found = _plan(plan_path)["references"][reference_type]
    return found["shards"], found["reference_shards"]
