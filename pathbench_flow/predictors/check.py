"""A predictor's CSV against its dataset: PathBench's rule that it scores exactly the rated
speakers, checked when the workflow is parsed and again by the job that imports it.

PathBench's ``evaluate_from_csv.py`` stops when the speakers of the CSV and of the ground
truth differ, listing the ids on each side; the ground truth is every ``spk2score`` line with
a number (``N/A`` speakers are not rated). Correlating the overlap instead would let a
predictor skip the speakers it handles badly. Here every such id is a
:class:`~pathbench_flow.data.kaldi.Finding` at its line: an extra id at its row of the CSV, a
missing one at its line of ``spk2score``. An utterance CSV is held to the same rule through
its utterances' speakers (``utt2spk``), and an utterance the dataset does not have is a
finding too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pathbench_flow.data.kaldi import Finding, FindingLog, parse_score, read_table
from pathbench_flow.data.references import REFERENCE_TYPES
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.categories import AUDIO
from pathbench_flow.evaluators.metric import RAW, VARIANTS, MetricKey
from pathbench_flow.predictors.config import SPEAKERS, Predictor, PredictorFile, predictors_of
from pathbench_flow.predictors.csv_file import Scored, read_score_csv
from pathbench_flow.runtime.preflight import ConfigError

RULE = "PathBench's rule: a predictor scores exactly the speakers rated in spk2score"


def rated_speakers(spk2score: Path, findings: list[Finding]) -> dict[str, int]:
    """The speakers ``spk2score`` rates (a number, not ``N/A``), each with its line."""
    table = read_table(spk2score, findings, n_fields=1)
    rated = {}
    for entry in table.entries.values():
        value = parse_score(entry.fields[0])
        if value is None:
            FindingLog(findings).error(
                spk2score,
                entry.line,
                entry.fields[0],
                f"score of speaker {entry.key!r} is neither a finite number nor N/A",
                "fix the dataset's spk2score (validation reports it too)",
            )
        elif not math.isnan(value):
            rated[entry.key] = entry.line
    return rated


def read_checked(file: PredictorFile, dataset_dir: Path) -> tuple[dict[str, Scored], list[Finding]]:
    """The CSV's rows and every finding of the CSV and of its ids against the dataset in
    ``dataset_dir`` (its ``spk2score``, and ``utt2spk`` for an utterance CSV)."""
    findings: list[Finding] = []
    rows = read_score_csv(file.path, file.header, findings)
    spk2score = dataset_dir / "spk2score"
    if not spk2score.is_file():
        problem = "does not exist: the predictor's speakers are checked against it"
        FindingLog(findings).error(spk2score, 0, "", problem, "add the dataset's ratings")
        return rows, findings
    rated = rated_speakers(spk2score, findings)
    log = FindingLog(findings)
    if file.kind == SPEAKERS:
        lines = {speaker: row.line for speaker, row in rows.items()}
        extra = ("speaker", "remove the row")
        missing = ("has no row", "add a row 'speaker_id,score' there")
    else:
        lines = _utterance_speakers(rows, dataset_dir / "utt2spk", file.path, findings)
        extra = ("speaker of this line's utterance", "remove the rows of its utterances")
        missing = ("has no utterance", "add 'utt_id,score' rows for its utterances there")
    for speaker, line in sorted(lines.items(), key=lambda item: item[1]):
        if speaker not in rated:
            problem = f"{extra[0]} is not rated in {spk2score} (absent, or N/A)"
            log.error(file.path, line, speaker, problem, f"{extra[1]}; {RULE}")
    for speaker, line in sorted(rated.items(), key=lambda item: item[1]):
        if speaker not in lines:
            problem = f"rated speaker {missing[0]} in {file.path}"
            log.error(spk2score, line, speaker, problem, f"{missing[1]}; {RULE}")
    return rows, findings


def _utterance_speakers(
    rows: Mapping[str, Scored], utt2spk: Path, csv_path: Path, findings: list[Finding]
) -> dict[str, int]:
    """Speaker → first CSV line of one of its utterances; an utterance ``utt2spk`` does not
    list is a finding."""
    speaker_of = _speakers_of(utt2spk, findings)
    first: dict[str, int] = {}
    for utterance, row in rows.items():
        speaker = speaker_of.get(utterance)
        if speaker is None:
            FindingLog(findings).error(
                csv_path,
                row.line,
                utterance,
                f"utterance is not in {utt2spk}",
                "fix the id or remove the row",
            )
        elif speaker not in first:
            first[speaker] = row.line
    return first


def _speakers_of(utt2spk: Path, findings: list[Finding]) -> dict[str, str]:
    """Utterance → speaker of the dataset's ``utt2spk``."""
    if not utt2spk.is_file():
        FindingLog(findings).error(utt2spk, 0, "", "does not exist", "add the dataset's utt2spk")
        return {}
    entries = read_table(utt2spk, findings, n_fields=1).entries
    return {utterance: entry.fields[0] for utterance, entry in entries.items()}


def errors_of(findings: list[Finding]) -> list[Finding]:
    return [finding for finding in findings if finding.severity == "error"]


def registered_metric_names() -> dict[str, str]:
    """Every name an installed evaluator's metrics can take (all variants and reference
    sets), and its evaluator's own name, mapped to that evaluator."""
    names = {}
    for evaluator in registry.names():
        info = registry.info(evaluator)
        variants = VARIANTS if info.trimmable else (RAW,)
        references = REFERENCE_TYPES if info.category == AUDIO.key else ("",)
        names[evaluator] = evaluator
        for variant in variants:
            for reference in references:
                names[MetricKey(evaluator, variant, reference).name] = evaluator
    return names


def check_predictors(config: Mapping[str, Any], generated: Callable[[Path], bool]) -> None:
    """Raise :class:`~pathbench_flow.runtime.preflight.ConfigError` listing every problem of the
    ``predictors`` block: a name taken by an evaluator's metric, a dataset the config does
    not have, and every finding of each CSV against its dataset.

    ``generated(path)`` tells whether a dataset directory is written by the workflow (the
    demo); until it is, only the CSV itself can be read, and the import job checks the rest.
    """
    problems = []
    taken = registered_metric_names()
    for name, predictor in predictors_of(config).items():
        if name in taken:
            owner = taken[name]
            what = "an evaluator" if owner == name else f"a metric of the evaluator {owner!r}"
            problems.append(
                f"predictors.{name}: {name!r} is {what}; give the predictor a name of its own"
            )
        problems += _file_problems(predictor, config["datasets"], generated)
    if problems:
        raise ConfigError(problems)


def _file_problems(
    predictor: Predictor, datasets: Mapping[str, Any], generated: Callable[[Path], bool]
) -> list[str]:
    problems = []
    for dataset, file in predictor.files.items():
        if dataset not in datasets:
            problems.append(
                f"predictors.{predictor.name}.datasets.{dataset}: no dataset is called "
                f"{dataset!r}; configured: {', '.join(sorted(datasets))}"
            )
            continue
        directory = Path(datasets[dataset]["path"])
        if generated(directory) and not (directory / "spk2score").is_file():
            findings: list[Finding] = []
            read_score_csv(file.path, file.header, findings)
        else:
            findings = read_checked(file, directory)[1]
        problems += [f"{predictor.key(dataset)}: {finding}" for finding in errors_of(findings)]
    return problems
