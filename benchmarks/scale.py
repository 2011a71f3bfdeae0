"""Run the whole workflow on a corpus shaped like UASpeech's word task and time it.

The corpus is synthesised with the demo generator, balanced like UASpeech word: 14
pathological speakers with 2,170 utterances and 13 control speakers with 2,015 (155 isolated
words of 1-2 s each). The default workflow (config/config.yaml, every evaluator, open-set
evaluation on) then runs on it with ``--cores 2`` in a scratch copy, through a config file
that is config/config.yaml with the UASpeech-shaped dataset paths, the shard size and the
default evaluators (the schema's default list, what a user's own config gets when it names
none; the demo config adds reference-audio and proxy measures on top). Recorded:

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
import base64
import contextlib
import datetime as dt
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from pathbench_flow.demo.corpus import make_demo
from pathbench_flow.seeds import DEMO_SEED

REPO = Path(__file__).resolve().parents[1]
from pathbench_flow.testing.workflow_run import (  # noqa: E402  (the tests' helpers, shared, not copied)
    copy_workflow,
    start_snakemake,
)

README = REPO / "benchmarks" / "README.md"
SECTION_START = "<!-- scale-benchmark:start -->"
SECTION_END = "<!-- scale-benchmark:end -->"

SHAPE = {"n_pathological": 14, "n_control": 13, "n_utterances": 155, "word_mode": True}
EXPECTED = {"pathological": 2170, "control": 2015}
GOAL_WALL_S = 600.0
GOAL_OVERHEAD = 0.05
_FINISHED = re.compile(r"^Finished jobid: \d+ \(Rule: (\w+)\)$", re.M)
_STATS_ROW = re.compile(r"^(\w+)\s+(\d+)$", re.M)


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
    planned: dict[str, int]
    jobs_by_rule: dict[str, int]
    rule_times: dict[str, RuleTime]
    first_job_s: float
    startup_s: float
    shard_size: int
    returncode: int
    stopped_after: float | None
    evaluator_times: dict[str, RuleTime] = field(default_factory=dict)
    load: tuple[float, float] | None = None
    """1-minute load average before and after the run (other work on the machine)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> Result:
        data = json.loads(text)
        for key in ("rule_times", "evaluator_times"):
            data[key] = {k: RuleTime(**v) for k, v in data[key].items()}
        data["load"] = tuple(data["load"]) if data.get("load") else None
        return cls(**data)

    @property
    def n_jobs(self) -> int:
        return sum(self.jobs_by_rule.values())

    @property
    def job_seconds(self) -> float:
        return sum(t.seconds for t in self.rule_times.values())

    @property
    def overhead_s(self) -> float:
        return self.wall_s - self.job_seconds / self.cores

    def projected(self, rule: str) -> float | None:
        """Sum of run times of all planned jobs of a rule, from the mean of those that ran."""
        t = self.rule_times.get(rule)
        n = max(self.planned.get(rule, 0), t.jobs if t else 0)
        return None if t is None else n * t.seconds / t.jobs


def corpus(scratch: Path, seed: int) -> tuple[Path, float]:
    """The UASpeech-shaped corpus (generated unless an identical one is there); seconds spent."""
    out = scratch / "corpus"
    marker = scratch / "corpus.json"
    wanted = {**SHAPE, "seed": seed}
    if out.is_dir() and marker.is_file() and json.loads(marker.read_text()) == wanted:
        return out, 0.0
    started = time.perf_counter()
    make_demo(out, seed=seed, **SHAPE)
    spent = time.perf_counter() - started
    for subset, count in EXPECTED.items():
        lines = (out / subset / "utt2spk").read_text().splitlines()
        if len(lines) != count:
            raise SystemExit(f"{subset}: {len(lines)} utterances, expected {count}")
    marker.write_text(json.dumps(wanted))
    return out, spent


def default_evaluators() -> list[str]:
    """The evaluators a config that names none runs: the schema's default list."""
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return list(schema["properties"]["evaluators"]["default"])


def prepare_workflow(scratch: Path, corpus_dir: Path, shard_size: int) -> tuple[Path, Path]:
    """A fresh copy of the workflow and the benchmark's config file; (workdir, config path).

    The copy's config/config.yaml is replaced by the benchmark config as well: Snakemake merges
    --configfile into the Snakefile's configfile key by key, which would keep the demo dataset.
    """
    workdir = scratch / "workflow"
    if workdir.exists():
        shutil.rmtree(workdir)
    copy_workflow(workdir)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["datasets"] = {
        "uaspeech_like": {
            "path": str(corpus_dir / "pathological"),
            "reference": str(corpus_dir / "control"),
        }
    }
    config["shard_size"] = shard_size
    config["evaluators"] = default_evaluators()
    config["evaluator_options"] = {
        name: options
        for name, options in config.get("evaluator_options", {}).items()
        if name in config["evaluators"]
    }
    config_path = workdir / "config" / "config.yaml"
    header = (
        "# Written by benchmarks/scale.py: config/config.yaml with the UASpeech-shaped "
        "corpus, its shard size and the default evaluators.\n"
    )
    config_path.write_text(header + yaml.safe_dump(config, sort_keys=False))
    return workdir, config_path


def planned_jobs(workdir: Path, config_path: Path) -> dict[str, int]:
    """Jobs per rule in the dry run's plan (jobs behind checkpoints are not known yet)."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "--configfile",
            str(config_path.relative_to(workdir)),
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    )
    text = result.stdout + result.stderr
    stats = text[text.index("Job stats:") :]
    counts = {}
    for name, count in _STATS_ROW.findall(stats):
        if name == "total":
            break
        counts[name] = int(count)
    return counts


def _evaluator(rule: str, output: str) -> str | None:
    """``rule: evaluator[/reftype]`` for scoring outputs, from the output path."""
    parts = Path(output).parts
    for folder in ("scores", "reference_scores", "speaker_scores"):
        if folder in parts[:-1]:
            inner = parts[parts.index(folder) + 1 :]
            name = "/".join(inner[:-1]) if len(inner) > 1 else Path(inner[0]).stem
            return f"{rule}: {name}"
    return None


def job_times(workdir: Path) -> tuple[dict[str, RuleTime], dict[str, RuleTime], float]:
    """Run times per rule and per scoring evaluator from .snakemake/metadata, and the earliest
    job start (epoch s).

    There is one record per output file (named by the output path in base64); the outputs of
    one job share rule, job hash and end time (their start times differ by microseconds: the
    earliest is taken).
    """
    starts: dict[tuple[str, object, float], float] = {}
    outputs: dict[tuple[str, object, float], str] = {}
    metadata = workdir / ".snakemake" / "metadata"
    for path in metadata.iterdir() if metadata.is_dir() else []:
        record = json.loads(path.read_text())
        start, end = record.get("starttime"), record.get("endtime")
        if start is None or end is None or record.get("incomplete"):
            continue
        key = (record["rule"], record.get("job_hash"), end)
        starts[key] = min(start, starts.get(key, start))
        with contextlib.suppress(ValueError):
            name = path.name.replace("@", "/")
            outputs[key] = base64.b64decode(name + "=" * (-len(name) % 4)).decode()
    per_rule: dict[str, list[float]] = defaultdict(list)
    per_evaluator: dict[str, list[float]] = defaultdict(list)
    for key, start in starts.items():
        rule, _, end = key
        per_rule[rule].append(end - start)
        if (evaluator := _evaluator(rule, outputs.get(key, ""))) is not None:
            per_evaluator[evaluator].append(end - start)

    def summary(groups):
        return {name: RuleTime(len(v), sum(v), max(v)) for name, v in groups.items()}

    return summary(per_rule), summary(per_evaluator), min(starts.values(), default=float("nan"))


def interpreter_startup() -> float:
    """Median seconds for a fresh Python to import what every script job imports."""
    code = "import snakemake.script, pandas, pyarrow, pathbench_flow.registry"
    samples = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def _stop(process: subprocess.Popen) -> None:
    """Stop the run like Ctrl-C (SIGINT to its process group); SIGKILL if it hangs."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def run(
    workdir: Path, config_path: Path, cores: int, shard_size: int, timeout: float | None
) -> Result:
    planned = planned_jobs(workdir, config_path)
    load_before = os.getloadavg()[0]
    log_path = workdir / "snakemake.out"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started_epoch = time.time()
    started = time.perf_counter()
    stopped_after = None
    with open(log_path, "w") as log:
        config = str(config_path.relative_to(workdir))
        process = start_snakemake(workdir, log, "--cores", str(cores), "--configfile", config)
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stopped_after = time.perf_counter() - started
            _stop(process)
            returncode = process.returncode
        except BaseException:
            _stop(process)
            raise
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    text = log_path.read_text()
    jobs_by_rule: dict[str, int] = defaultdict(int)
    for rule in _FINISHED.findall(text):
        jobs_by_rule[rule] += 1
    load_after = os.getloadavg()[0]
    rule_times, evaluator_times, first = job_times(workdir)
    return Result(
        wall,
        cpu,
        cores,
        planned,
        dict(jobs_by_rule),
        rule_times,
        first - started_epoch,
        interpreter_startup(),
        shard_size,
        returncode,
        stopped_after,
        evaluator_times,
        (load_before, load_after),
    )


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s ({seconds / 60:.1f} min)"


def _time_rows(times: dict[str, RuleTime], total: float) -> list[str]:
    return [
        f"| {name} | {t.jobs} | {t.seconds:.1f} s | {t.seconds / t.jobs:.1f} s | "
        f"{t.longest:.1f} s | {100 * t.seconds / total:.1f} % |"
        for name, t in sorted(times.items(), key=lambda kv: -kv[1].seconds)
    ]


def table(result: Result) -> str:
    """The per-rule table, the scoring jobs by evaluator and the totals, as Markdown."""
    partial = result.stopped_after is not None or result.returncode != 0
    total = result.job_seconds or 1.0
    head = (
        "| rule | jobs planned | jobs run | sum of job run times | mean per job | "
        "longest job | share |"
    )
    line = "|---|---:|---:|---:|---:|---:|---:|"
    if partial:
        head += " projected sum for all planned jobs |"
        line += "---:|"
    rows = [head, line]
    rules = sorted(
        set(result.planned) | set(result.rule_times) | set(result.jobs_by_rule),
        key=lambda r: -(result.projected(r) or 0.0),
    )
    for name in rules:
        t = result.rule_times.get(name)
        planned = result.planned.get(name, "after checkpoint")
        if t is None:
            row = f"| {name} | {planned} | {result.jobs_by_rule.get(name, 0)} | - | - | - | - |"
        else:
            row = (
                f"| {name} | {planned} | {t.jobs} | {t.seconds:.1f} s | "
                f"{t.seconds / t.jobs:.1f} s | {t.longest:.1f} s | "
                f"{100 * t.seconds / total:.1f} % |"
            )
        if partial:
            projected = result.projected(name)
            row += f" {projected:.0f} s |" if projected is not None else " - |"
        rows.append(row)
    evaluators = [
        "| scoring rule: evaluator | jobs | sum of job run times | mean per job | longest job | "
        "share of all job time |",
        "|---|---:|---:|---:|---:|---:|",
        *_time_rows(result.evaluator_times, total),
    ]
    overhead = result.overhead_s
    share = overhead / result.wall_s
    if result.stopped_after is not None:
        wall_label = f"wall time (stopped after {result.stopped_after:.0f} s; goal: missed)"
    else:
        wall_ok = "met" if result.wall_s <= GOAL_WALL_S else "missed"
        wall_label = f"wall time (goal <= 10 min: {wall_ok})"
    over_ok = "met" if share <= GOAL_OVERHEAD else "missed"
    startup = result.startup_s
    totals = [
        "| total | value |",
        "|---|---:|",
        f"| {wall_label} | {_minutes(result.wall_s)} |",
        f"| CPU time, snakemake and all jobs (user + system) | {_minutes(result.cpu_s)} |",
        f"| CPU time / {result.cores} cores (wall time on otherwise idle cores, at best) | "
        f"{_minutes(result.cpu_s / result.cores)} |",
        f"| jobs run (planned before checkpoints: {sum(result.planned.values())}) | "
        f"{result.n_jobs} |",
        f"| sum of job run times | {_minutes(result.job_seconds)} |",
        f"| sum of job run times / {result.cores} cores | "
        f"{_minutes(result.job_seconds / result.cores)} |",
        f"| scheduling overhead: wall - sum / cores (goal <= 5 %: {over_ok}) | "
        f"{overhead:.0f} s ({100 * share:.1f} %) |",
        f"| of which before the first job (parse, DAG) | {result.first_job_s:.1f} s |",
        f"| Python start-up + imports of one script job (approx.) | {startup:.2f} s, "
        f"x {result.n_jobs} jobs = {startup * result.n_jobs:.0f} s |",
    ]
    if result.load is not None:
        totals.append(
            f"| 1-minute load average before / after the run | "
            f"{result.load[0]:.1f} / {result.load[1]:.1f} |"
        )
    if partial:
        projected = sum(p for r in rules if (p := result.projected(r)) is not None)
        totals.append(
            f"| projected sum of job run times of the whole run | {_minutes(projected)} |"
        )
        totals.append(
            f"| projected wall time at best (that sum / {result.cores} cores) | "
            f"{_minutes(projected / result.cores)} |"
        )
    return "\n".join([*rows, "", *evaluators, "", *totals])


def section(result: Result, corpus_s: float) -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    cpu = f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}"
    if result.stopped_after is not None:
        status = (
            f"\n**The run was stopped after {result.stopped_after / 60:.0f} minutes "
            "(`--timeout`), far past the goal.** The table covers the jobs that finished "
            "by then; the last column projects each rule's total from the mean of its "
            "finished jobs and the number of jobs in the plan.\n"
        )
    elif result.returncode != 0:
        status = (
            f"\n**The run failed (exit code {result.returncode}); the numbers cover the "
            "jobs that finished before the failure.**\n"
        )
    else:
        status = ""
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

When other processes share the cores (a high load average), job run times grow past their
CPU time and the sum of job run times exceeds the CPU time; CPU time / cores is then the better
estimate of the wall time on idle cores. Scoring jobs are also broken down by evaluator (and
reference type), from their output paths.

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
        pattern = re.compile(
            re.escape(SECTION_START) + r".*?" + re.escape(SECTION_END) + r"\n?", re.S
        )
        if pattern.search(current):
            updated = pattern.sub(lambda _: text, current, count=1)
        else:
            updated = current.rstrip("\n") + "\n\n" + text
    else:
        updated = "# Benchmarks\n\n" + text
    README.write_text(updated)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scratch",
        type=Path,
        default=Path(tempfile.gettempdir()) / "pathbench-scale",
        help="scratch directory for the corpus and the workflow copy",
    )
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--shard-size",
        type=int,
        default=250,
        help="utterances per scoring job (default: the schema default, 250)",
    )
    parser.add_argument("--seed", type=int, default=DEMO_SEED)
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop the run (like Ctrl-C) after this long and report the jobs "
        "finished so far, with a projection for the whole run",
    )
    parser.add_argument(
        "--from-result",
        type=Path,
        metavar="JSON",
        help="do not run: print (and write) the tables of a saved result.json",
    )
    parser.add_argument(
        "--no-readme",
        action="store_true",
        help="print the table without updating benchmarks/README.md",
    )
    args = parser.parse_args(argv)

    if args.from_result:
        saved = json.loads(args.from_result.read_text())
        result, corpus_s = Result.from_json(json.dumps(saved["result"])), saved["corpus_s"]
        print(table(result))
        if not args.no_readme:
            write_readme(section(result, corpus_s))
        return 0

    args.scratch.mkdir(parents=True, exist_ok=True)
    corpus_dir, corpus_s = corpus(args.scratch, args.seed)
    made = f"generated in {corpus_s:.0f} s" if corpus_s else "reused"
    print(f"corpus: {corpus_dir} ({made})")
    workdir, config_path = prepare_workflow(args.scratch, corpus_dir, args.shard_size)
    print(f"running the workflow in {workdir} on {args.cores} cores ...", flush=True)
    result = run(workdir, config_path, args.cores, args.shard_size, args.timeout)
    if result.stopped_after is not None:
        print(f"stopped after {result.stopped_after:.0f} s (--timeout)", file=sys.stderr)
    elif result.returncode != 0:
        print(
            f"snakemake failed ({result.returncode}); see {workdir / 'snakemake.out'}",
            file=sys.stderr,
        )
    saved = args.scratch / "result.json"
    saved.write_text(json.dumps({"result": json.loads(result.to_json()), "corpus_s": corpus_s}))
    print(table(result))
    print(f"result saved to {saved}")
    if not args.no_readme:
        write_readme(section(result, corpus_s))
        print(f"written to {README.relative_to(REPO)}")
    return 0 if result.stopped_after is not None else result.returncode


if __name__ == "__main__":
    sys.exit(main())
