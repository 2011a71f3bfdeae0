"""What a job's process imports, measured in a fresh interpreter.

Shared by ``test_imports.py`` (which heavy libraries a job loads) and
``benchmarks/startup.py`` (what loading them costs). A rule's script runs its imports, then
calls its stage; :func:`script_imports` is the first part, read from the script itself so the
measurement follows the scripts as they change.
"""

from __future__ import annotations

import ast
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HEAVY = (
    "parselmouth",
    "pocketsphinx",
    "librosa",
    "matplotlib",
    "torch",
    "transformers",
    "sklearn",
    "numba",
    "scipy.signal",
    "scipy.stats",
)
"""Libraries that cost a job a noticeable share of its start-up (0.1-1 s each, more under
load, several of them together ~1.4 s) and that only some jobs use."""

DRY_RUN = """
import runpy, sys
sys.argv = ["snakemake", "-n", "--quiet", "rules"]
try:
    runpy.run_module("snakemake", run_name="__main__", alter_sys=True)
except SystemExit as stop:
    if stop.code:
        raise
"""
"""``snakemake -n`` inside the interpreter (run in a workflow directory), so that the modules
the parse imported can be listed after it."""

_REPORT = """
import json as _json, sys as _sys
_sys.stdout.write("\\n@modules " + _json.dumps(sorted(_sys.modules)))
"""


@dataclass(frozen=True)
class Fresh:
    """One fresh interpreter's run: the modules it ended with, its wall and CPU seconds."""

    modules: frozenset[str]
    wall_s: float
    cpu_s: float
    stdout: str

    def heavy(self) -> set[str]:
        """The :data:`HEAVY` libraries the process imported."""
        return {name for name in HEAVY if name in self.modules}


def script_imports(script: Path) -> str:
    """The top-level import statements of a rule script, as source (without the redirection
    of stderr to the log, which needs Snakemake's ``snakemake`` object)."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    return "\n".join(
        ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
    )


def run_fresh(code: str, *, pythonpath: Path | None = None, cwd: Path | None = None) -> Fresh:
    """Run ``code`` with ``python -c`` (``pythonpath`` first on the path) and report it.

    CPU time is the user + system time of the child, from ``getrusage`` of reaped children
    before and after (calls must not overlap); it is the stable figure on a loaded machine.
    """
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", code + _REPORT],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"python -c failed ({result.returncode}):\n{code}\n{result.stderr}")
    output, _, modules = result.stdout.rpartition("\n@modules ")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Fresh(frozenset(json.loads(modules)), wall, cpu, output)
