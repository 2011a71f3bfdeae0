"""The ``pathbench-flow`` command line.

``pathbench-flow correlate`` scores an external predictor the way PathBench does: a
``speaker_id,score`` CSV is correlated with a dataset's ``spk2score``. Subcommands are
registered in :func:`build_parser`, so later commands slot in beside it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pandas as pd

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


def _correlate(args: argparse.Namespace) -> int:
    predictions = read_predictions_csv(args.predictions)
    ground_truth = read_spk2score(args.ground_truth)
    problems = speaker_mismatch(predictions, ground_truth)
    if problems:
        print(
            f"error: speakers of {args.predictions} and {args.ground_truth} differ:",
            file=sys.stderr,
        )
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    result = correlate_predictions(predictions, ground_truth, args.direction)
    sys.stdout.write(format_correlation(result, args.direction))
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
    correlate.set_defaults(run=_correlate)
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
