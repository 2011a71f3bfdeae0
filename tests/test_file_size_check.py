""".ci/check-file-sizes.py on a scratch git repository: what it refuses, allows and reports.

Real git throughout: the check reads the sizes git stores for the index, so the repository is
built with ``git init`` and ``git add``, not faked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pathbench_flow.testing import REPO

SCRIPT = REPO / ".ci" / "check-file-sizes.py"
LIMIT = 1_000_000
ALLOWLIST = ".ci/large-files-allowlist"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def check(repo: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=repo, capture_output=True, text=True, check=False
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one file a byte over the limit and one exactly at it, both added, and
    an allowlist of comments only."""
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "data" / "big.bin").write_bytes(b"\0" * (LIMIT + 1))
    (repo / "data" / "at_limit.bin").write_bytes(b"\1" * LIMIT)
    (repo / ".ci").mkdir()
    (repo / ALLOWLIST).write_text("# large files that every clone needs\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    return repo


def test_a_file_over_the_limit_is_refused_with_its_size_and_the_fix(repo):
    (repo / "untracked.bin").write_bytes(b"\0" * (2 * LIMIT))
    result = check(repo)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("data/big.bin: 1,000,001 bytes, over the 1,000,000-byte limit")
    assert "git rm --cached 'data/big.bin'" in lines[0] and ALLOWLIST in lines[0]
    # the file at the limit is allowed, and a file git does not track is no commit's
    assert lines[1:] == ["check-file-sizes: 1 problem(s)"]


def test_an_allowlisted_file_passes(repo):
    (repo / ALLOWLIST).write_text(
        "# large files that every clone needs\ndata/big.bin  # the published reference values\n"
    )
    git(repo, "add", ALLOWLIST)
    result = check(repo)
    assert result.returncode == 0, result.stderr
    assert "3 tracked files" in result.stdout


def test_a_stale_allowlist_line_is_refused(repo):
    (repo / ALLOWLIST).write_text("data/big.bin\ndata/at_limit.bin\ngone.bin # deleted\n")
    result = check(repo)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"{ALLOWLIST}:2: 'data/at_limit.bin' is not a tracked file over 1,000,000 bytes; "
        "remove the line",
        f"{ALLOWLIST}:3: 'gone.bin' is not a tracked file over 1,000,000 bytes; remove the line",
        "check-file-sizes: 2 problem(s)",
    ]


def test_the_size_checked_is_the_index_not_the_working_tree(repo):
    """A big file shrunk on disk but not re-added would still be committed big."""
    (repo / "data" / "big.bin").write_bytes(b"small now")
    assert check(repo).returncode == 1
    git(repo, "add", "data/big.bin")
    assert check(repo).returncode == 0


def test_a_missing_allowlist_fails_closed(repo):
    (repo / ALLOWLIST).unlink()
    result = check(repo)
    assert result.returncode == 2
    assert "cannot read the allowlist" in result.stderr and "create it" in result.stderr


def test_this_repository_passes():
    result = check(REPO)
    assert result.returncode == 0, result.stderr
