"""Builders the tests and benchmarks share: datasets, speech, tiny models, workflow runs.

They live in the package, not beside the tests, so tests and benchmarks import them like any
module instead of through a ``sys.path`` insert. They read a source checkout (the workflow
files, ``tests/plugins``) and the workplace's ``../shared/fixtures``, so they are for a
developer's clone, not for an installed wheel; nothing in the workflow imports them.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The checkout the package was installed from in editable mode."""

SHARED_FIXTURES = REPO.parent / "shared" / "fixtures"
"""Real CC0 recordings and real corpora's Kaldi metadata, read-only, next to the checkout."""
