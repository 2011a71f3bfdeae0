"""Declared memory follows the longest utterance validation accepts (pathbench_flow/memory.py)."""

from __future__ import annotations

from pathbench_flow.data.validation import MAX_UTTERANCE_S
from pathbench_flow.memory import declared_memory, longest_utterance_s, model_track_memory

TABLE = {"fa_trim": {"mem_mb": 3000, "runtime": 120}, "correlate": {"mem_mb": 2000, "runtime": 10}}


def test_the_default_limit_declares_the_table():
    assert declared_memory(TABLE, {"fa_trim": 9}, MAX_UTTERANCE_S) == TABLE
    assert declared_memory(TABLE, {"fa_trim": 9}, 30) == TABLE


def test_a_two_hour_limit_adds_the_growth_per_minute_in_steps_of_100_mb():
    declared = declared_memory(TABLE, {"fa_trim": 9}, 7200)
    # 110 minutes past the default 10: 990 MB, rounded up to 1000
    assert declared["fa_trim"] == {"mem_mb": 4000, "runtime": 120}
    assert declared["correlate"] == TABLE["correlate"]


def _slice(path, durations):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table(
            {
                "utt_id": [f"u{k}" for k in range(len(durations))],
                "duration_s": pa.array(durations, pa.float64()),
            }
        ),
        path,
    )
    return path


def test_a_model_job_declares_from_the_longest_utterance_it_reads(tmp_path):
    short = _slice(tmp_path / "0000.parquet", [1.5, 3.0, 59.0])
    long = _slice(tmp_path / "0001.parquet", [2.0, 600.0])
    empty = _slice(tmp_path / "0002.parquet", [])
    assert longest_utterance_s([short, empty]) == 59.0
    assert longest_utterance_s([short, long]) == 600.0
    assert model_track_memory(4000, longest_utterance_s([short])) == 4000
    # 540 s past the first minute at 25 MB/s: 13,500 MB more, what a large wav2vec2 needs
    assert model_track_memory(4000, longest_utterance_s([short, long])) == 17500
    assert model_track_memory(4000, 60.5) == 4100
