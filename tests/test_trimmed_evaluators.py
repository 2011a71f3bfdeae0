"""Trimming as a decorator: the fa_trim stage, stored boundaries, and trimmed variants."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio, load_shared
from pathbench_flow.common.io import read_parquet
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.base import Item, ReferenceTxtEvaluator
from pathbench_flow.measures import nad
from pathbench_flow.measures.cepstral import cpp
from pathbench_flow.stages.score import score_utterances
from pathbench_flow.stages.trim import fa_trim
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.kaldi_builder import build_dataset, write_kaldi, write_lines
from pathbench_flow.testing.speech_fixtures import (
    SENTENCES,
    pad_in_noise,
    require_espeak,
    speak,
    spoken_sentences,
)
from pathbench_flow.trimming.forced_alignment import FATrimmer, TrimRecord, TrimResult
from pathbench_flow.trimming.stored import StoredTrimmer


@pytest.fixture(scope="module")
def padded_dataset(tmp_path_factory):
    """Three espeak-ng sentences padded with noise, as a one-speaker Kaldi dataset."""
    require_espeak()
    root = tmp_path_factory.mktemp("padded")
    (root / "wav").mkdir()
    rng = np.random.default_rng(3)
    truth = {}
    wav, text, utt2spk = [], [], []
    for k, speech in enumerate(spoken_sentences()[:3]):
        padded = pad_in_noise(speech, rng, exponent=1.0)
        utt = f"s1_u{k}"
        sf.write(root / "wav" / f"{utt}.wav", padded.audio, SAMPLE_RATE, subtype="PCM_16")
        truth[utt] = padded
        wav.append(f"{utt} wav/{utt}.wav")
        text.append(f"{utt} {SENTENCES[k]}")
        utt2spk.append(f"{utt} s1")
    write_kaldi(root, wav, text, utt2spk, {"s1": ("m", "90")})
    manifest = root / "manifest.parquet"
    validate_dataset(root, manifest, root / "validation.json", n_shards=1)
    trim = root / "trim.parquet"
    fa_trim(manifest, 0, trim, {"backend": "auto"})
    return manifest, trim, truth


def test_fa_trim_stage_stores_boundaries_near_the_truth(padded_dataset):
    _manifest, trim, truth = padded_dataset
    table = read_parquet(trim).set_index("utt_id")
    assert list(table["status"]) == ["aligned"] * 3
    for utt, padded in truth.items():
        assert table.loc[utt, "trim_start_s"] == pytest.approx(padded.start_s - 0.05, abs=0.06)
        assert table.loc[utt, "trim_end_s"] == pytest.approx(padded.end_s + 0.05, abs=0.06)
        assert table.loc[utt, "n_words_aligned"] == len(SENTENCES[int(utt[-1])].split())


def test_trimmed_cpp_equals_cpp_of_the_cut_speech(padded_dataset):
    manifest, trim, _truth = padded_dataset
    trimmer = StoredTrimmer.from_files([manifest], [trim])
    row = load_manifest(manifest).iloc[0]
    bounds = read_parquet(trim).iloc[0]
    raw_audio = load_audio(row.audio_path)
    cut = raw_audio[
        round(bounds.trim_start_s * SAMPLE_RATE) : round(bounds.trim_end_s * SAMPLE_RATE)
    ]
    evaluator = registry.create("cpp")
    item = Item(row.utt_id, row.audio_path, transcription=row.text, language="en")
    trimmed = evaluator.trimmed(trimmer).evaluate(item).value
    raw = evaluator.evaluate(item).value
    assert trimmed == pytest.approx(cpp(cut, SAMPLE_RATE), rel=1e-12)
    assert abs(trimmed - raw) > 1e-3 * abs(raw)


class VowelRate(ReferenceTxtEvaluator):
    """A new reference-text measure with an fa variant and no wrapper code: vowel letters of
    the transcription (a crude syllable count) per second of audio."""

    name = "vowel_rate"
    trimmable = True

    def _score_audio_text(self, audio: np.ndarray, transcription: str, language: str) -> float:
        return sum(letter in "aeiou" for letter in transcription.lower()) * SAMPLE_RATE / len(audio)


def test_a_new_reference_text_measure_gets_its_fa_variant_from_its_kind(padded_dataset):
    """Its fa value is the rate over the stored trim; where the trim failed (the fa_trim
    table records ``failed_fallback`` with the whole utterance) it is the raw value."""
    manifest, trim, _truth = padded_dataset
    row = load_manifest(manifest).iloc[0]
    item = Item(row.utt_id, row.audio_path, transcription=row.text, language="en")
    evaluator = VowelRate()
    raw = evaluator.evaluate(item)
    trimmer = StoredTrimmer.from_files([manifest], [trim])
    bounds = trimmer.record(row.audio_path, 0.0, -1.0)
    trimmed = evaluator.trimmed(trimmer).evaluate(item)
    seconds = len(load_audio(row.audio_path)) / SAMPLE_RATE
    speech = bounds.trim_end_s - bounds.trim_start_s
    assert trimmed.value == pytest.approx(raw.value * seconds / speech, rel=1e-3)
    assert trimmed.value > 1.2 * raw.value

    table = read_parquet(trim)
    failed = table["utt_id"] == row.utt_id
    table.loc[failed, ["status", "trim_start_s", "trim_end_s"]] = ["failed_fallback", 0.0, 60.0]
    fallback = StoredTrimmer([load_manifest(manifest)], [table])
    assert fallback.record(row.audio_path, 0.0, -1.0).status == "failed_fallback"
    assert evaluator.trimmed(fallback).evaluate(item) == raw


def test_score_utterances_writes_raw_and_fa_rows(padded_dataset, tmp_path):
    manifest, trim, _truth = padded_dataset
    frame = score_utterances(
        manifest,
        0,
        "speech_rate",
        tmp_path / "s.parquet",
        variants=("raw", "fa"),
        trim_paths=[trim],
    )
    assert sorted(frame["metric"].unique()) == ["speech_rate", "speech_rate_fa"]
    assert len(frame) == 6 and (frame["status"] == "ok").all()
    rates = frame.pivot(index="utt_id", columns="variant", values="score")
    assert (rates["fa"] > rates["raw"]).all()


class FakeTrims:
    """A trimmer whose outcome per file is set by the test: a real cut or a fallback."""

    def __init__(self, failing: set[str]) -> None:
        self.failing = failing
        self.calls: list[str] = []

    def trim(self, audio_path, transcription, language, start_time, end_time) -> TrimResult:
        self.calls.append(audio_path)
        audio = load_audio(audio_path, start_time, end_time)
        if audio_path in self.failing:
            return TrimResult(
                audio,
                SAMPLE_RATE,
                TrimRecord("energy", "failed_fallback", 0.0, len(audio) / SAMPLE_RATE),
            )
        return TrimResult(
            audio[1600:-1600],
            SAMPLE_RATE,
            TrimRecord("energy", "energy", 0.1, len(audio) / SAMPLE_RATE - 0.1),
        )


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    """A test sentence and three references (the same sentence at other noise levels)."""
    require_espeak()
    root = tmp_path_factory.mktemp("group")
    speech = spoken_sentences()[0]
    rng = np.random.default_rng(5)
    paths = []
    for k in range(4):
        padded = pad_in_noise(speech, rng, snr_db=25.0 - 3 * k)
        path = root / f"u{k}.wav"
        sf.write(path, padded.audio, SAMPLE_RATE, subtype="PCM_16")
        paths.append(str(path))
    return paths


def _nad_of(paths, trimmed: bool) -> float:
    def features(path):
        audio = load_audio(path)
        return nad.nad_features(audio[1600:-1600] if trimmed else audio)

    return nad.nad(features(paths[0]), [features(p) for p in paths[1:]])


def test_nad_fa_falls_back_for_the_whole_group(group):
    test, *refs = group
    references = tuple((p, 0.0, -1.0) for p in refs)
    item = dict(
        utt_id="t",
        audio_path=test,
        start=0.0,
        end=-1.0,
        transcription=SENTENCES[0],
        language="en",
        reference_audios=references,
    )
    nad_fa = registry.create("nad", features="mfcc").trimmed
    good = nad_fa(FakeTrims(set())).evaluate(Item(**item))
    assert good.status == "ok" and good.value == pytest.approx(_nad_of(group, trimmed=True))
    fallback = nad_fa(FakeTrims({refs[1]})).evaluate(Item(**item))
    assert fallback.value == pytest.approx(_nad_of(group, trimmed=False))
    assert "group fallback" in fallback.message and "u2" in fallback.message
    assert fallback.value != pytest.approx(good.value)


def test_p_estoi_fa_drops_references_whose_trim_failed(group):
    test, *refs = group
    references = tuple((p, 0.0, -1.0) for p in refs)
    item = Item("t", test, transcription=SENTENCES[0], language="en", reference_audios=references)
    p_estoi_fa = registry.create("p_estoi").trimmed
    full = p_estoi_fa(FakeTrims(set())).evaluate(item)
    dropped = p_estoi_fa(FakeTrims({refs[0]})).evaluate(item)
    assert full.status == dropped.status == "ok" and "1 reference(s) dropped" in dropped.message
    assert dropped.value != pytest.approx(full.value)
    two_dropped = p_estoi_fa(FakeTrims({refs[0], refs[1]})).evaluate(item)
    assert two_dropped.status == "too_few_references" and two_dropped.value is None
    failed_test = p_estoi_fa(FakeTrims({test})).evaluate(item)
    assert (failed_test.value, failed_test.status) == (0.0, "trim_failed")


def test_p_estoi_fa_scores_explicit_segments_as_cut_like_pathbench(group):
    """PathBench's FA P-ESTOI loads an utterance with an explicit segment as cut (its
    ``use_segments``): the fa value of segments equals the raw one, status ok, where it used
    to be 0.0 with status trim_failed for every segment (COPAS words)."""
    test, *refs = group
    references = tuple((p, 0.25, 1.5) for p in refs)
    item = Item("t", test, 0.25, 1.5, SENTENCES[0], "en", reference_audios=references)
    p_estoi = registry.create("p_estoi")
    fa = p_estoi.trimmed(FATrimmer(backend="energy")).evaluate(item)
    raw = p_estoi.evaluate(item)
    assert (fa.status, raw.status) == ("ok", "ok")
    assert fa.value == pytest.approx(raw.value, rel=1e-12)


def test_reference_evaluators_without_references(group):
    item = Item("t", group[0], reference_audios=())
    for name, options in (("p_estoi", {}), ("p_stoi", {}), ("nad", {"features": "mfcc"})):
        assert registry.create(name, **options).evaluate(item).status == "no_references"
    one = Item("t", group[0], reference_audios=((group[1], 0.0, -1.0),))
    assert registry.create("p_estoi").evaluate(one).status == "too_few_references"
    assert registry.create("nad", features="mfcc").evaluate(one).status == "ok"


def test_reference_features_are_decoded_once_per_job(group):
    evaluator = registry.create("nad", features="mfcc")
    references = tuple((p, 0.0, -1.0) for p in group[1:])
    load_shared.cache_clear()
    for _ in range(3):
        evaluator.evaluate(Item("t", group[0], reference_audios=references))
    assert load_shared.cache_info().misses == 4


@pytest.mark.parametrize(
    ("name", "options", "failing"),
    [("nad", {"features": "mfcc"}, 0), ("nad", {"features": "mfcc"}, 2), ("p_estoi", {}, 2)],
)
def test_fa_references_are_trimmed_once_per_job(group, name, options, failing):
    """An fa job asks the trimmer about each reference once, not once per test utterance.

    A second pass over the same tests (as ``all`` references make every recording a reference
    of the others) asks at most for each test's own audio (nothing when a failed trim leaves
    the group untrimmed), where it used to ask for every member of every group. Every score
    equals a fresh evaluator's: remembering the verdicts changes no value.
    """
    trims = FakeTrims({group[failing]} if failing else set())
    evaluator = registry.create(name, **options).trimmed(trims)

    def items():
        for test in group:
            others = tuple((p, 0.0, -1.0) for p in group if p != test)
            yield Item(
                "t", test, transcription=SENTENCES[0], language="en", reference_audios=others
            )

    first = [evaluator.evaluate(item) for item in items()]
    asked = len(trims.calls)
    again = [evaluator.evaluate(item) for item in items()]
    assert len(trims.calls) - asked <= len(group), "at most each test's own audio"
    fresh = [registry.create(name, **options).trimmed(trims).evaluate(i) for i in items()]
    assert first == again == fresh
    assert all(score.status in ("ok", "trim_failed") for score in first)


def test_non_english_rows_are_unsupported_for_text_measures(tmp_path):
    root = build_dataset(tmp_path / "d")
    write_lines(root / "language", ["nl"])
    validate_dataset(root, tmp_path / "m.parquet", tmp_path / "v.json", n_shards=1)
    for name in ("sphinx_wer", "sphinx_per", "sphinx_gop"):
        frame = score_utterances(tmp_path / "m.parquet", 0, name, tmp_path / f"{name}.parquet")
        assert len(frame) == 4 and (frame["status"] == "unsupported_language").all()
        assert frame["score"].isna().all()


def test_p_estoi_fa_without_references_is_nan_even_when_the_test_trim_failed(group):
    item = Item("t", group[0], transcription=SENTENCES[0], language="en", reference_audios=())
    for failing in (set(), {group[0]}):
        score = registry.create("p_estoi").trimmed(FakeTrims(failing)).evaluate(item)
        assert (score.value, score.status) == (None, "no_references"), failing


def test_fa_trim_stage_aligns_words_with_apostrophes(tmp_path):
    """The stage hands the aligner the raw text: "don't" is a dictionary word, "dont" is not."""
    require_espeak()
    sentences = ["I don't think it's going to rain", "we'll see what they've done"]
    rng = np.random.default_rng(11)
    root = tmp_path / "d"
    (root / "wav").mkdir(parents=True)
    for k, sentence in enumerate(sentences):
        padded = pad_in_noise(speak(sentence), rng)
        sf.write(root / "wav" / f"s1_u{k}.wav", padded.audio, SAMPLE_RATE, subtype="PCM_16")
    write_kaldi(
        root,
        [f"s1_u{k} wav/s1_u{k}.wav" for k in range(2)],
        [f"s1_u{k} {s.capitalize()}." for k, s in enumerate(sentences)],
        ["s1_u0 s1", "s1_u1 s1"],
        {"s1": ("m", "90")},
    )
    validate_dataset(root, tmp_path / "m.parquet", tmp_path / "v.json", n_shards=1)
    table = fa_trim(tmp_path / "m.parquet", 0, tmp_path / "t.parquet", {"backend": "auto"})
    assert list(table["status"]) == ["aligned", "aligned"], table["message"].tolist()
    assert list(table["n_words_aligned"]) == [len(s.split()) for s in sentences]
