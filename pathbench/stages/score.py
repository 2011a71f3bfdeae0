"""The scoring stages: utterances (per shard), speakers, and reference comparisons.

The guarantee is completeness: each (utterance, variant) of a shard gets exactly one row, with
a score or with NaN plus the status and reason, so a gap in the results is always explained
in the results.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from pathbench import registry
from pathbench.data.manifest import load_manifest
from pathbench.data.references import index_by_text, select_references
from pathbench.evaluator import Evaluator, Item, Score, Trimmer, contained, evaluate_all
from pathbench.io import write_parquet
from pathbench.trimming.stored import StoredTrimmer

RAW, FA = "raw", "fa"
_KEY_COLUMNS = [
    ("metric", pa.string()),
    ("evaluator", pa.string()),
    ("variant", pa.string()),
]
_VALUE_COLUMNS = [
    ("score", pa.float64()),
    ("status", pa.string()),
    ("message", pa.string()),
]
SCORE_SCHEMA = pa.schema(
    [("utt_id", pa.string()), ("speaker_id", pa.string()), *_KEY_COLUMNS, *_VALUE_COLUMNS]
)
REFERENCE_SCORE_SCHEMA = pa.schema(
    [*SCORE_SCHEMA, ("reference_type", pa.string()), ("n_references", pa.int32())]
)
SPEAKER_SCORE_SCHEMA = pa.schema(
    [("speaker_id", pa.string()), *_KEY_COLUMNS, ("n_utterances", pa.int32()), *_VALUE_COLUMNS]
)


def metric_name(evaluator: str, variant: str, reference_type: str = "") -> str:
    """The name a result carries in tables: ``cpp``, ``cpp_fa``, ``p_estoi_control``."""
    name = (
        evaluator
        if variant == RAW or evaluator.endswith(f"_{variant}")
        else (f"{evaluator}_{variant}")
    )
    return f"{name}_{reference_type}" if reference_type else name


def items_from_manifest(frame: pd.DataFrame) -> list[Item]:
    """Manifest rows → evaluator input items, in utt_id order."""
    return [
        Item(
            utt_id=row.utt_id,
            audio_path=row.audio_path,
            start=float(row.start),
            end=float(row.end),
            transcription=row.text,
            language=row.language,
            speaker_id=row.speaker_id,
            gender=row.gender,
        )
        for row in frame.itertuples(index=False)
    ]


def build_evaluator(name: str, options: dict[str, Any], context: dict[str, Any]) -> Evaluator:
    """Instantiate ``name`` with user options plus the workflow context it declares."""
    cls = registry.info(name).cls
    wanted = {key: context[key] for key in cls.context_options}
    return registry.create(name, **options, **wanted)


def _variants(
    evaluator: Evaluator, variants: Iterable[str], trimmer: Trimmer | None
) -> list[tuple[str, Evaluator]]:
    chosen = []
    for variant in variants:
        if variant == RAW:
            chosen.append((RAW, evaluator))
        elif variant == FA:
            if trimmer is None:
                raise ValueError("variant 'fa' needs the fa_trim tables")
            chosen.append((FA, evaluator.trimmed(trimmer)))
        else:
            raise ValueError(f"unknown variant {variant!r}")
    return chosen


def _row(key: dict[str, Any], evaluator: str, variant: str, score: Score, ref: str = "") -> dict:
    return {
        **key,
        "metric": metric_name(evaluator, variant, ref),
        "evaluator": evaluator,
        "variant": variant,
        "score": score.as_float,
        "status": score.status,
        "message": score.message,
    }


def _trimmer(
    manifest_paths: Sequence[str | Path], trim_paths: Sequence[str | Path]
) -> StoredTrimmer | None:
    return StoredTrimmer.from_files(manifest_paths, trim_paths) if trim_paths else None


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
) -> pd.DataFrame:
    """Score shard ``shard`` of the manifest with one evaluator, in each requested variant."""
    evaluator = build_evaluator(evaluator_name, options or {}, context or {})
    chosen = _variants(evaluator, variants, _trimmer([manifest_path], trim_paths))
    items = items_from_manifest(load_manifest(manifest_path, shard))
    rows = [
        _row({"utt_id": it.utt_id, "speaker_id": it.speaker_id}, evaluator_name, variant, score)
        for variant, instance in chosen
        for it, score in zip(items, evaluate_all(instance, items), strict=True)
    ]
    frame = pd.DataFrame(rows, columns=SCORE_SCHEMA.names)
    settings = {"evaluator": evaluator_name, "options": options, "variants": list(variants)}
    write_parquet(frame, output_path, SCORE_SCHEMA, ["utt_id", "variant"], settings)
    return frame


def score_speakers(
    manifest_path: str | Path,
    evaluator_name: str,
    output_path: str | Path,
    *,
    options: dict[str, Any] | None = None,
    variants: Iterable[str] = (RAW,),
    trim_paths: Sequence[str | Path] = (),
) -> pd.DataFrame:
    """Score every speaker of the manifest with one speaker-level evaluator."""
    evaluator = build_evaluator(evaluator_name, options or {}, {})
    chosen = _variants(evaluator, variants, _trimmer([manifest_path], trim_paths))
    rows = []
    for speaker, group in load_manifest(manifest_path).groupby("speaker_id", sort=True):
        items = items_from_manifest(group)
        for variant, instance in chosen:
            score = contained(instance.evaluate_speaker, items)
            row = _row({"speaker_id": speaker}, evaluator_name, variant, score)
            rows.append({**row, "n_utterances": len(items)})
    frame = pd.DataFrame(rows, columns=SPEAKER_SCORE_SCHEMA.names)
    settings = {"evaluator": evaluator_name, "options": options, "variants": list(variants)}
    write_parquet(frame, output_path, SPEAKER_SCORE_SCHEMA, ["speaker_id", "variant"], settings)
    return frame


def score_reference(
    manifest_path: str | Path,
    reference_manifest_path: str | Path | None,
    shard: int,
    evaluator_name: str,
    reference_type: str,
    output_path: str | Path,
    *,
    options: dict[str, Any] | None = None,
    trim_paths: Sequence[str | Path] = (),
) -> pd.DataFrame:
    """Score a shard against references of ``reference_type`` (``control`` or ``all``).

    References come from the test manifest (``all``) and the reference manifest; either may be
    cut to the rows sharing a text with the shard (what the workflow's shard checkpoint
    writes), since only those can be references. The evaluator caches each reference's
    features, so each is decoded at most once per job.
    """
    manifests = [manifest_path] + ([reference_manifest_path] if reference_manifest_path else [])
    context = {"trimmer": StoredTrimmer.from_files(manifests, trim_paths) if trim_paths else None}
    evaluator = build_evaluator(evaluator_name, options or {}, context)
    full = load_manifest(manifest_path)
    own = index_by_text(full.itertuples(index=False))
    reference = (
        index_by_text(load_manifest(reference_manifest_path).itertuples(index=False))
        if reference_manifest_path
        else {}
    )
    rows = []
    for test, item in zip(
        full[full["shard"] == shard].itertuples(index=False),
        items_from_manifest(full[full["shard"] == shard]),
        strict=True,
    ):
        refs = tuple(select_references(test, own, reference, reference_type))
        score = contained(evaluator.evaluate, replace(item, reference_audios=refs))
        row = _row(
            {"utt_id": item.utt_id, "speaker_id": item.speaker_id},
            evaluator_name,
            evaluator.variant,
            score,
            reference_type,
        )
        rows.append({**row, "reference_type": reference_type, "n_references": len(refs)})
    frame = pd.DataFrame(rows, columns=REFERENCE_SCORE_SCHEMA.names)
    settings = {
        "evaluator": evaluator_name,
        "options": options,
        "trimmed": bool(trim_paths),
        "reference_type": reference_type,
    }
    write_parquet(frame, output_path, REFERENCE_SCORE_SCHEMA, ["utt_id"], settings)
    return frame
