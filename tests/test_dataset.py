"""Dataset loading and validation: one test per defect the validator must catch."""

from __future__ import annotations

import hashlib
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from pathbench_flow.common.languages import LANGUAGES
from pathbench_flow.data.dataset import Dataset
from pathbench_flow.data.validation import DatasetError
from pathbench_flow.testing import FIXTURES
from pathbench_flow.testing.kaldi_builder import build_dataset, references_of, write_lines


def failing(path: Path, **options) -> DatasetError:
    with pytest.raises(DatasetError) as caught:
        Dataset(path, **options)
    return caught.value


def only_error(err: DatasetError):
    errors = [f for f in err.findings if f.severity == "error"]
    assert len(errors) == 1, [str(f) for f in errors]
    return errors[0]


def append(path: Path, line: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def test_valid_dataset_holds_its_utterances_in_utt_order(tmp_path):
    ds = Dataset(build_dataset(tmp_path))
    assert list(ds.utterances) == ["spk1_u0", "spk1_u1", "spk2_u0", "spk2_u1"]
    assert list(ds.to_frame()["utt_id"]) == list(ds.utterances)
    first = ds.utterances["spk1_u0"]
    assert Path(first.audio_path).is_file() and first.text == "The cat sat."
    assert (first.start, first.end) == (0.0, -1.0)
    assert ds.utterances["spk1_u0"].text_clean == "the cat sat"
    assert math.isnan(ds.utterances["spk2_u0"].score) and ds.utterances["spk1_u0"].score == 80
    assert ds.utterances["spk1_u0"].group_id == "spk1_u0"
    assert ds.utterances["spk1_u0"].duration_s == pytest.approx(1.0)


def test_segments_give_times_and_recording_groups(tmp_path):
    ds = Dataset(build_dataset(tmp_path, segments=True))
    utt = ds.utterances["spk1_u1"]
    assert (utt.start, utt.end, utt.recording_id, utt.group_id) == (
        1.0,
        1.9,
        "spk1_rec",
        "spk1_rec",
    )
    assert utt.duration_s == pytest.approx(0.9)


def test_utt2group_overrides_group(tmp_path):
    root = build_dataset(tmp_path)
    write_lines(
        root / "utt2group",
        [f"{u} session{u[-1]}" for u in ("spk1_u0", "spk1_u1", "spk2_u0", "spk2_u1")],
    )
    assert Dataset(root).utterances["spk2_u1"].group_id == "session1"


def test_missing_required_file(tmp_path):
    root = build_dataset(tmp_path)
    (root / "spk2score").unlink()
    finding = only_error(failing(root))
    assert finding.file.endswith("spk2score") and "missing" in finding.problem


def test_wrong_number_of_fields(tmp_path):
    root = build_dataset(tmp_path)
    append(root / "utt2spk", "extra spk1 surplus")
    finding = only_error(failing(root))
    assert finding.file.endswith("utt2spk") and finding.line == 5 and "fields" in finding.problem


def test_duplicate_key(tmp_path):
    root = build_dataset(tmp_path)
    append(root / "spk2gender", "spk1 f")
    finding = only_error(failing(root))
    assert (finding.line, finding.value) == (3, "spk1") and "duplicate" in finding.problem


def test_utterance_without_speaker(tmp_path):
    root = build_dataset(tmp_path)
    lines = (root / "utt2spk").read_text().splitlines()
    write_lines(root / "utt2spk", lines[1:])
    finding = only_error(failing(root))
    assert finding.value == "spk1_u0" and "no speaker" in finding.problem
    assert "text line 1" in finding.problem


def test_speaker_without_utterance_is_reported(tmp_path):
    root = build_dataset(tmp_path)
    append(root / "spk2score", "ghost 12")
    ds = Dataset(root)
    warning = [f for f in ds.findings if f.value == "ghost"][0]
    assert warning.severity == "warning" and warning.line == 3


def test_bad_score(tmp_path):
    root = build_dataset(tmp_path)
    write_lines(root / "spk2score", ["spk1 high", "spk2 N/A"])
    finding = only_error(failing(root))
    assert (finding.file.endswith("spk2score"), finding.line, finding.value) == (True, 1, "high")


def test_bad_gender(tmp_path):
    root = build_dataset(tmp_path)
    write_lines(root / "spk2gender", ["spk1 female", "spk2 m"])
    finding = only_error(failing(root))
    assert (finding.line, finding.value) == (1, "female") and "m or f" in finding.problem


def test_unknown_language(tmp_path):
    root = build_dataset(tmp_path)
    write_lines(root / "language", ["klingon"])
    finding = only_error(failing(root))
    assert finding.file.endswith("language") and finding.value == "klingon"


def test_zh_is_read_as_cmn(tmp_path):
    root = build_dataset(tmp_path)
    write_lines(root / "language", ["zh"])
    assert {u.language for u in Dataset(root).utterances.values()} == {"cmn"}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("spk1_u1 nowhere 0.0 0.5", "recording not in wav.scp"),
        ("spk1_u1 spk1_rec 0.8 0.5", "not before its end"),
        ("spk1_u1 spk1_rec -0.1 0.5", "negative"),
        ("spk1_u1 spk1_rec 1.0 2.2", "ends after the audio"),
    ],
)
def test_bad_segments(tmp_path, line, problem):
    root = build_dataset(tmp_path, segments=True)
    lines = (root / "segments").read_text().splitlines()
    write_lines(root / "segments", [lines[0], line, *lines[2:]])
    finding = only_error(failing(root))
    assert finding.file.endswith("segments") and finding.line == 2 and problem in finding.problem


def test_segment_end_within_tolerance_is_accepted(tmp_path):
    root = build_dataset(tmp_path, segments=True)
    lines = (root / "segments").read_text().splitlines()
    write_lines(root / "segments", [lines[0], "spk1_u1 spk1_rec 1.0 2.04", *lines[2:]])
    assert Dataset(root).utterances["spk1_u1"].end == 2.04


def test_missing_audio(tmp_path):
    root = build_dataset(tmp_path)
    (root / "wav" / "spk2_u1.wav").unlink()
    finding = only_error(failing(root))
    assert finding.file.endswith("wav.scp") and finding.line == 4 and "missing" in finding.problem


def test_unreadable_audio(tmp_path):
    root = build_dataset(tmp_path)
    (root / "wav" / "spk2_u1.wav").write_bytes(b"this is not audio")
    assert "unreadable" in only_error(failing(root)).problem


def test_empty_audio(tmp_path):
    root = build_dataset(tmp_path)
    sf.write(root / "wav" / "spk2_u1.wav", np.zeros(0), 16000, subtype="PCM_16")
    assert "empty" in only_error(failing(root)).problem


def test_silent_audio(tmp_path):
    root = build_dataset(tmp_path)
    sf.write(root / "wav" / "spk2_u1.wav", np.zeros(16000), 16000, subtype="PCM_16")
    finding = only_error(failing(root))
    assert "silence" in finding.problem and finding.line == 4


def test_hash_mismatch_only_when_verifying(tmp_path):
    root = build_dataset(tmp_path)
    digests = []
    for line in (root / "wav.scp").read_text().splitlines():
        key, rel = line.split()
        digests.append(f"{key} {hashlib.sha256((root / rel).read_bytes()).hexdigest()}")
    digests[2] = digests[2][:-4] + "0000"
    write_lines(root / "wav_hash.scp", digests)
    Dataset(root)
    finding = only_error(failing(root, verify_hashes=True))
    assert finding.file.endswith("wav_hash.scp") and finding.line == 3


def test_non_utf8_bytes(tmp_path):
    root = build_dataset(tmp_path)
    with open(root / "text", "ab") as handle:
        handle.write(b"spk3_u0 caf\xe9\n")
    err = failing(root)
    bad = [f for f in err.findings if "UTF-8" in f.problem][0]
    assert bad.file.endswith("text") and bad.line == 5


def test_pipe_command_is_refused_and_never_run(tmp_path):
    root = build_dataset(tmp_path)
    marker = tmp_path / "executed"
    lines = (root / "wav.scp").read_text().splitlines()
    lines[0] = f"spk1_u0 touch {marker} |"
    write_lines(root / "wav.scp", lines)
    finding = only_error(failing(root))
    assert "pipe command" in finding.problem and finding.line == 1
    assert not marker.exists()


def test_text_empty_after_cleaning(tmp_path):
    root = build_dataset(tmp_path)
    lines = (root / "text").read_text().splitlines()
    lines[3] = "spk2_u1 ?!..."
    write_lines(root / "text", lines)
    finding = only_error(failing(root))
    assert finding.line == 4 and "empty after cleaning" in finding.problem


def test_drop_removes_only_bad_utterances_and_lists_them(tmp_path):
    root = build_dataset(tmp_path)
    (root / "wav" / "spk2_u1.wav").unlink()
    ds = Dataset(root, on_error="drop")
    assert ds.dropped == ["spk2_u1"] and list(ds.utterances) == ["spk1_u0", "spk1_u1", "spk2_u0"]


def test_drop_cannot_route_around_a_dataset_level_error(tmp_path):
    root = build_dataset(tmp_path)
    write_lines(root / "language", ["xx"])
    failing(root, on_error="drop")


def test_every_error_is_listed_at_once(tmp_path):
    root = build_dataset(tmp_path)
    write_lines(root / "spk2gender", ["spk1 x", "spk2 y"])
    (root / "wav" / "spk1_u1.wav").unlink()
    err = failing(root)
    assert len([f for f in err.findings if f.severity == "error"]) == 3
    assert "spk2gender:1" in str(err) and "spk2gender:2" in str(err)


def test_references_control_and_all(tmp_path):
    control = build_dataset(tmp_path / "control")
    write_lines(control / "spk2gender", ["spk1 f", "spk2 m"])
    test = build_dataset(tmp_path / "test")
    ds, reference = Dataset(test), Dataset(control)
    # the two builds' speaker ids collide; they stand for different people here
    control_refs = references_of(ds, "spk1_u0", "control", reference, "distinct")
    assert [Path(p).parent.parent.name for p, _s, _e in control_refs] == ["control"]
    assert [Path(p).stem for p, _s, _e in control_refs] == ["spk1_u0"]
    all_refs = references_of(ds, "spk1_u0", "all", reference, "distinct")
    assert sorted(Path(p).parent.parent.name + "/" + Path(p).stem for p, _s, _e in all_refs) == [
        "control/spk1_u0",
        "control/spk2_u0",
        "test/spk2_u0",
    ]


def test_a_byte_identical_copy_is_never_its_own_reference(tmp_path):
    """spk2_u0 is a copy of spk1_u0's file under another path: the same recording, so neither
    is the other's ``all`` reference, as if one file were listed under two speakers."""
    root = build_dataset(tmp_path / "test")
    shutil.copyfile(root / "wav" / "spk1_u0.wav", root / "wav" / "spk2_u0.wav")
    ds = Dataset(root)
    assert ds.utterances["spk1_u0"].audio_sha256 == ds.utterances["spk2_u0"].audio_sha256
    assert references_of(ds, "spk1_u0", "all") == []
    assert references_of(ds, "spk2_u0", "all") == []
    assert [Path(p).stem for p, _s, _e in references_of(ds, "spk1_u1", "all")] == ["spk2_u1"]


@pytest.mark.parametrize("corpus", ["copas", "easycall", "neurovoz", "torgo", "uaspeech"])
def test_real_metadata_loads_without_audio(corpus):
    directories = sorted((FIXTURES / "kaldi-metadata" / corpus).glob("*/*/*/"))
    assert directories, f"no fixture directories for {corpus}"
    for directory in directories:
        ds = Dataset(directory, check_audio=False)
        assert ds.utterances and {u.language for u in ds.utterances.values()} < set(LANGUAGES)
        assert all(u.text_clean for u in ds.utterances.values())
