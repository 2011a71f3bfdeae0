"""Pitch measures: PathBench reference value, ordering on synthetic voices, edge cases, and
the one unvoiced rule of every pitch measure."""

import librosa
import numpy as np
import parselmouth
import pytest

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.status import OK, UNVOICED, NoScore
from pathbench_flow.evaluators.signal import StdPitchEvaluator
from pathbench_flow.evaluators.speaker import F0RangeEvaluator
from pathbench_flow.measures.pitch import f0_range, std_pitch, voiced_f0, voicing_at
from pathbench_flow.testing import RECORDINGS as FIXTURES
from pathbench_flow.testing.speech_fixtures import spoken_sentences


def voice(f0_hz: np.ndarray) -> np.ndarray:
    """Harmonic-rich voiced signal following the per-sample F0 contour ``f0_hz``."""
    phase = 2 * np.pi * np.cumsum(f0_hz) / SAMPLE_RATE
    return 0.1 * sum(np.sin(k * phase) / k for k in range(1, 15))


def contour(seconds: float, hz: float, semitone_depth: float = 0.0) -> np.ndarray:
    """F0 at ``hz`` with a 2 Hz sinusoidal excursion of ``semitone_depth`` semitones."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return hz * 2 ** (semitone_depth * np.sin(2 * np.pi * 2.0 * t) / 12)


def test_std_pitch_matches_published_pathbench_value():
    audio = load_audio(FIXTURES / "BLUE_japanese10.wav")
    assert StdPitchEvaluator().score_loaded(audio).value == pytest.approx(0.1828, abs=5e-5)
    assert std_pitch(audio, SAMPLE_RATE) == pytest.approx(0.1828, abs=1e-3)


def std_pitch_by_hand(audio: np.ndarray) -> float:
    """PathBench's procedure: Praat's default pitch, voiced frames, 39.86·log10, population SD."""
    f0 = parselmouth.Sound(audio, sampling_frequency=16000).to_pitch().selected_array["frequency"]
    return float(np.std(39.86 * np.log10(f0[f0 > 0])))


@pytest.mark.parametrize("name", ["BLUE_japanese10", "BLUE_english32", "test_audio"])
def test_compat_std_pitch_equals_the_procedure_by_hand_on_fixtures(name):
    path = FIXTURES / f"{name}.wav"
    expected = std_pitch_by_hand(librosa.load(path, sr=16000)[0])
    assert StdPitchEvaluator().score_loaded(load_audio(path)).value == expected


def test_compat_std_pitch_equals_the_procedure_by_hand_on_speech():
    for audio in spoken_sentences()[:4]:
        as_pathbench_reads_it = audio.astype(np.float32)
        score = StdPitchEvaluator().score_loaded(as_pathbench_reads_it.astype(np.float64))
        assert score.value == std_pitch_by_hand(as_pathbench_reads_it)
        exact = StdPitchEvaluator(compat="none").score_loaded(as_pathbench_reads_it)
        # 39.86 against 12 / log10(2) = 39.8631...: the spread scales by their ratio.
        assert exact.value == pytest.approx(score.value * (12 / np.log10(2) / 39.86), rel=1e-9)


def test_modulated_voice_has_larger_std_pitch_than_monotone():
    monotone = std_pitch(voice(contour(2.0, 120.0)), SAMPLE_RATE)
    modulated = std_pitch(voice(contour(2.0, 120.0, semitone_depth=2.0)), SAMPLE_RATE)
    assert monotone < 0.1
    # The SD of a sinusoid of amplitude A is A / sqrt(2).
    assert modulated == pytest.approx(2.0 / np.sqrt(2.0), rel=0.1)


def test_std_pitch_is_register_independent():
    low = std_pitch(voice(contour(2.0, 110.0, semitone_depth=2.0)), SAMPLE_RATE)
    high = std_pitch(voice(contour(2.0, 220.0, semitone_depth=2.0)), SAMPLE_RATE)
    assert low == pytest.approx(high, rel=0.1)


@pytest.mark.parametrize(
    "audio",
    [np.zeros(SAMPLE_RATE), np.random.default_rng(0).standard_normal(SAMPLE_RATE)],
    ids=["silence", "white-noise"],
)
def test_too_little_voicing_is_unvoiced_in_every_pitch_measure(audio):
    """One rule: status unvoiced; NaN, or PathBench's 0.0 in compat mode (the default)."""
    assert voiced_f0(audio, SAMPLE_RATE).size < 2
    with pytest.raises(NoScore) as caught:
        std_pitch(audio, SAMPLE_RATE)
    assert caught.value.status == UNVOICED
    for compat, expected in (("pathbench", 0.0), ("none", None)):
        utterance = StdPitchEvaluator(compat=compat).score_loaded(audio)
        speaker = F0RangeEvaluator(compat=compat).score_loaded([audio], [])
        for score in (utterance, speaker):
            assert (score.value, score.status) == (expected, UNVOICED)


def test_a_clip_too_short_for_praat_has_no_pitch_spread_in_either_mode():
    """PathBench's to_pitch raises under 40 ms, so its std_pitch is None there (not its 0.0
    for unvoiced clips); its F0 range skips such a clip like an unvoiced one."""
    clip = np.zeros(int(0.039 * SAMPLE_RATE))
    for compat, range_value in (("pathbench", 0.0), ("none", None)):
        utterance = StdPitchEvaluator(compat=compat).score_loaded(clip)
        assert (utterance.value, utterance.status) == (None, "too_short")
        speaker = F0RangeEvaluator(compat=compat).score_loaded([clip], [])
        assert (speaker.value, speaker.status) == (range_value, UNVOICED)


def test_voiced_speech_is_ok_in_both_modes():
    voiced = voice(contour(1.0, 120.0, semitone_depth=1.0))
    for compat in ("pathbench", "none"):
        assert StdPitchEvaluator(compat=compat).score_loaded(voiced).status == OK
        assert F0RangeEvaluator(compat=compat).score_loaded([voiced], []).status == OK
    with pytest.raises(ValueError, match=r"evaluator_options\.std_pitch\.compat"):
        StdPitchEvaluator(compat="praat")


def test_f0_range_pools_all_utterances():
    low, high = voice(contour(1.0, 100.0)), voice(contour(1.0, 200.0))
    assert f0_range([low, high], SAMPLE_RATE) == pytest.approx(100.0, abs=5.0)
    assert f0_range([low], SAMPLE_RATE) < 5.0


@pytest.mark.parametrize("audios", [[np.zeros(SAMPLE_RATE)], []], ids=["silence", "no-audio"])
def test_f0_range_without_voicing_has_no_score(audios):
    with pytest.raises(NoScore) as caught:
        f0_range(audios, SAMPLE_RATE)
    assert caught.value.status == UNVOICED


def test_voicing_at_uses_nearest_frame():
    frame_times = np.array([0.02, 0.03, 0.04])
    f0 = np.array([0.0, 120.0, 0.0])
    voiced = voicing_at(np.array([0.0, 0.026, 0.034, 0.036, 1.0]), frame_times, f0)
    assert voiced.tolist() == [False, True, True, False, False]
    assert not voicing_at(np.array([0.5]), np.empty(0), np.empty(0)).any()


def test_f0_range_matches_published_pathbench_value_of_the_four_test_clips():
    names = ["BLUE_japanese10", "BLUE_english32", "BLUE_english33", "BLUE_english34"]
    audios = [load_audio(FIXTURES / f"{name}.wav") for name in names]
    assert F0RangeEvaluator().score_loaded(audios, []).value == pytest.approx(152.34, abs=5e-3)
