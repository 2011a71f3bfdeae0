"""Validation of what real corpora get wrong: self-references, damaged audio, empty datasets,
byte-order marks, optional spk2gender and Kaldi segments conventions. Each test builds a valid
dataset and breaks it in one place, like tests/test_dataset.py."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from pathbench_flow.data.dataset import Dataset
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.data.validation import DatasetError
from pathbench_flow.stages.validate import failed_report_path, validate_dataset
from pathbench_flow.testing import FIXTURES
from pathbench_flow.testing.kaldi_builder import build_dataset, references_of, tone, write_lines


def failing(path: Path, **options) -> DatasetError:
    with pytest.raises(DatasetError) as caught:
        Dataset(path, **options)
    return caught.value


def errors(err: DatasetError) -> list:
    return [f for f in err.findings if f.severity == "error"]


def warnings_of(ds: Dataset) -> list:
    return [f for f in ds.findings if f.severity == "warning"]


def as_reference(test: Path, control: Path, scratch: Path, **options) -> Dataset:
    """Validate ``control`` as the reference set of ``test``, as the workflow's
    ``validate_reference`` rule does: against the manifest of the validated test set."""
    audio = {"check_audio": options.get("check_audio", True)}
    test_manifest = scratch / "test_manifest.parquet"
    validate_dataset(test, test_manifest, scratch / "test.json", n_shards=1, **audio)
    return validate_dataset(
        control,
        scratch / "reference_manifest.parquet",
        scratch / "reference.json",
        n_shards=1,
        test_manifest=test_manifest,
        test_directory=test,
        **options,
    )


def refused(test: Path, control: Path, scratch: Path, **options) -> DatasetError:
    with pytest.raises(DatasetError) as caught:
        as_reference(test, control, scratch, **options)
    return caught.value


def write_hashes(root: Path) -> None:
    lines = []
    for line in (root / "wav.scp").read_text().splitlines():
        key, rel = line.split()
        lines.append(f"{key} {hashlib.sha256((root / rel).read_bytes()).hexdigest()}")
    write_lines(root / "wav_hash.scp", lines)


def sharing_a_recording(scratch: Path, utt: str) -> tuple[Path, Path]:
    """A test and a control dataset whose control ``ref_<utt>`` is the test set's ``utt``
    recording file."""
    test = build_dataset(scratch / "test")
    control = build_dataset(scratch / "control", id_prefix="ref_")
    lines = [
        f"ref_{utt} {test / 'wav' / f'{utt}.wav'}" if line.split()[0] == f"ref_{utt}" else line
        for line in (control / "wav.scp").read_text().splitlines()
    ]
    write_lines(control / "wav.scp", lines)
    return test, control


# ----------------------------------------------------------- item 3: reference = test set
def test_reference_that_is_the_test_set_is_refused_naming_both(tmp_path):
    test = build_dataset(tmp_path / "test")
    err = refused(test, test, tmp_path)
    (finding,) = errors(err)
    assert "is the test dataset" in finding.problem
    assert str(test) in finding.problem and finding.file == str(test)


def test_reference_sharing_a_recording_file_is_refused(tmp_path):
    test, control = sharing_a_recording(tmp_path, "spk1_u0")
    (finding,) = errors(refused(test, control, tmp_path))
    assert finding.value == "spk1_u0 = ref_spk1_u0" and "shares 1 recording" in finding.problem
    assert str(test) in finding.problem and str(control) in finding.problem
    dropped = as_reference(test, control, tmp_path, on_error="drop")
    assert dropped.dropped == ["ref_spk1_u0"] and "ref_spk1_u0" not in dropped.utterances


@pytest.mark.parametrize("check_audio", [True, False])
def test_reference_with_a_copy_of_a_recording_is_refused_by_hash(tmp_path, check_audio):
    """Without audio checks validation computes no digest: wav_hash.scp's alone find the copy."""
    test = build_dataset(tmp_path / "test")
    control = build_dataset(tmp_path / "control", id_prefix="ref_")
    sf.write(control / "wav" / "spk2_u1.wav", tone(1.0, freq=330.0), 16000, subtype="PCM_16")
    shutil.copy(control / "wav" / "spk2_u1.wav", test / "wav" / "spk2_u1.wav")
    for root in (test, control):
        write_hashes(root)
    (finding,) = errors(refused(test, control, tmp_path, check_audio=check_audio))
    assert finding.value == "spk2_u1 = ref_spk2_u1"


def test_disjoint_segments_of_one_recording_are_not_an_overlap(tmp_path):
    test = build_dataset(tmp_path / "test", segments=True)
    control = build_dataset(tmp_path / "control", segments=True, id_prefix="ref_")
    write_lines(
        control / "wav.scp", [f"spk1_rec {test}/wav/spk1_rec.wav", "spk2_rec wav/spk2_rec.wav"]
    )
    lines = (control / "segments").read_text().splitlines()
    write_lines(control / "segments", lines[1:])  # control keeps only spk1's second second
    test_lines = (test / "segments").read_text().splitlines()
    write_lines(test / "segments", test_lines[:1] + test_lines[2:])  # test drops spk1's second
    write_lines(test / "utt2spk", ["spk1_u0 spk1", "spk2_u0 spk2", "spk2_u1 spk2"])
    write_lines(
        test / "text", ["spk1_u0 The cat sat.", "spk2_u0 The cat sat.", "spk2_u1 A dog ran!"]
    )
    write_lines(control / "utt2spk", ["ref_spk1_u1 spk1", "ref_spk2_u0 spk2", "ref_spk2_u1 spk2"])
    write_lines(
        control / "text",
        ["ref_spk1_u1 A dog ran!", "ref_spk2_u0 The cat sat.", "ref_spk2_u1 A dog ran!"],
    )
    assert not as_reference(test, control, tmp_path, shared_speaker_ids="distinct").findings


def test_workflow_refuses_a_reference_overlapping_the_test_manifest(tmp_path):
    test, control = sharing_a_recording(tmp_path, "spk2_u1")
    validate_dataset(test, tmp_path / "t.parquet", tmp_path / "t.json", n_shards=1)
    report = tmp_path / "ref" / "validation.json"
    with pytest.raises(DatasetError, match="shares 1 recording"):
        validate_dataset(
            control,
            tmp_path / "ref" / "manifest.parquet",
            report,
            n_shards=1,
            test_manifest=tmp_path / "t.parquet",
            test_directory=test,
        )
    kept = json.loads(failed_report_path(report).read_text())
    assert kept["outcome"] == "failed" and kept["findings"][0]["value"] == "spk2_u1 = ref_spk2_u1"
    # With on_error: drop the shared recording leaves the reference set, and says so.
    validate_dataset(
        control,
        tmp_path / "ref" / "manifest.parquet",
        report,
        n_shards=1,
        on_error="drop",
        test_manifest=tmp_path / "t.parquet",
        test_directory=test,
    )
    assert json.loads(report.read_text())["dropped_utterances"] == ["ref_spk2_u1"]
    assert "ref_spk2_u1" not in set(load_manifest(tmp_path / "ref" / "manifest.parquet")["utt_id"])


def test_easycall_metadata_shares_one_recording_between_its_sets(tmp_path):
    """Real metadata: EasyCall's word sets hold byte-identical files (same wav_hash.scp
    digest) under several speakers; one pair has the same word and would self-reference."""
    root = FIXTURES / "kaldi-metadata" / "easycall"
    control = root / "control/word/unbalanced"
    test = root / "pathological/word/unbalanced"
    err = refused(test, control, tmp_path, check_audio=False)
    (finding,) = errors(err)
    assert finding.value == "m13_04_salva = fc10_06_salva"
    assert finding.utterances == ("fc10_06_salva",)
    (warning,) = [f for f in err.findings if f.severity == "warning"]
    assert "shares 16 recording(s)" in warning.problem and "different transcriptions" in (
        warning.problem
    )


def test_all_references_never_include_the_utterance_itself(tmp_path):
    root = build_dataset(tmp_path)
    # spk3 is listed with spk1's recording: a different speaker id, the same audio.
    with open(root / "wav.scp", "a") as handle:
        handle.write("spk3_u0 wav/spk1_u0.wav\n")
    for name, line in (("text", "spk3_u0 The cat sat."), ("utt2spk", "spk3_u0 spk3")):
        with open(root / name, "a") as handle:
            handle.write(line + "\n")
    write_lines(root / "spk2score", ["spk1 80", "spk2 N/A", "spk3 50"])
    write_lines(root / "spk2gender", ["spk1 f", "spk2 m", "spk3 f"])
    refs = [Path(p).stem for p, _s, _e in references_of(Dataset(root), "spk1_u0", "all")]
    assert refs == ["spk2_u0"]


# ------------------------------------------------------------- item 4: damaged audio
def test_truncated_wav_is_an_error(tmp_path):
    root = build_dataset(tmp_path)
    path = root / "wav" / "spk2_u0.wav"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert sf.info(str(path)).frames > 0  # libsndfile reads the shortened file without error
    (finding,) = errors(failing(root))
    assert finding.line == 3 and "truncated" in finding.problem and "1.000 s" in finding.problem
    assert finding.utterances == ("spk2_u0",)


def test_constant_dc_is_an_error(tmp_path):
    root = build_dataset(tmp_path)
    sf.write(root / "wav" / "spk1_u1.wav", np.full(16000, 0.25), 16000, subtype="PCM_16")
    (finding,) = errors(failing(root))
    assert finding.line == 2 and "DC" in finding.problem and "0.2500" in finding.problem


def test_one_recording_at_a_lower_rate_is_an_error(tmp_path):
    root = build_dataset(tmp_path)
    sf.write(root / "wav" / "spk2_u1.wav", tone(1.0, rate=8000), 8000, subtype="PCM_16")
    (finding,) = errors(failing(root))
    assert finding.line == 4 and "8000 Hz differs from the dataset's 16000 Hz" in finding.problem
    ds = Dataset(root, on_error="drop")
    assert ds.dropped == ["spk2_u1"]


def test_full_band_rates_may_mix(tmp_path):
    root = build_dataset(tmp_path)
    sf.write(root / "wav" / "spk2_u1.wav", tone(1.0, rate=44100), 44100, subtype="PCM_16")
    sf.write(root / "wav" / "spk2_u0.wav", tone(1.0, rate=48000), 48000, subtype="PCM_16")
    assert not Dataset(root).findings


def test_a_dataset_entirely_at_8khz_is_noted(tmp_path):
    root = build_dataset(tmp_path)
    for wav in (root / "wav").glob("*.wav"):
        sf.write(wav, tone(1.0, rate=8000), 8000, subtype="PCM_16")
    (note,) = warnings_of(Dataset(root))
    assert note.file.endswith("wav.scp") and "every recording is sampled at 8000 Hz" in note.problem


# ------------------------------------------------------ item 6: nothing left to score
def test_empty_dataset_is_an_error(tmp_path):
    root = build_dataset(tmp_path)
    for name in ("wav.scp", "text", "utt2spk"):
        write_lines(root / name, [])
    write_lines(root / "spk2score", [])
    write_lines(root / "spk2gender", [])
    (finding,) = errors(failing(root))
    assert finding.file == str(root) and "no utterances" in finding.problem


def test_drop_that_removes_everything_is_an_error(tmp_path):
    root = build_dataset(tmp_path)
    shutil.rmtree(root / "wav")
    err = failing(root, on_error="drop")
    last = errors(err)[-1]
    assert last.file == str(root) and "all 4 were dropped" in last.problem
    report = tmp_path / "v.json"
    with pytest.raises(DatasetError):
        validate_dataset(root, tmp_path / "m.parquet", report, n_shards=1, on_error="drop")
    assert json.loads(failed_report_path(report).read_text())["outcome"] == "failed"
    assert not report.exists()


# -------------------------------------------- item 7: findings survive a failed job
def test_failed_report_is_kept_beside_and_removed_after_success(tmp_path):
    root = build_dataset(tmp_path / "d")
    write_lines(root / "spk2gender", ["spk1 q", "spk2 m"])
    report = tmp_path / "validation.json"
    assert failed_report_path(report) == tmp_path / "validation.failed.json"
    with pytest.raises(DatasetError, match="spk2gender:1"):
        validate_dataset(root, tmp_path / "m.parquet", report, n_shards=1)
    assert json.loads(failed_report_path(report).read_text())["findings"][0]["value"] == "q"
    write_lines(root / "spk2gender", ["spk1 f", "spk2 m"])
    validate_dataset(root, tmp_path / "m.parquet", report, n_shards=1)
    assert report.exists() and not failed_report_path(report).exists()


# ------------------------------------------------------- item 8: byte-order marks
@pytest.mark.parametrize(
    "name",
    [
        "wav.scp",
        "text",
        "utt2spk",
        "spk2score",
        "spk2gender",
        "language",
        "segments",
        "utt2group",
        "wav_hash.scp",
    ],
)
def test_utf8_byte_order_mark_is_accepted_and_named(tmp_path, name):
    root = build_dataset(tmp_path, segments=True)
    write_lines(root / "utt2group", ["spk1_u0 a", "spk1_u1 a", "spk2_u0 b", "spk2_u1 b"])
    write_hashes(root)
    clean = Dataset(root, verify_hashes=True).to_frame()
    file = root / name
    file.write_bytes(b"\xef\xbb\xbf" + file.read_bytes())
    ds = Dataset(root, verify_hashes=True)
    (warning,) = warnings_of(ds)
    assert warning.file == str(file) and "byte-order mark" in warning.problem
    assert ds.to_frame().equals(clean)


def test_utf16_file_is_one_error(tmp_path):
    root = build_dataset(tmp_path)
    (root / "text").write_bytes((root / "text").read_text().encode("utf-16"))
    problems = [f.problem for f in failing(root).findings if f.file.endswith("text")]
    assert problems[0] == "file is UTF-16 encoded (byte-order mark)"
    assert not [p for p in problems if "not UTF-8" in p]


# ------------------------------------------ item 9: what real corpora contain
def test_spk2gender_is_optional(tmp_path):
    test = build_dataset(tmp_path / "test")
    control = build_dataset(tmp_path / "control", id_prefix="ref_")
    (test / "spk2gender").unlink()
    ds, reference = Dataset(test), Dataset(control)
    (warning,) = warnings_of(ds)
    assert warning.file.endswith("spk2gender") and "'control' references" in warning.problem
    assert references_of(ds, "spk1_u0", "control", reference) == []
    # spk1 of the reference set is spk1 of the test set: never their own reference
    assert len(references_of(ds, "spk1_u0", "all", reference)) == 2
    validate_dataset(test, tmp_path / "m.parquet", tmp_path / "v.json", n_shards=1)
    assert set(load_manifest(tmp_path / "m.parquet")["gender"]) == {""}
    report = json.loads((tmp_path / "v.json").read_text())
    assert report["outcome"] == "ok" and "spk2gender" in report["findings"][0]["file"]


def test_segment_end_minus_one_runs_to_the_end_of_the_file(tmp_path):
    root = build_dataset(tmp_path, segments=True)
    lines = (root / "segments").read_text().splitlines()
    lines[1] = "spk1_u1 spk1_rec 1.0 -1"
    write_lines(root / "segments", lines)
    utt = Dataset(root).utterances["spk1_u1"]
    assert (utt.start, utt.end) == (1.0, -1.0) and utt.duration_s == pytest.approx(1.0)
    assert Dataset(root, check_audio=False).utterances["spk1_u1"].end == -1.0


def test_segment_end_minus_one_starting_after_the_audio_is_an_error(tmp_path):
    root = build_dataset(tmp_path, segments=True)
    lines = (root / "segments").read_text().splitlines()
    lines[1] = "spk1_u1 spk1_rec 2.5 -1"
    write_lines(root / "segments", lines)
    (finding,) = errors(failing(root))
    assert finding.line == 2 and "starts after the audio ends" in finding.problem


@pytest.mark.parametrize("end", ["-2", "-0.5"])
def test_other_negative_segment_ends_stay_errors(tmp_path, end):
    root = build_dataset(tmp_path, segments=True)
    lines = (root / "segments").read_text().splitlines()
    lines[1] = f"spk1_u1 spk1_rec 1.0 {end}"
    write_lines(root / "segments", lines)
    (finding,) = errors(failing(root))
    assert "negative" in finding.problem


def test_segment_channel_field(tmp_path):
    root = build_dataset(tmp_path, segments=True)
    lines = (root / "segments").read_text().splitlines()
    write_lines(root / "segments", [line + " 0" for line in lines])
    assert len(Dataset(root).utterances) == 4
    lines[1] += " 1"
    write_lines(root / "segments", lines)
    (finding,) = errors(failing(root))
    assert (finding.line, finding.value) == (2, "1") and "no such channel" in finding.problem
    lines[1] = lines[1][:-2] + " x"
    write_lines(root / "segments", lines)
    assert "not a channel number" in errors(failing(root))[0].problem


def test_channel_of_a_stereo_recording_is_refused(tmp_path):
    root = build_dataset(tmp_path, segments=True)
    stereo = np.stack([tone(2.0), tone(2.0, freq=330.0)], axis=1)
    sf.write(root / "wav" / "spk1_rec.wav", stereo, 16000, subtype="PCM_16")
    lines = (root / "segments").read_text().splitlines()
    lines[0] += " 1"
    write_lines(root / "segments", lines)
    (finding,) = errors(failing(root))
    assert finding.line == 1 and "cannot select one" in finding.problem
