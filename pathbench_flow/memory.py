"""The memory a job declares, from the longest utterance validation accepts.

Validation refuses utterances longer than ``validation.max_utterance_s``
(:data:`~pathbench_flow.data.validation.MAX_UTTERANCE_S` by default), so that limit bounds what
any job reads at once. The ``RESOURCES`` table of workflow/rules/settings.smk covers utterances
up to the default limit; a config that accepts longer ones declares, per rule, the memory per
further minute that benchmarks/long_recordings.py measured (benchmarks/README.md, "Long
recordings"). Declarations follow the config, not the data, so they are known before any job
runs and identical on every run with the same config.

A model's memory is the exception: wav2vec2 takes ~22 MB per second of the utterance it runs
on (PathBench's large size; most of it the convolutional feature encoder's first layers), so a
limit that suits the signal measures would have every model job declare ~15 GB. A model track
job therefore declares from the longest utterance of the manifest slices it reads, which the
shard checkpoint has written before the job exists (:func:`model_track_memory`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

from pathbench_flow.data.validation import MAX_UTTERANCE_S


def declared_memory(
    resources: Mapping[str, Mapping[str, int]],
    per_minute: Mapping[str, float],
    max_utterance_s: float,
) -> dict[str, dict[str, int]]:
    """``resources`` with each ``mem_mb`` raised by ``per_minute[rule]`` MB for every minute
    ``max_utterance_s`` exceeds the default limit (rounded up to 100 MB); unchanged at or below
    the default."""
    extra_minutes = max(0.0, max_utterance_s - MAX_UTTERANCE_S) / 60
    return {
        rule: {
            **entry,
            "mem_mb": entry["mem_mb"]
            + 100 * math.ceil(per_minute.get(rule, 0.0) * extra_minutes / 100),
        }
        for rule, entry in resources.items()
    }


MODEL_BASE_SECONDS = 60.0
"""The longest utterance the model tracks' table entry covers (a large wav2vec2 over 60 s of
audio peaked at 3.1 GB of the 4 GB declared; benchmarks/README.md, "Long recordings")."""
MODEL_MB_PER_SECOND = 25
"""Declared per second of audio past :data:`MODEL_BASE_SECONDS` (measured: ~22)."""


def longest_utterance_s(manifest_paths: Iterable[str | Path]) -> float:
    """The longest utterance in the manifest slices ``manifest_paths`` (0 for none)."""
    import pyarrow.parquet as pq

    longest = 0.0
    for path in manifest_paths:
        durations = pq.read_table(path, columns=["duration_s"]).column("duration_s")
        if len(durations):
            longest = max(longest, float(max(durations.to_pylist())))
    return longest


def model_track_memory(base_mb: int, longest_s: float) -> int:
    """A model track job's ``mem_mb``: ``base_mb`` up to :data:`MODEL_BASE_SECONDS` of its
    longest utterance, :data:`MODEL_MB_PER_SECOND` more per further second (in steps of
    100 MB)."""
    extra = MODEL_MB_PER_SECOND * max(0.0, longest_s - MODEL_BASE_SECONDS)
    return base_mb + 100 * math.ceil(extra / 100)
