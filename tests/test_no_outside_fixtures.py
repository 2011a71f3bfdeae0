"""No test, test helper or benchmark reads data from beside the checkout.

Why: the suite once read its recordings and corpus metadata from a ``shared`` folder next to
the repository, which only the developers' machines had, so a fresh clone failed 77 tests.
The data now lives in ``tests/fixtures`` (its README says where it comes from); this test
keeps references to a sibling ``shared`` folder from coming back.
"""

from __future__ import annotations

import re
from pathlib import Path

from pathbench_flow.testing import REPO

SEARCHED = ("tests", "pathbench_flow/testing", "benchmarks", ".test")
OUTSIDE = re.compile(
    r"""\.\.[/\\]shared\b"""  # up one folder, then into it (either slash)
    r"""|/\s*["']shared["']"""  # path / "shared"
    r"""|["']shared["']\s*/"""  # "shared" / "fixtures"
    r"""|\bshared[/\\]fixtures\b"""  # any path through shared/fixtures
)
EXEMPT = {
    Path("tests/test_no_outside_fixtures.py"): "the patterns this check looks for",
    Path("benchmarks/neural_conformance.json"): "PathBench's warnings as it printed them, "
    "with the absolute paths of the machine the comparison ran on: a record, never read",
}
"""Files that name such paths without reading them: file → why it may."""


def outside_references(root: Path) -> list[str]:
    """``file:line: text`` of every line under ``root``'s searched folders that names a
    sibling ``shared`` folder (binary files and :data:`EXEMPT` aside)."""
    found = []
    for folder in SEARCHED:
        for path in sorted((root / folder).rglob("*")):
            relative = path.relative_to(root)
            if not path.is_file() or "__pycache__" in path.parts or relative in EXEMPT:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # audio, parquet: no paths to read
            for number, line in enumerate(text.splitlines(), start=1):
                if OUTSIDE.search(line):
                    found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_nothing_refers_to_a_shared_folder_beside_the_checkout() -> None:
    found = outside_references(REPO)
    assert not found, "read tests/fixtures (pathbench_flow.testing.FIXTURES) instead:\n" + (
        "\n".join(found)
    )


def test_each_way_of_naming_the_folder_is_found(tmp_path: Path) -> None:
    """The check can fail: each spelling the suite once used is caught in every searched
    folder, and an exempt file is left alone only under its own path."""
    # Built from parts, so that this file itself names no such path.
    up, sibling = "..", "shared"
    spellings = [
        f'KALDI = Path(__file__).resolve().parents[1] / "{up}/{sibling}/fixtures/kaldi-metadata"',
        f'FIXTURES = Path(__file__).resolve().parents[1].parent / "{sibling}" / "fixtures"',
        f"run from a checkout next to {up}\\{sibling}",
        f"/work/{sibling}/fixtures/pathbench-audio/BLUE_english34.wav",
    ]
    placed = list(enumerate(zip(SEARCHED, spellings, strict=True)))
    for k, (folder, line) in placed:
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / f"f{k}.py").write_text(f"ok = 1\n{line}\n")
    (tmp_path / "benchmarks" / "neural_conformance.json").write_text(spellings[3])
    (tmp_path / "tests" / "fine.py").write_text("shared_models()\nload_shared(path)\n")
    found = outside_references(tmp_path)
    assert found == [f"{folder}/f{k}.py:2: {line}" for k, (folder, line) in placed]
