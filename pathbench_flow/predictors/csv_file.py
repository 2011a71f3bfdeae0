"""Reading a predictor's CSV with the line of every value, as validation reads Kaldi files.

The format is PathBench's exchange format for external predictors: a header line
(``speaker_id,score`` as PathBench's ``evaluate_spk2score.py`` writes it, or ``utt_id,score``
for scores per utterance) and one ``<id>,<score>`` row per id. Problems become
:class:`~pathbench_flow.data.kaldi.Finding` objects naming file and line, all of them at once,
because a user fixes a file in one pass when every defect is listed.

A score must be a finite number. PathBench stops on a score that is not a number, and a
predictor has no N/A: it must score every rated speaker (that is PathBench's rule), and an
utterance it cannot score is left out of the file, not written with a placeholder.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from pathbench_flow.data.kaldi import Finding, FindingLog, parse_score, read_lines


@dataclass(frozen=True)
class Scored:
    """One row: its score (NaN where the row's score was refused) and its 1-based line."""

    value: float
    line: int


def _fields(text: str, number: int, log: FindingLog, path: Path) -> list[str] | None:
    """The comma-separated fields of line ``number``, csv-quoted where needed, whitespace
    stripped (an id never holds whitespace: Kaldi splits on it); None, with a finding, for a
    line the csv module cannot split."""
    try:
        return [field.strip() for field in next(csv.reader([text], strict=True))]
    except csv.Error as error:
        log.error(path, number, text.strip(), f"is not a CSV row ({error})", "fix its quoting")
        return None


def read_score_csv(path: Path, header: list[str], findings: list[Finding]) -> dict[str, Scored]:
    """The rows of the CSV at ``path`` by id, appending a finding for every defect.

    ``header`` is the exact first line expected (``["speaker_id", "score"]``). A row whose
    score is refused keeps its id (with NaN), so the id is not reported missing as well.
    Blank lines are skipped, as Python's csv module skips them.
    """
    log = FindingLog(findings)
    wanted = ",".join(header)
    if not path.is_file():
        problem = "is not a regular file" if path.exists() else "does not exist"
        log.error(path, 0, "", problem, f"give a CSV file with the header '{wanted}'")
        return {}
    known = len(findings)
    lines = [(number, text) for number, text in read_lines(path, findings) if text.strip()]
    if not lines:
        if len(findings) == known:  # else the encoding was refused, which says why
            log.error(path, 0, "", "is empty", f"write the header '{wanted}', then one row per id")
        return {}
    (first, top), *rows = lines
    if _fields(top, first, log, path) != header:
        log.error(
            path,
            first,
            top.strip(),
            f"is not the header '{wanted}'",
            f"make '{wanted}' the first line, as PathBench writes its CSVs",
        )
        return {}
    if not rows:
        log.error(path, first, "", "has no rows after the header", f"add one '{wanted}' row per id")
    scored: dict[str, Scored] = {}
    for number, text in rows:
        fields = _fields(text, number, log, path)
        if fields is None:
            continue
        if len(fields) != 2 or not fields[0]:
            log.error(
                path,
                number,
                text.strip(),
                f"{len(fields)} field(s) where 2 are expected" if fields[0] else "has no id",
                f"write '<{header[0]}>,<score>' on each line",
            )
            continue
        key, raw = fields
        if key in scored:
            problem = f"duplicate {header[0]} (first seen on line {scored[key].line})"
            log.error(path, number, key, problem, "keep exactly one row per id")
            continue
        value = parse_score(raw)
        if value is None or math.isnan(value):
            log.error(
                path,
                number,
                raw,
                f"score of {key!r} is not a finite number",
                "write a number: a predictor has no N/A (an utterance it cannot score is left "
                "out of the file; a rated speaker never is)",
            )
            value = math.nan
        scored[key] = Scored(value, number)
    return scored
