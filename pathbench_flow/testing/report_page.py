"""Reading what ``snakemake --report report.html`` wrote, as its page's script receives it.

The HTML report is a single page application: the results, the workflow graph and the landing
page's text are JSON assigned to script variables (``var results = {...};``), which the page's
components draw. Tests read those variables instead of a browser's rendering.
"""

from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any


def report_variable(report: Path, name: str) -> Any:
    """The JSON value the report assigns to the script variable ``name``."""
    text = report.read_text(encoding="utf-8")
    # a JSON object or string: the bundled libraries assign variables of the same names too
    pattern = rf'^\s*var {re.escape(name)} = ((?:\{{"|"|\[).*);$'
    match = re.search(pattern, text, re.MULTILINE)
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


class _TableCells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: str | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("th", "td"):
            self._cell = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._cell is not None:
            self.rows[-1].append(self._cell)
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell += data


def table_cells(page: str) -> list[list[str]]:
    """The text of every row of the tables of an HTML page (header row first), unescaped."""
    parser = _TableCells()
    parser.feed(page)
    parser.close()
    return parser.rows
