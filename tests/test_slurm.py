"""The demo workflow on a real SLURM, through both profiles, gives the local run's bytes.

Each profile in profiles/ is copied and given this cluster's site values: the partition and
CPU count of an idle node, an account (any name is accepted without an accounting database),
squeue as the status command (CI's SLURM has no accounting), and short status-check
intervals. Everything else (resources, no groups) is the profile as shipped.

Needs a SLURM controller with an idle node and the executor plugins (`pip install -e
".[cluster]"`); CI starts one with .ci/slurm-up.sh. Locally the tests skip with the reason when
SLURM is missing; with CI=true they fail instead. The scratch workflow copies live under
pytest's temporary directory, which slurmd must see (true for a single-node CI cluster).

Overrides for another cluster: PATHBENCH_SLURM_PARTITION, PATHBENCH_SLURM_ACCOUNT,
PATHBENCH_SLURM_STATUS_COMMAND (default squeue).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from test_resume import reference_run

from pathbench_flow.testing.workflow_run import (
    REPO,
    copy_workflow,
    output_files,
    start_snakemake,
    wait_or_kill,
)

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

RUN_TIMEOUT_S = 45 * 60
IN_CI = os.environ.get("CI", "").lower() == "true"


def _idle_node() -> tuple[str, int] | str:
    """(partition, CPUs) of an idle node, or why there is none."""
    if shutil.which("sinfo") is None:
        return "SLURM is not installed (no sinfo)"
    try:
        result = subprocess.run(
            ["sinfo", "--noheader", "--Node", "--states=idle", "--format=%P %c"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 60 s"
    if result.returncode != 0:
        return f"sinfo failed: {result.stderr.strip()}"
    nodes = [line.split() for line in result.stdout.splitlines() if line.strip()]
    wanted = os.environ.get("PATHBENCH_SLURM_PARTITION")
    for partition, cpus in sorted(nodes, key=lambda n: not n[0].endswith("*")):
        if wanted in (None, partition.rstrip("*")):
            return partition.rstrip("*"), int(cpus)
    return "no idle SLURM node" + (f" in partition {wanted}" if wanted else "")


def _require(plugin: str) -> tuple[str, int]:
    """The idle node to use; skip (fail in CI) when SLURM or the executor plugin is missing."""
    node = _idle_node()
    problem = node if isinstance(node, str) else None
    if problem is None and importlib.util.find_spec(plugin) is None:
        problem = f"{plugin} is not installed (pip install -e '.[cluster]')"
    if problem is not None:
        if IN_CI:
            pytest.fail(f"CI needs SLURM for this test: {problem}")
        pytest.skip(reason=problem)
    return node


# Requested before local_run, so that a missing SLURM skips before the local reference run.
@pytest.fixture(scope="module")
def slurm_plugin_node():
    return _require("snakemake_executor_plugin_slurm")


@pytest.fixture(scope="module")
def generic_plugin_node():
    return _require("snakemake_executor_plugin_cluster_generic")


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    return reference_run(tmp_path_factory)[0]


def _site_profile(name: str, target: Path, partition: str, cpus: int, **extra) -> Path:
    """A copy of profiles/<name> with this cluster's values: partition, account, CPU cap."""
    profile = target / name
    shutil.copytree(REPO / "profiles" / name, profile)
    config = yaml.safe_load((profile / "config.yaml").read_text())
    config["default-resources"] |= {
        "slurm_partition": partition,
        "slurm_account": os.environ.get("PATHBENCH_SLURM_ACCOUNT", "pathbench-ci"),
    }
    config["cores"] = cpus
    config.update(extra)
    (profile / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return profile


def _cancel_jobs_in(workdir: Path) -> None:
    """scancel every job whose working directory is inside ``workdir``."""
    listing = subprocess.run(
        ["squeue", "--noheader", "--format=%i %Z"], capture_output=True, text=True, timeout=60
    ).stdout
    ids = [
        line.split()[0]
        for line in listing.splitlines()
        if len(line.split()) == 2 and Path(line.split()[1]).is_relative_to(workdir)
    ]
    if ids:
        subprocess.run(["scancel", *ids], timeout=60)


def _run(workdir: Path, *args: str) -> str:
    """Run snakemake in its own process group; its output. Times out after RUN_TIMEOUT_S."""
    log_path = workdir / "snakemake.out"
    with open(log_path, "w") as log:
        process = start_snakemake(workdir, log, *args)
        try:
            returncode = wait_or_kill(process, RUN_TIMEOUT_S)
        finally:
            _cancel_jobs_in(workdir)
    text = log_path.read_text()
    if returncode != 0:
        what = "timed out" if returncode is None else f"failed ({returncode})"
        raise AssertionError(f"snakemake {' '.join(args)} {what}:\n{text[-6000:]}")
    return text


def _assert_same_outputs(local: Path, cluster: Path) -> None:
    expected, got = output_files(local), output_files(cluster)
    assert sorted(got) == sorted(expected)
    differing = sorted(name for name in expected if got[name] != expected[name])
    assert not differing, f"outputs differ from the local run: {differing}"


def test_slurm_executor_plugin_profile(slurm_plugin_node, local_run, tmp_path):
    partition, cpus = slurm_plugin_node
    profile = _site_profile(
        "slurm",
        tmp_path,
        partition,
        cpus,
        **{
            "slurm-status-command": os.environ.get("PATHBENCH_SLURM_STATUS_COMMAND", "squeue"),
            "slurm-init-seconds-before-status-checks": 2,
            "slurm-keep-successful-logs": True,
        },
    )
    workdir = copy_workflow(tmp_path / "workflow")
    text = _run(workdir, "--profile", str(profile))

    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", text)
    assert submitted, "no job was submitted to SLURM"
    # The profile forms no groups (see its config.yaml): every job is its own SLURM job.
    assert "Group job" not in text
    # Jobs are named after the run ID, which `scancel --name <run ID>` relies on (docs/clusters.md).
    run_id = re.search(r"SLURM run ID: (\S+)", text)
    assert run_id, text[:3000]
    listed = subprocess.run(
        ["squeue", "--noheader", "--states=all", "--name", run_id[1], "--format=%i %T"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    states = dict(line.split() for line in listed.stdout.splitlines() if line.strip())
    assert set(states) <= set(submitted) and states, listed.stdout + listed.stderr
    assert set(states.values()) == {"COMPLETED"}, states
    _assert_same_outputs(local_run, workdir)


def test_cluster_generic_profile(generic_plugin_node, local_run, tmp_path):
    partition, cpus = generic_plugin_node
    profile = _site_profile(
        "cluster-generic", tmp_path, partition, cpus, **{"seconds-between-status-checks": 2}
    )
    workdir = copy_workflow(tmp_path / "workflow")
    text = _run(workdir, "--profile", str(profile))

    submitted = re.findall(r"Submitted (?:group )?job \S+ with external jobid '(\d+)", text)
    assert submitted, "no job was submitted to SLURM"
    # The profile submits every job on its own (no groups: see its config.yaml).
    assert "Submitted group job" not in text
    assert len(set(submitted)) == len(submitted), "two jobs share one SLURM job id"
    assert sorted((workdir / "logs/slurm").glob("*.log")), "sbatch wrote no job log"
    _assert_same_outputs(local_run, workdir)
