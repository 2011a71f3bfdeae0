"""A job plans from the dataset facts the main process shipped (pathbench_flow.data.facts): they
must answer as the dataset directory itself does."""

from __future__ import annotations

import pytest

from pathbench_flow.data.facts import FACTS_KEY, DatasetFacts, gather
from pathbench_flow.testing.kaldi_builder import build_dataset


def test_shipped_facts_answer_as_the_directory_does(tmp_path):
    root = build_dataset(tmp_path / "d")
    names = ("wav.scp", "utt2spk", "segments", "spk2age", "utt2score")
    shipped = DatasetFacts(gather([root], names)[FACTS_KEY])
    on_disk = DatasetFacts(None)
    for facts in (shipped, on_disk):
        assert [facts.has(root, name) for name in names] == [
            (root / name).is_file() for name in names
        ]
        assert facts.utterances(root) == 4
        assert facts.audio(root) == sorted(str(p) for p in (root / "wav").glob("*.wav"))
    with pytest.raises(KeyError, match="shipped no facts about this dataset directory"):
        shipped.has(tmp_path / "other", "wav.scp")
    # directories the workflow writes itself are always read where they are
    generated = DatasetFacts({}, read_from_disk=lambda directory: directory == root)
    assert generated.utterances(root) == 4
