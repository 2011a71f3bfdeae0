"""PathBench's text cleaning and phonemisation, with the espeak-ng binary.

PathBench phonemises with espeak-ng (through the phonemizer package: phones separated by
spaces, words by ``|`` which it then turns into spaces, stress marks removed). This module asks
the espeak-ng program for the same thing directly (``--ipa`` with a space as phone separator),
drops stress marks and language-switch flags such as ``(en)``, and returns the phones.

Which phones come out depends on the espeak-ng version: PathBench pins a commit after 1.52
because, for example, Italian ``ɾ`` versus ``r`` changed between versions, so PER, dPER and
ArtP values match PathBench's only with the same espeak-ng.
"""

from __future__ import annotations

import re
import shutil
import string
import subprocess
from collections.abc import Iterable, Mapping
from functools import cache

from pathbench_flow.languages import LANGUAGE_ALIASES

ESPEAK_LANGUAGES: Mapping[str, str] = {
    "en": "en-us",
    "en-us": "en-us",
    "es": "es",
    "nl": "nl",
    "it": "it",
    "cmn": "cmn",
}
"""Dataset language → espeak-ng voice, as PathBench maps them (English is US English); aliases
such as ``zh`` are resolved first (:data:`pathbench_flow.languages.LANGUAGE_ALIASES`)."""

_CJK_PUNCTUATION = "\u3000\u3001\u3002\uff01\uff0c\uff0e\uff1a\uff1b\uff1f\u300a\u300b\u300c\u300d"
_CJK_PUNCTUATION += "\u300e\u300f\u3010\u3011\u2018\u2019\u201c\u201d\uff08\uff09\u2014\u2026"
_PUNCTUATION = str.maketrans("", "", string.punctuation + _CJK_PUNCTUATION)
"""ASCII punctuation plus the CJK and typographic marks PathBench removes (。、！，「」“” …)."""
_SPACES = re.compile(r"\s+")
_NOT_PHONES = re.compile(r"\([a-z-]+\)|[ˈˌ]")
"""espeak-ng's language-switch flags and stress marks (phonemizer drops stress by default)."""


class PhonemiserMissing(RuntimeError):
    """The espeak-ng program is not installed."""


def clean(text: str) -> str:
    """PathBench's cleaning: lower-case, punctuation (ASCII and CJK) removed, spaces collapsed."""
    return _SPACES.sub(" ", text.lower().translate(_PUNCTUATION)).strip()


def espeak_voice(language: str) -> str:
    """The espeak-ng voice for a dataset language (unknown languages pass through)."""
    code = LANGUAGE_ALIASES.get(language, language)
    return ESPEAK_LANGUAGES.get(code, code)


def espeak_binary() -> str:
    """Path of espeak-ng; raises :class:`PhonemiserMissing` with the install hint."""
    found = shutil.which("espeak-ng")
    if found is None:
        raise PhonemiserMissing("phonemisation needs espeak-ng (`apt-get install espeak-ng`)")
    return found


@cache
def phonemise(text: str, language: str) -> tuple[str, ...]:
    """The phones of ``text`` (cleaned first) in ``language``; () when nothing is left.

    Cached: PER and ArtP phonemise the same reference texts over and over.
    """
    cleaned = clean(text)
    if not cleaned:
        return ()
    result = subprocess.run(
        [espeak_binary(), "-q", "--ipa", "--sep= ", "-v", espeak_voice(language)],
        input=cleaned,
        capture_output=True,
        text=True,
        check=True,
    )
    return tuple(_NOT_PHONES.sub("", result.stdout).split())


def for_vocabulary(phones: Iterable[str], vocabulary: Mapping[str, int]) -> list[str]:
    """PathBench's mapping of espeak phones onto a phone model's tokens.

    ``ʲ`` (palatalisation, absent from the espeak-cv-ft vocabulary) is stripped, ``dz`` becomes
    ``z``, and phones still missing from the vocabulary are dropped.
    """
    mapped = (phone.replace("ʲ", "").replace("dz", "z") for phone in phones)
    return [phone for phone in mapped if phone in vocabulary]
