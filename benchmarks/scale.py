"""Run the whole workflow on a corpus shaped like UASpeech's word task and time it.

The corpus is synthesised with the demo generator, balanced like UASpeech word: 14
pathological speakers with 2,170 utterances and 13 control speakers with 2,015 (155 isolated
words of 1-2 s each). The default workflow (config/config.yaml, every evaluator, open-set
evaluation on) then runs on it with ``--cores 2`` in a scratch copy, through a config file
whose only changes are the dataset paths and the shard size. Recorded:

* wall time of the ``snakemake`` process (parsing, DAG, all jobs, end);
* CPU time of the whole run (user + system of snakemake and every job, from ``getrusage``);
* per rule: number of jobs and the sum of their run times. A job's run time is its
  ``endtime - starttime`` from Snakemake's metadata (``.snakemake/metadata``, float seconds,
  recorded around the job's process), so it includes the per-job Python start-up. Every job
  uses one thread, so on an otherwise idle machine this is close to the job's CPU time;
* scheduling overhead: wall time minus (sum of job run times / cores), i.e. the time the cores
  were not running a job: start-up and DAG building, waits between jobs, and stretches where
  dependencies leave a core idle.

Goals: at most 10 minutes wall time, scheduling overhead at most 5 % of it. The table is
printed and written to the scale section of benchmarks/README.md.

Run: ``python benchmarks/scale.py`` (``--help`` for options). The corpus is kept in the
scratch directory and reused by later runs with the same shape.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import yaml

from pathbench.demo import generate_corpus

REPO = Path(__file__).resolve().parents[1]
README = REPO / "benchmarks" / "README.md"
SECTION_START = "<!-- scale-benchmark:start -->"
SECTION_END = "<!-- scale-benchmark:end -->"

SHAPE = {"n_pathological": 14, "n_control": 13, "n_utterances": 155, "word_mode": True}
EXPECTED = {"pathological": 2170, "control": 2015}
GOAL_WALL_S = 600.0
GOAL_OVERHEAD = 0.05
WORKFLOW_FILES = ("Snakefile", "workflow", "config", "scripts")
_FINISHED = re.compile(r"^Finished jobid: \d+ \(Rule: (\w+)\)$", re.M)


@dataclass
class RuleTime:
    jobs: int
    seconds: float
    longest: float


@dataclass
class Result:
    wall_s: float
    cpu_s: float
    cores: int
    jobs_by_rule: dict[str, int]
    rule_times: dict[str, RuleTime]
    first_job_s: float
    startup_s: float
    shard_size: int
    returncode: int

    @property
    def n_jobs(self) -> int:
        return sum(self.jobs_by_rule.values())

    @property
    def job_seconds(self) -> float:
        return sum(t.seconds for t in self.rule_times.values())

    @property
    def overhead_s(self) -> float:
        return self.wall_s - self.job_seconds / self.cores


def corpus(scratch: Path, seed: int) -> tuple[Path, float]:
    """The UASpeech-shaped corpus (generated unless an identical one is there); seconds spent."""
    out = scratch / "corpus"
    marker = scratch / "corpus.json"
    wanted = {**SHAPE, "seed": seed}
    if out.is_dir() and marker.is_file() and json.loads(marker.read_text()) == wanted:
        return out, 0.0
    started = time.perf_counter()
    generate_corpus(out, seed=seed, **SHAPE)
    spent = time.perf_counter() - started
    for subset, count in EXPECTED.items():
        lines = (out / subset / "utt2spk").read_text().splitlines()
        if len(lines) != count:
            raise SystemExit(f"{subset}: {len(lines)} utterances, expected {count}")
    marker.write_text(json.dumps(wanted))
    return out, spent


def prepare_workflow(scratch: Path, corpus_dir: Path, shard_size: int) -> tuple[Path, Path]:
    """A fresh copy of the workflow and the benchmark's config file; (workdir, config path).

    The copy's config/config.yaml is replaced by the benchmark config as well: Snakemake merges
    --configfile into the Snakefile's configfile key by key, which would keep the demo dataset.
    """
    workdir = scratch / "workflow"
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    for name in WORKFLOW_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, workdir / name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, workdir / name)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["datasets"] = {
        "uaspeech_like": {
            "path": str(corpus_dir / "pathological"),
            "reference": str(corpus_dir / "control"),
        }
    }
    config["shard_size"] = shard_size
    config_path = workdir / "config" / "config.yaml"
    header = ("# Written by benchmarks/scale.py: config/config.yaml with the UASpeech-shaped "
              "corpus and its shard size.\n")
    config_path.write_text(header + yaml.safe_dump(config, sort_keys=False))
    return workdir, config_path


def job_times(workdir: Path) -> tuple[dict[str, RuleTime], float]:
    """Run times per rule from .snakemake/metadata, and the earliest job start (epoch s)."""
    seen = set()
    per_rule: dict[str, list[float]] = defaultdict(list)
    first = float("inf")
    for path in (workdir / ".snakemake" / "metadata").iterdir():
        record = json.loads(path.read_text())
        start, end = record.get("starttime"), record.get("endtime")
        if start is None or end is None:
            continue
        key = (record["rule"], record.get("job_hash"), start)
        if key in seen:  # one record per output file; count each job once
            continue
        seen.add(key)
        per_rule[record["rule"]].append(end - start)
        first = min(first, start)
    times = {rule: RuleTime(len(v), sum(v), max(v)) for rule, v in per_rule.items()}
    return times, first


def interpreter_startup() -> float:
    """Median seconds for a fresh Python to import what every script job imports."""
    code = "import snakemake.script, pandas, pyarrow, pathbench.registry"
    samples = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def run(workdir: Path, config_path: Path, cores: int, shard_size: int) -> Result:
    log_path = workdir / "snakemake.out"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started_epoch = time.time()
    started = time.perf_counter()
    with open(log_path, "w") as log:
        returncode = subprocess.run(
            [sys.executable, "-m", "snakemake", "--cores", str(cores),
             "--configfile", str(config_path.relative_to(workdir))],
            cwd=workdir, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        ).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    text = log_path.read_text()
    jobs_by_rule: dict[str, int] = defaultdict(int)
    for rule in _FINISHED.findall(text):
        jobs_by_rule[rule] += 1
    rule_times, first = job_times(workdir)
    return Result(wall, cpu, cores, dict(jobs_by_rule), rule_times,
                  first - started_epoch if rule_times else float("nan"),
                  interpreter_startup(), shard_size, returncode)


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s ({seconds / 60:.1f} min)"


def table(result: Result) -> str:
    """The per-rule table and the totals, as Markdown."""
    rows = ["| rule | jobs | sum of job run times | mean per job | longest job | share |",
            "|---|---:|---:|---:|---:|---:|"]
    total = result.job_seconds or 1.0
    for rule, t in sorted(result.rule_times.items(), key=lambda kv: -kv[1].seconds):
        rows.append(f"| {rule} | {t.jobs} | {t.seconds:.1f} s | {t.seconds / t.jobs:.1f} s | "
                    f"{t.longest:.1f} s | {100 * t.seconds / total:.1f} % |")
    local_only = sorted(set(result.jobs_by_rule) - set(result.rule_times))
    for rule in local_only:  # jobs without outputs (the `all` target) have no metadata
        rows.append(f"| {rule} | {result.jobs_by_rule[rule]} | - | - | - | - |")
    overhead = result.overhead_s
    share = overhead / result.wall_s
    wall_ok = "met" if result.wall_s <= GOAL_WALL_S else "missed"
    over_ok = "met" if share <= GOAL_OVERHEAD else "missed"
    per_job = result.startup_s
    lines = [
        *rows,
        "",
        "| total | value |",
        "|---|---:|",
        f"| wall time (goal <= 10 min: {wall_ok}) | {_minutes(result.wall_s)} |",
        f"| CPU time, snakemake and all jobs (user + system) | {_minutes(result.cpu_s)} |",
        f"| jobs run | {result.n_jobs} |",
        f"| sum of job run times | {_minutes(result.job_seconds)} |",
        f"| sum of job run times / {result.cores} cores | "
        f"{_minutes(result.job_seconds / result.cores)} |",
        f"| scheduling overhead: wall - sum / cores (goal <= 5 %: {over_ok}) | "
        f"{overhead:.0f} s ({100 * share:.1f} %) |",
        f"| of which before the first job (parse, DAG) | {result.first_job_s:.1f} s |",
        f"| Python start-up + imports of one script job (approx.) | {per_job:.2f} s, "
        f"x {result.n_jobs} jobs = {per_job * result.n_jobs:.0f} s |",
    ]
    return "\n".join(lines)


def section(result: Result, corpus_s: float) -> str:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")
    cpu = f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}"
    status = "" if result.returncode == 0 else (
        f"\n**The run failed (exit code {result.returncode}); the numbers cover the jobs that "
        "ran before the failure.**\n")
    return f"""{SECTION_START}
## Scale: the whole workflow on a UASpeech-sized corpus (`scale.py`)

`python benchmarks/scale.py` synthesises a corpus shaped like UASpeech word, balanced, with
the demo generator (14 pathological speakers x 155 words = 2,170 utterances, 13 control
speakers x 155 = 2,015; isolated words of 1-2 s), runs the default workflow on it with
`--cores {result.cores}` in a scratch copy (config/config.yaml with the dataset paths replaced
and `shard_size: {result.shard_size}`, the schema default for real corpora), and records:

* **wall time** of the `snakemake` process, start-up to exit;
* **CPU time** of snakemake and all jobs (`getrusage` of the finished child processes);
* **per rule**, the sum of job run times: each job's `endtime - starttime` in Snakemake's
  `.snakemake/metadata` (it includes the job's Python start-up; every job uses one thread, so
  it is close to the job's CPU time);
* **scheduling overhead** = wall time - (sum of job run times / cores): time in which a core
  ran no job (start-up and DAG building, gaps between jobs, and stretches where the
  dependencies leave a core idle).

Goals: wall time at most 10 minutes, scheduling overhead at most 5 % of the wall time.
Corpus synthesis is not part of the run ({corpus_s:.0f} s when it was generated; 0 = reused).

Last run: {now}, {cpu}.
{status}
{table(result)}
{SECTION_END}
"""


def write_readme(text: str) -> None:
    """Replace the scale section of benchmarks/README.md, or add it at the end."""
    if README.exists():
        current = README.read_text()
        pattern = re.compile(re.escape(SECTION_START) + r".*?" + re.escape(SECTION_END) + r"\n?",
                             re.S)
        if pattern.search(current):
            updated = pattern.sub(lambda _: text, current, count=1)
        else:
            updated = current.rstrip("\n") + "\n\n" + text
    else:
        updated = "# Benchmarks\n\n" + text
    README.write_text(updated)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scratch", type=Path,
                        default=Path(tempfile.gettempdir()) / "pathbench-scale",
                        help="scratch directory for the corpus and the workflow copy")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--shard-size", type=int, default=250,
                        help="utterances per scoring job (default: the schema default, 250)")
    parser.add_argument("--seed", type=int, default=20260101)
    parser.add_argument("--no-readme", action="store_true",
                        help="print the table without updating benchmarks/README.md")
    args = parser.parse_args(argv)

    args.scratch.mkdir(parents=True, exist_ok=True)
    corpus_dir, corpus_s = corpus(args.scratch, args.seed)
    print(f"corpus: {corpus_dir} ({'generated in %.0f s' % corpus_s if corpus_s else 'reused'})")
    workdir, config_path = prepare_workflow(args.scratch, corpus_dir, args.shard_size)
    print(f"running the workflow in {workdir} on {args.cores} cores ...", flush=True)
    result = run(workdir, config_path, args.cores, args.shard_size)
    if result.returncode != 0:
        print(f"snakemake failed ({result.returncode}); see {workdir / 'snakemake.out'}",
              file=sys.stderr)
    print(table(result))
    if not args.no_readme:
        write_readme(section(result, corpus_s))
        print(f"written to {README.relative_to(REPO)}")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
