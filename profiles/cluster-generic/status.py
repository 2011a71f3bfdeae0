#!/usr/bin/env python3
"""Cluster status command for snakemake-executor-plugin-cluster-generic on SLURM.

Called as ``status.py <jobid>`` with the line that ``sbatch --parsable`` printed (``<id>`` or
``<id>;<cluster>``); prints exactly one of ``running``, ``success`` or ``failed``.

It asks ``squeue`` first: the controller keeps a finished job for MinJobAge seconds (300 by
default), far longer than Snakemake's status-check interval. A job the controller no longer
knows is looked up with ``sacct`` where an accounting database answers; if that does not know
it either, it is reported ``failed`` and Snakemake reruns it. When the controller cannot be
reached at all, the job is reported ``running`` so that a brief outage does not fail the run;
the next check asks again.

Only the standard library is used, so any python3 on the submit host runs it.
"""

from __future__ import annotations

import subprocess
import sys

ACTIVE = {
    "PENDING",
    "CONFIGURING",
    "RUNNING",
    "COMPLETING",
    "SUSPENDED",
    "REQUEUED",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
    "RESIZING",
    "SIGNALING",
    "STAGE_OUT",
    "STOPPED",
    "RESV_DEL_HOLD",
    "POWER_UP_NODE",
    "UPDATE_DB",
}
"""States of a job that has not ended (or is ending): keep waiting."""
SUCCESS = {"COMPLETED"}
"""Every other state (FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL,
DEADLINE, PREEMPTED, ...) is a failure."""
TIMEOUT_S = 30
UNKNOWN_JOB = "Invalid job id"


def _run(command: list[str]) -> tuple[int, str, str]:
    """Return code, stdout and stderr; 127 when the command is missing, 124 when it hangs."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    except FileNotFoundError:
        return 127, "", f"{command[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, "", f"{command[0]}: no answer within {TIMEOUT_S} s"
    return result.returncode, result.stdout, result.stderr


def _first_state(stdout: str) -> str | None:
    lines = [line.split()[0] for line in stdout.splitlines() if line.strip()]
    # "CANCELLED by 0" -> CANCELLED; sacct marks truncated values with "+".
    return lines[0].rstrip("+") if lines else None


def job_state(external_id: str) -> tuple[str | None, str]:
    """The job's SLURM state (None when unknown) and a note on how it was found."""
    jobid, _, cluster_name = external_id.strip().partition(";")
    cluster = [f"--clusters={cluster_name}"] if cluster_name else []
    rc, out, err = _run(
        ["squeue", *cluster, "--noheader", "--states=all", "--jobs", jobid, "--format=%T"]
    )
    state = _first_state(out) if rc == 0 else None
    if state:
        return state, "squeue"
    if rc != 0 and UNKNOWN_JOB not in err:
        return "UNREACHABLE", f"squeue failed ({rc}): {err.strip()}"
    rc, out, err = _run(
        [
            "sacct",
            *cluster,
            "--noheader",
            "--parsable2",
            "--allocations",
            "--jobs",
            jobid,
            "--format=State",
        ]
    )
    state = _first_state(out) if rc == 0 else None
    if state:
        return state, "sacct"
    return None, f"job {jobid} is gone from squeue and sacct does not know it"


def classify(state: str | None) -> str:
    if state in ACTIVE or state == "UNREACHABLE":
        return "running"
    if state in SUCCESS:
        return "success"
    return "failed"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: status.py <jobid>", file=sys.stderr)
        return 2
    state, note = job_state(argv[1])
    if state is None or state == "UNREACHABLE":
        print(f"status.py: {note}", file=sys.stderr)
    print(classify(state))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
