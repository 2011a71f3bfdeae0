"""The contributor guide's minimal evaluators (docs/architecture.md, "The kinds, one minimal
example each") run: one class per kind, each scoring a recording through its kind's
`evaluate`, and each with the `fa` variant its comment promises."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import soundfile

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.evaluators.base import Item

REPO = Path(__file__).resolve().parents[1]
HEADING = "### The kinds, one minimal example each"


def example_classes() -> dict[str, type]:
    text = (REPO / "docs/architecture.md").read_text()
    section = text[text.index(HEADING) :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code, f"docs/architecture.md: no python block under {HEADING!r}"
    namespace: dict = {"__name__": "architecture_examples"}
    exec(compile(code.group(1), "docs/architecture.md", "exec"), namespace)
    return {
        name: value
        for name, value in namespace.items()
        if isinstance(value, type) and value.__module__ == "architecture_examples"
    }


@pytest.fixture
def recordings(tmp_path):
    def tone(name: str, seconds: float) -> str:
        t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
        path = tmp_path / f"{name}.wav"
        soundfile.write(path, 0.3 * np.sin(2 * np.pi * 220 * t), SAMPLE_RATE)
        return str(path)

    (tmp_path / "utt2year").write_text("u1 1998\n")
    return tmp_path, tone("test", 1.0), tone("reference", 0.5)


def test_every_kind_has_a_minimal_example_that_scores(recordings):
    directory, test, reference = recordings
    classes = example_classes()
    kinds = {base.__name__ for cls in classes.values() for base in cls.__mro__[1:2]}
    assert kinds >= {
        "LookupEvaluator",
        "ReferenceFreeEvaluator",
        "ReferenceTxtEvaluator",
        "ReferenceAudioEvaluator",
        "ReferenceTxtAndAudioEvaluator",
        "ReferenceFreeSpeakerEvaluator",
        "LanguageAwareSpeakerEvaluator",
    }
    item = Item(
        "u1",
        test,
        transcription="a cat sat",
        language="en",
        reference_audios=((reference, 0.0, -1.0),),
    )
    values = {}
    for name, cls in classes.items():
        evaluator = cls(str(directory)) if name == "RecordingYear" else cls()
        if evaluator.level == "speaker":
            score = evaluator.evaluate_speaker([item, item])
        else:
            score = evaluator.evaluate(item)
        assert score.status == "ok", (name, score)
        values[name] = score.value
    assert values["RecordingYear"] == 1998.0
    assert values["Duration"] == pytest.approx(1.0)
    assert values["VowelRate"] == pytest.approx(3.0)
    assert values["LengthRatio"] == pytest.approx(2.0)
    assert values["WordTimeRatio"] == pytest.approx(2.0)
    assert values["LevelRange"] == pytest.approx(0.0)
    assert values["MeanDuration"] == pytest.approx(1.0)
    assert all(math.isfinite(value) for value in values.values())


def test_the_examples_have_the_fa_variants_their_comments_promise():
    classes = example_classes()
    trimmable = {name for name, cls in classes.items() if getattr(cls, "trimmable", False)}
    assert trimmable == {
        "Duration",
        "VowelRate",
        "LengthRatio",
        "LevelRange",
        "MeanDuration",
    }
    for name in ("RecordingYear", "WordTimeRatio"):
        evaluator_class = classes[name]
        with pytest.raises(TypeError, match="no trimmed variant"):
            evaluator_class.trimmed(object.__new__(evaluator_class), None)
