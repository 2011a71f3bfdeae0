"""The demo corpus: reproducible, well-formed Kaldi data whose known effects are measurable.

The acoustic checks measure the audio with Praat (parselmouth) rather than reading the
generator's parameters back, so they fail if a knob stops reaching the signal.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import parselmouth
import pytest
import soundfile as sf
from parselmouth.praat import call
from scipy.stats import spearmanr

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.demo import corpus as demo
from pathbench_flow.demo.__main__ import main as demo_main
from pathbench_flow.demo.corpus import WORDS, expected_utterances, make_demo
from pathbench_flow.demo.synth import plan_text

SMALL = {"n_pathological": 2, "n_control": 1, "n_utterances": 3}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_demo(tmp_path_factory.mktemp("a") / "demo", seed=7)


@pytest.fixture(scope="module")
def truth(corpus: Path) -> dict:
    return json.loads((corpus / "truth.json").read_text())


def read_table(path: Path) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in path.read_text().splitlines())


def tree_bytes(root: Path) -> dict[str, bytes]:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return {str(p.relative_to(root)): p.read_bytes() for p in files}


def load_speech(corpus: Path, utt: str, info: dict) -> tuple[np.ndarray, int, int]:
    audio, rate = sf.read(corpus / info["dataset"] / "wav" / f"{utt}.wav")
    return audio, round(info["speech_start_s"] * rate), round(info["speech_end_s"] * rate)


def per_speaker(values: dict[str, float], truth: dict) -> dict[str, float]:
    grouped: dict[str, list[float]] = {}
    for utt, value in values.items():
        grouped.setdefault(truth["utterances"][utt]["speaker"], []).append(value)
    return {speaker: float(np.mean(v)) for speaker, v in grouped.items()}


def pathological_utterances(truth: dict) -> list[str]:
    return [u for u, info in truth["utterances"].items() if info["dataset"] == "pathological"]


def test_same_seed_gives_byte_identical_corpus(corpus: Path, tmp_path: Path) -> None:
    again = make_demo(tmp_path / "demo", seed=7)
    first, second = tree_bytes(corpus), tree_bytes(again)
    assert sorted(first) == sorted(second)
    assert [name for name in first if first[name] != second[name]] == []


def test_seed_changes_the_audio(tmp_path: Path) -> None:
    one = tree_bytes(make_demo(tmp_path / "one", seed=1, **SMALL))
    two = tree_bytes(make_demo(tmp_path / "two", seed=2, **SMALL))
    wavs = [name for name in one if name.endswith(".wav") and name in two]
    assert wavs and all(one[name] != two[name] for name in wavs)


def test_kaldi_files_are_consistent(corpus: Path, truth: dict) -> None:
    counts = dict(zip(demo.DATASETS, expected_utterances(8, 6, 8), strict=True))
    for dataset in demo.DATASETS:
        root = corpus / dataset
        for name in (
            "wav.scp",
            "text",
            "utt2spk",
            "utt2group",
            "spk2gender",
            "spk2score",
            "spk2age",
        ):
            raw = (root / name).read_text()
            keys = [line.split(" ", 1)[0] for line in raw.splitlines()]
            assert raw.endswith("\n") and "\r" not in raw, name
            assert keys == sorted(keys) and len(set(keys)) == len(keys), name
        assert (root / "language").read_text() == "en\n"
        wav, text, utt2spk = (read_table(root / n) for n in ("wav.scp", "text", "utt2spk"))
        utt2group = read_table(root / "utt2group")
        assert set(wav) == set(text) == set(utt2spk) == set(utt2group)
        assert len(wav) == counts[dataset]
        assert all((root / path).is_file() and path == f"wav/{u}.wav" for u, path in wav.items())
        speakers = set(utt2spk.values())
        genders = read_table(root / "spk2gender")
        scores = read_table(root / "spk2score")
        assert set(genders) == set(scores) == set(read_table(root / "spk2age")) == speakers
        assert set(genders.values()) == {"m", "f"}
        assert abs(Counter(genders.values())["m"] - len(speakers) / 2) <= 0.5
        # every speaker reads the same texts
        said = {spk: sorted(text[u] for u in utt2spk if utt2spk[u] == spk) for spk in speakers}
        assert len({tuple(texts) for texts in said.values()}) == 1
        # sessions belong to one speaker and some hold several utterances
        assert all(group.startswith(utt2spk[u] + "_s") for u, group in utt2group.items())
        assert max(Counter(utt2group.values()).values()) > 1
        for spk, score in scores.items():
            if dataset == "control":
                assert score == "N/A"
            else:
                severity = truth["speakers"][spk]["severity"]
                assert float(score) == pytest.approx(100 * (1 - severity), abs=0.01)


def test_wavs_are_16k_mono_and_match_truth(corpus: Path, truth: dict) -> None:
    assert len(truth["utterances"]) == sum(expected_utterances(8, 6, 8))
    for utt, info in truth["utterances"].items():
        meta = sf.info(str(corpus / info["dataset"] / "wav" / f"{utt}.wav"))
        assert (meta.samplerate, meta.channels, meta.subtype) == (SAMPLE_RATE, 1, "PCM_16")
        assert meta.frames / SAMPLE_RATE == pytest.approx(info["duration"], abs=1e-6)
        assert 0.3 <= info["speech_start_s"] <= 0.8 + 1e-6
        assert 0.3 <= info["duration"] - info["speech_end_s"] <= 0.8 + 1e-6


def test_silence_is_quiet_but_not_digital_zero(corpus: Path, truth: dict) -> None:
    for utt, info in truth["utterances"].items():
        audio, start, end = load_speech(corpus, utt, info)
        silence = np.concatenate([audio[:start], audio[end:]])
        speech_rms = np.sqrt(np.mean(audio[start:end] ** 2))
        silence_rms = np.sqrt(np.mean(silence**2))
        assert 20 * np.log10(speech_rms / silence_rms) > 30, utt
        assert np.count_nonzero(silence) > 0.5 * len(silence), utt


def test_severity_lowers_harmonics_to_noise_ratio(corpus: Path, truth: dict) -> None:
    """Mean Praat HNR per speaker, over the first session (half the files, to save time)."""
    hnr = {}
    for utt in pathological_utterances(truth):
        if not truth["utterances"][utt]["group"].endswith("_s1"):
            continue
        audio, start, end = load_speech(corpus, utt, truth["utterances"][utt])
        frames = parselmouth.Sound(audio[start:end], SAMPLE_RATE).to_harmonicity().values
        hnr[utt] = float(frames[frames > -200].mean())  # -200 dB marks unvoiced frames
    by_speaker = per_speaker(hnr, truth)
    severity = [truth["speakers"][spk]["severity"] for spk in by_speaker]
    assert spearmanr(severity, list(by_speaker.values()))[0] < -0.6


def test_f0_variation_follows_modulation(corpus: Path, truth: dict) -> None:
    """Monotone speakers (small ``f0_modulation_semitones``) have a smaller F0 spread.

    Pitch is folded into +-6 semitones of the median first: breathy, jittery voices invite
    octave errors from the tracker, which would otherwise dominate the spread.
    """
    spread = {}
    for utt, info in truth["utterances"].items():
        audio, _, _ = load_speech(corpus, utt, info)
        f0 = parselmouth.Sound(audio, SAMPLE_RATE).to_pitch().selected_array["frequency"]
        semitones = 12 * np.log2(f0[f0 > 0])
        spread[utt] = float(np.std((semitones - np.median(semitones) + 6) % 12 - 6))
    by_speaker = per_speaker(spread, truth)
    modulation = [truth["speakers"][spk]["f0_modulation_semitones"] for spk in by_speaker]
    assert spearmanr(modulation, list(by_speaker.values()))[0] > 0.8


def test_severity_shrinks_vowel_space(corpus: Path, truth: dict) -> None:
    """Area of the (log F1, log F2) scatter over loud frames, per speaker."""
    points: dict[str, list[np.ndarray]] = {}
    for utt in pathological_utterances(truth):
        audio, _, _ = load_speech(corpus, utt, truth["utterances"][utt])
        sound = parselmouth.Sound(audio, SAMPLE_RATE)
        formant = sound.to_formant_burg(time_step=0.01, maximum_formant=5000)
        f1, f2 = (call(formant, "To Matrix", i).values[0] for i in (1, 2))
        intensity = sound.to_intensity(time_step=0.01)
        level = np.interp(formant.xs(), intensity.xs(), intensity.values[0])
        loud = (level > level.max() - 6) & (f1 > 0) & (f2 > 0)
        speaker = truth["utterances"][utt]["speaker"]
        points.setdefault(speaker, []).append(np.log(np.c_[f1[loud], f2[loud]]))
    area = {spk: np.sqrt(np.linalg.det(np.cov(np.concatenate(p).T))) for spk, p in points.items()}
    severity = [truth["speakers"][spk]["severity"] for spk in area]
    assert spearmanr(severity, list(area.values()))[0] < -0.6


def test_severity_slows_speech(corpus: Path, truth: dict) -> None:
    """Speech span found from energy alone (frames 20 dB above the quietest) grows with severity."""
    span = {}
    for utt in pathological_utterances(truth):
        audio, _, _ = load_speech(corpus, utt, truth["utterances"][utt])
        frames = audio[: len(audio) // 160 * 160].reshape(-1, 160)
        level = 10 * np.log10(np.mean(frames**2, axis=1))
        active = np.flatnonzero(level > np.percentile(level, 5) + 20)
        span[utt] = (active[-1] - active[0] + 1) * 0.01
    by_speaker = per_speaker(span, truth)
    severity = [truth["speakers"][spk]["severity"] for spk in by_speaker]
    assert spearmanr(severity, list(by_speaker.values()))[0] > 0.8


def test_word_mode_makes_short_single_word_files(tmp_path: Path) -> None:
    assert len(WORDS) == len(set(WORDS)) == 155
    root = make_demo(
        tmp_path / "words", word_mode=True, n_pathological=2, n_control=2, n_utterances=6
    )
    truth = json.loads((root / "truth.json").read_text())
    texts = read_table(root / "pathological" / "text")
    assert set(texts.values()) == set(WORDS[:6])
    durations = [info["duration"] for info in truth["utterances"].values()]
    assert min(durations) > 0.8 and max(durations) < 3.5


def test_interrupted_run_keeps_the_old_corpus(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "demo"
    out.mkdir()
    (out / "marker").write_text("old")
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) > 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    real = demo.synthesize
    monkeypatch.setattr(demo, "synthesize", failing)
    with pytest.raises(KeyboardInterrupt):
        make_demo(out, **SMALL)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]
    assert (out / "marker").read_text() == "old"
    monkeypatch.setattr(demo, "synthesize", real)
    make_demo(out, **SMALL)
    assert not (out / "marker").exists() and (out / "truth.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]


def test_expected_utterances_counts_both_datasets() -> None:
    assert expected_utterances(14, 13, 155) == (2170, 2015)


@pytest.mark.parametrize(
    ("word", "vowels"),
    [
        ("make", 1),
        ("the", 1),
        ("paragraph", 3),
        ("happy", 2),
        ("yes", 1),
        ("beyond", 2),
        ("november", 3),
        ("hmm", 1),
        ("queen", 1),
    ],
)
def test_syllables_follow_vowel_letter_groups(word: str, vowels: int) -> None:
    (phones,) = plan_text(word)
    assert sum(phone.kind == "vowel" for phone in phones) == vowels


def test_cli_writes_a_corpus(tmp_path: Path) -> None:
    assert (
        demo_main(
            [
                str(tmp_path / "cli"),
                "--n-pathological",
                "1",
                "--n-control",
                "1",
                "--n-utterances",
                "1",
            ]
        )
        == 0
    )
    assert (tmp_path / "cli" / "control" / "wav.scp").read_text() == "C01_001 wav/C01_001.wav\n"
