"""The languages pathbench-flow knows: the codes a dataset's ``language`` file may hold.

They are PathBench's five (its corpora are English, Spanish, Dutch, Italian and Mandarin), in
PathBench's order, which messages and evaluators' ``languages`` show. Measures that support
fewer say so in their own ``languages`` attribute.
"""

from __future__ import annotations

ENGLISH = "en"
MANDARIN = "cmn"
LANGUAGES: tuple[str, ...] = (ENGLISH, "es", "nl", "it", MANDARIN)
LANGUAGE_ALIASES = {"zh": MANDARIN}
"""Other spellings accepted for a language; ``zh`` is how many corpora label Mandarin."""


def canonical_language(code: str) -> str:
    """``code`` lower-cased with aliases resolved (``zh`` → ``cmn``); unknown codes pass
    through for the caller to report."""
    lowered = code.lower()
    return LANGUAGE_ALIASES.get(lowered, lowered)
