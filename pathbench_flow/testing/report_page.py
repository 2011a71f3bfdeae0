"""Reading what ``snakemake --report report.html`` wrote, as its page's script receives it.

The HTML report is a single page application: the results, the workflow graph and the landing
page's text are JSON assigned to script variables (``var results = {...};``), which the page's
components draw. Tests read those variables instead of a browser's rendering.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any


def report_variable(report: Path, name: str) -> Any:
    """The JSON value the report assigns to the script variable ``name``."""
    text = report.read_text(encoding="utf-8")
    match = re.search(rf"^\s*var {re.escape(name)} = (.*);$", text, re.MULTILINE)
    if match is None:
        raise ValueError(f"{report}: no `var {name} = ...;` line")
    return json.loads(match.group(1))


def graph_rules(report: Path) -> list[str]:
    """The rule of every node of the report's workflow graph, one entry per node drawn."""
    spec = report_variable(report, "rulegraph_spec")
    (nodes,) = [data["values"] for data in spec["data"] if data["name"] == "node-data"]
    return [node["rule"] for node in nodes]


def rulegraph_rules(dot: str) -> list[str]:
    """The rule of every node of ``snakemake --rulegraph``'s DOT output."""
    return re.findall(r'^\s*\d+\[label = "([^"]+)"', dot, re.MULTILINE)


def result_bytes(entry: dict[str, Any]) -> bytes:
    """The file a report result embeds (its ``data:...;base64,`` URI), as bytes."""
    return base64.b64decode(entry["data_uri"].split("base64,", 1)[1])
