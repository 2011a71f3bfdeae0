"""A CSV table as a web page, so that ``snakemake --report`` shows it instead of offering it only
as a download.

Snakemake's HTML report opens HTML results inline (in a frame) and offers every other text
file as a download link, so each table the report lists is written twice: the CSV, for
spreadsheets and scripts, at full precision and with every column, and this page, for reading.
The page shows numbers at two decimals (:func:`format_number`), so that a row reads at a
glance, and keeps its first column (each table's key: the metric, the dataset, …) in view when
the table scrolls sideways. A table of many columns can be given a :class:`TableView`: the
columns a reader needs, in the order they read best, a value and its interval side by side in
one column; the page says how many of the CSV's columns it shows. Cells are taken from the
file's text (a column of integers, such as counts and ranks, and text as written); every cell
and the title are HTML-escaped; and the page holds nothing but the file's content (no time, no
path), so the same CSV gives the same bytes.
"""

from __future__ import annotations

import csv
import html
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pathbench_flow.common.io import write_text

DECIMALS = 2
"""Decimals of the page's numbers: the results table's own, and as many as a reader compares."""
INTERVAL_SEPARATOR = " – "

# The report frames a result on its dark background: a light page with a readable table,
# sticky header and first column, zebra rows and right-aligned numeric columns in tabular
# figures. A sticky cell needs a background of its own, or the cells scrolling under it show
# through: the first column inherits its row's.
STYLE = """\
body { margin: 0; padding: 1rem; background: #ffffff; color: #1e293b;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 14px; }
h1 { font-size: 1.1rem; margin: 0 0 0.25rem 0; }
p.shape { margin: 0 0 0.75rem 0; color: #475569; }
div.scroll { overflow: auto; max-height: calc(100vh - 5rem); border: 1px solid #cbd5e1; }
table { border-collapse: separate; border-spacing: 0; white-space: nowrap; }
th, td { padding: 0.3rem 0.6rem; border-bottom: 1px solid #e2e8f0; text-align: left; }
th { position: sticky; top: 0; z-index: 1; background: #e2e8f0; font-weight: 600; }
th:first-child, td:first-child { position: sticky; left: 0; border-right: 1px solid #cbd5e1; }
th:first-child { z-index: 2; }
td:first-child { background: inherit; font-weight: 600; }
tbody tr { background: #ffffff; }
tbody tr:nth-child(even) { background: #f8fafc; }
tbody tr:hover { background: #e0f2fe; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
td.empty { color: #94a3b8; }
"""


@dataclass(frozen=True)
class Shown:
    """One column of a page: the CSV's column ``sources[0]`` under ``header``, or, with two
    sources, the interval between them ("low – high"), so that a value's interval reads in
    one cell beside it instead of two columns apart."""

    header: str
    sources: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.sources) not in (1, 2):
            raise ValueError(f"{self.header}: a column shows one CSV column or an interval of two")


def shown(name: str, header: str | None = None) -> Shown:
    """The CSV's column ``name``, under its own name or ``header``."""
    return Shown(header or name, (name,))


def interval(header: str, low: str, high: str) -> Shown:
    """The interval between the CSV's columns ``low`` and ``high``, under ``header``."""
    return Shown(header, (low, high))


TableView = Sequence[Shown]
"""The columns a page shows, in order; a table without one shows every column as written."""


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _is_integer(cell: str) -> bool:
    return cell.lstrip("+-").isdigit()


def format_number(cell: str) -> str:
    """A number as the page shows it: at :data:`DECIMALS` decimals, except one that would show
    as zero without being zero (a p-value of 0.0004), which keeps one significant digit.
    ``-0.00`` is ``0.00``: the sign of a value that rounds to zero says nothing."""
    value = float(cell)
    if not math.isfinite(value):
        return cell
    if value != 0 and abs(value) < 0.5 * 10**-DECIMALS:
        return f"{value:.1g}"
    text = f"{value:.{DECIMALS}f}"
    return text.removeprefix("-") if float(text) == 0 else text


INTEGER, NUMBER = "integer", "number"
"""Kinds of column (:func:`column_kinds`); any other column is text."""


def column_kinds(rows: Sequence[Sequence[str]], width: int) -> list[str | None]:
    """Per column, what its cells hold (empty cells aside, at least one value): only integers
    (counts, ranks, signs), shown as written; numbers, shown by :func:`format_number` (a ``0``
    among them too, as ``0.00``); or text (``None``), shown as written. Numbers are
    right-aligned, so that digits line up as in a spreadsheet."""
    kinds: list[str | None] = []
    for column in range(width):
        cells = [row[column] for row in rows if row[column]]
        if not cells or not all(_is_number(cell) for cell in cells):
            kinds.append(None)
        else:
            kinds.append(INTEGER if all(_is_integer(cell) for cell in cells) else NUMBER)
    return kinds


def _view_indices(header: Sequence[str], view: TableView) -> list[tuple[str, list[int]]]:
    """Each shown column's header and the indices of its CSV columns; a view naming a column
    the CSV lacks is refused, since the page would silently leave out what it promises."""
    positions = {name: index for index, name in enumerate(header)}
    missing = [name for column in view for name in column.sources if name not in positions]
    if missing:
        raise ValueError(f"the page's columns {missing} are not in the CSV's header")
    return [(column.header, [positions[name] for name in column.sources]) for column in view]


def _cell(cells: Sequence[str], kind: str | None) -> str:
    """The ``<td>`` of one shown column: a value, or an interval of two (empty if either end
    is)."""
    if not all(cells):
        return '<td class="empty"></td>'
    shown_cells = [format_number(c) for c in cells] if kind == NUMBER else cells
    text = html.escape(INTERVAL_SEPARATOR.join(shown_cells))
    return f"<td>{text}</td>" if kind is None else f'<td class="number">{text}</td>'


def _kind(kinds: Sequence[str | None]) -> str | None:
    """The kind of a shown column from its CSV columns' kinds: text if any is."""
    if None in kinds:
        return None
    return INTEGER if all(kind == INTEGER for kind in kinds) else NUMBER


def render_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    title: str,
    view: TableView | None = None,
) -> str:
    """The page of one table: ``title`` above it, then the columns of ``view`` (default: every
    column of ``header``, in order) for each of ``rows``.

    A row whose length differs from the header's is refused: the CSV is malformed, and a page
    that shifted its cells into the wrong columns would mislead the reader.
    """
    for number, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise ValueError(
                f"{title}: line {number} has {len(row)} cells, the header {len(header)}"
            )
    columns = _view_indices(header, view if view is not None else [shown(n) for n in header])
    kinds = column_kinds(rows, len(header))
    escape = html.escape
    shape = f"{len(rows)} row(s) × {len(header)} column(s)"
    if view is not None:
        shape += f"; {len(columns)} column(s) shown here, all of them in the CSV"
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{escape(title)}</title>",
        f"<style>\n{STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="shape">{shape}</p>',
        '<div class="scroll">',
        "<table>",
        "<thead><tr>"
        + "".join(f"<th>{escape(name)}</th>" for name, _ in columns)
        + "</tr></thead>",
        "<tbody>",
    ]
    for row in rows:
        cells = (
            _cell([row[i] for i in indices], _kind([kinds[i] for i in indices]))
            for _, indices in columns
        )
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines += ["</tbody>", "</table>", "</div>", "</body>", "</html>", ""]
    return "\n".join(lines)


def read_csv_cells(path: Path) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a CSV file, each cell the text the file holds."""
    text = Path(path).read_text(encoding="utf-8")
    records = list(csv.reader(io.StringIO(text, newline="")))
    if not records:
        raise ValueError(f"{path}: empty file, no header to render")
    return records[0], records[1:]


def write_html_table(
    csv_path: str | Path, html_path: str | Path, view: TableView | None = None
) -> None:
    """Render the CSV at ``csv_path`` as the page at ``html_path``, titled by the CSV's name,
    showing the columns of ``view`` (default: all)."""
    header, rows = read_csv_cells(Path(csv_path))
    page = render_table(header, rows, Path(csv_path).name, view)
    write_text(page, html_path)


def write_html_tables(
    tables: Mapping[str, str | Path], views: Mapping[str | Path, TableView] | None = None
) -> None:
    """Render every CSV of ``tables`` (CSV path → HTML path), each with its view in ``views``
    (CSV path → view) if it has one: the pages a stage writes beside the CSVs it has just
    written, so its rule's script stays one call."""
    chosen = {Path(path): view for path, view in (views or {}).items()}
    for csv_path, html_path in tables.items():
        write_html_table(csv_path, html_path, chosen.get(Path(csv_path)))
