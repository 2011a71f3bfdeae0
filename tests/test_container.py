"""The image built from the Dockerfile runs every job of the `.test` workflow under
`--sdm apptainer`, with a clean environment, and gives the host run's bytes.

The image is built with podman on a Debian bookworm base that the harness debootstraps from
Debian's archive, as no container registry is reachable from CI (.ci/container/build-image.sh;
the Dockerfile's `ARG BASE` takes it). Apptainer itself is not installable here (no Debian
bookworm package; its releases come from GitHub), so `apptainer` on PATH is a launcher
(.ci/container/apptainer) that runs each `apptainer exec` Snakemake issues in that image with
podman, read-only, binding what Apptainer binds, and logs it. Snakemake's own apptainer path is
what runs: the `container:` of each rule, the command line it builds, the bind of its modules
for scripts. `--apptainer-args --cleanenv` keeps the caller's environment (Snakemake's thread
variables included) out of the jobs, so the bytes can only match if the image sets what the
results depend on.

Needs root, podman, runc and debootstrap (.ci/run installs them); skipped locally without them,
failed instead with CI=true. The first build takes minutes; the debootstrap base is cached for
the day under ${TMPDIR:-/tmp}/pathbench-container-<date>, and podman reuses the image's layers.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pathbench_flow import __version__
from pathbench_flow.testing.workflow_run import (
    LOCAL_RUN,
    REPO,
    copy_workflow,
    full_log,
    start_snakemake,
    wait_or_kill,
)

pytestmark = [pytest.mark.container, pytest.mark.slow]

HARNESS = REPO / ".ci" / "container"
IN_CI = os.environ.get("CI", "").lower() == "true"
BUILD_TIMEOUT_S = 60 * 60
RUN_TIMEOUT_S = 30 * 60
TEST_CONFIG = ".test/config/config.yaml"
JOB_HEADER = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$", re.MULTILINE)


def _missing() -> str | None:
    """Why the image cannot be built here, or None."""
    if os.geteuid() != 0:
        return "debootstrap and rootful podman need root"
    tools = [tool for tool in ("podman", "runc", "debootstrap") if shutil.which(tool) is None]
    if tools:
        return f"{', '.join(tools)} not installed (apt-get install podman runc debootstrap)"
    return None


@pytest.fixture(scope="module")
def image() -> str:
    """The podman image of the Dockerfile, built on a debootstrapped bookworm."""
    problem = _missing()
    if problem:
        if IN_CI:
            pytest.fail(f"CI needs the container tools for this test: {problem}")
        pytest.skip(reason=f"container tools missing: {problem}")
    build = subprocess.run(
        ["bash", str(HARNESS / "build-image.sh")],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        env=os.environ | {"PYTHON": sys.executable},
    )
    assert build.returncode == 0, f"the image did not build:\n{build.stderr[-6000:]}"
    return build.stdout.splitlines()[-1]


def _run(workdir: Path, *args: str, environment: dict[str, str]) -> None:
    """`snakemake --cores 2` on the .test config in ``workdir``; fails with its output."""
    out = workdir / "snakemake.out"
    with open(out, "w") as log:
        process = start_snakemake(
            workdir,
            log,
            "--cores",
            "2",
            "--configfile",
            TEST_CONFIG,
            *args,
            environment=LOCAL_RUN | environment,
        )
        returncode = wait_or_kill(process, RUN_TIMEOUT_S)
    assert returncode == 0, f"snakemake {' '.join(args)} ended {returncode}:\n{out.read_text()}"


def _workflow_copy(target: Path) -> Path:
    workdir = copy_workflow(target)
    shutil.copytree(REPO / ".test", workdir / ".test")
    return workdir


def _results(workdir: Path) -> dict[str, bytes]:
    """Every file the run wrote under results/, by path relative to ``workdir``."""
    return {
        str(path.relative_to(workdir)): path.read_bytes()
        for path in sorted((workdir / "results").rglob("*"))
        if path.is_file()
    }


def _kernel_choice() -> dict[str, str]:
    """An OpenBLAS kernel other than the one this processor gets by default, as a machine that
    sets ``OPENBLAS_CORETYPE`` has it: a job that does not see the variable runs other kernels
    and computes other last bits (the run's p-values did, before the workflow passed it on)."""
    import numpy  # noqa: F401  (loads OpenBLAS, so that threadpoolctl lists it)
    from threadpoolctl import threadpool_info

    detected = {entry.get("architecture") for entry in threadpool_info()}
    return {"OPENBLAS_CORETYPE": "Sandybridge" if "Haswell" in detected else "Haswell"}


def test_every_job_runs_in_the_image_with_a_clean_environment_and_gives_the_host_bytes(
    image, tmp_path
):
    kernels = _kernel_choice()
    host = _workflow_copy(tmp_path / "host")
    _run(host, environment=kernels)

    contained = _workflow_copy(tmp_path / "container")
    calls = tmp_path / "apptainer.log"
    _run(
        contained,
        "--sdm",
        "apptainer",
        "--apptainer-args=--cleanenv",
        environment=kernels
        | {
            "PATH": f"{HARNESS}{os.pathsep}{os.environ['PATH']}",
            "PATHBENCH_LAUNCHER_IMAGE": image,
            "PATHBENCH_LAUNCHER_LOG": str(calls),
        },
    )

    jobs = [name for name in JOB_HEADER.findall(full_log(contained)) if name != "all"]
    logged = calls.read_text().splitlines() if calls.exists() else []
    assert jobs, "the run started no job"
    assert len(logged) == len(jobs), (
        f"{len(jobs)} jobs ran but the launcher ran {len(logged)} in the image:\n"
        + "\n".join(logged)
    )
    expected = f"pathbench-flow-{__version__}.sif\tcleanenv=yes\t"
    assert all(line.startswith(expected) for line in logged), "\n".join(logged)

    want, got = _results(host), _results(contained)
    assert want, "the host run wrote no results"
    assert sorted(got) == sorted(want)
    differing = [name for name in sorted(want) if got[name] != want[name]]
    assert not differing, f"{len(differing)} of {len(want)} files differ: {differing}"
