"""Declared memory follows the longest utterance validation accepts (pathbench_flow/memory.py)."""

from __future__ import annotations

import json

from pathbench_flow.data.validation import MAX_UTTERANCE_S
from pathbench_flow.runtime.memory import (
    ARPA,
    BENCHMARK_UNIGRAMS,
    BINARY,
    KENLM_BINARY_MAGIC,
    LM_BASE_MB,
    LM_MB_PER_GB,
    UNKNOWN_LM_BYTES,
    arpa_unigrams,
    declared_memory,
    lm_job_memory,
    lm_kind,
    lm_memory_mb,
    longest_utterance_s,
    model_track_memory,
)

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


SUFFIX = ".fetched.json"


def _lm_file(path, kind, size):
    """A sparse file of ``size`` bytes that starts as an LM of ``kind`` does."""
    start = KENLM_BINARY_MAGIC + b" format version 5\n" if kind == BINARY else b"\\data\\\n"
    with path.open("wb") as handle:
        handle.write(start)
        handle.truncate(size)
    return path


def test_lm_memory_grows_with_the_file_by_its_kind():
    assert lm_memory_mb(ARPA, 0) == 100 * -(-LM_BASE_MB[ARPA] // 100)
    ten_gb = {kind: lm_memory_mb(kind, 10 * 10**9) for kind in (ARPA, BINARY)}
    for kind, declared in ten_gb.items():
        assert declared >= LM_BASE_MB[kind] + 10 * LM_MB_PER_GB[kind]
        assert declared % 100 == 0
    # an unknown kind declares the larger of the two
    assert lm_memory_mb(None, 10 * 10**9) == max(ten_gb.values())


def test_the_kind_is_read_from_kenlms_binary_magic(tmp_path):
    assert lm_kind(_lm_file(tmp_path / "a.arpa.bin", BINARY, 100)) == BINARY
    # KenLM parses anything else as ARPA, whatever its name
    assert lm_kind(_lm_file(tmp_path / "b.bin", ARPA, 100)) == ARPA


def test_an_arpa_files_vocabulary_adds_to_its_memory(tmp_path):
    """pyctcdecode builds a trie of an ARPA file's words: a large vocabulary needs GBs."""
    arpa = tmp_path / "big_vocabulary.arpa"
    arpa.write_text("\\data\\\nngram 1=3000000\nngram 2=10\n")
    assert arpa_unigrams(arpa) == 3_000_000
    assert arpa_unigrams(_lm_file(tmp_path / "no_header.arpa", ARPA, 100)) == BENCHMARK_UNIGRAMS
    size = arpa.stat().st_size
    declared = lm_job_memory(arpa, arpa, SUFFIX, {})
    assert declared == lm_memory_mb(ARPA, size, 3_000_000)
    # 200 MB, and 2.7 million words past the benchmark's at 450 bytes each: 1,159 MiB more
    assert declared == 1400


def test_an_lm_job_declares_from_the_opened_file_then_the_record_then_the_lock(tmp_path):
    configured = tmp_path / "wiki_nl_token.arpa"
    entry = {"language": "nl", "path": "lms/wiki_nl_token.arpa", "archive": "lms.zip"}
    members: list[dict] = []
    lock = {"lms": [entry], "archives": [{"file": "lms.zip", "members": members}]}

    def declared():
        return lm_job_memory(configured, configured, SUFFIX, lock)

    unknown = lm_memory_mb(None, UNKNOWN_LM_BYTES)
    assert declared() == unknown
    # the .arpa's size does not tell: the fetch takes the .arpa.bin if the archive holds one
    members.append({"name": "lms/wiki_nl_token.arpa", "size": 5 * 10**9})
    assert declared() == unknown
    members.append({"name": "lms/wiki_nl_token.arpa.bin", "size": 3 * 10**9})
    assert declared() == lm_memory_mb(BINARY, 3 * 10**9)
    record = configured.with_name(configured.name + SUFFIX)
    member = {"name": "lms/wiki_nl_token.arpa.bin", "size": 10**9, "crc32": "0"}
    record.write_text(json.dumps({"file": "wiki_nl_token.arpa.bin", "member": member}))
    assert declared() == lm_memory_mb(BINARY, 10**9)
    _lm_file(configured, ARPA, 7 * 10**9)
    assert declared() == lm_memory_mb(ARPA, 7 * 10**9)
    # nothing readable anywhere: the stated default
    assert lm_job_memory(tmp_path / "mine.arpa", tmp_path / "mine.arpa", SUFFIX, {}) == unknown


def test_the_shipped_lock_sizes_english_only(tmp_path):
    """PathBench's English LM is a listed 14.6 GB binary; the other languages' sizes are
    unpublished until the archive's directory is read."""
    from pathbench_flow.fetching import lock

    shipped = lock()
    for name, expected in (
        ("wiki_en_token.arpa", lm_memory_mb(BINARY, 14_600_342_241)),
        ("wiki_nl_token.arpa", lm_memory_mb(None, UNKNOWN_LM_BYTES)),
    ):
        path = tmp_path / name
        assert lm_job_memory(path, path, SUFFIX, shipped) == expected
    assert lm_memory_mb(BINARY, 14_600_342_241) == 14200
