"""Which features could not be measured in whose utterances, and which utterances that leaves out.

The open-set stage keeps every utterance with at least one measured feature: a candidate uses
only the utterances measured on its own features (:mod:`pathbench_flow.openset.evaluate`), so an
unmeasurable F0 costs a whispered or aphonic speaker nothing in a candidate built on spectral
features. Only an utterance with no measured feature at all is left out, because no candidate
could score it. Both are reported per speaker, by name and feature, because the speakers who
lose features are the most impaired ones, and a reader of the results must see who they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from pathbench_flow.schemas.openset import FEATURE_NAMES, N_FEATURES


def measured_any(frame: pd.DataFrame) -> np.ndarray:
    """Per row of a feature table, whether at least one of its features was measured."""
    return np.isfinite(frame[list(FEATURE_NAMES)].to_numpy(dtype=float)).any(axis=1)


def _note(n_utterances: int, n_excluded: int, unmeasured: dict[str, int]) -> str:
    """What the stage does with a speaker's unmeasured features, in one sentence."""
    if n_excluded == n_utterances:
        return (
            f"left out: none of the {N_FEATURES} features was measured in any of its "
            f"{n_utterances} utterances"
        )
    parts = []
    if n_excluded:
        parts.append(
            f"{n_excluded} of {n_utterances} utterances left out (none of their {N_FEATURES} "
            "features measured)"
        )
    if unmeasured:
        parts.append(
            "kept: a candidate using an unmeasured feature enrols the speaker from its "
            "measured training utterances only and declares the others unknown"
        )
    return "; ".join(parts)


def speaker_coverage(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One record per speaker, in speaker order, of what its utterances give the stage.

    ``n_excluded`` counts utterances with no measured feature (left out); the recording groups
    and the per-feature ``unmeasured`` counts are those of the kept utterances, in schema
    order, listing only features unmeasured at least once.
    """
    kept = measured_any(frame)
    missing = ~np.isfinite(frame[list(FEATURE_NAMES)].to_numpy(dtype=float))
    records = []
    for speaker, rows in frame.groupby("speaker_id", sort=True).indices.items():
        kept_rows = rows[kept[rows]]
        counts = missing[kept_rows].sum(axis=0)
        unmeasured = {name: int(n) for name, n in zip(FEATURE_NAMES, counts, strict=True) if n}
        n_excluded = int(rows.size - kept_rows.size)
        records.append(
            {
                "speaker_id": str(speaker),
                "n_utterances": int(rows.size),
                "n_excluded": n_excluded,
                "n_recording_groups": int(frame["group_id"].iloc[kept_rows].nunique()),
                "unmeasured": unmeasured,
                "note": _note(int(rows.size), n_excluded, unmeasured),
            }
        )
    return records


def unmeasured_text(record: dict[str, Any]) -> str:
    """``feature kept-unmeasured/kept`` for each unmeasured feature, in schema order."""
    kept = record["n_utterances"] - record["n_excluded"]
    unmeasured = record["unmeasured"]
    return ", ".join(
        f"{name} {unmeasured[name]}/{kept}" for name in FEATURE_NAMES if name in unmeasured
    )
