"""Workflow stages after scoring: correlation, plots, the results table, exports.

Each function reads the files one rule receives and writes the files it declares, so the
scripts under ``scripts/`` stay one call long.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

import pandas as pd

from pathbench import registry
from pathbench.correlation import correlate_metrics, write_correlations
from pathbench.io import read_parquet, write_text
from pathbench.plots import plot_aligned_bars, plot_metric_scatters, plot_results_heatmap
from pathbench.results_table import build_results_table, export_speaker_csvs, write_results_table


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


def correlate_dataset(
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


def plot_dataset(
    dataset: str,
    speakers_path: str | Path,
    correlations_path: str | Path,
    scatter_dir: str | Path,
    bars_path: str | Path,
    *,
    allowlist: Collection[str],
) -> None:
    """Per-metric scatter plots and the bar chart of sign-aligned r with bootstrap CIs."""
    speakers = read_parquet(speakers_path)
    correlations = read_parquet(correlations_path)
    Path(scatter_dir).mkdir(parents=True, exist_ok=True)
    plot_metric_scatters(
        speakers, ground_truth_of(speakers), correlations, scatter_dir, allowlist=tuple(allowlist)
    )
    plot_aligned_bars(correlations, bars_path, f"{dataset}: sign-aligned Pearson r (95% CI)")


def make_results_table(
    correlation_paths: Mapping[str, str | Path], out_dir: str | Path, heatmap_path: str | Path
) -> pd.DataFrame:
    """The PathBench-style table (metrics × datasets, sign-aligned r, Avg) and its heat map."""
    table = build_results_table({name: read_parquet(p) for name, p in correlation_paths.items()})
    write_results_table(table, out_dir, {"datasets": list(correlation_paths)})
    plot_results_heatmap(table, heatmap_path)
    return table


def export_speakers(speakers_path: str | Path, out_dir: str | Path) -> None:
    """Per-metric ``speaker_id,score`` CSVs in PathBench's external-predictor format."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    export_speaker_csvs(read_parquet(speakers_path), out_dir)
