"""Freeze torchaudio's forced alignments of seeded score matrices as test expectations.

PathBench aligns with ``torchaudio.functional.forced_align``; ``pathbench_flow.neural.ctc
.forced_path`` must pick the same path, ties included. torchaudio does not load beside this
project's torch, so this script runs in an environment that has it (see
``benchmarks/neural_conformance.py``) and writes the paths it finds for matrices that the test
(``tests/test_neural.py``) rebuilds from the same seeds with numpy alone. Half of the matrices
are rounded to halves, so equal scores and tied moves are common.

Run: ``python benchmarks/forced_align_cases.py tests/data/forced_align_paths.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

CASES = 400
SEED = 20261201


def case(index: int) -> tuple[np.ndarray, list[int]]:
    """Score matrix (float32, frames x vocabulary) and target tokens of case ``index``."""
    rng = np.random.default_rng([SEED, index])
    frames = int(rng.integers(1, 40))
    vocabulary = int(rng.integers(2, 7))
    scores = rng.normal(size=(frames, vocabulary)) * float(rng.choice([0.5, 2.0, 6.0])) - 2.0
    if index % 2 == 0:
        scores = np.round(scores * 2.0) / 2.0
    tokens = rng.integers(1, vocabulary, size=int(rng.integers(1, max(2, frames)))).tolist()
    return scores.astype(np.float32), tokens


def main(out: Path) -> None:
    import torch
    import torchaudio

    paths: list[list[int] | None] = []
    for index in range(CASES):
        scores, tokens = case(index)
        try:
            aligned, _ = torchaudio.functional.forced_align(
                torch.from_numpy(scores).unsqueeze(0),
                torch.tensor([tokens], dtype=torch.int32),
                blank=0,
            )
            paths.append(aligned[0].tolist())
        except RuntimeError:
            paths.append(None)  # more tokens than frames allow
    record = {
        "source": f"torchaudio {torchaudio.__version__} forced_align, blank 0",
        "seed": SEED,
        "paths": paths,
    }
    out.write_text(json.dumps(record, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
