"""PathBench's model-based measures side by side with ours: the same audio, the same seeded
models, one process.

Run (PathBench needs torchaudio, so the environment is /work/venv-pb)::

    /work/venv-pb/bin/python benchmarks/neural_conformance.py --pathbench /work/pb \\
        [--sizes tiny,large] [--kinds flat,peaked] [--out benchmarks/neural_conformance.md]

PathBench loads its models by Hugging Face id and its n-gram models from ``lms/`` in the
working directory, so the run happens in a scratch directory holding ``lms/wiki_<lang>_token``
files and an offline Hugging Face cache whose ids (``facebook/wav2vec2-xlsr-53-espeak-cv-ft``,
``jonatasgrosman/wav2vec2-large-xlsr-53-<language>``, ``facebook/wav2vec2-large``) point at the
seeded models of ``pathbench_flow/testing/tiny_models.py``; switching model kind rewrites the
ids' ``refs/main`` (huggingface_hub reads the cache location once, at import). PathBench's
evaluators are called as its driver ``scripts/evaluate_spk2score.py`` calls them, through the
driver's own dispatch functions (so reference-free measures get the driver's preloaded audio, with
no length check), one evaluator per dataset language, with the driver's exception handling; ours
through ``registry.create`` and ``evaluate_all``. Both phonemise with the espeak-ng library
PathBench's phonemizer finds on its own, pinned for both through ``PHONEMIZER_ESPEAK_LIBRARY``.

Timing is CPU time (``time.process_time``) of each side over all utterances, one torch
thread, models loaded and warmed up on one utterance per language first, audio and
phonemisation caches emptied (a workflow job starts with neither).

``--lm-binary`` also writes each ``lms/wiki_<lang>_token.arpa``'s KenLM binary beside it
(``<that>.bin``, with KenLM's ``build_binary``: ``--build-binary``, else ``$KENLM_BUILD_BINARY``,
else the one on PATH), so PathBench's Double ASR and DArtP open the binary, as they do wherever
the download holds one; ours still gets the ``.arpa`` path the workflow's lock names, so the
switch under test is our ``opened_lm_file``, not the harness's. pyctcdecode takes no unigram
list from a binary, so the two files decode differently.

Outputs: the markdown table (``--out``), a JSON with both sides' per-utterance values beside
it, and, when the tiny size runs without ``--lm-binary``, ``--frozen``
(``tests/data/pathbench_neural_values.json``): PathBench's values on the part of the input
every machine can rebuild bit for bit (fixture recordings and synthetic vowels), with the
recipe, for ``tests/test_neural_conformance.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import importlib
import io
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

MEASURES = ("artp", "artp_old", "artp_double_asr", "per", "dper", "double_asr", "nad")
PHONE_ID = "facebook/wav2vec2-xlsr-53-espeak-cv-ft"
NAD_ID = "facebook/wav2vec2-large"
ASR_IDS = {
    "en": "jonatasgrosman/wav2vec2-large-xlsr-53-english",
    "es": "jonatasgrosman/wav2vec2-large-xlsr-53-spanish",
    "nl": "jonatasgrosman/wav2vec2-large-xlsr-53-dutch",
}
PATHBENCH_LANGUAGE = {"en": "en-us", "es": "es", "nl": "nl"}
"""PathBench's Dataset turns a dataset's ``en`` into ``en-us`` before any evaluator sees it."""
FROZEN = REPO / "tests" / "data" / "pathbench_neural_values.json"
EXTRA_WORDS = {
    "en": ["a", "the", "of", "and", "is", "it", "to", "in", "water", "cat"],
    "es": ["el", "la", "de", "y", "que", "en", "un", "es"],
    "nl": ["de", "het", "een", "en", "van", "is", "op", "in"],
}


# ------------------------------------------------------------------------------- the input
def _vowels(name: str, sequence: str, **recipe: Any) -> dict[str, Any]:
    return {"name": name, "make": "vowels", "recipe": {"sequence": sequence, **recipe}}


def _fixture(name: str, file: str) -> dict[str, Any]:
    return {"name": name, "make": "fixture", "file": file}


def _espeak(name: str, text: str, voice: str, rate: int = 16000, speed: int = 0) -> dict:
    return {"name": name, "make": "espeak", "text": text, "voice": voice, "rate": rate} | (
        {"speed": speed} if speed else {}
    )


FROZEN_AUDIO = [
    _fixture("blue_jp10", "BLUE_japanese10.wav"),
    _fixture("blue_en32", "BLUE_english32.wav"),
    _fixture("blue_en33", "BLUE_english33.wav"),
    _fixture("blue_en34", "BLUE_english34.wav"),
    _fixture("harmonics", "test_audio.wav"),
    _vowels("vow_a", "aiuea", seconds_per_vowel=0.24, f0=115.0, seed=1),
    _vowels("vow_b", "oe_iau", seconds_per_vowel=0.2, f0=190.0, seed=2),
    _vowels("vow_c", "eaoiuae", seconds_per_vowel=0.18, f0=140.0, sample_rate=22050, seed=3),
    _vowels("vow_d", "uo", seconds_per_vowel=0.3, f0=100.0, seed=4),
]
"""Audio every machine rebuilds exactly: PathBench's recordings (in tests/fixtures) and vowels."""
ESPEAK_AUDIO = [
    _espeak("en_fox", "the quick brown fox jumps over the lazy dog", "en-us"),
    _espeak("en_water", "please bring me a glass of cold water", "en-us", rate=22050),
    _espeak("en_shells", "she sells sea shells by the sea shore", "en-us+f3"),
    _espeak("en_blue", "blue", "en-us"),
    _espeak("en_oy", "Oy! Ear?", "en-us"),
    _espeak("en_clock", "Hello, World!! It's 5 o'clock.", "en-us+m3"),
    _espeak("en_cafe", "I ate croissants at the café", "en-us"),
    _espeak("ball_1", "a large red ball rolled down the hill", "en-us"),
    _espeak("ball_2", "a large red ball rolled down the hill", "en-us+f2", speed=140),
    _espeak("ball_3", "a large red ball rolled down the hill", "en-us+m4", speed=190),
    _espeak("es_software", "el software de marketing", "es"),
    _espeak("es_dias", "buenos días señora", "es+f3"),
    _espeak("es_playa", "me gusta la playa", "es", rate=22050),
    _espeak("es_rock", "el fútbol y el rock and roll", "es"),
    _espeak("nl_computer", "de computer en de weekend", "nl"),
    _espeak("nl_morgen", "goedemorgen mevrouw", "nl+f2"),
    _espeak("nl_kat", "de kat zit op de mat", "nl"),
    _espeak("nl_fiets", "ik hou van fietsen in het weekend", "nl+m3"),
]
"""espeak-ng speech: closer to real input, but its samples depend on the espeak-ng version."""


def utterance_case(
    utt_id: str,
    audio: str,
    text: str,
    language: str,
    start: float = 0.0,
    end: float = -1.0,
    references: Sequence[tuple[str, float, float]] = (),
) -> dict[str, Any]:
    """One utterance of an input table, as both sides read it (``neural.py`` builds its corpus
    with it too); ``end`` -1 is the recording's end, a reference is (audio, start, end)."""
    return {
        "utt_id": utt_id,
        "audio": audio,
        "start": start,
        "end": end,
        "text": text,
        "language": language,
        "references": [list(r) for r in references],
    }


def _whole(*names: str) -> list[tuple[str, float, float]]:
    return [(name, 0.0, -1.0) for name in names]


FROZEN_UTTERANCES = [
    utterance_case(
        "z_blue_jp10", "blue_jp10", "Blue", "en", references=_whole("blue_en32", "blue_en33")
    ),
    utterance_case(
        "z_blue_en32", "blue_en32", "blue", "en", references=_whole("blue_en34", "blue_jp10")
    ),
    utterance_case(
        "z_blue_en33", "blue_en33", "Blue.", "en", references=_whole("blue_en32", "blue_en34")
    ),
    utterance_case(
        "z_flags_nl", "vow_a", "De computer en de weekend.", "nl", references=_whole("vow_b")
    ),
    utterance_case(
        "z_loan_es", "vow_b", "El software de marketing", "es", references=_whole("vow_a")
    ),
    utterance_case(
        "z_22k_en",
        "vow_c",
        "Please bring me a glass of cold water.",
        "en",
        references=[("vow_a", 0.0, -1.0), ("blue_en34", 0.0, 0.02)],
    ),
    utterance_case("z_novocab_en", "vow_d", "Oy! Ear?", "en"),
    utterance_case("z_punct_en", "vow_d", "?!", "en"),
    utterance_case("z_segment_en", "harmonics", "the cat sat on the mat", "en", start=0.5, end=1.3),
    utterance_case("z_short_en", "blue_en34", "blue", "en", start=0.0, end=0.02),
    utterance_case("z_oneframe_en", "blue_en33", "blue", "en", start=0.0, end=0.03),
]
"""The frozen part: a language-switch flag (Dutch ``weekend``), Spanish loanwords, 22.05 kHz
input, a text with no phone in the model's vocabulary, one with no phone at all, a segment,
too-short audio (320 samples) and one frame (480 samples) for three phones; references for NAD,
one of them too short to use."""
ESPEAK_UTTERANCES = [
    utterance_case("e_fox", "en_fox", "The quick brown fox jumps over the lazy dog.", "en"),
    utterance_case("e_water", "en_water", "Please bring me a glass of cold water.", "en"),
    utterance_case("e_shells", "en_shells", "She sells sea shells by the sea shore.", "en"),
    utterance_case("e_blue", "en_blue", "Blue", "en", references=_whole("blue_en32", "blue_en34")),
    utterance_case("e_oy", "en_oy", "Oy! Ear?", "en"),
    utterance_case("e_clock", "en_clock", "Hello, World!! It's 5 o'clock.", "en"),
    utterance_case("e_cafe", "en_cafe", "I ate croissants at the café", "en"),
    utterance_case("e_fox_seg", "en_fox", "brown fox jumps", "en", start=0.4, end=1.6),
    *[
        utterance_case(
            f"e_ball_{k}",
            f"ball_{k}",
            "A large red ball rolled down the hill.",
            "en",
            references=_whole(*(f"ball_{j}" for j in (1, 2, 3) if j != k)),
        )
        for k in (1, 2, 3)
    ],
    utterance_case("e_software", "es_software", "El software de marketing.", "es"),
    utterance_case("e_dias", "es_dias", "¡Buenos días, señora!", "es"),
    utterance_case("e_playa", "es_playa", "Me gusta la playa", "es"),
    utterance_case("e_rock", "es_rock", "El fútbol y el rock and roll", "es"),
    utterance_case("e_computer", "nl_computer", "De computer en de weekend.", "nl"),
    utterance_case("e_morgen", "nl_morgen", "Goedemorgen, mevrouw!", "nl"),
    utterance_case("e_kat", "nl_kat", "De kat zit op de mat.", "nl"),
    utterance_case("e_fiets", "nl_fiets", "Ik hou van fietsen in het weekend", "nl"),
]


def lm_words(utterances: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Each language's LM vocabulary: its texts' words (cleaned as PathBench cleans) and a
    few function words, so beam search has real alternatives to the greedy transcription."""
    from pathbench_flow.neural.phonemes import clean

    words: dict[str, set[str]] = {lang: set(extra) for lang, extra in EXTRA_WORDS.items()}
    for utt in utterances:
        words[utt["language"]].update(w.strip("¡¿") for w in clean(utt["text"]).split())
    return {lang: sorted(found) for lang, found in words.items()}


def build_binary_program(given: str | None) -> str:
    """KenLM's ``build_binary``: ``given``, else ``$KENLM_BUILD_BINARY``, else on PATH."""
    program = given or os.environ.get("KENLM_BUILD_BINARY") or "build_binary"
    found = shutil.which(program)
    if found is None:
        raise SystemExit(
            f"--lm-binary: KenLM's build_binary not found ({program!r}); build KenLM and pass "
            "--build-binary PATH or set KENLM_BUILD_BINARY"
        )
    return found


def write_lm_binaries(lms: Mapping[str, Path], program: str) -> list[Path]:
    """Each ``.arpa`` file's KenLM binary as ``<file>.bin``, the name PathBench switches to
    whenever it exists; a file PathBench names as a binary already (Spanish) is left alone.
    The ``.arpa`` paths stay what both sides are given: the switch is each side's own."""
    written = []
    for path in lms.values():
        if path.suffix == ".arpa":
            binary = path.with_name(path.name + ".bin")
            done = subprocess.run([program, str(path), str(binary)], capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"{program} {path} {binary} failed: {done.stderr.strip()}")
            written.append(binary)
    return written


# ------------------------------------------------------------------------------ environment
@dataclass
class Workspace:
    """The scratch directory PathBench runs in: HF cache, ``lms/``, audio, models."""

    root: Path
    commits: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def cache(self) -> Path:
        return self.root / "hf-cache"

    def register(self, size: str, kind: str, models: Mapping[str, Path], encoder: Path) -> None:
        """Make the PathBench ids resolve to these models when (size, kind) is active."""
        from pathbench_flow.testing import tiny_models

        commit = hashlib.sha1(f"{size}-{kind}".encode()).hexdigest()
        self.commits[(size, kind)] = commit
        targets = {PHONE_ID: models["phone"], NAD_ID: encoder}
        targets |= {repo: models["char"] for repo in ASR_IDS.values()}
        for repo, directory in targets.items():
            tiny_models.as_hf_cache(directory, self.cache, repo, commit=commit, link=True)

    def activate(self, size: str, kind: str) -> None:
        """Point every id at (size, kind)'s snapshot; PathBench's in-process model cache must
        be emptied too (:meth:`PathBench.forget_models`), or it keeps the old weights."""
        commit = self.commits[(size, kind)]
        for ref in self.cache.glob("models--*/refs/main"):
            ref.write_text(commit)


def espeak_library() -> tuple[str, str]:
    """The espeak-ng library PathBench's phonemizer finds by itself, and its version."""
    wrapper = importlib.import_module("phonemizer.backend.espeak.wrapper").EspeakWrapper()
    return str(wrapper.library_path), ".".join(str(v) for v in wrapper.version)


def our_default_espeak() -> str:
    """The espeak-ng version our phonemisation picks when not told, asked in a process of its
    own (phonemizer binds one library per process)."""
    code = (
        "from pathbench_flow.neural import phonemes as p; "
        "print(p.espeak_version() if hasattr(p, 'espeak_version') else 'espeak-ng program')"
    )
    env = {k: v for k, v in os.environ.items() if k != "PHONEMIZER_ESPEAK_LIBRARY"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    return done.stdout.strip() or f"unknown ({done.stderr.strip().splitlines()[-1:]})"


# ---------------------------------------------------------------------------------- scoring
@dataclass
class Side:
    """One implementation's per-utterance results of one measure."""

    values: dict[str, float | None]
    notes: dict[str, str]
    cpu_s: float


def pathbench_evaluator(pb: Any, measure: str, language: str) -> Any:
    """The evaluator PathBench's driver builds for a dataset of ``language``."""
    lang = PATHBENCH_LANGUAGE[language]
    return {
        "artp": lambda: pb.articulatory.ArticulatoryPrecisionEvaluator(),
        "artp_old": lambda: pb.articulatory.PhoneticConfidenceEvaluator(),
        "artp_double_asr": lambda: pb.double.ArtPDoubleASREvaluator(language=lang),
        "per": lambda: pb.asr.PEREvaluator(language=lang),
        "dper": lambda: pb.asr.DirectPEREvaluator(),
        "double_asr": lambda: pb.asr.DoubleASREvaluator(language=lang),
        "nad": lambda: pb.nad.NADEvaluator(),
    }[measure]()


class PathBench:
    """PathBench's modules, and its driver's way of calling an evaluator on one utterance."""

    def __init__(self, checkout: Path) -> None:
        sys.path.insert(0, str(checkout))
        sys.path.insert(0, str(checkout / "scripts"))
        with contextlib.redirect_stdout(io.StringIO()):
            self.driver = importlib.import_module("evaluate_spk2score")
        self.articulatory = importlib.import_module("pathbench.articulatory_precision_evaluator")
        self.double = importlib.import_module("pathbench.artp_double_asr_evaluator")
        self.asr = importlib.import_module("pathbench.asr_evaluators")
        self.nad = importlib.import_module("pathbench.nad_evaluator")
        self.registry = importlib.import_module("pathbench.model_registry")
        self.strings = importlib.import_module("pathbench.string_clean")

    def forget_models(self) -> None:
        self.registry._ctc_models.clear()
        self.registry._feat_models.clear()

    def one(self, evaluator: Any, utt: Mapping[str, Any], paths: Mapping[str, Path], cache: dict):
        """(value, note) as ``run_utterance_evaluators``/``run_reference_evaluators`` get it:
        any exception is the driver's ``None``; the note is PathBench's last printed line."""
        audio_path = str(paths[utt["audio"]])
        language = PATHBENCH_LANGUAGE[utt["language"]]
        start, end = utt["start"], utt["end"]
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            try:
                if isinstance(evaluator, (self.nad.NADEvaluator, self.nad.TrimmedNADEvaluator)):
                    references = [(str(paths[a]), s, e) for a, s, e in utt["references"]]
                    value = self.driver._dispatch_ref_score(
                        evaluator, utt["utt_id"], audio_path, utt["text"], language,
                        references, start, end,
                    )  # fmt: skip
                else:  # the driver preloads once per utterance; only reference-free use it
                    preloaded = None
                    if isinstance(evaluator, self.driver.ReferenceFreeEvaluator):
                        preloaded = self.driver.load_audio(audio_path, start, end, cache=cache)[0]
                    value = self.driver._dispatch_utt_score(
                        evaluator, utt["utt_id"], audio_path, utt["text"], language,
                        start, end, preloaded_audio=preloaded,
                    )  # fmt: skip
            except Exception as error:  # noqa: BLE001 - the driver's own handling
                print(f"raised {type(error).__name__}: {error}")
                value = None
        lines = [line for line in printed.getvalue().splitlines() if line.strip()]
        notable = [line for line in lines if line.startswith(("Warning", "Error", "raised"))]
        note = (notable or lines or [""])[-1][:200]
        return (None if value is None else float(value)), note

    def run(self, measure: str, utts: Sequence[Mapping], paths: Mapping[str, Path]) -> Side:
        languages = sorted({u["language"] for u in utts})
        with contextlib.redirect_stdout(io.StringIO()):
            shared = measure in ("artp", "artp_old", "dper", "nad")
            built = {lang: pathbench_evaluator(self, measure, lang) for lang in languages}
            if shared:  # one evaluator for every language, as the driver builds it
                built = dict.fromkeys(languages, built[languages[0]])
        for lang in languages:  # load and warm up with a throwaway evaluator's caches
            warm = next(u for u in utts if u["language"] == lang)
            self.one(built[lang], warm, paths, {})
        with contextlib.redirect_stdout(io.StringIO()):
            fresh = {lang: pathbench_evaluator(self, measure, lang) for lang in languages}
            if shared:
                fresh = dict.fromkeys(languages, fresh[languages[0]])
        self.strings.cached_phonemize.cache_clear()
        cache: dict = {}
        values, notes = {}, {}
        start = time.process_time()
        for utt in utts:
            values[utt["utt_id"]], notes[utt["utt_id"]] = self.one(
                fresh[utt["language"]], utt, paths, cache
            )
        return Side(values, notes, time.process_time() - start)


def _our_options(measure: str, models: Mapping[str, Path], encoder: Path, lms: Mapping) -> dict:
    phone, char = str(models["phone"]), str(models["char"])
    asr = {lang: char for lang in ASR_IDS}
    lm = {lang: str(path) for lang, path in lms.items()}
    return {
        "artp": {"model": phone},
        "artp_old": {"model": phone},
        "dper": {"model": phone},
        "per": {"models": asr},
        "double_asr": {"models": asr, "lm": lm},
        "artp_double_asr": {"model": phone, "models": asr, "lm": lm},
        "nad": {"features": "wav2vec2", "model": str(encoder), "layer": 10},
    }[measure]


def our_items(utts: Sequence[Mapping[str, Any]], paths: Mapping[str, Path]) -> list:
    from pathbench_flow.evaluators.base import Item

    return [
        Item(
            u["utt_id"],
            str(paths[u["audio"]]),
            u["start"],
            u["end"],
            u["text"],
            u["language"],
            tuple((str(paths[a]), s, e) for a, s, e in u["references"]),
        )
        for u in utts
    ]


def forget_our_caches(models_too: bool) -> None:
    """Empty what a workflow job starts without: decoded audio, phonemisations and model
    outputs remembered in process (the shared-track memo, where the code has one); with
    ``models_too`` also the loaded models and decoders."""
    from pathbench_flow.common.audio import load_shared
    from pathbench_flow.neural import lm, models, phonemes

    load_shared.cache_clear()
    phonemes.phonemise.cache_clear()
    tracks = importlib.import_module("pathbench_flow.tracks")
    if hasattr(tracks, "forget"):
        tracks.forget()
    if models_too:
        models.load_ctc.cache_clear()
        models.load_encoder.cache_clear()
        lm.load_decoder.cache_clear()


def run_ours(measure: str, options: Mapping[str, Any], utts, paths) -> Side:
    from pathbench_flow.evaluators import registry
    from pathbench_flow.evaluators.base import evaluate_all

    items = our_items(utts, paths)
    warm = [
        next(i for i in items if i.language == lang) for lang in sorted({i.language for i in items})
    ]
    evaluate_all(registry.create(measure, **options), warm)  # loads the models and LMs
    forget_our_caches(models_too=False)
    evaluator = registry.create(measure, **options)
    start = time.process_time()
    scores = evaluate_all(evaluator, items)
    cpu = time.process_time() - start
    values = {i.utt_id: s.value for i, s in zip(items, scores, strict=True)}
    notes = {i.utt_id: f"{s.status}: {s.message}"[:200] for i, s in zip(items, scores, strict=True)}
    return Side(values, notes, cpu)


# ------------------------------------------------------------------------------- comparison
def relative(ours: float, theirs: float) -> float:
    """|ours - PathBench| / |PathBench| (0 when both are 0, inf when only PathBench's is)."""
    if ours == theirs:
        return 0.0
    return abs(ours - theirs) / abs(theirs) if theirs != 0 else math.inf


def compare(pb: Side, ours: Side) -> dict[str, Any]:
    both = [u for u in pb.values if pb.values[u] is not None and ours.values[u] is not None]
    only = [u for u in pb.values if (pb.values[u] is None) != (ours.values[u] is None)]
    neither = [u for u in pb.values if pb.values[u] is None and ours.values[u] is None]
    diffs = [relative(ours.values[u], pb.values[u]) for u in both]
    status = Counter(
        ("PathBench None" if pb.values[u] is None else "ours None")
        + f" (ours: {ours.notes[u].split(':')[0]})"
        for u in only
    )
    a = [pb.values[u] for u in both]
    b = [ours.values[u] for u in both]
    r = math.nan
    if len(both) >= 2 and statistics.pstdev(a) > 0 and statistics.pstdev(b) > 0:
        r = statistics.correlation(a, b)
    return {
        "both": len(both),
        "one_side": len(only),
        "one_side_detail": dict(status),
        "one_side_utts": only,
        "neither": len(neither),
        "max_rel": max(diffs) if diffs else math.nan,
        "median_rel": statistics.median(diffs) if diffs else math.nan,
        "pearson": r,
        "pathbench_cpu_s": pb.cpu_s,
        "ours_cpu_s": ours.cpu_s,
        "cpu_ratio": pb.cpu_s / ours.cpu_s if ours.cpu_s > 0 else math.nan,
    }


def notes_worth_keeping(pb: Side, ours: Side) -> dict[str, dict[str, str]]:
    """Both sides' messages where they tell something: an utterance without a value on either
    side, or with values more than 1e-4 apart (the rest would only repeat the values)."""
    kept = {}
    for utt, theirs in pb.values.items():
        mine = ours.values[utt]
        if theirs is None or mine is None or relative(mine, theirs) > 1e-4:
            kept[utt] = {"pathbench": pb.notes[utt], "ours": ours.notes[utt]}
    return kept


def code_version() -> str:
    """Which pathbench-flow was measured: its commit, and whether the package had uncommitted
    changes (the table describes the code on disk, not necessarily a commit)."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
        return done.stdout.strip()

    dirty = git("status", "--porcelain", "--", "pathbench_flow")
    return (git("rev-parse", "--short", "HEAD") or "unknown") + (
        " + uncommitted changes" if dirty else ""
    )


def _fmt(x: float, digits: int = 3) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.{digits}g}" if abs(x) < 1e-2 and x != 0 else f"{x:.{digits}f}"


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = (
        "| size | kind | measure | both scored | one side only | both unscored "
        "| max rel. diff | median rel. diff | Pearson r | PathBench CPU s | ours CPU s "
        "| CPU ratio |\n|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = []
    for row in rows:
        c = row["comparison"]
        detail = "; ".join(f"{k} ×{v}" for k, v in sorted(c["one_side_detail"].items()))
        lines.append(
            f"| {row['size']} | {row['kind']} | {row['measure']} | {c['both']} "
            f"| {c['one_side']}{': ' + detail if detail else ''} | {c['neither']} "
            f"| {_fmt(c['max_rel'])} | {_fmt(c['median_rel'])} | {_fmt(c['pearson'], 4)} "
            f"| {c['pathbench_cpu_s']:.2f} | {c['ours_cpu_s']:.2f} | {_fmt(c['cpu_ratio'], 2)} |"
        )
    return head + "\n".join(lines) + "\n"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


# -------------------------------------------------------------------------------------- run
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pathbench", type=Path, required=True, help="PathBench checkout")
    parser.add_argument("--sizes", default="tiny", help="tiny and/or large, comma-separated")
    parser.add_argument("--kinds", default="flat,peaked")
    parser.add_argument("--measures", default=",".join(MEASURES))
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "neural_conformance.md")
    parser.add_argument("--frozen", default=str(FROZEN), help="'' to leave it alone")
    parser.add_argument("--calibrate", action="store_true", help="print peaks for this audio")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument(
        "--lm-binary", action="store_true", help="also write each .arpa's KenLM .arpa.bin"
    )
    parser.add_argument("--build-binary", help="KenLM's build_binary (for --lm-binary)")
    args = parser.parse_args()
    sizes, kinds = args.sizes.split(","), args.kinds.split(",")
    measures = args.measures.split(",")
    out = args.out.resolve()
    frozen_path = Path(args.frozen).resolve() if args.frozen else None  # Path('') is '.'
    if args.lm_binary:  # the frozen values are the ARPA files' (the test rebuilds no binary)
        frozen_path = None
    build_binary = build_binary_program(args.build_binary) if args.lm_binary else None

    space = Workspace(Path(tempfile.mkdtemp(prefix="neural-conformance-")))
    from pathbench_flow.testing import tiny_models

    tiny_models.quiet_hf(space.cache)  # before transformers is imported
    os.chdir(space.root)  # PathBench reads lms/ relative to the working directory
    library, version = espeak_library()
    ours_default = our_default_espeak()
    os.environ["PHONEMIZER_ESPEAK_LIBRARY"] = library  # both sides, the same library

    import numpy as np
    import torch
    import transformers

    from pathbench_flow.testing import conformance_inputs as inputs

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    torch.set_num_threads(1)
    pb = PathBench(args.pathbench.resolve())

    audio_specs = FROZEN_AUDIO + ESPEAK_AUDIO
    utts = FROZEN_UTTERANCES + ESPEAK_UTTERANCES
    paths = inputs.materialise(audio_specs, space.root / "audio")
    words = lm_words(utts)
    lms = inputs.write_lms(space.root, words)
    binaries = write_lm_binaries(lms, build_binary) if build_binary else []
    speech = [np.asarray(pb.driver.load_audio(str(p))[0]) for p in paths.values()]

    rows: list[dict[str, Any]] = []
    record: dict[str, Any] = {"pathbench": {}, "ours": {}, "notes": {}}
    shapes: dict[str, dict[str, Any]] = {}
    digests: dict[str, Any] = {}
    for size in sizes:
        encoder = inputs.build_encoder(space.root / "models", size)
        digests[f"{size}/encoder"] = tiny_models.weights_digest(encoder)
        for kind in kinds:
            peaks = inputs.peaks_for(size, kind)
            models = inputs.build_models(space.root / "models", size, kind, peaks)
            space.register(size, kind, models, encoder)
            for role, directory in models.items():
                digests[f"{size}/{kind}/{role}"] = tiny_models.weights_digest(directory)
                shape = tiny_models.posterior_shape(directory, speech)
                shapes[f"{size}/{kind}/{role}"] = shape | {"peak": peaks[role]}
                print(f"{size} {kind} {role}: {shape}", flush=True)
                if args.calibrate and kind == "flat":
                    print(f"  calibrated: {tiny_models.calibrate_peak(directory, speech)}")
        for kind in kinds:
            space.activate(size, kind)
            models = {
                role: space.root / "models" / f"{size}-{kind}" / role for role in ("phone", "char")
            }
            for measure in measures:
                if measure == "nad" and kind != kinds[0]:
                    continue  # NAD reads no CTC head: the kinds are the same model
                chosen = [u for u in utts if u["references"]] if measure == "nad" else utts
                pb.forget_models()
                forget_our_caches(models_too=True)
                gc.collect()
                theirs = pb.run(measure, chosen, paths)
                options = _our_options(measure, models, encoder, lms)
                ours = run_ours(measure, options, chosen, paths)
                comparison = compare(theirs, ours)
                label = "any" if measure == "nad" else kind
                rows.append({"size": size, "kind": label, "measure": measure} | {
                    "comparison": comparison
                })  # fmt: skip
                key = f"{size}/{label}/{measure}"
                record["pathbench"][key] = theirs.values
                record["ours"][key] = ours.values
                record["notes"][key] = notes_worth_keeping(theirs, ours)
                print(table(rows[-1:]).splitlines()[-1], flush=True)
        pb.forget_models()
        forget_our_caches(models_too=True)

    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, "
        f"Python {platform.python_version()}",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "espeak_library": library,
        "espeak_version": version,
        "ours_default_espeak": ours_default,
        "pathbench": str(args.pathbench),
        "pathbench_flow": code_version(),
        "utterances": len(utts),
        "lm_binaries": [path.name for path in binaries],
        "shapes": {
            k: v | {"peak": v["peak"].as_dict() if v["peak"] else None} for k, v in shapes.items()
        },
        "digests": digests,
    }
    write_report(out, rows, meta, record, utts)
    if frozen_path is not None and "tiny" in sizes and set(kinds) == set(inputs.KINDS):
        write_frozen(frozen_path, record, meta, words, pb, paths)
    if not args.keep:
        import shutil

        shutil.rmtree(space.root, ignore_errors=True)
    else:
        print(f"scratch directory kept: {space.root}")


def write_report(out: Path, rows, meta, record, utts) -> None:
    shapes = "\n".join(
        f"| {name} | {s['mean_max_posterior']:.3f} | {s['blank_fraction']:.3f} | "
        + (f"×{s['peak']['scale']}, blank +{s['peak']['blank_bias']}" if s["peak"] else "none")
        + " |"
        for name, s in meta["shapes"].items()
    )
    text = (
        "# PathBench conformance of the model-based measures\n\n"
        f"`{Path(sys.argv[0]).name} {' '.join(sys.argv[1:])}`, {meta['date']}, "
        f"{meta['machine']}, pathbench-flow {meta['pathbench_flow']}, "
        f"torch {meta['torch']}, transformers {meta['transformers']}, "
        f"espeak-ng {meta['espeak_version']} ({meta['espeak_library']}, the library "
        f"PathBench's phonemizer found; both sides used it; ours on its own picks "
        f"{meta['ours_default_espeak']}). {meta['utterances']} utterances "
        "(NAD: those with references). Relative difference = |ours − PathBench| / |PathBench|; "
        "CPU ratio = PathBench CPU s / ours CPU s (one torch thread, models warm)."
        + (
            f" KenLM binaries beside the ARPA files: {', '.join(meta['lm_binaries'])} (PathBench "
            "opens them; ours was given the .arpa paths)."
            if meta.get("lm_binaries")
            else ""
        )
        + "\n\n"
        + table(rows)
        + "\n| model | mean max posterior | blank frames | peaking |\n|---|---:|---:|---|\n"
        + shapes
        + "\n"
    )
    out.write_text(text, encoding="utf-8")
    data = {"meta": meta, "utterances": utts, "rows": rows} | record
    out.with_suffix(".json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out} and {out.with_suffix('.json')}")


def write_frozen(path: Path, record, meta, words, pb: PathBench, paths) -> None:
    """PathBench's tiny-model values on the rebuildable utterances, with their recipe."""
    from pathbench_flow.testing import conformance_inputs as inputs
    from pathbench_flow.testing import synthetic_speech, tiny_models

    names = {u["audio"] for u in FROZEN_UTTERANCES}
    names |= {a for u in FROZEN_UTTERANCES for a, _s, _e in u["references"]}
    audio = [
        spec | {"pcm_sha256": synthetic_speech.pcm_digest(paths[spec["name"]])}
        for spec in FROZEN_AUDIO
        if spec["name"] in names
    ]
    frozen_ids = [u["utt_id"] for u in FROZEN_UTTERANCES]
    values: dict[str, dict[str, dict[str, float | None]]] = {}
    for key, found in record["pathbench"].items():
        size, kind, measure = key.split("/")
        if size == "tiny":
            values.setdefault(kind, {})[measure] = {u: found[u] for u in frozen_ids if u in found}
    phonemised = {}
    for utt in FROZEN_UTTERANCES:
        text = pb.strings.clean_text(utt["text"])
        phonemised[f"{utt['language']}:{text}"] = pb.strings.cached_phonemize(
            text, PATHBENCH_LANGUAGE[utt["language"]]
        )
    frozen = {
        "about": (
            "PathBench's values (checkout e26aa32, called as scripts/evaluate_spk2score.py "
            "calls its evaluators) for the tiny seeded models of "
            "pathbench_flow/testing/tiny_models.py; "
            "written by benchmarks/neural_conformance.py, checked by "
            "tests/test_neural_conformance.py. null = PathBench gave no value."
        ),
        "espeak": {"library": meta["espeak_library"], "version": meta["espeak_version"]},
        "torch": meta["torch"],
        "models": {
            "size": "tiny",
            "format": tiny_models.SEEDED_FORMAT,
            "seeds": dict(inputs.SEEDS),
            "peaks": {r: p.as_dict() for r, p in tiny_models.PEAKS["tiny"].items()},
            "digests": {
                k.split("/", 1)[1]: v for k, v in meta["digests"].items() if k.startswith("tiny/")
            },
        },
        "lm_words": {lang: words[lang] for lang in sorted(words)},
        "audio": audio,
        "utterances": FROZEN_UTTERANCES,
        "phonemizer": phonemised,
        "values": values,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(frozen, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
