"""Feature tables for the open-set tests (Gaussian speakers in recording groups), the small
candidate grid the stage tests fit, and where the summary stage writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pathbench_flow.schemas.openset import FEATURE_NAMES


def speaker_frame(seed: int = 0) -> pd.DataFrame:
    """Five Gaussian speakers, each with four recording groups of three utterances."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 1.5, size=(5, len(FEATURE_NAMES)))
    records = [
        {
            "utt_id": f"u{s}{g}{u}",
            "speaker_id": f"spk{s}",
            "group_id": f"spk{s}-g{g}",
            **dict(
                zip(FEATURE_NAMES, centres[s] + rng.normal(size=len(FEATURE_NAMES)), strict=True)
            ),
        }
        for s in range(5)
        for g in range(4)
        for u in range(3)
    ]
    return pd.DataFrame(records)


STAGE_GRID = {
    "feature_masks": {"all": list(FEATURE_NAMES), "voice": list(FEATURE_NAMES[:8])},
    "components": [1],
    "relevance": [4.0],
    "variance_floor": [1e-3],
    "absolute_threshold": [-1.0, 0.0, 1.0],
    "margin_threshold": [0.0, 0.5],
}


def summary_paths(directory: Path) -> list[Path]:
    """Where ``openset_summary`` writes, in its argument order."""
    names = ("summary.json", "per_fold.csv", "rates.png", "status.csv", "speakers.csv")
    return [directory / name for name in names]
