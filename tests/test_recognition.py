"""Recognition measures: WER, PER and GOP on synthetic and real English speech."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.status import NoScore
from pathbench_flow.common.transcripts import edit_distance
from pathbench_flow.measures import recognition, words_per_minute
from pathbench_flow.measures.recognition import gop, per, wer
from pathbench_flow.measures.words_per_minute import wpm
from pathbench_flow.testing.speech_fixtures import (
    FIXTURES,
    SENTENCES,
    add_noise,
    recorded_utterances,
    shared_models,
    spoken_sentences,
)
from pathbench_flow.trimming.sphinx import (
    SphinxModels,
    align_phones,
    align_words,
    dictionary_words,
    is_english,
    to_pcm16,
)

N_SENTENCES = 20
N_DEGRADED = 8
N_WRONG = 5
N_GOP = 6
"""Word recognition runs at 3-5x real time and GOP at about 8x, so the degraded and
wrong-transcription conditions use the first few sentences only (PER uses all)."""


def with_noise_floor(index: int) -> np.ndarray:
    """Test sentence ``index`` with white noise 30 dB below it.

    espeak-ng pads its output with digital zeros, which no microphone produces; PocketSphinx
    normalises cepstra over the whole utterance, and zero frames drag that normalisation so
    far that its word error rate on the bare output is about 0.9 (0.4 with this floor).
    """
    return add_noise(spoken_sentences()[index], 30.0, seed=index)


def degraded(index: int) -> np.ndarray:
    """Test sentence ``index`` in white noise as loud as the speech (0 dB SNR)."""
    return add_noise(spoken_sentences()[index], 0.0, seed=100 + index)


def wrong_text(index: int) -> str:
    """Another sentence's transcription."""
    return SENTENCES[(index + 1) % N_SENTENCES]


def fixture(name: str) -> np.ndarray:
    return load_audio(FIXTURES / f"{name}.wav")


def test_edit_distance():
    assert edit_distance([], []) == 0
    assert edit_distance(["a", "b", "c"], []) == 3
    assert edit_distance([], ["a", "b"]) == 2
    assert edit_distance(["the", "cat", "sat"], ["the", "cat", "sat"]) == 0
    assert edit_distance(["the", "cat", "sat"], ["a", "cat", "sat", "down"]) == 2
    assert edit_distance(list("kitten"), list("sitting")) == 3


def test_dictionary_words_and_languages():
    assert dictionary_words("Don't stop, well-known “Bob’s” cat!") == [
        "don't",
        "stop",
        "well",
        "known",
        "bob's",
        "cat",
    ]
    assert dictionary_words(" -- ... ") == []
    assert all(is_english(code) for code in ("en", "EN-us", "en_GB"))
    assert not any(is_english(code) for code in ("nl", "es", "it", "eng"))


def test_phone_alignment_leaves_out_only_the_first_state():
    phones = align_phones(shared_models().scorer, to_pcm16(fixture("BLUE_english32")), ["blue"])
    assert [(p.phone, p.word) for p in phones] == [("B", "blue"), ("L", "blue"), ("UW", "blue")]
    for before, after in zip(phones, phones[1:], strict=False):
        assert after.start_frame == before.start_frame + before.n_frames  # contiguous
    first, *rest = phones
    assert first.start_frame == 0 and first.scored_start > 0  # its first state is left out
    assert first.scored_frames == first.n_frames - first.scored_start
    assert all((p.scored_start, p.scored_frames) == (p.start_frame, p.n_frames) for p in rest)


def test_values_do_not_depend_on_the_utterances_decoded_before():
    """A job's decoders serve many utterances; each value must be what a new decoder gives.

    The preceding utterance is the same word in loud noise, which moves PocketSphinx's running
    noise estimate far; without the reset in :func:`pathbench_flow.trimming.sphinx.decode` every
    value below changes (the word recogniser hears "one" instead of "blue").
    """
    word = fixture("BLUE_english32")
    noisy = add_noise(word, 0.0, seed=1)

    def values(models: SphinxModels, audio: np.ndarray) -> dict[str, object]:
        return {
            "align_words": align_words(models.aligner, to_pcm16(audio), ["blue"]),
            "wer": wer(audio, "blue", "en", models),
            "per": per(audio, "blue", "en", models),
            "gop": gop(audio, "blue", "en", models),
        }

    fresh = values(SphinxModels(), word)
    used = shared_models()
    values(used, noisy)
    after_noise = values(used, word)
    for name, value in fresh.items():
        assert after_noise[name] == value, name


def test_wpm():
    assert wpm(10, 6.0) == pytest.approx(100.0)
    assert wpm(0, 1.0) == 0.0
    with pytest.raises(NoScore) as raised:
        wpm(3, 0.05)
    assert raised.value.status == "too_short"
    with pytest.raises(ValueError):
        wpm(-1, 2.0)
    # the same too_short utterances as the recognition measures
    assert words_per_minute.MIN_DURATION_S == recognition.MIN_DURATION_S


@pytest.mark.parametrize("measure", [wer, per, gop])
def test_other_languages_and_short_audio_have_no_score(measure):
    speech = np.zeros(SAMPLE_RATE)
    for language in ("nl", "es", "it", "ja"):
        with pytest.raises(NoScore) as raised:
            measure(speech, "hallo", language, shared_models())
        assert raised.value.status == "unsupported_language"
    with pytest.raises(NoScore) as raised:
        measure(np.zeros(SAMPLE_RATE // 20), "hello", "en", shared_models())
    assert raised.value.status == "too_short"


def test_empty_transcription_has_no_score():
    with pytest.raises(NoScore) as raised:
        wer(with_noise_floor(0), " ... ", "en", shared_models())
    assert raised.value.status == "error"


@pytest.mark.parametrize("measure", [per, gop])
def test_out_of_vocabulary_words_have_no_score(measure):
    with pytest.raises(NoScore) as raised:
        measure(with_noise_floor(0), "the quick brown floxotron", "en", shared_models())
    assert raised.value.status == "oov"
    assert "floxotron" in raised.value.reason


@pytest.mark.parametrize("measure", [wer, per])
def test_a_sentence_scores_better_against_its_own_transcription(measure):
    """One sentence through each recogniser, for the fast tier; the corpus tests below
    measure the error rates over every sentence and in noise."""
    models = shared_models()
    right = measure(with_noise_floor(0), SENTENCES[0], "en", models)
    wrong = measure(with_noise_floor(0), wrong_text(0), "en", models)
    print(f"{measure.__name__}: {right.rate:.2f} right, {wrong.rate:.2f} wrong transcription")
    assert right.rate <= 0.6 and wrong.rate >= right.rate + 0.3


@pytest.mark.slow
def test_wer_is_low_and_rises_with_noise_and_wrong_transcriptions():
    models = shared_models()
    clean = [wer(with_noise_floor(i), SENTENCES[i], "en", models) for i in range(N_SENTENCES)]
    for result, text in zip(clean, SENTENCES, strict=False):
        print(f"{result.rate:.2f}  {result.hypothesis!r}  for {text!r}")
    noisy = [wer(degraded(i), SENTENCES[i], "en", models).rate for i in range(N_DEGRADED)]
    wrong = [wer(with_noise_floor(i), wrong_text(i), "en", models).rate for i in range(N_WRONG)]
    clean_rates = [result.rate for result in clean]
    subset = np.mean(clean_rates[:N_DEGRADED])
    print(
        f"WER: clean {np.mean(clean_rates):.3f} (first {N_DEGRADED}: {subset:.3f}), "
        f"0 dB {np.mean(noisy):.3f}, wrong transcription {np.mean(wrong):.3f}"
    )
    assert np.mean(clean_rates) <= 0.6
    assert np.mean(noisy) >= subset + 0.2
    assert np.mean(wrong) >= np.mean(clean_rates[:N_WRONG]) + 0.3
    assert all(
        result.n_reference == len(text.split())
        for result, text in zip(clean, SENTENCES, strict=False)
    )


@pytest.mark.slow
def test_per_is_low_and_rises_with_noise_and_wrong_transcriptions():
    models = shared_models()
    clean = [per(with_noise_floor(i), SENTENCES[i], "en", models) for i in range(N_SENTENCES)]
    noisy = [per(degraded(i), SENTENCES[i], "en", models).rate for i in range(N_SENTENCES)]
    wrong = [per(with_noise_floor(i), wrong_text(i), "en", models).rate for i in range(N_SENTENCES)]
    print(f"example: {clean[0].hypothesis!r} ({clean[0].n_reference} reference phones)")
    clean_rates = [result.rate for result in clean]
    print(
        f"PER: clean {np.mean(clean_rates):.3f}, 0 dB {np.mean(noisy):.3f}, "
        f"wrong transcription {np.mean(wrong):.3f}"
    )
    assert np.mean(clean_rates) <= 0.6
    assert np.mean(noisy) >= np.mean(clean_rates) + 0.15
    assert np.mean(wrong) >= np.mean(clean_rates) + 0.2
    assert "SIL" not in clean[0].hypothesis.split()
    assert clean[0].n_reference == 31  # "the quick brown fox ..." in CMUdict phones


def test_gop_ranks_the_non_native_speaker_lowest():
    models = shared_models()
    japanese = gop(fixture("BLUE_japanese10"), "blue", "en", models)
    english = {n: gop(fixture(f"BLUE_english{n}"), "blue", "en", models) for n in (32, 33, 34)}
    print(f"GOP of 'blue': japanese10 {japanese:.3f}, english {english}")
    assert all(japanese < score for score in english.values())


def test_gop_of_a_word_falls_with_a_wrong_transcription():
    models = shared_models()
    for n in (32, 33, 34):
        audio = fixture(f"BLUE_english{n}")
        assert gop(audio, "green", "en", models) < gop(audio, "blue", "en", models)


@pytest.mark.slow
def test_gop_of_sentences_falls_with_a_wrong_transcription_and_in_noise():
    models = shared_models()
    right = [gop(with_noise_floor(i), SENTENCES[i], "en", models) for i in range(N_GOP)]
    wrong = [gop(with_noise_floor(i), wrong_text(i), "en", models) for i in range(N_GOP)]
    noisy = [gop(degraded(i), SENTENCES[i], "en", models) for i in range(N_GOP)]
    print(f"GOP: right {np.mean(right):.3f}, 0 dB {np.mean(noisy):.3f}, wrong {np.mean(wrong):.3f}")
    assert all(w < r for w, r in zip(wrong, right, strict=True))
    assert np.mean(noisy) < np.mean(right)


@pytest.mark.slow
def test_gop_of_recordings_is_finite():
    models = shared_models()
    for path, text in recorded_utterances():
        score = gop(load_audio(path), text, "en", models)
        print(f"GOP {score:.3f}  {path.name}")
        assert math.isfinite(score)
