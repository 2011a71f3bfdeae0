"""The inputs of the PathBench conformance benchmark, rebuilt from their JSON description.

``benchmarks/neural_conformance.py`` runs PathBench and pathbench-flow side by side and freezes
PathBench's values for part of its input in ``tests/data/pathbench_neural_values.json``;
``tests/test_neural_conformance.py`` rebuilds that part here, without PathBench, and checks
our values against the frozen ones. Both go through the functions below, so the description
in the JSON is the only thing that has to travel: model seeds and peaking, audio recipes (or
fixture files, with digests proving the rebuild exact), texts, languages and references.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pathbench_flow.testing import RECORDINGS, synthetic_speech, tiny_models

FIXTURES = RECORDINGS
"""The real recordings tests may read (committed in ``tests/fixtures``)."""
SEEDS: Mapping[str, int] = {"phone": 0, "char": 1, "encoder": 2}
"""Seed of each seeded model: the phone model, the character ASR model (one for every
language) and NAD's feature encoder."""
KINDS = ("flat", "peaked")
"""``flat``: random weights as initialised; ``peaked``: the same with a sharpened CTC head."""


def peaks_for(size: str, kind: str) -> dict[str, tiny_models.Peak | None]:
    """The peaking of the phone and character models of one kind."""
    if kind == "flat":
        return {"phone": None, "char": None}
    return dict(tiny_models.PEAKS[size])


def build_models(
    directory: Path, size: str, kind: str, peaks: Mapping[str, tiny_models.Peak | None]
) -> dict[str, Path]:
    """The phone and character CTC models of one kind, in ``directory/<size>-<kind>``."""
    root = directory / f"{size}-{kind}"
    return {
        "phone": tiny_models.build_seeded_model(
            root / "phone", tiny_models.PHONES, SEEDS["phone"], size, peaks["phone"], phones=True
        ),
        "char": tiny_models.build_seeded_model(
            root / "char", tiny_models.LETTERS, SEEDS["char"], size, peaks["char"]
        ),
    }


def build_encoder(directory: Path, size: str) -> Path:
    """NAD's feature model (the same for both kinds: NAD reads no CTC head)."""
    return tiny_models.build_seeded_encoder(directory / f"{size}-encoder", SEEDS["encoder"], size)


def make_audio(spec: Mapping[str, Any], directory: Path, fixtures: Path = FIXTURES) -> Path:
    """One audio file from its description.

    ``make`` is ``vowels`` (:func:`synthetic_speech.vowels` with ``recipe``), ``fixture`` (a file
    of ``fixtures``, read in place) or ``espeak`` (espeak-ng's ``voice`` saying ``text``, then
    sox to ``rate`` Hz 16-bit; machine-dependent, so never frozen). sox runs repeatable (``-R``):
    its dither is random otherwise, so two runs on one machine would decode different samples.
    """
    name = spec["name"]
    if spec["make"] == "fixture":
        return fixtures / spec["file"]
    if spec["make"] == "vowels":
        return synthetic_speech.write(directory / f"{name}.wav", spec["recipe"])
    if spec["make"] == "espeak":
        raw = directory / f"{name}.espeak.wav"
        command = ["espeak-ng", "-v", spec["voice"], "-w", str(raw)]
        if spec.get("speed"):
            command += ["-s", str(spec["speed"])]
        subprocess.run([*command, spec["text"]], check=True, capture_output=True)
        out = directory / f"{name}.wav"
        via = directory / f"{name}.16k.wav"
        subprocess.run(["sox", "-R", str(raw), "-b", "16", "-r", "16000", str(via)], check=True)
        if spec.get("rate", 16000) == 16000:
            via.rename(out)
        else:  # resampled once more, as a corpus stored at another rate would be
            subprocess.run(["sox", "-R", str(via), "-b", "16", "-r", str(spec["rate"]), str(out)])
            via.unlink()
        raw.unlink()
        return out
    raise ValueError(f"unknown audio source {spec['make']!r}")


def materialise(
    audio: list[Mapping[str, Any]], directory: Path, fixtures: Path = FIXTURES
) -> dict[str, Path]:
    """Every described audio file, by name."""
    directory.mkdir(parents=True, exist_ok=True)
    return {spec["name"]: make_audio(spec, directory, fixtures) for spec in audio}


def write_lms(directory: Path, words: Mapping[str, list[str]]) -> dict[str, Path]:
    """One uniform bigram ARPA file per language, named as PathBench looks for them
    (``lms/wiki_<lang>_token.arpa``; Spanish only as ``.arpa.bin``, the one name PathBench
    tries for it, which pyctcdecode then reads without unigram list)."""
    lms = directory / "lms"
    lms.mkdir(parents=True, exist_ok=True)
    names = {"en": "wiki_en_token.arpa", "nl": "wiki_nl_token.arpa", "es": "wiki_es_token.arpa.bin"}
    return {
        language: tiny_models.write_arpa(lms / names[language], sorted(set(vocabulary)))
        for language, vocabulary in words.items()
    }
