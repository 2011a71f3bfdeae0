"""PathBench's text cleaning and phonemisation, in process, through the library PathBench calls.

PathBench phonemises with the ``phonemizer`` package's espeak backend (phones separated by
spaces, words by ``|``, which it then turns into spaces; stress removed; espeak-ng's
language-switch flags such as ``(en)`` kept, because ``keep-flags`` is phonemizer's default).
This module makes the same call with ``phonemizer-fork`` (the fork PathBench installs), one
backend per voice, so a shard pays espeak-ng's voice loading once instead of once per text.

Which phones come out depends on the espeak-ng library: PathBench pins commit 2ea41210 (after
1.52.0) because, for example, Italian ``ɾ`` versus ``r`` changed between versions. The library
is chosen in this order: ``PHONEMIZER_ESPEAK_LIBRARY`` (phonemizer's own variable, e.g. a build
of PathBench's commit; with fetching on, the workflow builds that commit and sets it, and
``PHONEMIZER_ESPEAK_DATA_PATH``, for every job: :mod:`pathbench_flow.stages.espeak`), then the
libespeak-ng 1.52.0 that ``espeakng-loader`` bundles, then the system's libespeak-ng (Debian 12
has 1.51). :func:`espeak_version` says which one is in use.

``keep_flags=False`` (the model measures' ``compat: none``) removes the flags instead: ``(en)``
is not a phone, and as a token it counts as an error in PER and dPER.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import string
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from pathbench_flow.common.languages import LANGUAGE_ALIASES

ESPEAK_LANGUAGES: Mapping[str, str] = {
    "en": "en-us",
    "en-us": "en-us",
    "es": "es",
    "nl": "nl",
    "it": "it",
    "cmn": "cmn",
}
"""Dataset language → espeak-ng voice, as PathBench's Dataset maps them (English is US
English); aliases such as ``zh`` are resolved first
(:data:`pathbench_flow.common.languages.LANGUAGE_ALIASES`)."""

_CJK_PUNCTUATION = "\u3000\u3001\u3002\uff01\uff0c\uff0e\uff1a\uff1b\uff1f\u300a\u300b\u300c\u300d"
_CJK_PUNCTUATION += "\u300e\u300f\u3010\u3011\u2018\u2019\u201c\u201d\uff08\uff09\u2014\u2026"
_PUNCTUATION = str.maketrans("", "", string.punctuation + _CJK_PUNCTUATION)
"""ASCII punctuation plus the CJK and typographic marks PathBench removes (。、！，「」“” …)."""
_SPACES = re.compile(r"\s+")
PACKAGES = ("phonemizer",)
"""What phonemisation imports (``phonemizer-fork`` installs the ``phonemizer`` package)."""


class PhonemiserMissing(RuntimeError):
    """phonemizer or an espeak-ng library is not installed."""


def clean(text: str) -> str:
    """PathBench's cleaning: lower-case, punctuation (ASCII and CJK) removed, spaces collapsed."""
    return _SPACES.sub(" ", text.lower().translate(_PUNCTUATION)).strip()


def espeak_voice(language: str) -> str:
    """The espeak-ng voice for a dataset language (unknown languages pass through)."""
    code = LANGUAGE_ALIASES.get(language, language)
    return ESPEAK_LANGUAGES.get(code, code)


def check_installed() -> None:
    """Cheap up-front check (nothing imported): phonemizer is installed.

    Raises:
        PhonemiserMissing: with the install command.
    """
    if importlib.util.find_spec("phonemizer") is None:
        raise PhonemiserMissing(
            "phonemisation needs phonemizer-fork and an espeak-ng library "
            '(`pip install -e ".[neural]"` installs both)'
        )


@cache
def _wrapper() -> Any:
    """phonemizer's espeak wrapper class, pointed at the library described in the module."""
    check_installed()
    wrapper = importlib.import_module("phonemizer.backend.espeak.wrapper").EspeakWrapper
    if "PHONEMIZER_ESPEAK_LIBRARY" not in os.environ:
        try:
            loader = importlib.import_module("espeakng_loader")
        except ImportError:
            return wrapper  # the system library, found by phonemizer itself
        wrapper.set_library(loader.get_library_path())
        wrapper.set_data_path(loader.get_data_path())
    return wrapper


def espeak_version() -> str:
    """Version of the espeak-ng library phonemisation uses, e.g. ``1.52.0``."""
    _wrapper()
    backend = importlib.import_module("phonemizer.backend")
    return ".".join(str(part) for part in backend.EspeakBackend.version())


@cache
def _backend(voice: str, keep_flags: bool) -> Any:
    """One espeak backend per voice and flag handling (loading a voice takes milliseconds)."""
    _wrapper()
    backend = importlib.import_module("phonemizer.backend")
    try:
        return backend.EspeakBackend(
            voice,
            preserve_punctuation=False,
            with_stress=False,
            language_switch="keep-flags" if keep_flags else "remove-flags",
            words_mismatch="ignore",
        )
    except RuntimeError as error:  # phonemizer's error for an unknown voice or no library
        raise PhonemiserMissing(str(error)) from None


@cache
def phonemise(text: str, language: str, keep_flags: bool = True) -> tuple[str, ...]:
    """The phones of ``text`` (cleaned first) in ``language``; () when nothing is left.

    Cached: PER and ArtP phonemise the same reference texts over and over.
    """
    cleaned = clean(text)
    if not cleaned:
        return ()
    separator = importlib.import_module("phonemizer.separator").Separator(phone=" ", word="|")
    backend = _backend(espeak_voice(language), keep_flags)
    (phonemised,) = backend.phonemize([cleaned], separator=separator, strip=True)
    return tuple(phonemised.replace("|", " ").split())


def for_vocabulary(phones: Iterable[str], vocabulary: Mapping[str, int]) -> list[str]:
    """PathBench's mapping of espeak phones onto a phone model's tokens.

    ``ʲ`` (palatalisation, absent from the espeak-cv-ft vocabulary) is stripped, ``dz`` becomes
    ``z``, and phones still missing from the vocabulary are dropped (so are flags such as
    ``(en)``).
    """
    mapped = (phone.replace("ʲ", "").replace("dz", "z") for phone in phones)
    return [phone for phone in mapped if phone in vocabulary]
