"""Declared memory follows the longest utterance validation accepts (pathbench_flow/memory.py)."""

from __future__ import annotations

from pathbench_flow.data.validation import MAX_UTTERANCE_S
from pathbench_flow.memory import declared_memory

TABLE = {"fa_trim": {"mem_mb": 3000, "runtime": 120}, "correlate": {"mem_mb": 2000, "runtime": 10}}


def test_the_default_limit_declares_the_table():
    assert declared_memory(TABLE, {"fa_trim": 9}, MAX_UTTERANCE_S) == TABLE
    assert declared_memory(TABLE, {"fa_trim": 9}, 30) == TABLE


def test_a_two_hour_limit_adds_the_growth_per_minute_in_steps_of_100_mb():
    declared = declared_memory(TABLE, {"fa_trim": 9}, 7200)
    # 110 minutes past the default 10: 990 MB, rounded up to 1000
    assert declared["fa_trim"] == {"mem_mb": 4000, "runtime": 120}
    assert declared["correlate"] == TABLE["correlate"]
