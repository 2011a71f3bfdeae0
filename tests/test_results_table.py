"""The metric × dataset results table and the per-metric speaker CSV export."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pathbench.correlation import read_predictions_csv
from pathbench.io import read_parquet
from pathbench.results_table import (
    build_results_table,
    export_speaker_csvs,
    write_results_table,
)

CATEGORY = {
    "cpp_fa": "reference-free signal",
    "std_pitch": "reference-free signal",
    "vsa": "reference-free speaker",
    "per": "reference-text",
    "nad_fa_all": "reference-audio",
    "spk2age": "lookup",
}


def correlations(aligned: dict[str, float]) -> pd.DataFrame:
    """A correlation table reduced to the columns the results table reads."""
    return pd.DataFrame(
        {
            "metric": list(aligned),
            "category": [CATEGORY[m] for m in aligned],
            "aligned_r": list(aligned.values()),
        }
    )


def example_table() -> pd.DataFrame:
    return build_results_table(
        {
            "UASpeech": correlations(
                {"per": 0.812, "cpp_fa": 0.444, "nad_fa_all": 0.706, "vsa": np.nan}
            ),
            "TORGO": correlations(
                {"spk2age": -0.001, "cpp_fa": 0.444, "std_pitch": -0.2, "per": 0.6}
            ),
            "COPAS": correlations({"cpp_fa": 0.454, "vsa": 0.31, "per": 0.7}),
        }
    )


def test_layout_rows_by_category_then_metric_columns_in_given_order() -> None:
    table = example_table()
    assert list(table.columns) == ["metric", "category", "UASpeech", "TORGO", "COPAS", "Avg"]
    assert list(table["metric"]) == ["cpp_fa", "std_pitch", "vsa", "per", "nad_fa_all", "spk2age"]
    assert list(table["category"]) == [CATEGORY[m] for m in table["metric"]]


def test_cells_are_rounded_and_missing_cells_are_nan() -> None:
    rows = example_table().set_index("metric")
    assert rows.at["per", "UASpeech"] == 0.81
    assert rows.at["std_pitch", "TORGO"] == -0.2
    assert math.isnan(rows.at["vsa", "UASpeech"])
    assert math.isnan(rows.at["std_pitch", "COPAS"])


def test_average_is_over_available_unrounded_values() -> None:
    rows = example_table().set_index("metric")
    # 0.444, 0.444, 0.454 average 0.4473 -> 0.45; averaging the rounded cells would give 0.44.
    assert rows.at["cpp_fa", "Avg"] == 0.45
    assert rows.at["per", "Avg"] == round((0.812 + 0.6 + 0.7) / 3, 2)
    assert rows.at["vsa", "Avg"] == 0.31  # NaN on UASpeech is skipped, not counted as 0
    assert rows.at["nad_fa_all", "Avg"] == 0.71


def test_inconsistent_or_unknown_categories_are_rejected() -> None:
    moved = correlations({"per": 0.5}).assign(category="reference-audio")
    with pytest.raises(ValueError, match="different categories.*per"):
        build_results_table({"A": correlations({"per": 0.5}), "B": moved})
    with pytest.raises(ValueError, match="unknown metric categories"):
        build_results_table({"A": moved.assign(category="magic")})


def test_dataset_names_may_not_clash_with_table_columns() -> None:
    with pytest.raises(ValueError, match="Avg"):
        build_results_table({"Avg": correlations({"per": 0.5})})


def test_written_files_are_exact_and_stable(tmp_path: Path) -> None:
    table = example_table()
    csv_path, parquet_path = write_results_table(table, tmp_path)
    assert csv_path.read_text().splitlines() == [
        "metric,category,UASpeech,TORGO,COPAS,Avg",
        "cpp_fa,reference-free signal,0.44,0.44,0.45,0.45",
        "std_pitch,reference-free signal,,-0.20,,-0.20",
        "vsa,reference-free speaker,,,0.31,0.31",
        "per,reference-text,0.81,0.60,0.70,0.70",
        "nad_fa_all,reference-audio,0.71,,,0.71",
        "spk2age,lookup,,0.00,,0.00",  # -0.001 rounds to 0.00, not -0.00
    ]
    pd.testing.assert_frame_equal(read_parquet(parquet_path), table, check_dtype=False)
    first = (csv_path.read_bytes(), parquet_path.read_bytes())
    write_results_table(example_table(), tmp_path)
    assert (csv_path.read_bytes(), parquet_path.read_bytes()) == first


def test_speaker_csvs_omit_missing_values_and_sort_by_speaker(tmp_path: Path) -> None:
    speakers = pd.DataFrame(
        {
            "speaker_id": ["M02", "F01", "M01", "M02", "F01"],
            "metric": ["cpp", "cpp", "cpp", "per", "per"],
            "value": [0.1, 1 / 3, np.nan, 12.5, 1e-20],
        }
    )
    paths = export_speaker_csvs(speakers, tmp_path)
    assert paths == [tmp_path / "cpp.csv", tmp_path / "per.csv"]
    assert (tmp_path / "cpp.csv").read_text() == (
        "speaker_id,score\nF01,0.3333333333333333\nM02,0.1\n"
    )
    assert (tmp_path / "per.csv").read_text() == "speaker_id,score\nF01,1e-20\nM02,12.5\n"
    back = read_predictions_csv(tmp_path / "cpp.csv")
    assert back["F01"] == 1 / 3  # the text reads back as the very same float


def test_speaker_csvs_refuse_metric_names_that_are_not_file_names(tmp_path: Path) -> None:
    speakers = pd.DataFrame({"speaker_id": ["F01"], "metric": ["../cpp"], "value": [1.0]})
    with pytest.raises(ValueError, match=r"\.\./cpp"):
        export_speaker_csvs(speakers, tmp_path)
