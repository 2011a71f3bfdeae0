"""Word counting for rate measures across the supported languages."""

from __future__ import annotations

import numpy as np
import soundfile as sf

from pathbench_flow.common.transcripts import count_words
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.base import Item


def test_english_counts_whitespace_words_after_cleaning() -> None:
    assert count_words("Don't stop , now!", "en") == 3


def test_mandarin_counts_each_han_character() -> None:
    assert count_words("打开窗户。", "cmn") == 4
    assert count_words("打开 TV 两次", "cmn") == 5


def test_wpm_of_a_mandarin_command_counts_characters(tmp_path) -> None:
    path = tmp_path / "a.wav"
    rng = np.random.default_rng(0)
    sf.write(path, 0.1 * rng.standard_normal(32000), 16000)  # 2 s
    item = Item(
        utt_id="u",
        speaker_id="s",
        audio_path=str(path),
        start=0.0,
        end=2.0,
        transcription="打开窗户",
        language="cmn",
    )
    score = registry.create("wpm").evaluate(item)
    assert score.status == "ok"
    assert score.value == 4 / 2.0 * 60
