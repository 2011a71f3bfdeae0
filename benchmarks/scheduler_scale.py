"""The Snakemake process's own cost as the corpus grows: its CPU share and memory, and planning.

The measures' cost grows with the audio; what must not outgrow the corpus is the main Snakemake
process (DAG building, input functions, scheduling, the console). Measured on the
UASpeech-shaped corpus of ``benchmarks/scale.py`` made cheap and grown like a real corpus:

* every recording cut to its first 0.6 s, so the jobs cost little and the run's time is
  mostly the workflow's own;
* every speaker copied ``N`` times under new ids (``<speaker>c<k>``; the recordings are
  hard links), so ``N`` times the utterances make ``N`` times the shards and jobs, as a real
  corpus of that size would (the texts stay UASpeech's 155, so with ``all`` references each
  utterance has ``N`` times the references: that part of the reference work grows by design).

Recorded per size, on a machine others may be using, so in CPU seconds, not wall time: the
Snakemake process's own CPU (user + system of that process alone, from ``/proc``), the whole
run's (``getrusage`` of the children, the Snakemake process and every job), its share, the
Snakemake process's peak resident memory (``VmHWM``) and the CPU and wall time of
``snakemake -n`` (planning alone, before any job). Sizes with ``--plan-only`` get the dry run
only.

Goals: the Snakemake process at most 3 % of the run's CPU and 1.5 GB peak memory at every size,
growing no faster than the job count; ``snakemake -n`` at 16 copies within 60 s.

Run: ``python benchmarks/scheduler_scale.py --copies 1 2 4 --plan-only 8 16``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import (  # noqa: E402  (the scale benchmark's corpus, config and sampling, shared)
    SPEAKERS,
    UASPEECH_WORDS,
    _process_cpu,
    compile_package,
    corpus,
    prepare_workflow,
    write_readme,
)

from pathbench_flow.common.seeds import DEMO_SEED  # noqa: E402
from pathbench_flow.testing.workflow_run import LOCAL_RUN, start_snakemake  # noqa: E402

SUBSETS = ("pathological", "control")
SPEAKER_TABLES = ("spk2gender", "spk2age", "spk2score")
UTTERANCE_TABLES = ("wav.scp", "text", "utt2spk", "utt2group")
CHEAP_SECONDS = 0.6
SECTION_START = "<!-- scheduler-scale:start -->"
SECTION_END = "<!-- scheduler-scale:end -->"
GOAL_SHARE = 0.03
GOAL_RSS_MB = 1536
GOAL_PLAN_S = 60.0
_JOBS = re.compile(r"^total\s+(\d+)$", re.M)


@dataclass
class Measured:
    copies: int
    utterances: int
    planned_jobs: int
    plan_cpu_s: float
    plan_wall_s: float
    plan_rss_mb: float
    jobs: int | None = None
    snakemake_cpu_s: float | None = None
    total_cpu_s: float | None = None
    peak_rss_mb: float | None = None
    wall_s: float | None = None
    returncode: int | None = None

    @property
    def share(self) -> float | None:
        if self.snakemake_cpu_s is None or not self.total_cpu_s:
            return None
        return self.snakemake_cpu_s / self.total_cpu_s


def _read(path: Path) -> list[tuple[str, str]]:
    return [tuple(line.split(maxsplit=1)) for line in path.read_text().splitlines()]


def _speaker(copy: int, speaker: str) -> str:
    return speaker if copy == 0 else f"{speaker}c{copy}"


def _renamed(copy: int, speaker: str, name: str) -> str:
    """``name`` (an utterance or group id that starts with its speaker's id) in copy ``copy``."""
    return _speaker(copy, speaker) + name[len(speaker) :]


def cheap_corpus(base: Path, out: Path, copies: int) -> Path:
    """``base`` with its recordings cut to :data:`CHEAP_SECONDS` and every speaker copied
    ``copies`` times under new ids (made once; reused when ``out`` is complete)."""
    done = out / "done.json"
    if done.is_file():
        return out
    cut = base.parent / f"{base.name}-cut"
    for subset in SUBSETS:
        (cut / subset / "wav").mkdir(parents=True, exist_ok=True)
        for _, path in _read(base / subset / "wav.scp"):
            target = cut / subset / path
            if not target.exists():
                samples, rate = sf.read(base / subset / path, dtype="int16")
                partial = target.with_suffix(".partial.wav")
                sf.write(partial, samples[: int(CHEAP_SECONDS * rate)], rate, subtype="PCM_16")
                partial.rename(target)
    for subset in SUBSETS:
        root = out / subset
        (root / "wav").mkdir(parents=True, exist_ok=True)
        spk = dict(_read(base / subset / "utt2spk"))
        tables = {name: _read(base / subset / name) for name in UTTERANCE_TABLES}
        for copy in range(copies):
            for utt, path in tables["wav.scp"]:
                link = root / "wav" / f"{_renamed(copy, spk[utt], utt)}.wav"
                if not link.exists():
                    os.link(cut / subset / path, link)
        for name, rows in tables.items():
            lines = []
            for copy in range(copies):
                for utt, value in rows:
                    new = _renamed(copy, spk[utt], utt)
                    if name == "wav.scp":
                        value = f"wav/{new}.wav"
                    elif name == "utt2spk":
                        value = _speaker(copy, value)
                    elif name == "utt2group":
                        value = _renamed(copy, spk[utt], value)
                    lines.append(f"{new} {value}\n")
            (root / name).write_text("".join(sorted(lines)))
        for name in SPEAKER_TABLES:
            rows = _read(base / subset / name)
            lines = [f"{_speaker(c, s)} {v}\n" for c in range(copies) for s, v in rows]
            (root / name).write_text("".join(sorted(lines)))
        (root / "language").write_text((base / subset / "language").read_text())
    done.write_text(json.dumps({"copies": copies, "seconds": CHEAP_SECONDS}))
    return out


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def plan(workdir: Path, config: Path) -> tuple[int, float, float, float]:
    """``snakemake -n``: (jobs planned, CPU seconds, wall seconds, peak RSS in MB), from the
    resource usage of that one process (``wait4``), not of every child so far: a dry run after
    a measured run would otherwise report that run's largest job."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "snakemake", "-n", "--configfile", str(config)],
            cwd=workdir,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            env=os.environ | LOCAL_RUN,
        )
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        out.seek(0)
        text = out.read()
    if process.returncode != 0:
        raise SystemExit(f"snakemake -n failed:\n{text[-4000:]}")
    found = _JOBS.findall(text)
    cpu = usage.ru_utime + usage.ru_stime
    return (int(found[0]) if found else 0), cpu, wall, usage.ru_maxrss / 1024


def _peak_rss_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
    return int(match.group(1)) / 1024 if match else None


def run(
    workdir: Path, config: Path, cores: int, measured: Measured, extra: Sequence[str] = ()
) -> None:
    """The whole workflow, with ``extra`` Snakemake options; fills in the run's figures of
    ``measured``."""
    cpu, started = _cpu_children(), time.perf_counter()
    own = rss = None
    with open(workdir / "snakemake.out", "w") as log:
        process = start_snakemake(
            workdir,
            log,
            "--cores",
            str(cores),
            "--configfile",
            str(config),
            *extra,
            environment=LOCAL_RUN,
        )
        while process.poll() is None:
            own = _process_cpu(process.pid) or own
            rss = _peak_rss_mb(process.pid) or rss
            time.sleep(0.5)
    measured.wall_s = time.perf_counter() - started
    measured.total_cpu_s = _cpu_children() - cpu
    measured.snakemake_cpu_s, measured.peak_rss_mb = own, rss
    measured.returncode = process.returncode
    measured.jobs = len(re.findall(r"^Finished jobid: ", _full_log(workdir), re.M)) or None
    if process.returncode != 0:
        print((workdir / "snakemake.out").read_text()[-3000:], file=sys.stderr)


def _full_log(workdir: Path) -> str:
    logs = sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"))
    return logs[-1].read_text() if logs else ""


def _f(value: float | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def table(rows: list[Measured]) -> str:
    lines = [
        "| copies | utterances | jobs | Snakemake CPU-s | total CPU-s | share | "
        "Snakemake peak RSS | `snakemake -n` CPU-s (wall) | `snakemake -n` peak RSS |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        share = None if r.share is None else 100 * r.share
        lines.append(
            f"| {r.copies}× | {r.utterances:,} | {r.jobs or r.planned_jobs:,} | "
            f"{_f(r.snakemake_cpu_s, '.1f')} | {_f(r.total_cpu_s, '.0f')} | "
            f"{_f(share, '.1f')}{'' if share is None else ' %'} | "
            f"{_f(r.peak_rss_mb, '.0f')}{'' if r.peak_rss_mb is None else ' MB'} | "
            f"{r.plan_cpu_s:.1f} ({r.plan_wall_s:.1f} s) | {r.plan_rss_mb:.0f} MB |"
        )
    return "\n".join(lines)


def section(rows: list[Measured]) -> str:
    """The README's table between its markers (what ``--readme`` writes)."""
    return f"{SECTION_START}\n{table(rows)}\n{SECTION_END}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scratch", type=Path, default=Path(tempfile.gettempdir()) / "pathbench-scheduler"
    )
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--shard-size", type=int, default=250)
    parser.add_argument("--list", default="full", choices=("full", "default"))
    parser.add_argument("--copies", type=int, nargs="*", default=[1, 2, 4])
    parser.add_argument("--plan-only", type=int, nargs="*", default=[8, 16])
    parser.add_argument(
        "--snakemake-option",
        action="append",
        default=[],
        metavar="OPTION",
        help="an option for the measured runs (not the dry runs), e.g. "
        "--snakemake-option=--scheduler-greedy-omit-prioritize-by-temp-and-input; repeatable",
    )
    parser.add_argument(
        "--label", default="", help="suffix of the saved measured-<copies>.json (one per variant)"
    )
    parser.add_argument("--readme", action="store_true", help="write the table to the README")
    args = parser.parse_args(argv)
    args.scratch.mkdir(parents=True, exist_ok=True)
    base, _ = corpus(args.scratch, DEMO_SEED, UASPEECH_WORDS)
    compile_package()
    rows = []
    for copies in sorted({*args.copies, *args.plan_only}):
        cheap = cheap_corpus(base, args.scratch / f"cheap-{copies}", copies)
        workdir, config = prepare_workflow(args.scratch, cheap, args.shard_size, args.list)
        config = config.relative_to(workdir)
        jobs, plan_cpu, plan_wall, plan_rss = plan(workdir, config)
        utterances = copies * UASPEECH_WORDS * sum(SPEAKERS.values())
        measured = Measured(copies, utterances, jobs, plan_cpu, plan_wall, plan_rss)
        if copies in args.copies:
            print(f"{copies}×: running {jobs} planned jobs in {workdir} ...", flush=True)
            run(workdir, config, args.cores, measured, args.snakemake_option)
        rows.append(measured)
        saved = args.scratch / f"measured-{copies}{args.label}.json"
        saved.write_text(json.dumps(asdict(measured)))
        print(table(rows[-1:]), flush=True)
    print(table(rows))
    if args.readme:
        write_readme(section(rows), SECTION_START, SECTION_END)
    return 0 if all(r.returncode in (None, 0) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
