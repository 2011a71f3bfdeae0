"""Figures of the benchmark: per-metric scatters, aligned-r bar charts, the results heat map.

Figures are workflow outputs like any table, so they must be byte-identical across reruns:
each is drawn on a standalone :class:`~matplotlib.figure.Figure` (no pyplot state, rendered
by Agg), under matplotlib's default style (a user's ``matplotlibrc`` cannot change it), at a
fixed size and dpi, and saved without the ``Software`` metadata that would embed the
matplotlib version.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import style
from matplotlib.axes import Axes
from matplotlib.colors import Colormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from pathbench_flow import categories
from pathbench_flow.io import atomic_path
from pathbench_flow.reporting.results_table import (
    AVERAGE_COLUMN,
    dataset_columns_of,
    require_file_names,
    sort_by_category,
)
from pathbench_flow.stats.correlation import DEFAULT_ALLOWLIST, analysis_speakers

DPI = 100
SCATTER_SIZE = (5.0, 4.0)


@contextmanager
def _figure(path: str | Path, size: tuple[float, float]) -> Iterator[tuple[Figure, Axes]]:
    """Yield a fresh figure and axes; on exit render them to a PNG at ``path`` atomically.

    Drawing and saving both happen under the default style because rcParams are read at
    both times. The ``Software`` metadata is dropped: it names the matplotlib version.
    """
    with style.context("default"):
        figure = Figure(figsize=size, dpi=DPI, layout="constrained")
        yield figure, figure.add_subplot()
        with atomic_path(path) as tmp:
            figure.savefig(tmp, format="png", dpi=DPI, metadata={"Software": None})


def _format_r(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def plot_metric_scatters(
    speakers_long: pd.DataFrame,
    ground_truth: pd.Series,
    correlations: pd.DataFrame,
    out_dir: str | Path,
    allowlist: Collection[str] = DEFAULT_ALLOWLIST,
    reasons: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write ``<metric>.png``: each speaker's metric value against their ground truth.

    Only the speakers the correlation was computed on are drawn, so the picture and the r
    and n in its title describe the same data. ``allowlist`` must be the one the
    correlations were computed with; a differing speaker count is reported as an error
    rather than drawn as a misleading figure. ``reasons`` (metric → text) is printed inside
    the axes of a metric without a correlation, so an empty plot says why it is empty.
    """
    out = Path(out_dir)
    require_file_names(correlations["metric"])
    speaker_sets = analysis_speakers(speakers_long, ground_truth, allowlist)
    values = speakers_long.set_index(["metric", "speaker_id"])["value"]
    paths = []
    for row in correlations.sort_values("metric").itertuples(index=False):
        speakers = speaker_sets[row.metric]
        if len(speakers) != row.n:
            raise ValueError(
                f"{row.metric}: correlation used {row.n} speakers but the speaker table gives "
                f"{len(speakers)}; were both computed with the same allowlist?"
            )
        x = values.loc[row.metric].reindex(speakers).to_numpy(dtype="float64")
        y = ground_truth.reindex(speakers).to_numpy(dtype="float64")
        title = f"{row.metric}: r = {_format_r(row.pearson_r)}, n = {row.n}"
        path = out / f"{row.metric}.png"
        reason = (reasons or {}).get(row.metric, "") if math.isnan(row.pearson_r) else ""
        with _figure(path, SCATTER_SIZE) as (_, axes):
            axes.scatter(x, y, s=25, color=categories.category(row.category).colour)
            axes.set(title=title, xlabel=f"{row.metric} (speaker value)", ylabel="ground truth")
            if reason:
                _print_reason(axes, reason)
        paths.append(path)
    return paths


def _print_reason(axes: Axes, reason: str) -> None:
    """The reason a scatter has no correlation, wrapped to fit inside the axes."""
    lines = [textwrap.fill(part, width=55) for part in reason.splitlines() if part.strip()]
    axes.text(
        0.5,
        0.5,
        "no correlation:\n" + "\n".join(lines),
        transform=axes.transAxes,
        ha="center",
        va="center",
        fontsize=8,
        wrap=True,
        bbox={"facecolor": "white", "edgecolor": "grey"},
    )


def plot_aligned_bars(correlations: pd.DataFrame, path: str | Path, title: str) -> None:
    """Bar chart of one dataset's sign-aligned r per metric with its bootstrap CI.

    Bars are coloured by category and ordered as in the results table; a metric without a
    correlation keeps its row, labelled "n/a", so a missing bar is never mistaken for r = 0.
    """
    rows = sort_by_category(correlations)
    positions = np.arange(len(rows))[::-1]
    aligned = rows["aligned_r"].to_numpy(dtype="float64")
    low = rows["aligned_ci_low"].to_numpy(dtype="float64")
    high = rows["aligned_ci_high"].to_numpy(dtype="float64")
    with _figure(path, (6.0, 1.6 + 0.35 * len(rows))) as (figure, axes):
        axes.barh(
            positions,
            np.nan_to_num(aligned),
            color=[categories.category(c).colour for c in rows["category"]],
        )
        # Drawn around the interval's own centre: a percentile interval need not contain r,
        # so offsets from the bar's end could be negative.
        axes.errorbar(
            (low + high) / 2, positions, xerr=(high - low) / 2, fmt="none", color="black", capsize=3
        )
        present = [c for c in categories.CATEGORIES if c.key in set(rows["category"])]
        figure.legend(
            handles=[Patch(color=c.colour, label=c.table_name) for c in present],
            loc="outside lower center",
            ncols=2,
            fontsize=8,
        )
        for position, value in zip(positions, aligned, strict=True):
            if math.isnan(value):
                axes.text(0.02, position, "n/a", va="center")
        axes.axvline(0.0, color="black", linewidth=0.8)
        axes.set_yticks(positions, rows["metric"].tolist())
        axes.set(xlim=(-1.0, 1.0), title=title, xlabel="sign-aligned Pearson r (95% CI)")


def plot_results_heatmap(results_table: pd.DataFrame, path: str | Path) -> None:
    """Heat map of a :func:`~pathbench_flow.reporting.results_table.build_results_table` table.

    A diverging colour map centred on 0 and fixed to [-1, 1] makes colours comparable across
    runs and datasets; cells without a value are grey and every cell is annotated. Rows are
    labelled with PathBench's row names; the Avg column is included.
    """
    columns = [*dataset_columns_of(results_table), AVERAGE_COLUMN]
    cells = results_table[columns].to_numpy(dtype="float64")
    colour_map: Colormap = matplotlib.colormaps["RdBu"].with_extremes(bad="lightgrey")
    # At least 5.5 inches wide: a one-dataset table is two columns, too narrow for the title.
    size = (max(5.5, 2.0 + 0.8 * len(columns)), 1.5 + 0.4 * len(results_table))
    with _figure(path, size) as (figure, axes):
        image = axes.imshow(
            np.ma.masked_invalid(cells), cmap=colour_map, vmin=-1.0, vmax=1.0, aspect="auto"
        )
        for (i, j), value in np.ndenumerate(cells):
            axes.text(j, i, _format_r(value), ha="center", va="center", fontsize=8)
        axes.set_xticks(np.arange(len(columns)), columns, rotation=45, ha="right")
        axes.set_yticks(np.arange(len(results_table)), results_table["row"].tolist())
        axes.set_title("Pearson r\n(signs aligned as in PathBench)", fontsize=10)
        figure.colorbar(image, ax=axes)


def plot_openset_rates(per_fold: pd.DataFrame, path: str | Path) -> None:
    """Held-out open-set rates per outer fold: known identification, unknown rejection and
    their mean (the balanced open-set rate), with chance-free 0–1 axes."""
    rates = ("known_identification_rate", "unknown_rejection_rate", "balanced_open_set_rate")
    positions = np.arange(len(per_fold))
    with _figure(path, (max(5.0, 0.5 * len(per_fold) + 2.0), 4.0)) as (_figure_, axes):
        for offset, name in zip((-0.25, 0.0, 0.25), rates, strict=True):
            values = per_fold[name].to_numpy(dtype="float64") if len(per_fold) else []
            axes.bar(positions + offset, values, width=0.25, label=name.replace("_", " "))
        axes.set_xticks(
            positions,
            [str(s) for s in per_fold.get("pseudo_unknown_speaker", [])],
            rotation=45,
            fontsize=8,
        )
        axes.set(
            ylim=(0.0, 1.0),
            xlabel="outer fold (pseudo-unknown speaker)",
            ylabel="rate",
            title="Open-set speaker evaluation, held-out rates",
        )
        axes.legend(fontsize=8)
