"""Rules ``shard_manifest`` and ``shard_reference_manifest``: what each per-shard job reads.

Per-shard jobs read a slice of the manifest and declare exactly the audio they open, so an
edit in one shard reruns that shard's jobs only (see :mod:`pathbench_flow.data.shard_plan`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.data.references import REFERENCE_TYPES, index_by_text, select_references
from pathbench_flow.io import write_json, write_parquet
from pathbench_flow.schemas import MANIFEST_SCHEMA


def shard_manifest(
    manifest_path: str | Path,
    shard: int,
    outputs: Mapping[str, str | Path],
    reference_manifest_path: str | Path | None = None,
    reference_types: Iterable[str] = (),
) -> None:
    """Write what the jobs of shard ``shard`` read, to the paths in ``outputs``.

    ``rows``: the shard's manifest rows. ``related`` and ``reference_related`` (optional):
    the rows of the test and the reference manifest that share a cleaned text with the shard,
    the only candidates :func:`pathbench_flow.data.references.select_references` can choose, so
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
