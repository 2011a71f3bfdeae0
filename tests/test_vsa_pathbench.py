"""PathBench's vowel space area (``vsa``) against its procedure run by hand, and the rules
around it: tables per language, gender, failure as 0.0 with a status, claimed languages."""

import subprocess
import tempfile
from functools import cache
from pathlib import Path

import numpy as np
import parselmouth
import pytest
from parselmouth.praat import call
from scipy.spatial import ConvexHull
from sklearn.cluster import KMeans
from sklearn.mixture import GaussianMixture
from threadpoolctl import threadpool_limits

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.status import UNSUPPORTED_LANGUAGE, UNVOICED
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.base import Item
from pathbench_flow.evaluators.speaker import VSACornersEvaluator, VSAEvaluator
from pathbench_flow.measures.vowel_tables import PATHBENCH_TABLES, VOWEL_FORMANTS
from pathbench_flow.measures.vsa_pathbench import estimated_gender, vsa_pathbench
from pathbench_flow.testing import RECORDINGS as FIXTURES
from pathbench_flow.testing.speech_fixtures import require_espeak, spoken_sentences


def vsa_by_hand(audios: list[np.ndarray], language: str) -> float:
    """PathBench's procedure through Praat commands and scikit-learn, step by step.

    Run under ``threadpool_limits(1)`` to equal the measure bit for bit; with scikit-learn's
    default threads the last bits follow the thread count (see the last test).
    """
    sounds = [parselmouth.Sound(audio, sampling_frequency=SAMPLE_RATE) for audio in audios]
    pitches = [call(sound, "To Pitch", 0.0, 75, 600) for sound in sounds]
    utterance_means = []
    for pitch in pitches:
        f0 = pitch.selected_array["frequency"]
        if (f0 > 0).any():
            utterance_means.append(f0[f0 > 0].mean())
    female = not utterance_means or np.mean(utterance_means) > 165
    ceiling = 5500 if female else 5000
    points = []
    for sound, pitch in zip(sounds, pitches, strict=True):
        formant = call(sound, "To Formant (burg)", 0.01, 5, ceiling, 0.05, 50)
        for frame in range(1, call(pitch, "Get number of frames") + 1):
            if call(pitch, "Get value in frame", frame, "Hertz") > 0:
                time = call(pitch, "Get time from frame number", frame)
                f1 = call(formant, "Get value at time", 1, time, "hertz", "linear")
                f2 = call(formant, "Get value at time", 2, time, "hertz", "linear")
                if not (np.isnan(f1) or np.isnan(f2)):
                    points.append([f1, f2])
    points = np.array(points)
    model = GaussianMixture(n_components=min(4, len(points)), random_state=0).fit(points)
    log_likelihood = model.score_samples(points)
    kept = points[log_likelihood >= log_likelihood.mean() - 2 * log_likelihood.std()]
    seeds = np.array(PATHBENCH_TABLES[language]["female" if female else "male"], dtype=float)
    centres = KMeans(n_clusters=len(seeds), init=seeds, n_init=1, random_state=0).fit(kept)
    return ConvexHull(centres.cluster_centers_).volume


def one_thread(function, *args):
    with threadpool_limits(limits=1):
        return function(*args)


@cache
def female_sentences() -> tuple[np.ndarray, ...]:
    """espeak-ng's female US English variant (mean F0 above 200 Hz), read back at 16 kHz."""
    require_espeak()
    audios = []
    with tempfile.TemporaryDirectory() as directory:
        for index, text in enumerate(["she sells sea shells by the sea shore", "a cat sat"]):
            path = Path(directory) / f"{index}.wav"
            subprocess.run(["espeak-ng", "-v", "en-us+f3", "-w", str(path), text], check=True)
            audios.append(load_audio(path))  # 22.05 kHz file: resampled as PathBench does
    return tuple(audios)


def test_table_sizes_are_pathbench_s():
    sizes = {language: len(table["male"]) for language, table in PATHBENCH_TABLES.items()}
    assert sizes == {"en": 12, "nl": 15, "es": 5, "it": 7, "cmn": 11}
    assert all(len(t["female"]) == len(t["male"]) for t in PATHBENCH_TABLES.values())


@pytest.mark.parametrize("language", ["en", "nl", "es", "it", "cmn"])
def test_male_speaker_equals_the_procedure_by_hand(language):
    audios = list(spoken_sentences()[:6])
    assert estimated_gender_of(audios) == "male"
    assert vsa_pathbench(audios, SAMPLE_RATE, language) == one_thread(vsa_by_hand, audios, language)


def test_female_speaker_equals_the_procedure_by_hand():
    audios = list(female_sentences())
    assert estimated_gender_of(audios) == "female"
    assert vsa_pathbench(audios, SAMPLE_RATE, "en") == one_thread(vsa_by_hand, audios, "en")


def test_pathbench_test_clips_as_one_speaker_equal_the_procedure_by_hand():
    names = ["BLUE_japanese10", "BLUE_english32", "BLUE_english33", "BLUE_english34"]
    audios = [load_audio(FIXTURES / f"{name}.wav") for name in names]
    score = VSAEvaluator().score_loaded(audios, [Item("u", "", language="en")])
    assert score.status == "ok"
    assert score.value == one_thread(vsa_by_hand, audios, "en")


def estimated_gender_of(audios: list[np.ndarray]) -> str:
    return estimated_gender(
        [
            parselmouth.Sound(a, sampling_frequency=SAMPLE_RATE)
            .to_pitch()
            .selected_array["frequency"]
            for a in audios
        ]
    )


def test_stated_gender_is_used_only_when_asked_for():
    audios = list(spoken_sentences()[:6])  # a male voice
    items = [Item("u", "", language="en", gender="f")]
    estimated = VSAEvaluator().score_loaded(audios, items).value
    stated = VSAEvaluator(use_spk2gender=True).score_loaded(audios, items).value
    assert estimated == vsa_pathbench(audios, SAMPLE_RATE, "en", "male")
    assert stated == vsa_pathbench(audios, SAMPLE_RATE, "en", "female") != estimated
    unknown = [Item("u", "", language="en", gender="")]  # no spk2gender entry: estimated
    assert VSAEvaluator(use_spk2gender=True).score_loaded(audios, unknown).value == estimated


def test_failures_score_zero_with_a_status_and_unsupported_languages_stay_empty():
    silent = VSAEvaluator().score_loaded([np.zeros(SAMPLE_RATE)], [Item("u", "", language="en")])
    assert (silent.value, silent.status) == (0.0, UNVOICED)
    one_vowel = VSAEvaluator().score_loaded(
        [spoken_sentences()[0][:4000]], [Item("u", "", language="nl")]
    )
    assert one_vowel.value == 0.0 and one_vowel.status != "ok"
    foreign = VSAEvaluator().score_loaded(
        list(spoken_sentences()[:2]), [Item("u", "", language="ja")]
    )
    assert (foreign.value, foreign.status) == (None, UNSUPPORTED_LANGUAGE)


def test_each_vowel_space_evaluator_claims_only_languages_it_has_tables_for():
    assert set(VSAEvaluator.languages) == set(PATHBENCH_TABLES) == {"en", "nl", "es", "it", "cmn"}
    assert set(VSACornersEvaluator.languages) == set(VOWEL_FORMANTS) == {"en", "nl", "es"}
    assert not VSACornersEvaluator().supports("cmn") and not VSACornersEvaluator().supports("it")
    assert registry.info("vsa").pathbench_compatible
    assert not registry.info("vsa_corners").pathbench_compatible
    assert registry.info("vsa_corners").trimmable and registry.info("vsa").trimmable
    with pytest.raises(ValueError, match="'vsa_corners'"):
        VSAEvaluator(compat="none")


def test_is_deterministic_and_thread_count_only_touches_the_last_bits():
    audios = list(spoken_sentences()[6:12])
    value = vsa_pathbench(audios, SAMPLE_RATE, "en")
    assert value == vsa_pathbench(audios, SAMPLE_RATE, "en")
    # PathBench runs scikit-learn on every core: its value agrees to rounding.
    assert vsa_by_hand(audios, "en") == pytest.approx(value, rel=1e-12)
