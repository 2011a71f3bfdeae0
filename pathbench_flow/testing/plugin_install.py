"""Install the example plugin the way pip would: a dist-info directory with entry_points.txt."""

from __future__ import annotations

import sys
from pathlib import Path

from pathbench_flow.evaluators import registry
from pathbench_flow.testing import REPO

PLUGIN_DIR = REPO / "tests" / "plugins"


def install_example_plugin(site: Path) -> None:
    """Make ``tests/plugins/example_plugin.py`` an installed distribution on ``sys.path``."""
    info = site / "pathbench_example_plugin-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pathbench-example-plugin\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[pathbench_flow.evaluators]\n"
        "example_words_per_second = example_plugin:WordCountEvaluator\n"
    )
    for entry in (str(site), str(PLUGIN_DIR)):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    registry._catalogue.cache_clear()


def uninstall_example_plugin(site: Path) -> None:
    for entry in (str(site), str(PLUGIN_DIR)):
        while entry in sys.path:
            sys.path.remove(entry)
    registry._catalogue.cache_clear()
