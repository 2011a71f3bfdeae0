"""The HTML page of a CSV table that the report shows: same cells, escaped, same bytes."""

from __future__ import annotations

import csv
import html.parser
from pathlib import Path

import pandas as pd
import pytest

from pathbench_flow.reporting.html_table import write_html_table, write_html_tables


class _Cells(html.parser.HTMLParser):
    """The text of a page's title, header cells and body rows, as a browser would read it."""

    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self.header: list[str] = []
        self.rows: list[list[str]] = []
        self.classes: list[list[str]] = []
        self.tags: list[str] = []
        self._open: str | None = None
        self._text = ""
        self._class = ""

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr" and self.tags.count("tbody"):
            self.rows.append([])
            self.classes.append([])
        if tag in ("th", "td", "title"):
            self._open, self._text, self._class = tag, "", dict(attrs).get("class") or ""

    def handle_endtag(self, tag):
        if tag == self._open:
            if tag == "title":
                self.title = self._text
            elif tag == "th":
                self.header.append(self._text)
            else:
                self.rows[-1].append(self._text)
                self.classes[-1].append(self._class)
            self._open = None

    def handle_data(self, data):
        if self._open:
            self._text += data


def _page(path: Path) -> _Cells:
    parser = _Cells()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


@pytest.fixture
def awkward_csv(tmp_path) -> Path:
    """A table with what a metric name or reason may hold: markup, quotes, ampersands, commas,
    a line break inside a quoted cell, non-ASCII text, empty cells and numbers."""
    frame = pd.DataFrame(
        {
            "metric": ["<script>alert(1)</script>", 'a "quoted" & <b>bold</b>', "ρ, two\nlines"],
            "aligned_r": [0.123456789, -1e-05, float("nan")],
            "n": [12, 3, 40],
            "reason": ["", "x > y", "Zoë's dataset"],
        }
    )
    path = tmp_path / "table.csv"
    frame.to_csv(path, index=False)
    return path


def test_the_page_shows_every_cell_of_the_csv_as_written(awkward_csv, tmp_path):
    write_html_table(awkward_csv, tmp_path / "table.html")
    page = _page(tmp_path / "table.html")
    with awkward_csv.open(newline="", encoding="utf-8") as file:
        header, *rows = list(csv.reader(file))
    assert page.title == "table.csv"
    assert page.header == header
    assert page.rows == rows
    # numeric columns line up on the right; text does not; empty cells (pandas writes NaN as
    # one) are marked empty
    assert page.classes == [
        ["", "number", "number", "empty"],
        ["", "number", "number", ""],
        ["", "empty", "number", ""],
    ]


def test_markup_in_a_cell_is_escaped_not_interpreted(awkward_csv, tmp_path):
    write_html_table(awkward_csv, tmp_path / "table.html")
    text = (tmp_path / "table.html").read_text(encoding="utf-8")
    page = _page(tmp_path / "table.html")
    assert "<script>" not in text and "<b>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    # the only elements are the page's own: no cell opened a tag
    assert set(page.tags) == {
        "html", "head", "meta", "title", "style", "body", "h1", "p", "div", "table",
        "thead", "tbody", "tr", "th", "td",
    }  # fmt: skip


def test_the_same_csv_gives_the_same_bytes(awkward_csv, tmp_path):
    first, second = tmp_path / "first.html", tmp_path / "second.html"
    write_html_tables({str(awkward_csv): str(first)})
    copy = tmp_path / "copy" / awkward_csv.name
    copy.parent.mkdir()
    copy.write_bytes(awkward_csv.read_bytes())
    write_html_tables({str(copy): str(second)})
    assert first.read_bytes() == second.read_bytes()
    assert str(tmp_path) not in first.read_text(encoding="utf-8")


def test_a_header_only_csv_is_an_empty_table(tmp_path):
    (tmp_path / "empty.csv").write_text("metric,published_r,measured_r\n", encoding="utf-8")
    write_html_table(tmp_path / "empty.csv", tmp_path / "empty.html")
    page = _page(tmp_path / "empty.html")
    assert page.header == ["metric", "published_r", "measured_r"] and page.rows == []


def test_a_ragged_csv_is_refused(tmp_path):
    (tmp_path / "ragged.csv").write_text("a,b\n1,2\n3\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 3 has 1 cells, the header 2"):
        write_html_table(tmp_path / "ragged.csv", tmp_path / "ragged.html")
    assert not (tmp_path / "ragged.html").exists()
