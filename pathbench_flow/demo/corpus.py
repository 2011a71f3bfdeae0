"""The embedded demo corpus: synthetic pathological and control speakers with known truth.

The workflow needs data that anyone can generate offline, that is small enough for CI, and
whose answer is known, so that tests can check that measures move the right way. Each speaker's
voice is drawn from the seed and rendered by :mod:`pathbench_flow.demo.synth`; the exact
parameters are written to ``truth.json``.

Layout (Kaldi directories, 16 kHz mono PCM-16)::

    <out>/pathological/{wav.scp,text,utt2spk,spk2score,spk2gender,spk2age,utt2group,language,wav/}
    <out>/control/...           (spk2score says N/A)
    <out>/truth.json            (every speaker's voice parameters, every utterance's speech span)

Severity model. A pathological speaker gets a severity s in (0, 1) and the score
``100 * (1 - s)`` (higher = more intelligible). Severities are spread evenly over (0, 1) and
genders alternate along the severity order, so severity is not confounded with sex. On top of a
control-like baseline drawn per speaker, severity

* adds aspiration noise (``breathiness`` += 0.5 s; also opens the glottis longer): lower HNR,
  CPP/CPPS, more high-frequency noise;
* raises ``jitter`` (+0.008 s) and ``shimmer`` (+0.05 s): period and amplitude perturbation;
* centralises vowels toward schwa (``vowel_centralisation`` += 0.6 s): smaller vowel space;
* flattens intonation (``f0_modulation_semitones`` * (1 - 0.75 s)): smaller F0 range;
* slows speech (``rate`` * (1 - 0.5 s)) and adds pauses (``pause_probability`` += 0.5 s,
  ``pause_s`` * (1 + 1.5 s)): longer utterances, lower syllable rate.

Speaker identity, independent of severity: F0 (men 95-135 Hz, women 175-235 Hz), vocal-tract
length (``formant_scale``: men 0.95-1.05, women 1.12-1.22) and spectral ``tilt``. Controls are
severity 0 with the same natural spread of baselines. Utterances are split into recording
sessions (``utt2group``: ``<speaker>_s1`` ...), each with its own gain.

The texts are real English (short sentences, or in ``word_mode`` 155 isolated words shaped like
UASpeech: digits, radio alphabet, computer commands, common words) so the reference-text stages
have something to align, but the synthetic speech is only English-like: forced alignment with
pocketsphinx will mostly fail on it. That is acceptable, since trimming falls back to energy;
``truth.json`` gives the true speech span of every file to check that fallback against.

Every file is a pure function of the parameters: same seed, byte-identical corpus.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.languages import ENGLISH
from pathbench_flow.common.seeds import DEMO_SEED
from pathbench_flow.data.kaldi import NOT_RATED
from pathbench_flow.demo.synth import Voice, plan_text, synthesize

SENTENCES = (
    "the cat sat on the mat",
    "we saw a big red bus",
    "my dog can run fast",
    "she has a blue hat",
    "put the cup on the table",
    "the sun is hot today",
    "he will go home now",
    "i like to read books",
    "give me the green box",
    "the baby is fast asleep",
)
"""Default sentence texts: short, common words, the same list for every speaker."""

DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
RADIO_ALPHABET = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
)
COMMANDS = (
    "enter",
    "delete",
    "escape",
    "tab",
    "shift",
    "control",
    "space",
    "backspace",
    "home",
    "end",
    "up",
    "down",
    "left",
    "right",
    "insert",
    "page",
    "copy",
    "paste",
    "undo",
)
COMMON_WORDS = (
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "you",
    "that",
    "it",
    "he",
    "was",
    "for",
    "on",
    "are",
    "as",
    "with",
    "his",
    "they",
    "i",
    "at",
    "be",
    "this",
    "have",
    "from",
    "or",
    "had",
    "by",
    "but",
    "not",
    "what",
    "all",
    "were",
    "we",
    "when",
    "your",
    "can",
    "said",
    "there",
    "use",
    "an",
    "each",
    "which",
    "she",
    "do",
    "how",
    "their",
    "if",
    "will",
    "other",
    "about",
    "out",
    "many",
    "then",
    "them",
    "these",
    "so",
    "some",
    "her",
    "would",
    "make",
    "like",
    "him",
    "into",
    "time",
    "has",
    "look",
    "more",
    "write",
    "go",
    "see",
    "number",
    "no",
    "way",
    "could",
    "people",
    "my",
    "than",
    "first",
    "water",
    "been",
    "call",
    "who",
    "oil",
    "its",
    "now",
    "find",
    "long",
    "day",
    "did",
    "get",
    "come",
    "made",
    "may",
    "part",
    "over",
    "new",
    "sound",
    "take",
    "only",
)
WORDS = DIGITS + RADIO_ALPHABET + COMMANDS + COMMON_WORDS
"""Default ``word_mode`` texts: 155 isolated words in UASpeech's four categories."""

DATASETS = ("pathological", "control")

SPEECH_RMS = 0.08
"""RMS of the speech span (about -22 dBFS): headroom for peaks, far above PCM-16 noise."""
BACKGROUND_DB = -40.0
"""Background noise relative to speech RMS: silence that is quiet but not digital zero."""
SESSION_GAIN_DB = 3.0
"""Recording sessions differ in level by up to this much either way."""
SILENCE_S = {False: (0.3, 0.8), True: (0.3, 0.5)}
"""Leading/trailing silence range per ``word_mode``; shorter around words keeps files 1-2 s."""
WORD_LENGTHENING = 1.5
"""Isolated citation words are spoken more slowly than the same word in a sentence."""

_DESIGN_STREAM, _UTTERANCE_STREAM, _SESSION_STREAM = 0, 1, 2


@dataclass(frozen=True)
class Speaker:
    """One synthetic speaker: identity, diagnosis and the voice that renders them."""

    speaker_id: str
    dataset: str
    gender: str
    age: int
    severity: float
    voice: Voice

    @property
    def score(self) -> float | None:
        """Intelligibility score (0-100, higher = better); controls are unrated."""
        if self.dataset != "pathological":
            return None
        return round(100.0 * (1.0 - self.severity), 2)


def expected_utterances(n_pathological: int, n_control: int, n_utterances: int) -> tuple[int, int]:
    """Utterance counts of (pathological, control) before the corpus exists (shard planning)."""
    return n_pathological * n_utterances, n_control * n_utterances


def _voice(rng: np.random.Generator, gender: str, severity: float) -> Voice:
    """A control-like baseline for ``gender`` degraded by ``severity`` (see module docstring).

    Values are rounded here, before synthesis, so ``truth.json`` holds exactly what was used.
    """
    male = gender == "m"
    values = {
        "f0_mean": rng.uniform(95.0, 135.0) if male else rng.uniform(175.0, 235.0),
        "formant_scale": rng.uniform(0.95, 1.05) if male else rng.uniform(1.12, 1.22),
        "tilt": rng.uniform(0.1, 0.6),
        "breathiness": rng.uniform(0.03, 0.08) + 0.5 * severity,
        "jitter": rng.uniform(0.002, 0.006) + 0.008 * severity,
        "shimmer": rng.uniform(0.02, 0.05) + 0.05 * severity,
        "vowel_centralisation": rng.uniform(0.0, 0.1) + 0.6 * severity,
        "f0_modulation_semitones": rng.uniform(3.0, 5.0) * (1.0 - 0.75 * severity),
        "rate": rng.uniform(4.5, 5.5) * (1.0 - 0.5 * severity),
        "pause_probability": rng.uniform(0.1, 0.2) + 0.5 * severity,
        "pause_s": rng.uniform(0.15, 0.25) * (1.0 + 1.5 * severity),
    }
    return Voice(**{name: round(float(value), 4) for name, value in values.items()})


def design_speakers(seed: int, n_pathological: int, n_control: int) -> list[Speaker]:
    """Draw every speaker of both datasets from ``seed``.

    Pathological severities sit one per stratum of (0, 1) so they span the range at any size;
    speaker numbers are shuffled so an id says nothing about severity.
    """
    rng = np.random.default_rng([seed, _DESIGN_STREAM])
    speakers = []
    for dataset, count in zip(DATASETS, (n_pathological, n_control), strict=True):
        prefix = dataset[0].upper()
        width = max(2, len(str(count)))
        numbers = rng.permutation(count) + 1
        first_gender = int(rng.integers(2))
        for rank in range(count):
            severity = 0.0
            if dataset == "pathological":
                severity = round(float((rank + rng.uniform(0.15, 0.85)) / count), 4)
            gender = "mf"[(rank + first_gender) % 2]
            speakers.append(
                Speaker(
                    speaker_id=f"{prefix}{numbers[rank]:0{width}d}",
                    dataset=dataset,
                    gender=gender,
                    age=int(rng.integers(20, 76)),
                    severity=severity,
                    voice=_voice(rng, gender, severity),
                )
            )
    return sorted(speakers, key=lambda speaker: speaker.speaker_id)


def _sessions(n_utterances: int) -> int:
    """Recording sessions per speaker: four for short lists, so that leakage-safe open-set
    folds (whole sessions on one side) still leave training sessions inside tuning folds;
    three for UASpeech-sized lists (it has 3 blocks)."""
    return min(n_utterances, 4 if n_utterances < 30 else 3)


def _render(
    speech: np.ndarray, gain_db: float, silence: tuple[float, float], rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Embed speech in background noise with the given silences; PCM-16 samples and onset.

    Quantising here (not in libsndfile) makes the rounding explicit and the bytes reproducible.
    """
    lead, trail = (int(round(seconds * SAMPLE_RATE)) for seconds in silence)
    level = SPEECH_RMS * 10.0 ** (gain_db / 20.0)
    speech = speech * (level / np.sqrt(np.mean(speech**2)))
    audio = rng.standard_normal(lead + len(speech) + trail) * level * 10.0 ** (BACKGROUND_DB / 20)
    audio[lead : lead + len(speech)] += speech
    peak = np.max(np.abs(audio))
    if peak > 0.99:  # scale the whole file so the speech/silence ratio is kept
        audio *= 0.99 / peak
    return np.round(audio * 32767.0).astype(np.int16), lead


def _write_lines(path: Path, mapping: dict[str, str]) -> None:
    """A Kaldi table: one ``key value`` line per entry, sorted, '\\n' endings."""
    lines = (f"{key} {value}\n" for key, value in sorted(mapping.items()))
    path.write_text("".join(lines), encoding="utf-8", newline="\n")


def _write_dataset(
    root: Path,
    speakers: list[Speaker],
    texts: Sequence[str],
    n_utterances: int,
    seed: int,
    word_mode: bool,
) -> dict[str, dict[str, object]]:
    """Write one Kaldi directory; returns the per-utterance truth."""
    (root / "wav").mkdir(parents=True)
    plans = [plan_text(text) for text in texts]
    tables: dict[str, dict[str, str]] = {
        name: {} for name in ("wav.scp", "text", "utt2spk", "utt2group")
    }
    truth: dict[str, dict[str, object]] = {}
    width = max(3, len(str(n_utterances)))
    n_sessions = _sessions(n_utterances)
    dataset_index = DATASETS.index(speakers[0].dataset)
    for speaker_index, speaker in enumerate(speakers):
        session_rng = np.random.default_rng([seed, _SESSION_STREAM, dataset_index, speaker_index])
        gains = session_rng.uniform(-SESSION_GAIN_DB, SESSION_GAIN_DB, n_sessions).round(2)
        for index in range(n_utterances):
            utt = f"{speaker.speaker_id}_{index + 1:0{width}d}"
            session = index * n_sessions // n_utterances
            rng = np.random.default_rng(
                [seed, _UTTERANCE_STREAM, dataset_index, speaker_index, index]
            )
            speech = synthesize(
                plans[index % len(plans)],
                speaker.voice,
                rng,
                WORD_LENGTHENING if word_mode else 1.0,
            )
            silence = (rng.uniform(*SILENCE_S[word_mode]), rng.uniform(*SILENCE_S[word_mode]))
            samples, onset = _render(speech, float(gains[session]), silence, rng)
            sf.write(root / "wav" / f"{utt}.wav", samples, SAMPLE_RATE, subtype="PCM_16")
            group = f"{speaker.speaker_id}_s{session + 1}"
            tables["wav.scp"][utt] = f"wav/{utt}.wav"
            tables["text"][utt] = texts[index % len(texts)]
            tables["utt2spk"][utt] = speaker.speaker_id
            tables["utt2group"][utt] = group
            truth[utt] = {
                "dataset": speaker.dataset,
                "speaker": speaker.speaker_id,
                "text": texts[index % len(texts)],
                "group": group,
                "gain_db": float(gains[session]),
                "speech_start_s": onset / SAMPLE_RATE,
                "speech_end_s": (onset + len(speech)) / SAMPLE_RATE,
                "duration": len(samples) / SAMPLE_RATE,
            }
    for name, mapping in tables.items():
        _write_lines(root / name, mapping)
    _write_lines(root / "spk2gender", {s.speaker_id: s.gender for s in speakers})
    _write_lines(root / "spk2age", {s.speaker_id: str(s.age) for s in speakers})
    _write_lines(
        root / "spk2score",
        {s.speaker_id: NOT_RATED if s.score is None else f"{s.score:.2f}" for s in speakers},
    )
    (root / "language").write_text(f"{ENGLISH}\n", encoding="utf-8", newline="\n")
    return truth


def _rounded(value: object) -> object:
    """Floats rounded to 6 decimals, recursively: JSON text that does not show float noise."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    return value


def _normalise_texts(texts: Sequence[str]) -> list[str]:
    """Lower-case, single-spaced texts; each must hold at least one word of letters."""
    cleaned = [" ".join(text.lower().split()) for text in texts]
    if not cleaned or any(not plan_text(text) for text in cleaned):
        raise ValueError("texts must be a non-empty list of texts that each contain a word")
    return cleaned


def make_demo(
    out_dir: str | Path,
    *,
    seed: int = DEMO_SEED,
    n_pathological: int = 8,
    n_control: int = 6,
    n_utterances: int = 8,
    word_mode: bool = False,
    texts: Sequence[str] | None = None,
) -> Path:
    """Synthesise the demo corpus into ``out_dir`` and return its path.

    Utterance ``i`` of every speaker says ``texts[i % len(texts)]`` (default: :data:`SENTENCES`,
    or :data:`WORDS` in ``word_mode``). The corpus is built in a hidden sibling directory and
    renamed onto ``out_dir`` only when complete (replacing an older one), so an interrupted run
    never leaves a half corpus where the workflow looks.
    """
    for name, count in (
        ("n_pathological", n_pathological),
        ("n_control", n_control),
        ("n_utterances", n_utterances),
    ):
        if count < 1:
            raise ValueError(f"{name} must be at least 1, got {count}")
    chosen = _normalise_texts(texts if texts is not None else WORDS if word_mode else SENTENCES)
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.partial-{os.getpid()}"
    if staging.exists():  # left by a killed run that had this process id
        shutil.rmtree(staging)
    staging.mkdir()
    try:
        speakers = design_speakers(seed, n_pathological, n_control)
        utterances: dict[str, dict[str, object]] = {}
        for dataset in DATASETS:
            members = [s for s in speakers if s.dataset == dataset]
            utterances |= _write_dataset(
                staging / dataset, members, chosen, n_utterances, seed, word_mode
            )
        truth = {
            "generator": {
                "seed": seed,
                "word_mode": word_mode,
                "sample_rate": SAMPLE_RATE,
                "background_db": BACKGROUND_DB,
            },
            "speakers": {
                s.speaker_id: {
                    "dataset": s.dataset,
                    "gender": s.gender,
                    "age": s.age,
                    "severity": s.severity,
                    "score": s.score,
                    **asdict(s.voice),
                }
                for s in speakers
            },
            "utterances": utterances,
        }
        (staging / "truth.json").write_text(
            json.dumps(_rounded(truth), indent=2, sort_keys=True, allow_nan=False) + "\n",
            encoding="utf-8",
            newline="\n",
        )
        _swap_into_place(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out


def _swap_into_place(staging: Path, out: Path) -> None:
    """Rename ``staging`` onto ``out``; an existing directory there is moved aside first.

    (Snakemake creates the output's subdirectories before the job runs, so one usually exists.)
    """
    if not out.exists():
        os.replace(staging, out)
        return
    retired = staging.with_name(f".{out.name}.retired-{os.getpid()}")
    os.replace(out, retired)
    os.replace(staging, out)
    shutil.rmtree(retired)
