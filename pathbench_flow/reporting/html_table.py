"""A CSV table as a web page, so that ``snakemake --report`` shows it instead of offering it only
as a download.

Snakemake's HTML report opens HTML results inline (in a frame) and offers every other text
file as a download link, so each table the report lists is written twice: the CSV, for
spreadsheets and scripts, and this rendering of the CSV's own text. The page is built from the
file's cells as written (never re-parsed into numbers and formatted again), so it shows exactly
the values of the CSV beside it; every cell and the title are HTML-escaped; and the page holds
nothing but the file's content (no time, no path), so the same CSV gives the same bytes.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Mapping, Sequence
from pathlib import Path

from pathbench_flow.io import write_text

# The report frames a result on its dark background: a light page with a readable table,
# sticky header, zebra rows and right-aligned numeric columns in tabular figures.
STYLE = """\
body { margin: 0; padding: 1rem; background: #ffffff; color: #1e293b;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 14px; }
h1 { font-size: 1.1rem; margin: 0 0 0.25rem 0; }
p.shape { margin: 0 0 0.75rem 0; color: #475569; }
div.scroll { overflow: auto; max-height: calc(100vh - 5rem); border: 1px solid #cbd5e1; }
table { border-collapse: collapse; white-space: nowrap; }
th, td { padding: 0.3rem 0.6rem; border-bottom: 1px solid #e2e8f0; text-align: left; }
th { position: sticky; top: 0; background: #e2e8f0; font-weight: 600; }
tbody tr:nth-child(even) { background: #f8fafc; }
tbody tr:hover { background: #e0f2fe; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
td.empty { color: #94a3b8; }
"""


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def numeric_columns(rows: Sequence[Sequence[str]], width: int) -> list[bool]:
    """Which columns hold only numbers (empty cells aside, at least one number): those are
    right-aligned, so that digits line up as in a spreadsheet."""
    return [
        any(row[column] for row in rows)
        and all(_is_number(row[column]) for row in rows if row[column])
        for column in range(width)
    ]


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]], title: str) -> str:
    """The page of one table: ``title`` above it, then ``header`` and ``rows`` as given.

    A row whose length differs from the header's is refused: the CSV is malformed, and a page
    that shifted its cells into the wrong columns would mislead the reader.
    """
    for number, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise ValueError(
                f"{title}: line {number} has {len(row)} cells, the header {len(header)}"
            )
    numeric = numeric_columns(rows, len(header))
    escape = html.escape
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
        f'<p class="shape">{len(rows)} row(s) × {len(header)} column(s)</p>',
        '<div class="scroll">',
        "<table>",
        "<thead><tr>" + "".join(f"<th>{escape(name)}</th>" for name in header) + "</tr></thead>",
        "<tbody>",
    ]
    for row in rows:
        cells = []
        for cell, is_numeric in zip(row, numeric, strict=True):
            if not cell:
                cells.append('<td class="empty"></td>')
            elif is_numeric:
                cells.append(f'<td class="number">{escape(cell)}</td>')
            else:
                cells.append(f"<td>{escape(cell)}</td>")
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


def write_html_table(csv_path: str | Path, html_path: str | Path) -> None:
    """Render the CSV at ``csv_path`` as the page at ``html_path``, titled by the CSV's name."""
    header, rows = read_csv_cells(Path(csv_path))
    page = render_table(header, rows, Path(csv_path).name)
    write_text(page, html_path)


def write_html_tables(tables: Mapping[str, str | Path]) -> None:
    """Render every CSV of ``tables`` (CSV path → HTML path): the pages a stage writes beside
    the CSVs it has just written, so its rule's script stays one call."""
    for csv_path, html_path in tables.items():
        write_html_table(csv_path, html_path)
