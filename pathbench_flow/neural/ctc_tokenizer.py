"""A wav2vec2 CTC model's vocabulary and greedy decode, read from its files without transformers.

PathBench decodes a CTC model's best path with the model's tokenizer
(``tokenizer.decode(argmax(logits))``), and the measures read the tokenizer's vocabulary and
special tokens. Building that tokenizer (``transformers.AutoTokenizer``) imports transformers,
and transformers 5 imports torch: ~1.7 s of every job that reads a model's outputs from track
files and never runs the network. This module reads the same files and reproduces what the
installed transformers' ``Wav2Vec2CTCTokenizer`` (character ASR models) and
``Wav2Vec2PhonemeCTCTokenizer`` (PathBench's phone model) give for the calls PathBench makes:
``get_vocab()``, ``pad_token_id``, ``all_special_tokens`` and ``decode(ids)`` with its defaults.
``tests/test_ctc_tokenizer.py`` holds it to the installed tokenizers on random id sequences.

The files are those ``save_pretrained`` writes in either layout: transformers 5 (and 4.34 on)
keeps the added tokens in ``tokenizer_config.json``'s ``added_tokens_decoder``; older
checkpoints (most on the hub) have ``special_tokens_map.json`` and ``added_tokens.json``
instead. How transformers 5 turns them into a tokenizer, in the order it does it:

* ``tokenizer_config.json`` keys ending in ``_token`` that are not one of the named special
  tokens (bos, eos, unk, sep, pad, cls, mask) and hold a string become model-specific special
  tokens, so the character tokenizer's word delimiter ``|`` is a special token. The character
  tokenizer's own ``word_delimiter_token`` argument then keeps its default ``|``; the phone
  tokenizer takes both delimiters back from the model-specific tokens.
* Without ``added_tokens_decoder``, ``special_tokens_map.json`` overrides the named tokens and
  ``added_tokens.json`` lists the added tokens.
* Special tokens that are not added tokens yet are added, in order: at their vocabulary id if
  they are in the vocabulary, else at the next free id.
* Decoding maps each id to its token (the character tokenizer looks in the vocabulary first,
  the phone tokenizer in the added tokens first; neither found: the unknown token), merges
  repeats, drops the pad (CTC blank) token, then the character tokenizer turns the word
  delimiter into ``replace_word_delimiter_char`` and joins without spaces (lower-cased with
  ``do_lower_case``), the phone tokenizer drops the word delimiter and joins with spaces; the
  result is stripped, and cleaned up with ``clean_up_tokenization_spaces``.

A tokenizer these rules do not cover (another class, a multilingual vocabulary with
``target_lang``) is refused with :class:`TokenizerUnsupported`, which the up-front model check
reports, rather than decoded some other way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import groupby
from pathlib import Path
from typing import Any

VOCABULARY_FILE = "vocab.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
SPECIAL_TOKENS_MAP_FILE = "special_tokens_map.json"
"""Named special tokens of a checkpoint saved before transformers 4.34 (read only when
``tokenizer_config.json`` has no ``added_tokens_decoder``)."""
ADDED_TOKENS_FILE = "added_tokens.json"
"""Added tokens (token → id) of a checkpoint saved before transformers 4.34."""
MODEL_CONFIG_FILE = "config.json"
CHARACTERS = "Wav2Vec2CTCTokenizer"
PHONES = "Wav2Vec2PhonemeCTCTokenizer"
TOKENIZER_BY_MODEL_TYPE: Mapping[str, str] = {
    "data2vec-audio": CHARACTERS,
    "hubert": CHARACTERS,
    "unispeech": CHARACTERS,
    "unispeech-sat": CHARACTERS,
    "wav2vec2": CHARACTERS,
    "wav2vec2-bert": CHARACTERS,
    "wav2vec2-conformer": CHARACTERS,
    "wav2vec2_phoneme": PHONES,
}
"""The tokenizer ``AutoTokenizer`` picks by ``config.json``'s ``model_type`` when neither
``tokenizer_config.json`` nor ``config.json`` names a ``tokenizer_class`` (the CTC models of
transformers' tokenizer mapping)."""
NAMED_SPECIALS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)
"""transformers' ``SPECIAL_TOKENS_ATTRIBUTES``, in its order."""
DEFAULTS: Mapping[str, str] = {
    "bos_token": "<s>",
    "eos_token": "</s>",
    "unk_token": "<unk>",
    "pad_token": "<pad>",
}
"""The named special tokens both tokenizers' constructors default to."""
WORD_DELIMITER = "word_delimiter_token"
PHONE_DELIMITER = "phone_delimiter_token"
CHARACTER_WORD_DELIMITER = "|"
"""The character tokenizer's ``word_delimiter_token`` default, which transformers 5 keeps
whatever a string in the config says (the string goes to the model-specific specials)."""
CLEAN_UPS = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)
"""transformers' ``clean_up_tokenization``, replacement by replacement, in its order."""


class TokenizerUnsupported(ValueError):
    """A model directory whose tokenizer this module does not reproduce, or cannot read."""


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise TokenizerUnsupported(f"{path.name} is unreadable ({error})") from None


def _content(value: Any) -> Any:
    """A token as transformers stores it: a string, or a serialised ``AddedToken`` (a dict
    with ``content``), whose string is its content; anything else (None) as it is."""
    if isinstance(value, dict):
        if not isinstance(value.get("content"), str):
            raise TokenizerUnsupported(f"a token without content: {value!r}")
        return value["content"]
    return value


def _tokenizer_class(directory: Path, config: Mapping[str, Any]) -> str:
    """The tokenizer class ``AutoTokenizer`` builds for ``directory``."""
    named = config.get("tokenizer_class")
    model: Mapping[str, Any] = {}
    if not named and (directory / MODEL_CONFIG_FILE).is_file():
        model = _read_json(directory / MODEL_CONFIG_FILE)
        named = model.get("tokenizer_class") or TOKENIZER_BY_MODEL_TYPE.get(
            str(model.get("model_type"))
        )
    if named not in (CHARACTERS, PHONES):
        raise TokenizerUnsupported(
            f"tokenizer {named or 'of model_type ' + repr(model.get('model_type'))} is not a "
            f"{CHARACTERS} or {PHONES}, the tokenizers whose decoding is reproduced"
        )
    return str(named)


@dataclass(frozen=True)
class CTCTokenizer:
    """What PathBench reads of a wav2vec2 CTC tokenizer (see the module docstring)."""

    kind: str
    """:data:`CHARACTERS` or :data:`PHONES`."""
    encoder: Mapping[str, int]
    """``vocab.json``, in its order."""
    added: Mapping[int, str]
    """Added tokens, id → token."""
    specials: tuple[str, ...]
    """``all_special_tokens``, in transformers' order."""
    pad_token: str | None
    unk_token: str | None
    word_delimiter: str | None
    replace_word_delimiter_char: str
    do_lower_case: bool
    clean_up_tokenization_spaces: bool

    @cached_property
    def _decoder(self) -> dict[int, str]:
        return {index: token for token, index in self.encoder.items()}

    def get_vocab(self) -> dict[str, int]:
        """The vocabulary with the added tokens (a token added at several ids: the highest)."""
        vocab = dict(self.encoder)
        vocab.update({token: index for index, token in sorted(self.added.items())})
        return vocab

    @property
    def pad_token_id(self) -> int | None:
        """The CTC blank's id (``convert_tokens_to_ids(pad_token)``)."""
        if self.pad_token is None:
            return None
        ids = {token: index for index, token in sorted(self.added.items())}
        return ids.get(self.pad_token, self.encoder.get(self.pad_token, self._unk_id()))

    def _unk_id(self) -> int | None:
        ids = {token: index for index, token in sorted(self.added.items())}
        if self.unk_token is None:
            return None
        return ids.get(self.unk_token, self.encoder.get(self.unk_token))

    def token(self, index: int) -> str:
        """``convert_ids_to_tokens`` of one id."""
        first, second = (
            (self._decoder, self.added) if self.kind == CHARACTERS else (self.added, self._decoder)
        )
        found = first.get(index, second.get(index, self.unk_token))
        if found is None:
            raise ValueError(f"id {index} is in neither the vocabulary nor the added tokens")
        return found

    def decode(self, ids: Sequence[int]) -> str:
        """``tokenizer.decode(ids)`` with its defaults, as PathBench's greedy decode calls it.

        Raises:
            ValueError: no ids for the phone tokenizer, which fails on them too (a model's
                output always has a frame).
        """
        if not ids and self.kind == PHONES:
            raise ValueError("no ids to decode")
        runs = [token for token, _run in groupby(self.token(int(i)) for i in ids)]
        kept = [token for token in runs if token != self.pad_token]
        if self.kind == CHARACTERS:
            text = "".join(
                self.replace_word_delimiter_char if token == self.word_delimiter else token
                for token in kept
            ).strip()
            text = text.lower() if self.do_lower_case else text
        else:
            text = " ".join(t for t in kept if t != self.word_delimiter).strip()
        if self.clean_up_tokenization_spaces:
            for old, new in CLEAN_UPS:
                text = text.replace(old, new)
        return text


def read_tokenizer(directory: str | Path) -> CTCTokenizer:
    """The tokenizer of the CTC model in ``directory``, as ``AutoTokenizer.from_pretrained``
    of the installed transformers 5 builds it.

    Raises:
        TokenizerUnsupported: the files are unreadable, or name a tokenizer not reproduced.
    """
    directory = Path(directory)
    config_path = directory / TOKENIZER_CONFIG_FILE
    config: dict[str, Any] = _read_json(config_path) if config_path.is_file() else {}
    if not isinstance(config, dict):
        raise TokenizerUnsupported(f"{TOKENIZER_CONFIG_FILE} holds no JSON object")
    kind = _tokenizer_class(directory, config)
    if config.get("target_lang") is not None:
        raise TokenizerUnsupported(
            f"target_lang {config['target_lang']!r}: multilingual vocabularies are not reproduced"
        )
    encoder = _read_json(directory / VOCABULARY_FILE)
    if not isinstance(encoder, dict) or not all(isinstance(i, int) for i in encoder.values()):
        raise TokenizerUnsupported(f"{VOCABULARY_FILE} is no flat token → id object")
    if "additional_special_tokens" in config and not config.get("extra_special_tokens"):
        config["extra_special_tokens"] = config.pop("additional_special_tokens")
    # Strings only: a serialised AddedToken is converted after this split, as in transformers.
    model_specific = {
        key: config.pop(key)
        for key in list(config)
        if key not in NAMED_SPECIALS and key.endswith("_token") and isinstance(config[key], str)
    }
    if isinstance(config.get("extra_special_tokens"), dict):
        model_specific.update(config.pop("extra_special_tokens"))
    added: dict[int, str] = {}
    if "added_tokens_decoder" in config:
        added = {int(i): str(_content(t)) for i, t in config["added_tokens_decoder"].items()}
    else:
        added = _legacy_added_tokens(directory, config)
    named = {key: _content(config.get(key, DEFAULTS.get(key))) for key in NAMED_SPECIALS}
    if kind == CHARACTERS:
        word_delimiter = _content(config.get(WORD_DELIMITER, CHARACTER_WORD_DELIMITER))
        # the constructor hands its delimiter on to the base class, where it is a model-specific
        # special token unless the config's own string replaces it
        if word_delimiter is not None:
            model_specific = {WORD_DELIMITER: word_delimiter, **model_specific}
    else:
        word_delimiter = _content(model_specific.pop(WORD_DELIMITER, config.get(WORD_DELIMITER)))
        model_specific.pop(PHONE_DELIMITER, None)
    specials = _unique(
        [v for v in named.values() if v is not None]
        + [str(_content(v)) for v in model_specific.values()]
        + [str(_content(v)) for v in config.get("extra_special_tokens") or []]
    )
    _add_specials(encoder, added, specials)
    if kind == CHARACTERS:
        vocab = {**encoder, **{token: index for index, token in sorted(added.items())}}
        for token in encoder:
            if len(token) > 1:
                added[vocab[token]] = token
    return CTCTokenizer(
        kind=kind,
        encoder=encoder,
        added=added,
        specials=specials,
        pad_token=named["pad_token"],
        unk_token=named["unk_token"],
        word_delimiter=None if word_delimiter is None else str(word_delimiter),
        replace_word_delimiter_char=str(config.get("replace_word_delimiter_char", " ")),
        do_lower_case=kind == CHARACTERS and bool(config.get("do_lower_case", False)),
        clean_up_tokenization_spaces=bool(config.get("clean_up_tokenization_spaces", False)),
    )


def _legacy_added_tokens(directory: Path, config: dict[str, Any]) -> dict[int, str]:
    """A pre-4.34 checkpoint: ``special_tokens_map.json`` overrides the named special tokens in
    ``config`` (in place), ``added_tokens.json`` gives the added tokens."""
    if (directory / SPECIAL_TOKENS_MAP_FILE).is_file():
        special_map = _read_json(directory / SPECIAL_TOKENS_MAP_FILE)
        for key, value in special_map.items():
            if key in ("extra_special_tokens", "additional_special_tokens"):
                existing = list(config.get("extra_special_tokens") or [])
                existing += [_content(t) for t in value if _content(t) not in existing]
                config["extra_special_tokens"] = existing
            else:
                config[key] = _content(value)
    if not (directory / ADDED_TOKENS_FILE).is_file():
        return {}
    return {int(i): str(t) for t, i in _read_json(directory / ADDED_TOKENS_FILE).items()}


def _unique(tokens: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(tokens))


def _add_specials(
    encoder: Mapping[str, int], added: dict[int, str], specials: Sequence[str]
) -> None:
    """The special tokens that are no added token yet, added (``PreTrainedTokenizer.__init__``):
    at their id in the vocabulary with the added tokens, else at the next id after its size."""
    present = set(added.values())
    vocab = {**encoder, **{token: index for index, token in sorted(added.items())}}
    size = len(vocab)
    for token in specials:
        if token in present or token == "":
            continue
        if token not in vocab:
            vocab[token] = size
            size += 1
        added[vocab[token]] = token
        present.add(token)
