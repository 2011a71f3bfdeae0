"""``pathbench-flow correlate``: PathBench's external-predictor check from the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

import pathbench_flow
from pathbench_flow.cli import main
from pathbench_flow.reporting.results_table import export_speaker_csvs
from pathbench_flow.stats.correlation import correlate_predictions, read_spk2score
from pathbench_flow.testing import KALDI_METADATA as KALDI

RATED = {"F02": 29.0, "F03": 6.0, "M01": 15.0, "M04": 2.0, "M05": 58.0, "M07": 28.0}
PREDICTED = {"F02": 3.1, "F03": 0.4, "M01": 2.2, "M04": 0.9, "M05": 5.0, "M07": 2.4}


@pytest.fixture
def spk2score(tmp_path: Path) -> Path:
    path = tmp_path / "spk2score"
    lines = [f"{speaker} {score:g}" for speaker, score in RATED.items()] + ["FC01 N/A"]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_predictions(path: Path, scores: dict[str, float]) -> Path:
    path.write_text("speaker_id,score\n" + "".join(f"{s},{v}\n" for s, v in scores.items()))
    return path


def correlate(predictions: Path, truth: Path, *extra: str) -> int:
    return main(
        ["correlate", "--predictions", str(predictions), "--ground-truth", str(truth), *extra]
    )


def test_matching_predictions_print_the_correlation(
    tmp_path: Path, spk2score: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    predictions = write_predictions(tmp_path / "preds.csv", PREDICTED)
    assert correlate(predictions, spk2score) == 0
    out = capsys.readouterr().out
    speakers = list(RATED)
    expected = stats.pearsonr([PREDICTED[s] for s in speakers], [RATED[s] for s in speakers])
    assert "speakers (n):   6\n" in out
    assert f"Pearson r:      {expected.statistic:.4f}  (p = {expected.pvalue:.3g})\n" in out
    assert "95% CI of r:" in out
    assert "Spearman rho:" in out


def test_negative_direction_reports_aligned_r(
    tmp_path: Path, spk2score: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    errors = {s: -v for s, v in PREDICTED.items()}
    predictions = write_predictions(tmp_path / "preds.csv", errors)
    assert correlate(predictions, spk2score, "--direction", "-1") == 0
    out = capsys.readouterr().out
    assert "Pearson r:      -0." in out
    assert "aligned r:      0." in out


def test_severity_ratings_give_the_intelligibility_correlation(
    tmp_path: Path, spk2score: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A clinician's severity file (the same speakers on a reversed 0-60 scale) read with
    ``--score-scale severity`` prints the r of the intelligibility file, as the workflow's
    ``score_scale`` does; read as intelligibility it would print the opposite sign."""
    severity = tmp_path / "severity_spk2score"
    severity.write_text(
        "".join(f"{speaker} {60 - score:g}\n" for speaker, score in RATED.items()) + "FC01 N/A\n"
    )
    predictions = write_predictions(tmp_path / "preds.csv", PREDICTED)
    assert correlate(predictions, spk2score) == 0
    intelligibility = capsys.readouterr().out
    assert correlate(predictions, severity, "--score-scale", "severity") == 0
    turned = capsys.readouterr().out
    assert correlate(predictions, severity) == 0
    unturned = capsys.readouterr().out

    def statistic(out: str, label: str) -> str:
        return next(line for line in out.splitlines() if line.startswith(label))[16:]

    for label in ("Pearson r:", "95% CI of r:", "aligned r:"):
        assert statistic(turned, label) == statistic(intelligibility, label), label
    assert "correlated as -spk2score" in turned
    assert float(statistic(unturned, "aligned r:").split()[0]) < 0


def test_a_missing_speaker_is_an_error_that_names_it(
    tmp_path: Path, spk2score: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    partial = {s: v for s, v in PREDICTED.items() if s != "M04"}
    assert correlate(write_predictions(tmp_path / "preds.csv", partial), spk2score) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "missing from the predictions: M04" in captured.err


def test_a_speaker_without_rating_is_an_error(
    tmp_path: Path, spk2score: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = {**PREDICTED, "FC01": 4.0, "X99": 1.0}
    assert correlate(write_predictions(tmp_path / "preds.csv", extra), spk2score) == 1
    assert "not rated in the ground truth (absent or N/A): FC01, X99" in capsys.readouterr().err


def test_unreadable_input_is_reported_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "spk2score"
    broken.write_text("F02 29\nF03 six\n")
    predictions = write_predictions(tmp_path / "preds.csv", PREDICTED)
    assert correlate(predictions, broken) == 1
    assert f"error: {broken}:2: score 'six'" in capsys.readouterr().err
    assert correlate(tmp_path / "absent.csv", broken) == 1
    assert "absent.csv" in capsys.readouterr().err


def test_a_command_is_required() -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2


def test_exported_speaker_csv_reproduces_the_benchmark_r(
    tmp_path: Path, spk2score: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    speakers = pd.DataFrame(
        {
            "speaker_id": list(PREDICTED),
            "metric": "cpp",
            "value": [v / 7 for v in PREDICTED.values()],
        }
    )
    (exported,) = export_speaker_csvs(speakers, tmp_path / "export")
    assert correlate(exported, spk2score) == 0
    expected = correlate_predictions(
        speakers.set_index("speaker_id")["value"], read_spk2score(spk2score)
    )
    assert f"Pearson r:      {expected.pearson_r:.4f}" in capsys.readouterr().out


def test_module_runs_as_a_script(tmp_path: Path, spk2score: Path) -> None:
    predictions = write_predictions(tmp_path / "preds.csv", PREDICTED)
    # The child must import this source tree even when the package is not installed.
    search_path = [str(Path(pathbench_flow.__file__).resolve().parents[1])]
    if os.environ.get("PYTHONPATH"):
        search_path.append(os.environ["PYTHONPATH"])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(search_path)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pathbench_flow.cli",
            "correlate",
            "--predictions",
            str(predictions),
            "--ground-truth",
            str(spk2score),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Pearson r:" in done.stdout


def test_speaker_ids_with_comma_and_quote_round_trip_through_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = {"P,01": 29.0, 'Q"02': 6.0, "R03": 15.0, "S,04": 58.0}
    truth = tmp_path / "spk2score"
    truth.write_text("".join(f"{s} {v:g}\n" for s, v in ids.items()))
    speakers = pd.DataFrame(
        {"speaker_id": list(ids), "metric": "cpp", "value": [3.1, 0.4, 2.2, 5.0]}
    )
    (exported,) = export_speaker_csvs(speakers, tmp_path / "export")
    assert correlate(exported, truth) == 0
    expected = stats.pearsonr([3.1, 0.4, 2.2, 5.0], list(ids.values()))
    out = capsys.readouterr().out
    assert "speakers (n):   4\n" in out
    assert f"Pearson r:      {expected.statistic:.4f}" in out


DATA = Path(__file__).parent / "data"
EXAMPLE = DATA / "pathbench_example_results"
"""PathBench's example predictor files (``dummy_scores.csv``, one per dataset; README there)."""


def benchmark(results: Path, datasets: Path, evaluator: str = "dummy_scores") -> int:
    return main(
        [
            "benchmark",
            "--results-dir",
            str(results),
            "--datasets-root",
            str(datasets),
            "--evaluator",
            evaluator,
        ]
    )


def test_benchmark_prints_pathbench_table_for_pathbench_example(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """PathBench's example files against the published Kaldi metadata: the table PathBench's
    own script printed on the same files, line for line after its first (its git commit,
    here our version). YouTube, whose spk2score the metadata lacks, is skipped with a warning."""
    assert benchmark(EXAMPLE, KALDI) == 0
    captured = capsys.readouterr()
    first, *table = captured.out.splitlines(keepends=True)
    assert first == f"pathbench-flow {pathbench_flow.__version__}\n"
    expected = (DATA / "pathbench_evaluate_from_csv_output.txt").read_text()
    assert "".join(table) == expected.split("\n", 1)[1]
    assert "13  torgo/pathological/utterances/balanced            8      0.78\n" in table
    youtube = f"no spk2score at {KALDI / 'youtube' / 'spk2score'}; skipping"
    assert captured.err == f"warning: {youtube} {EXAMPLE / 'youtube' / 'dummy_scores.csv'}\n"


def test_benchmark_r_is_correlate_r(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One dataset: the r of `correlate` on the same files, no Mean line below one row."""
    folder = "torgo/pathological/utterances/balanced"
    results = tmp_path / "results"
    (results / folder).mkdir(parents=True)
    (results / folder / "mine.csv").write_bytes(
        (EXAMPLE / folder / "dummy_scores.csv").read_bytes()
    )
    assert correlate(results / folder / "mine.csv", KALDI / folder / "spk2score") == 0
    assert "Pearson r:      0.7826" in capsys.readouterr().out
    assert benchmark(results, KALDI, "mine") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:3] == ["", "Evaluator: mine"]
    assert [line.split() for line in lines[3:]] == [
        ["#", "Dataset", "N", "PCC"],
        ["-" * len(lines[3])],
        ["1", folder, "8", "0.78"],
    ]


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def spk2score_text(scores: dict[str, float]) -> str:
    return "".join(f"{speaker} {score:g}\n" for speaker, score in scores.items())


def predictions_text(scores: dict[str, float]) -> str:
    return "speaker_id,score\n" + "".join(f"{s},{v}\n" for s, v in scores.items())


def test_benchmark_lists_every_bad_dataset_and_prints_no_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A speaker mismatch in one dataset and an unreadable CSV in another are both named
    (PathBench stops at the first); a good third dataset does not make a table appear."""
    truth = spk2score_text(RATED) + "FC01 N/A\n"
    datasets = write_tree(tmp_path / "datasets", {f"{d}/spk2score": truth for d in "abc"})
    partial = {s: v for s, v in PREDICTED.items() if s != "M04"}
    results = write_tree(
        tmp_path / "results",
        {
            "a/p.csv": predictions_text(PREDICTED),
            "b/p.csv": predictions_text(partial),
            "c/p.csv": "speaker,score\nF02,1\n",
        },
    )
    assert benchmark(results, datasets, "p") == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    errors = captured.err.splitlines()
    assert (
        errors[0]
        == f"error: speakers of {results / 'b/p.csv'} and {datasets / 'b/spk2score'} differ:"
    )
    assert errors[1] == "  1 rated speaker(s) missing from the predictions: M04"
    assert errors[2].startswith(f"error: {results / 'c/p.csv'}: header must be 'speaker_id,score'")
    assert len(errors) == 3


def test_benchmark_orders_and_labels_as_pathbench(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Paths sort as text ('x-y' before 'x/y'), a CSV in the results directory itself is the
    dataset at the datasets root, labelled with the directory's name; the # column widens to
    the number of rows; Mean is the mean of the unrounded r's."""
    speakers = list(RATED)
    predictors = {
        label: {s: PREDICTED[s] + k * (j % 3) for j, s in enumerate(speakers)}
        for k, label in enumerate(["x/y", "x-y", "run_7", *(f"z{i}" for i in range(8))])
    }
    truth = spk2score_text(RATED)
    datasets = write_tree(
        tmp_path / "datasets",
        {"spk2score": truth} | {f"{label}/spk2score": truth for label in predictors},
    )
    results = tmp_path / "run_7"
    write_tree(
        results,
        {
            ("p.csv" if label == "run_7" else f"{label}/p.csv"): predictions_text(scores)
            for label, scores in predictors.items()
        },
    )
    assert benchmark(results, datasets, "p") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3] == " #  Dataset       N       PCC"
    assert lines[4] == lines[-2] == "-" * len(lines[3])
    rows = [line.split() for line in lines[5:-2]]
    order = ["run_7", "x-y", "x/y", *(f"z{i}" for i in range(8))]
    assert [row[:3] for row in rows] == [[str(i), label, "6"] for i, label in enumerate(order, 1)]
    r = {
        label: stats.pearsonr([scores[s] for s in speakers], [RATED[s] for s in speakers])
        for label, scores in predictors.items()
    }
    assert [row[3] for row in rows] == [f"{r[label].statistic:.2f}" for label in order]
    mean = sum(r[label].statistic for label in order) / len(order)
    assert lines[-1].split() == ["Mean", f"{mean:.2f}"]


def test_benchmark_without_any_dataset_to_evaluate_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_tree(tmp_path / "results", {"a/p.csv": predictions_text(PREDICTED)})
    datasets = write_tree(tmp_path / "datasets", {"b/spk2score": spk2score_text(RATED)})
    assert benchmark(results, datasets, "q") == 1
    assert f"error: no file named 'q.csv' under {results}" in capsys.readouterr().err
    assert benchmark(results, datasets, "p") == 1
    err = capsys.readouterr().err
    assert f"warning: no spk2score at {datasets / 'a' / 'spk2score'}; skipping" in err
    assert f"error: none of the 1 'p.csv' files under {results} has a spk2score" in err
    assert benchmark(tmp_path / "absent", datasets, "p") == 1
    assert f"error: --results-dir {tmp_path / 'absent'}: no such directory" in (
        capsys.readouterr().err
    )


def test_benchmark_constant_prediction_has_no_r_and_no_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dataset without r shows nan, as in PathBench, and so does the Mean; a warning says why."""
    truth = spk2score_text(RATED)
    datasets = write_tree(tmp_path / "datasets", {f"{d}/spk2score": truth for d in "ab"})
    constant = dict.fromkeys(RATED, 1.0)
    results = write_tree(
        tmp_path / "results",
        {"a/p.csv": predictions_text(PREDICTED), "b/p.csv": predictions_text(constant)},
    )
    assert benchmark(results, datasets, "p") == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[-3].split() == ["2", "b", "6", "nan"]
    assert lines[-1].split() == ["Mean", "nan"]
    assert "warning: b: no correlation (the prediction is constant" in captured.err
