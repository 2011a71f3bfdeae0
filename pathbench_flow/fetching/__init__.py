"""Fetching PathBench's models and n-gram LMs once, pinned and verified (config ``fetch``).

The lock, records, first-use pins and model downloads live in :mod:`.pinned`; LMs in
:mod:`.lms`; what a config needs fetched in :mod:`.plan`.
"""

from pathbench_flow.fetching.pinned import (
    FIRST_USE,
    LOCK_FILE,
    OFFLINE_VARIABLES,
    PUBLIC_RECORD,
    DigestMismatch,
    fetch_model,
    fetched_identity,
    lock,
    model_directory,
    model_entry,
)
from pathbench_flow.neural.models import LM_RECORD_SUFFIX, RECORD_FILE

__all__ = [
    "FIRST_USE",
    "LM_RECORD_SUFFIX",
    "LOCK_FILE",
    "OFFLINE_VARIABLES",
    "PUBLIC_RECORD",
    "RECORD_FILE",
    "DigestMismatch",
    "fetch_model",
    "fetched_identity",
    "lock",
    "model_directory",
    "model_entry",
]
