"""The ``pathbench-flow`` command line.

``pathbench-flow correlate`` scores an external predictor the way PathBench does: a
``speaker_id,score`` CSV is correlated with a dataset's ``spk2score``. ``pathbench-flow
benchmark`` does so for every dataset of a benchmark tree at once and prints PathBench's table
(its ``scripts/evaluate_from_csv.py --results-dir``), for users who score their predictor
outside the workflow. ``pathbench-flow prepare-pathbench`` repoints PathBench's published
``datasets/`` folder at the user's corpora and checks their audio against PathBench's digests
(:mod:`pathbench_flow.data.pathbench_corpora`). Subcommands are registered in
:func:`build_parser`, so later commands slot in beside them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pathbench_flow import __version__
from pathbench_flow.data.pathbench_corpora import CHECK_FILE, format_check, prepare
from pathbench_flow.data.score_scale import DEFAULT_SCALE, SCALES, as_intelligibility, describe
from pathbench_flow.stats.correlation import (
    CI_LEVEL,
    N_BOOT,
    Correlation,
    correlate_predictions,
    read_predictions_csv,
    read_spk2score,
)


def speaker_mismatch(predictions: pd.Series, ground_truth: pd.Series) -> list[str]:
    """Describe speakers present on one side only; empty when the sets agree.

    PathBench's rule for external predictors: the CSV must score exactly the rated speakers
    (those whose ground truth is not N/A). Silently correlating the overlap would let a
    predictor skip the speakers it handles badly.
    """
    rated = set(ground_truth.dropna().index)
    predicted = set(predictions.index)
    problems = []
    if extra := sorted(predicted - rated):
        problems.append(
            f"{len(extra)} speaker(s) in the predictions but not rated in the ground truth "
            f"(absent or N/A): {', '.join(extra)}"
        )
    if missing := sorted(rated - predicted):
        problems.append(
            f"{len(missing)} rated speaker(s) missing from the predictions: {', '.join(missing)}"
        )
    return problems


def format_correlation(result: Correlation, direction: int) -> str:
    """Human-readable summary of one correlation, one labelled statistic per line."""
    lines = [("speakers (n)", str(result.n))]
    if result.reason:
        lines.append(("no correlation", result.reason))
    else:
        lines += [
            ("Pearson r", f"{result.pearson_r:.4f}  (p = {result.pearson_p:.3g})"),
            (
                f"{round(100 * CI_LEVEL)}% CI of r",
                f"[{result.ci_low:.4f}, {result.ci_high:.4f}]  "
                f"(percentile bootstrap over speakers, {N_BOOT} resamples)",
            ),
            ("Spearman rho", f"{result.spearman_rho:.4f}  (p = {result.spearman_p:.3g})"),
            (
                "aligned r",
                f"{result.aligned_r:.4f}  (direction {direction:+d}; "
                "positive = agrees with intelligibility)",
            ),
        ]
    return "".join(f"{label + ':':<16}{value}\n" for label, value in lines)


def read_matched(
    predictions_path: str | Path, ground_truth_path: str | Path
) -> tuple[pd.Series, pd.Series]:
    """A predictions CSV and its ``spk2score``, refused with a ``ValueError`` that lists every
    difference unless the CSV scores exactly the rated speakers (:func:`speaker_mismatch`)."""
    predictions = read_predictions_csv(predictions_path)
    ground_truth = read_spk2score(ground_truth_path)
    problems = speaker_mismatch(predictions, ground_truth)
    if problems:
        raise ValueError(
            f"speakers of {predictions_path} and {ground_truth_path} differ:"
            + "".join(f"\n  {problem}" for problem in problems)
        )
    return predictions, ground_truth


def _correlate(args: argparse.Namespace) -> int:
    predictions, ground_truth = read_matched(args.predictions, args.ground_truth)
    # The workflow's one turning point for severity ratings, so that this r is the r the
    # workflow reports for the same dataset and config.
    ground_truth = as_intelligibility(ground_truth, args.score_scale)
    result = correlate_predictions(predictions, ground_truth, args.direction)
    sys.stdout.write(f"{'ratings:':<16}{describe(args.score_scale)}\n")
    sys.stdout.write(format_correlation(result, args.direction))
    return 0


@dataclass(frozen=True)
class DatasetResult:
    """One row of the benchmark table. ``label`` is the dataset's folder under the results
    directory; ``reason`` says why there is no r (``pearson_r`` is then NaN)."""

    label: str
    n: int
    pearson_r: float
    reason: str


def find_prediction_files(results_dir: Path, evaluator: str) -> list[Path]:
    """Every ``<evaluator>.csv`` under ``results_dir``, in PathBench's order.

    PathBench walks the tree with ``os.walk`` (links to directories are not followed) and
    sorts the paths as text, so ``x-y/`` comes before ``x/y/`` ('-' sorts before '/'); sorting
    ``Path`` objects, which compare part by part, would swap them and renumber the table.
    """
    name = f"{evaluator}.csv"
    found = [
        os.path.join(folder, name) for folder, _, files in os.walk(results_dir) if name in files
    ]
    return [Path(path) for path in sorted(found)]


def evaluate_tree(
    files: Sequence[Path], results_dir: Path, datasets_root: Path
) -> tuple[list[DatasetResult], list[str]]:
    """Correlate each of the ``files`` under ``results_dir`` with the ``spk2score`` at its path
    under ``datasets_root``; return the table's rows and every problem found.

    As in PathBench, a CSV whose folder has no ``spk2score`` under ``datasets_root`` is skipped
    with a warning (a results tree may hold datasets the local copy lacks). Unlike PathBench,
    which stops at the first bad dataset, every dataset is read, so one run names every
    unreadable file and speaker mismatch.
    """
    rows, problems = [], []
    for path in files:
        folder = os.path.relpath(path.parent, results_dir)
        truth = datasets_root / folder / "spk2score"
        if not truth.exists():
            print(f"warning: no spk2score at {truth}; skipping {path}", file=sys.stderr)
            continue
        # A CSV in the results directory itself is the dataset at the datasets root.
        label = results_dir.resolve().name if folder == os.curdir else folder
        try:
            result = correlate_predictions(*read_matched(path, truth))
        except (OSError, ValueError) as error:
            problems.append(str(error))
            continue
        rows.append(DatasetResult(label, result.n, result.pearson_r, result.reason))
    return rows, problems


def format_benchmark_table(evaluator: str, rows: Sequence[DatasetResult]) -> str:
    """PathBench's table: a numbered row per dataset with its speakers (N) and Pearson r
    (PCC, two decimals), and, for more than one dataset, the mean of the unrounded r's."""
    width = max(len("Dataset"), *(len(row.label) for row in rows))
    digits = len(str(len(rows)))
    header = f"{'#':>{digits}}  {'Dataset':<{width}}  {'N':>6}  {'PCC':>8}"
    lines = ["", f"Evaluator: {evaluator}", header, "-" * len(header)]
    lines += [
        f"{i:>{digits}}  {row.label:<{width}}  {row.n:>6}  {row.pearson_r:>8.2f}"
        for i, row in enumerate(rows, 1)
    ]
    if len(rows) > 1:
        mean = float(np.mean([row.pearson_r for row in rows]))
        lines += ["-" * len(header), f"{'':>{digits}}  {'Mean':<{width}}  {'':>6}  {mean:>8.2f}"]
    return "\n".join(lines) + "\n"


def _benchmark(args: argparse.Namespace) -> int:
    results_dir, datasets_root = Path(args.results_dir), Path(args.datasets_root)
    for option, folder in (("--results-dir", results_dir), ("--datasets-root", datasets_root)):
        if not folder.is_dir():
            raise ValueError(f"{option} {folder}: no such directory")
    name = f"{args.evaluator}.csv"
    files = find_prediction_files(results_dir, args.evaluator)
    if not files:
        raise ValueError(
            f"no file named {name!r} under {results_dir} (--evaluator NAME reads NAME.csv)"
        )
    rows, problems = evaluate_tree(files, results_dir, datasets_root)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        return 1
    if not rows:
        raise ValueError(
            f"none of the {len(files)} {name!r} files under {results_dir} has a spk2score at "
            f"its path under {datasets_root} (warnings above): the results tree must mirror "
            "the datasets tree"
        )
    for row in rows:
        if row.reason:
            print(f"warning: {row.label}: no correlation ({row.reason})", file=sys.stderr)
    # PathBench prints the git commit of its code; this is the version of ours.
    sys.stdout.write(f"pathbench-flow {__version__}\n")
    sys.stdout.write(format_benchmark_table(args.evaluator, rows))
    return 0


def corpus_root(text: str) -> tuple[str, str]:
    """A ``--corpus NAME=ROOT`` value as ``(NAME, ROOT)``."""
    name, equals, root = text.partition("=")
    if not (equals and name and root):
        raise argparse.ArgumentTypeError(f"{text!r}: write NAME=ROOT, e.g. uaspeech=/data/UASpeech")
    return name.lower(), root


def _prepare_pathbench(args: argparse.Namespace) -> int:
    roots = dict(args.corpus)
    if len(roots) < len(args.corpus):
        raise ValueError("--corpus: a corpus is given twice")
    result = prepare(
        args.pathbench_datasets, roots, args.out, None if args.no_hash else args.threads
    )
    sys.stdout.write(format_check(result))
    sys.stdout.write(f"wrote {Path(args.out)} (use as datasets_root) and {CHECK_FILE} in it\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one subparser per command."""
    parser = argparse.ArgumentParser(
        prog="pathbench-flow",
        description="Benchmark intelligibility measures for pathological speech.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    correlate = commands.add_parser(
        "correlate",
        help="correlate external speaker predictions with a spk2score file",
        description=(
            "Correlate a 'speaker_id,score' CSV with a Kaldi spk2score file. The CSV must "
            "score exactly the speakers rated in spk2score (N/A speakers are not rated)."
        ),
    )
    correlate.add_argument("--predictions", required=True, help="CSV with header speaker_id,score")
    correlate.add_argument("--ground-truth", required=True, help="Kaldi spk2score file")
    correlate.add_argument(
        "--direction",
        type=int,
        choices=(1, -1),
        default=1,
        help="+1 if higher predictions mean more intelligible, -1 if lower (default: 1)",
    )
    correlate.add_argument(
        "--score-scale",
        choices=SCALES,
        default=DEFAULT_SCALE,
        help="what spk2score rates, as the config's datasets.<name>.score_scale: "
        "'severity' correlates against -spk2score, so r and aligned r are against "
        f"intelligibility (default: {DEFAULT_SCALE}, PathBench's convention)",
    )
    correlate.set_defaults(run=_correlate)
    benchmark = commands.add_parser(
        "benchmark",
        help="correlate a predictor's CSVs with every dataset of a benchmark tree",
        description=(
            "PathBench's full-benchmark evaluation of an external predictor: every "
            "<evaluator>.csv ('speaker_id,score') under --results-dir is correlated with the "
            "spk2score at the same relative path under --datasets-root, as 'correlate' does "
            "for one file; the table gives each dataset's speakers and Pearson r and their "
            "mean. A CSV without a spk2score at its path is skipped with a warning."
        ),
    )
    benchmark.add_argument(
        "--results-dir",
        required=True,
        metavar="DIR",
        help="directory mirroring the datasets tree, one <evaluator>.csv per dataset",
    )
    benchmark.add_argument(
        "--datasets-root",
        required=True,
        metavar="DIR",
        help="root of the datasets tree, e.g. PathBench's datasets/",
    )
    benchmark.add_argument(
        "--evaluator",
        required=True,
        metavar="NAME",
        help="the predictor's name: its files are named <NAME>.csv",
    )
    benchmark.set_defaults(run=_benchmark)
    prepare_pathbench = commands.add_parser(
        "prepare-pathbench",
        help="repoint PathBench's datasets/ folder at your corpora and check their audio",
        description=(
            "Copy PathBench's datasets/ folder to --out with every wav.scp path rewritten onto "
            "your copy of its corpus (each foreign folder goes to the longest of its trailing "
            "parts found under the corpus root), then compare every recording's SHA-256 with "
            f"PathBench's wav_hash.scp. The result, per corpus and column, is --out/{CHECK_FILE}; "
            "use --out as the workflow's datasets_root."
        ),
    )
    prepare_pathbench.add_argument(
        "--pathbench-datasets",
        required=True,
        metavar="PATH",
        help="the datasets/ folder of PathBench's repository at commit e26aa32: git clone "
        "https://github.com/karkirowle/pathbench && git -C pathbench checkout e26aa32",
    )
    prepare_pathbench.add_argument(
        "--corpus",
        action="append",
        type=corpus_root,
        default=[],
        metavar="NAME=ROOT",
        help="a corpus you have, by its folder name in datasets/ (copas, easycall, mdsc, "
        "neurovoz, torgo, uaspeech, youtube), and its root on this machine; repeat per corpus",
    )
    prepare_pathbench.add_argument(
        "--out", required=True, metavar="DATASETS_ROOT", help="the new datasets root to write"
    )
    prepare_pathbench.add_argument(
        "--no-hash",
        action="store_true",
        help="only look for the files, do not hash them (fast; columns stay unchecked)",
    )
    prepare_pathbench.add_argument(
        "--threads", type=int, default=4, help="files hashed at once (default: 4)"
    )
    prepare_pathbench.set_defaults(run=_prepare_pathbench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; return its exit status (1 on unreadable or inconsistent input).

    Input problems surface from the readers as ``ValueError`` or ``OSError`` naming the file
    (and line); they are shown as one ``error:`` line instead of a traceback.
    """
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
