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
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

import pandas as pd

from pathbench.io import write_json, write_parquet
from pathbench.kaldi import read_table
from pathbench.manifest import MANIFEST_SCHEMA, load_manifest
from pathbench.references import REFERENCE_TYPES, index_by_text, select_references


def listed_audio(dataset_dir: str | Path) -> list[str]:
    """Existing audio files named by a dataset's ``wav.scp`` (what validation opens).

    Entries that are not existing files (missing audio, pipe commands) are left to validation,
    which reports them by file and line; they cannot be job inputs.
    """
    directory = Path(dataset_dir)
    wav_scp = directory / "wav.scp"
    if not wav_scp.is_file():
        return []
    table = read_table(wav_scp, [], n_fields=None, rest_joined=True)
    found = set()
    for entry in table.entries.values():
        path = Path(entry.fields[0])
        path = path if path.is_absolute() else directory / path
        if path.is_file():
            found.add(str(path))
    return sorted(found)


def write_shard(
    manifest_path: str | Path,
    shard: int,
    outputs: Mapping[str, str | Path],
    reference_manifest_path: str | Path | None = None,
    reference_types: Iterable[str] = (),
) -> None:
    """Write what the jobs of shard ``shard`` read, to the paths in ``outputs``.

    ``rows``: the shard's manifest rows. ``related`` and ``reference_related`` (optional):
    the rows of the test and the reference manifest that share a cleaned text with the shard,
    the only candidates :func:`pathbench.references.select_references` can choose, so
    reference scoring reads these instead of the whole manifests. ``audio`` (JSON): the
    shard's recordings and, per reference type, the recordings its utterances are compared
    with and the shards of the test and reference set holding them (whose trim tables the
    trimmed reference measures read).
    """
    full = load_manifest(manifest_path)
    rows = full[full["shard"] == shard]
    texts = set(rows["text_clean"])
    reference = (
        load_manifest(reference_manifest_path)
        if reference_manifest_path
        else pd.DataFrame(columns=MANIFEST_SCHEMA.names)
    )
    related = full[full["text_clean"].isin(texts)]
    reference_related = reference[reference["text_clean"].isin(texts)]
    tables = {"rows": rows, "related": related, "reference_related": reference_related}
    for name, frame in tables.items():
        if name in outputs:  # a reference set's own shards need only their rows
            write_parquet(frame, outputs[name], MANIFEST_SCHEMA, ["utt_id"])
    own = index_by_text(related.itertuples(index=False))
    others = index_by_text(reference_related.itertuples(index=False))
    # Where each candidate lives: (audio, start, end) → (is in the reference set?, shard)
    location = {
        (row.audio_path, float(row.start), float(row.end)): (in_reference, int(row.shard))
        for in_reference, frame in ((False, related), (True, reference_related))
        for row in frame.itertuples(index=False)
    }
    references = {}
    for kind in reference_types:
        if kind not in REFERENCE_TYPES:
            raise ValueError(f"unknown reference type {kind!r}; one of {REFERENCE_TYPES}")
        chosen = {
            ref
            for test in rows.itertuples(index=False)
            for ref in select_references(test, own, others, kind)
        }
        references[kind] = {
            "audio": sorted({ref[0] for ref in chosen}),
            "shards": sorted({location[r][1] for r in chosen if not location[r][0]}),
            "reference_shards": sorted({location[r][1] for r in chosen if location[r][0]}),
        }
    plan = {"audio": sorted(set(rows["audio_path"])), "references": references}
    write_json(plan, outputs["audio"])


@lru_cache(maxsize=4096)
def _read_plan(path: str, mtime_ns: int) -> dict:
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
