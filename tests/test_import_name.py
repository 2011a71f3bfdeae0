"""pathbench-flow and upstream PathBench live in one environment.

Upstream PathBench imports as ``pathbench``; a user who runs both (the conformance benchmark
does, in one process) must get each package under its own name. Upstream is not on PyPI, so a
stand-in wheel named ``pathbench`` is installed with pip into a target
directory, and a fresh interpreter imports both.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pathbench_flow

STAND_IN_FILES = {
    "pathbench/__init__.py": 'ORIGIN = "upstream stand-in"\n',
    "pathbench/evaluator.py": "class Evaluator:\n    pass\n",
    "pathbench-0.0.1.dist-info/METADATA": (
        "Metadata-Version: 2.1\nName: pathbench\nVersion: 0.0.1\n"
    ),
    "pathbench-0.0.1.dist-info/WHEEL": (
        "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    ),
}
"""A pure-Python wheel of a package named ``pathbench``, written by hand: pip installs a wheel
without a build backend, so the test needs neither setuptools in the environment nor an index."""


def _install_stand_in(tmp_path: Path) -> Path:
    wheel = tmp_path / "pathbench-0.0.1-py3-none-any.whl"
    record = "pathbench-0.0.1.dist-info/RECORD"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in STAND_IN_FILES.items():
            archive.writestr(name, text)
        archive.writestr(record, "".join(f"{name},,\n" for name in [*STAND_IN_FILES, record]))
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    return site


def test_upstream_pathbench_and_pathbench_flow_import_side_by_side(tmp_path):
    site = _install_stand_in(tmp_path)
    probe = textwrap.dedent(
        """
        import json, sys
        from importlib.metadata import version
        import pathbench, pathbench.evaluator
        import pathbench_flow
        from pathbench_flow.evaluators import registry
        from pathbench_flow.evaluators.base import Evaluator
        print(json.dumps({
            "upstream_origin": pathbench.ORIGIN,
            "upstream_file": pathbench.__file__,
            "flow_file": pathbench_flow.__file__,
            "upstream_version": version("pathbench"),
            "flow_version": version("pathbench-flow"),
            "distinct_evaluator": pathbench.evaluator.Evaluator is not Evaluator,
            "has_builtin_evaluators": "cpp" in registry.names(),
        }))
        """
    )
    env_path = f"{site}"
    run = subprocess.run(
        [sys.executable, "-c", probe],
        check=True,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    )
    seen = json.loads(run.stdout)
    assert seen["upstream_origin"] == "upstream stand-in"
    assert Path(seen["upstream_file"]).is_relative_to(site)
    assert Path(seen["flow_file"]) == Path(pathbench_flow.__file__)
    assert seen["upstream_version"] == "0.0.1"
    assert seen["flow_version"] == pathbench_flow.__version__
    assert seen["distinct_evaluator"] and seen["has_builtin_evaluators"]


def test_the_console_command_is_not_upstreams_name():
    """Upstream's scripts are run as ``python scripts/...``; ours is ``pathbench-flow``, so a
    ``pathbench`` on PATH can only ever be somebody else's."""
    from importlib.metadata import entry_points

    ours = {
        point.name
        for point in entry_points(group="console_scripts")
        if point.value.startswith("pathbench_flow.")
    }
    assert ours == {"pathbench-flow"}
