"""Our model-based measures reproduce PathBench's own values, frozen from a side-by-side run.

``benchmarks/neural_conformance.py`` ran PathBench (checkout e26aa32, called the way its
driver calls its evaluators) on seeded tiny wav2vec2 models, flat (random) and peaked (a CTC
head sharpened to look trained), and stored its per-utterance values with everything needed to
rebuild the input here without PathBench or torchaudio: model seeds and peaking (with weight
digests), audio recipes or fixture files (with sample digests), texts, languages, references
and the n-gram vocabularies. Each value must be matched within 1e-4 relative, and where
PathBench gave no value, ours must give none either.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from pathbench_flow.testing.speech_fixtures import require_espeak

DATA = Path(__file__).parent / "data" / "pathbench_neural_values.json"
FROZEN: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
CASES = [(kind, measure) for kind, found in FROZEN["values"].items() for measure in found]
RELATIVE = 1e-4
_FLAG = re.compile(r"\([a-z-]+\)")


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory) -> dict[str, Any]:
    """The frozen run's models, audio and n-gram files, rebuilt from the JSON."""
    pytest.importorskip("torch", reason="model-based measures need the neural extra (torch)")
    pytest.importorskip("transformers", reason="model-based measures need transformers")
    require_espeak()
    from pathbench_flow.testing import conformance_inputs as inputs
    from pathbench_flow.testing import tiny_models

    spec = FROZEN["models"]
    assert spec["format"] == tiny_models.SEEDED_FORMAT, "the weight recipe changed since freezing"
    assert dict(inputs.SEEDS) == spec["seeds"]
    root = tmp_path_factory.mktemp("conformance")
    peaks = {role: tiny_models.Peak(**peak) for role, peak in spec["peaks"].items()}
    models = {
        "flat": inputs.build_models(root, spec["size"], "flat", {"phone": None, "char": None}),
        "peaked": inputs.build_models(root, spec["size"], "peaked", peaks),
    }
    return {
        "models": models,
        "encoder": inputs.build_encoder(root, spec["size"]),
        "paths": inputs.materialise(FROZEN["audio"], root / "audio"),
        "lms": inputs.write_lms(root, FROZEN["lm_words"]),
    }


def test_the_models_are_the_frozen_ones(rebuilt) -> None:
    from pathbench_flow.testing import tiny_models

    built = {
        f"{kind}/{role}": path
        for kind, ms in rebuilt["models"].items()
        for role, path in ms.items()
    }
    built["encoder"] = rebuilt["encoder"]
    digests = {name: tiny_models.weights_digest(path) for name, path in built.items()}
    assert digests == FROZEN["models"]["digests"]


def test_the_audio_is_the_frozen_audio(rebuilt) -> None:
    from pathbench_flow.testing import synthetic_speech

    for spec in FROZEN["audio"]:
        digest = synthetic_speech.pcm_digest(rebuilt["paths"][spec["name"]])
        assert digest == spec["pcm_sha256"], spec


def test_espeak_gives_the_frozen_phones() -> None:
    """The values assume espeak-ng's phones of the frozen run (see ``espeak`` in the JSON):
    a different espeak-ng shows up here first. Flags are left out on both sides: how they
    count is what the value tests check."""
    pytest.importorskip("transformers", reason="phonemisation comes with the neural extra")
    require_espeak()
    from pathbench_flow.neural import phonemes

    for key, phonemised in FROZEN["phonemizer"].items():
        language, _, text = key.partition(":")
        expected = _FLAG.sub(" ", phonemised.replace("|", " ")).split()
        ours = [p for p in phonemes.phonemise(text, language) if not _FLAG.fullmatch(p)]
        assert ours == expected, (key, FROZEN["espeak"])


def _options(measure: str, rebuilt: dict[str, Any], kind: str) -> dict[str, Any]:
    models = rebuilt["models"]["flat" if kind == "any" else kind]
    phone, char = str(models["phone"]), str(models["char"])
    asr = dict.fromkeys(FROZEN["lm_words"], char)
    lm = {language: str(path) for language, path in rebuilt["lms"].items()}
    return {
        "artp": {"model": phone},
        "artp_old": {"model": phone},
        "dper": {"model": phone},
        "per": {"models": asr},
        "double_asr": {"models": asr, "lm": lm},
        "artp_double_asr": {"model": phone, "models": asr, "lm": lm},
        "nad": {"features": "wav2vec2", "model": str(rebuilt["encoder"]), "layer": 10},
    }[measure]


def _items(expected: dict[str, float | None], paths: dict[str, Path]) -> list:
    from pathbench_flow.evaluators.base import Item

    return [
        Item(
            u["utt_id"],
            str(paths[u["audio"]]),
            u["start"],
            u["end"],
            u["text"],
            u["language"],
            tuple((str(paths[a]), s, e) for a, s, e in u["references"]),
        )
        for u in FROZEN["utterances"]
        if u["utt_id"] in expected
    ]


@pytest.mark.parametrize(("kind", "measure"), CASES, ids=[f"{k}-{m}" for k, m in CASES])
def test_values_match_pathbench(rebuilt, kind: str, measure: str) -> None:
    from pathbench_flow.evaluators import registry
    from pathbench_flow.evaluators.base import evaluate_all

    expected = FROZEN["values"][kind][measure]
    items = _items(expected, rebuilt["paths"])
    scores = evaluate_all(registry.create(measure, **_options(measure, rebuilt, kind)), items)
    wrong = []
    for item, score in zip(items, scores, strict=True):
        theirs = expected[item.utt_id]
        if theirs is None or score.value is None:
            agrees = theirs is None and score.value is None
        else:
            agrees = math.isclose(score.value, theirs, rel_tol=RELATIVE, abs_tol=1e-12)
        if not agrees:
            wrong.append(
                f"{item.utt_id}: PathBench {theirs!r}, ours {score.value!r} "
                f"({score.status}: {score.message[:80]})"
            )
    assert not wrong, f"{len(wrong)}/{len(items)} differ:\n" + "\n".join(wrong)
