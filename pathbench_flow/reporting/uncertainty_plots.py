"""Figures of the uncertainty stage: rank distributions, the pairwise matrix, forest plots.

Titled for a reader who has not read the docs (a clinician-researcher choosing a measure):
each title says what the picture answers, in words. Drawn like every figure of the run
(:func:`pathbench_flow.reporting.plots._figure`: fixed style, size and dpi, no version
metadata), so reruns are byte-identical.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd

from pathbench_flow.reporting.plots import _figure, _label_width
from pathbench_flow.reporting.results_table import require_file_names

NO_R = "No measure has a correlation in any dataset (too few rated speakers with values)."
META_TEST_NAMES = {
    "knha_truncated": "Knapp-Hartung (scale ≥ 1)",
    "knha": "Knapp-Hartung",
    "z": "Wald",
}
"""How the figures name the meta-analysis's interval (``META_TESTS``)."""


def _labels(summary: pd.DataFrame) -> dict[str, str]:
    """Each metric's row name, marked where the summary flags it (its Avg undefined in too
    many replicates), so no figure shows its results as if nothing happened."""
    return {
        row.metric: f"{row.row} (! no Avg in {row.undefined_share:.0%} of resamples)"
        if row.flagged
        else row.row
        for row in summary.itertuples(index=False)
    }


def _nothing_to_show(path: str | Path, title: str, reason: str) -> None:
    """A figure that says in words why it has nothing to draw, so the report's item still
    answers the reader (a pilot corpus with one rated speaker has no r to rank)."""
    with _figure(path, (8.5, 2.5)) as (figure, axes):
        axes.set_axis_off()
        axes.text(0.5, 0.5, reason, ha="center", va="center", wrap=True)
        figure.suptitle(title, fontsize=10)


RANK_TITLE = (
    "How sure is each measure's place in the ranking?\n"
    "Share of resampled speaker sets in which the measure takes each rank"
)


def plot_rank_distribution(summary: pd.DataFrame, path: str | Path) -> None:
    """Per metric (rows, best Avg first), how often it took each rank in the bootstrap."""
    if summary.empty:
        _nothing_to_show(path, RANK_TITLE, NO_R)
        return
    ordered = summary.sort_values(["rank", "metric"], kind="mergesort")
    ranks = [c for c in summary.columns if c.startswith("p_rank_") and c != "p_rank_1"]
    columns = ["p_rank_1", *sorted(ranks, key=lambda c: int(c.rsplit("_", 1)[1]))]
    values = ordered[columns].to_numpy(dtype="float64")
    names = _labels(summary)
    labels = [names[metric] for metric in ordered["metric"]]
    width = max(6.0, 2.0 + 0.45 * len(columns) + _label_width(labels))
    with _figure(path, (width, 2.0 + 0.35 * len(labels))) as (figure, axes):
        image = axes.imshow(values, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
        for (i, j), value in np.ndenumerate(values):
            if np.isfinite(value) and round(value * 100) >= 1:  # no "0%" cell, none for no Avg
                colour = "white" if value > 0.6 else "black"
                axes.text(j, i, f"{value:.0%}", ha="center", va="center", fontsize=7, color=colour)
        axes.set_xticks(np.arange(len(columns)), [str(k + 1) for k in range(len(columns))])
        axes.set_yticks(np.arange(len(labels)), labels)
        axes.set_xlabel("rank by average correlation (1 = best)")
        figure.suptitle(RANK_TITLE, fontsize=10)
        figure.colorbar(image, ax=axes, label="share of resamples")


def plot_pairwise(
    summary: pd.DataFrame, pairwise: pd.DataFrame, path: str | Path, alpha: float
) -> None:
    """Matrix of Avg differences (row minus column), a star where Holm's p < ``alpha``;
    the text white on the dark end of the colour scale."""
    title = (
        "Which measures really differ?\nRow's average correlation minus column's\n"
        f"* = unlikely to be chance (bootstrap p, Holm-adjusted, < {alpha})\n"
        "no star = cannot be told apart"
    )
    if len(summary) < 2:
        reason = NO_R if summary.empty else "Only one measure has a correlation: no pair."
        _nothing_to_show(path, title, reason)
        return
    ordered = list(summary.sort_values(["rank", "metric"], kind="mergesort")["metric"])
    names = _labels(summary)
    m = len(ordered)
    index = {metric: i for i, metric in enumerate(ordered)}
    difference = np.full((m, m), np.nan)
    different = np.zeros((m, m), dtype=bool)
    for row in pairwise.itertuples(index=False):
        i, j = index[row.metric], index[row.other]
        difference[i, j], difference[j, i] = row.difference, -row.difference
        different[i, j] = different[j, i] = row.p_holm < alpha
    labels = [names[metric] for metric in ordered]
    side = 2.5 + 0.45 * m + _label_width(labels)
    limit = max(0.05, float(np.nanmax(np.abs(difference))) if m > 1 else 0.05)
    colours = matplotlib.colormaps["RdBu"].with_extremes(bad="lightgrey")
    with _figure(path, (side + 1.0, side)) as (figure, axes):
        image = axes.imshow(np.ma.masked_invalid(difference), cmap=colours, vmin=-limit, vmax=limit)
        for (i, j), value in np.ndenumerate(difference):
            if np.isfinite(value):
                mark = "*" if different[i, j] else ""
                colour = "white" if abs(value) > 0.6 * limit else "black"
                axes.text(
                    j, i, f"{value:+.2f}{mark}", ha="center", va="center", fontsize=7, color=colour
                )
        axes.set_xticks(np.arange(m), labels, rotation=45, ha="right")
        axes.set_yticks(np.arange(m), labels)
        figure.suptitle(title, fontsize=10)
        figure.colorbar(image, ax=axes, label="difference in average correlation")


def plot_forests(
    meta: pd.DataFrame, inputs: pd.DataFrame, out_dir: str | Path, level: float
) -> list[Path]:
    """One forest plot per metric with a pooled r: each corpus's r with its Fisher interval,
    the pooled r with its interval (the meta-analysis's ``test``, named) and, as a wide pale
    band, the prediction interval for a new corpus (all at ``level``), with a legend."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pooled = meta[meta["k"] >= 2]
    require_file_names(pooled["metric"])
    paths = []
    for row in pooled.itertuples(index=False):
        studies = inputs[inputs["metric"] == row.metric]
        labels = [f"{c} (n={n})" for c, n in zip(studies["column"], studies["n"], strict=True)]
        labels.append("pooled")
        test = META_TEST_NAMES[row.test]
        path = out / f"{row.metric}.png"
        with _figure(path, (7.5, 3.4 + 0.35 * len(labels))) as (figure, axes):
            y = np.arange(len(studies))[::-1] + 1
            axes.axvline(0.0, color="grey", linewidth=0.8)
            axes.fill_between(
                [row.pi_low, row.pi_high],
                -0.3,
                0.3,
                color="tab:orange",
                alpha=0.35,
                linewidth=0,
                label=f"{level:.0%} prediction interval: a new corpus's r",
            )
            axes.errorbar(
                studies["r"],
                y,
                xerr=[studies["r"] - studies["ci_low"], studies["ci_high"] - studies["r"]],
                fmt="s",
                color="black",
                capsize=3,
                label=f"corpus r, {level:.0%} CI (Fisher z)",
            )
            axes.errorbar(
                [row.pooled_r],
                [0],
                xerr=[[row.pooled_r - row.ci_low], [row.ci_high - row.pooled_r]],
                fmt="D",
                color="tab:blue",
                capsize=5,
                linewidth=2,
                label=f"pooled r, {level:.0%} CI ({test})",
            )
            axes.set_xlim(-1.08, 1.08)
            axes.set_ylim(-0.8, len(studies) + 0.8)
            axes.set_yticks([*y, 0], labels)
            axes.set_xlabel("correlation with listeners' ratings (sign-aligned r)")
            axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=1, fontsize=8)
            figure.suptitle(
                f"Does {row.row} agree with listeners in every corpus?\n"
                f"Pooled r {row.pooled_r:.2f} ({level:.0%} CI {row.ci_low:.2f} to "
                f"{row.ci_high:.2f}; random effects, REML τ², {test})\n"
                f"In a new corpus expect {row.pi_low:.2f} to {row.pi_high:.2f}; "
                f"I² = {row.i2:.0f}%, the share of the spread between corpora that is real",
                fontsize=9,
            )
        paths.append(path)
    return paths
