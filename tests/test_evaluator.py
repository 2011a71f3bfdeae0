"""The evaluator hierarchy, the registry with its plugin route, and the scoring stage."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pathbench_flow.common.io import read_parquet
from pathbench_flow.common.status import NoScore
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.base import (
    Item,
    LanguageAwareSpeakerEvaluator,
    ReferenceAudioEvaluator,
    ReferenceFreeEvaluator,
    Score,
    guarded,
)
from pathbench_flow.stages.score import (
    ScoringFailed,
    require_a_result,
    score_speakers,
    score_utterances,
)
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.kaldi_builder import build_dataset, write_lines
from pathbench_flow.testing.plugin_install import install_example_plugin, uninstall_example_plugin


@pytest.fixture
def plugin(tmp_path):
    install_example_plugin(tmp_path / "site")
    yield
    uninstall_example_plugin(tmp_path / "site")


@pytest.fixture
def manifest(tmp_path):
    root = build_dataset(tmp_path / "data")
    lines = (root / "text").read_text().splitlines()
    lines[2] = "spk2_u0 boom goes the plugin"
    write_lines(root / "text", lines)
    path = tmp_path / "manifest.parquet"
    validate_dataset(root, path, tmp_path / "validation.json", n_shards=2)
    return path


class Peak(ReferenceFreeEvaluator):
    name = "peak"

    def _score_audio(self, audio, fs):
        if fs != 16000:
            raise AssertionError("evaluators must receive 16 kHz audio")
        return float(np.abs(audio).max())


def test_reference_free_receives_only_audio(tmp_path):
    root = build_dataset(tmp_path)
    score = Peak().evaluate(Item("u", str(root / "wav" / "spk1_u0.wav"), transcription="x"))
    assert score.status == "ok" and score.value == pytest.approx(0.3, abs=1e-3)


def test_reference_audio_evaluator_receives_references():
    seen = {}

    class Count(ReferenceAudioEvaluator):
        name = "count"

        def score(self, utt_id, audio_path, start, end, reference_audios):
            seen["refs"] = list(reference_audios)
            return Score(float(len(reference_audios)))

    refs = (("a.wav", 0.0, -1.0), ("b.wav", 1.0, 2.0))
    assert Count().evaluate(Item("u", "t.wav", reference_audios=refs)).value == 2.0
    assert seen["refs"] == list(refs)


def test_language_aware_speaker_evaluator_gets_language_and_gate(tmp_path):
    root = build_dataset(tmp_path)

    class Lang(LanguageAwareSpeakerEvaluator):
        name = "lang"
        languages = ("en",)

        def _score_audio_list(self, audios, language):
            assert language == "en"
            return float(len(audios))

    items = [Item(f"u{k}", str(root / "wav" / f"spk1_u{k}.wav"), language="en") for k in (0, 1)]
    assert Lang().evaluate_speaker(items).value == 2.0
    dutch = [Item("u", items[0].audio_path, language="nl")]
    assert Lang().evaluate_speaker(dutch).status == "unsupported_language"


def test_guarded_turns_failures_into_statuses():
    assert guarded(lambda: 1.5) == Score(1.5)

    def too_short():
        raise NoScore("too_short", "0.01 s")

    assert guarded(too_short) == Score(None, "too_short", "0.01 s")
    crashed = guarded(lambda: 1 / 0)
    assert crashed.value is None and crashed.status == "error" and "ZeroDivision" in crashed.message
    assert guarded(lambda: math.nan).status == "error"


def test_registry_lists_and_creates_builtins():
    names = registry.names()
    assert {"cpp", "cpps", "wada_snr", "std_pitch", "speech_rate", "f0_range", "vsa"} <= set(names)
    assert names == sorted(names)
    info = registry.info("vsa")
    assert (info.kind, info.level, info.category) == (
        "LanguageAwareSpeakerEvaluator",
        "speaker",
        "reference-free speaker",
    )
    assert registry.info("cpp").pathbench_compatible and registry.info("cpp").direction == 1
    assert registry.create("cpps", implementation="praat").name == "cpps"
    with pytest.raises(KeyError, match="known: "):
        registry.info("no_such_measure")


def test_plugin_registers_through_entry_point(plugin):
    assert "example_words_per_second" in registry.names()
    info = registry.info("example_words_per_second")
    assert info.kind == "ReferenceTxtEvaluator" and info.source.startswith("example_plugin:")


def test_score_utterances_writes_one_row_per_utterance_even_on_errors(plugin, manifest, tmp_path):
    frames = [
        score_utterances(
            manifest, shard, "example_words_per_second", tmp_path / f"s{shard}.parquet"
        )
        for shard in (0, 1)
    ]
    rows = pd.concat(frames)
    assert sorted(rows["utt_id"]) == ["spk1_u0", "spk1_u1", "spk2_u0", "spk2_u1"]
    boom = rows.set_index("utt_id").loc["spk2_u0"]
    assert boom["status"] == "error" and "explodes" in boom["message"] and math.isnan(boom["score"])
    fine = rows.set_index("utt_id").loc["spk1_u0"]
    assert fine["status"] == "ok" and fine["score"] == pytest.approx(3.0)
    stored = read_parquet(tmp_path / "s0.parquet")
    assert list(stored.columns) == [
        "utt_id",
        "speaker_id",
        "metric",
        "evaluator",
        "variant",
        "score",
        "status",
        "message",
    ]


def test_score_utterances_is_byte_identical_on_rerun(plugin, manifest, tmp_path):
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    score_utterances(manifest, 0, "example_words_per_second", first)
    score_utterances(manifest, 0, "example_words_per_second", second)
    assert first.read_bytes() == second.read_bytes()


def test_score_speakers_one_row_per_speaker(manifest, tmp_path):
    frame = score_speakers(manifest, "f0_range", tmp_path / "f0.parquet")
    assert list(frame["speaker_id"]) == ["spk1", "spk2"]
    assert (frame["status"] == "ok").all() and np.allclose(frame["score"], 0.0, atol=5.0)


def test_a_shard_whose_every_utterance_errors_stops_its_job_naming_the_first(
    plugin, manifest, tmp_path
):
    """Errors only: the evaluator is broken, so the job fails rather than write a table of holes,
    and says which utterance failed first and why."""
    root = manifest.parent / "data"
    write_lines(root / "text", [f"{utt} boom" for utt in ("spk1_u0", "spk1_u1")])
    write_lines(root / "utt2spk", ["spk1_u0 spk1", "spk1_u1 spk1"])
    write_lines(root / "wav.scp", ["spk1_u0 wav/spk1_u0.wav", "spk1_u1 wav/spk1_u1.wav"])
    write_lines(root / "spk2score", ["spk1 80"])
    write_lines(root / "spk2gender", ["spk1 f"])
    broken = tmp_path / "broken.parquet"
    validate_dataset(root, broken, tmp_path / "broken.json", n_shards=1)
    output = tmp_path / "scores.parquet"
    with pytest.raises(ScoringFailed) as failed:
        score_utterances(broken, 0, "example_words_per_second", output)
    message = str(failed.value)
    assert message.startswith(f"example_words_per_second: all 2 rows of {output} have status")
    assert "utt_id 'spk1_u0'" in message and "RuntimeError: the example plugin explodes" in message
    assert not output.exists()


def test_one_error_among_successes_and_outcome_statuses_still_write(plugin, manifest, tmp_path):
    """Shard 1 holds the one failing utterance next to a scored one; a shard in a language the
    evaluator does not support has no value at all, which is an outcome, not a failure."""
    mixed = score_utterances(manifest, 1, "example_words_per_second", tmp_path / "mixed.parquet")
    assert sorted(mixed["status"]) == ["error", "ok"] and (tmp_path / "mixed.parquet").is_file()
    root = manifest.parent / "data"
    write_lines(root / "language", ["nl"])
    dutch = tmp_path / "dutch.parquet"
    validate_dataset(root, dutch, tmp_path / "dutch.json", n_shards=1)
    outcome = score_utterances(dutch, 0, "example_words_per_second", tmp_path / "nl.parquet")
    assert (outcome["status"] == "unsupported_language").all()
    assert (tmp_path / "nl.parquet").is_file()


def test_all_rows_failing_is_refused_for_every_scoring_table(tmp_path):
    rows = [{"speaker_id": s, "metric": "vsa", "status": "error", "message": f"E{s}"} for s in "ab"]
    with pytest.raises(
        ScoringFailed, match="all 2 rows of out.parquet.*speaker_id 'a' \\(vsa\\): Ea"
    ):
        require_a_result(rows, "out.parquet", "vsa")
    require_a_result([*rows, {**rows[0], "status": "too_short"}], "out.parquet", "vsa")
    require_a_result([], "out.parquet", "vsa")
