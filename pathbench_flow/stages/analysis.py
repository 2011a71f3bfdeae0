"""Workflow stages after scoring: correlation, plots, the results table, exports.

Each function reads the files one rule receives and writes the files it declares, so the
scripts under ``scripts/`` stay one call long.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from pathbench_flow import registry
from pathbench_flow.io import read_parquet, write_text
from pathbench_flow.reporting.results_table import (
    aligned_r,
    build_results_table,
    dataset_column,
    export_speaker_csvs,
    write_results_table,
)
from pathbench_flow.stats.correlation import correlate_metrics, write_correlations


def ground_truth_of(speakers: pd.DataFrame) -> pd.Series:
    """speaker_id → spk2score value (NaN for N/A), from the speakers table."""
    first = speakers.drop_duplicates("speaker_id").set_index("speaker_id")
    return first["ground_truth"].astype(float)


def metric_metadata(speakers: pd.DataFrame) -> pd.DataFrame:
    """Direction and category of each metric, looked up through its evaluator."""
    pairs = speakers[["metric", "evaluator"]].drop_duplicates()
    infos = [registry.info(name) for name in pairs["evaluator"]]
    return pd.DataFrame(
        {
            "metric": pairs["metric"].to_numpy(),
            "direction": [info.direction for info in infos],
            "category": [info.category for info in infos],
        }
    )


def correlate(
    speakers_path: str | Path,
    parquet_path: str | Path,
    csv_path: str | Path,
    *,
    allowlist: Collection[str],
    n_boot: int,
    seed: int,
) -> pd.DataFrame:
    """Correlate every metric of one dataset with its ground truth; Parquet and CSV."""
    speakers = read_parquet(speakers_path)
    table = correlate_metrics(
        speakers,
        ground_truth_of(speakers),
        metric_metadata(speakers),
        allowlist=tuple(allowlist),
        n_boot=n_boot,
        seed=seed,
    )
    settings = {"allowlist": sorted(allowlist), "n_boot": n_boot, "seed": seed}
    write_correlations(table, parquet_path, settings)
    write_text(table.to_csv(index=False, float_format="%.10g", lineterminator="\n"), csv_path)
    return table


def metric_reasons(correlations: pd.DataFrame, aggregation: Mapping[str, Any]) -> dict[str, str]:
    """Per metric, every recorded reason it has no correlation, one line each.

    Read defensively, because the correlation and aggregation stages may record more over
    time: every string column of ``correlations`` whose name contains "reason" or
    "excluded", the count of speakers without a value from ``aggregation.json``, and any
    string that ``aggregation.json`` files under the metric's name, at the top level or one
    level down (e.g. ``common_speaker_set.not_constraining``).
    """
    reason_columns = sorted(c for c in correlations.columns if "reason" in c or "excluded" in c)
    reasons = {}
    for row in correlations.to_dict(orient="records"):
        metric = row["metric"]
        lines = [
            str(row[column]) if column == "reason" else f"{column}: {row[column]}"
            for column in reason_columns
            if isinstance(row[column], str) and row[column].strip()
        ]
        lines += _aggregation_lines(aggregation, metric)
        reasons[metric] = "\n".join(dict.fromkeys(lines))
    return reasons


def _aggregation_lines(aggregation: Mapping[str, Any], metric: str) -> list[str]:
    """What ``aggregation.json`` says about why ``metric`` lacks values."""
    lines = []
    without = aggregation.get("n_speakers_without_value", {})
    if isinstance(without, Mapping) and metric in without:
        total = aggregation.get("n_speakers", "?")
        lines.append(f"no value for {without[metric]} of {total} speakers")
    blocks = [(key, value) for key, value in sorted(aggregation.items())]
    blocks += [
        (inner, value)
        for _, block in sorted(aggregation.items())
        if isinstance(block, Mapping)
        for inner, value in sorted(block.items())
    ]
    for key, block in blocks:
        record = block.get(metric) if isinstance(block, Mapping) else None
        if isinstance(record, str) and record.strip():
            lines.append(f"{key}: {record}")
    return lines


def plot_dataset(
    dataset: str,
    speakers_path: str | Path,
    correlations_path: str | Path,
    aggregation_path: str | Path,
    scatter_dir: str | Path,
    bars_path: str | Path,
    *,
    allowlist: Collection[str],
) -> None:
    """Per-metric scatter plots and the bar chart of sign-aligned r with bootstrap CIs.

    A scatter without a correlation prints the reasons recorded for its metric.
    """
    from pathbench_flow.reporting.plots import plot_aligned_bars, plot_metric_scatters  # matplotlib

    speakers = read_parquet(speakers_path)
    correlations = read_parquet(correlations_path)
    aggregation = json.loads(Path(aggregation_path).read_text(encoding="utf-8"))
    Path(scatter_dir).mkdir(parents=True, exist_ok=True)
    plot_metric_scatters(
        speakers,
        ground_truth_of(speakers),
        correlations,
        scatter_dir,
        allowlist=tuple(allowlist),
        reasons=metric_reasons(correlations, aggregation),
    )
    plot_aligned_bars(correlations, bars_path, f"{dataset}: sign-aligned Pearson r (95% CI)")


def results_table(
    correlation_paths: Mapping[str, str | Path],
    dataset_settings: Mapping[str, Mapping[str, str]],
    out_dir: str | Path,
    heatmap_path: str | Path,
    comparisons_csv: str | Path,
    comparisons_json: str | Path,
) -> pd.DataFrame:
    """PathBench's results table, its heat map and its Wilcoxon protocol comparisons.

    ``dataset_settings`` is each dataset's config entry (``path`` and the optional
    ``corpus``, ``task``, ``condition``), which places it among PathBench's columns.
    """
    from pathbench_flow.reporting.plots import plot_results_heatmap  # matplotlib: this stage only
    from pathbench_flow.stats.comparisons import write_comparisons  # scipy.stats: this stage only

    correlations = {name: read_parquet(p) for name, p in correlation_paths.items()}
    columns = [dataset_column(name, dataset_settings.get(name, {})) for name in correlations]
    table = build_results_table(correlations, columns)
    settings = {"columns": [(c.dataset, c.label) for c in columns]}
    write_results_table(table, out_dir, settings)
    plot_results_heatmap(table, heatmap_path)
    write_comparisons(aligned_r(correlations, columns), comparisons_csv, comparisons_json)
    return table


def export_speaker_csv(speakers_path: str | Path, out_dir: str | Path) -> None:
    """Per-metric ``speaker_id,score`` CSVs in PathBench's external-predictor format."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    export_speaker_csvs(read_parquet(speakers_path), out_dir)
