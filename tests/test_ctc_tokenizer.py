"""The tokenizer read without transformers gives what the installed transformers' tokenizer
gives: vocabulary, blank, special tokens and the greedy decode PathBench's measures read, on
the tiny models of ``tiny_models`` saved by transformers itself and on the layout of
checkpoints saved before transformers 4.34, for many seeded random id sequences."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pathbench_flow.neural import models
from pathbench_flow.neural.ctc_tokenizer import (
    ADDED_TOKENS_FILE,
    SPECIAL_TOKENS_MAP_FILE,
    TOKENIZER_CONFIG_FILE,
    VOCABULARY_FILE,
    TokenizerUnsupported,
    read_tokenizer,
)

SEQUENCES = 3000
LEGACY_SPECIALS = {
    "bos_token": "<s>",
    "eos_token": "</s>",
    "unk_token": "<unk>",
    "pad_token": "<pad>",
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    """Tiny models as the installed transformers saves them: the character tokenizer over
    letters and over phones (each alone and in a processor), and the phone tokenizer."""
    pytest.importorskip("torch", reason="the tiny models are built with torch")
    pytest.importorskip("transformers", reason="the reference tokenizers are transformers'")
    from pathbench_flow.testing import tiny_models as tiny

    root = tmp_path_factory.mktemp("tokenizers")
    return {
        "char": tiny.build_char_model(root / "char"),
        "char_processor": tiny.build_char_model(root / "char_processor", processor=True),
        "char_phones": tiny.build_phone_model(root / "char_phones"),
        "phone": tiny.build_seeded_model(root / "phone", tiny.PHONES, seed=5, phones=True),
    }


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, value: dict) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")


def _legacy(directory: Path, *, named_class: bool, **settings) -> None:
    """The files of a checkpoint saved before transformers 4.34 (the hub's PathBench models):
    a tokenizer_config.json without added tokens, special tokens in special_tokens_map.json
    (serialised AddedTokens, as some checkpoints have them)."""
    config = _json(directory / TOKENIZER_CONFIG_FILE)
    for key in ("added_tokens_decoder", "backend", "model_max_length", "processor_class"):
        config.pop(key, None)
    if not named_class:
        config.pop("tokenizer_class")  # found by config.json's model_type
    _write(directory / TOKENIZER_CONFIG_FILE, config | settings)
    special_map = {
        key: {"content": token, "lstrip": False, "normalized": False, "rstrip": False}
        for key, token in LEGACY_SPECIALS.items()
    }
    _write(directory / SPECIAL_TOKENS_MAP_FILE, special_map)


def _holes_and_added(directory: Path) -> None:
    """A vocabulary without ``<s>`` (a hole in its ids; the special token is added at the
    next id, where ``|`` is), with punctuation the clean-up rewrites, and an added token."""
    vocab = _json(directory / VOCABULARY_FILE)
    del vocab["<s>"]
    end = max(vocab.values()) + 1
    vocab |= {".": end, "?": end + 1}
    _write(directory / VOCABULARY_FILE, vocab)
    _write(directory / ADDED_TOKENS_FILE, {"<laugh>": end + 2})


LAYOUTS: dict[str, tuple[str, Callable[[Path], None] | None]] = {
    "char": ("char", None),
    "char_processor": ("char_processor", None),
    "char_phones": ("char_phones", None),
    "phone": ("phone", None),
    "char_legacy": ("char", lambda d: _legacy(d, named_class=False)),
    "char_legacy_lower_clean": (
        "char",
        lambda d: (
            _legacy(d, named_class=False, do_lower_case=True, clean_up_tokenization_spaces=True),
            _holes_and_added(d),
        ),
    ),
    "char_phones_legacy": ("char_phones", lambda d: _legacy(d, named_class=True)),
    "phone_legacy": ("phone", lambda d: _legacy(d, named_class=True)),
    "phone_legacy_clean": (
        "phone",
        lambda d: (
            _legacy(d, named_class=True, clean_up_tokenization_spaces=True),
            _holes_and_added(d),
        ),
    ),
}
"""Each case: the saved model it starts from, and how its tokenizer files are rewritten."""


def _directory(saved: dict[str, Path], case: str, tmp_path: Path) -> Path:
    source, rewrite = LAYOUTS[case]
    if rewrite is None:
        return saved[source]
    directory = shutil.copytree(saved[source], tmp_path / case)
    rewrite(directory)
    return directory


def _sequences(size: int, blank: int, delimiters: list[int], specials: list[int]) -> list:
    """Seeded id sequences rich in what decoding treats apart: repeats, blanks, word
    delimiters, special tokens, and ids beyond the vocabulary (the unknown token)."""
    rng = random.Random(20240611)
    sequences: list[list[int]] = [[blank], [size + 1]]
    for _ in range(SEQUENCES):
        ids: list[int] = []
        for _ in range(rng.randrange(1, 40)):
            kind = rng.random()
            if ids and kind < 0.25:
                ids.append(ids[-1])
            elif kind < 0.5:
                ids.append(blank)
            elif kind < 0.6 and delimiters:
                ids.append(rng.choice(delimiters))
            elif kind < 0.7:
                ids.append(rng.choice(specials))
            else:
                ids.append(rng.randrange(size + 3))
        sequences.append(ids)
    return sequences


@pytest.mark.parametrize("case", sorted(LAYOUTS))
def test_the_decode_and_vocabulary_equal_the_installed_tokenizers(saved, case, tmp_path):
    from transformers import AutoTokenizer

    directory = _directory(saved, case, tmp_path)
    reference = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
    mine = read_tokenizer(directory)
    assert list(mine.get_vocab().items()) == list(reference.get_vocab().items())
    assert mine.pad_token_id == reference.pad_token_id
    assert mine.specials == tuple(reference.all_special_tokens)
    vocab = reference.get_vocab()
    delimiters = [vocab[t] for t in ("|", " ") if t in vocab]
    specials = [vocab[t] for t in reference.all_special_tokens if t in vocab]
    decoded = set()
    size = max(vocab.values()) + 1
    for ids in _sequences(size, reference.pad_token_id, delimiters, specials):
        expected = reference.decode(ids)
        assert mine.decode(ids) == expected, ids
        decoded.add(expected)
    assert len(decoded) > SEQUENCES // 2  # the sequences differ where it matters
    if mine.clean_up_tokenization_spaces:
        assert any("." in text or "'" in text for text in decoded)


def test_no_ids_decode_as_the_installed_tokenizers_do(saved):
    from transformers import AutoTokenizer

    for case in ("char", "phone"):
        reference = AutoTokenizer.from_pretrained(str(saved[case]), local_files_only=True)
        mine = read_tokenizer(saved[case])
        if case == "char":
            assert mine.decode([]) == reference.decode([]) == ""
            continue
        with pytest.raises(ValueError):
            reference.decode([])
        with pytest.raises(ValueError, match="no ids"):
            mine.decode([])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tokenizer_class": "BertTokenizer"}, "BertTokenizer is not a Wav2Vec2CTCTokenizer"),
        ({"target_lang": "eng"}, "multilingual vocabularies are not reproduced"),
    ],
)
def test_a_tokenizer_that_is_not_reproduced_fails_the_model_check(saved, tmp_path, change, message):
    directory = shutil.copytree(saved["char"], tmp_path / "model")
    config = _json(directory / TOKENIZER_CONFIG_FILE)
    _write(directory / TOKENIZER_CONFIG_FILE, config | change)
    with pytest.raises(TokenizerUnsupported, match=message):
        read_tokenizer(directory)
    with pytest.raises(models.ModelUnavailable, match=f"its tokenizer: .*{message}"):
        models.check(str(directory), "evaluator_options.per.models.en")
