"""PathBench's results table (rows, columns, signs, Avg) and the per-metric speaker CSVs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pathbench_flow.io import read_parquet
from pathbench_flow.reporting.results_table import (
    DatasetColumn,
    build_results_table,
    dataset_column,
    export_speaker_csvs,
    order_columns,
    write_results_table,
)
from pathbench_flow.stats.correlation import read_predictions_csv

KALDI = Path(__file__).resolve().parents[1] / "../shared/fixtures/kaldi-metadata"
CATEGORY = {
    "cpp_fa": "reference-free signal",
    "cpp": "reference-free signal",
    "cpps_fa": "reference-free signal",
    "wada_snr": "reference-free signal",
    "std_pitch_fa": "reference-free signal",
    "vsa": "reference-free speaker",
    "per": "reference-text",
    "wer": "reference-text",
    "nad_fa_all": "reference-audio",
    "p_estoi_fa_all": "reference-audio",
    "spk2age": "lookup",
    "double_asr": "reference-free signal",
}


def correlations(r: dict[str, float]) -> pd.DataFrame:
    """A correlation table reduced to the columns the results table reads."""
    return pd.DataFrame(
        {"metric": list(r), "category": [CATEGORY[m] for m in r], "pearson_r": list(r.values())}
    )


def example_table() -> pd.DataFrame:
    return build_results_table(
        {
            "ua": correlations(
                {"per": -0.812, "cpp_fa": 0.444, "nad_fa_all": -0.706, "vsa": np.nan}
            ),
            "torgo": correlations(
                {"spk2age": -0.001, "cpp_fa": 0.444, "std_pitch_fa": -0.2, "per": 0.6}
            ),
            "copas": correlations({"cpp_fa": 0.454, "vsa": -0.31, "per": -0.7, "wada_snr": 0.1}),
        },
        [
            DatasetColumn("copas", "COPAS", "Word", "MC"),
            DatasetColumn("torgo", "TORGO", "Sentence", "EX"),
            DatasetColumn("ua", "UASpeech", "Word", "MC"),
        ],
    )


def test_rows_follow_pathbench_and_extras_come_after_their_category() -> None:
    table = example_table()
    assert list(table.columns) == [
        "metric",
        "row",
        "category",
        "in_pathbench_table",
        "sign_rule",
        "UASpeech Word MC",
        "COPAS Word MC",
        "TORGO Sentence EX",
        "Avg",
        "n_datasets",
    ]
    assert list(table["metric"]) == [
        "cpp_fa",
        "std_pitch_fa",
        "wada_snr",
        "vsa",
        "per",
        "nad_fa_all",
        "spk2age",
    ]
    assert list(table["row"]) == ["CPP", "Std Pitch", "WADA SNR", "VSA", "PER (SEM)", "NAD"] + [
        "spk2age"
    ]
    assert list(table["category"]) == [
        "Reference-Free (Signal)",
        "Reference-Free (Signal)",
        "Reference-Free (Signal)",
        "Reference-Free (Speaker)",
        "Reference-Text",
        "Reference-Audio (Parallel)",
        "Lookup",
    ]
    assert list(table["in_pathbench_table"]) == [True, True, False, True, True, True, False]


def test_pathbench_sign_rules() -> None:
    rows = example_table().set_index("metric")
    # per and nad: |r|, whatever the sign in each column.
    assert rows.at["per", "UASpeech Word MC"] == 0.81
    assert rows.at["per", "TORGO Sentence EX"] == 0.6
    assert rows.at["per", "COPAS Word MC"] == 0.7
    assert rows.at["nad_fa_all", "UASpeech Word MC"] == 0.71
    # Negative in every column that has a value: flipped everywhere.
    assert rows.at["vsa", "COPAS Word MC"] == 0.31
    assert rows.at["std_pitch_fa", "TORGO Sentence EX"] == 0.2
    assert rows.loc[["per", "nad_fa_all", "vsa", "cpp_fa"], "sign_rule"].tolist() == [
        "abs",
        "abs",
        "vote: flipped",
        "vote: kept",
    ]
    assert math.isnan(rows.at["vsa", "UASpeech Word MC"])


def test_vote_keeps_raw_signs_when_one_column_is_positive_and_double_asr_is_negated() -> None:
    table = build_results_table(
        {
            "a": correlations({"cpp_fa": -0.5, "double_asr": -0.9}),
            "b": correlations({"cpp_fa": 0.1, "double_asr": 0.2}),
            "c": correlations({"cpp_fa": -0.001, "double_asr": np.nan}),
        }
    ).set_index("metric")
    assert table.loc["cpp_fa", ["a", "b", "c"]].tolist() == [-0.5, 0.1, 0.0]
    assert math.copysign(1.0, table.at["cpp_fa", "c"]) == 1.0  # written "0.00", not "-0.00"
    assert table.at["cpp_fa", "sign_rule"] == "vote: kept"
    assert table.loc["double_asr", ["a", "b"]].tolist() == [0.9, -0.2]
    assert table.at["double_asr", "n_datasets"] == 2
    assert table.at["double_asr", "sign_rule"] == "negate"


def test_average_is_pathbench_mean_of_rounded_cells_with_its_count() -> None:
    rows = example_table().set_index("metric")
    # 0.444, 0.444, 0.454 -> cells 0.44, 0.44, 0.45 -> mean 0.4433 -> 0.44 (PathBench);
    # the mean of the unrounded values would give 0.45.
    assert rows.at["cpp_fa", "Avg"] == 0.44
    assert rows.at["per", "Avg"] == round((0.81 + 0.6 + 0.7) / 3, 2)
    assert rows.at["vsa", "Avg"] == 0.31  # NaN on UASpeech is skipped, not counted as 0
    assert rows["n_datasets"].to_dict() == {
        "cpp_fa": 3,
        "std_pitch_fa": 1,
        "wada_snr": 1,
        "vsa": 1,
        "per": 3,
        "nad_fa_all": 1,
        "spk2age": 1,
    }


def test_a_metric_without_any_value_keeps_an_empty_row() -> None:
    table = build_results_table({"a": correlations({"vsa": np.nan, "cpp_fa": 0.3})})
    vsa = table.set_index("metric").loc["vsa"]
    assert math.isnan(vsa["a"]) and math.isnan(vsa["Avg"])
    assert vsa["n_datasets"] == 0


@pytest.mark.parametrize(
    ("relative", "label"),
    [
        ("uaspeech/pathological/word/balanced", "UASpeech Word MC"),
        ("torgo/pathological/utterances/unbalanced", "TORGO Sentence EX"),
        ("copas/pathological/word/all", "COPAS Word Full"),
        ("neurovoz/pathological/utterances/balanced", "NeuroVoz Sentence MC"),
    ],
)
def test_columns_from_pathbench_directory_layout(relative: str, label: str) -> None:
    path = KALDI / relative
    assert (path / "spk2score").is_file(), f"fixture {path} is missing"
    assert dataset_column("x", {"path": str(path)}).label == label


def test_columns_from_config_keys_or_the_dataset_name() -> None:
    explicit = dataset_column(
        "mine", {"path": "/d", "corpus": "torgo", "task": "sentence", "condition": "balanced"}
    )
    assert (explicit.corpus, explicit.task, explicit.condition) == ("TORGO", "Sentence", "MC")
    assert dataset_column("demo", {"path": "resources/demo/pathological"}).label == "demo"
    assert dataset_column("yt", {"path": "/data/youtube"}).label == "YT Sentence Full"
    with pytest.raises(ValueError, match=r"datasets\.mine\.condition: 'half'"):
        dataset_column("mine", {"path": "/d", "corpus": "TORGO", "condition": "half"})


def test_columns_in_pathbench_order_and_unique() -> None:
    ordered = order_columns(
        [
            DatasetColumn("demo"),
            DatasetColumn("t", "TORGO", "Word", "MC"),
            DatasetColumn("u2", "UASpeech", "Word", "EX"),
            DatasetColumn("u1", "UASpeech", "Word", "MC"),
        ]
    )
    assert [c.dataset for c in ordered] == ["u1", "u2", "t", "demo"]
    with pytest.raises(ValueError, match="'a' and 'b' both map to .*UASpeech Word MC"):
        order_columns(
            [
                DatasetColumn("a", "UASpeech", "Word", "MC"),
                DatasetColumn("b", "UASpeech", "Word", "MC"),
            ]
        )


def test_inconsistent_or_unknown_categories_are_rejected() -> None:
    moved = correlations({"per": 0.5}).assign(category="reference-audio")
    with pytest.raises(ValueError, match="different categories.*per"):
        build_results_table({"A": correlations({"per": 0.5}), "B": moved})
    with pytest.raises(ValueError, match="unknown metric categories"):
        build_results_table({"A": correlations({"wer": 0.5}).assign(category="magic")})


def test_dataset_names_may_not_clash_with_table_columns() -> None:
    with pytest.raises(ValueError, match="Avg"):
        build_results_table({"Avg": correlations({"per": 0.5})})


def test_written_files_are_exact_and_stable(tmp_path: Path) -> None:
    table = example_table()
    csv_path, parquet_path = write_results_table(table, tmp_path)
    assert csv_path.read_text().splitlines() == [
        "metric,row,category,in_pathbench_table,sign_rule,"
        "UASpeech Word MC,COPAS Word MC,TORGO Sentence EX,Avg,n_datasets",
        "cpp_fa,CPP,Reference-Free (Signal),True,vote: kept,0.44,0.45,0.44,0.44,3",
        "std_pitch_fa,Std Pitch,Reference-Free (Signal),True,vote: flipped,,,0.20,0.20,1",
        "wada_snr,WADA SNR,Reference-Free (Signal),False,vote: kept,,0.10,,0.10,1",
        "vsa,VSA,Reference-Free (Speaker),True,vote: flipped,,0.31,,0.31,1",
        "per,PER (SEM),Reference-Text,True,abs,0.81,0.70,0.60,0.70,3",
        "nad_fa_all,NAD,Reference-Audio (Parallel),True,abs,0.71,,,0.71,1",
        "spk2age,spk2age,Lookup,False,vote: flipped,,,0.00,0.00,1",  # 0.001 -> 0.00, not -0.00
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


def test_speaker_ids_with_commas_and_quotes_are_quoted_and_read_back(tmp_path: Path) -> None:
    ids = ["P,01", 'Q"02', "R03"]
    speakers = pd.DataFrame({"speaker_id": ids, "metric": "cpp", "value": [408.7, 1.5, -2.0]})
    (path,) = export_speaker_csvs(speakers, tmp_path)
    assert path.read_text() == 'speaker_id,score\n"P,01",408.7\n"Q""02",1.5\nR03,-2.0\n'
    back = read_predictions_csv(path)
    assert back.to_dict() == {"P,01": 408.7, 'Q"02': 1.5, "R03": -2.0}


def test_speaker_csvs_refuse_metric_names_that_are_not_file_names(tmp_path: Path) -> None:
    speakers = pd.DataFrame({"speaker_id": ["F01"], "metric": ["../cpp"], "value": [1.0]})
    with pytest.raises(ValueError, match=r"\.\./cpp"):
        export_speaker_csvs(speakers, tmp_path)
