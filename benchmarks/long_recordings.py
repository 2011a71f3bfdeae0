"""Peak memory of every job kind against the length of one recording, up to two hours.

A user's dataset may list a whole session as one utterance. Each case is the demo corpus
(config/config.yaml's evaluators, both variants and reference types, open-set off) with one
pathological utterance's recording replaced by that utterance's audio repeated up to the
case's duration (numpy, 16 kHz 16-bit, so its content is speech throughout). The workflow then
runs with ``--cores 2`` in a scratch directory, with ``validation.max_utterance_s`` raised past
the case so that validation accepts it, while a sampler reads every 0.1 s the resident memory
(RSS) of each job's process tree. A job is known by the script Snakemake runs
(``.snakemake/scripts/tmp….<rule>.py``), so the peak is per rule; it is compared with the
``mem_mb`` the job declared (``RESOURCES``, or its callable, workflow/rules/settings.smk), read
from Snakemake's log.

Run: ``python benchmarks/long_recordings.py`` (cases 60 s, 10 min, 30 min, 2 h; ``--durations``
to choose). Prints a Markdown table, which benchmarks/README.md ("Long recordings") holds.
Needs ``psutil``.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import soundfile as sf
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = re.compile(r"\.snakemake/scripts/tmp[^/]*\.(\w+)\.py")
SAMPLE_S = 0.1


def rule_of(process: psutil.Process) -> str | None:
    """The rule a job's Python process runs, from the script path on its command line."""
    try:
        match = SCRIPT.search(" ".join(process.cmdline()))
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    return match.group(1) if match else None


def tree_rss(process: psutil.Process) -> int:
    """Resident bytes of ``process`` and its children (a job may start helpers)."""
    total = 0
    for member in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += member.memory_info().rss
    return total


def sample(root: psutil.Process, peaks: dict[str, int], stop: threading.Event) -> None:
    """Record the peak RSS per rule of the job processes under ``root`` until ``stop``."""
    while not stop.is_set():
        try:
            members = root.children(recursive=True)
        except psutil.NoSuchProcess:
            return
        for process in members:
            rule = rule_of(process)
            if rule:
                with contextlib.suppress(psutil.NoSuchProcess):
                    peaks[rule] = max(peaks.get(rule, 0), tree_rss(process))
        time.sleep(SAMPLE_S)


def make_case(scratch: Path, seconds: float) -> Path:
    """The demo corpus in ``scratch`` with the first pathological recording made ``seconds``
    long, and a config that runs it; returns the config file."""
    sys.path.insert(0, str(ROOT))
    from pathbench_flow.demo.corpus import make_demo

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    demo = config["demo"]
    make_demo(
        scratch / "demo",
        seed=demo["seed"],
        n_pathological=demo["n_pathological"],
        n_control=demo["n_control"],
        n_utterances=demo["n_utterances"],
        word_mode=demo["word_mode"],
    )
    data = scratch / "demo" / "pathological"
    first = sorted((data / "wav.scp").read_text().splitlines())[0].split()
    wav = data / first[1]
    audio, rate = sf.read(wav, dtype="int16")
    repeats = int(np.ceil(seconds * rate / audio.shape[0]))
    sf.write(wav, np.tile(audio, repeats)[: int(seconds * rate)], rate, subtype="PCM_16")
    config["datasets"] = {
        "demo": {
            "path": str(data),
            "reference": str(scratch / "demo" / "control"),
            "trim_backend": "energy",
        }
    }
    config.pop("demo")
    config["openset"] = {"enabled": False}
    config["validation"]["max_utterance_s"] = seconds + 1
    path = scratch / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


SCRIPT_RULES = {
    "validate_dataset": ("validate_dataset", "validate_reference"),
    "fa_trim": ("fa_trim", "fa_trim_reference"),
    "compute_track": (
        "compute_track",
        "compute_reference_track",
        "compute_set_track",
        "compute_reference_set_track",
    ),
}
"""The rules that run one script (``use rule ... with``); a script's peak is compared with the
smallest declaration among them."""


def declared_mem(log: str) -> dict[str, int]:
    """The smallest ``mem_mb`` Snakemake's log shows among the rules of each script."""
    by_rule: dict[str, int] = {}
    for block in log.split("\n\n"):
        rule = re.search(r"(?:rule|checkpoint) (\w+):", block)
        mem = re.search(r"mem_mb=(\d+)", block)
        if rule and mem:
            by_rule[rule.group(1)] = int(mem.group(1))
    scripts = {rule: SCRIPT_RULES.get(rule, (rule,)) for rule in by_rule}
    scripts |= SCRIPT_RULES
    return {
        script: min(by_rule[rule] for rule in rules if rule in by_rule)
        for script, rules in scripts.items()
        if any(rule in by_rule for rule in rules)
    }


def run_case(seconds: float, cores: int) -> list[tuple[str, float, int, int]]:
    """(rule, seconds, peak MB, declared MB) of every rule run on one case."""
    with tempfile.TemporaryDirectory(prefix="pbf-long-") as tmp:
        scratch = Path(tmp)
        config = make_case(scratch, seconds)
        command = [
            "snakemake",
            "--snakefile",
            str(ROOT / "Snakefile"),
            "--directory",
            str(scratch),
            "--configfile",
            str(config),
            "--cores",
            str(cores),
            "--verbose",
            "--printshellcmds",
        ]
        peaks: dict[str, int] = {}
        stop = threading.Event()
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as proc:
            sampler = threading.Thread(
                target=sample, args=(psutil.Process(proc.pid), peaks, stop), daemon=True
            )
            sampler.start()
            output = proc.stdout.read().decode() if proc.stdout else ""
            proc.wait()
            stop.set()
            sampler.join()
        if proc.returncode != 0:
            raise SystemExit(f"the workflow failed on the {seconds:.0f} s case:\n{output[-4000:]}")
        declared = declared_mem(output)
    return [
        (rule, seconds, peak // 2**20, declared.get(rule, 0))
        for rule, peak in sorted(peaks.items())
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=float, nargs="+", default=[60, 600, 1800, 7200])
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    print("| job script | recording | peak RSS (MB) | declared mem_mb | within |")
    print("|---|---:|---:|---:|---|")
    for seconds in args.durations:
        for rule, length, peak, declared in run_case(seconds, args.cores):
            within = "yes" if peak <= declared else "**no**"
            print(
                f"| `{rule}` | {length / 60:g} min | {peak} | {declared} | {within} |", flush=True
            )


if __name__ == "__main__":
    main()
