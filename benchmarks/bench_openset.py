"""Time one outer fold of the open-set evaluation at the size the workflow is planned for.

2,000 rows from 20 speakers, 500 candidates (20 model settings x 25 threshold pairs) and 5
tuning folds; the goal is at most 60 s on 2 cores. Run: ``python benchmarks/bench_openset.py``.
The synthetic speakers differ along a few shared latent directions, as real speakers differ in
correlated acoustic features, so the EM fits do realistic amounts of work.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from pathbench_flow.openset import (
    FEATURE_NAMES,
    EvaluationPlan,
    OpenSetDataset,
    build_folds,
    build_tuning_folds,
    candidate_grid,
    evaluate,
)

SPEAKERS = 20
GROUPS_PER_SPEAKER = 10
ROWS_PER_GROUP = 10
GOAL_SECONDS = 60.0

GRID = {
    "feature_masks": {"all": list(FEATURE_NAMES), "voice": list(FEATURE_NAMES[:10])},
    "components": [1, 2, 4, 8, 16],
    "relevance": [4.0, 16.0],
    "variance_floor": [1e-3],
    "absolute_threshold": [-1.0, 0.0, 0.5, 1.0, 2.0],
    "margin_threshold": [0.0, 0.25, 0.5, 1.0, 2.0],
}


def synthetic_features(seed: int = 0) -> pd.DataFrame:
    """Speakers on five latent directions; groups add a session offset; rows add noise."""
    rng = np.random.default_rng(seed)
    loadings = rng.normal(size=(5, len(FEATURE_NAMES)))
    records = []
    for speaker in range(SPEAKERS):
        centre = rng.normal(size=5) @ loadings
        for group in range(GROUPS_PER_SPEAKER):
            session = centre + rng.normal(scale=0.3, size=len(FEATURE_NAMES))
            for row in range(ROWS_PER_GROUP):
                values = session + rng.normal(size=len(FEATURE_NAMES))
                records.append(
                    {
                        "utt_id": f"spk{speaker:02d}_s{group:02d}_u{row:02d}",
                        "speaker_id": f"spk{speaker:02d}",
                        "group_id": f"spk{speaker:02d}_s{group:02d}",
                        **dict(zip(FEATURE_NAMES, values, strict=True)),
                    }
                )
    return pd.DataFrame(records)


def main() -> None:
    dataset = OpenSetDataset.from_frame(synthetic_features())
    started = time.perf_counter()
    (held_out,) = build_folds(dataset, known_folds=5, max_outer_folds=1)
    tuning = build_tuning_folds(dataset, held_out, known_folds=5, max_tuning_folds=5)
    candidates = candidate_grid(GRID)
    folds_done = time.perf_counter()
    result = evaluate(EvaluationPlan(dataset, tuning, held_out, candidates))
    finished = time.perf_counter()
    total = finished - started
    print(f"rows={dataset.n_rows} speakers={len(dataset.speakers)} candidates={len(candidates)}")
    print(f"tuning folds={len(tuning)} held-out train rows={len(held_out.train)}")
    print(f"fold building: {folds_done - started:.2f} s")
    print(f"evaluation: {finished - folds_done:.2f} s")
    verdict = "met" if total <= GOAL_SECONDS else "MISSED"
    print(f"total: {total:.2f} s (goal <= {GOAL_SECONDS:.0f} s: {verdict})")
    print(f"selected: {result.selected_config}")
    print(f"held-out balanced open-set rate: {result.held_out.balanced_open_set_rate:.3f}")


if __name__ == "__main__":
    main()
