"""Jobs that share no file system with Snakemake: inputs come from S3, outputs go back to it.

On Kubernetes or Google Batch a job sees only what Snakemake stages for it: its declared inputs,
downloaded from the storage plugin into the job's scratch, and the workflow's sources; only its
declared outputs leave it, uploaded when it ends. These tests give a single machine that model
without a cloud:

- an S3 API on 127.0.0.1 (moto's server), holding the datasets;
- snakemake-storage-plugin-s3 as the default storage provider, `--shared-fs-usage
  software-deployment` (the Python environment is every job's "image"; nothing else is shared)
  and `--job-deploy-sources` (each job downloads the workflow's source archive, as on Kubernetes);
- the cluster-generic executor submitting every job through tests/isolated_job.sh, which runs it
  in a mount namespace of its own with an empty tmpfs over the working directory (the job's
  scratch) and over the datasets' original directories.

The first two tests prove the harness on a small Snakefile: a job reads the copy of its
input staged from S3, sees the original directory and the submitting working directory empty,
and its output reaches the bucket; a job reading a file that is not among its inputs fails. The
others run the real workflow this way and compare every Parquet, CSV and JSON result downloaded
from the bucket with a local run's bytes.

Needs root (unshare), `pip install "moto[server]==5.2.5" "snakemake-storage-plugin-s3==0.3.6"`,
the cluster-generic executor plugin (`pip install -e ".[cluster]"`) and git (the workdir is a git
checkout, so that Snakemake's source archive holds exactly the tracked workflow files). Skipped
unless PATHBENCH_STORAGE_FORCE=1 or CI=true; then a missing prerequisite fails instead.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import posixpath
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from pathbench_flow.testing.workflow_run import (
    REPO,
    WORKFLOW_FILES,
    copy_workflow,
    output_files,
    snakemake,
    start_snakemake,
    wait_or_kill,
)

pytestmark = [pytest.mark.storage, pytest.mark.slow]

SUBMIT = Path(__file__).with_name("isolated_job.sh")
RUN_TIMEOUT_S = 45 * 60
BUCKET = "pathbench"
# moto accepts any credentials; the plugin needs some to sign its requests.
ACCESS_KEY, SECRET_KEY = "pathbench-test", "pathbench-test-secret"
REQUIRED = {
    "moto": 'pip install "moto[server]==5.2.5"',
    "flask": 'pip install "moto[server]==5.2.5"',
    "snakemake_storage_plugin_s3": 'pip install "snakemake-storage-plugin-s3==0.3.6"',
    "snakemake_executor_plugin_cluster_generic": "pip install -e '.[cluster]'",
}
ENABLED = (
    os.environ.get("PATHBENCH_STORAGE_FORCE") == "1" or os.environ.get("CI", "").lower() == "true"
)


def _missing() -> list[str]:
    """What this machine lacks for the tests, each with how to get it."""
    problems = [
        f"{module} is not installed ({install})"
        for module, install in REQUIRED.items()
        if importlib.util.find_spec(module) is None
    ]
    for tool in ("git", "unshare"):
        if shutil.which(tool) is None:
            problems.append(f"{tool} is not installed")
    if os.geteuid() != 0:
        problems.append("needs root: every job runs in a mount namespace of its own (unshare)")
    elif shutil.which("unshare"):
        probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True, text=True)
        if probe.returncode != 0:
            problems.append(f"unshare --mount is refused here: {probe.stderr.strip()}")
    return problems


NEEDS_S3 = (
    "needs root and a local S3 server: set PATHBENCH_STORAGE_FORCE=1 to run (CI=true runs it too)"
)
"""Why the storage tests skip on a machine that has not opted in."""


@pytest.fixture(scope="module")
def prerequisites() -> None:
    if not ENABLED:
        pytest.skip(reason=NEEDS_S3)
    problems = _missing()
    if problems:
        pytest.fail("the object-storage tests cannot run: " + "; ".join(problems))


@dataclass
class Bucket:
    """The S3 bucket of the local server, as the storage plugin sees it."""

    endpoint: str
    client: Any

    @staticmethod
    def key(run: str, path: str | Path) -> str:
        """The object key Snakemake gives a workflow path under the storage prefix
        ``s3://BUCKET/<run>``: the normalised path after the prefix (absolute ones too)."""
        return posixpath.normpath(f"{run}/{os.path.normpath(path)}")

    def upload(self, run: str, root: Path, named_as: str | Path) -> int:
        """Upload every file below ``root`` under the name the workflow gives it
        (``named_as``/<relative path>); the number of files."""
        files = sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            name = Path(named_as) / path.relative_to(root)
            self.client.upload_file(str(path), BUCKET, self.key(run, name))
        return len(files)

    def download(self, run: str, under: str, target: Path) -> int:
        """Download every object of ``run`` whose workflow path starts with ``under`` into
        ``target`` (at that path); the number of objects."""
        prefix = f"{run}/{under}/"
        count = 0
        for page in self.client.get_paginator("list_objects_v2").paginate(
            Bucket=BUCKET, Prefix=prefix
        ):
            for item in page.get("Contents", []):
                local = target / item["Key"][len(run) + 1 :]
                local.parent.mkdir(parents=True, exist_ok=True)
                self.client.download_file(BUCKET, item["Key"], str(local))
                count += 1
        return count

    def read(self, run: str, path: str) -> bytes:
        return self.client.get_object(Bucket=BUCKET, Key=self.key(run, path))["Body"].read()


@pytest.fixture(scope="module")
def bucket(prerequisites) -> Iterator[Bucket]:
    """An S3 server on 127.0.0.1 (a free port) with an empty bucket, for this module."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=BUCKET)
    try:
        yield Bucket(endpoint, client)
    finally:
        server.stop()


class IsolatedRunFailed(Exception):
    """Snakemake's run with isolated jobs failed (the workflow's gap, not a wrong result)."""


@dataclass
class IsolatedRun:
    """One Snakemake run whose jobs see nothing of ``hidden``: its log and the jobs' logs."""

    returncode: int | None
    log: str
    jobs: dict[str, tuple[str | None, str]]
    """job id → (exit status, or None while it had none; its log)."""

    def failed_jobs(self) -> str:
        return "\n".join(
            f"--- job {job} (exit {rc}):\n{text[-4000:]}"
            for job, (rc, text) in sorted(self.jobs.items())
            if rc != "0"
        )

    def explain(self) -> str:
        return f"snakemake exit {self.returncode}:\n{self.log[-6000:]}\n{self.failed_jobs()}"

    def require_success(self) -> None:
        if self.returncode != 0:
            raise IsolatedRunFailed(self.explain())


def _job_states(state: Path) -> dict[str, tuple[str | None, str]]:
    jobs = {}
    for script in sorted(state.glob("*.sh")):
        job = script.stem
        rc = state / f"{job}.rc"
        log = state / f"{job}.log"
        jobs[job] = (
            rc.read_text().strip() if rc.exists() else None,
            log.read_text(errors="replace") if log.exists() else "",
        )
    return jobs


def _stop_leftover_jobs(state: Path) -> None:
    """SIGKILL the process group of every job the wrapper started that has not ended."""
    for pid_file in state.glob("*.pid"):
        if not pid_file.with_suffix(".rc").exists():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(pid_file.read_text()), signal.SIGKILL)


def run_isolated(
    workdir: Path,
    bucket: Bucket,
    run: str,
    hidden: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    *args: str,
) -> IsolatedRun:
    """Run snakemake in ``workdir`` with its files in ``s3://BUCKET/<run>`` and every job
    isolated from ``hidden`` (plus ``workdir`` itself)."""
    state = workdir.parent / f"{workdir.name}.jobs"
    state.mkdir()
    cancel = state / "cancel"  # the plugin calls it without a shell: one executable
    cancel.write_text(f'#!/bin/sh\nexec "{SUBMIT}" cancel "$@"\n')
    cancel.chmod(0o755)
    concealed = [workdir, *(path for path in hidden if path.is_dir())]
    monkeypatch.setenv("ISOLATED_JOB_STATE", str(state))
    monkeypatch.setenv("ISOLATED_JOB_HIDE", ":".join(str(p.resolve()) for p in concealed))
    # Each job deploys the sources with the `python` it finds first.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    options = [
        "--executor=cluster-generic",
        f"--cluster-generic-submit-cmd={SUBMIT} submit",
        f"--cluster-generic-status-cmd={SUBMIT} status",
        f"--cluster-generic-cancel-cmd={cancel}",
        "--jobs=2",
        "--seconds-between-status-checks=1",
        "--default-storage-provider=s3",
        f"--default-storage-prefix=s3://{BUCKET}/{run}",
        f"--storage-s3-endpoint-url={bucket.endpoint}",
        f"--storage-s3-access-key={ACCESS_KEY}",
        f"--storage-s3-secret-key={SECRET_KEY}",
        "--shared-fs-usage",
        "software-deployment",
        "--job-deploy-sources",
    ]
    log_path = workdir.parent / f"{workdir.name}.log"
    with open(log_path, "w") as log:
        process = start_snakemake(workdir, log, *options, *args)
        try:
            returncode = wait_or_kill(process, RUN_TIMEOUT_S)
        finally:
            _stop_leftover_jobs(state)
    return IsolatedRun(returncode, log_path.read_text(), _job_states(state))


def git_checkout(workdir: Path, tracked: list[str]) -> Path:
    """Make ``workdir`` a git checkout of ``tracked``: Snakemake's source archive for the jobs
    holds the tracked files (and the Snakefiles, scripts and config files it knows), as it
    would for a clone; untracked data stays behind."""
    for command in (["git", "init", "-q"], ["git", "add", "--", *tracked]):
        subprocess.run(command, cwd=workdir, check=True, capture_output=True)
    return workdir


# ---------------------------------------------------------------------------------------------
# The harness itself

WORDS = "staged from the bucket\n"
SELF_TEST = """\
ORIGIN = config["origin"]


rule all:
    input:
        "out/report.json",


# Reads its input, and lists what it can see of the original directory and its working directory.
rule stage:
    input:
        f"{ORIGIN}/words.txt",
    output:
        "mid/seen.json",
    run:
        import json, os

        with open(input[0]) as handle:
            text = handle.read()
        seen = {
            "input": input[0],
            "text": text,
            "origin": sorted(os.listdir(ORIGIN)),
            "cwd": sorted(os.listdir(".")),
        }
        with open(output[0], "w") as handle:
            json.dump(seen, handle)


rule report:
    input:
        "mid/seen.json",
    output:
        "out/report.json",
    run:
        import json

        with open(input[0]) as handle:
            seen = json.load(handle)
        with open(output[0], "w") as handle:
            json.dump({"seen": seen, "input": input[0]}, handle)


# Reads the original file instead of a declared input: what an isolated job must not manage.
rule leak:
    output:
        "out/leak.txt",
    params:
        original=f"{ORIGIN}/words.txt",
    shell:
        "cat {params.original} > {output}"
"""


@pytest.fixture
def tiny_workflow(tmp_path, bucket) -> tuple[Path, Path]:
    """The self-test's workdir (with a file only the submitting process may see) and its
    dataset directory, outside the workdir, whose one file is also in the bucket."""
    origin = tmp_path / "datasets" / "tiny"
    origin.mkdir(parents=True)
    (origin / "words.txt").write_text(WORDS)
    workdir = tmp_path / "workflow"
    workdir.mkdir()
    (workdir / "Snakefile").write_text(SELF_TEST)
    (workdir / "main-only.txt").write_text("the submitting process's working directory\n")
    bucket.upload(tmp_path.name, origin, origin)
    return workdir, origin


def test_isolated_jobs_read_staged_inputs_and_upload_their_outputs(
    tiny_workflow, bucket, monkeypatch
):
    workdir, origin = tiny_workflow
    run = workdir.parent.name
    result = run_isolated(workdir, bucket, run, [origin], monkeypatch, f"--config=origin={origin}")
    assert result.returncode == 0, result.explain()

    # Both rules ran as isolated jobs, each behind the tmpfs mounts.
    assert len(result.jobs) == 2, result.explain()
    for rc, text in result.jobs.values():
        assert rc == "0" and "runs with these directories hidden" in text, text[-3000:]
    report = json.loads(bucket.read(run, "out/report.json"))
    seen = report["seen"]
    assert seen["text"] == WORDS
    # Its input was the copy staged into the job's scratch, not the original file ...
    assert Path(seen["input"]).parts[:2] == (".snakemake", "storage"), seen
    assert Path(report["input"]).parts[:2] == (".snakemake", "storage"), report
    # ... which was there all along, but out of its sight, as was the submitting workdir.
    assert (origin / "words.txt").read_text() == WORDS
    assert seen["origin"] == []
    assert "main-only.txt" not in seen["cwd"] and "Snakefile" in seen["cwd"], seen["cwd"]
    # Outputs went to the bucket only.
    assert not (workdir / "mid").exists() and not (workdir / "out").exists()


def test_an_isolated_job_cannot_read_an_undeclared_file(tiny_workflow, bucket, monkeypatch):
    workdir, origin = tiny_workflow
    result = run_isolated(
        workdir,
        bucket,
        workdir.parent.name,
        [origin],
        monkeypatch,
        f"--config=origin={origin}",
        "out/leak.txt",
    )
    assert result.returncode != 0, result.explain()
    [(rc, text)] = result.jobs.values()
    assert rc != "0"
    assert f"{origin}/words.txt: No such file or directory" in text, text[-3000:]


# ---------------------------------------------------------------------------------------------
# The real workflow

CHECKOUT_DATA = [REPO / ".test" / "data", REPO / "results", REPO / "resources"]
"""The checkout's own data: hidden too, so that no job can fall back to it."""


def _local_run(workdir: Path, *args: str) -> dict[str, bytes]:
    snakemake(workdir, "--cores", "2", *args)
    return output_files(workdir)


def _bucket_outputs(bucket: Bucket, run: str, target: Path) -> dict[str, bytes]:
    assert bucket.download(run, "results", target) > 0, f"no results in s3://{BUCKET}/{run}"
    return output_files(target)


def _assert_same_outputs(local: dict[str, bytes], isolated: dict[str, bytes]) -> None:
    assert sorted(isolated) == sorted(local)
    differing = sorted(name for name in local if isolated[name] != local[name])
    assert not differing, f"outputs differ from the local run: {differing}"


def _test_checkout(target: Path) -> Path:
    """The workflow with the repository's .test directory (its config and dataset)."""
    workdir = copy_workflow(target)
    shutil.copytree(REPO / ".test", workdir / ".test", symlinks=True)
    return workdir


def test_the_test_config_runs_without_a_shared_file_system(bucket, tmp_path_factory, monkeypatch):
    config = ["--configfile", ".test/config/config.yaml"]
    local = _local_run(_test_checkout(tmp_path_factory.mktemp("local")), *config)

    root = tmp_path_factory.mktemp("isolated")
    workdir = git_checkout(_test_checkout(root / "workflow"), [*WORKFLOW_FILES, ".test/config"])
    dataset = Path(".test/data/mine")
    assert bucket.upload(root.name, workdir / dataset, dataset) > 0
    # The audio is in the bucket only: the main process plans from the Kaldi files alone.
    shutil.rmtree(workdir / dataset / "wav")
    run_isolated(workdir, bucket, root.name, CHECKOUT_DATA, monkeypatch, *config).require_success()
    _assert_same_outputs(local, _bucket_outputs(bucket, root.name, root / "downloaded"))


DEMO_SIZE = ["--n-pathological", "3", "--n-control", "2", "--n-utterances", "2"]


def test_a_reference_dataset_runs_without_a_shared_file_system(
    bucket, tmp_path_factory, monkeypatch
):
    """The demo corpus outside the working directory, with its control speakers as the
    reference set, and measures that read shared tracks, references, speakers and the
    dataset directory itself (spk2age)."""
    corpus = tmp_path_factory.mktemp("datasets") / "demo"
    subprocess.run(
        [sys.executable, "-m", "pathbench_flow.demo", str(corpus), *DEMO_SIZE],
        check=True,
        capture_output=True,
    )
    config = {
        "datasets": {
            "demo": {
                "path": str(corpus / "pathological"),
                "reference": str(corpus / "control"),
                "trim_backend": "energy",
            }
        },
        "evaluators": ["cpp", "wpm", "f0_range", "p_estoi", "spk2age"],
    }

    def checkout(target: Path) -> Path:
        workdir = copy_workflow(target)
        (workdir / "demo.yaml").write_text(yaml.safe_dump(config))
        return workdir

    local = _local_run(checkout(tmp_path_factory.mktemp("local")), "--configfile", "demo.yaml")

    root = tmp_path_factory.mktemp("isolated")
    workdir = git_checkout(checkout(root / "workflow"), [*WORKFLOW_FILES, "demo.yaml"])
    assert bucket.upload(root.name, corpus, corpus) > 0
    hidden = [corpus, *CHECKOUT_DATA]
    config_args = ("--configfile", "demo.yaml")
    run_isolated(workdir, bucket, root.name, hidden, monkeypatch, *config_args).require_success()
    _assert_same_outputs(local, _bucket_outputs(bucket, root.name, root / "downloaded"))
