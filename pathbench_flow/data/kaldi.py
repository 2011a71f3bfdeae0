"""Reading Kaldi-style key/value files while remembering where every value came from.

Validation must name the file and line of each defect, so parsing keeps line numbers and
reports problems as :class:`Finding` objects instead of raising at the first one: users fix a
dataset in one pass when they see every problem at once.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from pathbench_flow.common.staging import located

NOT_RATED = "N/A"
"""The ``spk2score`` value of a speaker without a rating (PathBench's controls)."""


def parse_score(raw: str) -> float | None:
    """A ``spk2score`` value: a finite float, NaN for :data:`NOT_RATED`, None if invalid.

    'nan' and 'inf' are no more a score than 'x': a speaker silently read as unrated would
    change every correlation of the dataset, so callers report None as an error.
    """
    if raw == NOT_RATED:
        return math.nan
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Finding:
    """One defect of a dataset: where it is, what is wrong and how to fix it.

    ``utterances`` lists the utterances the defect invalidates; an empty tuple on an error
    means the whole dataset is unusable (``on_error: drop`` cannot route around it).
    """

    file: str
    line: int
    value: str
    problem: str
    fix: str
    severity: str = "error"
    utterances: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        shown = f" {self.value!r}" if self.value else ""
        return f"{where}:{shown} {self.problem} ({self.fix})"

    def as_dict(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "value": self.value,
            "problem": self.problem,
            "fix": self.fix,
            "severity": self.severity,
            "utterances": list(self.utterances),
        }


@dataclass(frozen=True)
class Entry:
    """A parsed line: the key, the remaining fields and the 1-based line number."""

    key: str
    fields: tuple[str, ...]
    line: int


@dataclass
class Table:
    """The entries of one Kaldi file, keyed by their first field."""

    path: Path
    entries: dict[str, Entry] = field(default_factory=dict)

    def get(self, key: str) -> Entry | None:
        return self.entries.get(key)


@dataclass
class FindingLog:
    """The findings of one validation and the shorthand the checks add them with."""

    findings: list[Finding] = field(default_factory=list)

    def error(
        self,
        where: Table | Path,
        line: int,
        value: str,
        problem: str,
        fix: str,
        utterances: tuple[str, ...] = (),
        severity: str = "error",
    ) -> None:
        """Add a finding in ``where`` (a parsed table or a file path)."""
        path = where.path if isinstance(where, Table) else where
        self.findings.append(Finding(str(path), line, value, problem, fix, severity, utterances))


UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def read_lines(path: Path, findings: list[Finding]) -> list[tuple[int, str]]:
    """The decoded lines of ``path`` with their 1-based numbers, blank lines included.

    Editors on Windows save UTF-8 with a byte-order mark; left in place it would glue itself
    to the first key (``'\\ufeffen'`` is no language, ``'\\ufeffutt1'`` no utterance), so it is
    stripped and named in a warning. A UTF-16 file is one error, not an error per line.
    Undecodable lines become findings and are left out.
    """
    log = FindingLog(findings)
    raw = located(path).read_bytes()
    if raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM) :]
        problem = "file starts with a UTF-8 byte-order mark (ignored)"
        log.error(path, 1, "", problem, "save the file as UTF-8 without BOM", severity="warning")
    elif raw.startswith(UTF16_BOMS):
        log.error(
            path, 1, "", "file is UTF-16 encoded (byte-order mark)", "re-encode the file as UTF-8"
        )
        return []
    lines = []
    for number, line_bytes in enumerate(raw.splitlines(), start=1):
        try:
            lines.append((number, line_bytes.decode("utf-8")))
        except UnicodeDecodeError as exc:
            around = line_bytes[max(0, exc.start - 10) : exc.end + 10]
            problem = f"bytes that are not UTF-8 (byte 0x{line_bytes[exc.start]:02x})"
            log.error(
                path,
                number,
                around.decode("utf-8", "backslashreplace"),
                problem,
                "re-encode the file as UTF-8",
            )
    return lines


def _count_range(n: int, extra: int) -> str:
    return f"{n}-{n + extra}" if extra else str(n)


def read_table(
    path: Path,
    findings: list[Finding],
    *,
    n_fields: int | None,
    rest_joined: bool = False,
    optional_fields: int = 0,
) -> Table:
    """Parse ``path`` into a :class:`Table`, appending a finding for every malformed line.

    ``n_fields`` is the number of whitespace-separated fields after the key, or ``None``
    when the rest of the line is free text (``text``, ``wav.scp``) and is kept as one field;
    up to ``optional_fields`` more may follow (the channel of a Kaldi ``segments`` line).
    Blank lines are skipped: Kaldi tools tolerate a trailing empty line.
    """
    table = Table(path=path)
    unusual = _UnusualText()
    for number, line in read_lines(path, findings):
        if not line.strip():
            continue
        parts = line.split(maxsplit=1) if rest_joined else line.split()
        unusual.note_separators(number, line.strip(), parts[0] if rest_joined else None)
        key, rest = unusual.nfc(number, parts[0]), parts[1:]
        if rest_joined:
            rest = [rest[0].strip() if rest else ""]
        else:
            rest = [unusual.nfc(number, value) for value in rest]
        expected = 1 if rest_joined else n_fields
        if expected is not None and not expected <= len(rest) <= expected + optional_fields:
            findings.append(
                Finding(
                    file=str(path),
                    line=number,
                    value=line.strip(),
                    problem=f"{len(rest) + 1} fields where "
                    f"{_count_range(expected + 1, optional_fields)} are expected",
                    fix=f"write '<key>' followed by {_count_range(expected, optional_fields)} "
                    "value(s) on each line",
                )
            )
            continue
        if key in table.entries:
            findings.append(
                Finding(
                    file=str(path),
                    line=number,
                    value=key,
                    problem=f"duplicate key (first seen on line {table.entries[key].line})",
                    fix="keep exactly one line per key",
                )
            )
            continue
        table.entries[key] = Entry(key=key, fields=tuple(rest), line=number)
    findings += unusual.findings(path)
    return table


ASCII_SEPARATORS = " \t"
"""What separates the fields of a Kaldi file for Kaldi's own tools."""
_SEPARATOR = re.compile(r"\s+")
UNUSUAL_EXAMPLES = 3


def code_points(text: str) -> str:
    """``text`` as its code points (``U+0065 U+0301``): what tells two look-alike ids apart."""
    return " ".join(f"U+{ord(ch):04X}" for ch in text)


def form_difference(value: str) -> str:
    """The part of ``value`` that NFC changes, as code points before and after."""
    normal = unicodedata.normalize("NFC", value)
    start = 0
    while start < min(len(value), len(normal)) and value[start] == normal[start]:
        start += 1
    end = 0
    while end < min(len(value), len(normal)) - start and value[-1 - end] == normal[-1 - end]:
        end += 1
    before = code_points(value[start : len(value) - end])
    return f"{before} -> {code_points(normal[start : len(normal) - end])}"


class _UnusualText:
    """What one file writes in an unusual but readable way: ids not in Unicode NFC, and
    fields separated by whitespace other than spaces and tabs (a no-break space from a word
    processor). Both are read (ids compared in NFC, any whitespace separating), and each kind
    becomes one warning naming the lines and code points, so a user can see why two ids that
    print alike are, or are not, the same."""

    def __init__(self) -> None:
        self.not_nfc: list[tuple[int, str]] = []
        self.separators: dict[str, list[int]] = {}

    def nfc(self, line: int, value: str) -> str:
        normal = unicodedata.normalize("NFC", value)
        if normal != value:
            self.not_nfc.append((line, value))
        return normal

    def note_separators(self, line: int, stripped: str, key: str | None) -> None:
        """Remember non-ASCII separators of ``stripped``; with ``key`` (free-text files) only
        the one after the key separates fields."""
        if key is not None:
            after = stripped[len(key) :]
            runs = [after[: len(after) - len(after.lstrip())]] if after else []
        else:
            runs = _SEPARATOR.findall(stripped)
        for run in runs:
            for ch in set(run) - set(ASCII_SEPARATORS):
                self.separators.setdefault(ch, []).append(line)

    def findings(self, path: Path) -> list[Finding]:
        found = []
        if self.not_nfc:
            shown = "; ".join(
                f"line {line} {value!r} ({form_difference(value)})"
                for line, value in self.not_nfc[:UNUSUAL_EXAMPLES]
            )
            more = len(self.not_nfc) - UNUSUAL_EXAMPLES
            found.append(
                Finding(
                    str(path),
                    self.not_nfc[0][0],
                    shown + (f" and {more} more" if more > 0 else ""),
                    f"{len(self.not_nfc)} id(s) not in Unicode NFC: they are compared with the "
                    "other files' ids in NFC and stored that way",
                    "save the file in NFC (e.g. uconv -x any-nfc) so every tool sees one id",
                    severity="warning",
                )
            )
        for ch, lines in sorted(self.separators.items()):
            name = unicodedata.name(ch, "unnamed")
            found.append(
                Finding(
                    str(path),
                    lines[0],
                    f"U+{ord(ch):04X} {name}",
                    f"fields separated by U+{ord(ch):04X} ({name}) on {len(lines)} line(s), "
                    f"first line {lines[0]}: read as a separator, though Kaldi's tools separate "
                    "fields only by spaces and tabs",
                    "replace it by a space",
                    severity="warning",
                )
            )
        return found
