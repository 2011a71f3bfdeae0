"""Progress lines of long jobs: when they are written, what they say, and where they go.

Time is a fake clock the tests move by hand, so no test sleeps.
"""

from __future__ import annotations

import io
import re
import sys

import pytest

from pathbench_flow.common.io import read_parquet
from pathbench_flow.runtime.progress import Progress, duration, progress
from pathbench_flow.stages.score import score_utterances
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.kaldi_builder import build_dataset


class Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_a_line_at_most_every_interval_and_one_final_line():
    clock, out = Clock(), io.StringIO()
    seen = []
    for item in progress(list(range(8)), "job x", every_s=12, clock=clock, stream=out):
        seen.append(item)
        clock.now += 5  # each item takes 5 s
    assert seen == list(range(8))
    # Item k is done at 5k s: a line once 12 s have passed since the last one (at 15 s and
    # 30 s; not at 40 s, which only the final line reports).
    assert lines(out) == [
        "job x: 3/8 utterances, 5.0 s/utt, eta 25 s",
        "job x: 6/8 utterances, 5.0 s/utt, eta 10 s",
        "job x: 8/8 utterances in 40 s, 5.0 s/utt, done",
    ]


def test_the_rate_and_remaining_time_follow_the_items_done():
    clock, out = Clock(), io.StringIO()
    meter = Progress("score_utterances cpps demo/0003", 250, clock=clock, stream=out, every_s=30)
    clock.now += 29.0
    meter.advance(119)
    assert lines(out) == []  # 29 s: not yet
    clock.now += 1.0
    meter.advance()
    assert lines(out) == [
        "score_utterances cpps demo/0003: 120/250 utterances, 4.0 utt/s, eta 32 s"
    ]
    assert meter.line(clock.now + 3600) == (
        "score_utterances cpps demo/0003: 120/250 utterances, 30.2 s/utt, eta 66 min"
    )


def test_the_final_line_is_written_once_and_names_other_units():
    clock, out = Clock(), io.StringIO()
    meter = Progress("score_speakers vsa", 3, "speakers", clock=clock, stream=out)
    for _ in meter.iterate(["a", "b", "c"]):
        clock.now += 200
    meter.finish()
    meter.finish()
    assert lines(out) == [
        "score_speakers vsa: 1/3 speakers, 200.0 s/spk, eta 7 min",
        "score_speakers vsa: 2/3 speakers, 200.0 s/spk, eta 3 min",
        "score_speakers vsa: 3/3 speakers in 10 min, 200.0 s/spk, done",
    ]


def test_an_empty_job_writes_only_the_final_line():
    clock, out = Clock(), io.StringIO()
    assert list(progress([], "fa_trim t", clock=clock, stream=out)) == []
    assert lines(out) == ["fa_trim t: 0/0 utterances in 0 s, done"]


def test_an_abandoned_loop_writes_no_final_line():
    clock, out = Clock(), io.StringIO()
    for _ in progress([1, 2, 3], "job", clock=clock, stream=out):
        break
    assert lines(out) == []


def test_durations_read_as_seconds_minutes_or_hours():
    assert [duration(s) for s in (0, 32.4, 89, 90, 600, 5399, 5400, 9000)] == [
        "0 s",
        "32 s",
        "89 s",
        "2 min",
        "10 min",
        "90 min",
        "1.5 h",
        "2.5 h",
    ]


def test_lines_are_flushed_to_the_stderr_of_the_moment(tmp_path, monkeypatch):
    """Scripts point stderr at the job's log after importing; a line must be readable in the
    file before the job ends (``tail -f``), so it is written there and flushed at once."""
    clock = Clock()
    meter = Progress("job", 2, clock=clock, every_s=5)
    log = tmp_path / "job.log"
    with open(log, "w") as stream:
        monkeypatch.setattr(sys, "stderr", stream)
        clock.now += 6
        meter.advance()
        assert log.read_text() == "job: 1/2 utterances, 6.0 s/utt, eta 6 s\n"


def test_the_counted_view_passes_indexing_through_and_counts_iteration():
    clock, out = Clock(), io.StringIO()
    meter = Progress("job", 3, clock=clock, stream=out, every_s=0)
    view = meter.over(["a", "b", "c"])
    assert (len(view), view[1], list(view[1:])) == (3, "b", ["b", "c"])
    assert meter.done == 0
    assert list(view) == ["a", "b", "c"]
    assert meter.done == 3


@pytest.fixture
def manifest(tmp_path):
    root = build_dataset(tmp_path / "data")
    path = tmp_path / "manifest.parquet"
    validate_dataset(root, path, tmp_path / "validation.json", n_shards=1)
    return path


def test_a_scoring_job_logs_its_final_count(manifest, tmp_path, capsys):
    output = tmp_path / "scores.parquet"
    score_utterances(manifest, 0, "wada_snr", output)
    n = len(read_parquet(output))
    assert n > 0
    final = capsys.readouterr().err.splitlines()[-1]
    assert re.fullmatch(
        rf"score_utterances {re.escape(str(output))}: {n}/{n} utterances in \d+ s, "
        r"[\d.]+ (utt/s|s/utt), done",
        final,
    )
