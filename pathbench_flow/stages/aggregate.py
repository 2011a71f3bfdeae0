"""Utterance scores → one value per speaker and metric.

PathBench correlates speaker-level values with speaker-level ratings, so each metric is the
mean over a speaker's utterances (NaN ignored). A speaker with no finite value keeps NaN for
that metric, and how many such speakers each metric has is written to the report rather than
left for the correlation stage to discover. The report also applies the correlation stage's
common-speaker-set rule (:func:`pathbench_flow.stats.correlation.speaker_sets`) and names, per
metric, every speaker that will leave its correlation and the metric that removes it.

Here the manifest's ratings become the correlations' ground truth, on the intelligibility
scale (:mod:`pathbench_flow.data.score_scale`): a severity-rated dataset's ratings are negated
once, in this cheap stage rather than in validation, so that setting ``score_scale`` reruns
no scoring job.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from pathbench_flow.common.io import write_json, write_parquet
from pathbench_flow.data.manifest import load_manifest, read_tables
from pathbench_flow.data.score_scale import DEFAULT_SCALE, as_intelligibility, ground_truth_name
from pathbench_flow.schemas.tables import SPEAKERS_SCHEMA
from pathbench_flow.stats.correlation import DEFAULT_ALLOWLIST, speaker_sets


def aggregate_speakers(
    manifest_path: str | Path,
    utterance_score_paths: Iterable[str | Path],
    speaker_score_paths: Iterable[str | Path],
    output_path: str | Path,
    report_path: str | Path,
    allowlist: Collection[str] = DEFAULT_ALLOWLIST,
    score_scale: str = DEFAULT_SCALE,
) -> pd.DataFrame:
    """Write the long speaker table (one row per speaker and metric) and its report.

    ``allowlist`` must be the correlation stage's (``correlation.allowlist``), so that the
    report's common speaker set is the one the correlations use. ``score_scale`` is the
    dataset's (``datasets.<name>.score_scale``): the table's ``ground_truth`` is the rating
    on the intelligibility scale, which the report names.
    """
    manifest = load_manifest(manifest_path)
    per_speaker = manifest.groupby("speaker_id", sort=True).agg(
        n_utterances=("utt_id", "size"), ground_truth=("score", "first")
    )
    per_speaker["ground_truth"] = as_intelligibility(per_speaker["ground_truth"], score_scale)
    utterances = read_tables(utterance_score_paths)
    parts = []
    if not utterances.empty:
        utterances["finite"] = np.isfinite(utterances["score"])
        grouped = utterances.groupby(["speaker_id", "metric", "evaluator", "variant"], sort=True)
        utt_level = grouped.agg(value=("score", "mean"), n_scored=("finite", "sum")).reset_index()
        parts.append(utt_level)
    speakers = read_tables(speaker_score_paths)
    if not speakers.empty:
        spk_level = speakers.rename(columns={"score": "value"})[
            ["speaker_id", "metric", "evaluator", "variant", "value"]
        ].copy()
        spk_level["n_scored"] = np.isfinite(spk_level["value"]).astype(int)
        parts.append(spk_level)
    table = (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame(
            columns=["speaker_id", "metric", "evaluator", "variant", "value", "n_scored"]
        )
    )
    table = _complete(table, per_speaker.index)
    table = table.join(per_speaker, on="speaker_id")
    write_parquet(table, output_path, SPEAKERS_SCHEMA, ["metric", "speaker_id"])
    report = _report(table, per_speaker["ground_truth"], allowlist)
    ratings = {"score_scale": score_scale, "ground_truth": ground_truth_name(score_scale)}
    write_json(ratings | report, report_path)
    return table


def _complete(table: pd.DataFrame, speakers: pd.Index) -> pd.DataFrame:
    """Give every speaker a row for every metric, so a missing value is a visible NaN."""
    metrics = table[["metric", "evaluator", "variant"]].drop_duplicates()
    grid = metrics.merge(pd.DataFrame({"speaker_id": speakers}), how="cross")
    full = grid.merge(table, on=["speaker_id", "metric", "evaluator", "variant"], how="left")
    full["n_scored"] = full["n_scored"].fillna(0).astype(int)
    return full


def _report(table: pd.DataFrame, ground_truth: pd.Series, allowlist: Collection[str]) -> dict:
    without = table[~np.isfinite(table["value"])].groupby("metric")["speaker_id"].apply(sorted)
    metrics = sorted(table["metric"].unique())
    sets = speaker_sets(table, ground_truth, allowlist)
    return {
        "n_speakers": int(table["speaker_id"].nunique()),
        "metrics": metrics,
        "speakers_without_value": {m: without.get(m, []) for m in metrics},
        "n_speakers_without_value": {m: len(without.get(m, [])) for m in metrics},
        "common_speaker_set": {"allowlist": sorted(allowlist), **sets.report()},
    }
