"""The HTML page of a CSV table that the report shows: the CSV's cells with numbers at two
decimals, escaped, its first column pinned, a view's columns, same bytes."""

from __future__ import annotations

import csv
import html.parser
from pathlib import Path

import pandas as pd
import pytest

from pathbench_flow.reporting.html_table import (
    format_number,
    interval,
    shown,
    write_html_table,
    write_html_tables,
)


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


def test_the_page_shows_every_cell_of_the_csv_numbers_at_two_decimals(awkward_csv, tmp_path):
    csv_text = awkward_csv.read_text(encoding="utf-8")
    write_html_table(awkward_csv, tmp_path / "table.html")
    page = _page(tmp_path / "table.html")
    with awkward_csv.open(newline="", encoding="utf-8") as file:
        header, *rows = list(csv.reader(file))
    assert page.title == "table.csv"
    assert page.header == header
    # text as written, counts as written, other numbers at two decimals (a tiny one keeps a
    # significant digit); the CSV, the download, keeps its full precision
    assert page.rows == [
        ["<script>alert(1)</script>", "0.12", "12", ""],
        ['a "quoted" & <b>bold</b>', "-1e-05", "3", "x > y"],
        ["ρ, two\nlines", "", "40", "Zoë's dataset"],
    ]
    assert awkward_csv.read_text(encoding="utf-8") == csv_text
    assert "0.123456789" in csv_text
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


@pytest.mark.parametrize(
    ("cell", "shown_as"),
    [
        ("0.5", "0.50"),
        ("-0.456789", "-0.46"),
        ("0.001", "0.001"),  # a p-value does not read as zero
        ("-0.0001", "-0.0001"),
        ("0.0", "0.00"),
        ("-0.00", "0.00"),  # the sign of zero says nothing
        ("-0.001e-9", "-1e-12"),
        ("-0.004999", "-0.005"),
        ("1", "1.00"),
        ("inf", "inf"),
        ("0.004", "0.004"),
        ("0.005", "0.01"),
    ],
)
def test_numbers_read_at_two_decimals(cell, shown_as):
    assert format_number(cell) == shown_as


def test_a_column_of_integers_stays_as_written_a_zero_among_numbers_does_not(tmp_path):
    path = tmp_path / "ranks.csv"
    path.write_text("metric,rank,sign,p_rank_1\ncpp,1,-1,0.25\nvsa,2,+1,0\n", encoding="utf-8")
    write_html_table(path, tmp_path / "ranks.html")
    assert _page(tmp_path / "ranks.html").rows == [
        ["cpp", "1", "-1", "0.25"],
        ["vsa", "2", "+1", "0.00"],
    ]


def test_the_first_column_stays_in_view_when_the_table_scrolls(awkward_csv, tmp_path):
    write_html_table(awkward_csv, tmp_path / "table.html")
    style = (tmp_path / "table.html").read_text(encoding="utf-8").split("<style>")[1]
    pinned = style.split("th:first-child, td:first-child {", 1)[1].split("}", 1)[0]
    assert "position: sticky" in pinned and "left: 0" in pinned
    # with a background of its own, so that the cells scrolling under it do not show through
    assert "td:first-child { background: inherit" in style
    assert "tbody tr { background: #ffffff; }" in style


def test_a_view_orders_prunes_and_puts_an_interval_beside_its_value(tmp_path):
    path = tmp_path / "summary.csv"
    path.write_text(
        "metric,p_rank_2,Avg_unrounded,Avg_ci_low,Avg_ci_high,rank_low,rank_high,note\n"
        "cpp,0.25,0.4567,0.41234,0.52001,1,3,\n"
        "vsa,0.5,0.1,,,2,3,no interval\n",
        encoding="utf-8",
    )
    view = [
        shown("metric"),
        shown("Avg_unrounded", "Avg"),
        interval("Avg interval", "Avg_ci_low", "Avg_ci_high"),
        interval("rank interval", "rank_low", "rank_high"),
    ]
    write_html_tables({str(path): tmp_path / "summary.html"}, {path: view})
    page = _page(tmp_path / "summary.html")
    assert page.header == ["metric", "Avg", "Avg interval", "rank interval"]
    assert page.rows == [["cpp", "0.46", "0.41 – 0.52", "1 – 3"], ["vsa", "0.10", "", "2 – 3"]]
    assert page.classes[0] == ["", "number", "number", "number"]
    assert page.classes[1][2] == "empty"  # an interval missing an end is no interval
    assert "2 row(s) × 8 column(s); 4 column(s) shown here" in (
        tmp_path / "summary.html"
    ).read_text(encoding="utf-8")


def test_a_view_of_a_column_the_csv_lacks_is_refused(awkward_csv, tmp_path):
    with pytest.raises(ValueError, match=r"\['Avg_ci_low'\] are not in the CSV's header"):
        write_html_table(
            awkward_csv, tmp_path / "table.html", [interval("Avg interval", "Avg_ci_low", "n")]
        )
    assert not (tmp_path / "table.html").exists()
