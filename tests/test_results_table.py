"""PathBench's results table (rows, columns, signs, Avg) and the per-metric speaker CSVs."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pathbench_flow.common.io import read_parquet
from pathbench_flow.evaluators import categories, registry
from pathbench_flow.evaluators.metric import FA, RAW, MetricKey
from pathbench_flow.reporting.published_results import (
    COMPARISON_COLUMNS,
    PUBLISHED_DIR,
    PUBLISHED_SOURCE,
    PUBLISHED_TABLE,
    published_source,
    published_vs_measured,
    read_published,
    write_published_vs_measured,
)
from pathbench_flow.reporting.results_table import (
    EXPECTED_SIGNS,
    PATHBENCH_COLUMNS,
    PATHBENCH_ROWS,
    DatasetColumn,
    aligned_r,
    build_results_table,
    dataset_column,
    export_speaker_csvs,
    order_columns,
    results_columns,
    write_pathbench_table,
    write_results_table,
)
from pathbench_flow.stats.correlation import read_predictions_csv
from pathbench_flow.testing import KALDI_METADATA as KALDI

_VARIANTS = [(v, r) for v in (RAW, FA) for r in ("", "control", "all")]

CATEGORY = {
    "cpp_fa": "reference-free signal",
    "cpp": "reference-free signal",
    "praat_speech_rate_fa": "reference-free signal",
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
        "sign",
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
    """PathBench e26aa32's align_signs: r times the sign it expects, so a metric behaving
    against the expectation shows a negative cell."""
    rows = example_table().set_index("metric")
    # per and nad are expected to fall as intelligibility rises: cells are -r.
    assert rows.at["per", "UASpeech Word MC"] == 0.81
    assert rows.at["per", "TORGO Sentence EX"] == -0.6
    assert rows.at["per", "COPAS Word MC"] == 0.7
    assert rows.at["nad_fa_all", "UASpeech Word MC"] == 0.71
    # vsa and std_pitch are expected to rise: a negative r stays negative.
    assert rows.at["vsa", "COPAS Word MC"] == -0.31
    assert rows.at["std_pitch_fa", "TORGO Sentence EX"] == -0.2
    # spk2age has no expected sign: negative in its one column, so flipped.
    assert rows.loc[["per", "nad_fa_all", "vsa", "cpp_fa", "spk2age"], "sign_rule"].tolist() == [
        "expected -1",
        "expected -1",
        "expected +1",
        "expected +1",
        "vote: flipped",
    ]
    assert math.isnan(rows.at["vsa", "UASpeech Word MC"])


def test_vote_is_a_majority_and_known_signs_apply_in_every_column() -> None:
    table = build_results_table(
        {
            "a": correlations(
                {"praat_speech_rate_fa": -0.5, "wada_snr": -0.5, "cpp_fa": 0.3, "double_asr": -0.9}
            ),
            "b": correlations(
                {"praat_speech_rate_fa": 0.1, "wada_snr": 0.2, "cpp_fa": 0.2, "double_asr": 0.2}
            ),
            "c": correlations(
                {
                    "praat_speech_rate_fa": -0.001,
                    "wada_snr": np.nan,
                    "cpp_fa": -0.001,
                    "double_asr": np.nan,
                }
            ),
        }
    ).set_index("metric")
    # Two negative columns against one positive: flipped in all three.
    assert table.loc["praat_speech_rate_fa", ["a", "b", "c"]].tolist() == [0.5, -0.1, 0.0]
    assert table.at["praat_speech_rate_fa", "sign_rule"] == "vote: flipped"
    # A tie keeps the signs.
    assert table.loc["wada_snr", ["a", "b"]].tolist() == [-0.5, 0.2]
    assert table.at["wada_snr", "sign_rule"] == "vote: kept"
    assert table.loc["cpp_fa", ["a", "b", "c"]].tolist() == [0.3, 0.2, 0.0]
    assert math.copysign(1.0, table.at["cpp_fa", "c"]) == 1.0  # written "0.00", not "-0.00"
    assert table.loc["double_asr", ["a", "b"]].tolist() == [0.9, -0.2]
    assert table.at["double_asr", "n_datasets"] == 2
    assert table.at["double_asr", "sign_rule"] == "expected -1"


def test_average_is_pathbench_mean_of_rounded_cells_with_its_count() -> None:
    rows = example_table().set_index("metric")
    # 0.444, 0.444, 0.454 -> cells 0.44, 0.44, 0.45 -> mean 0.4433 -> 0.44 (PathBench);
    # the mean of the unrounded values would give 0.45.
    assert rows.at["cpp_fa", "Avg"] == 0.44
    assert rows.at["per", "Avg"] == round((0.81 - 0.6 + 0.7) / 3, 2)
    assert rows.at["vsa", "Avg"] == -0.31  # NaN on UASpeech is skipped, not counted as 0
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
        "metric,row,category,in_pathbench_table,sign,sign_rule,"
        "UASpeech Word MC,COPAS Word MC,TORGO Sentence EX,Avg,n_datasets",
        "cpp_fa,CPP,Reference-Free (Signal),True,1,expected +1,0.44,0.45,0.44,0.44,3",
        "std_pitch_fa,Std Pitch,Reference-Free (Signal),True,1,expected +1,,,-0.20,-0.20,1",
        "wada_snr,WADA SNR,Reference-Free (Signal),False,1,vote: kept,,0.10,,0.10,1",
        "vsa,VSA,Reference-Free (Speaker),True,1,expected +1,,-0.31,,-0.31,1",
        "per,PER (SEM),Reference-Text,True,-1,expected -1,0.81,0.70,-0.60,0.30,3",
        "nad_fa_all,NAD,Reference-Audio (Parallel),True,-1,expected -1,0.71,,,0.71,1",
        "spk2age,spk2age,Lookup,False,-1,vote: flipped,,,0.00,0.00,1",  # 0.001 -> 0.00
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


# PathBench's results_table.csv: Metric, Category of the rows of its model measures.
PATHBENCH_MODEL_ROWS = {
    "double_asr": ("Double ASR", "Reference-Free (Model)"),
    "artp_double_asr": ("DArtP", "Reference-Free (Model)"),
    "artp_old": ("Confidence", "Reference-Free (Model)"),
    "per": ("PER (SEM)", "Reference-Text"),
    "dper": ("PER (Phone)", "Reference-Text"),
    "artp": ("ArtP", "Reference-Text"),
    "nad_fa_all": ("NAD", "Reference-Audio (Parallel)"),
}


def test_each_pathbench_row_is_in_the_category_its_evaluator_declares() -> None:
    """PathBench's row categories and the registry's agree through the one category list, so
    a model measure is placed the same way whether it is a PathBench row or an extra row."""
    evaluators = {MetricKey(e, v, r).name: e for e in registry.names() for v, r in _VARIANTS}
    for metric, row, category in PATHBENCH_ROWS:
        declared = categories.category(registry.info(evaluators[metric]).category)
        assert declared.table_name == category, (metric, row)
    assert {m: (r, c) for m, r, c in PATHBENCH_ROWS if m in PATHBENCH_MODEL_ROWS} == (
        PATHBENCH_MODEL_ROWS
    )
    assert [c.table_name for c in categories.CATEGORIES] == [
        "Reference-Free (Signal)",
        "Reference-Free (Speaker)",
        "Reference-Free (Model)",
        "Reference-Text",
        "Reference-Audio (Parallel)",
        "External Predictor",
        "Lookup",
    ]


def test_a_model_measure_outside_pathbench_rows_follows_them_in_its_category() -> None:
    kinds = {
        "per": "reference-text",
        "my_model": "reference-free model",
        "artp_old": "reference-free model",
    }
    frame = pd.DataFrame(
        {"metric": list(kinds), "category": list(kinds.values()), "pearson_r": 0.5}
    )
    table = build_results_table({"A": frame})
    assert table[["metric", "row", "category"]].values.tolist() == [
        ["artp_old", "Confidence", "Reference-Free (Model)"],
        ["my_model", "my_model", "Reference-Free (Model)"],
        ["per", "PER (SEM)", "Reference-Text"],
    ]


PATHBENCH_CSV = PUBLISHED_TABLE
"""PathBench's published ``results_table.csv`` (e26aa32; MIT licence, B. M. Halpern), as the
package ships it."""
PATHBENCH_HEADER = (
    "Metric,Category,UASpeech Word MC,UASpeech Word EX,NeuroVoz Sentence MC,"
    "NeuroVoz Sentence EX,EasyCall Word MC,EasyCall Word EX,EasyCall Sentence MC,"
    "EasyCall Sentence EX,COPAS Word MC,COPAS Word EX,COPAS Word Full,COPAS Sentence MC,"
    "COPAS Sentence EX,COPAS Sentence Full,TORGO Word MC,TORGO Word EX,TORGO Sentence MC,"
    "TORGO Sentence EX,MDSC Command MC,MDSC Command EX,YT Sentence Full,Avg\n"
)
PATHBENCH_DIRS = {
    "UASpeech": "uaspeech",
    "NeuroVoz": "neurovoz",
    "EasyCall": "easycall",
    "COPAS": "copas",
    "TORGO": "torgo",
    "MDSC": "mdsc",
}
FOLDERS = {"Word": "word", "Sentence": "utterances", "Command": "command"} | {
    "MC": "balanced",
    "EX": "unbalanced",
    "Full": "all",
}


def pathbench_path(corpus: str, task: str, condition: str) -> str:
    """The directory PathBench keeps a column's dataset in (``datasets/...``)."""
    if corpus == "YT":
        return "/data/pathbench/datasets/youtube"
    return (
        f"/data/pathbench/datasets/{PATHBENCH_DIRS[corpus]}/pathological/{FOLDERS[task]}/"
        + FOLDERS[condition]
    )


def test_every_pathbench_column_is_read_from_its_directory_in_pathbench_order() -> None:
    """PathBench's 21 columns, MDSC Command before YT, from the folders of its datasets/."""
    settings = {
        f"d{i}": {"path": pathbench_path(*triple)}
        for i, triple in enumerate(reversed(PATHBENCH_COLUMNS))
    }
    labels = [c.label for c in results_columns(settings)]
    assert ",".join(["Metric", "Category", *labels, "Avg"]) + "\n" == PATHBENCH_HEADER


def test_explicit_keys_place_a_dataset_and_others_follow_in_config_order() -> None:
    columns = results_columns(
        {
            "zeta": {"path": "/d/zeta"},
            "cmds": {"path": "/d/x", "corpus": "mdsc", "task": "command", "condition": "EX"},
            "yt": {"path": "/d/videos", "corpus": "YouTube"},
            "alpha": {"path": "/d/alpha"},
            "renamed": {"path": "/d/torgo/pathological/word/balanced", "condition": "all"},
            "ua": {"path": "/d/uaspeech/pathological/word/unbalanced"},
        }
    )
    assert [c.label for c in columns] == [
        "UASpeech Word EX",
        "MDSC Command EX",
        "YT Sentence Full",
        "zeta",
        "alpha",
        "TORGO Word Full",  # a key overrides its part of the path; not PathBench's column
    ]
    with pytest.raises(ValueError, match=r"datasets\.mine\.task is set but .* no corpus"):
        dataset_column("mine", {"path": "/d/mine", "task": "command"})


def pathbench_correlations() -> tuple[dict[str, pd.DataFrame], list[DatasetColumn]]:
    """Raw r per PathBench column that PathBench's sign alignment turns into its published
    cells: the cell times the expected sign (the speech rate, open, is positive in most
    columns, so the vote keeps it)."""
    published = pd.read_csv(
        io.BytesIO(PATHBENCH_CSV.read_bytes()), dtype=str, keep_default_na=False
    )
    key = {table_name: c.key for c in categories.CATEGORIES for table_name in [c.table_name]}
    metric_of = {row: metric for metric, row, _ in PATHBENCH_ROWS}
    correlations, columns = {}, []
    for i, triple in enumerate(PATHBENCH_COLUMNS):
        cells = published[" ".join(triple)]
        metrics = published["Metric"].map(metric_of)
        sign = metrics.map(lambda m: EXPECTED_SIGNS.get(m, 1))
        r = cells.map(lambda text: float(text) if text else np.nan) * sign
        correlations[f"d{i}"] = pd.DataFrame(
            {"metric": metrics, "category": published["Category"].map(key), "pearson_r": r}
        )
        columns.append(dataset_column(f"d{i}", {"path": pathbench_path(*triple)}))
    return correlations, columns


def test_pathbench_table_reproduces_pathbench_published_file(tmp_path: Path) -> None:
    """From the correlations behind PathBench's table, the file is PathBench's, byte for byte
    (cells, the empty YT cells of P-ESTOI and NAD, Avg)."""
    correlations, columns = pathbench_correlations()
    path = write_pathbench_table(aligned_r(correlations, columns), tmp_path / "t.csv")
    assert path.read_bytes() == PATHBENCH_CSV.read_bytes()


def test_pathbench_table_of_a_partial_run_keeps_pathbench_header_rows_and_columns(
    tmp_path: Path,
) -> None:
    """Two of the 21 columns, four of the 12 rows and a dataset outside PathBench's columns:
    the header is PathBench's byte for byte and then the demo's own column, every row and
    column is there, cells are empty where the run has nothing, and Avg is over PathBench's
    columns only (not the demo)."""
    aligned = aligned_r(
        {
            "demo": correlations({"cpp_fa": 0.9, "per": -0.9, "wada_snr": 0.5}),
            "mdsc": correlations({"cpp_fa": 0.214, "per": -0.5, "spk2age": 0.3}),
            "yt": correlations({"cpp_fa": -0.505, "per": -0.7, "vsa": np.nan}),
        },
        [
            DatasetColumn("demo"),
            DatasetColumn("mdsc", "MDSC", "Command", "MC"),
            DatasetColumn("yt", "YT", "Sentence", "Full"),
        ],
    )
    text = write_pathbench_table(aligned, tmp_path / "p.csv").read_text()
    lines = text.splitlines(keepends=True)
    assert lines[0] == PATHBENCH_HEADER.replace("\n", ",demo\n")
    published = PATHBENCH_CSV.read_text().splitlines()
    assert [line.split(",")[:2] for line in lines[1:]] == [
        line.split(",")[:2] for line in published[1:]
    ]
    empty = "," * 18
    rows = {line.split(",")[0]: line.rstrip("\n") for line in lines[1:]}
    # Avg: (0.21 - 0.50) / 2 is -0.14500000000000002 in floats, so -0.15 (PathBench's too).
    assert rows["CPP"] == f"CPP,Reference-Free (Signal),{empty}0.21,,-0.50,-0.15,0.90"
    assert rows["PER (SEM)"] == f"PER (SEM),Reference-Text,{empty}0.50,,0.70,0.60,0.90"
    assert rows["VSA"] == f"VSA,Reference-Free (Speaker),{empty},,,,"
    assert rows["NAD"] == f"NAD,Reference-Audio (Parallel),{empty},,,,"
    assert len(rows) == 12 and "WADA SNR" not in rows and "spk2age" not in rows
    assert all(line.count(",") == 24 for line in lines)


def test_datasets_outside_pathbench_columns_get_their_own_columns_after_avg(
    tmp_path: Path,
) -> None:
    """The demo alone, and a user's corpus placed by its own keys beside it: each a column
    after PathBench's Avg with its sign-aligned cells; Avg stays empty (none of PathBench's
    columns), and the layout of PathBench's rows and columns is kept."""
    aligned = aligned_r(
        {
            "demo": correlations({"cpp_fa": 0.904, "per": 0.3, "wada_snr": 0.5}),
            "mine": correlations({"cpp_fa": -0.111, "vsa": 0.25}),
        },
        [DatasetColumn("demo"), DatasetColumn("mine", "Mine", "Word", "MC")],
    )
    table = pd.read_csv(
        write_pathbench_table(aligned, tmp_path / "p.csv"), dtype=str, keep_default_na=False
    ).set_index("Metric")
    assert list(table.columns[-3:]) == ["Avg", "demo", "Mine Word MC"]
    assert list(table.index) == [name for _, name, _ in PATHBENCH_ROWS]
    assert table.loc["CPP", ["Avg", "demo", "Mine Word MC"]].tolist() == ["", "0.90", "-0.11"]
    assert table.at["PER (SEM)", "demo"] == "-0.30"  # PathBench expects per to fall
    assert table.at["VSA", "Mine Word MC"] == "0.25" and table.at["VSA", "demo"] == ""
    own = table[["demo", "Mine Word MC"]]
    assert (own != "").sum().sum() == 4


def test_the_package_ships_pathbench_published_table_with_its_source() -> None:
    """The packaged file is the one its sidecar cites (repository, commit, path, paper) and
    pyproject's package-data puts both into the wheel."""
    source = published_source()
    assert source["source"]["repository"] == "https://github.com/karkirowle/pathbench"
    assert (source["source"]["commit"], source["source"]["path"]) == (
        "e26aa32",
        "results_table.csv",
    )
    assert "Halpern" in source["paper"]["citation"] and "2026" in source["paper"]["citation"]
    assert source["file"] == PUBLISHED_TABLE.name
    assert hashlib.sha256(PUBLISHED_TABLE.read_bytes()).hexdigest() == source["sha256"]
    assert PUBLISHED_TABLE.read_text().startswith(PATHBENCH_HEADER)
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["pathbench_flow.reporting"]
    shipped = {
        f.name
        for f in PUBLISHED_DIR.iterdir()
        if any(fnmatch(f"published/{f.name}", p) for p in patterns)
    }
    assert shipped == {PUBLISHED_TABLE.name, PUBLISHED_SOURCE.name}


def test_read_published_gives_every_cell_in_pathbench_order() -> None:
    cells = read_published()
    assert list(cells.columns) == list(COMPARISON_COLUMNS[:5])
    rows = list(csv.reader(io.StringIO(PUBLISHED_TABLE.read_text())))
    header, body = rows[0], rows[1:]
    expected = [
        (metric, line[0], line[1], label, text)
        for (metric, _, _), line in zip(PATHBENCH_ROWS, body, strict=True)
        for label, text in zip(header[2:-1], line[2:-1], strict=True)
    ]
    assert len(cells) == len(expected) == 12 * 21
    got = [
        (m, r, c, col, "" if np.isnan(v) else f"{v:.2f}")
        for m, r, c, col, v in cells.itertuples(index=False)
    ]
    assert got == expected
    assert cells["published_r"].isna().sum() == 2  # P-ESTOI and NAD on YouTube


def test_an_edited_copy_of_the_published_table_is_refused(tmp_path: Path) -> None:
    edited = tmp_path / "table.csv"
    edited.write_bytes(PUBLISHED_TABLE.read_bytes().replace(b",0.98,0.98,", b",0.99,0.98,", 1))
    with pytest.raises(ValueError, match=r"SHA-256 [0-9a-f]{64} is not that of PathBench's"):
        read_published(edited)
    # A file its sidecar vouches for but laid out otherwise (two rows swapped) is refused too.
    lines = PUBLISHED_TABLE.read_text().splitlines(keepends=True)
    edited.write_text("".join([lines[0], lines[2], lines[1], *lines[3:]]))
    sidecar = tmp_path / "table.json"
    digest = hashlib.sha256(edited.read_bytes()).hexdigest()
    sidecar.write_text(json.dumps(published_source() | {"sha256": digest}))
    with pytest.raises(ValueError, match="rows or columns differ from PathBench's table"):
        read_published(edited, sidecar)


def test_published_vs_measured_of_pathbench_own_correlations_agree_everywhere() -> None:
    """From the r's behind the published table, every cell is measured as published."""
    comparison = published_vs_measured(aligned_r(*pathbench_correlations()))
    assert list(comparison.columns) == list(COMPARISON_COLUMNS)
    assert len(comparison) == 12 * 21
    published = comparison.dropna(subset=["published_r"])
    assert (published["measured_r"] == published["published_r"]).all()
    assert (published["difference"] == 0).all() and len(published) == 12 * 21 - 2
    assert comparison["measured_r"].isna().sum() == 2


def test_published_vs_measured_of_a_partial_run(tmp_path: Path) -> None:
    """Only PathBench's rows the run has, in PathBench's columns the run has (not the demo,
    not wada_snr), in PathBench's order; measured is the sign-aligned r rounded to two
    decimals (per's -0.8449 is 0.84, a tiny negative r is 0.00), empty where the run has no r."""
    aligned = aligned_r(
        {
            "demo": correlations({"cpp_fa": 0.9, "per": -0.9}),
            "ua": correlations({"cpp_fa": -0.2549, "per": -0.8449, "wada_snr": 0.3, "vsa": np.nan}),
            "torgo": correlations({"cpp_fa": -0.004, "per": 0.6}),
        },
        [
            DatasetColumn("demo"),
            DatasetColumn("ua", "UASpeech", "Word", "MC"),
            DatasetColumn("torgo", "TORGO", "Sentence", "EX"),
        ],
    )
    path = write_published_vs_measured(aligned, tmp_path / "published.csv")
    no_r = (
        "this run has no r for this metric on dataset '{0}' (the reason is in "
        "results/{0}/correlations.csv)"
    )
    lines = path.read_text().splitlines()
    assert lines[:7] == [
        "metric,row,category,column,published_r,measured_r,difference,reason",
        "cpp_fa,CPP,Reference-Free (Signal),UASpeech Word MC,-0.26,-0.25,0.01,",
        "cpp_fa,CPP,Reference-Free (Signal),TORGO Sentence EX,-0.31,0.00,0.31,",
        "vsa,VSA,Reference-Free (Speaker),UASpeech Word MC,0.02,,," + no_r.format("ua"),
        "vsa,VSA,Reference-Free (Speaker),TORGO Sentence EX,-0.38,,," + no_r.format("torgo"),
        "per,PER (SEM),Reference-Text,UASpeech Word MC,0.84,0.84,0.00,",
        "per,PER (SEM),Reference-Text,TORGO Sentence EX,0.91,-0.60,-1.51,",
    ]
    # The demo, outside PathBench's columns, is the last line, saying why it has no value.
    assert lines[7].startswith(",,,demo,,,,\"dataset 'demo' is in none of the 21 columns")
    assert len(lines) == 8
    demo_only = aligned_r({"demo": correlations({"cpp_fa": 0.9})})
    written = pd.read_csv(write_published_vs_measured(demo_only, tmp_path / "demo.csv"))
    assert len(written) == 1 and written.at[0, "column"] == "demo"
    assert written[["published_r", "measured_r", "difference"]].isna().all(axis=None)
    assert "'demo' is in none of the 21 columns PathBench published" in written.at[0, "reason"]
