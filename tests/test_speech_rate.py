"""Syllable-nucleus speech rate and pause fraction on signals with a known syllable count."""

import numpy as np
import pytest

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.measures.speech_rate import pause_fraction, speech_rate, syllable_nuclei
from pathbench_flow.testing import RECORDINGS as FIXTURES

LEAD_S = 0.5


def syllables(rate_hz: float, seconds: float, voiced: bool = True, depth: float = 1.0):
    """``rate_hz`` syllable-like bursts per second, framed by LEAD_S of near-silence.

    Each burst is a raised-sine envelope over 60 % of the syllable period; ``depth`` < 1 keeps
    the envelope from falling to silence between bursts. The carrier is a harmonic voice (or
    white noise when ``voiced`` is False); a faint noise floor keeps the silences realistic.
    """
    rng = np.random.default_rng(1)
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    if voiced:
        phase = 2 * np.pi * np.cumsum(120.0 * (1 + 0.05 * np.sin(np.pi * t))) / SAMPLE_RATE
        carrier = sum(np.sin(k * phase) / k for k in range(1, 20))
    else:
        carrier = rng.standard_normal(t.size)
    position = (t * rate_hz) % 1.0
    burst = np.where(position < 0.6, np.sin(np.pi * position / 0.6) ** 2, 0.0)
    envelope = 1.0 - depth + depth * burst
    lead = np.zeros(int(LEAD_S * SAMPLE_RATE))
    speech = np.concatenate([lead, 0.3 * carrier * envelope, lead])
    return speech + 1e-4 * rng.standard_normal(speech.size)


def test_pathbench_reference_clip_has_rate_zero():
    audio = load_audio(FIXTURES / "BLUE_japanese10.wav")
    assert speech_rate(audio, SAMPLE_RATE) == 0.0


@pytest.mark.parametrize("rate_hz", [2.0, 4.0, 6.0])
def test_counts_known_number_of_syllables(rate_hz):
    seconds = 5.0
    audio = syllables(rate_hz, seconds)
    expected = rate_hz * seconds
    assert abs(syllable_nuclei(audio, SAMPLE_RATE).size - expected) <= 1
    total_s = seconds + 2 * LEAD_S
    assert speech_rate(audio, SAMPLE_RATE) == pytest.approx(expected / total_s, abs=1 / total_s)


def test_nuclei_fall_inside_bursts():
    nuclei = syllable_nuclei(syllables(4.0, 5.0), SAMPLE_RATE) - LEAD_S
    # Bursts occupy the first 60 % of every 0.25 s period; their peaks are at 30 %.
    assert np.all(np.abs((nuclei * 4.0) % 1.0 - 0.3) < 0.15)


def test_unvoiced_bursts_are_not_syllables():
    assert speech_rate(syllables(4.0, 5.0, voiced=False), SAMPLE_RATE) == 0.0


def test_peaks_without_a_dip_are_not_separate_syllables():
    # 15 % amplitude modulation is about 1.4 dB: below the 2 dB dip, so at most one nucleus.
    shallow = syllables(4.0, 5.0, depth=0.15)
    assert syllable_nuclei(shallow, SAMPLE_RATE).size <= 1


@pytest.mark.parametrize("samples", [0, 100, 800])
def test_too_short_gives_zero(samples):
    audio = syllables(4.0, 1.0)[:samples]
    assert speech_rate(audio, SAMPLE_RATE) == 0.0
    assert pause_fraction(audio, SAMPLE_RATE) == 0.0


def test_pause_fraction_counts_only_long_silences():
    speech = syllables(4.0, 1.0)[int(LEAD_S * SAMPLE_RATE) : -int(LEAD_S * SAMPLE_RATE)]

    def gap(seconds):
        return 1e-4 * np.random.default_rng(2).standard_normal(int(seconds * SAMPLE_RATE))

    audio = np.concatenate([speech, gap(1.0), speech, gap(0.2), speech])
    # Only the 1 s gap is a pause (lengthened by the 0.1 s silent tail of the last syllable
    # period before it); the 0.2 s gap is shorter than the 0.3 s minimum.
    assert pause_fraction(audio, SAMPLE_RATE) == pytest.approx(1.1 / 4.2, abs=0.03)
    assert pause_fraction(speech, SAMPLE_RATE) == 0.0
    # The 0.5 s lead-in and lead-out are pauses too; the 0.1 s gaps between bursts are not.
    assert pause_fraction(syllables(4.0, 5.0), SAMPLE_RATE) == pytest.approx(1.0 / 6.0, abs=0.03)
