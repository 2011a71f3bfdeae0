"""Finding, loading and running wav2vec2 models, all in one place and never over the network.

A model is named in ``evaluator_options.<evaluator>.model`` (or ``models`` per language) by a
local directory or by a Hugging Face id. An id is looked up only in the local Hugging Face
cache (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``) with
``local_files_only``: nothing is ever downloaded at run time, and a missing model is an error
naming the option and how to fetch the model once, on a machine with internet access.

Models load once per process (``functools.cache``; the workflow runs one evaluator per job),
go to the device :data:`DEVICE_VARIABLE` names (the config key ``device``; by default the GPU
when one is visible), run under ``torch.inference_mode`` with deterministic algorithms, and are
fed length-sorted batches on a GPU, one utterance at a time on the CPU.

The default ids are PathBench's (its evaluators and its published test values): the phone
recogniser ``facebook/wav2vec2-xlsr-53-espeak-cv-ft`` (ArtP, Confidence, DArtP, dPER), the
per-language ASR models ``jonatasgrosman/wav2vec2-large-xlsr-53-<language>`` (PER, Double
ASR, DArtP) and ``facebook/wav2vec2-large`` hidden layer 10 for NAD.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import numpy as np

from pathbench_flow.neural.ctc_tokenizer import (
    TOKENIZER_CONFIG_FILE,
    VOCABULARY_FILE,
    CTCTokenizer,
    TokenizerUnsupported,
    read_tokenizer,
)

RECORD_FILE = "fetched.lock.json"
"""What a fetch got (every file's SHA-256, the commit), beside a fetched model."""
LM_RECORD_SUFFIX = ".fetched.json"
"""Beside a fetched LM file ``x``: ``x.fetched.json``, its record."""
PHONE_MODEL = "facebook/wav2vec2-xlsr-53-espeak-cv-ft"
"""PathBench's phone recogniser (espeak-ng phone vocabulary, 392 tokens, 1.26 GB)."""
NAD_MODEL = "facebook/wav2vec2-large"
"""PathBench's NAD feature model (no CTC head; hidden layer :data:`NAD_LAYER` is compared)."""
NAD_LAYER = 10
"""The hidden layer of wav2vec2-large that PathBench's NAD compares (middle layers are the most
phonetic)."""
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
CONFIG_FILE = "config.json"
WAV2VEC2_LAYERS = 12
"""transformers' ``Wav2Vec2Config`` default of ``num_hidden_layers``."""
WEIGHTS_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
"""The weights ``from_pretrained`` loads, in the order it looks for them (``*.index.json``: a
sharded checkpoint, whose ``weight_map`` names the shard files)."""
DEVICES = ("auto", "cpu", "cuda")
"""Values of the config key ``device``: ``auto`` runs models on a visible GPU, else the CPU;
``cpu`` always on the CPU; ``cuda`` on a GPU, and a job that sees none fails."""
DEVICE_VARIABLE = "PATHBENCH_DEVICE"
"""The environment variable that carries ``device`` to the jobs (unset: ``auto``). The
workflow sets it when it parses its config, and every job inherits it (a cluster job's own
Snakemake parses the config again), so no evaluator, trimmer or feature function needs an
option for it."""
SAFETENSORS_MAX_HEADER = 100_000_000
"""The safetensors format's limit on its JSON header (bytes): a longer one is no such file."""
FEATURE_EXTRACTOR_FILE = "preprocessor_config.json"
"""Where ``save_pretrained`` of transformers 4 (and a feature extractor saved on its own in 5)
writes the feature extractor."""
PROCESSOR_FILE = "processor_config.json"
"""Where transformers 5 writes a processor's ``save_pretrained``: the feature extractor is the
object under :data:`PROCESSOR_FEATURE_EXTRACTOR_KEY`, and there is no
:data:`FEATURE_EXTRACTOR_FILE`. ``AutoFeatureExtractor`` reads either layout."""
PROCESSOR_FEATURE_EXTRACTOR_KEY = "feature_extractor"
MODEL_DIRECTORY_FIX = (
    "a model directory is what `save_pretrained` of the model and of its processor (or of its "
    "tokenizer and feature extractor) writes"
)
"""How to make a directory the check accepts, in every transformers version."""


PLANNED_FETCHES: dict[str, str] = {}
"""Path → identity of each model directory and LM path the workflow's fetch rules will create
(config ``fetch``; :mod:`pathbench_flow.fetching.plan`). Until it exists, the checks below
leave it to the fetch, which verifies every file."""


def plan_fetched(path: str | Path, identity: str) -> None:
    """Register ``path`` as made by a fetch rule of this run (see :data:`PLANNED_FETCHES`)."""
    PLANNED_FETCHES[str(Path(path).expanduser().resolve())] = identity


def awaiting_fetch(path: str | Path) -> bool:
    """Whether a fetch rule of this run will make ``path``: it is planned, and its fetch has
    not completed (no record; a refused fetch may have left part of a model directory)."""
    target = Path(path).expanduser()
    if str(target.resolve()) not in PLANNED_FETCHES:
        return False
    records = (target / RECORD_FILE, target.with_name(target.name + LM_RECORD_SUFFIX))
    return not any(record.is_file() for record in records)


class ModelUnavailable(ValueError):
    """A configured model (or the packages to run it) is not on this machine."""


class DeviceUnavailable(RuntimeError):
    """``device: cuda`` in a job that sees no CUDA device."""


def gpus_requested(device: str, runs_model: bool) -> int:
    """The ``gpu`` resource of a job (``profiles/slurm`` turns 1 into ``sbatch --gpus=1``).

    Only ``device: cuda`` asks for a GPU, for jobs that run a model. ``auto`` asks for none:
    on a cluster without GPUs a request for one is refused or waits forever, while a model
    job that gets no GPU on a GPU cluster still runs (on the CPU, or on a GPU its partition
    gives it), so asking is what the user opts into, never the default.
    """
    return int(runs_model and configured_device(device) == "cuda")


def configured_device(device: str | None = None) -> str:
    """``device`` (default: :data:`DEVICE_VARIABLE`, unset meaning ``auto``), checked."""
    chosen = (os.environ.get(DEVICE_VARIABLE) or "auto") if device is None else device
    if chosen not in DEVICES:
        raise ValueError(f"device {chosen!r} ({DEVICE_VARIABLE}): one of {', '.join(DEVICES)}")
    return chosen


def require_device() -> None:
    """Fail now, at the start of a job that will run a model, when ``device: cuda`` finds no
    CUDA device; otherwise the first batch would fail every utterance of the job instead."""
    if configured_device() == "cuda":
        _device(_torch())


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
    if path.is_dir() or awaiting_fetch(path):
        return path.resolve()
    if path.exists():
        raise ModelUnavailable(f"{option}: {model!r} is a file; give the model's directory")
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


def check(model: str, option: str, *, ctc: bool = True) -> Path:
    """Up-front check of one configured model: packages importable, model on disk, complete.

    A directory without a loadable model would otherwise pass and fail every utterance of the
    run at its first batch. The check reads the small JSON files ``from_pretrained`` reads and
    finds the weights without loading them, so it is cheap enough for every parse of the
    workflow; it never imports torch (transformers' Auto classes do, ~1.4 s). ``ctc``: a CTC
    model with its feature extractor and tokenizer (:func:`load_ctc`); otherwise a wav2vec2
    encoder, config and weights only (:func:`load_encoder`, NAD).

    Raises:
        ModelUnavailable: naming ``option`` and everything that is missing or unreadable.
    """
    require_packages(option)
    directory = resolve(model, option)
    if awaiting_fetch(directory):
        return directory
    problems = model_problems(directory, ctc=ctc)
    if not problems:
        return directory
    if Path(model).expanduser().is_dir():
        where, fix = str(directory), MODEL_DIRECTORY_FIX
    else:
        where, fix = f"{model!r} ({directory})", f"fetch it again: `hf download {model}`"
    raise ModelUnavailable(
        f"{option}: {where} is not a loadable model: {'; '.join(problems)}; {fix}"
    )


def hidden_layers(directory: Path) -> int:
    """The transformer layers of the model in ``directory`` (its config.json's
    ``num_hidden_layers``, transformers' default :data:`WAV2VEC2_LAYERS` when absent), read
    without torch, so that a configured hidden layer (0 to this number) is checked before any
    job loads the model. The directory has passed :func:`check`."""
    config = _json_object(directory / CONFIG_FILE, []) or {}
    return int(config.get("num_hidden_layers", WAV2VEC2_LAYERS))


def model_problems(directory: Path, *, ctc: bool) -> list[str]:
    """What keeps ``from_pretrained`` from loading the model in ``directory`` (none: loadable)."""
    problems: list[str] = []
    config = _json_object(directory / CONFIG_FILE, problems)
    if config is not None:
        problems += _config_problems(config, ctc)
    problems += _weights_problems(directory)
    if ctc:
        problems += _feature_extractor_problems(directory)
        vocabulary = _json_object(directory / VOCABULARY_FILE, problems)
        if vocabulary is not None and not vocabulary:
            problems.append(f"{VOCABULARY_FILE} is empty")
        if (directory / TOKENIZER_CONFIG_FILE).exists():
            _json_object(directory / TOKENIZER_CONFIG_FILE, problems)
        if not problems:
            try:
                read_tokenizer(directory)
            except TokenizerUnsupported as error:
                problems.append(f"its tokenizer: {error}")
    return problems


def _feature_extractor_problems(directory: Path) -> list[str]:
    """The feature extractor in either layout ``save_pretrained`` writes: its own
    :data:`FEATURE_EXTRACTOR_FILE` (transformers 4, or an extractor saved alone), else nested
    in a processor's :data:`PROCESSOR_FILE` (transformers 5), the order in which transformers
    looks for it."""
    problems: list[str] = []
    if (directory / FEATURE_EXTRACTOR_FILE).is_file():
        _json_object(directory / FEATURE_EXTRACTOR_FILE, problems)
        return problems
    if not (directory / PROCESSOR_FILE).is_file():
        return [
            f"no feature extractor (neither {FEATURE_EXTRACTOR_FILE} nor {PROCESSOR_FILE}, "
            "which transformers 5 writes for a processor)"
        ]
    processor = _json_object(directory / PROCESSOR_FILE, problems)
    if processor is not None and not isinstance(
        processor.get(PROCESSOR_FEATURE_EXTRACTOR_KEY), dict
    ):
        problems.append(
            f"{PROCESSOR_FILE} holds no {PROCESSOR_FEATURE_EXTRACTOR_KEY!r} object and there "
            f"is no {FEATURE_EXTRACTOR_FILE}"
        )
    return problems


def _json_object(path: Path, problems: list[str]) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None with the reason appended to ``problems``."""
    if not path.is_file():
        problems.append(f"no {path.name}")
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        problems.append(f"{path.name} is unreadable ({type(error).__name__}: {error})")
        return None
    if not isinstance(value, dict):
        problems.append(f"{path.name} holds a {type(value).__name__}, not a JSON object")
        return None
    return value


def _config_problems(config: dict[str, Any], ctc: bool) -> list[str]:
    """A config without a CTC head (CTC models) or not wav2vec2's (the NAD encoder) would load
    with randomly initialised layers, and give values without an error."""
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        return [f"{CONFIG_FILE} names no model_type, so it is no transformers model config"]
    if not ctc:
        if model_type != "wav2vec2":
            return [f"{CONFIG_FILE} has model_type {model_type!r}; a 'wav2vec2' model is needed"]
        return []
    architectures = config.get("architectures") or []
    if not any(str(name).endswith("ForCTC") for name in architectures):
        return [
            f"{CONFIG_FILE} declares no CTC head (architectures: {architectures}); a model "
            "fine-tuned for CTC (e.g. Wav2Vec2ForCTC) is needed"
        ]
    return []


def _weights_problems(directory: Path) -> list[str]:
    """The first weights ``from_pretrained`` would pick, checked without loading them."""
    for name in WEIGHTS_FILES:
        path = directory / name
        if not path.is_file():
            continue
        if not name.endswith(".index.json"):
            return _weights_file_problems(path)
        problems: list[str] = []
        index = _json_object(path, problems)
        if index is None:
            return problems
        shards = index.get("weight_map")
        if not isinstance(shards, dict) or not shards:
            return [f"{name} has no weight_map"]
        return [
            p
            for shard in sorted(set(map(str, shards.values())))
            for p in _weights_file_problems(directory / shard)
        ]
    return [f"no weights ({', '.join(WEIGHTS_FILES)})"]


def _weights_file_problems(path: Path) -> list[str]:
    """A missing or empty weights file; for safetensors also one shorter than its header
    says, which is what an interrupted copy of a model leaves."""
    if not path.is_file():
        return [f"no {path.name}"]
    size = path.stat().st_size
    if size == 0:
        return [f"{path.name} is empty"]
    if path.suffix != ".safetensors":
        return []
    # 8 bytes of header length, the JSON header, then the tensors up to their last data offset.
    with path.open("rb") as handle:
        length = int.from_bytes(handle.read(8), "little")
        if 8 + length > size:
            return [f"{path.name} is truncated ({size} bytes, header of {length})"]
        header = handle.read(length) if length <= SAFETENSORS_MAX_HEADER else b""
    try:
        tensors = json.loads(header)
        data = [int(t["data_offsets"][1]) for k, t in tensors.items() if k != "__metadata__"]
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return [f"{path.name} is truncated or no safetensors file (unreadable header)"]
    needed = 8 + length + max(data, default=0)
    if needed > size:
        return [f"{path.name} is truncated ({size} of {needed} bytes)"]
    return []


def _torch() -> Any:
    """torch, set up once for reproducible inference."""
    torch = importlib.import_module("torch")
    if torch.cuda.is_available():
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    torch.use_deterministic_algorithms(True, warn_only=True)
    return torch


def _device(torch: Any) -> str:
    """The torch device models go to, by :func:`configured_device`."""
    device = configured_device()
    if device == "cpu":
        return "cpu"
    if torch.cuda.is_available():
        return "cuda"
    if device == "cuda":
        raise DeviceUnavailable(
            f"device: cuda, but torch {torch.__version__} sees no CUDA device on "
            f"{os.uname().nodename} (CUDA build: {torch.version.cuda or 'none'}; "
            f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}); run the "
            "model jobs on a GPU node (docs/measures.md, Running on a GPU node) or set device: "
            "auto or cpu"
        )
    return "cpu"


@dataclass
class CTCModel:
    """A wav2vec2 CTC model: its tokenizer and vocabulary, and its network (weights and
    feature extractor), loaded on first use. A job that reads the model's outputs from track
    files (:mod:`pathbench_flow.neural.model_tracks`) decodes them without loading weights,
    and without importing torch or transformers (:mod:`~pathbench_flow.neural.ctc_tokenizer`)."""

    directory: str
    vocab: dict[str, int]
    blank: int
    specials: frozenset[str]
    tokenizer: CTCTokenizer

    @cached_property
    def _network(self) -> tuple[Any, Any, Any]:
        """(model, feature extractor, torch), loaded once, onto the configured device."""
        torch = _torch()
        transformers = importlib.import_module("transformers")
        model = transformers.AutoModelForCTC.from_pretrained(self.directory, local_files_only=True)
        extractor = transformers.AutoFeatureExtractor.from_pretrained(
            self.directory, local_files_only=True
        )
        return model.to(_device(torch)).eval(), extractor, torch

    def greedy_text(self, log_posteriors: np.ndarray) -> str:
        """Best-path decoding as PathBench does it, ``batch_decode(argmax(logits))``: the
        tokenizer merges repeats and drops the blank but keeps ``<s>``, ``</s>`` and
        ``<unk>``, and joins tokens its own way (characters, or phones with spaces)."""
        return self.tokenizer.decode(np.argmax(log_posteriors, axis=1).tolist())

    @property
    def labels(self) -> list[str]:
        """Token strings by id."""
        by_id = {index: token for token, index in self.vocab.items()}
        return [by_id.get(i, "") for i in range(len(by_id))]

    def _can_pad(self) -> bool:
        """Whether padded batches give each item its own result: only with layer-norm
        feature encoders, which take an attention mask. Group-norm encoders (wav2vec2-base)
        normalise over the whole padded input, so they run one utterance at a time."""
        return getattr(self._network[0].config, "feat_extract_norm", "group") == "layer"

    def _batches(self) -> bool:
        """Whether several utterances go through the network at once: on a GPU, where the
        model can pad. On the CPU one at a time is never slower: padded batches of base-size
        models took 1.04-1.08x the CPU time of one by one for equal lengths and 2.4x for
        lengths of 0.2-5 s (benchmarks/README.md)."""
        return self._can_pad() and self._network[0].device.type == "cuda"

    def log_posteriors(self, audios: Sequence[np.ndarray], batch_size: int = 8) -> list[np.ndarray]:
        """Log-softmax outputs (frames, vocabulary) per audio, in input order.

        Where the model batches (:meth:`_batches`), audios are sorted by length and run
        ``batch_size`` at a time, so little padding is computed, and each item's frames beyond
        its own length are dropped; the values equal one-by-one values to float32 rounding.
        """
        size = batch_size if self._batches() else 1
        order = sorted(range(len(audios)), key=lambda i: (-len(audios[i]), i))
        results: list[np.ndarray | None] = [None] * len(audios)
        for start in range(0, len(order), size):
            chunk = order[start : start + size]
            for index, output in zip(chunk, self._run([audios[i] for i in chunk]), strict=True):
                results[index] = output
        return [r for r in results if r is not None]

    def _run(self, audios: list[np.ndarray]) -> list[np.ndarray]:
        model, extractor, torch = self._network
        inputs = extractor(
            [np.asarray(a, dtype=np.float32) for a in audios],
            sampling_rate=16000,
            padding=True,
            return_attention_mask=True,
            return_tensors="pt",
        )
        device = model.device
        mask = inputs["attention_mask"].to(device) if self._can_pad() else None
        with torch.inference_mode():
            logits = model(inputs["input_values"].to(device), attention_mask=mask).logits
            # float32, as PathBench's log_softmax(logits): its aligner breaks ties between
            # float32 scores, so float64 values would pick other paths; stored as float64
            # (exactly), so every reader gets the same numbers.
            log_probs = torch.log_softmax(logits, dim=-1).double().cpu().numpy()
        lengths = model._get_feat_extract_output_lengths(
            torch.tensor([len(a) for a in audios])
        ).tolist()
        return [log_probs[i, :n] for i, n in enumerate(lengths)]


@cache
def load_ctc(directory: str) -> CTCModel:
    """A CTC model's tokenizer and vocabulary from a directory, read without transformers
    (what ``AutoTokenizer`` builds, :func:`~pathbench_flow.neural.ctc_tokenizer.read_tokenizer`);
    the weights load when the model first runs."""
    tokenizer = read_tokenizer(directory)
    vocab = dict(tokenizer.get_vocab())
    blank = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    specials = frozenset(tokenizer.specials)
    return CTCModel(directory, vocab, int(blank), specials, tokenizer)


@dataclass
class Encoder:
    """wav2vec2's feature encoder and its first transformer layers: one hidden layer (NAD)."""

    model: Any
    torch: Any

    def hidden(self, audio: np.ndarray) -> np.ndarray:
        """The hidden layer (frames, dims) of raw float32 audio (no normalisation, as
        PathBench feeds it), as float64."""
        torch = self.torch
        inputs = torch.from_numpy(np.asarray(audio, dtype=np.float32)).unsqueeze(0)
        with torch.inference_mode():
            states = self.model(inputs.to(self.model.device)).last_hidden_state
        return states[0].double().cpu().numpy()


@cache
def load_encoder(directory: str, layer: int) -> Encoder:
    """The wav2vec2 encoder of a checkpoint directory, cut after ``layer`` transformer layers,
    whose output is ``hidden_states[layer]`` of the whole model, bit for bit.

    NAD reads layer 10 of wav2vec2-large's 24, so the other 14 are never run. The layers after
    ``layer`` are dropped from the loaded model (loading fewer would list every dropped
    weight in transformers' load report), and so is the final layer norm of a
    ``do_stable_layer_norm`` encoder, which follows the last layer only and is not part of
    ``hidden_states``. A CTC head, if any, is unused.

    Raises:
        ValueError: ``layer`` is not between 0 and the model's number of layers.
    """
    torch = _torch()
    transformers = importlib.import_module("transformers")
    model = transformers.Wav2Vec2Model.from_pretrained(directory, local_files_only=True)
    encoder = model.encoder
    if not 0 <= layer <= len(encoder.layers):
        raise ValueError(f"layer {layer} outside 0..{len(encoder.layers)}")
    del encoder.layers[layer:]
    if model.config.do_stable_layer_norm:
        encoder.layer_norm = torch.nn.Identity()
    return Encoder(model.to(_device(torch)).eval(), torch)
