"""When the last run that ran jobs started and ended, for the report's landing page.

Snakemake's report keeps per-job times in its Statistics panel but gives the landing page's
template (workflow/report/workflow.rst) only the config. So the workflow's ``onstart`` and
``onsuccess`` handlers (workflow/Snakefile), which Snakemake calls in the main process of a run
that has jobs to do (not for a dry run, a report, or a run with nothing to do), write this
record, and the landing page reads it back through :func:`run_summary`.

The record lives under ``logs/``, apart from ``results/``: a time differs from run to run, and
the results' Parquet, CSV and JSON files must be byte-identical for the same inputs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pathbench_flow.common.io import write_json

RUN_RECORD = Path("logs/run.json")
"""Relative to the working directory, where Snakemake writes ``logs/`` and ``results/``."""


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def record_start(
    version: str, path: Path = RUN_RECORD, identity: Mapping[str, Any] | None = None
) -> None:
    """A run starts its jobs: its start, and no end until :func:`record_finish`, so that a run
    that fails leaves a record saying it did not finish, not the previous run's times.
    ``identity`` says which configuration's run it is (:mod:`~pathbench_flow.runtime.results_run`),
    so that a
    report of results moved back in from elsewhere gives no other run's times."""
    record = {"version": version, "started": _now().isoformat(), "finished": None}
    write_json(record | ({"identity": dict(identity)} if identity else {}), path)


def record_finish(path: Path = RUN_RECORD) -> None:
    """The run's jobs all succeeded: its end and how many seconds it took."""
    record = json.loads(path.read_text(encoding="utf-8"))
    finished = _now()
    record["finished"] = finished.isoformat()
    started = datetime.fromisoformat(record["started"])
    record["seconds"] = round((finished - started).total_seconds())
    write_json(record, path)


def duration(seconds: int) -> str:
    """``seconds`` as a reader says it: ``45 s``, ``3 min 12 s``, ``2 h 05 min``."""
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def run_summary(path: Path = RUN_RECORD, identity: Mapping[str, Any] | None = None) -> str:
    """One sentence on the last run that ran jobs, or why there is none to tell: also when
    that run was of another configuration than ``identity``, the results' run."""
    if not path.exists():
        return (
            f"No run record ({path}): the results were computed by a run that did not write "
            "one (an older pathbench-flow, or a run with --no-hooks)."
        )
    record = json.loads(path.read_text(encoding="utf-8"))
    if identity is not None and record.get("identity", identity) != identity:
        return (
            f"Not known: the last run recorded ({path}) was of another configuration than "
            "the one whose results these are."
        )
    started = record["started"].replace("T", " ").replace("+00:00", " UTC")
    if record["finished"] is None:
        return (
            f"The last run (pathbench-flow {record['version']}) started {started} and did "
            "not finish: it failed or was stopped."
        )
    return (
        f"The last run that had jobs to do (pathbench-flow {record['version']}) started "
        f"{started} and took {duration(record['seconds'])}."
    )
