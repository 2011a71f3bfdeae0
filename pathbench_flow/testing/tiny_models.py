"""Tiny randomly initialised wav2vec2 CTC models, saved like Hugging Face checkpoints.

They have PathBench's architecture (the large models' layer-norm feature encoder with the
same 320-sample frame step) at a size that runs in milliseconds: the compute paths, batching,
alignment and statuses are real, only the weights are random. A phone model (espeak phones)
and a character model (a-z, apostrophe, ``|`` word delimiter) are built.

:func:`build_seeded_model` builds the models the PathBench conformance benchmark and its
frozen-value tests share. Their weights come from numpy's seeded generator, one stream per
tensor name, so the same seed gives the same bytes under any torch or transformers version
(torch's initialisers are free to change, and values frozen from one environment must be
recomputable in another). A :class:`Peak` turns the near-uniform posteriors of random weights
into ones shaped like a trained model's (confident, mostly blank), which is where alignment
and decoding rules start to matter; :data:`LARGE` is wav2vec2-large-xlsr-53's size, for speed
figures that mean something.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

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


def build_ctc_model(
    directory: Path, symbols: list[str], seed: int, processor: bool = False, **sizes: int
) -> Path:
    """A random wav2vec2 CTC checkpoint with tokenizer and feature extractor in ``directory``.

    Both are saved by the installed transformers' own ``save_pretrained``: each on its own
    (``preprocessor_config.json``, the layout of every transformers 4 checkpoint on the hub),
    or with ``processor`` as one ``Wav2Vec2Processor`` (transformers 5 writes
    ``processor_config.json`` with the feature extractor nested inside).
    """
    import torch
    from transformers import (
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
        Wav2Vec2Processor,
    )

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
    extractor = Wav2Vec2FeatureExtractor(
        feature_size=1,
        sampling_rate=16000,
        padding_value=0.0,
        do_normalize=True,
        return_attention_mask=True,
    )
    if processor:
        Wav2Vec2Processor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(
            directory
        )
    else:
        tokenizer.save_pretrained(directory)
        extractor.save_pretrained(directory)
    return directory


def build_phone_model(
    directory: Path, seed: int = 0, processor: bool = False, **sizes: int
) -> Path:
    return build_ctc_model(directory, PHONES, seed, processor, **sizes)


def build_char_model(directory: Path, seed: int = 1, processor: bool = False, **sizes: int) -> Path:
    return build_ctc_model(directory, LETTERS, seed, processor, **sizes)


def as_hf_cache(
    model_dir: Path, cache: Path, repo_id: str, commit: str = "0" * 40, link: bool = False
) -> Path:
    """Place ``model_dir`` in ``cache`` with huggingface_hub's layout (refs/main → snapshot).

    ``link`` makes the snapshot a symlink instead of a copy (large models, one directory
    serving several ids); several ``commit`` s of one id let a process switch which model an id
    means by rewriting ``refs/main`` (huggingface_hub reads the cache location only at import).
    """
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit
    if link:
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.symlink_to(Path(model_dir).resolve(), target_is_directory=True)
    else:
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


# --- seeded models for the PathBench conformance benchmark and its frozen values ----------

_FULL_ENCODER = dict(
    conv_dim=(512,) * 7, num_conv_pos_embeddings=128, num_conv_pos_embedding_groups=16
)
"""The feature encoder and positional convolution every released wav2vec2 size shares."""
LARGE = dict(
    hidden_size=1024,
    num_hidden_layers=24,
    num_attention_heads=16,
    intermediate_size=4096,
    **_FULL_ENCODER,
)
"""wav2vec2-large-xlsr-53's size (315 M parameters), the size of every PathBench model."""
BASE = dict(
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    **_FULL_ENCODER,
)
"""wav2vec2-base's size (``Wav2Vec2Config``'s defaults, 95 M parameters), the size
``benchmarks/neural.py`` times the model rows at."""
SIZES: Mapping[str, Mapping[str, Any]] = {"tiny": TINY, "base": BASE, "large": LARGE}
INITIALIZER_RANGE = 0.02
"""Standard deviation of linear weights (transformers' ``initializer_range`` for wav2vec2)."""
SEEDED_FORMAT = 1
"""Version of the weight recipe below; frozen values name the recipe they were made with."""


@dataclass(frozen=True)
class Peak:
    """How a random CTC head is sharpened into a trained-looking one.

    Random weights give near-uniform posteriors, under which every alignment is about as
    good as any other and a greedy decode is mostly blank ties: rules that differ only for
    confident, blank-dominated outputs (log- versus probability-domain alignment, the handling
    of special tokens in a decode) would never show. Multiplying the head's weights by
    ``scale`` spreads the logits; raising the blank's bias by ``blank_bias`` makes most frames
    blank, as in a trained model.
    """

    scale: float
    blank_bias: float

    def as_dict(self) -> dict[str, float]:
        return {"scale": self.scale, "blank_bias": self.blank_bias}


PEAKS: Mapping[str, Mapping[str, Peak]] = {
    "tiny": {"phone": Peak(scale=28.0, blank_bias=6.1), "char": Peak(scale=33.0, blank_bias=8.4)},
    "large": {"phone": Peak(scale=5.5, blank_bias=6.6), "char": Peak(scale=6.8, blank_bias=11.7)},
}
"""Per size and model (phone, character), the peaking :func:`calibrate_peak` found for a mean
max posterior of 0.7 with two thirds of the frames blank on espeak-ng speech (the conformance
benchmark prints what the models give on its audio)."""


def _canonical(key: str) -> str:
    """One name per tensor whatever torch calls weight norm's halves (``weight_g``/``weight_v``
    before torch 2.1's parametrisations, ``original0``/``original1`` after)."""
    return key.replace("parametrizations.weight.original0", "weight_g").replace(
        "parametrizations.weight.original1", "weight_v"
    )


def _stream(seed: int, key: str) -> np.random.Generator:
    """A generator per (seed, tensor): a tensor's values do not depend on which other tensors
    exist or in which order a transformers version lists them."""
    return np.random.default_rng([seed, zlib.crc32(key.encode())])


def _module_of(model: Any, key: str) -> Any:
    owner = key.rsplit(".", 1)[0].replace(".parametrizations.weight", "")
    return model.get_submodule(owner)


def _values(model: Any, key: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """transformers' wav2vec2 initialisation, drawn from numpy (scales as in
    ``Wav2Vec2PreTrainedModel._init_weights``)."""
    import torch

    canonical = _canonical(key)
    rng = _stream(seed, canonical)
    leaf = canonical.rsplit(".", 1)[-1]
    if leaf == "masked_spec_embed":
        return rng.uniform(0.0, 1.0, shape)
    module = _module_of(model, key)
    if isinstance(module, torch.nn.LayerNorm | torch.nn.GroupNorm):
        return np.ones(shape) if leaf == "weight" else np.zeros(shape)
    if isinstance(module, torch.nn.Conv1d) and leaf in ("weight_g", "weight_v"):
        std = 2 * np.sqrt(1 / (module.kernel_size[0] * module.in_channels))
        v_shape = (module.out_channels, module.in_channels // module.groups, *module.kernel_size)
        v = _stream(seed, canonical.replace("weight_g", "weight_v")).normal(0.0, std, v_shape)
        # g = |v| over all but the kernel axis (weight norm, dim=2): the weight equals v
        return v if leaf == "weight_v" else np.sqrt((v**2).sum(axis=(0, 1), keepdims=True))
    if isinstance(module, torch.nn.Conv1d):
        fan_in = module.in_channels * module.kernel_size[0] // module.groups
        if leaf == "weight":
            return rng.normal(0.0, np.sqrt(2 / fan_in), shape)  # kaiming normal
        if "pos_conv_embed" in canonical:
            return np.zeros(shape)
        return rng.uniform(-np.sqrt(1 / fan_in), np.sqrt(1 / fan_in), shape)
    if isinstance(module, torch.nn.Linear):
        if canonical.endswith("feature_projection.projection." + leaf):
            bound = 1 / np.sqrt(module.in_features)
            return rng.uniform(-bound, bound, shape)
        return rng.normal(0.0, INITIALIZER_RANGE, shape) if leaf == "weight" else np.zeros(shape)
    raise ValueError(f"no seeded initialisation for {key} ({type(module).__name__})")


def seed_weights(model: Any, seed: int, peak: Peak | None = None, blank: int = 0) -> None:
    """Overwrite every weight of ``model`` from numpy's generator seeded with ``seed``."""
    import torch

    state = {}
    for key, tensor in model.state_dict().items():
        values = _values(model, key, tuple(tensor.shape), seed)
        if peak is not None and key.startswith("lm_head."):
            if key.endswith("weight"):
                values = values * peak.scale
            else:
                values[blank] += peak.blank_bias
        state[key] = torch.from_numpy(values.astype(np.float32))
    model.load_state_dict(state, strict=True)


def _feature_extractor(directory: Path, attention_mask: bool) -> None:
    from transformers import Wav2Vec2FeatureExtractor

    Wav2Vec2FeatureExtractor(
        feature_size=1,
        sampling_rate=16000,
        padding_value=0.0,
        do_normalize=True,
        return_attention_mask=attention_mask,
    ).save_pretrained(directory)


def build_seeded_model(
    directory: Path,
    symbols: list[str],
    seed: int,
    size: str = "tiny",
    peak: Peak | None = None,
    phones: bool = False,
) -> Path:
    """A wav2vec2 CTC checkpoint whose weights depend only on ``seed``, ``size`` and ``peak``.

    ``phones`` gives it the tokenizer of PathBench's phone model (facebook's espeak-cv-ft:
    ``Wav2Vec2PhonemeCTCTokenizer``, whose decode separates phones by spaces) instead of the
    character tokenizer of the per-language ASR models, because PathBench's dPER reads that
    decode. A ``seeded.json`` beside the weights records the recipe and the weights' digest.
    """
    from transformers import Wav2Vec2CTCTokenizer, Wav2Vec2ForCTC, Wav2Vec2PhonemeCTCTokenizer

    directory.mkdir(parents=True, exist_ok=True)
    vocab = {token: index for index, token in enumerate(SPECIALS + symbols)}
    vocab_file = directory / "vocab.json"
    vocab_file.write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    if phones:
        tokenizer = Wav2Vec2PhonemeCTCTokenizer(
            str(vocab_file), pad_token="<pad>", unk_token="<unk>", do_phonemize=False
        )
    else:
        tokenizer = Wav2Vec2CTCTokenizer(
            str(vocab_file), pad_token="<pad>", unk_token="<unk>", word_delimiter_token="|"
        )
    model = Wav2Vec2ForCTC(_config(len(vocab), **SIZES[size])).eval()
    seed_weights(model, seed, peak, blank=vocab["<pad>"])
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    _feature_extractor(directory, attention_mask=True)
    _record(directory, seed=seed, size=size, peak=peak, symbols=symbols, phones=phones)
    return directory


def build_seeded_encoder(directory: Path, seed: int, size: str = "tiny") -> Path:
    """NAD's feature model, shaped like facebook/wav2vec2-large (group-norm feature encoder,
    no CTC head): PathBench reads its hidden layer 10 from the raw waveform."""
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    directory.mkdir(parents=True, exist_ok=True)
    config = Wav2Vec2Config(
        feat_extract_norm="group", do_stable_layer_norm=False, conv_bias=False, **SIZES[size]
    )
    model = Wav2Vec2Model(config).eval()
    seed_weights(model, seed)
    model.save_pretrained(directory)
    _feature_extractor(directory, attention_mask=False)
    _record(directory, seed=seed, size=size, peak=None, symbols=[], phones=False)
    return directory


def _record(directory: Path, **recipe: Any) -> None:
    peak = recipe.pop("peak")
    recipe |= {"format": SEEDED_FORMAT, "peak": peak.as_dict() if peak else None}
    recipe["digest"] = weights_digest(directory)
    (directory / "seeded.json").write_text(json.dumps(recipe, ensure_ascii=False, indent=1))


def weights_digest(directory: Path) -> str:
    """SHA-256 of a checkpoint's tensors (canonical names, shapes, float32 bytes): equal
    digests mean bit-identical models, whichever library versions saved them."""
    from safetensors.numpy import load_file

    tensors: dict[str, np.ndarray] = {}
    for file in sorted(Path(directory).glob("*.safetensors")):
        tensors.update(load_file(str(file)))
    digest = hashlib.sha256()
    for key in sorted(tensors, key=_canonical):
        array = np.ascontiguousarray(tensors[key], dtype="<f4")
        digest.update(f"{_canonical(key)}:{array.shape};".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def posterior_shape(directory: Path, audios: Iterable[np.ndarray]) -> dict[str, float]:
    """Mean max posterior and blank-frame fraction of a CTC model over ``audios``: the two
    figures by which a peaked random model is meant to resemble a trained one."""
    import torch
    from transformers import Wav2Vec2FeatureExtractor, Wav2Vec2ForCTC

    model = Wav2Vec2ForCTC.from_pretrained(str(directory)).eval()
    extractor = Wav2Vec2FeatureExtractor.from_pretrained(str(directory))
    maxima, blanks = [], []
    for audio in audios:
        inputs = extractor(np.asarray(audio, np.float32), sampling_rate=16000, return_tensors="pt")
        with torch.inference_mode():
            probs = torch.softmax(model(inputs.input_values).logits[0], dim=-1)
        best = probs.max(dim=-1)
        maxima.append(best.values.numpy())
        blanks.append((best.indices == model.config.pad_token_id).numpy())
    return {
        "mean_max_posterior": float(np.concatenate(maxima).mean()),
        "blank_fraction": float(np.concatenate(blanks).mean()),
    }


def quiet_hf(offline_cache: Path | None = None) -> None:
    """Point huggingface_hub at ``offline_cache`` (before it is imported) and silence
    transformers' load reports, which warn about heads a feature model does not use."""
    if offline_cache is not None:
        os.environ["HF_HUB_CACHE"] = str(offline_cache)
        os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def _head_inputs(directory: Path, audios: Iterable[np.ndarray]) -> tuple[np.ndarray, Any]:
    """The frames (all audios stacked) that enter the CTC head, and the model."""
    import torch
    from transformers import Wav2Vec2FeatureExtractor, Wav2Vec2ForCTC

    model = Wav2Vec2ForCTC.from_pretrained(str(directory)).eval()
    extractor = Wav2Vec2FeatureExtractor.from_pretrained(str(directory))
    frames = []
    for audio in audios:
        inputs = extractor(np.asarray(audio, np.float32), sampling_rate=16000, return_tensors="pt")
        with torch.inference_mode():
            frames.append(model.wav2vec2(inputs.input_values).last_hidden_state[0].double().numpy())
    return np.concatenate(frames), model


def calibrate_peak(
    directory: Path,
    audios: Iterable[np.ndarray],
    max_posterior: float = 0.7,
    blank_fraction: float = 2 / 3,
) -> Peak:
    """The :class:`Peak` that gives an unpeaked model of ``directory`` the target shape on
    ``audios``: for each scale, the blank bias that makes ``blank_fraction`` of the frames
    blank (bisection), and the scale (bisection) at which the mean max posterior reaches
    ``max_posterior``. Only the head changes, so one encoder pass serves every candidate."""
    hidden, model = _head_inputs(directory, audios)
    weight = model.lm_head.weight.detach().double().numpy()
    bias = model.lm_head.bias.detach().double().numpy()
    blank = model.config.pad_token_id

    def shape(peak: Peak) -> tuple[float, float]:
        logits = hidden @ (weight * peak.scale).T + bias
        logits[:, blank] += peak.blank_bias
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        return float(probs.max(axis=1).mean()), float((probs.argmax(axis=1) == blank).mean())

    def with_blanks(scale: float) -> Peak:
        low, high = -50.0, 50.0
        for _ in range(40):
            middle = (low + high) / 2
            low, high = (
                (middle, high) if shape(Peak(scale, middle))[1] < blank_fraction else (low, middle)
            )
        return Peak(scale, round(high, 3))

    low, high = 0.0, 1000.0
    for _ in range(30):
        middle = (low + high) / 2
        below = shape(with_blanks(middle))[0] < max_posterior
        low, high = (middle, high) if below else (low, middle)
    return with_blanks(round(high, 2))
