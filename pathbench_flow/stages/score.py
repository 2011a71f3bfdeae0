"""The scoring stages: utterances (per shard), speakers, and reference comparisons.

The guarantee is completeness: each (utterance, variant) of a shard gets exactly one row, with
a score or with NaN plus the status and reason, so a gap in the results is always explained
in the results. A job whose every row failed (status ``error``) writes nothing and fails,
naming the first failure: that gap is the evaluator's, not the data's.

The stage owns the variants: a job receives a registered evaluator and the variants (and, for
reference measures, the reference type) to score, applies each variant itself
(:func:`apply_variant`), and writes the metric's identity in the columns ``evaluator``,
``variant`` (and ``reference_type``) with the name
:class:`~pathbench_flow.evaluators.metric.MetricKey` derives.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from pathbench_flow.common.io import read_parquet, write_parquet
from pathbench_flow.common.status import ERROR
from pathbench_flow.data.manifest import in_utterance_order, load_manifest
from pathbench_flow.data.references import index_by_text, select_references
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.base import (
    Evaluator,
    Score,
    Trimmer,
    contained,
    evaluate_all,
    items_from_manifest,
)
from pathbench_flow.evaluators.metric import FA, RAW, MetricKey
from pathbench_flow.neural import models
from pathbench_flow.runtime.progress import Progress, progress
from pathbench_flow.schemas.tables import REFERENCE_SCORE_SCHEMA, SCORE_SCHEMA, SPEAKER_SCORE_SCHEMA
from pathbench_flow.tracks.store import load_tracks
from pathbench_flow.trimming.stored import StoredTrimmer


def build_evaluator(name: str, options: dict[str, Any], context: dict[str, Any]) -> Evaluator:
    """Instantiate ``name`` with user options plus the workflow context it declares; a model
    measure first checks that its device is there (``device: cuda`` on a node without one
    fails the job here, before any audio is read)."""
    cls = registry.info(name).cls
    if cls.uses_gpu(options):
        models.require_device()
    wanted = {key: context[key] for key in cls.context_options}
    return registry.create(name, **options, **wanted)


def load_declared_tracks(
    name: str,
    options: dict[str, Any],
    track_paths: Sequence[str | Path],
    utt_ids: Collection[str] | None = None,
) -> int:
    """Load the rows of the tracks evaluator ``name`` reads with ``options`` from the track
    files ``track_paths`` into the memo (model tracks are known only to their readers), of
    the utterances ``utt_ids`` only when given (:func:`load_tracks`)."""
    if not track_paths:
        return 0
    declared = [use.track for use in registry.info(name).cls.track_uses(options)]
    return load_tracks(track_paths, declared, utt_ids)


def apply_variant(evaluator: Evaluator, variant: str, trimmer: Trimmer | None) -> Evaluator:
    """The evaluator that scores ``variant``: itself for ``raw``; for ``fa`` its trimming
    wrapper (``evaluator.trimmed``) over the stored trim boundaries of ``trimmer``."""
    if variant == RAW:
        return evaluator
    if variant != FA:
        raise ValueError(f"unknown variant {variant!r}; known: {RAW}, {FA}")
    if trimmer is None:
        raise ValueError("variant 'fa' needs the fa_trim tables")
    return evaluator.trimmed(trimmer)


def _variants(
    evaluator: Evaluator, variants: Iterable[str], trimmer: Trimmer | None
) -> list[tuple[str, Evaluator]]:
    return [(variant, apply_variant(evaluator, variant, trimmer)) for variant in variants]


def _row(key: dict[str, Any], metric: MetricKey, score: Score) -> dict:
    return {
        **key,
        "metric": metric.name,
        "evaluator": metric.evaluator,
        "variant": metric.variant,
        "score": score.as_float,
        "status": score.status,
        "message": score.message,
    }


class ScoringFailed(RuntimeError):
    """Every row of a scoring job has status ``error``: the evaluator itself is broken."""


def require_a_result(rows: Sequence[dict], output_path: str | Path, evaluator: str) -> None:
    """Stop the job when every row of its table has status ``error``.

    One utterance's error is recorded in its row and the job goes on, but when all of them
    fail the cause is the evaluator, not the audio (a corrupt model, a broken plugin): writing
    that table would let the run finish with a hole where the measure should be, found only
    in the correlations. Other statuses (``too_short``, ``unsupported_language``, …) are
    outcomes, not failures, and never stop a job. The message names the first failing row
    (in scoring order) and its cause, which is where to start looking.

    Raises:
        ScoringFailed: naming the output, the evaluator, the count and the first failure.
    """
    if not rows or any(row["status"] != ERROR for row in rows):
        return
    first = rows[0]
    key = "utt_id" if "utt_id" in first else "speaker_id"
    raise ScoringFailed(
        f"{evaluator}: all {len(rows)} rows of {output_path} have status error, so the table "
        f"is not written; the first, {key} {first[key]!r} ({first['metric']}): "
        f"{first['message']}"
    )


def _write(
    rows: list[dict],
    output_path: str | Path,
    schema: pa.Schema,
    sort_by: Sequence[str],
    settings: dict[str, Any],
) -> pd.DataFrame:
    """Write the rows as ``schema``'s table, sorted by ``sort_by``, with the job's ``settings``
    in its metadata (unless every row failed: :func:`require_a_result`); the frame is what
    the scoring stages return."""
    require_a_result(rows, output_path, settings["evaluator"])
    frame = pd.DataFrame(rows, columns=schema.names)
    write_parquet(frame, output_path, schema, sort_by, settings)
    return frame


def _trimmer(
    manifests: Sequence[pd.DataFrame], trim_paths: Sequence[str | Path]
) -> StoredTrimmer | None:
    """Trims replayed for manifest rows the job has already loaded (not read again)."""
    return StoredTrimmer(manifests, [read_parquet(p) for p in trim_paths]) if trim_paths else None


def _prepared_variants(
    evaluator_name: str,
    options: dict[str, Any] | None,
    context: dict[str, Any] | None,
    variants: Iterable[str],
    manifests: Sequence[pd.DataFrame],
    trim_paths: Sequence[str | Path],
    track_paths: Sequence[str | Path],
) -> list[tuple[str, Evaluator]]:
    """The evaluator in each requested variant, with the shard's shared tracks loaded first so
    that its analyses are reused rather than recomputed."""
    load_declared_tracks(evaluator_name, options or {}, track_paths)
    evaluator = build_evaluator(evaluator_name, options or {}, context or {})
    return _variants(evaluator, variants, _trimmer(manifests, trim_paths))


def score_utterances(
    manifest_path: str | Path,
    shard: int,
    evaluator_name: str,
    output_path: str | Path,
    *,
    options: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    variants: Iterable[str] = (RAW,),
    trim_paths: Sequence[str | Path] = (),
    track_paths: Sequence[str | Path] = (),
) -> pd.DataFrame:
    """Score shard ``shard`` of the manifest with one evaluator, in each requested variant.

    ``track_paths`` are shared-track files (:mod:`pathbench_flow.tracks`) whose analyses the
    evaluator reuses instead of recomputing them.
    """
    full = load_manifest(manifest_path)
    chosen = _prepared_variants(
        evaluator_name, options, context, variants, [full], trim_paths, track_paths
    )
    items = items_from_manifest(full[full["shard"] == shard])
    meter = Progress(f"score_utterances {output_path}", len(items) * len(chosen))
    rows = [
        _row(
            {"utt_id": it.utt_id, "speaker_id": it.speaker_id},
            MetricKey(evaluator_name, variant),
            score,
        )
        for variant, instance in chosen
        for it, score in zip(items, evaluate_all(instance, meter.over(items)), strict=True)
    ]
    meter.finish()
    settings = {"evaluator": evaluator_name, "options": options, "variants": list(variants)}
    return _write(rows, output_path, SCORE_SCHEMA, ["utt_id", "variant"], settings)


def score_speakers(
    manifest: str | Path | Sequence[str | Path],
    evaluator_name: str,
    output_path: str | Path,
    *,
    options: dict[str, Any] | None = None,
    variants: Iterable[str] = (RAW,),
    trim_paths: Sequence[str | Path] = (),
    track_paths: Sequence[str | Path] = (),
) -> pd.DataFrame:
    """Score every speaker of ``manifest`` with one speaker-level evaluator (reusing the
    analyses of the shared-track files ``track_paths``).

    ``manifest`` is a manifest or the slices of one (the workflow gives every shard's rows:
    read from the shard checkpoint, the job is decided after it, like the per-shard jobs).
    """
    paths = [manifest] if isinstance(manifest, str | Path) else list(manifest)
    slices = [load_manifest(path) for path in paths]
    chosen = _prepared_variants(
        evaluator_name, options, {}, variants, slices, trim_paths, track_paths
    )
    rows = []
    frame = in_utterance_order(slices)
    speakers = list(frame.groupby("speaker_id", sort=True))
    for speaker, group in progress(speakers, f"score_speakers {output_path}", "speakers"):
        items = items_from_manifest(group)
        for variant, instance in chosen:
            score = contained(instance.evaluate_speaker, items)
            row = _row({"speaker_id": speaker}, MetricKey(evaluator_name, variant), score)
            rows.append({**row, "n_utterances": len(items)})
    settings = {"evaluator": evaluator_name, "options": options, "variants": list(variants)}
    return _write(rows, output_path, SPEAKER_SCORE_SCHEMA, ["speaker_id", "variant"], settings)


def score_reference(
    manifest_path: str | Path,
    reference_manifest_path: str | Path | None,
    shard: int,
    evaluator_name: str,
    reference_type: str,
    output_path: str | Path,
    *,
    options: dict[str, Any] | None = None,
    variant: str = RAW,
    trim_paths: Sequence[str | Path] = (),
    track_paths: Sequence[str | Path] = (),
    shared_speaker_ids: str = "same_speaker",
) -> pd.DataFrame:
    """Score a shard in ``variant`` against references of ``reference_type`` (``control`` or
    ``all``).

    References come from the test manifest (``all``) and the reference manifest; either may be
    cut to the rows sharing a text with the shard (what the workflow's shard checkpoint
    writes), since only those can be references. The evaluator caches each reference's
    features, so each is decoded at most once per job. The ``fa`` variant trims the
    references too, so ``trim_paths`` are the trim tables of the shard and of its references.
    The features held by the shared-track files ``track_paths`` are reused, not recomputed.
    """
    full = load_manifest(manifest_path)
    reference_rows = (
        load_manifest(reference_manifest_path) if reference_manifest_path else full.iloc[:0]
    )
    # Only these utterances can be scored or be references here: the set tracks' other rows
    # are never looked up.
    needed = {*full["utt_id"], *reference_rows["utt_id"]}
    load_declared_tracks(evaluator_name, options or {}, track_paths, needed)
    manifests = [full, reference_rows] if reference_manifest_path else [full]
    evaluator = apply_variant(
        build_evaluator(evaluator_name, options or {}, {}), variant, _trimmer(manifests, trim_paths)
    )
    key = MetricKey(evaluator_name, variant, reference_type)
    own = index_by_text(full.itertuples(index=False))
    reference = index_by_text(reference_rows.itertuples(index=False))
    shard_rows = full[full["shard"] == shard]
    rows = []
    label = f"score_reference {output_path}"
    for test, item in zip(
        shard_rows.itertuples(index=False),
        progress(items_from_manifest(shard_rows), label),
        strict=True,
    ):
        refs = tuple(select_references(test, own, reference, reference_type, shared_speaker_ids))
        score = contained(evaluator.evaluate, replace(item, reference_audios=refs))
        row = _row({"utt_id": item.utt_id, "speaker_id": item.speaker_id}, key, score)
        rows.append({**row, "reference_type": key.reference_type, "n_references": len(refs)})
    settings = {
        "evaluator": evaluator_name,
        "options": options,
        "variant": variant,
        "reference_type": reference_type,
    }
    return _write(rows, output_path, REFERENCE_SCORE_SCHEMA, ["utt_id"], settings)
