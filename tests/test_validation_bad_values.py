"""Wrong values inside the recordings a dataset lists: NaN and infinite samples, header values
no recording has, paths that are no regular file, and byte-identical copies shared with the
reference set without a wav_hash.scp. Each test builds a real dataset
(pathbench_flow/testing/kaldi_builder.py) and breaks one file; the finding must name the wav.scp
file, line, problem and fix."""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from test_validation_findings import as_reference, errors, failing, refused, write_hashes

from pathbench_flow.data.dataset import Dataset
from pathbench_flow.data.kaldi import Finding
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.data.validation import DatasetError
from pathbench_flow.demo.corpus import make_demo
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.kaldi_builder import build_dataset, tone, write_lines


def only(err: DatasetError) -> Finding:
    (finding,) = errors(err)
    return finding


def at_line(finding: Finding, root: Path, line: int, value: str) -> bool:
    return (finding.file, finding.line, finding.value) == (str(root / "wav.scp"), line, value)


# ------------------------------------------------------------ NaN and infinite samples
@pytest.mark.parametrize("subtype", ["FLOAT", "DOUBLE"])
def test_a_float_wav_of_nan_is_refused(tmp_path, subtype):
    root = build_dataset(tmp_path)
    sf.write(root / "wav" / "spk2_u0.wav", np.full(16000, np.nan), 16000, subtype=subtype)
    finding = only(failing(root))
    assert at_line(finding, root, 3, "wav/spk2_u0.wav") and finding.utterances == ("spk2_u0",)
    assert finding.problem == (
        "recording spk2_u0: audio holds 16000 of 16000 samples that are not finite numbers "
        "(16000 NaN, 0 infinite) from 0.000 s to 1.000 s"
    )
    assert finding.fix.startswith("export the recording again from its source")


@pytest.mark.parametrize(
    "value, counts", [(np.nan, "160 NaN, 0 infinite"), (np.inf, "0 NaN, 160 infinite")]
)
def test_ten_ms_of_non_finite_samples_inside_speech_are_refused(tmp_path, value, counts):
    root = build_dataset(tmp_path)
    speech = tone(1.0)
    speech[8000:8160] = value
    speech[8080] = -np.inf if value == np.inf else value
    sf.write(root / "wav" / "spk1_u1.wav", speech, 16000, subtype="FLOAT")
    finding = only(failing(root))
    assert at_line(finding, root, 2, "wav/spk1_u1.wav")
    assert f"160 of 16000 samples that are not finite numbers ({counts})" in finding.problem
    assert "from 0.500 s to 0.510 s" in finding.problem
    assert Dataset(root, on_error="drop").dropped == ["spk1_u1"]


def test_nan_in_a_segmented_recording_refuses_its_utterances(tmp_path):
    root = build_dataset(tmp_path, segments=True)
    stereo = np.stack([tone(2.0), tone(2.0)], axis=1)
    stereo[24000, 1] = np.nan  # one sample of one channel, at 1.5 s
    sf.write(root / "wav" / "spk1_rec.wav", stereo, 16000, subtype="FLOAT")
    finding = only(failing(root))
    assert at_line(finding, root, 1, "wav/spk1_rec.wav")
    assert finding.utterances == ("spk1_u0", "spk1_u1")
    assert "1 of 64000 samples" in finding.problem and "from 1.500 s to 1.500 s" in finding.problem


# ------------------------------------------------------------ header values
FMT_FIELDS = {
    "channels": (22, "<H"),
    "sample_rate": (24, "<I"),
    "byte_rate": (28, "<I"),
    "block_align": (32, "<H"),
}
"""Where the fields of the ``fmt `` chunk lie in a file libsndfile wrote (it starts at 12)."""


def patch_header(path: Path, **values: int) -> None:
    raw = bytearray(path.read_bytes())
    assert raw[12:16] == b"fmt "
    for name, value in values.items():
        offset, code = FMT_FIELDS[name]
        struct.pack_into(code, raw, offset, value)
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize(
    "values, problem",
    [
        (
            {"sample_rate": 2_100_000_000, "byte_rate": 4_200_000_000},
            "sample rate of 2100000000 Hz, outside the 4000-384000 Hz",
        ),
        ({"sample_rate": 1, "byte_rate": 2}, "sample rate of 1 Hz, outside"),
        ({"sample_rate": 705_600, "byte_rate": 1_411_200}, "sample rate of 705600 Hz"),
        (
            {"channels": 1000, "block_align": 2000, "byte_rate": 32_000_000},
            "1000 channels, more than the 64 of the largest microphone arrays",
        ),
        (
            {"block_align": 4, "byte_rate": 64000},
            "block align of 4 bytes where 1 channel(s) of 16 bits take 2",
        ),
        (
            {"byte_rate": 12345},
            "declares 12345 bytes per second where 16000 Hz × 2 bytes per frame make 32000",
        ),
        ({"byte_rate": 0}, "declares 0 bytes per second"),
    ],
)
def test_header_values_no_recording_has_are_refused(tmp_path, values, problem):
    """libsndfile opens each of these files; validation refuses them before decoding."""
    root = build_dataset(tmp_path)
    path = root / "wav" / "spk2_u1.wav"
    patch_header(path, **values)
    assert sf.info(str(path)).frames > 0
    finding = only(failing(root))
    assert at_line(finding, root, 4, "wav/spk2_u1.wav") and finding.utterances == ("spk2_u1",)
    assert finding.problem.startswith("recording spk2_u1: audio file is damaged: its ")
    assert problem in finding.problem
    assert finding.fix.startswith("export the recording again")


def test_a_real_65_channel_file_is_refused(tmp_path):
    root = build_dataset(tmp_path)
    sf.write(root / "wav" / "spk1_u0.wav", np.tile(tone(0.1)[:, None], 65), 16000)
    assert "65 channels, more than the 64" in only(failing(root)).problem


def test_a_truncated_file_declaring_no_byte_rate_is_still_refused(tmp_path):
    """The truncation check divides by the byte rate; a zero one no longer hides the damage."""
    root = build_dataset(tmp_path)
    path = root / "wav" / "spk2_u0.wav"
    patch_header(path, byte_rate=0)
    path.write_bytes(path.read_bytes()[:-16000])
    assert "0 bytes per second" in only(failing(root)).problem


# ------------------------------------------------------------ paths that are no file
def point(root: Path, utt: str, location: str) -> None:
    """List ``location`` as the audio of ``utt`` in wav.scp."""
    lines = (root / "wav.scp").read_text().splitlines()
    lines = [f"{utt} {location}" if ln.split()[0] == utt else ln for ln in lines]
    write_lines(root / "wav.scp", lines)


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_a_character_device_is_named_and_never_read(tmp_path):
    """/dev/null rather than /dev/zero: should a regression read it, it ends at once."""
    root = build_dataset(tmp_path)
    point(root, "spk2_u0", "/dev/null")
    finding = only(failing(root))
    assert at_line(finding, root, 3, "/dev/null")
    assert (
        finding.problem == "recording spk2_u0: audio path is a character device, not a regular file"
    )


def test_a_directory_is_named(tmp_path):
    root = build_dataset(tmp_path)
    point(root, "spk1_u1", "wav")
    finding = only(failing(root))
    assert at_line(finding, root, 2, "wav") and "is a directory, not a regular" in finding.problem


def test_a_named_pipe_is_named_and_never_opened(tmp_path):
    root = build_dataset(tmp_path)
    fifo = root / "wav" / "spk2_u0.wav"
    fifo.unlink()
    os.mkfifo(fifo)
    # A writer waiting for a reader: a regression that opens the pipe reads EOF and fails
    # this test instead of hanging it.
    writer = threading.Thread(target=lambda: os.close(os.open(fifo, os.O_WRONLY)), daemon=True)
    writer.start()
    finding = only(failing(root))
    # Lets the writer finish: an open for reading releases a writer already waiting in its
    # open, so under load, where the thread may not have reached it yet, open again.
    deadline = time.monotonic() + 10
    while writer.is_alive() and time.monotonic() < deadline:
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(timeout=0.05)
    assert not writer.is_alive()
    assert at_line(finding, root, 3, "wav/spk2_u0.wav")
    assert finding.problem.endswith(": audio path is a named pipe (FIFO), not a regular file")


def test_a_dangling_symlink_is_missing_and_says_where_it_points(tmp_path):
    root = build_dataset(tmp_path)
    link = root / "wav" / "spk1_u0.wav"
    link.unlink()
    link.symlink_to(root / "gone.wav")
    finding = only(failing(root))
    assert at_line(finding, root, 1, "wav/spk1_u0.wav")
    assert finding.problem.endswith(f"missing (a symbolic link to {root / 'gone.wav'})")


# ------------------------------------------------ byte-identical copies, no wav_hash.scp
def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copied(scratch: Path, *, segments: bool = False) -> tuple[Path, Path]:
    """A test and a control dataset whose control spk1 recording(s) are byte-identical copies
    of the test set's, at the control set's own paths, under the control set's own ids
    (``ref_spk1_u0`` ...)."""
    test = build_dataset(scratch / "test", segments=segments)
    control = build_dataset(scratch / "control", segments=segments, id_prefix="ref_")
    for name in ("spk1_rec",) if segments else ("spk1_u0",):
        shutil.copy(test / "wav" / f"{name}.wav", control / "wav" / f"{name}.wav")
    return test, control


@pytest.mark.parametrize("wav_hash", ["none", "test", "control", "stale"])
def test_a_copy_is_found_by_its_digest(tmp_path, wav_hash):
    """Without wav_hash.scp, with one on either side only (its digests compare with computed
    ones) and with a stale one that validation does not verify (the computed digest wins)."""
    test, control = copied(tmp_path)
    if wav_hash in ("test", "control"):
        write_hashes(test if wav_hash == "test" else control)
    if wav_hash == "stale":
        write_lines(control / "wav_hash.scp", [f"ref_spk1_u0 {'0' * 64}"])
    finding = only(refused(test, control, tmp_path))
    assert finding.value == "spk1_u0 = ref_spk1_u0" and finding.utterances == ("ref_spk1_u0",)
    assert f"reference dataset {control} shares 1 recording(s) with test dataset {test}" in (
        finding.problem
    )
    assert "the same SHA-256" in finding.problem and "scored against themselves" in finding.problem
    dropped = as_reference(test, control, tmp_path, on_error="drop")
    assert dropped.dropped == ["ref_spk1_u0"]
    kept = load_manifest(tmp_path / "reference_manifest.parquet")
    assert list(kept["utt_id"]) == ["ref_spk1_u1", "ref_spk2_u0", "ref_spk2_u1"]
    assert list(kept["audio_sha256"]) == [
        sha256(control / "wav" / f"{utt.removeprefix('ref_')}.wav") for utt in kept["utt_id"]
    ]


def test_a_copy_under_another_transcription_is_a_warning(tmp_path):
    test, control = copied(tmp_path)
    lines = (control / "text").read_text().splitlines()
    write_lines(control / "text", ["ref_spk1_u0 A horse ran.", *lines[1:]])
    reference = as_reference(test, control, tmp_path, shared_speaker_ids="distinct")
    (warning,) = [f for f in reference.findings if f.severity == "warning"]
    assert warning.value == "spk1_u0 = ref_spk1_u0" and "under different transcriptions" in (
        warning.problem
    )
    assert [f.severity for f in reference.findings] == ["warning"]


def test_a_copied_recording_shares_only_the_segments_whose_times_meet(tmp_path):
    """Both sets cut spk1_u0 (0-0.9 s) and spk1_u1 (1-1.9 s) from copies of one recording:
    each is shared with its twin, never with the other segment."""
    test, control = copied(tmp_path, segments=True)
    finding = only(refused(test, control, tmp_path))
    assert finding.value == "spk1_u0 = ref_spk1_u0, spk1_u1 = ref_spk1_u1"
    # Test keeps the first segment only, control the second: the same file, no shared audio.
    for root, drop in ((test, "spk1_u1"), (control, "ref_spk1_u0")):
        for name in ("segments", "text", "utt2spk"):
            lines = (root / name).read_text().splitlines()
            write_lines(root / name, [ln for ln in lines if not ln.startswith(drop)])
    assert not as_reference(test, control, tmp_path, shared_speaker_ids="distinct").findings


def test_segments_of_one_recording_carry_its_digest(tmp_path):
    root = build_dataset(tmp_path / "d", segments=True)
    validate_dataset(root, tmp_path / "m.parquet", tmp_path / "v.json", n_shards=1)
    frame = load_manifest(tmp_path / "m.parquet").set_index("utt_id")["audio_sha256"]
    digest = sha256(root / "wav" / "spk1_rec.wav")
    assert frame["spk1_u0"] == frame["spk1_u1"] == digest != frame["spk2_u0"]
    without_audio = Dataset(root, check_audio=False).to_frame()
    assert set(without_audio["audio_sha256"]) == {""}


# ------------------------------------------------------------ what stays valid
@pytest.mark.parametrize("layout", ["22050 and 44100 Hz", "FLOAT", "DOUBLE", "segments"])
def test_valid_datasets_still_pass(tmp_path, layout):
    root = build_dataset(tmp_path, segments=layout == "segments")
    for k, wav in enumerate(sorted((root / "wav").glob("*.wav"))):
        if layout == "22050 and 44100 Hz":
            rate = (22050, 44100)[k % 2]
            sf.write(wav, tone(1.0, rate=rate), rate, subtype="PCM_16")
        elif layout in ("FLOAT", "DOUBLE"):  # float WAVs may exceed full scale
            sf.write(wav, 1.5 * tone(1.0, freq=200.0 + k), 16000, subtype=layout)
    ds = Dataset(root)
    assert not ds.findings and len(ds.utterances) == 4


def test_the_demo_corpus_still_validates(tmp_path):
    demo = make_demo(tmp_path / "demo", n_pathological=3, n_control=2, n_utterances=2)
    test = demo / "pathological"
    validate_dataset(test, tmp_path / "m.parquet", tmp_path / "v.json", n_shards=1)
    reference = validate_dataset(
        demo / "control",
        tmp_path / "r.parquet",
        tmp_path / "r.json",
        n_shards=1,
        test_manifest=tmp_path / "m.parquet",
        test_directory=test,
    )
    assert not reference.findings and len(reference.utterances) == 4
