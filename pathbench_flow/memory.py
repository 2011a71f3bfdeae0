"""The memory a job declares, from the longest utterance validation accepts.

Validation refuses utterances longer than ``validation.max_utterance_s``
(:data:`~pathbench_flow.data.validation.MAX_UTTERANCE_S` by default), so that limit bounds what
any job reads at once. The ``RESOURCES`` table of workflow/rules/settings.smk covers utterances
up to the default limit; a config that accepts longer ones declares, per rule, the memory per
further minute that benchmarks/long_recordings.py measured (benchmarks/README.md, "Long
recordings"). Declarations follow the config, not the data, so they are known before any job
runs and identical on every run with the same config.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

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
