"""Finding, loading and running wav2vec2 models, all in one place and never over the network.

A model is named in ``evaluator_options.<evaluator>.model`` (or ``models`` per language) by a
local directory or by a Hugging Face id. An id is looked up only in the local Hugging Face
cache (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``) with
``local_files_only``: nothing is ever downloaded at run time, and a missing model is an error
naming the option and how to fetch the model once, on a machine with internet access.

Models load once per process (``functools.cache``; the workflow runs one evaluator per job),
go to the GPU when one is visible, run under ``torch.inference_mode`` with deterministic
algorithms, and are fed length-sorted batches.

The default ids are PathBench's (its evaluators and its published test values): the phone
recogniser ``facebook/wav2vec2-xlsr-53-espeak-cv-ft`` (ArtP, Confidence, DArtP, dPER), the
per-language ASR models ``jonatasgrosman/wav2vec2-large-xlsr-53-<language>`` (PER, Double
ASR, DArtP) and ``facebook/wav2vec2-large`` hidden layer 10 for NAD.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

PHONE_MODEL = "facebook/wav2vec2-xlsr-53-espeak-cv-ft"
"""PathBench's phone recogniser (espeak-ng phone vocabulary, 392 tokens, 1.26 GB)."""
NAD_MODEL = "facebook/wav2vec2-large"
"""PathBench's NAD feature model (no CTC head; hidden layer 10 is compared)."""
ASR_MODELS: Mapping[str, str] = {
    "en": "jonatasgrosman/wav2vec2-large-xlsr-53-english",
    "es": "jonatasgrosman/wav2vec2-large-xlsr-53-spanish",
    "nl": "jonatasgrosman/wav2vec2-large-xlsr-53-dutch",
    "it": "jonatasgrosman/wav2vec2-large-xlsr-53-italian",
    "cmn": "jonatasgrosman/wav2vec2-large-xlsr-53-chinese-zh-cn",
}
"""PathBench's character ASR model per language (PER, Double ASR, DArtP)."""
MIN_SAMPLES = 400
"""Shortest input PathBench scores (25 ms): wav2vec2's convolutions need 400 samples a frame."""
PACKAGES = ("torch", "transformers")


class ModelUnavailable(ValueError):
    """A configured model (or the packages to run it) is not on this machine."""


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache as huggingface_hub itself finds it, read at call time."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "huggingface"
    )
    return Path(home) / "hub"


def _looks_like_path(model: str) -> bool:
    """Hub ids are ``name`` or ``owner/name``; anything else can only be a path."""
    return model.startswith((".", "/", "~")) or model.count("/") > 1


def resolve(model: str, option: str) -> Path:
    """The local directory holding ``model`` (a directory, or an id in the local HF cache).

    Raises:
        ModelUnavailable: naming ``option`` (``evaluator_options.artp.model``) and the fix.
    """
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve()
    if _looks_like_path(model):
        raise ModelUnavailable(f"{option}: model directory {model!r} does not exist")
    cache_dir = hf_cache_dir()
    try:
        hub = importlib.import_module("huggingface_hub")
        found = hub.snapshot_download(model, cache_dir=cache_dir, local_files_only=True)
    except Exception as error:  # noqa: BLE001 - every failure means "not available offline"
        raise ModelUnavailable(
            f"{option}: model {model!r} is neither a local directory nor in the Hugging Face "
            f"cache {cache_dir} ({type(error).__name__}). Nothing is downloaded at run time: "
            f"fetch it once where there is internet (`hf download {model}`, or "
            f"`huggingface-cli download {model}`), then copy the cache here and set "
            f"HF_HUB_CACHE, or set {option} to the model's directory."
        ) from None
    return Path(found)


def require_packages(option: str) -> None:
    """Fail with the install command when torch or transformers are missing."""
    missing = [name for name in PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise ModelUnavailable(
            f"{option}: model-based measures need {', '.join(missing)}; "
            'install them with `pip install -e ".[neural]"`'
        )


def check(model: str, option: str) -> Path:
    """Up-front check of one configured model: packages importable and model on disk."""
    require_packages(option)
    return resolve(model, option)


def _torch() -> Any:
    """torch, set up once for reproducible inference."""
    torch = importlib.import_module("torch")
    if torch.cuda.is_available():
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    torch.use_deterministic_algorithms(True, warn_only=True)
    return torch


def _device(torch: Any) -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class CTCModel:
    """A wav2vec2 CTC model with its feature extractor and vocabulary."""

    model: Any
    extractor: Any
    vocab: dict[str, int]
    blank: int
    specials: frozenset[str]
    torch: Any

    @property
    def labels(self) -> list[str]:
        """Token strings by id."""
        by_id = {index: token for token, index in self.vocab.items()}
        return [by_id.get(i, "") for i in range(len(by_id))]

    def _can_pad(self) -> bool:
        """Whether padded batches give each item its own result: only with layer-norm
        feature encoders, which take an attention mask. Group-norm encoders (wav2vec2-base)
        normalise over the whole padded input, so they run one utterance at a time."""
        return getattr(self.model.config, "feat_extract_norm", "group") == "layer"

    def log_posteriors(self, audios: Sequence[np.ndarray], batch_size: int = 8) -> list[np.ndarray]:
        """Log-softmax outputs (frames, vocabulary) per audio, in input order.

        Audios are sorted by length and batched (``batch_size``), so little padding is
        computed; each item's frames beyond its own length are dropped.
        """
        size = batch_size if self._can_pad() else 1
        order = sorted(range(len(audios)), key=lambda i: (-len(audios[i]), i))
        results: list[np.ndarray | None] = [None] * len(audios)
        for start in range(0, len(order), size):
            chunk = order[start : start + size]
            for index, output in zip(chunk, self._run([audios[i] for i in chunk]), strict=True):
                results[index] = output
        return [r for r in results if r is not None]

    def _run(self, audios: list[np.ndarray]) -> list[np.ndarray]:
        torch = self.torch
        inputs = self.extractor(
            [np.asarray(a, dtype=np.float32) for a in audios],
            sampling_rate=16000,
            padding=True,
            return_attention_mask=True,
            return_tensors="pt",
        )
        device = self.model.device
        mask = inputs["attention_mask"].to(device) if self._can_pad() else None
        with torch.inference_mode():
            logits = self.model(inputs["input_values"].to(device), attention_mask=mask).logits
            log_probs = torch.log_softmax(logits.double(), dim=-1).cpu().numpy()
        lengths = self.model._get_feat_extract_output_lengths(
            torch.tensor([len(a) for a in audios])
        ).tolist()
        return [log_probs[i, :n] for i, n in enumerate(lengths)]


@cache
def load_ctc(directory: str) -> CTCModel:
    """Load a CTC model (weights, feature extractor, tokenizer vocabulary) from a directory."""
    torch = _torch()
    transformers = importlib.import_module("transformers")
    model = transformers.AutoModelForCTC.from_pretrained(directory, local_files_only=True)
    extractor = transformers.AutoFeatureExtractor.from_pretrained(directory, local_files_only=True)
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory, local_files_only=True)
    model = model.to(_device(torch)).eval()
    vocab = dict(tokenizer.get_vocab())
    blank = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    specials = frozenset(tokenizer.all_special_tokens)
    return CTCModel(model, extractor, vocab, int(blank), specials, torch)


@dataclass
class Encoder:
    """A wav2vec2 encoder whose hidden states are features (NAD)."""

    model: Any
    torch: Any

    def hidden(self, audio: np.ndarray, layer: int) -> np.ndarray:
        """Hidden layer ``layer`` (frames, dims) of raw float32 audio (no normalisation,
        as PathBench feeds it)."""
        torch = self.torch
        inputs = torch.from_numpy(np.asarray(audio, dtype=np.float32)).unsqueeze(0)
        with torch.inference_mode():
            states = self.model(inputs.to(self.model.device), output_hidden_states=True)
        if not 0 <= layer < len(states.hidden_states):
            raise ValueError(f"layer {layer} outside 0..{len(states.hidden_states) - 1}")
        return states.hidden_states[layer][0].double().cpu().numpy()


@cache
def load_encoder(directory: str) -> Encoder:
    """Load the wav2vec2 encoder of a checkpoint directory (a CTC head, if any, is unused)."""
    torch = _torch()
    transformers = importlib.import_module("transformers")
    model = transformers.Wav2Vec2Model.from_pretrained(directory, local_files_only=True)
    return Encoder(model.to(_device(torch)).eval(), torch)
