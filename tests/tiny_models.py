"""Tiny randomly initialised wav2vec2 CTC models, saved like Hugging Face checkpoints.

They have PathBench's architecture (the large models' layer-norm feature encoder with the
same 320-sample frame step) at a size that runs in milliseconds: the compute paths, batching,
alignment and statuses are real, only the weights are random. A phone model (espeak phones)
and a character model (a-z, apostrophe, ``|`` word delimiter) are built.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

PHONES = [
    "a",
    "b",
    "d",
    "e",
    "f",
    "h",
    "i",
    "j",
    "k",
    "l",
    "m",
    "n",
    "o",
    "p",
    "r",
    "s",
    "t",
    "u",
    "v",
    "w",
    "z",
    "ð",
    "ŋ",
    "ɑ",
    "ɑː",
    "ɔ",
    "ɔː",
    "ə",
    "ɚ",
    "ɛ",
    "ɜː",
    "ɡ",
    "ɪ",
    "ɹ",
    "ɾ",
    "ʃ",
    "ʊ",
    "ʌ",
    "θ",
    "aɪ",
    "aʊ",
    "eɪ",
    "oʊ",
    "iː",
    "uː",
    "tʃ",
    "dʒ",
    "ɲ",
    "x",
]
LETTERS = list("abcdefghijklmnopqrstuvwxyz'") + ["|"]
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]


def _config(vocab_size: int, **sizes: int):
    from transformers import Wav2Vec2Config

    return Wav2Vec2Config(
        vocab_size=vocab_size,
        pad_token_id=0,
        feat_extract_norm="layer",
        do_stable_layer_norm=True,
        conv_bias=True,
        **sizes,
    )


TINY = dict(
    hidden_size=16,
    num_hidden_layers=11,  # NAD compares hidden layer 10
    num_attention_heads=2,
    intermediate_size=32,
    conv_dim=(16,) * 7,
    num_conv_pos_embeddings=16,
    num_conv_pos_embedding_groups=2,
)


def build_ctc_model(directory: Path, symbols: list[str], seed: int, **sizes: int) -> Path:
    """A random wav2vec2 CTC checkpoint with tokenizer and feature extractor in ``directory``."""
    import torch
    from transformers import Wav2Vec2CTCTokenizer, Wav2Vec2FeatureExtractor, Wav2Vec2ForCTC

    directory.mkdir(parents=True, exist_ok=True)
    vocab = {token: index for index, token in enumerate(SPECIALS + symbols)}
    vocab_file = directory / "vocab.json"
    vocab_file.write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = Wav2Vec2CTCTokenizer(
        str(vocab_file), pad_token="<pad>", unk_token="<unk>", word_delimiter_token="|"
    )
    torch.manual_seed(seed)
    model = Wav2Vec2ForCTC(_config(len(vocab), **(sizes or TINY))).eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    Wav2Vec2FeatureExtractor(
        feature_size=1,
        sampling_rate=16000,
        padding_value=0.0,
        do_normalize=True,
        return_attention_mask=True,
    ).save_pretrained(directory)
    return directory


def build_phone_model(directory: Path, seed: int = 0, **sizes: int) -> Path:
    return build_ctc_model(directory, PHONES, seed, **sizes)


def build_char_model(directory: Path, seed: int = 1, **sizes: int) -> Path:
    return build_ctc_model(directory, LETTERS, seed, **sizes)


def as_hf_cache(model_dir: Path, cache: Path, repo_id: str) -> Path:
    """Place ``model_dir`` in ``cache`` with huggingface_hub's layout (refs/main → snapshot)."""
    commit = "0" * 40
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit
    shutil.copytree(model_dir, snapshot)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return snapshot


def write_arpa(path: Path, words: list[str]) -> Path:
    """A uniform bigram ARPA model over ``words`` (kenlm needs order 2 at least)."""
    unigrams = ["-99.0000\t<s>\t-0.3010", "-1.0000\t</s>", "-1.0000\t<unk>\t-0.3010"]
    unigrams += [f"-1.0000\t{word}\t-0.3010" for word in words]
    bigrams = [f"-0.5000\t<s> {word}" for word in words]
    bigrams += [f"-0.5000\t{word} </s>" for word in words]
    lines = ["\\data\\", f"ngram 1={len(unigrams)}", f"ngram 2={len(bigrams)}", ""]
    lines += ["\\1-grams:", *unigrams, "", "\\2-grams:", *bigrams, "", "\\end\\", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
