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
