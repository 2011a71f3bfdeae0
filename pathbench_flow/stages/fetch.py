"""The fetch rules' stages: one pinned checkpoint, LM or archive directory of the lock,
downloaded and verified.

They run as local rules on the host that runs Snakemake (the one with internet); the offline
switch every job inherits (:data:`pathbench_flow.fetching.OFFLINE_VARIABLES`) is lifted here
only, before huggingface_hub is imported, since it reads the switch at import.
"""

from __future__ import annotations

import os
from pathlib import Path

from pathbench_flow import fetching
from pathbench_flow.fetching import lms


def _online() -> None:
    for name in fetching.OFFLINE_VARIABLES:
        os.environ.pop(name, None)


def fetch_model(
    hub_id: str, record: str | Path, lock_file: str | Path = fetching.LOCK_FILE
) -> None:
    """Checkpoint ``hub_id`` of the lock into the directory of ``record`` (its record)."""
    _online()
    entry = fetching.model_entry(hub_id, lock_file)
    if entry is None:
        raise ValueError(f"{hub_id!r} is no checkpoint of {lock_file}")
    fetching.fetch_model(entry, Path(record).parent)


def fetch_lm(file: str, record: str | Path, lock_file: str | Path = fetching.LOCK_FILE) -> None:
    """The member PathBench's code opens for LM path ``lms/<file>`` of the lock, written
    beside that path under the fetch directory, with its ``record`` (after the archive's
    directory is read by :func:`fetch_archive`)."""
    entry = lms.lm_entry(file, lock_file)
    root = Path(record).parents[len(Path(entry["path"]).parts) - 1]
    lms.fetch_lm(entry, lms.archive_entry(entry["archive"], lock_file), root)


def fetch_archive(
    name: str, record: str | Path, lock_file: str | Path = fetching.LOCK_FILE
) -> None:
    """The directory of archive ``name`` of the lock, read and recorded in ``record``."""
    lms.read_directory(lms.archive_entry(name, lock_file), Path(record).parent.parent)
