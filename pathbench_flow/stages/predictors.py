"""The config's own predictors: their CSVs become score tables, and their correlations are
tested against the best built-in measures.

A predictor's CSV is turned into exactly the table an evaluator's job writes (a per-speaker
``speaker_scores`` table or a per-utterance ``scores`` table, :mod:`pathbench_flow.schemas.tables`),
so aggregation, correlation, plots and the results table treat it as any metric, and an
utterance CSV is averaged per speaker by the aggregation itself. Only ids of the validated
manifest are kept: a speaker or utterance validation dropped is dropped here too, and the
log says which.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping
from pathlib import Path

import pandas as pd

from pathbench_flow.common.io import read_parquet, write_parquet
from pathbench_flow.common.status import OK
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.data.score_scale import ground_truth_of
from pathbench_flow.evaluators.metric import RAW
from pathbench_flow.predictors.check import errors_of, read_checked
from pathbench_flow.predictors.config import SPEAKERS, PredictorFile
from pathbench_flow.reporting.html_table import write_html_tables
from pathbench_flow.reporting.results_table import read_signs
from pathbench_flow.schemas.tables import SCORE_SCHEMA, SPEAKER_SCORE_SCHEMA


def import_predictor(
    name: str,
    kind: str,
    csv_path: str | Path,
    dataset_dir: str | Path,
    manifest_path: str | Path,
    output_path: str | Path,
) -> pd.DataFrame:
    """Check predictor ``name``'s CSV (``kind``: speakers or utterances) against its dataset
    as the parse did, and write it as the score table of the manifest's ids.

    The check is repeated because a generated dataset (the demo) has no ``spk2score`` until
    its rule ran, and because a job must not trust a parse of other files than it reads.
    """
    file = PredictorFile(kind, Path(csv_path))
    rows, findings = read_checked(file, Path(dataset_dir))
    for finding in findings:
        print(f"{finding.severity}: {finding}", file=sys.stderr)
    if errors := errors_of(findings):
        raise ValueError(
            f"predictor {name}: {csv_path} does not fit the dataset ({len(errors)} problem(s)):\n"
            + "\n".join(f"  - {finding}" for finding in errors)
        )
    manifest = load_manifest(manifest_path)
    key = "speaker_id" if kind == SPEAKERS else "utt_id"
    kept = sorted(set(rows) & set(manifest[key]))
    dropped = sorted(set(rows) - set(kept))
    print(
        f"{csv_path}: {len(kept)} of {len(rows)} {key}s in the validated manifest; "
        f"{len(dropped)} left out with what validation dropped"
        + (f": {', '.join(dropped)}" if dropped else ""),
        file=sys.stderr,
    )
    frame = pd.DataFrame(
        {
            key: kept,
            "metric": name,
            "evaluator": name,
            "variant": RAW,
            "score": [rows[id_].value for id_ in kept],
            "status": OK,
            "message": "",
        }
    )
    if kind == SPEAKERS:
        counts = manifest.groupby("speaker_id").size()
        frame["n_utterances"] = counts.reindex(kept).to_numpy(dtype="int32")
        schema = SPEAKER_SCORE_SCHEMA
    else:
        frame["speaker_id"] = manifest.set_index("utt_id")["speaker_id"].reindex(kept).to_numpy()
        schema = SCORE_SCHEMA
    write_parquet(frame, output_path, schema, [key], {"predictor": name, "kind": kind})
    return frame


def compare_predictors(
    speakers_paths: Mapping[str, str | Path],
    correlation_paths: Mapping[str, str | Path],
    signs_path: str | Path,
    csv_path: str | Path,
    json_path: str | Path,
    page_path: str | Path,
    *,
    predictors: Collection[str],
    allowlist: Collection[str],
    method: str,
    level: float,
) -> pd.DataFrame:
    """Every predictor against each category's best built-in measure, per dataset (in the
    order of ``speakers_paths``, the config's), with the results table's signs
    (``signs_path``), written as CSV and JSON, and the CSV as the report's page."""
    # scipy.stats (the dependent-correlation tests): this stage only, not import_predictor's.
    from pathbench_flow.predictors.comparisons import (
        comparison_table,
        dataset_comparisons,
        write_predictor_comparisons,
    )

    signs = read_signs(signs_path)
    rows = []
    for dataset, speakers_path in speakers_paths.items():
        speakers = read_parquet(speakers_path)
        rows += dataset_comparisons(
            dataset,
            speakers,
            ground_truth_of(speakers),
            read_parquet(correlation_paths[dataset]),
            signs,
            predictors,
            allowlist=allowlist,
            method=method,
            level=level,
        )
    table = comparison_table(rows)
    write_predictor_comparisons(table, csv_path, json_path, method, level)
    write_html_tables({csv_path: page_path})
    return table
