"""The shard checkpoint (rule ``shard_manifest``): what each per-shard job reads.

Per-shard jobs read a slice of the manifest and declare exactly the audio they open, so an
edit in one shard reruns that shard's jobs only (see :mod:`pathbench_flow.data.shard_plan`).
One job writes the slices of every shard of every dataset and reference set. After each
checkpoint job Snakemake decides again every job that reads one of its outputs, and only
those, in a pass over the whole DAG: with a checkpoint per shard that was a pass per shard
(measured on a UASpeech-sized run: a tenth of the main process's time), and a reference job,
which reads files behind many shards, could be decided while some of them were still to run
and keep that decision, rerunning although nothing it reads had changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from pathbench_flow.common.io import write_json, write_parquet
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.data.references import REFERENCE_TYPES, index_by_text, select_references
from pathbench_flow.schemas.tables import MANIFEST_SCHEMA

TEST_FILES = ("rows", "related", "reference_related", "audio")
"""What the checkpoint writes per shard of a test set; a reference set's shards get their
``rows`` and ``audio`` (the rule's outputs ``reference_rows``, ``reference_audio``)."""
REFERENCE_FILES = {"rows": "reference_rows", "audio": "reference_audio"}


def shard_manifest(
    datasets: Sequence[Mapping[str, Sequence[int]]],
    manifests: Sequence[str | Path],
    references: Sequence[str | Path],
    outputs: Mapping[str, Sequence[str | Path]],
    reference_types: Iterable[str] = (),
    shared_speaker_ids: str = "same_speaker",
) -> None:
    """Write the shard files of several datasets and their reference sets, at the paths the
    workflow gives.

    ``datasets`` holds each dataset's ``shards`` and ``reference_shards`` (none without a
    reference set); ``manifests`` is one manifest per dataset, ``references`` one per dataset
    with a reference set; ``outputs`` lists each kind's files (:data:`TEST_FILES`, the values
    of :data:`REFERENCE_FILES`) dataset after dataset, shard after shard.
    """
    taken = dict.fromkeys(outputs, 0)

    def take(kind: str, count: int) -> list[str | Path]:
        start, taken[kind] = taken[kind], taken[kind] + count
        return list(outputs[kind][start : start + count])

    pending = iter(references)
    for dataset, manifest in zip(datasets, manifests, strict=True):
        shards, reference_shards = dataset["shards"], dataset["reference_shards"]
        reference = next(pending) if reference_shards else None
        files = {kind: take(kind, len(shards)) for kind in TEST_FILES}
        write_shards(manifest, shards, files, reference, reference_types, shared_speaker_ids)
        if reference is not None:
            files = {
                kind: take(name, len(reference_shards)) for kind, name in REFERENCE_FILES.items()
            }
            write_shards(reference, reference_shards, files)
    left = {
        kind: len(paths) - taken[kind]
        for kind, paths in outputs.items()
        if len(paths) > taken[kind]
    }
    if left or next(pending, None) is not None:
        raise ValueError(f"more shard outputs or reference manifests than datasets use: {left}")


def write_shards(
    manifest_path: str | Path,
    shards: Sequence[int],
    outputs: Mapping[str, Sequence[str | Path]],
    reference_manifest_path: str | Path | None = None,
    reference_types: Iterable[str] = (),
    shared_speaker_ids: str = "same_speaker",
) -> None:
    """Write the files of each of ``shards`` (:func:`write_shard`), reading the manifests once.

    ``outputs`` maps each kind of file (``rows``, ``audio``, optionally ``related`` and
    ``reference_related``) to its paths, one per shard in the order of ``shards``.
    """
    full = load_manifest(manifest_path)
    reference = (
        load_manifest(reference_manifest_path)
        if reference_manifest_path
        else pd.DataFrame(columns=MANIFEST_SCHEMA.names)
    )
    kinds = list(reference_types)
    for index, shard in enumerate(shards):
        paths = {kind: outputs[kind][index] for kind in outputs}
        write_shard(full, reference, shard, paths, kinds, shared_speaker_ids)


def write_shard(
    full: pd.DataFrame,
    reference: pd.DataFrame,
    shard: int,
    outputs: Mapping[str, str | Path],
    reference_types: Sequence[str] = (),
    shared_speaker_ids: str = "same_speaker",
) -> None:
    """Write what the jobs of shard ``shard`` of manifest ``full`` read, to ``outputs``.

    ``rows``: the shard's manifest rows. ``related`` and ``reference_related`` (optional):
    the rows of the test and the reference manifest that share a cleaned text with the shard,
    the only candidates :func:`pathbench_flow.data.references.select_references` can choose, so
    reference scoring reads these instead of the whole manifests. ``audio`` (JSON): the
    shard's recordings and, per reference type, the recordings its utterances are compared
    with and the shards of the test and reference set holding them (whose trim tables the
    trimmed reference measures read).
    """
    rows = full[full["shard"] == shard]
    texts = set(rows["text_clean"])
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
            for ref in select_references(test, own, others, kind, shared_speaker_ids)
        }
        references[kind] = {
            "audio": sorted({ref[0] for ref in chosen}),
            "shards": sorted({location[r][1] for r in chosen if not location[r][0]}),
            "reference_shards": sorted({location[r][1] for r in chosen if location[r][0]}),
        }
    plan = {"audio": sorted(set(rows["audio_path"])), "references": references}
    write_json(plan, outputs["audio"])
