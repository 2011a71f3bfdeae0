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

An n-gram transcription job's memory is its LM's, GBs for PathBench's (the English one a
14.6 GB KenLM binary): it declares from the kind and size of the LM file its decoder opens, or
before the file is fetched from what the fetch record or the lock says of it
(:func:`lm_job_memory`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

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


KENLM_BINARY_MAGIC = b"mmap lm http://kheafield.com/code"
"""How a KenLM binary file starts (lm/binary_format.cc, kMagicBytes and the magic of an
unfinished build); KenLM parses any other file as ARPA text."""
ARPA, BINARY = "arpa", "binary"
LM_MB_PER_GB = {ARPA: 600, BINARY: 960}
"""Peak RSS (MiB, as Snakemake's ``mem_mb`` and SLURM's ``--mem`` count) of pyctcdecode's
decoder, building it and decoding an utterance, per GB (10^9 bytes) of the LM file:
benchmarks/lm_memory.py's least-squares slopes over generated word 3-gram LMs of 0.25-2 GB
(benchmarks/README.md, "n-gram LM memory"), 566 and 954, rounded up. KenLM reads an ARPA file
into probing hash tables; it maps a binary with ``MAP_POPULATE``, so the whole file is resident
as file-backed pages, which an RSS or cgroup limit counts: 954 MiB is 10^9 bytes."""
LM_BASE_MB = {ARPA: 200, BINARY: 100}
"""The fits' intercepts (162 and 37 MiB), rounded up. For an ARPA file most of it is the
unigram list and the trie pyctcdecode builds from it, which a binary file does not give it:
:data:`BENCHMARK_UNIGRAMS` words."""
BENCHMARK_UNIGRAMS = 300_000
"""The vocabulary of the benchmark's ARPA files, which :data:`LM_BASE_MB` covers."""
BYTES_PER_UNIGRAM = 450
"""An ARPA file's further words (its header's ``ngram 1=``) past :data:`BENCHMARK_UNIGRAMS`:
a 0.2 GB ARPA file of 3,000,000 words peaked at 1,395 MiB, 1,120 more than the fit gives at
300,000 (435 bytes a word, rounded up)."""
UNKNOWN_LM_BYTES = 14_600_342_241
"""An LM's size before anything tells it (a fetched LM whose size neither its fetch record nor
the lock gives): PathBench's English binary, the largest of its LMs whose size is known, read
as whichever kind needs more memory. Snakemake evaluates the job's memory again once the
fetch has written its record."""


def lm_memory_mb(kind: str | None, size_bytes: int, unigrams: int = BENCHMARK_UNIGRAMS) -> int:
    """The memory (MB, in steps of 100) a decoder over an LM file of ``size_bytes`` takes, for
    ``kind`` :data:`ARPA` (of ``unigrams`` words) or :data:`BINARY` (None: unknown, the
    larger of the two)."""
    words = BYTES_PER_UNIGRAM * max(0, unigrams - BENCHMARK_UNIGRAMS) / 2**20
    needed = max(
        LM_BASE_MB[k] + LM_MB_PER_GB[k] * size_bytes / 1e9 + (words if k == ARPA else 0)
        for k in ((kind,) if kind else (ARPA, BINARY))
    )
    return 100 * math.ceil(needed / 100)


def lm_kind(path: str | Path) -> str:
    """:data:`BINARY` for a file starting with KenLM's binary magic, else :data:`ARPA`."""
    with Path(path).open("rb") as handle:
        start = handle.read(len(KENLM_BINARY_MAGIC))
    return BINARY if start == KENLM_BINARY_MAGIC else ARPA


def arpa_unigrams(path: str | Path) -> int:
    """The word count an ARPA file's header gives (``ngram 1=``), else
    :data:`BENCHMARK_UNIGRAMS`."""
    with Path(path).open("rb") as handle:
        header = handle.read(4096)
    found = re.search(rb"^ngram 1=(\d+)", header, re.MULTILINE)
    return int(found.group(1)) if found else BENCHMARK_UNIGRAMS


def _kind_by_name(name: str) -> str | None:
    """An LM's kind from its file name, where the file is not there to read (None: unsure)."""
    return ARPA if name.endswith(".arpa") else BINARY if name.endswith(".bin") else None


def _json(path: Path) -> dict[str, Any]:
    """A JSON object read from ``path``, or ``{}`` when it is missing or not one."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _size(value: Any) -> int | None:
    """A byte count from a record's ``size`` or ``{"size": …}``, else None."""
    if isinstance(value, Mapping):
        value = value.get("size")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def recorded_lm(path: Path, record_suffix: str) -> tuple[str | None, int] | None:
    """Kind and size of the LM file the fetch chose for the configured ``path``, from its
    record ``<path><record_suffix>`` (``"file"``, the chosen file's name, and ``"member"``,
    with the archive member's ``size``); None without one."""
    record = _json(path.with_name(path.name + record_suffix))
    size = _size(record.get("member")) or _size(record.get("size"))
    if size is None:
        return None
    return _kind_by_name(str(record.get("file", path.name))), size


def locked_lm(path: Path, lock: Mapping[str, Any]) -> tuple[str, int] | None:
    """Kind and size of the LM the configured ``path`` names, from the lock: its ``lms`` entry
    (whose ``path`` ends in the same file name) and the ``members`` its archive lists. The
    fetch takes the ``.arpa.bin`` beside an ``.arpa`` path over the ``.arpa`` when the archive
    holds it, as PathBench opens it, so only a listed first choice tells; else None."""
    entry = next(
        (
            e
            for e in lock.get("lms", [])
            if isinstance(e, Mapping) and Path(str(e.get("path", ""))).name == path.name
        ),
        None,
    )
    if entry is None:
        return None
    archive = next(
        (a for a in lock.get("archives", []) if a.get("file") == entry.get("archive")), {}
    )
    named = str(entry["path"])
    first = named + ".bin" if named.endswith(".arpa") else named
    for member in archive.get("members", []):
        if isinstance(member, Mapping) and member.get("name") == first and _size(member):
            return (BINARY if first.endswith(".bin") else ARPA), member["size"]
    return None


def lm_job_memory(
    configured: str | Path, opened: Path, record_suffix: str, lock: Mapping[str, Any]
) -> int:
    """The memory of decoding with the LM configured as ``configured``: from ``opened`` (the
    file the decoder opens), if it is there; else from the fetch record; else from the lock;
    else :data:`UNKNOWN_LM_BYTES` of either kind. Only the file tells an ARPA LM's
    vocabulary; before it, :data:`BENCHMARK_UNIGRAMS` is assumed."""
    if opened.is_file():
        kind, size = lm_kind(opened), opened.stat().st_size
        return lm_memory_mb(kind, size, arpa_unigrams(opened) if kind == ARPA else 0)
    configured = Path(configured).expanduser()
    known = recorded_lm(configured, record_suffix) or locked_lm(configured, lock)
    return lm_memory_mb(*known) if known else lm_memory_mb(None, UNKNOWN_LM_BYTES)
