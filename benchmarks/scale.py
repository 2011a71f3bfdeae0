"""Run the whole workflow on a corpus shaped like UASpeech's word task and time it.

The corpus is synthesised with the demo generator, balanced like UASpeech word: 14
pathological speakers with 2,170 utterances and 13 control speakers with 2,015 (155 isolated
words of 1-2 s each). The workflow then runs on it with ``--cores 2`` in a scratch copy, through
a config file that is config/config.yaml (fa and raw variants, control and all references,
open-set evaluation on) with the UASpeech-shaped dataset paths, the shard size and one of two
evaluator lists:

* ``default``: the schema's default list, what a user's own config gets when it names none;
* ``full``: every measure that runs no model, i.e. the defaults plus ``p_estoi``, ``p_stoi``,
  ``nad`` (MFCC features), ``wpm``, ``speech_rate`` and ``vsa_corners``.

Recorded per run:

* wall time of the ``snakemake`` process (parsing, DAG, all jobs, end);
* CPU time of the whole run (user + system of snakemake and every job, from ``getrusage``),
  and of the Snakemake process itself (scheduling: DAG updates, input functions, file stats);
* per rule: number of jobs and the sum of their run times. A job's run time is its
  ``endtime - starttime`` from Snakemake's metadata (``.snakemake/metadata``, float seconds,
  recorded around the job's process), so it includes the per-job Python start-up. Every job
  uses one thread, so on an otherwise idle machine this is close to the job's CPU time;
* scheduling overhead: wall time minus (sum of job run times / cores), i.e. the time the cores
  were not running a job: start-up and DAG building, waits between jobs, and stretches where
  dependencies leave a core idle.

Goals, on 2 cores: the full list in at most 540 s and the default list in at most 300 s of
normalised wall time (wall time x the Praat speed index / 1,500, :func:`praat_speed`), the full
list with a scheduling overhead of at most 5 %, and cost linear in the corpus size. The tables are
printed and written to the scale section of benchmarks/README.md.

Run: ``python benchmarks/scale.py`` (both lists at UASpeech's size; ``--help`` for options).
``--size 0.5`` runs half the words per speaker (a quicker check), ``--linearity`` runs half,
once, twice and four times the words per speaker (78 to 620 words: UASpeech's 155 and, past
them, their plurals and -ing, -ed and -er forms, so that no text gains readers) and writes the
linearity table; ``--from-result`` writes it from saved runs of one list at several sizes.
Corpora are kept in the scratch directory and reused by later runs with the same shape.
"""

from __future__ import annotations

import argparse
import base64
import compileall
import contextlib
import datetime as dt
import json
import math
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
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

import pathbench_flow
from pathbench_flow.common.seeds import DEMO_SEED
from pathbench_flow.demo.corpus import WORDS, make_demo

REPO = Path(__file__).resolve().parents[1]
from pathbench_flow.testing.workflow_run import (  # noqa: E402  (the tests' helpers, shared, not copied)
    LOCAL_RUN,
    copy_workflow,
    full_log,
    start_snakemake,
)

README = REPO / "benchmarks" / "README.md"
SECTION_START = "<!-- scale-benchmark:start -->"
SECTION_END = "<!-- scale-benchmark:end -->"
LINEARITY_START = "<!-- scale-linearity:start -->"
LINEARITY_END = "<!-- scale-linearity:end -->"

SPEAKERS = {"n_pathological": 14, "n_control": 13}
UASPEECH_WORDS = len(WORDS)
"""Words per speaker at size 1: UASpeech's 155 (digits, radio alphabet, commands, common)."""
FULL_EXTRA = ("p_estoi", "p_stoi", "nad", "wpm", "speech_rate", "vsa_corners")
"""What the full list adds to the defaults: every other measure that runs no model."""
FULL_OPTIONS = {"nad": {"features": "mfcc"}}
LISTS = ("full", "default")
GOAL_WALL_S = {"full": 540.0, "default": 300.0}
"""Wall-time goals in seconds on 2 cores, met by :attr:`Result.normalised_wall_s`."""
REFERENCE_SPEED = 1500.0
"""The Praat speed index (:func:`praat_speed`) the wall-time goals are stated for: a machine
twice as fast has half the time, a slower one more, so no machine can move a goal."""
GOAL_OVERHEAD = 0.05
LINEARITY_SIZES = (0.5, 1.0, 2.0, 4.0)
LINEAR_SPREAD = 0.10
"""Largest spread of the CPU and wall time per utterance across the sizes for linear cost."""
_FINISHED = re.compile(r"^Finished jobid: \d+ \(Rule: (\w+)\)$", re.M)
_STATS_ROW = re.compile(r"^(\w+)\s+(\d+)$", re.M)
_TICK = os.sysconf("SC_CLK_TCK")


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
    evaluators: str = "default"
    """Which list ran (:data:`LISTS`)."""
    size: float = 1.0
    words: int = UASPEECH_WORDS
    utterances: int = 0
    snakemake_cpu_s: float | None = None
    """CPU time of the Snakemake process itself (sampled until it exits; without its jobs)."""
    machine: str = ""
    """The processor and its speed index (:func:`machine`)."""
    audio_s: float = 0.0
    """Seconds of audio in the corpus (0: not recorded)."""
    speed_index: float = 0.0
    """The machine's Praat speed index (:func:`praat_speed`): the larger of the readings before
    and after the run, so the normalised wall time errs high (0: not recorded, as in results
    saved before it was; earlier results hold the reading before the run alone)."""
    speed_readings: tuple[float, ...] = ()
    """The readings the index was taken from: before and after the run."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> Result:
        data = json.loads(text)
        for key in ("rule_times", "evaluator_times"):
            data[key] = {k: RuleTime(**v) for k, v in data[key].items()}
        data["load"] = tuple(data["load"]) if data.get("load") else None
        data["speed_readings"] = tuple(data.get("speed_readings", ()))
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

    @property
    def normalised_wall_s(self) -> float | None:
        """The wall time on a machine of :data:`REFERENCE_SPEED`: wall x index / 1,500, so the
        goals compare runs on machines of different speeds (None without an index)."""
        if not self.speed_index:
            return None
        return self.wall_s * self.speed_index / REFERENCE_SPEED

    @property
    def complete(self) -> bool:
        return self.stopped_after is None and self.returncode == 0

    def goals(self) -> dict[str, bool]:
        """Each goal of this list and whether the run met it (a stopped or failed run meets
        none)."""
        wall = GOAL_WALL_S[self.evaluators]
        normalised = self.normalised_wall_s
        met = {
            f"normalised wall time <= {wall:.0f} s": self.complete
            and normalised is not None
            and normalised <= wall
        }
        if self.evaluators == "full":
            met["scheduling overhead <= 5 %"] = (
                self.complete and self.overhead_s <= GOAL_OVERHEAD * self.wall_s
            )
        return met

    def projected(self, rule: str) -> float | None:
        """Sum of run times of all planned jobs of a rule, from the mean of those that ran."""
        t = self.rule_times.get(rule)
        n = max(self.planned.get(rule, 0), t.jobs if t else 0)
        return None if t is None else n * t.seconds / t.jobs


def words_per_speaker(size: float) -> int:
    """Words each speaker says at ``size`` times UASpeech's corpus."""
    n = round(UASPEECH_WORDS * size)
    most = len(texts(len(SUFFIXES) * UASPEECH_WORDS))
    if not 1 <= n <= most:
        raise SystemExit(f"--size {size}: 1 to {most} words per speaker, got {n}")
    return n


SUFFIXES = ("", "s", "ing", "ed", "er")
"""UASpeech's words, then with each suffix in turn: four times its texts and more."""


def texts(n_words: int) -> list[str]:
    """``n_words`` distinct isolated words: UASpeech's, then their plurals, then their -ing, -ed
    and -er forms (espeak-ng says any spelling), each once ("i" + "s" is "is"). Distinct, so a
    larger corpus has more texts rather than more readers per text, and each utterance keeps
    its number of references (a reference measure compares it with every other speaker's
    recording of its text)."""
    words = dict.fromkeys(f"{word}{suffix}" for suffix in SUFFIXES for word in WORDS)
    return list(words)[:n_words]


def corpus(scratch: Path, seed: int, n_words: int) -> tuple[Path, float]:
    """The UASpeech-shaped corpus of ``n_words`` words per speaker (generated unless an
    identical one is there); seconds spent."""
    out = scratch / f"corpus-{n_words}"
    marker = scratch / f"corpus-{n_words}.json"
    wanted = {**SPEAKERS, "n_utterances": n_words, "word_mode": True, "seed": seed}
    if out.is_dir() and marker.is_file() and json.loads(marker.read_text()) == wanted:
        return out, 0.0
    started = time.perf_counter()
    make_demo(
        out, seed=seed, texts=texts(n_words), **{k: v for k, v in wanted.items() if k != "seed"}
    )
    spent = time.perf_counter() - started
    for subset, speakers in (("pathological", "n_pathological"), ("control", "n_control")):
        lines = (out / subset / "utt2spk").read_text().splitlines()
        if len(lines) != SPEAKERS[speakers] * n_words:
            raise SystemExit(
                f"{subset}: {len(lines)} utterances, expected {SPEAKERS[speakers] * n_words}"
            )
    marker.write_text(json.dumps(wanted))
    return out, spent


def audio_seconds(corpus_dir: Path) -> float:
    """Seconds of audio in the corpus's recordings (its two sets), from their headers: the
    sizes' words differ in length (plurals are longer), and the cost follows the audio."""
    import soundfile as sf

    total = 0.0
    for subset in ("pathological", "control"):
        for line in (corpus_dir / subset / "wav.scp").read_text().splitlines():
            path = Path(line.split()[1])
            located = path if path.is_absolute() else corpus_dir / subset / path
            total += sf.info(str(located)).duration
    return total


def default_evaluators() -> list[str]:
    """The evaluators a config that names none runs: the schema's default list."""
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return list(schema["properties"]["evaluators"]["default"])


def evaluator_list(name: str) -> tuple[list[str], dict[str, dict]]:
    """The evaluators of list ``name`` and their options."""
    defaults = default_evaluators()
    if name == "default":
        return defaults, {}
    return [*defaults, *(e for e in FULL_EXTRA if e not in defaults)], FULL_OPTIONS


def prepare_workflow(
    scratch: Path, corpus_dir: Path, shard_size: int, evaluators: str
) -> tuple[Path, Path]:
    """A fresh copy of the workflow and the benchmark's config file; (workdir, config path).

    The copy's config/config.yaml is replaced by the benchmark config as well: Snakemake merges
    --configfile into the Snakefile's configfile key by key, which would keep the demo dataset.
    """
    workdir = scratch / f"workflow-{evaluators}"
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
    config["evaluators"], options = evaluator_list(evaluators)
    config["evaluator_options"] = {
        name: options.get(name, config.get("evaluator_options", {}).get(name, {}))
        for name in config["evaluators"]
        if name in options or name in config.get("evaluator_options", {})
    }
    config_path = workdir / "config" / "config.yaml"
    header = (
        "# Written by benchmarks/scale.py: config/config.yaml with the UASpeech-shaped "
        f"corpus, its shard size and the {evaluators} evaluator list.\n"
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
    code = "import snakemake.script, pandas, pyarrow, pathbench_flow.evaluators.registry"
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


def _process_cpu(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


def _wait(process: subprocess.Popen, timeout: float | None) -> tuple[int, float | None]:
    """Wait for the run, sampling the Snakemake process's own CPU time until it exits;
    (exit code, CPU seconds of its last sample, at most half a second before its end).

    Raises:
        subprocess.TimeoutExpired: after ``timeout`` seconds.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    own = None
    while process.poll() is None:
        own = _process_cpu(process.pid) or own
        if deadline is not None and time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(process.args, timeout)
        time.sleep(0.5)
    return process.returncode, own


def run(
    workdir: Path,
    config_path: Path,
    cores: int,
    shard_size: int,
    timeout: float | None,
    evaluators: str,
    size: float,
) -> Result:
    n_words = words_per_speaker(size)
    planned = planned_jobs(workdir, config_path)
    speed_before = praat_speed()
    load_before = os.getloadavg()[0]
    log_path = workdir / "snakemake.out"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started_epoch = time.time()
    started = time.perf_counter()
    stopped_after = own_cpu = None
    with open(log_path, "w") as log:
        config = str(config_path.relative_to(workdir))
        # A laptop's run: where a slurm.conf names a controller that is not running (as on the
        # machine the numbers in benchmarks/README.md come from), every Snakemake start would
        # first wait ~8 s for the SLURM plugin's question to it.
        process = start_snakemake(
            workdir, log, "--cores", str(cores), "--configfile", config, environment=LOCAL_RUN
        )
        try:
            returncode, own_cpu = _wait(process, timeout)
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
    # The console has one line per job; Snakemake's full log names each finished job's rule.
    jobs_by_rule: dict[str, int] = defaultdict(int)
    for rule in _FINISHED.findall(full_log(workdir)):
        jobs_by_rule[rule] += 1
    load_after = os.getloadavg()[0]
    speed_after = praat_speed()
    speed = max(speed_before, speed_after)
    described = machine(speed)
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
        evaluators,
        size,
        n_words,
        n_words * sum(SPEAKERS.values()),
        own_cpu,
        described,
        speed_index=speed,
        speed_readings=(speed_before, speed_after),
    )


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s ({seconds / 60:.1f} min)"


def _optional_s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.1f} s"


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
    goal = GOAL_WALL_S[result.evaluators]
    if result.stopped_after is not None:
        wall_label = f"wall time (stopped after {result.stopped_after:.0f} s; goal: missed)"
    else:
        wall_label = "wall time"
    normalised = result.normalised_wall_s
    if normalised is None:
        normalised_row = "| normalised wall time | no speed index recorded |"
    else:
        wall_ok = "met" if result.complete and normalised <= goal else "missed"
        normalised_row = (
            f"| normalised wall time: wall x {result.speed_index:.0f} / {REFERENCE_SPEED:.0f} "
            f"(goal <= {goal:.0f} s: {wall_ok}{_readings(result)}) | {_minutes(normalised)} |"
        )
    over_ok = "met" if share <= GOAL_OVERHEAD else "missed"
    over_label = (
        f"goal <= 5 %: {over_ok}" if result.evaluators == "full" else "goal for the full list"
    )
    startup = result.startup_s
    totals = [
        "| total | value |",
        "|---|---:|",
        f"| {wall_label} | {_minutes(result.wall_s)} |",
        normalised_row,
        f"| CPU time, snakemake and all jobs (user + system) | {_minutes(result.cpu_s)} |",
        f"| CPU time / {result.cores} cores (wall time on otherwise idle cores, at best) | "
        f"{_minutes(result.cpu_s / result.cores)} |",
        f"| jobs run (planned before checkpoints: {sum(result.planned.values())}) | "
        f"{result.n_jobs} |",
        f"| sum of job run times | {_minutes(result.job_seconds)} |",
        f"| sum of job run times / {result.cores} cores | "
        f"{_minutes(result.job_seconds / result.cores)} |",
        f"| scheduling overhead: wall - sum / cores ({over_label}) | "
        f"{overhead:.0f} s ({100 * share:.1f} %) |",
        f"| of which before the first job (parse, DAG) | {result.first_job_s:.1f} s |",
        f"| CPU time of the Snakemake process itself (DAG, scheduling) | "
        f"{_optional_s(result.snakemake_cpu_s)} |",
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


def _status(result: Result) -> str:
    if result.stopped_after is not None:
        return (
            f"\n**The run was stopped after {result.stopped_after / 60:.0f} minutes "
            "(`--timeout`), far past the goal.** The table covers the jobs that finished "
            "by then; the last column projects each rule's total from the mean of its "
            "finished jobs and the number of jobs in the plan.\n"
        )
    if result.returncode != 0:
        return (
            f"\n**The run failed (exit code {result.returncode}); the numbers cover the "
            "jobs that finished before the failure.**\n"
        )
    return ""


def _processor() -> str:
    """The processor's model name (Linux), or the platform's word for it."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or platform.machine()


def praat_speed() -> float:
    """Seconds of audio Praat's pitch analysis covers per CPU second on one core (best of seven
    on 20 s of seeded noise, after a second of the same work to wake the core): a speed index
    of the machine that no change to this project moves.

    The same code has run the cepstral measures 1.6-1.9 times slower on one 2-core machine of
    this workplace than on another, so a wall time compares only beside its machine's speed.
    Without the warm-up, a reading on an idle virtual machine came out at 979 where readings 23
    minutes later, under load, gave 1,290-1,299: each timed analysis takes ~20 ms, too short
    for a core that was idle.
    """
    import numpy as np
    import parselmouth

    noise = np.random.default_rng(DEMO_SEED).standard_normal(20 * 16000) * 0.1
    sound = parselmouth.Sound(noise, sampling_frequency=16000)
    warm_until = time.process_time() + 1.0
    while time.process_time() < warm_until:
        sound.to_pitch()
    best = math.inf
    for _ in range(7):
        started = time.process_time()
        sound.to_pitch()
        best = min(best, time.process_time() - started)
    return 20.0 / best


def machine(speed: float) -> str:
    """The processor and its speed index (:func:`praat_speed`)."""
    return f"{_processor()}; Praat pitch at {speed:.0f}x real time on one core"


def _machine(result: Result | None = None) -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    cpus = f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}"
    described = result.machine if result is not None and result.machine else ""
    return f"{now}, {cpus}" + (f" ({described})" if described else "")


def _list_title(result: Result) -> str:
    names = ", ".join(f"`{name}`" for name in evaluator_list(result.evaluators)[0])
    return f"### The {result.evaluators} evaluator list ({names})"


def _readings(result: Result) -> str:
    """Which readings the index is the larger of, when both were recorded."""
    if len(result.speed_readings) != 2:
        return ""
    before, after = result.speed_readings
    return f", the larger of {before:.0f} before and {after:.0f} after the run"


def goal_summary(results: list[Result]) -> str:
    """One line per run: its list, size and each goal met or missed."""
    lines = []
    for result in results:
        goals = ", ".join(
            f"{goal}: {'met' if ok else 'missed'}" for goal, ok in result.goals().items()
        )
        normalised = result.normalised_wall_s
        index = (
            f" (normalised by Praat speed index {result.speed_index:.0f}{_readings(result)}: "
            f"{_minutes(normalised)})"
            if normalised is not None
            else ""
        )
        lines.append(
            f"* {result.evaluators} list, {result.utterances} utterances: wall "
            f"{_minutes(result.wall_s)}{index}, {goals}"
        )
    return "\n".join(lines)


def _size(result: Result) -> str:
    """The corpus a run used, against UASpeech's."""
    if result.words == UASPEECH_WORDS:
        return "UASpeech's size"
    return (
        f"`--size {result.size:g}`: {result.words} words per speaker, "
        f"{result.utterances:,} utterances"
    )


def section(results: list[Result], corpus_s: float) -> str:
    first = results[0]
    tables = "\n\n".join(f"{_list_title(r)}\n{_status(r)}\n{table(r)}" for r in results)
    return f"""{SECTION_START}
## Scale: the whole workflow on a UASpeech-sized corpus (`scale.py`)

`python benchmarks/scale.py` synthesises a corpus shaped like UASpeech word, balanced, with
the demo generator (14 pathological speakers x 155 words = 2,170 utterances, 13 control
speakers x 155 = 2,015; isolated words of 1-2 s), runs the workflow on it with
`--cores {first.cores}` in a scratch copy (config/config.yaml: raw and fa variants, control and
all references, open-set evaluation on; the dataset paths replaced and
`shard_size: {first.shard_size}`, the schema default for real corpora), once with every measure
that runs no model (the full list) and once with the schema's default list, and records:

* **wall time** of the `snakemake` process, start-up to exit;
* **CPU time** of snakemake and all jobs (`getrusage` of the finished child processes), and of
  the Snakemake process alone (sampled from `/proc` until it exits): parsing, the DAG, input
  functions, file checks and scheduling;
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

Goals, on 2 cores: the full list in at most 540 s and the default list in at most 300 s of
normalised wall time, the full list with a scheduling overhead of at most 5 % of its wall time.
The normalised wall time is the wall time x the machine's Praat speed index / 1,500 (the
index: seconds of audio Praat's pitch analysis covers per CPU second on one core, read after a
second of warm-up before and after each run; the larger reading counts, so the normalised
figure errs high), so a slower machine cannot move a goal. Corpus synthesis is not part of a run
({corpus_s:.0f} s when it was generated; 0 = reused).

Last run: {_machine(first)}; {_size(first)}.

{goal_summary(results)}

{tables}

{SECTION_END}
"""


def _counted(numbers: Iterable[int]) -> str:
    """``78, 155 and 310``."""
    words = [str(n) for n in sorted(set(numbers))]
    return ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + words[-1]


def linearity_section(results: list[Result]) -> str:
    """The runs of one list at several corpus sizes side by side, costs per utterance."""
    rows = [
        "| corpus (speakers x words) | utterances | jobs run | CPU time | CPU ms per utterance "
        "| CPU ms per second of audio | Snakemake process CPU | sum of job run times | wall time "
        "| wall ms per utterance | scheduling overhead |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    ordered = sorted(results, key=lambda r: r.utterances)
    for r in ordered:
        speakers = sum(SPEAKERS.values())
        per_audio = f"{1000 * r.cpu_s / r.audio_s:.0f}" if r.audio_s else "-"
        rows.append(
            f"| {speakers} x {r.words} | {r.utterances} | {r.n_jobs} | {_minutes(r.cpu_s)} | "
            f"{1000 * r.cpu_s / r.utterances:.0f} | {per_audio} | "
            f"{_optional_s(r.snakemake_cpu_s)} | {_minutes(r.job_seconds)} | "
            f"{_minutes(r.wall_s)} | {1000 * r.wall_s / r.utterances:.0f} | "
            f"{100 * r.overhead_s / r.wall_s:.1f} % |"
        )
    lists = sorted({r.evaluators for r in results})
    spread = {
        name: max(values) / min(values) - 1
        for name, values in (
            ("CPU time", [r.cpu_s / r.utterances for r in ordered]),
            ("wall time", [r.wall_s / r.utterances for r in ordered]),
        )
    }
    verdict = "met" if all(v <= LINEAR_SPREAD for v in spread.values()) else "missed"
    spreads = ", ".join(f"{name} {100 * value:.1f} %" for name, value in spread.items())
    return f"""{LINEARITY_START}
### Linearity: the corpus at several sizes (`scale.py --linearity`)

The {", ".join(lists)} list at {_counted(r.words for r in ordered)} words per speaker (14 + 13
speakers; past UASpeech's 155 words, their plurals, then their -ing, -ed and -er forms), so
each utterance keeps the references it is compared with and the work per utterance stays the
same: a cost that grows linearly with the corpus keeps the same CPU time per utterance. Last
run: {_machine(results[0])}.

{chr(10).join(rows)}

Spread of the cost per utterance across the sizes (largest / smallest - 1): {spreads}
(within {100 * LINEAR_SPREAD:.0f} %: {verdict}).

{LINEARITY_END}
"""


def write_readme(text: str, start: str = SECTION_START, end: str = SECTION_END) -> None:
    """Replace the section between ``start`` and ``end`` of benchmarks/README.md, or add it
    at the end."""
    if README.exists():
        current = README.read_text()
        pattern = re.compile(re.escape(start) + r".*?" + re.escape(end) + r"\n?", re.S)
        if pattern.search(current):
            updated = pattern.sub(lambda _: text, current, count=1)
        else:
            updated = current.rstrip("\n") + "\n\n" + text
    else:
        updated = "# Benchmarks\n\n" + text
    README.write_text(updated)


def _saved(path: Path) -> tuple[Result, float]:
    saved = json.loads(path.read_text())
    return Result.from_json(json.dumps(saved["result"])), saved["corpus_s"]


def compile_package() -> None:
    """Write the bytecode of the package's modules before a timed run.

    Python writes it on a module's first import, so on most machines only the first job of
    a run compiles anything. Where ``PYTHONDONTWRITEBYTECODE`` is set (this benchmark's
    machine sets it for every process) an editable install never gets any, and every job
    compiled the ~30 modules it imports again: ~0.09 of a scoring job's 0.7 CPU-s. compileall
    writes it regardless, so a run measures the workflow, not that setting.
    """
    package = Path(pathbench_flow.__file__).parent  # the one the jobs import, too
    if not compileall.compile_dir(package, quiet=1):
        raise RuntimeError(f"could not compile {package}")


def run_one(args: argparse.Namespace, evaluators: str, size: float) -> tuple[Result, float]:
    """Generate (or reuse) the corpus of ``size``, run list ``evaluators`` on it, save and
    print the result; (result, seconds spent generating the corpus)."""
    n_words = words_per_speaker(size)
    corpus_dir, corpus_s = corpus(args.scratch, args.seed, n_words)
    made = f"generated in {corpus_s:.0f} s" if corpus_s else "reused"
    print(f"corpus: {corpus_dir} ({made})")
    workdir, config_path = prepare_workflow(args.scratch, corpus_dir, args.shard_size, evaluators)
    compile_package()
    print(f"running the {evaluators} list in {workdir} on {args.cores} cores ...", flush=True)
    result = run(workdir, config_path, args.cores, args.shard_size, args.timeout, evaluators, size)
    result.audio_s = audio_seconds(corpus_dir)
    if result.stopped_after is not None:
        print(f"stopped after {result.stopped_after:.0f} s (--timeout)", file=sys.stderr)
    elif result.returncode != 0:
        print(
            f"snakemake failed ({result.returncode}); see {workdir / 'snakemake.out'}",
            file=sys.stderr,
        )
    saved = args.scratch / f"result-{evaluators}-{n_words}.json"
    saved.write_text(json.dumps({"result": json.loads(result.to_json()), "corpus_s": corpus_s}))
    print(table(result))
    print(f"result saved to {saved}")
    return result, corpus_s


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
        "--lists",
        default=",".join(LISTS),
        help="comma-separated evaluator lists to run: full (every measure without a model), "
        "default (the schema's); default: both",
    )
    parser.add_argument(
        "--size",
        type=float,
        default=1.0,
        help="corpus size as a multiple of UASpeech's 155 words per speaker (default 1)",
    )
    parser.add_argument(
        "--linearity",
        action="store_true",
        help="run each list at 0.5, 1, 2 and 4 times the corpus and write the linearity table",
    )
    parser.add_argument(
        "--from-result",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="do not run: print (and write) the tables of saved result-*.json files",
    )
    parser.add_argument(
        "--no-readme",
        action="store_true",
        help="print the tables without updating benchmarks/README.md",
    )
    args = parser.parse_args(argv)
    lists = [name.strip() for name in args.lists.split(",") if name.strip()]
    unknown = sorted(set(lists) - set(LISTS))
    if unknown or not lists:
        parser.error(f"--lists: unknown {unknown}; choose from {', '.join(LISTS)}")

    if args.from_result:
        loaded = [_saved(path) for path in args.from_result]
        results, corpus_s = [r for r, _ in loaded], max(c for _, c in loaded)
        sizes = {r.words for r in results}
        for result in results:
            print(table(result))
        print(goal_summary(results))
        if not args.no_readme:
            if len(sizes) > 1:
                write_readme(linearity_section(results), LINEARITY_START, LINEARITY_END)
            else:
                write_readme(section(results, corpus_s))
        return 0

    args.scratch.mkdir(parents=True, exist_ok=True)
    sizes = LINEARITY_SIZES if args.linearity else (args.size,)
    runs = [run_one(args, name, size) for size in sizes for name in lists]
    results = [r for r, _ in runs]
    print(goal_summary(results))
    if not args.no_readme:
        if args.linearity:
            write_readme(linearity_section(results), LINEARITY_START, LINEARITY_END)
        else:
            write_readme(section(results, max(c for _, c in runs)))
        print(f"written to {README.relative_to(REPO)}")
    return 0 if all(r.complete or r.stopped_after is not None for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
