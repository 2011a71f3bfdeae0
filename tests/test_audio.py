"""Audio loading gives exactly the samples of ``librosa.load(sr=16000, offset, duration)``.

PathBench loads every file that way, so PathBench-compatible values hold only if the samples
do: for 16 kHz files (the direct-read fast path), for files stored at other rates or with
several channels (resampled and down-mixed by librosa), and for Kaldi ``segments``.
"""

from pathlib import Path

import librosa
import numpy as np
import pytest
import soundfile as sf

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.testing import RECORDINGS as FIXTURES
from pathbench_flow.testing.speech_fixtures import spoken_sentences

NAMES = ["BLUE_japanese10", "BLUE_english32", "BLUE_english33", "BLUE_english34", "test_audio"]


def as_pathbench_loads(path: Path, start: float = 0.0, end: float = -1.0) -> np.ndarray:
    duration = None if end < 0 else end - start
    audio, rate = librosa.load(path, sr=16000, offset=start, duration=duration)
    assert rate == 16000
    return audio.astype(np.float64)


@pytest.mark.parametrize("name", NAMES)
def test_fast_path_for_whole_16k_files_is_identical(name):
    path = FIXTURES / f"{name}.wav"
    assert sf.info(path).samplerate == SAMPLE_RATE
    np.testing.assert_array_equal(load_audio(path), as_pathbench_loads(path))


@pytest.fixture(scope="module")
def stored_at_other_rates(tmp_path_factory) -> dict[str, Path]:
    """One sentence stored as 22.05 kHz PCM-16, 44.1 kHz stereo PCM-24 and 8 kHz float."""
    speech = np.concatenate(spoken_sentences()[:2])
    directory = tmp_path_factory.mktemp("rates")
    files = {}
    for name, rate, channels, subtype in [
        ("22k_mono", 22050, 1, "PCM_16"),
        ("44k_stereo", 44100, 2, "PCM_24"),
        ("8k_float", 8000, 1, "FLOAT"),
    ]:
        audio = librosa.resample(speech, orig_sr=SAMPLE_RATE, target_sr=rate)
        if channels == 2:
            audio = np.column_stack([audio, 0.5 * np.roll(audio, 7)])
        files[name] = directory / f"{name}.wav"
        sf.write(files[name], 0.9 * audio / np.abs(audio).max(), rate, subtype)
    return files


@pytest.mark.parametrize("name", ["22k_mono", "44k_stereo", "8k_float"])
def test_other_rates_and_channels_equal_librosa(stored_at_other_rates, name):
    path = stored_at_other_rates[name]
    loaded = load_audio(path)
    np.testing.assert_array_equal(loaded, as_pathbench_loads(path))
    assert len(loaded) == pytest.approx(sf.info(path).duration * SAMPLE_RATE, abs=1)


@pytest.mark.parametrize(("start", "end"), [(0.0, 1.0), (0.2137, 1.5003), (1.0, -1.0)])
def test_segments_equal_librosa_offset_and_duration(stored_at_other_rates, start, end):
    for path in [stored_at_other_rates["22k_mono"], FIXTURES / "test_audio.wav"]:
        np.testing.assert_array_equal(
            load_audio(path, start, end), as_pathbench_loads(path, start, end)
        )


def test_empty_or_reversed_segment_is_empty():
    path = FIXTURES / "test_audio.wav"
    assert load_audio(path, 1.0, 1.0).size == 0
    assert load_audio(path, 1.0, 0.5).size == 0
