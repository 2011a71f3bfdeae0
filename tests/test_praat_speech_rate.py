"""PathBench's praat_speech_rate against the de Jong & Wempe procedure run as a Praat script.

The reference is written in Praat's own scripting language and run by Praat (through
parselmouth), a different path from the module's Python calls: a mismatch in thresholds, the
dip rule, voicing or the duration shows up as a different count.
"""

import numpy as np
import parselmouth
import pytest
from parselmouth.praat import call

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.status import TOO_SHORT
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.signal import PraatSpeechRateEvaluator
from pathbench_flow.measures.praat_speech_rate import (
    _window_minimum,
    praat_speech_rate,
    syllable_nuclei,
)
from pathbench_flow.testing import RECORDINGS as FIXTURES
from pathbench_flow.testing.speech_fixtures import (
    add_noise,
    recorded_utterances,
    require_espeak,
    spoken_sentences,
)

SYLLABLE_NUCLEI_SCRIPT = """
sound = selected("Sound")
duration = Get total duration
intensity = To Intensity: 50, 0, "yes"
minimum = Get minimum: 0, 0, "parabolic"
maximum = Get maximum: 0, 0, "parabolic"
loud = Get quantile: 0, 0, 0.99
threshold = loud - 25
if threshold < minimum
    threshold = minimum
endif
textgrid = To TextGrid (silences): -25 - (maximum - loud), 0.3, 0.1, "silent", "sounding"
selectObject: intensity
matrix = Down to Matrix
envelope = To Sound (slice): 1
extrema = To PointProcess (extrema): "Left", "yes", "no", "Sinc70"
candidates = Get number of points
peaks = 0
for i to candidates
    selectObject: extrema
    t = Get time from index: i
    selectObject: envelope
    v = Get value at time: 0, t, "cubic"
    if v > threshold
        peaks += 1
        time[peaks] = t
        level[peaks] = v
    endif
endfor
selectObject: sound
pitch = To Pitch (ac): 0.02, 30, 4, "no", 0.03, 0.25, 0.01, 0.35, 0.25, 450
nuclei = 0
if peaks >= 2
    current = level[1]
    for p to peaks - 1
        selectObject: intensity
        dip = Get minimum: time[p], time[p + 1], "none"
        keep = abs(current - dip) > 2
        current = Get value at time: time[p + 1], "cubic"
        if keep
            selectObject: pitch
            f0 = Get value at time: time[p], "Hertz", "linear"
            selectObject: textgrid
            interval = Get interval at time: 1, time[p]
            label$ = Get label of interval: 1, interval
            if f0 <> undefined and label$ = "sounding"
                nuclei += 1
            endif
        endif
    endfor
endif
rate = nuclei / duration
"""


def by_praat_script(audio: np.ndarray) -> tuple[int, float]:
    """(number of nuclei, rate) from the procedure as a Praat script."""
    sound = parselmouth.Sound(audio, sampling_frequency=SAMPLE_RATE)
    _, variables = parselmouth.praat.run(sound, SYLLABLE_NUCLEI_SCRIPT, return_variables=True)
    return int(variables["nuclei"]), float(variables["rate"])


def assert_as_praat_script(audio: np.ndarray) -> float:
    nuclei, rate = by_praat_script(audio)
    assert syllable_nuclei(audio, SAMPLE_RATE).size == nuclei
    assert praat_speech_rate(audio, SAMPLE_RATE) == rate
    return rate


def test_published_pathbench_value_of_the_test_clip_is_zero():
    audio = load_audio(FIXTURES / "BLUE_japanese10.wav")
    score = PraatSpeechRateEvaluator().score_loaded(audio)
    assert (score.value, score.status) == (0.0, "ok")
    assert assert_as_praat_script(audio) == 0.0


@pytest.mark.parametrize("name", ["BLUE_english32", "BLUE_english33", "test_audio"])
def test_fixture_audio_as_praat_script(name):
    assert_as_praat_script(load_audio(FIXTURES / f"{name}.wav"))


@pytest.mark.parametrize("index", range(0, 22, 3))
def test_synthetic_sentences_as_praat_script(index):
    rate = assert_as_praat_script(spoken_sentences()[index])
    assert 1.5 < rate < 6.0  # espeak-ng speaks 3-5 syllables per second


@pytest.mark.parametrize("snr_db", [10.0, 25.0])
def test_noisy_sentences_as_praat_script(snr_db):
    require_espeak()
    speech = np.concatenate([spoken_sentences()[1], np.zeros(SAMPLE_RATE // 2)])
    assert_as_praat_script(add_noise(speech, snr_db, seed=7))


def test_recorded_speech_as_praat_script():
    for path, _ in recorded_utterances()[:4]:
        assert_as_praat_script(load_audio(path))


def test_last_peak_never_counts_and_rate_uses_the_whole_duration():
    """Two syllables separated by silence: only the first has a dip after it."""
    sentence = spoken_sentences()[8]  # "five birds flew over the tall trees"
    nuclei = syllable_nuclei(sentence, SAMPLE_RATE)
    padded = np.concatenate([sentence, np.zeros(2 * SAMPLE_RATE)])
    # Silence adds duration, not nuclei: the rate falls by the duration ratio exactly.
    assert syllable_nuclei(padded, SAMPLE_RATE).size == nuclei.size
    assert praat_speech_rate(padded, SAMPLE_RATE) == pytest.approx(
        nuclei.size / (len(padded) / SAMPLE_RATE)
    )
    # The candidate peak of the last syllable has no following peak to dip before.
    assert nuclei.max() < len(sentence) / SAMPLE_RATE - 0.05


def test_too_short_and_empty_audio():
    assert PraatSpeechRateEvaluator().score_loaded(np.zeros(0)).value == 0.0
    short = PraatSpeechRateEvaluator().score_loaded(spoken_sentences()[0][:800])
    assert short.value is None and short.status == TOO_SHORT


def test_registered_trimmable_and_pathbench_only():
    info = registry.info("praat_speech_rate")
    assert info.pathbench_compatible and info.trimmable and info.unit == "syll/s"
    assert not registry.info("speech_rate").pathbench_compatible
    with pytest.raises(ValueError, match="this project's variant is the evaluator 'speech_rate'"):
        PraatSpeechRateEvaluator(compat="none")


def test_window_minimum_equals_praats_get_minimum():
    """Windows inside, across both ends and between two frames (no frame time in them)."""
    sound = parselmouth.Sound(spoken_sentences()[3], sampling_frequency=SAMPLE_RATE)
    intensity = sound.to_intensity(50.0)
    rng = np.random.default_rng(3)
    starts = rng.uniform(-0.1, sound.xmax + 0.1, 400)
    widths = np.concatenate([rng.uniform(0.0, 0.3, 300), rng.uniform(0.0, 0.4 * intensity.dx, 100)])
    frames = intensity.x1 + intensity.dx * np.arange(intensity.nx)
    windows = [(float(a), float(a + w)) for a, w in zip(starts, widths, strict=True)]
    windows += [(float(t), float(t + intensity.dx)) for t in frames[:20]]  # on frame times
    for start, end in windows:
        expected = call(intensity, "Get minimum", start, end, "None")
        found = _window_minimum(intensity, start, end)
        assert found == expected or (np.isnan(found) and np.isnan(expected)), (start, end)
