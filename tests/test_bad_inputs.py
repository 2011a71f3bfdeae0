"""Inputs a user feeds that would inflate a score silently or exhaust memory: a speaker in both
the test and the reference set, an utterance far longer than a sentence, audio stored with a
lossy codec, and ids saved in two Unicode normal forms. Each test builds a real dataset
(pathbench_flow/testing/kaldi_builder.py), feeds it as a user would and asserts the finding,
status or reference count the user sees."""

from __future__ import annotations

import json
import re
import unicodedata

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
from test_validation_findings import as_reference, errors, failing, refused, warnings_of

from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.io import write_parquet
from pathbench_flow.common.status import ENERGY_TRIMMED
from pathbench_flow.data.dataset import Dataset
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.evaluators.metric import FA, RAW
from pathbench_flow.schemas.tables import TRIM_SCHEMA
from pathbench_flow.stages.score import score_reference
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.kaldi_builder import build_dataset, tone, write_lines


# ------------------------------------------------------------ a speaker in both sets
def whole_utterance_trims(manifest, path):
    """Stored boundaries covering each whole utterance of ``manifest``: the fa variant of
    these recordings is the raw audio, so only the reference choice can differ."""
    frame = load_manifest(manifest)
    table = pd.DataFrame(
        {
            "utt_id": frame["utt_id"],
            "backend": "energy",
            "status": ENERGY_TRIMMED,
            "trim_start_s": 0.0,
            "trim_end_s": [len(load_audio(p)) / 16000 for p in frame["audio_path"]],
            "n_words_aligned": 0,
            "message": "",
        }
    )
    write_parquet(table, path, TRIM_SCHEMA, ["utt_id"])
    return path


def rename(root, name: str, old: str, new: str) -> None:
    """Rewrite ``name`` of dataset ``root`` with the regular expression ``old`` -> ``new``."""
    lines = (root / name).read_text(encoding="utf-8").splitlines()
    write_lines(root / name, [re.sub(old, new, line) for line in lines])


def reference_set(root):
    """A reference set of the test set's speakers (spk1, spk2) whose utterances have ids of
    their own (ref1_u0 ...), as a second recording session would."""
    build_dataset(root)
    for name in ("wav.scp", "text", "utt2spk"):
        rename(root, name, r"^spk(\d)_u", r"ref\1_u")
    return root


@pytest.mark.parametrize("variant", [RAW, FA])
@pytest.mark.parametrize(
    ("shared_speaker_ids", "control", "all_"), [("same_speaker", 0, 2), ("distinct", 1, 3)]
)
def test_a_speaker_in_both_sets_is_never_their_own_reference(
    tmp_path, variant, shared_speaker_ids, control, all_
):
    """Test and reference set both hold spk1 (f) and spk2 (m) saying the same two texts.
    spk1_u0's references: ``control`` takes same text and gender from the reference set (its
    ref1_u0), ``all`` also the test set's other speaker (spk2_u0) and the reference set's
    ref2_u0. The reference set's spk1 is the test set's spk1 unless the config says the ids
    merely collide."""
    test, reference = build_dataset(tmp_path / "test"), reference_set(tmp_path / "control")
    as_reference(test, reference, tmp_path, shared_speaker_ids=shared_speaker_ids)
    manifests = [tmp_path / "test_manifest.parquet", tmp_path / "reference_manifest.parquet"]
    trims = (
        [whole_utterance_trims(m, m.with_suffix(".trims.parquet")) for m in manifests]
        if variant == FA
        else []
    )
    counts = {}
    for kind in ("control", "all"):
        scored = score_reference(
            *manifests,
            0,
            "p_estoi",
            kind,
            tmp_path / f"{kind}.parquet",
            variant=variant,
            trim_paths=trims,
            shared_speaker_ids=shared_speaker_ids,
        )
        counts[kind] = dict(zip(scored["utt_id"], scored["n_references"], strict=True))
    assert counts["control"]["spk1_u0"] == control and counts["all"]["spk1_u0"] == all_


def test_validation_names_the_shared_speakers_and_what_is_left_out(tmp_path):
    test, reference = build_dataset(tmp_path / "test"), reference_set(tmp_path / "control")
    as_reference(test, reference, tmp_path)
    report = json.loads((tmp_path / "reference.json").read_text())
    (warning,) = [f for f in report["findings"] if "speaker id(s)" in f["problem"]]
    assert warning["severity"] == "warning" and warning["value"] == "spk1 (2), spk2 (2)"
    assert warning["problem"] == (
        f"2 speaker id(s) are in both test dataset {test} and reference dataset {reference}: "
        "the same speaker, so their 4 reference recording(s) of a text they also say in the "
        "test set (in brackets, per speaker) are never references for their own utterances"
    )
    assert "set validation.shared_speaker_ids: distinct" in warning["fix"]
    assert report["settings"]["shared_speaker_ids"] == "same_speaker"


def test_ids_the_config_calls_distinct_are_not_reported(tmp_path):
    test, reference = build_dataset(tmp_path / "test"), reference_set(tmp_path / "control")
    as_reference(test, reference, tmp_path, shared_speaker_ids="distinct")
    report = json.loads((tmp_path / "reference.json").read_text())
    assert not [f for f in report["findings"] if "speaker id(s)" in f["problem"]]
    assert report["settings"]["shared_speaker_ids"] == "distinct"


def test_sets_without_shared_speakers_get_no_warning(tmp_path):
    test = build_dataset(tmp_path / "test")
    reference = build_dataset(tmp_path / "control", id_prefix="ref_")
    rename(reference, "utt2spk", r" spk", " ctl")
    for name in ("spk2score", "spk2gender"):
        rename(reference, name, r"^spk", "ctl")
    report = as_reference(test, reference, tmp_path)
    assert not [f for f in report.findings if "speaker id(s)" in f.problem]


# ------------------------------------------------------------ long recordings
def test_an_utterance_longer_than_the_limit_is_refused(tmp_path):
    """A recording listed as one utterance but far longer than a sentence: refused by name,
    with the config key that moves the limit; ``on_error: drop`` drops only it."""
    root = build_dataset(tmp_path)
    sf.write(root / "wav" / "spk2_u1.wav", tone(3.0), 16000)
    (finding,) = errors(failing(root, max_utterance_s=2.5))
    assert (finding.file, finding.line, finding.value) == (str(root / "wav.scp"), 4, "spk2_u1")
    assert finding.problem.startswith(
        "utterance is 3.0 s long, longer than validation.max_utterance_s (2.5 s)"
    )
    assert "segments file, or raise validation.max_utterance_s" in finding.fix
    assert Dataset(root, max_utterance_s=2.5, on_error="drop").dropped == ["spk2_u1"]
    assert "spk2_u1" in Dataset(root, max_utterance_s=3.0).utterances


def test_a_long_segment_is_refused_at_its_segments_line(tmp_path):
    root = build_dataset(tmp_path, segments=True)
    (finding,) = errors(failing(root, max_utterance_s=0.5))[:1]
    assert (finding.file, finding.line) == (str(root / "segments"), 1)
    assert "utterance is 0.9 s long" in finding.problem


def test_the_default_limit_refuses_a_session_listed_as_one_utterance(tmp_path):
    """Eleven minutes of audio as one utterance, validated with the defaults."""
    root = build_dataset(tmp_path)
    sf.write(root / "wav" / "spk1_u0.wav", np.tile(tone(1.0), 660), 16000, subtype="PCM_16")
    (finding,) = errors(failing(root))
    assert "utterance is 660.0 s long, longer than validation.max_utterance_s (600 s)" in (
        finding.problem
    )


# ------------------------------------------------------------ lossy audio
def lossy_dataset(tmp_path, utt: str, extension: str, **write):
    """A dataset whose ``utt`` is stored as ``extension`` with soundfile's ``write`` options."""
    root = build_dataset(tmp_path)
    sf.write(root / "wav" / f"{utt}.{extension}", tone(1.0), 16000, **write)
    lines = (root / "wav.scp").read_text().splitlines()
    write_lines(
        root / "wav.scp",
        [line.replace(f"{utt}.wav", f"{utt}.{extension}") for line in lines],
    )
    return root


@pytest.mark.parametrize(
    ("extension", "write", "codec"),
    [
        ("mp3", {"format": "MP3", "subtype": "MPEG_LAYER_III"}, "MPEG Layer III (MP3)"),
        ("ogg", {"format": "OGG", "subtype": "VORBIS"}, "Ogg Vorbis"),
        ("opus", {"format": "OGG", "subtype": "OPUS"}, "Opus"),
        ("wav", {"format": "WAV", "subtype": "GSM610"}, "GSM 06.10"),
    ],
)
def test_lossy_audio_is_named_with_its_codec(tmp_path, extension, write, codec):
    """Before, an MP3 was decoded and scored without a word (its CPP 9 % above the WAV's)."""
    utt = "spk1_u1"
    root = lossy_dataset(tmp_path, utt, extension if extension != "wav" else "gsm.wav", **write)
    report_path = tmp_path / "v.json"
    validate_dataset(root, tmp_path / "m.parquet", report_path, n_shards=1)
    (warning,) = [
        f for f in json.loads(report_path.read_text())["findings"] if "lossy" in f["problem"]
    ]
    assert warning["severity"] == "warning" and warning["line"] == 2
    assert warning["value"] == f"wav/{utt}.{extension if extension != 'wav' else 'gsm.wav'}"
    assert warning["problem"].startswith(f"1 recording(s) stored with the lossy codec {codec}:")
    assert warning["utterances"] == [utt]

    (finding,) = errors(failing(root, lossy_audio="error"))
    assert finding.problem == warning["problem"] and finding.utterances == (utt,)
    assert Dataset(root, lossy_audio="error", on_error="drop").dropped == [utt]


def test_an_aac_file_is_refused_naming_its_codec(tmp_path):
    """libsndfile cannot decode AAC; the refusal says what the file holds."""
    root = build_dataset(tmp_path)
    (root / "wav" / "spk1_u0.m4a").write_bytes(b"\x00\x00\x00\x20ftypM4A " + bytes(64))
    write_lines(
        root / "wav.scp",
        [
            line.replace("spk1_u0.wav", "spk1_u0.m4a")
            for line in (root / "wav.scp").read_text().splitlines()
        ],
    )
    (finding,) = errors(failing(root))
    assert "it holds an MP4/M4A container (usually AAC), a lossy codec" in finding.problem
    assert "a decoded lossy copy keeps the codec's spectrum" in finding.fix


def test_lossless_files_get_no_codec_warning(tmp_path):
    root = lossy_dataset(tmp_path, "spk1_u1", "flac", format="FLAC", subtype="PCM_16")
    assert not [f for f in Dataset(root).findings if "lossy" in f.problem]


# ------------------------------------------------------------ Unicode forms and separators
NFC_ID = unicodedata.normalize("NFC", "José_u0")
NFD_ID = unicodedata.normalize("NFD", "José_u0")


def test_ids_in_nfc_and_nfd_with_no_break_spaces_are_one_utterance(tmp_path):
    """One id saved in NFC (wav.scp, utt2spk) and NFD (text), and utt2spk's fields separated
    by no-break spaces: before, two errors printed the same-looking id ('José_u0' utterance
    has no speaker / no transcription). Now the ids meet in NFC and both oddities are named."""
    root = build_dataset(tmp_path)

    def rename(name: str, new_id: str, separator: str = " ") -> None:
        lines = (root / name).read_text(encoding="utf-8").splitlines()
        rows = [line.split(maxsplit=1) for line in lines]
        write_lines(
            root / name,
            [separator.join([new_id if key == "spk1_u0" else key, rest]) for key, rest in rows],
        )

    rename("wav.scp", NFC_ID)
    rename("utt2spk", NFC_ID, separator="\u00a0")
    rename("text", NFD_ID)
    ds = Dataset(root)
    assert NFC_ID in ds.utterances and NFD_ID != NFC_ID
    assert ds.utterances[NFC_ID].speaker_id == "spk1"
    text_warning, separator_warning = warnings_of(ds)
    assert (text_warning.file, text_warning.line) == (str(root / "text"), 1)
    assert text_warning.value == f"line 1 {NFD_ID!r} (U+0065 U+0301 -> U+00E9)"
    assert text_warning.problem.startswith("1 id(s) not in Unicode NFC: they are compared")
    assert separator_warning.file == str(root / "utt2spk")
    assert separator_warning.value == "U+00A0 NO-BREAK SPACE"
    assert "on 4 line(s), first line 1" in separator_warning.problem


def test_ids_that_differ_only_in_normal_form_are_one_key(tmp_path):
    """Two utt2spk lines whose ids differ only in normal form are the same utterance twice."""
    root = build_dataset(tmp_path)
    lines = (root / "utt2spk").read_text().splitlines()
    write_lines(root / "utt2spk", [*lines, f"{NFD_ID} spk1", f"{NFC_ID} spk1"])
    duplicate = next(f for f in errors(failing(root)) if "duplicate key" in f.problem)
    assert (duplicate.line, duplicate.value) == (6, NFC_ID)


def test_a_transcription_in_nfd_matches_its_reference_in_nfc(tmp_path):
    """The same sentence typed in two forms is one text: references are chosen by it."""
    test, control = build_dataset(tmp_path / "test"), build_dataset(tmp_path / "control")
    sentence = unicodedata.normalize("NFD", "Él comió.")
    for root, form in ((test, "NFD"), (control, "NFC")):
        lines = (root / "text").read_text().splitlines()
        write_lines(
            root / "text",
            [f"{line.split()[0]} {unicodedata.normalize(form, sentence)}" for line in lines],
        )
    (test_utt,) = [u for u in Dataset(test).utterances.values() if u.utt_id == "spk1_u0"]
    (control_utt,) = [u for u in Dataset(control).utterances.values() if u.utt_id == "spk2_u0"]
    assert test_utt.text != control_utt.text and test_utt.text_clean == control_utt.text_clean


def test_an_utterance_id_in_both_sets_is_refused_naming_the_ids(tmp_path):
    """Two sessions exported with the same ids (spk1_u0 ... in both): other recordings, one
    id. Trim tables, tracks and references key a recording by its id across the two sets."""
    test, reference = build_dataset(tmp_path / "test"), build_dataset(tmp_path / "control")
    (finding,) = [
        f for f in errors(refused(test, reference, tmp_path)) if "utterance id(s)" in f.problem
    ]
    assert finding.value == "spk1_u0, spk1_u1, spk2_u0, spk2_u1"
    assert finding.problem == (
        f"4 utterance id(s) are in both test dataset {test} and reference dataset {reference}: "
        "an id names one recording across both sets"
    )
    assert "prefix its ids" in finding.fix
    renamed = build_dataset(tmp_path / "renamed", id_prefix="ref_")
    assert not [
        f for f in as_reference(test, renamed, tmp_path).findings if "utterance id(s)" in f.problem
    ]
