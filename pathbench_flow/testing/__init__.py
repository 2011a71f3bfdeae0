"""Builders the tests and benchmarks share: datasets, speech, tiny models, workflow runs.

They live in the package, not beside the tests, so tests and benchmarks import them like any
module instead of through a ``sys.path`` insert. They read a source checkout (the workflow
files, ``tests/plugins``, the real data in ``tests/fixtures``), so they are for a clone of the
repository, not for an installed wheel; nothing in the workflow imports them.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The checkout the package was installed from in editable mode."""

FIXTURES = REPO / "tests" / "fixtures"
"""The real data the tests read, committed with them (its README says where each file comes
from and under which licence)."""
RECORDINGS = FIXTURES / "pathbench-audio"
"""PathBench's five test recordings: four CC0 "blue"s and a synthetic harmonic tone."""
KALDI_METADATA = FIXTURES / "kaldi-metadata"
"""A cut of PathBench's Kaldi metadata of five real corpora (no audio)."""
