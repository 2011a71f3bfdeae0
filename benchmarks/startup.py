"""Start-up cost of the workflow's processes: the dry run and every rule's job.

Every job of a run is a fresh Python process that imports its stage before doing any work, so
a library imported but not used costs every job its import time. Measured here, each in fresh
processes, best of ``--repeat``:

* per rule, what its script (``scripts/<rule>.py``) imports, read from the script itself;
  for the scoring rules also building each evaluator of the demo config with its options
  (one row per evaluator), as the scoring stage does before its first utterance;
* ``snakemake -n`` on the demo config in a scratch copy of the workflow (the parse, the
  registry's metadata, the configured evaluators' preflight checks and the DAG).

CPU time (user + system of the process) is the figure to compare on a shared machine; wall
time is printed beside it. ``--before DIR`` measures another checkout the same way (its
package first on ``PYTHONPATH``, so old module names resolve) and prints both side by side.

Run: ``python benchmarks/startup.py [--before /path/to/old/checkout] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pathbench_flow.testing.job_imports import DRY_RUN, Fresh, run_fresh, script_imports

REPO = Path(__file__).resolve().parents[1]

SCORING_RULES = ("score_utterances", "score_reference", "score_speakers")
WORKFLOW_ENTRIES = ("Snakefile", "workflow", "config", "scripts")
"""What a dry run reads (older checkouts keep the Snakefile and scripts/ at the top)."""

_EVALUATORS = """
import json, yaml, pathbench_flow
from pathbench_flow.evaluators import registry
config = yaml.safe_load(open("config/config.yaml", encoding="utf-8"))
options = config.get("evaluator_options") or {}
rules = {}
for name in config["evaluators"]:
    info = registry.info(name)
    if info.cls.context_options:
        continue
    rule = ("score_speakers" if info.level == "speaker" else
            "score_reference" if info.category == "reference-audio" else "score_utterances")
    rules[name] = [rule, options.get(name, {})]
print(json.dumps({"package": pathbench_flow.__file__, "evaluators": rules}))
"""


@dataclass(frozen=True)
class Timing:
    """Best CPU and best wall seconds of repeated fresh runs."""

    cpu_s: float
    wall_s: float


def best(runs: list[Fresh]) -> Timing:
    return Timing(min(r.cpu_s for r in runs), min(r.wall_s for r in runs))


def job_codes(tree: Path) -> dict[str, str]:
    """Row name → code a job of ``tree`` runs before its stage's work starts."""
    found = run_fresh(_EVALUATORS, pythonpath=tree, cwd=tree)
    report = json.loads(found.stdout)
    if not Path(report["package"]).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"{tree}: imported pathbench_flow from {report['package']}, not the tree")
    scripts = next(d for d in (tree / "workflow" / "scripts", tree / "scripts") if d.is_dir())
    codes = {path.stem: script_imports(path) for path in sorted(scripts.glob("*.py"))}
    for name, (rule, options) in report["evaluators"].items():
        build = (
            "\nfrom pathbench_flow.evaluators import registry\n"
            f"registry.create({name!r}, **{options!r})\n"
        )
        codes[f"{rule} {name}"] = codes[rule] + build
    return codes


def dry_run(tree: Path, repeat: int) -> Timing:
    """``snakemake -n`` of ``tree``'s workflow on its demo config, in a scratch copy."""
    with tempfile.TemporaryDirectory(prefix="startup-") as scratch:
        work = Path(scratch)
        for name in WORKFLOW_ENTRIES:
            source = tree / name
            if source.is_dir():
                shutil.copytree(source, work / name, ignore=shutil.ignore_patterns("__pycache__"))
            elif source.is_file():
                shutil.copy2(source, work / name)
        return best([run_fresh(DRY_RUN, pythonpath=tree, cwd=work) for _ in range(repeat)])


def measure(tree: Path, repeat: int) -> dict[str, Timing]:
    rows = {
        name: best([run_fresh(code, pythonpath=tree, cwd=tree) for _ in range(repeat)])
        for name, code in job_codes(tree).items()
    }
    rows["snakemake -n (demo config)"] = dry_run(tree, repeat)
    return rows


def _cell(timing: Timing | None) -> str:
    return "–" if timing is None else f"{timing.cpu_s:.2f} ({timing.wall_s:.2f})"


def table(after: dict[str, Timing], before: dict[str, Timing] | None) -> str:
    """Markdown: one row per job kind, CPU seconds with wall seconds in brackets."""
    if before is None:
        lines = ["| process | CPU s (wall s) |", "|---|---:|"]
        lines += [f"| {name} | {_cell(t)} |" for name, t in after.items()]
        return "\n".join(lines)
    lines = ["| process | before: CPU s (wall s) | after: CPU s (wall s) |", "|---|---:|---:|"]
    for name in sorted(set(after) | set(before), key=lambda n: (n.startswith("snakemake"), n)):
        lines.append(f"| {name} | {_cell(before.get(name))} | {_cell(after.get(name))} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="another checkout to compare with")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (best is kept)")
    args = parser.parse_args()
    before = measure(args.before, args.repeat) if args.before else None
    print(table(measure(REPO, args.repeat), before))


if __name__ == "__main__":
    main()
