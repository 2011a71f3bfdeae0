"""The Snakemake process's CPU on a toy workflow that isolates the scheduler's own cost.

``N`` independent one-thread jobs (``sleep 0.3``), each reading the same 20 small files, on 2
cores with this workflow's profile settings (``--scheduler greedy --max-jobs-per-timespan
100/5s``): all ``N`` jobs are ready at once and wait for a core, so every scheduling pass sees
them all. The jobs cost nothing, so what grows is the scheduler's: the passes (one per finished
job, plus the timed re-evaluations) times the work per pass (every ready job's inputs). The
toy's Snakefile installs :mod:`~pathbench_flow.runtime.scheduling` as the workflow's does
(:func:`~pathbench_flow.runtime.snakemake_patches.patch_scheduler`), from whichever
``pathbench_flow`` is on ``PYTHONPATH``: point it at an older tree to measure before a change.

Recorded: the Snakemake process's own CPU seconds (user + system of that process alone, from
``/proc``, sampled until it exits), comparable on a machine others are using, unlike wall time.

Run: ``python benchmarks/scheduler_toy.py --jobs 300 900``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import _process_cpu  # noqa: E402  (the Snakemake process's own CPU, from /proc)

from pathbench_flow.testing.workflow_run import LOCAL_RUN, start_snakemake  # noqa: E402

INPUTS = 20
SNAKEFILE = """\
from pathbench_flow.runtime import snakemake_patches
snakemake_patches.patch_scheduler(workflow)

INPUTS = [f"inputs/{i}.txt" for i in range(20)]


rule all:
    input:
        expand("done/{job}", job=range(int(config["jobs"]))),


rule job:
    input:
        INPUTS,
    output:
        "done/{job}",
    threads: 1
    shell:
        "sleep 0.3; touch {output}"
"""
PROFILE = ("--scheduler", "greedy", "--max-jobs-per-timespan", "100/5s")


def toy(workdir: Path, jobs: int, cores: int) -> tuple[int, float | None, float]:
    """Run the toy with ``jobs`` jobs in a fresh ``workdir``: (exit code, Snakemake process
    CPU seconds, wall seconds)."""
    workdir.mkdir(parents=True)
    (workdir / "Snakefile").write_text(SNAKEFILE)
    (workdir / "inputs").mkdir()
    for i in range(INPUTS):
        (workdir / "inputs" / f"{i}.txt").write_text("x" * (i + 1))
    started, own = time.perf_counter(), None
    with open(workdir / "snakemake.out", "w") as log:
        process = start_snakemake(
            workdir,
            log,
            "--cores",
            str(cores),
            *PROFILE,
            "--config",
            f"jobs={jobs}",
            environment=LOCAL_RUN,
        )
        while process.poll() is None:
            own = _process_cpu(process.pid) or own
            time.sleep(0.5)
    return process.returncode, own, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[300, 900])
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args(argv)
    failed = False
    print("| jobs | Snakemake CPU-s | wall s |\n|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="pathbench-toy-") as scratch:
        for jobs in args.jobs:
            workdir = Path(scratch) / str(jobs)
            code, cpu, wall = toy(workdir, jobs, args.cores)
            if code != 0:
                print((workdir / "snakemake.out").read_text()[-3000:], file=sys.stderr)
                failed = True
            print(f"| {jobs} | {'–' if cpu is None else f'{cpu:.1f}'} | {wall:.0f} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
