"""Draw docs/rulegraph.svg, the workflow's rules and their dependencies, from Snakemake's own
``--rulegraph``.

Run from a checkout with the package installed (``pip install -e .``) and Graphviz's ``dot`` on
the PATH (``apt-get install graphviz``)::

    python docs/make_rulegraph.py          # rewrite docs/rulegraph.svg
    python docs/make_rulegraph.py --check  # exit 1 if the committed picture is out of date

Three things make the picture whole and reproducible:

* A rule graph drawn in a fresh directory lacks every rule whose jobs are known only after a
  checkpoint has run (``fit_candidates``, ``select_config`` and ``heldout_score`` come from
  ``openset_folds``), and the edges that checkpoints decide (the reference trims and tracks a
  ``score_reference`` job reads). So the workflow first runs in a scratch directory until every
  checkpoint is done (``--until``; a minute on two idle cores), and the graph is drawn there.
* The config enables every optional branch: ``config/config.yaml`` (the demo: a reference set,
  both variants, both reference types, reference-audio and speaker-level measures, open-set
  on) plus a tiny dataset that ships ``utt2score``, the only input that plans
  ``correlate_utterances``, and one entry under ``predictors`` for it, which plans
  ``import_predictor`` and ``compare_predictors``.
* Snakemake numbers the nodes in a different order from run to run, so the graph is rewritten
  with rule names as node ids, sorted, before Graphviz lays it out. Rules are grouped by the
  ``.smk`` file that defines them; checkpoints are filled. The target rule ``all``, which lists
  every intermediate file, is left out: its edges from nearly every rule say nothing.
  The SVG is then byte-identical from run to run for one Graphviz version (2.43.0, Debian 12's,
  made the committed one); another version lays the same graph out a little differently.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from pathbench_flow.testing import REPO
from pathbench_flow.testing.kaldi_builder import SPEAKERS, build_dataset, write_lines
from pathbench_flow.testing.workflow_run import snakemake

RULES = REPO / "workflow" / "rules"
OUTPUT = REPO / "docs" / "rulegraph.svg"
RATED = "rated"
"""The extra dataset: the kaldi_builder one with utterance ratings."""
PREDICTOR_CSV = "my_predictor.csv"

DEFINITION = re.compile(r"^(rule|checkpoint) (\w+):|^use rule \w+ as (\w+)", re.MULTILINE)
NODE = re.compile(r'^\s*(\d+)\[label = "(\w+)"', re.MULTILINE)
EDGE = re.compile(r"^\s*(\d+) -> (\d+)$", re.MULTILINE)


def rule_files() -> tuple[dict[str, str], set[str]]:
    """Every rule's defining ``.smk`` file, and the names of the checkpoints."""
    files, checkpoints = {}, set()
    for path in sorted(RULES.glob("*.smk")):
        for kind, name, derived in DEFINITION.findall(path.read_text(encoding="utf-8")):
            files[name or derived] = path.name
            if kind == "checkpoint":
                checkpoints.add(name)
    return files, checkpoints


def write_inputs(workdir: Path) -> Path:
    """The demo config plus the rated dataset and a predictor of its rated speakers, written
    into ``workdir``; returns the config's path."""
    dataset = build_dataset(workdir / RATED)
    utterances = [line.split()[0] for line in (dataset / "utt2spk").read_text().splitlines()]
    write_lines(dataset / "utt2score", [f"{utt} {k + 1}" for k, utt in enumerate(utterances)])
    rated = [spk for spk, (_, score) in SPEAKERS.items() if score != "N/A"]
    write_lines(workdir / PREDICTOR_CSV, ["speaker_id,score", *(f"{spk},1.0" for spk in rated)])
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    config["datasets"][RATED] = {"path": RATED, "trim_backend": "energy"}
    config["predictors"] = {
        "my_predictor": {"direction": 1, "datasets": {RATED: {"speakers": PREDICTOR_CSV}}}
    }
    path = workdir / "rulegraph.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=True), encoding="utf-8")
    return path


def snakemake_rulegraph(workdir: Path, checkpoints: set[str]) -> str:
    """Snakemake's rule graph of the full run, drawn once every checkpoint has run."""
    common = ("--snakefile", str(REPO / "workflow" / "Snakefile"), "--configfile")
    config = str(write_inputs(workdir))
    snakemake(workdir, *common, config, "--cores", "2", "--until", *sorted(checkpoints))
    return snakemake(workdir, *common, config, "--rulegraph").stdout


def canonical_dot(rulegraph: str, files: dict[str, str], checkpoints: set[str]) -> str:
    """The rule graph with rule names as ids, clustered by file, in sorted order."""
    labels = dict(NODE.findall(rulegraph))
    named = {(labels[a], labels[b]) for a, b in EDGE.findall(rulegraph)}
    edges = sorted((a, b) for a, b in named if "all" not in (a, b))
    rules = sorted(set(labels.values()) - {"all"})
    unknown = sorted(set(rules) - set(files))
    if unknown:
        raise SystemExit(f"rules {unknown} are in the rule graph but in no {RULES}/*.smk")
    lines = [
        "digraph rulegraph {",
        "  graph [bgcolor=white, margin=0, fontname=sans, fontsize=11, labeljust=l];",
        '  node [shape=box, style="rounded,filled", fillcolor=white, fontname=sans, '
        "fontsize=10, penwidth=1.5];",
        "  edge [color=grey45, penwidth=1.2];",
    ]
    for file in sorted({files[rule] for rule in rules}):
        lines.append(f'  subgraph "cluster_{file}" {{')
        lines.append(f'    label="{file}"; color=grey70; style=rounded;')
        for rule in rules:
            if files[rule] == file:
                fill = ", fillcolor=lightgoldenrod1" if rule in checkpoints else ""
                lines.append(f"    {rule} [label={rule}{fill}];")
        lines.append("  }")
    lines += [f"  {a} -> {b};" for a, b in edges]
    lines.append("}")
    return "\n".join(lines) + "\n"


def graphviz() -> str:
    """The path of Graphviz's ``dot``, looked up before the minute the run takes."""
    dot = shutil.which("dot")
    if dot is None:
        raise SystemExit("Graphviz's dot is not on the PATH: apt-get install graphviz")
    return dot


def draw(dot: str, dot_source: str) -> bytes:
    """The SVG Graphviz lays out from ``dot_source``."""
    run = subprocess.run([dot, "-Tsvg"], input=dot_source.encode(), capture_output=True)
    if run.returncode != 0:
        raise SystemExit(f"dot failed ({run.returncode}): {run.stderr.decode()}")
    return run.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help=f"compare with {OUTPUT} only")
    args = parser.parse_args()
    dot = graphviz()
    files, checkpoints = rule_files()
    with tempfile.TemporaryDirectory(prefix="rulegraph-") as scratch:
        try:
            rulegraph = snakemake_rulegraph(Path(scratch), checkpoints)
        except AssertionError as failure:
            raise SystemExit(f"snakemake failed in {scratch}: {failure}") from None
    svg = draw(dot, canonical_dot(rulegraph, files, checkpoints))
    if not args.check:
        OUTPUT.write_bytes(svg)
        print(f"wrote {OUTPUT.relative_to(REPO)} ({len(svg)} bytes)")
    elif not OUTPUT.is_file() or OUTPUT.read_bytes() != svg:
        sys.exit(f"{OUTPUT.relative_to(REPO)} is out of date: run python docs/make_rulegraph.py")


if __name__ == "__main__":
    main()
