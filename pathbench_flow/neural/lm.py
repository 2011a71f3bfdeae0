"""n-gram language-model beam search over CTC outputs, as PathBench decodes (pyctcdecode).

DArtP and Double ASR decode the ASR model's output with a word n-gram model (PathBench uses
Wikipedia token models ``wiki_<lang>_token.arpa``, shipped in its Oral Cancer YouTube
download). The model is a local ARPA or kenlm binary file; pyctcdecode and kenlm are imported
only here, and only when a decoder is built.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

import numpy as np

from pathbench_flow.neural.models import ModelUnavailable, awaiting_fetch

LM_PACKAGES = ("pyctcdecode", "kenlm")
NO_LANGUAGE_MODEL = "no_language_model"
"""Status of an utterance whose language has no n-gram model configured."""


def lm_paths(option: str | Mapping[str, str] | None) -> dict[str, str]:
    """The ``lm`` option as language → file; a single path serves every language."""
    if option is None:
        return {}
    if isinstance(option, str):
        return {"*": option}
    return dict(option)


def lm_for(paths: Mapping[str, str], language: str) -> str | None:
    """The n-gram file for ``language``, or None."""
    return paths.get(language, paths.get("*"))


BINARY_SUFFIX = ".bin"
"""What PathBench appends to an ARPA path to look for its KenLM binary."""


def opened_lm_file(path: str | Path) -> Path:
    """The file PathBench's decoders open for the configured ``path``: a ``.arpa`` path whose
    ``<path>.bin`` exists is read as that binary (PathBench's Double ASR and DArtP switch so),
    any other path as given. pyctcdecode takes its unigram list from an ARPA file only, so the
    two decode differently: following the rule keeps the numbers PathBench's."""
    given = Path(path).expanduser()
    binary = given.with_name(given.name + BINARY_SUFFIX)
    if given.suffix == ".arpa" and binary.is_file():
        return binary
    return given


def check_lm(path: str, option: str) -> None:
    """Up-front check: the decoder packages import and the file exists."""
    missing = [name for name in LM_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise ModelUnavailable(
            f"{option}: language-model decoding needs {', '.join(missing)} "
            "(`pip install kenlm pygtrie && pip install --no-deps pyctcdecode`; kenlm compiles "
            "with a C++ compiler and Boost-free cmake); or remove the option"
        )
    if not opened_lm_file(path).is_file() and not awaiting_fetch(path):
        raise ModelUnavailable(f"{option}: language-model file {path!r} does not exist")


class LMDecoder:
    """Beam search with a kenlm n-gram model over one vocabulary."""

    def __init__(self, labels: Sequence[str], path: str) -> None:
        pyctcdecode = importlib.import_module("pyctcdecode")
        self._decoder = pyctcdecode.build_ctcdecoder(
            list(labels), kenlm_model_path=str(opened_lm_file(path))
        )

    def decode(self, log_posteriors: np.ndarray) -> str:
        """The best transcription (words separated by spaces)."""
        return str(self._decoder.decode(np.asarray(log_posteriors, dtype=np.float32)))


@cache
def load_decoder(labels: tuple[str, ...], path: str) -> LMDecoder:
    """One decoder per (vocabulary, file) per process: loading an ARPA file is slow."""
    return LMDecoder(labels, path)
