"""What the workflow's DAG needs to know about a dataset directory before any job runs.

The input functions and the job plan read a few facts off each configured dataset: which
optional Kaldi files exist (they become validation's inputs), which audio ``wav.scp`` lists,
and how many utterances ``utt2spk`` has (the number of shards). Every job parses the workflow
again, and a job that shares no file system with the main process sees none of the dataset, so
it must be told those facts rather than read them: the main process gathers them once
(:func:`gather`) and ships them with the workflow's sources; the job reads them back
(:class:`DatasetFacts`), so its inputs are exactly the ones the main process planned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pathbench_flow.common.staging import FACTS_KEY
from pathbench_flow.data.manifest import count_utterances
from pathbench_flow.data.shard_plan import listed_audio

__all__ = ["FACTS_KEY", "DatasetFacts", "directory_facts", "gather"]


def directory_facts(directory: str | Path, names: Iterable[str]) -> dict[str, Any]:
    """The facts of one directory: which of ``names`` exist, the audio files its ``wav.scp``
    lists (whether or not they are here: they may be in the storage provider only), its number
    of utterances (None without utt2spk)."""
    path = Path(directory)
    present = sorted(name for name in names if (path / name).is_file())
    return {
        "present": present,
        "audio": listed_audio(path, existing_only=False),
        "utterances": count_utterances(path) if "utt2spk" in present else None,
    }


def gather(directories: Iterable[str | Path], names: Iterable[str]) -> dict[str, Any]:
    """The facts of every directory, keyed by its configured path, for a config file."""
    names = tuple(names)
    return {FACTS_KEY: {str(d): directory_facts(d, names) for d in sorted(map(str, directories))}}


class DatasetFacts:
    """The facts of dataset directories: read from disk where the datasets are (``shipped``
    None, or a directory ``read_from_disk`` selects; read on every call, as a checkpoint may
    have just written the directory), else from the shipped facts, where a directory missing
    from them is an error."""

    def __init__(
        self,
        shipped: Mapping[str, Any] | None,
        read_from_disk: Callable[[Path], bool] = lambda directory: False,
    ) -> None:
        self._shipped = shipped
        self._read_from_disk = read_from_disk

    def _on_disk(self, directory: str | Path) -> bool:
        return self._shipped is None or self._read_from_disk(Path(directory))

    def _of(self, directory: str | Path) -> dict[str, Any]:
        key = str(directory)
        assert self._shipped is not None
        if key not in self._shipped:
            raise KeyError(
                f"{key}: the main process shipped no facts about this dataset directory "
                f"(it knew {', '.join(sorted(self._shipped)) or 'none'}); run the same "
                "configuration in the main process and the jobs"
            )
        return self._shipped[key]

    def has(self, directory: str | Path, name: str) -> bool:
        if self._on_disk(directory):
            return (Path(directory) / name).is_file()
        return name in self._of(directory)["present"]

    def audio(self, directory: str | Path) -> list[str]:
        if self._on_disk(directory):
            return listed_audio(directory)
        return list(self._of(directory)["audio"])

    def utterances(self, directory: str | Path) -> int | None:
        if self._on_disk(directory):
            return count_utterances(directory) if self.has(directory, "utt2spk") else None
        return self._of(directory)["utterances"]
