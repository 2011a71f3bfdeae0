"""P-STOI / P-ESTOI: the LTFAT Gabor transform, the template, the scores and their statuses.

The behavioural tests use synthetic "utterances" with speech-like structure (a gliding voice
source through moving formants, syllable-rate amplitude modulation, frication between
syllables) because the P-ESTOI envelopes need a signal whose spectrum changes over time;
several synthetic speakers saying the same synthetic "text" stand in for healthy references.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import librosa
import numpy as np
import pytest
import soundfile as sf

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.status import NO_REFERENCES, TOO_FEW_REFERENCES, TOO_SHORT, NoScore
from pathbench_flow.measures.pestoi import (
    gabor_magnitudes,
    p_estoi,
    p_estoi_from_audio,
    p_stoi,
    pestoi_features,
    pestoi_template,
    third_octave_matrix,
)
from pathbench_flow.testing import RECORDINGS as FIXTURES


def speech_like(text_seed: int, speaker_seed: int, seconds: float = 1.2) -> np.ndarray:
    """A synthetic utterance: ``text_seed`` fixes the formant path, ``speaker_seed`` the voice.

    Speakers differ in tempo (+-10 %), vocal-tract length (formants +-5 %), pitch and
    frication noise, so references of one text are alike but never identical.
    """
    text = np.random.default_rng(text_seed)
    speaker = np.random.default_rng(1000 + speaker_seed)
    knots = np.linspace(0.0, 1.0, 10)
    f1_knots, f2_knots = text.uniform(300, 800, knots.size), text.uniform(900, 2400, knots.size)
    seconds *= speaker.uniform(0.9, 1.1)
    tract, mean_f0 = speaker.uniform(0.95, 1.05), speaker.uniform(100, 140)
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    progress = t / seconds
    f0 = mean_f0 * (1.0 + 0.1 * np.sin(2 * np.pi * progress + speaker.uniform()))
    phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    f1 = tract * np.interp(progress, knots, f1_knots)
    f2 = tract * np.interp(progress, knots, f2_knots)
    voiced = np.zeros_like(t)
    for harmonic in range(1, 50):
        frequency = harmonic * f0
        gain = (
            np.exp(-(((frequency - f1) / 150) ** 2))
            + 0.6 * np.exp(-(((frequency - f2) / 250) ** 2))
            + 0.02
        )
        voiced += gain * np.sin(harmonic * phase) / np.sqrt(harmonic)
    frication = np.diff(speaker.standard_normal(t.size), prepend=0.0)
    signal = voiced * np.sin(np.pi * 5 * progress) ** 2
    signal += 0.05 * frication * np.cos(np.pi * 5 * progress) ** 2
    return 0.5 * signal / np.max(np.abs(signal))


def add_noise(signal: np.ndarray, snr_db: float, seed: int = 99) -> np.ndarray:
    """``signal`` plus white Gaussian noise at ``snr_db`` relative to the signal's power."""
    noise = np.random.default_rng(seed).standard_normal(signal.size)
    return signal + noise * np.sqrt(np.mean(signal**2) / 10 ** (snr_db / 10))


def stretch(signal: np.ndarray) -> np.ndarray:
    """The same utterance 20 % slower, pitch kept (phase vocoder with a 32 ms speech window)."""
    return librosa.effects.time_stretch(signal, rate=1 / 1.2, n_fft=512)


def ltfat_dgtreal_direct(signal: np.ndarray) -> np.ndarray:
    """LTFAT ``dgtreal(f, gabtight(firwin('hamming', 512), 256, 512), 256, 512)`` by its sum.

    c(m, n) = sum_l f(l) g_t(l - 256 n) exp(-2 pi i m l / 512) over the zero-padded, periodic
    signal, with LTFAT's zero-phase window layout and the canonical tight window computed from
    the frame operator's diagonal. Written from the definitions, sharing nothing with the module.
    """
    hop, channels, window_length = 256, 512, 512
    length = int(np.ceil(max(signal.size, 1) / 512)) * 512
    padded = np.zeros(length)
    padded[: signal.size] = signal
    x = np.concatenate(
        [np.arange(0, 0.5, 1 / window_length), np.arange(-0.5, 0, 1 / window_length)]
    )
    fir = (0.54 + 0.46 * np.cos(2 * np.pi * x)) * (np.abs(x) < 0.5)
    window = np.zeros(length)
    window[: window_length // 2] = fir[: window_length // 2]
    window[-window_length // 2 :] = fir[window_length // 2 :]
    samples = np.arange(length)
    shifts = [window[(samples - n * hop) % length] for n in range(length // hop)]
    frame_operator_diagonal = channels * np.sum(np.square(shifts), axis=0)
    tight = window / np.sqrt(frame_operator_diagonal)
    kernel = np.exp(-2j * np.pi * np.outer(np.arange(channels // 2 + 1), samples) / channels)
    columns = [kernel @ (padded * tight[(samples - n * hop) % length]) for n in range(len(shifts))]
    return np.stack(columns, axis=1)


@pytest.mark.parametrize("length", [300, 3333, 4096])
def test_gabor_transform_matches_direct_ltfat_definition(length: int) -> None:
    signal = np.random.default_rng(length).standard_normal(length)
    expected = np.abs(ltfat_dgtreal_direct(signal))
    np.testing.assert_allclose(gabor_magnitudes(signal), expected, rtol=0, atol=1e-10)


def test_third_octave_bands_tile_stoi_range_without_gaps() -> None:
    bands = third_octave_matrix()
    covered = [np.flatnonzero(row) for row in bands]
    assert all(np.array_equal(b, np.arange(b[0], b[-1] + 1)) for b in covered)  # contiguous
    assert all(a[-1] + 1 == b[0] for a, b in pairwise(covered))
    # 150 * 2**(-1/6) = 133.6 Hz -> bin 4 (125 Hz); 150 * 2**(29/6) = 4277 Hz -> bin 137.
    assert covered[0][0] == 4 and covered[-1][-1] == 136


def test_frames_with_digital_silence_are_deleted() -> None:
    voice = speech_like(1, 0)
    gap = np.zeros(20 * 256)
    with_silence = np.concatenate([voice, gap, voice])
    faint = 1e-4 * np.random.default_rng(0).standard_normal(gap.size)
    with_noise = np.concatenate([voice, faint, voice])
    assert pestoi_features(with_silence).shape[1] < pestoi_features(with_noise).shape[1] - 10


@pytest.fixture(scope="module")
def scene() -> dict[str, dict[str, float]]:
    """One test utterance, a template from three other speakers, and degraded test versions."""
    test = speech_like(1, 0)
    template = pestoi_template([pestoi_features(speech_like(1, s)) for s in (1, 2, 3)])
    versions = {"clean": test, "stretched": stretch(test)}
    versions |= {f"{snr} dB": add_noise(test, snr) for snr in (20, 10, 0)}
    features = {name: pestoi_features(audio) for name, audio in versions.items()}
    return {
        name: {"estoi": p_estoi(f, template), "stoi": p_stoi(f, template)}
        for name, f in features.items()
    }


def test_signal_against_copies_of_itself_scores_one() -> None:
    signal = speech_like(2, 0)
    assert p_estoi_from_audio(signal, [signal, signal]) == pytest.approx(1.0, abs=1e-12)
    template = pestoi_template([pestoi_features(signal)] * 2)
    assert p_stoi(pestoi_features(signal), template) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("measure", ["estoi", "stoi"])
def test_noise_lowers_the_score_monotonically(
    scene: dict[str, dict[str, float]], measure: str
) -> None:
    scores = [scene[name][measure] for name in ("clean", "20 dB", "10 dB", "0 dB")]
    assert scores == sorted(scores, reverse=True) and scores[0] - scores[-1] > 0.2


@pytest.mark.parametrize("measure", ["estoi", "stoi"])
def test_slower_speech_barely_moves_the_score(
    scene: dict[str, dict[str, float]], measure: str
) -> None:
    """DTW absorbs tempo: 20 % slower costs under a third of what 0 dB noise costs.

    Some cost remains from the phase vocoder's smearing, but it stays below 10 dB noise too.
    """
    clean, stretched = scene["clean"][measure], scene["stretched"][measure]
    assert abs(clean - stretched) < (clean - scene["0 dB"][measure]) / 3
    assert stretched > scene["10 dB"][measure]


def test_blue_fixture_gives_finite_scores() -> None:
    test = load_audio(FIXTURES / "BLUE_japanese10.wav")
    references = [load_audio(FIXTURES / f"BLUE_english3{i}.wav") for i in (2, 3, 4)]
    template = pestoi_template([pestoi_features(r) for r in references])
    features = pestoi_features(test)
    for score in (p_estoi(features, template), p_stoi(features, template)):
        assert np.isfinite(score) and -1.0 <= score <= 1.0


def test_one_reference_is_too_few_and_none_is_no_reference() -> None:
    signal = speech_like(3, 0)
    with pytest.raises(NoScore) as one:
        p_estoi_from_audio(signal, [speech_like(3, 1)])
    assert one.value.status == TOO_FEW_REFERENCES
    with pytest.raises(NoScore) as none:
        p_estoi_from_audio(signal, [])
    assert none.value.status == NO_REFERENCES
    with pytest.raises(NoScore) as only_silent:
        pestoi_template([pestoi_features(np.zeros(8000))])
    assert only_silent.value.status == NO_REFERENCES


def test_silent_test_scores_zero_and_a_blip_is_too_short() -> None:
    references = [speech_like(4, s) for s in (1, 2)]
    assert p_estoi_from_audio(np.zeros(16000), references) == 0.0
    template = pestoi_template([pestoi_features(r) for r in references])
    assert p_stoi(pestoi_features(np.zeros(16000)), template) == 0.0
    with pytest.raises(NoScore) as short:
        pestoi_features(np.random.default_rng(0).standard_normal(600))
    assert short.value.status == TOO_SHORT


def test_reference_sets_sharing_a_centroid_align_each_pair_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Like ``all`` references: each speaker of one text is compared with every other. The
    sets share the centroid, so a job aligns each (centroid, reference) pair once, and every
    score equals the uncached computation's to the last bit."""
    from pathbench_flow.evaluators.reference import PEstoiEvaluator
    from pathbench_flow.measures import pestoi

    paths = []
    for speaker in range(5):
        path = tmp_path / f"s{speaker}.wav"
        sf.write(path, speech_like(5, speaker), SAMPLE_RATE, subtype="FLOAT")
        paths.append(str(path))
    sets = {t: [(p, 0.0, -1.0) for i, p in enumerate(paths) if i != t] for t in range(1, 5)}
    expected = {
        t: p_estoi_from_audio(load_audio(paths[t]), [load_audio(p) for p, _s, _e in others])
        for t, others in sets.items()
    }
    aligned: list[int] = []
    part = pestoi.template_part
    monkeypatch.setattr(pestoi, "template_part", lambda c, r: aligned.append(1) or part(c, r))
    evaluator = PEstoiEvaluator()
    for t, others in sets.items():
        assert evaluator.score(f"u{t}", paths[t], 0.0, -1.0, tuple(others)).value == expected[t]
    # Speaker 0 is every set's centroid; the four sets hold its 4 other speakers, 3 each.
    assert len(aligned) == 4
