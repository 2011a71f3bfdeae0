"""Result files: permissions follow the umask, and leftovers of killed writes are cleaned up."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys

import pytest

from pathbench_flow.common.io import write_json


@pytest.fixture
def umask():
    """Set a umask for one test and restore the previous one afterwards."""
    previous = os.umask(0o022)
    os.umask(previous)
    yield lambda mask: os.umask(mask)
    os.umask(previous)


@pytest.mark.parametrize(("mask", "mode"), [(0o002, 0o664), (0o022, 0o644), (0o077, 0o600)])
def test_result_files_respect_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    target = tmp_path / "report.json"
    write_json({"a": 1}, target)
    assert stat.S_IMODE(target.stat().st_mode) == mode


def _dead_pid() -> int:
    """The id of a process that has already exited."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(child.stdout)


def test_leftover_temp_files_of_killed_writes_are_removed(tmp_path):
    host = socket.gethostname()
    dead = tmp_path / f".report.json.{host}-{_dead_pid()}.k1l2.tmp"
    legacy = tmp_path / ".report.json.x7y8z9.tmp"  # name scheme without a writer tag
    live = tmp_path / f".report.json.{host}-{os.getpid()}.live.tmp"
    other_file = tmp_path / f".other.json.{host}-{_dead_pid()}.abcd.tmp"
    for path in (dead, legacy, live, other_file):
        path.write_text("partial")
    write_json({"a": 1}, tmp_path / "report.json")
    assert not dead.exists() and not legacy.exists()
    assert live.exists(), "a temp file of a live writer must be left alone"
    assert other_file.exists(), "only temps of the file being written are touched"
