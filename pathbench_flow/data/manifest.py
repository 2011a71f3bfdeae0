"""The manifest: how many utterances a dataset has, their shards, and reading manifests back.

Later stages never read Kaldi files again; they read the manifest, whose ``shard`` column
splits the work into jobs of about ``shard_size`` utterances. One job per utterance would
drown Snakemake in scheduling (2,000 trivial jobs took 232 s), one job per dataset would leave
cores idle.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from pathbench_flow.common.io import read_parquet


def count_utterances(dataset_dir: str | Path) -> int:
    """Non-blank lines of utt2spk: the planning estimate of a dataset's size."""
    with open(Path(dataset_dir) / "utt2spk", "rb") as handle:
        return sum(1 for line in handle if line.strip())


def shard_count(n_utterances: int, shard_size: int) -> int:
    """Number of shards for ``n_utterances``; at least one so every stage has a job."""
    return max(1, math.ceil(n_utterances / shard_size))


def assign_shards(utt_ids: list[str], texts: list[str], n_shards: int) -> np.ndarray:
    """Shard of each utterance: contiguous, balanced blocks in (text, utt_id) order.

    Utterances of one text share a shard (or two, at a block's edge): a reference measure
    compares each utterance with the other recordings of its text, so a reference job then
    prepares the references of its own few texts, not of nearly every text of the corpus, and
    its cost follows its shard's size instead of the corpus's. Depends only on the set of
    (id, text) pairs, never on line order, so the same dataset always gives the same shards.
    """
    order = sorted(range(len(utt_ids)), key=lambda i: (texts[i], utt_ids[i]))
    shards = np.empty(len(utt_ids), dtype=np.int32)
    shards[order] = (np.arange(len(utt_ids)) * n_shards) // max(1, len(utt_ids))
    return shards


def in_utterance_order(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Per-shard frames as one, utterance rows in utt_id order (stably).

    Shards are blocks in text order, so their concatenation is not in utt_id order; a sum
    over a speaker's rows in that order would change in its last bits whenever the shard plan
    did. Sorted by utt_id, every speaker's rows come in one order whatever the shards.
    Frames without utterance rows (speaker tables) keep their order.
    """
    table = pd.concat(frames, ignore_index=True)
    if "utt_id" not in table.columns:
        return table
    return table.sort_values("utt_id", kind="mergesort", ignore_index=True)


def load_manifest(path: str | Path, shard: int | None = None) -> pd.DataFrame:
    """The manifest, or one shard of it, in utt_id order."""
    frame = read_parquet(path)
    if shard is not None:
        frame = frame[frame["shard"] == shard]
    return frame.reset_index(drop=True)


def read_tables(paths: Iterable[str | Path]) -> pd.DataFrame:
    """The score tables at ``paths`` as one frame (an empty frame for no paths), utterance
    rows in utt_id order so that speaker means do not depend on the shard plan."""
    frames = [read_parquet(p) for p in paths]
    if not frames:
        return pd.DataFrame()
    return in_utterance_order(frames)
