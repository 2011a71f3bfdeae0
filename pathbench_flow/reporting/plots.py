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

from pathbench_flow.common.io import atomic_path
from pathbench_flow.evaluators import categories
from pathbench_flow.reporting.results_table import (
    AVERAGE_COLUMN,
    dataset_columns_of,
    display_label,
    require_file_names,
    sort_by_category,
)
from pathbench_flow.stats.correlation import DEFAULT_ALLOWLIST, analysis_speakers
from pathbench_flow.stats.resampled_r import UNDEFINED_LIMIT

DPI = 150
"""Pixels per inch of every figure: the report shows a figure at its pixel size (a wider one
scrolls), so at 100 a 5-inch scatter's 8-point labels were 11 pixels high, too small to read
beside the report's text; at 150 they are 17."""
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


FLIPPED_NOTE = (
    "[−r, rule]: the raw r is shown flipped, by that rule. "
    "Name = key: the results table's row name and the metric key."
)
"""The key to the marks :func:`_signed_label` puts on a flipped metric's label."""


def _format_r(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def _signed_label(metric: str, sign: int, rule: str) -> str:
    """A metric's label in a figure of aligned r: the table's name (:func:`display_label`),
    marked with the rule where the shown value is the raw r flipped."""
    label = display_label(metric)
    return label if sign > 0 else f"{label}  [−r, {rule}]"


def _sign_notes(metrics: pd.Series, rules: pd.Series) -> str:
    """The key to a figure of aligned r: which metrics PathBench's vote flipped, and what the
    marks on the labels mean."""
    flipped = sorted(metrics[rules == "vote: flipped"])
    vote = f"Flipped by PathBench's vote: {', '.join(flipped)}. " if flipped else ""
    return vote + FLIPPED_NOTE


def _label_width(labels: Collection[str]) -> float:
    """Inches the longest tick label takes at matplotlib's default 10-point font."""
    return 0.075 * max((len(label) for label in labels), default=0)


def _wrapped(text: str, width: float) -> str:
    """``text`` in lines that fit ``width`` inches at 8 points, so no note runs off the
    picture."""
    return textwrap.fill(text, max(20, int(width * 72 / (0.55 * 8)) - 4))


def plot_metric_scatters(
    speakers_long: pd.DataFrame,
    ground_truth: pd.Series,
    correlations: pd.DataFrame,
    out_dir: str | Path,
    allowlist: Collection[str] = DEFAULT_ALLOWLIST,
    reasons: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write ``<metric>.png``: each speaker's metric value against their ground truth.

    ``correlations`` is a :func:`~pathbench_flow.reporting.results_table.sign_aligned`
    table. The points are raw values, so the title gives the raw r, labelled raw, and beside
    it the sign-aligned r of the results table with its rule. Only the speakers the
    correlation was computed on are drawn, so the picture and the r and n in its title
    describe the same data. ``allowlist`` must be the one the
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
        title = (
            f"{display_label(row.metric)}\nraw r = {_format_r(row.r_raw)}, n = {row.n}\n"
            f"sign-aligned r = {_format_r(row.r_aligned)} ({row.sign_rule})"
        )
        path = out / f"{row.metric}.png"
        reason = (reasons or {}).get(row.metric, "") if math.isnan(row.r_raw) else ""
        with _figure(path, SCATTER_SIZE) as (_, axes):
            axes.scatter(x, y, s=25, color=categories.category(row.category).colour)
            axes.set_title(title, fontsize=10)
            axes.set(
                xlabel=f"{display_label(row.metric)} (speaker value, raw)",
                ylabel="ground truth",
            )
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


FLAGGED_MARK = "‡"
"""The mark on a bar whose interval is flagged (r undefined in too many resamples)."""


def interval_notes(rows: pd.DataFrame) -> str:
    """The key to a bar chart's whiskers: which interval they are (the table's ``interval``
    column) and what the flag mark means."""
    names = sorted(set(rows["interval"]) - {""})
    note = f"Whiskers: {'; '.join(names) or 'no interval'}."
    if rows["ci_flagged"].any():
        note += (
            f" {FLAGGED_MARK}: r undefined in more than {100 * UNDEFINED_LIMIT:g} % of the "
            "resamples; its interval describes only those in which it varies."
        )
    return note


def plot_aligned_bars(correlations: pd.DataFrame, path: str | Path, title: str) -> pd.DataFrame:
    """Bar chart of one dataset's sign-aligned r per metric with its bootstrap interval.

    ``correlations`` is a :func:`~pathbench_flow.reporting.results_table.sign_aligned`
    table, so each bar is the value of ``results_table.csv``. Bars are coloured by category
    and ordered as in the results table, labelled with the table's names and marked where
    the raw r was flipped or the interval is flagged (``ci_flagged``); a metric without a
    correlation keeps its row, labelled "n/a", so a missing bar is never mistaken for r = 0.
    The legend names the interval (the table's ``interval``). Returns what was drawn, top to
    bottom: each bar's ``metric``, ``label`` and value (``r_aligned``).
    """
    rows = sort_by_category(correlations)
    positions = np.arange(len(rows))[::-1]
    aligned = rows["r_aligned"].to_numpy(dtype="float64")
    low = rows["ci_low_aligned"].to_numpy(dtype="float64")
    high = rows["ci_high_aligned"].to_numpy(dtype="float64")
    labels = [
        label + (f" {FLAGGED_MARK}" if flagged else "")
        for label, flagged in zip(
            map(_signed_label, rows["metric"], rows["sign"], rows["sign_rule"]),
            rows["ci_flagged"],
            strict=True,
        )
    ]
    width = 4.0 + _label_width(labels)
    with _figure(path, (width, 2.2 + 0.35 * len(rows))) as (figure, axes):
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
            # The key to the whiskers and marks, above the colours' key, wrapped to the figure.
            title=_wrapped(
                f"{interval_notes(rows)} {_sign_notes(rows['metric'], rows['sign_rule'])}", width
            ),
            title_fontsize=8,
        )
        for position, value in zip(positions, aligned, strict=True):
            if math.isnan(value):
                axes.text(0.02, position, "n/a", va="center")
        axes.axvline(0.0, color="black", linewidth=0.8)
        axes.set_yticks(positions, labels)
        axes.set(xlim=(-1.0, 1.0), xlabel="sign-aligned Pearson r (whiskers: legend)")
        figure.suptitle(title)
    return pd.DataFrame({"metric": rows["metric"], "label": labels, "r_aligned": aligned})


def plot_results_heatmap(results_table: pd.DataFrame, path: str | Path) -> list[str]:
    """Heat map of a :func:`~pathbench_flow.reporting.results_table.build_results_table` table.

    A diverging colour map centred on 0 and fixed to [-1, 1] makes colours comparable across
    runs and datasets; cells without a value are grey and every cell is annotated. Rows are
    labelled with the table's names, the metric key beside a name that differs from it, and
    marked where the raw r was flipped (``sign_rule``); the Avg column is included. Returns
    the row labels, top to bottom.
    """
    columns = [*dataset_columns_of(results_table), AVERAGE_COLUMN]
    cells = results_table[columns].to_numpy(dtype="float64")
    colour_map: Colormap = matplotlib.colormaps["RdBu"].with_extremes(bad="lightgrey")
    labels = list(
        map(
            _signed_label,
            results_table["metric"],
            results_table["sign"],
            results_table["sign_rule"],
        )
    )
    # At least 5.5 inches wide: a one-dataset table is two columns, too narrow for the title.
    width = max(5.5, 1.5 + 0.8 * len(columns) + _label_width(labels))
    with _figure(path, (width, 2.2 + 0.4 * len(results_table))) as (figure, axes):
        image = axes.imshow(
            np.ma.masked_invalid(cells), cmap=colour_map, vmin=-1.0, vmax=1.0, aspect="auto"
        )
        for (i, j), value in np.ndenumerate(cells):
            axes.text(j, i, _format_r(value), ha="center", va="center", fontsize=8)
        axes.set_xticks(np.arange(len(columns)), columns, rotation=45, ha="right")
        axes.set_yticks(np.arange(len(results_table)), labels)
        figure.suptitle("sign-aligned Pearson r (signs aligned as in PathBench)", fontsize=10)
        notes = _sign_notes(results_table["metric"], results_table["sign_rule"])
        figure.supxlabel(_wrapped(notes, width), fontsize=8)
        figure.colorbar(image, ax=axes)
    return labels


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
