"""The scoring stage: every utterance of a shard through one evaluator, into one Parquet.

The guarantee is completeness: each (utterance, variant) of the shard gets exactly one row,
with a score or with NaN plus the status and reason, so a gap in the results is always
explained in the results.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from pathbench import registry
from pathbench.evaluator import Evaluator, Item, Score
from pathbench.io import write_parquet
from pathbench.manifest import load_manifest

SCORE_SCHEMA = pa.schema(
    [
        ("utt_id", pa.string()),
        ("speaker_id", pa.string()),
        ("evaluator", pa.string()),
        ("variant", pa.string()),
        ("score", pa.float64()),
        ("status", pa.string()),
        ("message", pa.string()),
    ]
)
SPEAKER_SCORE_SCHEMA = pa.schema(
    [
        ("speaker_id", pa.string()),
        ("evaluator", pa.string()),
        ("variant", pa.string()),
        ("n_utterances", pa.int32()),
        ("score", pa.float64()),
        ("status", pa.string()),
        ("message", pa.string()),
    ]
)
RAW = "raw"


def items_from_manifest(frame: pd.DataFrame) -> list[Item]:
    """Manifest rows → evaluator input items, in utt_id order."""
    return [
        Item(
            utt_id=row.utt_id,
            audio_path=row.audio_path,
            start=float(row.start),
            end=float(row.end),
            transcription=row.text_clean,
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


def _row(item_key: dict[str, str], evaluator: str, variant: str, score: Score) -> dict:
    return {
        **item_key,
        "evaluator": evaluator,
        "variant": variant,
        "score": score.as_float,
        "status": score.status,
        "message": score.message,
    }


def score_utterances(
    manifest_path: str | Path,
    shard: int,
    evaluator_name: str,
    output_path: str | Path,
    *,
    options: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    variants: Iterable[str] = (RAW,),
) -> pd.DataFrame:
    """Score shard ``shard`` of the manifest with one evaluator, in each requested variant."""
    evaluator = build_evaluator(evaluator_name, options or {}, context or {})
    items = items_from_manifest(load_manifest(manifest_path, shard))
    rows = [
        _row({"utt_id": it.utt_id, "speaker_id": it.speaker_id}, evaluator_name, variant,
             _variant_evaluator(evaluator, variant).evaluate(it))
        for it in items
        for variant in variants
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
) -> pd.DataFrame:
    """Score every speaker of the manifest with one speaker-level evaluator."""
    evaluator = build_evaluator(evaluator_name, options or {}, {})
    manifest = load_manifest(manifest_path)
    rows = []
    for speaker, group in manifest.groupby("speaker_id", sort=True):
        items = items_from_manifest(group)
        for variant in variants:
            score = _variant_evaluator(evaluator, variant).evaluate_speaker(items)
            row = _row({"speaker_id": speaker}, evaluator_name, variant, score)
            rows.append({**row, "n_utterances": len(items)})
    frame = pd.DataFrame(rows, columns=SPEAKER_SCORE_SCHEMA.names)
    settings = {"evaluator": evaluator_name, "options": options, "variants": list(variants)}
    write_parquet(frame, output_path, SPEAKER_SCORE_SCHEMA, ["speaker_id", "variant"], settings)
    return frame


def _variant_evaluator(evaluator: Evaluator, variant: str) -> Evaluator:
    if variant == RAW:
        return evaluator
    raise ValueError(f"unknown variant {variant!r}")
