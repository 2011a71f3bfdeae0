"""PathBench's model-based measures: rules on hand-made inputs, then every evaluator and the
wav2vec2 trimmer on tiny random wav2vec2 models (real compute, random weights), through the
workflow too; ``-m models`` checks PathBench's published values with the real weights."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import yaml

from pathbench_flow import tracks
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.base import Item, evaluate_all
from pathbench_flow.neural import ctc, models, phonemes
from pathbench_flow.testing import RECORDINGS as FIXTURES
from pathbench_flow.testing.speech_fixtures import require_espeak

BLUE = {name: str(FIXTURES / f"BLUE_{name}.wav") for name in ("japanese10", "english32")}
NEURAL = ("artp", "artp_old", "artp_double_asr", "per", "dper", "double_asr")


# --- rules that need no model ----------------------------------------------------------------


def test_cleaning_removes_ascii_and_cjk_punctuation() -> None:
    assert phonemes.clean("  Hello,  World!! ") == "hello world"
    assert phonemes.clean("你好，世界。「好」") == "你好世界好"
    assert phonemes.clean("...") == ""


def test_phonemisation_follows_pathbench() -> None:
    pytest.importorskip("phonemizer", reason="phonemisation needs the neural extra")
    assert phonemes.phonemise("Blue!", "en") == ("b", "l", "uː")  # en → en-us, no stress marks
    assert phonemes.phonemise("...", "en") == ()
    vocabulary = {"z": 0, "e": 1, "r": 2, "o": 3, "t": 4}
    # 'ʲ' stripped, 'dz' → 'z', phones outside the vocabulary dropped
    assert phonemes.for_vocabulary(["tʲ", "dz", "e", "ɾ", "ʲ"], vocabulary) == ["t", "z", "e"]


def test_forced_path_and_articulatory_precision_on_a_known_matrix() -> None:
    blank = 0
    probs = np.full((6, 3), 0.05)
    best = [0, 1, 1, 0, 2, 0]
    probs[np.arange(6), best] = 0.9
    path = ctc.forced_path(np.log(probs), [1, 2], blank)
    assert path.tolist() == best
    assert ctc.articulatory_precision(np.log(probs), [1, 2], blank) == pytest.approx(0.9)
    with pytest.raises(ValueError, match="do not fit"):
        ctc.forced_path(np.log(probs[:2]), [1, 1], blank)  # a repeat needs a blank between


def test_articulatory_precision_follows_the_most_likely_path_like_pathbench() -> None:
    # PathBench aligns log_softmax(logits) with torchaudio and averages exp(score) over the
    # token frames: here all four frames are the token (a path through posteriors' sum would
    # take one token frame and three blanks, and score 0.95).
    probs = np.array([[0.05, 0.95], [0.73, 0.27], [0.55, 0.45], [0.23, 0.77]])
    assert ctc.forced_path(np.log(probs), [1], 0).tolist() == [1, 1, 1, 1]
    expected = np.mean([0.95, 0.27, 0.45, 0.77])
    assert ctc.articulatory_precision(np.log(probs), [1], 0) == pytest.approx(expected, rel=1e-6)


def test_a_tie_at_the_end_stays_in_the_last_token_like_torchaudio() -> None:
    flat = np.log(np.full((2, 2), 0.5))
    assert ctc.forced_path(flat, [1], 0).tolist() == [1, 1]


def test_forced_path_equals_torchaudio_forced_align_ties_included() -> None:
    """Paths torchaudio found for seeded matrices (benchmarks/forced_align_cases.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        from forced_align_cases import case
    finally:
        sys.path.pop(0)
    frozen = json.loads((Path(__file__).parent / "data" / "forced_align_paths.json").read_text())
    for index, expected in enumerate(frozen["paths"]):
        scores, tokens = case(index)
        if expected is None:
            with pytest.raises(ValueError, match="do not fit"):
                ctc.forced_path(scores, tokens, 0)
        else:
            assert ctc.forced_path(scores, tokens, 0).tolist() == expected, index


def test_confidence_and_greedy_decoding() -> None:
    probs = np.array([[0.8, 0.2, 0.0], [0.1, 0.6, 0.3], [0.1, 0.8, 0.1], [0.2, 0.1, 0.7]])
    assert ctc.greedy_tokens(probs, 0) == [1, 2]
    assert ctc.confidence(probs, 0) == pytest.approx(np.mean([0.7, 0.7]))
    assert ctc.confidence(np.array([[0.9, 0.1]]), 0) == 0.0  # all blank: PathBench's 0.0
    assert ctc.error_rate(["a", "b"], ["a", "c", "d"]) == 1.0


def test_importing_the_registry_does_not_import_torch() -> None:
    code = "import sys; import pathbench_flow.evaluators.registry; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_categories_directions_and_proxy_names() -> None:
    expected = {
        "artp": ("reference-text", 1),
        "artp_old": ("reference-free model", 1),
        "artp_double_asr": ("reference-free model", 1),
        "per": ("reference-text", -1),
        "dper": ("reference-text", -1),
        "double_asr": ("reference-free model", -1),
    }
    for name, (category, direction) in expected.items():
        info = registry.info(name)
        assert (info.category, info.direction) == (category, direction), name
    assert {"sphinx_wer", "sphinx_per", "sphinx_gop"} <= set(registry.names())
    assert "wer" not in registry.names() and "gop" not in registry.names()


def test_a_missing_model_fails_up_front_naming_the_option(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    for name in NEURAL:
        with pytest.raises(ValueError, match=rf"evaluator_options\.{name}\.model"):
            missing = "nobody/no-such-model"
            registry.info(name).cls.preflight({"model": missing, "models": {"en": missing}})
    # Without the neural extra the fix is to install it; with it, to download the model.
    installed = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))
    fix = "hf download" if installed else r'pip install -e "\.\[neural\]"'
    with pytest.raises(ValueError, match=rf"evaluator_options\.nad\.model.*{fix}"):
        registry.info("nad").cls.preflight({})
    registry.info("nad").cls.preflight({"features": "mfcc"})  # MFCCs need no model
    missing_dir = {"model": str(tmp_path / "no" / "such" / "dir")}
    with pytest.raises(ValueError, match="does not exist" if installed else fix):
        registry.info("artp").cls.preflight(missing_dir)


# --- tiny models ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    pytest.importorskip("torch", reason="model-based measures need the neural extra (torch)")
    pytest.importorskip("transformers", reason="model-based measures need transformers")
    require_espeak()
    from pathbench_flow.testing.tiny_models import (
        as_hf_cache,
        build_char_model,
        build_phone_model,
        write_arpa,
    )

    root = tmp_path_factory.mktemp("tiny_models")
    phone, char = build_phone_model(root / "phone"), build_char_model(root / "char")
    cache = root / "hf-cache"
    as_hf_cache(phone, cache, "tiny/phone")
    return {
        "phone": str(phone),
        "char": str(char),
        "lm": str(write_arpa(root / "lm.arpa", ["blue", "the", "cat", "water"])),
        "cache": str(cache),
    }


def options(tiny, name: str, **extra) -> dict:
    """Constructor options of ``name`` pointing at the tiny models (English and Dutch)."""
    chosen = {
        "model": tiny["phone"],
        "models": {"en": tiny["char"], "nl": tiny["char"]},
        "lm": {"en": tiny["lm"]},
        **extra,
    }
    keys = {
        "artp": ("model",),
        "artp_old": ("model",),
        "dper": ("model",),
        "per": ("models",),
        "double_asr": ("models", "lm"),
        "artp_double_asr": ("model", "models", "lm"),
    }[name]
    passed = {k: v for k, v in extra.items() if k in ("batch_size", "compat")}
    return {k: chosen[k] for k in keys} | passed


@pytest.fixture(scope="module")
def items(tmp_path_factory):
    directory = tmp_path_factory.mktemp("audio")
    rng = np.random.default_rng(0)
    lengths = (0.5, 1.3, 0.8, 2.0, 1.1)
    paths = []
    for k, seconds in enumerate(lengths):
        path = directory / f"u{k}.wav"
        sf.write(path, 0.1 * rng.standard_normal(int(seconds * 16000)), 16000, subtype="PCM_16")
        paths.append(str(path))
    texts = ("the cat", "blue water", "De kat.", "the water is blue", "cat")
    langs = ("en", "en", "nl", "en", "en")
    made = [
        Item(f"u{k}", p, transcription=t, language=lang)
        for k, (p, t, lang) in enumerate(zip(paths, texts, langs, strict=True))
    ]
    return [*made, Item("b", BLUE["japanese10"], transcription="blue", language="en")]


@pytest.mark.parametrize("name", NEURAL)
def test_values_are_finite_and_deterministic_across_runs_and_batch_sizes(
    tiny, items, name, monkeypatch
):
    def run(batch_size: int) -> list:
        tracks.forget()  # each run computes its models' outputs itself
        return evaluate_all(
            registry.create(name, **options(tiny, name, batch_size=batch_size)), items
        )

    one, again = run(1), run(1)
    monkeypatch.setattr(models.CTCModel, "_batches", lambda self: True)  # padded, as on a GPU
    batched = run(4)
    assert one == again  # bit-identical, messages included
    for a, b, item in zip(one, batched, items, strict=True):
        expected_ok = not (name in ("artp_double_asr", "double_asr") and item.language == "nl")
        assert (a.status == "ok") is expected_ok, (item, a)
        assert a.status == b.status
        if a.status == "ok":
            assert np.isfinite(a.value) and b.value == pytest.approx(a.value, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("name", NEURAL)
def test_statuses_for_short_audio_and_unsupported_language(tiny, items, tmp_path, name):
    short = tmp_path / "short.wav"
    sf.write(short, np.full(300, 0.1), 16000, subtype="PCM_16")
    evaluator = registry.create(name, **options(tiny, name))
    scores = evaluate_all(
        evaluator,
        [replace(items[0], audio_path=str(short)), replace(items[0], language="de")],
    )
    assert scores[0].status == "too_short" and scores[0].value is None
    expected = "ok" if name == "artp_old" else "unsupported_language"  # confidence: no language
    assert scores[1].status == expected


@pytest.mark.parametrize("name", ["artp", "dper", "per"])
def test_empty_phonemisation_is_a_status_under_compat_none(tiny, items, name):
    score = evaluate_all(
        registry.create(name, **options(tiny, name, compat="none")),
        [replace(items[0], transcription="?!")],
    )[0]
    assert score.status == "empty_phonemisation" and score.value is None


@pytest.mark.parametrize("name", ["dper", "per"])
def test_an_empty_reference_is_scored_as_pathbench_scores_it(tiny, items, name):
    """PathBench hands an empty reference to jiwer 4, which counts every hypothesis phone as
    an insertion over a length of one; ArtP has nothing to align and gives no score."""
    item = replace(items[3], transcription="?!")
    ours = registry.create(name, **options(tiny, name))
    score = evaluate_all(ours, [item])[0]
    heard = evaluate_all(registry.create(name, **options(tiny, name, compat="none")), [item])[0]
    assert score.status == "ok"
    assert score.value == float(len(_hypothesis_phones(ours, name, item)))
    assert heard.status == "empty_phonemisation"
    artp = evaluate_all(registry.create("artp", **options(tiny, "artp")), [item])[0]
    assert artp.status == "empty_phonemisation" and artp.value is None


def _hypothesis_phones(evaluator, name: str, item: Item) -> tuple[str, ...]:
    """What the measure compares against the (empty) reference, decoded PathBench's way."""
    from pathbench_flow.common.audio import load_shared

    audio = load_shared(item.audio_path, item.start, item.end)
    transcripts = evaluator._transcripts
    if name == "dper":
        model = evaluator._phone_model()
        return tuple(transcripts.phones_heard(model, model.log_posteriors([audio])[0]))
    model = evaluator._asr_model(item.language)
    text = transcripts.text(model, model.log_posteriors([audio])[0])
    return transcripts.phones(text, item.language)


@pytest.mark.parametrize("name", ["artp_double_asr", "double_asr"])
def test_without_a_language_model_the_status_says_so_never_zero(tiny, items, tmp_path, name):
    evaluator = registry.create(name, **options(tiny, name, lm=None))
    scores = evaluate_all(evaluator, items[:2])
    assert all(s.status == "no_language_model" and s.value is None for s in scores)
    assert "evaluator_options" in scores[0].message
    with pytest.raises(ValueError, match=rf"evaluator_options\.{name}\.lm\.en"):
        registry.info(name).cls.preflight(
            options(tiny, name, lm={"en": str(tmp_path / "missing.arpa")})
        )


def test_a_model_gives_the_same_value_from_a_directory_and_from_the_cache(tiny, items, monkeypatch):
    from_dir = evaluate_all(registry.create("artp", model=tiny["phone"]), items)
    monkeypatch.setenv("HF_HUB_CACHE", tiny["cache"])
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    registry.info("artp").cls.preflight({"model": "tiny/phone"})
    tracks.forget()  # the model in the cache computes its outputs itself
    from_cache = evaluate_all(registry.create("artp", model="tiny/phone"), items)
    assert from_cache == from_dir and all(s.status == "ok" for s in from_dir)


def test_nad_with_wav2vec2_layer_features(tiny, items):
    references = ((BLUE["english32"], 0.0, -1.0), (items[1].audio_path, 0.0, -1.0))
    test = replace(items[-1], reference_audios=references)
    first = registry.create("nad", model=tiny["phone"]).evaluate(test)
    tracks.forget()  # computed again, not remembered
    second = registry.create("nad", model=tiny["phone"]).evaluate(test)
    mfcc = registry.create("nad", features="mfcc").evaluate(test)
    assert first.status == "ok" and np.isfinite(first.value) and first == second
    assert first.value != pytest.approx(mfcc.value)
    other = registry.create("nad", model=tiny["phone"], layer=3).evaluate(test)
    assert other.status == "ok" and other.value != pytest.approx(first.value)
    assert registry.create("nad", model=tiny["phone"], layer=40).evaluate(test).status == "error"


def test_wav2vec2_trimmer_follows_pathbench_rule(tiny, tmp_path):
    from pathbench_flow.trimming.forced_alignment import FATrimmer
    from pathbench_flow.trimming.wav2vec2 import Wav2Vec2Aligner

    audio, _ = sf.read(BLUE["japanese10"])
    padded = tmp_path / "padded.wav"
    sf.write(padded, np.concatenate([np.zeros(8000), audio, np.zeros(8000)]), 16000)
    trimmer = FATrimmer(backend="wav2vec2", wav2vec2_model_dir=tiny["phone"], margin_s=0.0)
    record = trimmer.trim(str(padded), "blue", "en").record
    assert record.status == "aligned" and 0.0 <= record.trim_start_s < record.trim_end_s <= 1.21
    # The rule: first aligned non-blank frame to one frame after the last (20 ms frames).
    aligner = Wav2Vec2Aligner(tiny["phone"])
    start, end = aligner.speech_span(sf.read(padded)[0], "blue", "en")
    assert (start, end) == (record.trim_start_s, record.trim_end_s)
    step = 1.21 / aligner.model.log_posteriors([sf.read(padded)[0]])[0].shape[0]
    assert round((end - start) / step) >= 3 + 1  # three phones plus the extra frame
    assert trimmer.trim(str(padded), "?!", "en").record.status == "oov_fallback"
    short = tmp_path / "short.wav"
    sf.write(short, np.full(300, 0.1), 16000)
    assert trimmer.trim(str(short), "blue", "en").record.status == "failed_fallback"


MODEL_ROWS = {
    "double_asr": ("Double ASR", "Reference-Free (Model)"),
    "artp_double_asr": ("DArtP", "Reference-Free (Model)"),
    "artp_old": ("Confidence", "Reference-Free (Model)"),
    "per": ("PER (SEM)", "Reference-Text"),
    "dper": ("PER (Phone)", "Reference-Text"),
    "artp": ("ArtP", "Reference-Text"),
    "nad_fa_all": ("NAD", "Reference-Audio (Parallel)"),
}
"""PathBench's rows of its seven model measures (its results_table.csv), in its order."""


def _rated_dataset(root: Path) -> Path:
    """Four rated speakers saying the same two texts, each utterance its own tone in noise, so
    every measure varies across speakers and every utterance has three NAD references."""
    from pathbench_flow.testing.kaldi_builder import tone, write_kaldi

    (root / "wav").mkdir(parents=True)
    rng = np.random.default_rng(7)
    speakers = {f"s{k}": ("fm"[k % 2], str(20 * (k + 1))) for k in range(4)}
    wav, text, utt2spk = [], [], []
    for k, speaker in enumerate(speakers):
        for j, sentence in enumerate(("the cat", "blue water")):
            utt = f"{speaker}_u{j}"
            audio = tone(1.0 + 0.2 * k, freq=150.0 + 60 * k + 25 * j)
            sf.write(
                root / "wav" / f"{utt}.wav",
                audio + 0.05 * rng.standard_normal(len(audio)),
                16000,
                subtype="PCM_16",
            )
            wav.append(f"{utt} wav/{utt}.wav")
            text.append(f"{utt} {sentence}")
            utt2spk.append(f"{utt} {speaker}")
    write_kaldi(root, wav, text, utt2spk, speakers)
    return root


@pytest.mark.slow
def test_the_workflow_scores_every_neural_measure(tiny, tmp_path):
    """All seven model measures in one config run to the results table and the report, where
    they are PathBench's rows under its names and categories."""
    import pandas as pd

    from pathbench_flow.common.io import read_parquet
    from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

    workdir = copy_workflow(tmp_path / "run")
    config_path = workdir / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["datasets"] = {
        "tiny": {"path": str(_rated_dataset(tmp_path / "data")), "trim_backend": "energy"}
    }
    config["evaluators"] = [*NEURAL, "nad"]
    config["evaluator_options"] = {name: options(tiny, name) for name in NEURAL}
    config["evaluator_options"]["nad"] = {"model": tiny["phone"]}
    config["variants"] = ["raw", "fa"]
    config["reference_types"] = ["all"]
    config["openset"] = {"enabled": False}
    config_path.write_text(yaml.safe_dump(config, allow_unicode=True))
    snakemake(workdir, "--cores", "2")
    for name in NEURAL:
        frame = read_parquet(workdir / f"results/tiny/scores/{name}/0000.parquet")
        assert len(frame) == 8 and (frame["status"] == "ok").all(), frame
        assert np.isfinite(frame["score"]).all()
    nad = read_parquet(workdir / "results/tiny/reference_scores/nad/fa/all/0000.parquet")
    assert (nad["status"] == "ok").all() and (nad["n_references"] == 3).all(), nad

    table = pd.read_csv(workdir / "results/results_table.csv").set_index("metric")
    model_rows = table.loc[list(MODEL_ROWS)]
    named = zip(model_rows["row"], model_rows["category"], strict=True)
    assert dict(zip(model_rows.index, named, strict=True)) == MODEL_ROWS
    assert model_rows["in_pathbench_table"].all()
    assert [m for m in table.index if m in MODEL_ROWS] == list(MODEL_ROWS)  # PathBench's order
    correlations = pd.read_csv(workdir / "results/tiny/correlations.csv").set_index("metric")
    correlated = correlations.loc[list(MODEL_ROWS)]
    assert correlated["n"].eq(4).all()
    # Random weights can give every speaker the same value (e.g. PER 1.0): no r, and it says why.
    has_r = correlated["r_raw"].notna()
    assert has_r.sum() >= 5 and correlated.loc[~has_r, "reason"].str.contains("constant").all()
    assert (model_rows["n_datasets"] == has_r.astype(int)).all()
    for figure in [
        "results/plots/results_heatmap.png",
        "results/tiny/plots/aligned_r.png",
        *(f"results/tiny/plots/scatter/{metric}.png" for metric in MODEL_ROWS),
    ]:
        assert (workdir / figure).stat().st_size > 1000, figure
    assert (workdir / "results/comparisons.csv").is_file()
    snakemake(workdir, "--report", "report.html")
    report = (workdir / "report.html").read_text(encoding="utf-8")
    assert len(report) > 10_000 and "Reference-Free (Model), Reference-Text" in report


# --- real weights: PathBench's published values ----------------------------------------------

MODEL_DIR = os.environ.get("PATHBENCH_MODEL_DIR")


@pytest.mark.models
@pytest.mark.skipif(
    MODEL_DIR is None,
    reason="set PATHBENCH_MODEL_DIR to a Hugging Face cache holding PathBench's models",
)
def test_pathbench_published_values_with_real_weights(monkeypatch):
    """PathBench's tests/test_evaluators.py values for the accented "blue" recording.

    PATHBENCH_MODEL_DIR is a Hugging Face hub cache holding
    facebook/wav2vec2-xlsr-53-espeak-cv-ft and facebook/wav2vec2-large (plus, for DArtP,
    jonatasgrosman/wav2vec2-large-xlsr-53-english and ``lms/wiki_en_token.arpa[.bin]`` in it).
    Phones depend on the espeak-ng version (PathBench pins a commit after 1.52).
    """
    require_espeak()
    monkeypatch.setenv("HF_HUB_CACHE", str(MODEL_DIR))
    test = Item("b", BLUE["japanese10"], transcription="blue", language="en")
    references = tuple((str(FIXTURES / f"BLUE_english{n}.wav"), 0.0, -1.0) for n in (32, 33, 34))
    assert registry.create("artp_old").evaluate(test).value == pytest.approx(0.5374, abs=5e-5)
    assert registry.create("artp").evaluate(test).value == pytest.approx(0.0695, abs=5e-5)
    nad = registry.create("nad").evaluate(replace(test, reference_audios=references))
    assert nad.value == pytest.approx(13.7288, abs=5e-5)
    lm = next(Path(MODEL_DIR, "lms").glob("wiki_en_token.arpa*"), None)
    if lm is None:
        pytest.skip(reason="no lms/wiki_en_token.arpa in PATHBENCH_MODEL_DIR: DArtP not checked")
    dartp = registry.create(
        "artp_double_asr",
        models={"en": "jonatasgrosman/wav2vec2-large-xlsr-53-english"},
        lm=str(lm),
    )
    assert dartp.evaluate(test).value == pytest.approx(0.4405, abs=5e-5)


def test_compat_none_keeps_word_boundaries_and_drops_other_special_tokens(tiny) -> None:
    """The word delimiter counts as a special token in transformers 5's tokenizer; the
    project's own reading must still split words on it, or every transcription is one word."""
    from pathbench_flow.evaluators.neural import _Transcripts

    model = models.load_ctc(str(tiny["char"]))
    path = ["<s>", "a", "a", "|", "b", "</s>"]
    ids = [model.vocab[token] for token in path]
    log_posteriors = np.full((len(ids), len(model.labels)), -10.0)
    log_posteriors[np.arange(len(ids)), ids] = 0.0
    assert _Transcripts("none").text(model, log_posteriors) == "a b"
