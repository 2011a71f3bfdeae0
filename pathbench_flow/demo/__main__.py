"""``python -m pathbench_flow.demo OUT``: generate a demo corpus outside the workflow."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pathbench_flow.common.seeds import DEMO_SEED
from pathbench_flow.demo.corpus import expected_utterances, make_demo


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pathbench_flow.demo OUT``: generate a corpus and report its size and time."""
    parser = argparse.ArgumentParser(
        prog="python -m pathbench_flow.demo", description="Generate the demo corpus."
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=DEMO_SEED)
    parser.add_argument("--n-pathological", type=int, default=8)
    parser.add_argument("--n-control", type=int, default=6)
    parser.add_argument("--n-utterances", type=int, default=8)
    parser.add_argument("--word-mode", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    make_demo(
        args.out,
        seed=args.seed,
        n_pathological=args.n_pathological,
        n_control=args.n_control,
        n_utterances=args.n_utterances,
        word_mode=args.word_mode,
    )
    counts = expected_utterances(args.n_pathological, args.n_control, args.n_utterances)
    print(
        f"{args.out}: {sum(counts)} utterances in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
