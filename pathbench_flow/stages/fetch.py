"""The fetch rules' stages: one pinned checkpoint or LM of the lock, downloaded and verified.

They run as local rules on the host that runs Snakemake (the one with internet); the offline
switch every job inherits (:data:`pathbench_flow.fetching.OFFLINE_VARIABLES`) is lifted here
only, before huggingface_hub is imported, since it reads the switch at import.
"""

from __future__ import annotations

import os
from pathlib import Path

from pathbench_flow import fetching


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
    """LM ``file`` of the lock beside its ``record`` (extracted from its archive, fetched
    under the same root by :func:`fetch_archive`, if it comes in one)."""
    entry = fetching.lm_entry(file, lock_file)
    if entry is None:
        raise ValueError(f"{file!r} is no LM of {lock_file}")
    path = Path(record)
    target = path.with_name(path.name.removesuffix(fetching.LM_RECORD_SUFFIX))
    archive = entry.get("archive")
    fetching.fetch_lm(
        entry, target, fetching.archive_path(target.parent.parent, archive) if archive else None
    )


def fetch_archive(
    name: str, record: str | Path, lock_file: str | Path = fetching.LOCK_FILE
) -> None:
    """Archive ``name`` of the lock beside its ``record``."""
    entry = fetching.archive_entry(name, lock_file)
    if entry is None:
        raise ValueError(f"{name!r} is no archive of {lock_file}")
    path = Path(record)
    fetching.fetch_archive(entry, path.with_name(path.name.removesuffix(fetching.LM_RECORD_SUFFIX)))
