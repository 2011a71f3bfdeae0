"""Figures: written, non-empty, of the promised size, and byte-identical across renders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from pathbench_flow.reporting.plots import (
    DPI,
    FLAGGED_MARK,
    SCATTER_SIZE,
    interval_notes,
    plot_aligned_bars,
    plot_metric_scatters,
    plot_results_heatmap,
)
from pathbench_flow.reporting.results_table import (
    aligned_r,
    build_results_table,
    results_table_of,
    sign_aligned,
)
from pathbench_flow.stages.analysis import metric_reasons
from pathbench_flow.stats.correlation import correlate_metrics

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SPEAKERS = [f"S{i:02d}" for i in range(12)]
TRUTH = pd.Series(np.linspace(5.0, 95.0, len(SPEAKERS)), index=SPEAKERS)


def speakers_table() -> pd.DataFrame:
    """cpp rises with the truth, per falls, wada_snr misses two speakers, vsa never works."""
    noise = np.random.default_rng(5).normal(size=len(SPEAKERS))
    values = {
        "cpp": TRUTH.to_numpy() / 10 + noise,
        "per": 100 - TRUTH.to_numpy() + 5 * noise,
        "wada_snr": np.r_[np.nan, np.nan, TRUTH.to_numpy()[2:] / 5 + noise[2:]],
        "vsa": np.full(len(SPEAKERS), np.nan),
    }
    return pd.DataFrame(
        [(s, m, v) for m, column in values.items() for s, v in zip(SPEAKERS, column, strict=True)],
        columns=["speaker_id", "metric", "value"],
    )


METADATA = pd.DataFrame(
    {
        "metric": ["cpp", "per", "wada_snr", "vsa"],
        "direction": [1, -1, 1, 1],
        "category": [
            "reference-free signal",
            "reference-text",
            "reference-free signal",
            "reference-free speaker",
        ],
    }
)


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    return correlate_metrics(speakers_table(), TRUTH, METADATA, n_boot=200)


@pytest.fixture(scope="module")
def correlations(raw: pd.DataFrame) -> pd.DataFrame:
    """The dataset's correlations with the signs of a run of this dataset alone."""
    return sign_aligned(raw, aligned_r({"A": raw}).signs)


def render_all(out: Path, correlations: pd.DataFrame) -> list[Path]:
    raw = correlations.rename(columns={"r_raw": "pearson_r"})
    table = build_results_table({"A": raw, "B": raw.assign(pearson_r=0.1)})
    paths = plot_metric_scatters(speakers_table(), TRUTH, correlations, out / "scatter")
    plot_aligned_bars(correlations, out / "bars.png", "dataset A")
    plot_results_heatmap(table, out / "heatmap.png")
    return [*paths, out / "bars.png", out / "heatmap.png"]


def test_figures_are_pngs_and_identical_across_renders(
    tmp_path: Path, correlations: pd.DataFrame
) -> None:
    first = render_all(tmp_path / "one", correlations)
    second = render_all(tmp_path / "two", correlations)
    assert [p.relative_to(tmp_path / "one") for p in first] == [
        p.relative_to(tmp_path / "two") for p in second
    ]
    assert [p.name for p in first[:4]] == ["cpp.png", "per.png", "vsa.png", "wada_snr.png"]
    for one, two in zip(first, second, strict=True):
        content = one.read_bytes()
        assert content.startswith(PNG_SIGNATURE), one
        assert content == two.read_bytes(), one.name
    assert not list((tmp_path / "one").rglob("*.tmp"))


def test_scatter_has_the_fixed_size(tmp_path: Path, correlations: pd.DataFrame) -> None:
    (path, *_) = plot_metric_scatters(speakers_table(), TRUTH, correlations, tmp_path)
    with Image.open(path) as image:
        assert image.size == (SCATTER_SIZE[0] * DPI, SCATTER_SIZE[1] * DPI)


def test_figures_depend_on_the_data(tmp_path: Path, correlations: pd.DataFrame) -> None:
    plot_aligned_bars(correlations, tmp_path / "a.png", "dataset A")
    # Halving r but not its interval also exercises a CI that does not contain r, which a
    # percentile bootstrap can produce.
    shifted = correlations.assign(r_aligned=correlations["r_aligned"] / 2)
    plot_aligned_bars(shifted, tmp_path / "b.png", "dataset A")
    assert (tmp_path / "a.png").read_bytes() != (tmp_path / "b.png").read_bytes()


def test_scatter_refuses_correlations_from_another_speaker_set(
    tmp_path: Path, correlations: pd.DataFrame
) -> None:
    with pytest.raises(ValueError, match="same allowlist"):
        plot_metric_scatters(speakers_table(), TRUTH, correlations, tmp_path, allowlist=())


def test_an_empty_scatter_prints_why_it_is_empty(
    tmp_path: Path, correlations: pd.DataFrame
) -> None:
    reasons = {
        "vsa": "vsa: language 'cmn' has no vowel table",
        "cpp": "never printed: cpp has a correlation",
    }
    plain = plot_metric_scatters(speakers_table(), TRUTH, correlations, tmp_path / "plain")
    told = plot_metric_scatters(
        speakers_table(), TRUTH, correlations, tmp_path / "told", reasons=reasons
    )
    changed = [a.name for a, b in zip(plain, told, strict=True) if a.read_bytes() != b.read_bytes()]
    assert changed == ["vsa.png"]


def test_reasons_come_from_correlations_and_aggregation(correlations: pd.DataFrame) -> None:
    aggregation = {
        "n_speakers": 12,
        "n_speakers_without_value": {"vsa": 12, "cpp": 0},
        "common_speaker_set": {
            "not_constraining": {"vsa": "values for 0 rated speaker(s): too few to correlate"},
            "excluded_speakers": {"vsa": {}},
        },
    }
    extra = correlations.assign(
        excluded_speakers=["S01 (by per)", "", "", ""], notes="x"
    )  # a column named neither "reason" nor "excluded" is not read
    reasons = metric_reasons(extra, aggregation)
    assert reasons["vsa"].splitlines() == [
        "0 speaker(s) to correlate, at least 3 are needed",
        "no value for 12 of 12 speakers",
        "not_constraining: values for 0 rated speaker(s): too few to correlate",
    ]
    assert reasons["cpp"].splitlines() == [
        "excluded_speakers: S01 (by per)",
        "no value for 0 of 12 speakers",
    ]
    assert metric_reasons(correlations.drop(columns="reason"), {})["vsa"] == ""


def test_figures_show_the_tables_sign_and_say_where_it_flips_raw_r(
    tmp_path: Path, raw: pd.DataFrame
) -> None:
    """wada_snr falls with the truth in both datasets, so PathBench's vote flips it: the bar
    and the heat map show +r, both mark the flip, per is flipped by its expected sign, and
    every label is the table's row name with the metric key where the two differ."""
    falling = raw.assign(pearson_r=raw["pearson_r"].where(raw["metric"] != "wada_snr", -0.4))
    aligned = aligned_r({"A": falling, "B": falling})
    assert aligned.sign_rules["wada_snr"] == "vote: flipped"
    bars = plot_aligned_bars(
        sign_aligned(falling, aligned.signs), tmp_path / "bars.png", "A"
    ).set_index("metric")
    table = results_table_of(aligned).set_index("metric")
    for metric in bars.index.drop("vsa"):
        assert bars.at[metric, "r_aligned"] == pytest.approx(table.at[metric, "A"], abs=0.005)
    assert bars.at["wada_snr", "r_aligned"] == 0.4
    assert bars["label"].to_dict() == {
        "cpp": "cpp",
        "wada_snr": "WADA SNR = wada_snr  [−r, vote: flipped]",
        "vsa": "VSA = vsa",
        "per": "PER (SEM) = per  [−r, expected -1]",
    }
    labels = plot_results_heatmap(table.reset_index(), tmp_path / "heat.png")
    assert labels == bars["label"].tolist()


def test_bars_mark_a_flagged_interval_and_name_the_interval(
    tmp_path: Path, correlations: pd.DataFrame
) -> None:
    """A metric whose r was undefined in too many resamples is marked; the legend's key
    names the table's interval and what the mark means."""
    flagged = correlations.assign(ci_flagged=correlations["metric"] == "cpp")
    bars = plot_aligned_bars(flagged, tmp_path / "bars.png", "A").set_index("metric")
    assert bars.at["cpp", "label"] == f"cpp {FLAGGED_MARK}"
    assert FLAGGED_MARK not in bars.at["per", "label"]
    notes = interval_notes(flagged)
    assert notes.startswith(
        "Whiskers: percentile bootstrap over speakers, 95 %, 200 resamples where r is defined."
    )
    assert f"{FLAGGED_MARK}: r undefined in more than 5 % of the resamples" in notes
