"""Small spoken datasets in the shape of every one of PathBench's 21 results-table columns.

Why: the results table reads its columns from PathBench's directory layout and each corpus has
its own Kaldi quirks (COPAS's words cut from longer recordings by ``segments``, EasyCall's
paths with spaces, NeuroVoz's ``utt2score``, YouTube's missing ``spk2gender`` and controls,
MDSC's Mandarin commands under ``language`` = ``zh``). A run over all of them at once is the
only place where those shapes meet one workflow, one config and one table.

The five corpora whose metadata PathBench publishes are *cut* from it (from
``tests/fixtures/kaldi-metadata``, which holds the lines read here, so the cut is the same as
from the full metadata): real speaker and utterance ids, texts, scores, genders, ages and
per-utterance ratings, for a few rated speakers spread over the score range, a few texts every
chosen speaker and every chosen control says, and four control speakers of both genders. The
same speaker keeps the same voice in every condition of a task, and an audio file that two
conditions share in the real corpus (the same ``wav.scp`` path) is one synthesised file here
too. MDSC and YouTube are not in the fixtures: they are built in their shape (ids, files,
score formats) from the constants below.

Speech is espeak-ng in the corpus language. Each speaker's severity follows the ground truth
(the lowest ``spk2score`` of the task's first condition is the most severe): slower speech,
amplitude tremor, breath noise riding on the speech and a noisier background, so measures of
voice quality have something to correlate with.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.testing import KALDI_METADATA
from pathbench_flow.testing.speech_fixtures import ONSET_THRESHOLD, pad_in_noise

N_PATHOLOGICAL = 6
N_CONTROL = 4
N_TEXTS = {"balanced": 2, "unbalanced": 3, "all": 3}
"""Texts per speaker by condition: the extended and full sets are the larger ones."""
WORD_GAP_S = 0.4
"""Quiet between the words of one COPAS recording, as in ``copas_shaped``."""

ESPEAK_VOICES = {
    "uaspeech": "en-us",
    "torgo": "en-us",
    "neurovoz": "es",
    "easycall": "it",
    "copas": "nl",
    "mdsc": "cmn",
    "youtube": "en-us",
}
"""espeak-ng voice of each corpus's language (MDSC's ``zh`` is espeak-ng's ``cmn``)."""


@dataclass(frozen=True)
class Column:
    """One of PathBench's 21 columns: its corpus folder, task folder and condition folder."""

    corpus: str
    task: str = ""
    condition: str = ""

    @property
    def name(self) -> str:
        """The config's dataset name (and results folder)."""
        return "_".join(p for p in (self.corpus, self.task, self.condition) if p)

    def split(self, split: str) -> Path:
        """The folder relative to the datasets root, laid out as PathBench's."""
        if not self.task:
            return Path(self.corpus)
        return Path(self.corpus, split, self.task, self.condition)


COLUMNS: tuple[Column, ...] = (
    Column("uaspeech", "word", "balanced"),
    Column("uaspeech", "word", "unbalanced"),
    Column("neurovoz", "utterances", "balanced"),
    Column("neurovoz", "utterances", "unbalanced"),
    Column("easycall", "word", "balanced"),
    Column("easycall", "word", "unbalanced"),
    Column("easycall", "utterances", "balanced"),
    Column("easycall", "utterances", "unbalanced"),
    Column("copas", "word", "balanced"),
    Column("copas", "word", "unbalanced"),
    Column("copas", "word", "all"),
    Column("copas", "utterances", "balanced"),
    Column("copas", "utterances", "unbalanced"),
    Column("copas", "utterances", "all"),
    Column("torgo", "word", "balanced"),
    Column("torgo", "word", "unbalanced"),
    Column("torgo", "utterances", "balanced"),
    Column("torgo", "utterances", "unbalanced"),
    Column("mdsc", "command", "balanced"),
    Column("mdsc", "command", "unbalanced"),
    Column("youtube"),
)
"""In PathBench's column order (UASpeech Word MC ... YT Sentence Full)."""


# ----------------------------------------------------------------------------- speech
@dataclass(frozen=True)
class Voice:
    """How espeak-ng speaks for one speaker, and how much the speech is degraded."""

    espeak: str
    variant: str
    pitch: int
    severity: float  # 0 = typical speech, 1 = the task's most severe speaker

    @property
    def rate(self) -> int:
        """Words per minute: severe speakers are slow (espeak-ng's floor is 80)."""
        return round(170 - 75 * self.severity)


MALE_VARIANTS = ("m1", "m2", "m3", "m4", "m5", "m6", "m7")
FEMALE_VARIANTS = ("f1", "f2", "f3", "f4", "f5")


def voice_for(espeak: str, gender: str, k: int, severity: float) -> Voice:
    """Speaker ``k``'s voice: a variant and pitch of its gender (alternating when unknown)."""
    female = gender == "f" or (gender not in ("f", "m") and k % 2 == 1)
    variants = FEMALE_VARIANTS if female else MALE_VARIANTS
    pitch = (60 if female else 25) + (7 * k) % 25
    return Voice(espeak, variants[k % len(variants)], pitch, severity)


@cache
def espeak(text: str, voice: Voice) -> np.ndarray:
    """espeak-ng saying ``text``, resampled to 16 kHz, leading and trailing silence cut."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "speech.wav"
        command = ["espeak-ng", "-v", f"{voice.espeak}+{voice.variant}", "-p", str(voice.pitch)]
        subprocess.run([*command, "-s", str(voice.rate), "-w", str(path), text], check=True)
        audio, rate = sf.read(path, dtype="float64")
    divisor = np.gcd(rate, SAMPLE_RATE)
    audio = resample_poly(audio, SAMPLE_RATE // divisor, rate // divisor)
    loud = np.flatnonzero(np.abs(audio) > ONSET_THRESHOLD)
    return audio[loud[0] : loud[-1] + 1]


def degrade(speech: np.ndarray, severity: float, rng: np.random.Generator) -> np.ndarray:
    """Tremor (5 Hz amplitude modulation) and breath noise that follows the speech envelope,
    both growing with ``severity``: what lowers harmonicity in dysarthric voices."""
    t = np.arange(len(speech)) / SAMPLE_RATE
    tremor = 1.0 + 0.35 * severity * np.sin(2 * np.pi * 5.0 * t + rng.uniform(0, 2 * np.pi))
    window = int(0.02 * SAMPLE_RATE)
    envelope = np.convolve(np.abs(speech), np.ones(window) / window, mode="same")
    breath = rng.normal(size=len(speech)) * envelope * 1.2 * severity
    return speech * tremor + breath


def spoken(text: str, voice: Voice, rng: np.random.Generator) -> np.ndarray:
    """One degraded utterance with no padding."""
    return degrade(espeak(text, voice), voice.severity, rng)


def snr_db(voice: Voice) -> float:
    """Background noise below the speech: 32 dB for typical speech, 14 dB for the most severe."""
    return 32.0 - 18.0 * voice.severity


def seeded(key: str) -> np.random.Generator:
    """A generator seeded by ``key``: the same file gets the same noise in every build."""
    return np.random.default_rng(zlib.crc32(key.encode()))


def write_wav(path: Path, audio: np.ndarray) -> None:
    """16-bit PCM at 16 kHz, peak-normalised to 0.8 so that no degradation clips."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, 0.8 * audio / np.max(np.abs(audio)), SAMPLE_RATE, subtype="PCM_16")


# ----------------------------------------------------------------------------- plans
@dataclass
class Recording:
    """One audio file: what is said in it (utterance id → text, in utterance order) and by whom.

    A recording of a dataset without ``segments`` holds one utterance; a COPAS word
    recording holds several, which ``segments`` cuts out.
    """

    path: Path
    voice: Voice
    segmented: bool = False
    items: dict[str, str] = field(default_factory=dict)
    spans: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass
class Plan:
    """One dataset directory to write: its Kaldi lines and the recordings its wav.scp names."""

    folder: Path
    files: dict[str, list[str]]
    recordings: dict[str, Recording]  # wav.scp key → recording
    segments: dict[str, str] = field(default_factory=dict)  # utt → wav.scp key
    hashes: bool = True
    language_newline: bool = True


class Pool:
    """Every recording of the build, once per path: conditions that share a real file share it."""

    def __init__(self, audio_root: Path) -> None:
        self.audio_root = audio_root
        self.recordings: dict[Path, Recording] = {}

    def get(self, source: str, voice: Voice, *, segmented: bool = False) -> Recording:
        """The recording standing in for the real corpus's file ``source``."""
        path = self.audio_root / source.lstrip("/")
        recording = self.recordings.setdefault(path, Recording(path, voice, segmented))
        if (recording.voice, recording.segmented) != (voice, segmented):
            raise ValueError(f"{source}: one recording, two speakers or shapes")
        return recording

    def synthesise(self) -> None:
        """Write every recording; one with several items gets their spans for ``segments``."""
        for path, recording in sorted(self.recordings.items()):
            rng = seeded(str(path.relative_to(self.audio_root)))
            if not recording.segmented:
                (text,) = recording.items.values()
                audio = pad_in_noise(
                    spoken(text, recording.voice, rng), rng, snr_db(recording.voice)
                )
                write_wav(path, audio.audio)
                continue
            gap = np.zeros(int(WORD_GAP_S * SAMPLE_RATE))
            pieces, start = [gap], WORD_GAP_S
            for utt, text in sorted(recording.items.items()):
                word = spoken(text, recording.voice, rng)
                end = start + len(word) / SAMPLE_RATE
                recording.spans[utt] = (start, end)
                pieces += [word, gap]
                start = end + WORD_GAP_S
            signal = np.concatenate(pieces)
            speech = np.concatenate(pieces[1::2])
            noise_rms = np.sqrt(np.mean(speech**2)) * 10 ** (-snr_db(recording.voice) / 20)
            write_wav(path, signal + rng.normal(0.0, noise_rms, len(signal)))


def read_kaldi(path: Path) -> dict[str, str]:
    """A Kaldi table (key, rest of the line) in file order; empty when the file is absent."""
    if not path.is_file():
        return {}
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            key, _, rest = line.partition(" ")
            table[key] = rest.strip()
    return table


def _score(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def spread(scores: Mapping[str, float], n: int) -> list[str]:
    """``n`` speakers spread over the score range: one per distinct score first, the levels
    evenly spaced, then the remaining places filled level by level. Sorted by id."""
    levels: dict[float, list[str]] = defaultdict(list)
    for speaker in sorted(scores):
        levels[scores[speaker]].append(speaker)
    ordered = [levels[s] for s in sorted(levels)]
    if len(ordered) > n:
        picks = np.round(np.linspace(0, len(ordered) - 1, n)).astype(int)
        ordered = [ordered[i] for i in picks]
    chosen: list[str] = []
    depth = 0
    while len(chosen) < min(n, len(scores)):
        chosen += [level[depth] for level in ordered if depth < len(level)][: n - len(chosen)]
        depth += 1
    return sorted(chosen)


def by_gender(speakers: Iterable[str], genders: Mapping[str, str], n: int) -> list[str]:
    """``n`` speakers, women and men alternating (so every gender has a control reference)."""
    groups = [[s for s in sorted(speakers) if genders.get(s) == g] for g in ("f", "m")]
    chosen: list[str] = []
    while len(chosen) < n and any(groups):
        for group in groups:
            if group and len(chosen) < n:
                chosen.append(group.pop(0))
    return sorted(chosen)


@dataclass
class Source:
    """One real dataset directory of the fixtures, read once."""

    folder: Path
    tables: dict[str, dict[str, str]]

    @classmethod
    def read(cls, folder: Path) -> Source:
        names = [p.name for p in sorted(folder.iterdir())]
        return cls(folder, {name: read_kaldi(folder / name) for name in names})

    @property
    def utt2spk(self) -> dict[str, str]:
        return self.tables["utt2spk"]

    def recording_of(self, utt: str) -> str:
        """The wav.scp key holding ``utt``."""
        segments = self.tables.get("segments")
        return segments[utt].split()[0] if segments else utt

    def utterances(self, speaker: str, recording: str | None = None) -> dict[str, str]:
        """``speaker``'s utterances (id → text), optionally only those of one recording."""
        return {
            utt: self.tables["text"][utt]
            for utt, spk in self.utt2spk.items()
            if spk == speaker and (recording is None or self.recording_of(utt) == recording)
        }


def _first_per_text(utterances: Mapping[str, str], texts: Iterable[str]) -> dict[str, str]:
    """For each text, the speaker's utterance of it with the smallest id."""
    wanted = set(texts)
    chosen: dict[str, str] = {}
    for utt in sorted(utterances):
        text = utterances[utt]
        if text in wanted and text not in chosen.values():
            chosen[utt] = text
    return chosen


def _severity(score: float, low: float, high: float) -> float:
    """0 for the best score of the chosen speakers, 1 for the worst."""
    return (high - score) / (high - low) if high > low else 0.5


@dataclass
class Selection:
    """What the datasets of one real corpus task keep, decided from its metadata.

    The same speakers in every condition (rated in all of them, spread over the first
    condition's scores; controls present in all, women and men alternating), each saying the
    condition's texts that every candidate and every chosen control says: the shortest ones,
    or for a segmented corpus (COPAS words) the first words of the speaker's recording.
    """

    sources: dict[tuple[str, str], Source]  # (split, condition) → the real directory
    rated: dict[str, float]  # candidates: rated in every condition, by their first score
    chosen: list[str]
    controls: list[str]
    shared: dict[str, list[str]]  # condition → the texts every candidate and control says
    home: dict[str, str]  # segmented corpus: speaker → the recording its words come from

    def said(self, source: Source, speaker: str) -> dict[str, str]:
        """``speaker``'s utterances in ``source`` (id → text), from its home recording."""
        return source.utterances(speaker, self.home.get(speaker))

    def kept(self, split: str, condition: str, speakers: Iterable[str]) -> dict[str, str]:
        """The utterances of ``speakers`` a dataset keeps: each one's first of every shared
        text of ``condition``."""
        source = self.sources[split, condition]
        utts: dict[str, str] = {}
        for speaker in speakers:
            utts |= _first_per_text(self.said(source, speaker), self.shared[condition])
        return utts


def select(kaldi: Path, corpus: str, task: str, conditions: list[str]) -> Selection:
    """The :class:`Selection` of one corpus task of the metadata tree ``kaldi``."""
    sources = {
        (split, c): Source.read(kaldi / corpus / split / task / c)
        for split in ("pathological", "control")
        for c in conditions
    }
    first = {split: sources[split, conditions[0]] for split in ("pathological", "control")}
    segmented = "segments" in first["pathological"].tables
    rated = {
        spk: score
        for spk, value in first["pathological"].tables["spk2score"].items()
        if (score := _score(value)) is not None
        and all(spk in sources["pathological", c].tables["spk2score"] for c in conditions)
    }
    common_controls = set.intersection(
        *(set(sources["control", c].tables["spk2score"]) for c in conditions)
    )
    control_genders = first["control"].tables.get("spk2gender", {})
    controls = by_gender(common_controls, control_genders, N_CONTROL)
    # A segmented corpus keeps each speaker's words in one recording: the one of the first
    # condition (COPAS: the A18 word list), whatever other recordings the speaker has.
    home: dict[str, str] = {}
    if segmented:
        for split, speakers in (("pathological", rated), ("control", controls)):
            source = first[split]
            home |= {s: source.recording_of(min(source.utterances(s))) for s in speakers}
    selection = Selection(sources, rated, [], controls, {}, home)
    candidates = sorted(rated)
    for c in conditions:
        pathological, control = sources["pathological", c], sources["control", c]
        sets = [set(selection.said(pathological, s).values()) for s in candidates]
        sets += [set(selection.said(control, s).values()) for s in controls]
        common = set.intersection(*sets)
        if segmented:  # the recording's first words, in recording order
            first_said = sorted(selection.said(pathological, candidates[0]).items())
            position = {t: u for u, t in first_said[::-1]}
            ranked = sorted(common, key=lambda t: (position[t], t))
        else:  # the shortest, so the run stays short
            ranked = sorted(common, key=lambda t: (len(t), t))
        selection.shared[c] = ranked[: N_TEXTS[c]]
        if not selection.shared[c]:
            raise ValueError(f"{corpus}/{task}/{c}: no text every chosen speaker says")
    selection.chosen = spread({s: rated[s] for s in candidates}, N_PATHOLOGICAL)
    return selection


def cut_task(pool: Pool, root: Path, corpus: str, task: str, conditions: list[str]) -> list[Plan]:
    """The plans of one real corpus task in every condition, pathological and control: the
    utterances of its :func:`select`, each speaker with one voice in every condition."""
    selection = select(KALDI_METADATA, corpus, task, conditions)
    chosen, controls, rated = selection.chosen, selection.controls, selection.rated
    espeak_voice = ESPEAK_VOICES[corpus]
    genders = selection.sources["pathological", conditions[0]].tables.get("spk2gender", {})
    control_genders = selection.sources["control", conditions[0]].tables.get("spk2gender", {})
    low, high = min(rated[s] for s in chosen), max(rated[s] for s in chosen)
    voices = {
        s: voice_for(espeak_voice, genders.get(s, ""), k, _severity(rated[s], low, high))
        for k, s in enumerate(chosen)
    }
    voices |= {
        s: voice_for(espeak_voice, control_genders.get(s, ""), k + len(chosen), 0.0)
        for k, s in enumerate(controls)
    }
    plans = []
    for (split, c), source in selection.sources.items():
        utts = selection.kept(split, c, chosen if split == "pathological" else controls)
        plans.append(_plan(pool, root / corpus / split / task / c, source, utts, voices))
    return plans


def _plan(
    pool: Pool, folder: Path, source: Source, utts: Mapping[str, str], voices: Mapping[str, Voice]
) -> Plan:
    """A dataset of ``utts`` (id → text) cut from ``source``: every per-utterance and
    per-speaker file the source has, restricted to them, in the source's line order."""
    speakers = {source.utt2spk[u] for u in utts}
    files: dict[str, list[str]] = {}
    for name, table in source.tables.items():
        if name in ("wav.scp", "wav_hash.scp", "segments", "language"):
            continue
        keys = speakers if name.startswith("spk2") else set(utts)
        files[name] = [f"{k} {v}" for k, v in table.items() if k in keys]
    order = [u for u in source.utt2spk if u in utts]
    source_segments = source.tables.get("segments")
    if "spk2utt" in files:
        files["spk2utt"] = [
            f"{s} " + " ".join(u for u in order if source.utt2spk[u] == s)
            for s in source.tables["spk2utt"]
            if s in speakers
        ]
    if "spk2uttnum" in files:
        files["spk2uttnum"] = [
            f"{s} {sum(source.utt2spk[u] == s for u in utts)}"
            for s in source.tables["spk2uttnum"]
            if s in speakers
        ]
    files["language"] = list(source.tables["language"])
    recordings: dict[str, Recording] = {}
    segments: dict[str, str] = {}
    for utt in order:
        key = source.recording_of(utt)
        voice = voices[source.utt2spk[utt]]
        recording = pool.get(source.tables["wav.scp"][key], voice, segmented=bool(source_segments))
        recording.items[utt] = utts[utt]
        recordings[key] = recording
        if source_segments:
            segments[utt] = key
    return Plan(folder, files, recordings, segments, hashes="wav_hash.scp" in source.tables)


# ----------------------------------------------------------------------------- MDSC, YouTube
MDSC_COMMANDS = ("小度小度", "天猫精灵", "关灯")
"""Wake words and a device command, as MDSC's speakers read them (one command per number
block: utterances 0001-0005 are the first command, 0006-0010 the second, ...)."""
MDSC_PATHOLOGICAL = {
    "DF0002": ("f", "88.41"),
    "DF0005": ("f", "27.30"),
    "DF0009": ("f", "56.12"),
    "DF0012": ("f", "95.07"),
    "DM0001": ("m", "33.68"),
    "DM0006": ("m", "74.25"),
    "DM0014": ("m", "45.9"),
}
"""Speaker: (gender, score), invented in MDSC's format (a trailing zero is dropped)."""
MDSC_CONTROL = {"CF0005": "f", "CF0008": "f", "CM0003": "m", "CM0011": "m"}


def mdsc_plans(pool: Pool, root: Path) -> list[Plan]:
    """MDSC's shape: Mandarin commands, ``language`` ``zh``, ids ``<speaker>_<nnnn>``, a
    0-100 intelligibility score with two decimals and ``N/A`` for the controls; the balanced
    set has one reading of each command, the unbalanced one also the repetitions."""
    numbers = {"balanced": [(0, 1), (1, 6)], "unbalanced": [(0, 1), (0, 2), (1, 6)]}
    scores = {s: float(v) for s, (_, v) in MDSC_PATHOLOGICAL.items()}
    low, high = min(scores.values()), max(scores.values())
    plans = []
    for split, speakers in (("pathological", MDSC_PATHOLOGICAL), ("control", MDSC_CONTROL)):
        for condition, picks in numbers.items():
            files: dict[str, list[str]] = defaultdict(list)
            recordings: dict[str, Recording] = {}
            for k, spk in enumerate(speakers):
                gender = MDSC_PATHOLOGICAL[spk][0] if split == "pathological" else speakers[spk]
                severity = _severity(scores[spk], low, high) if spk in scores else 0.0
                offset = 0 if split == "pathological" else len(MDSC_PATHOLOGICAL)
                voice = voice_for("cmn", gender, k + offset, severity)
                folder = "Uncontrol/train" if split == "pathological" else "Control/test"
                for command, number in picks:
                    utt = f"{spk}_{number:04d}"
                    source = f"/datasets/myairbridge-MDSC/{folder}/wav/{spk}/{utt}.wav"
                    recordings[utt] = pool.get(source, voice)
                    recordings[utt].items[utt] = MDSC_COMMANDS[command]
                    files["text"].append(f"{utt} {MDSC_COMMANDS[command]}")
                    files["utt2spk"].append(f"{utt} {spk}")
                score = MDSC_PATHOLOGICAL[spk][1] if split == "pathological" else "N/A"
                files["spk2score"].append(f"{spk} {score}")
                files["spk2gender"].append(f"{spk} {gender}")
            files["language"] = ["zh"]
            folder_path = root / "mdsc" / split / "command" / condition
            plans.append(Plan(folder_path, dict(files), recordings))
    return plans


YOUTUBE_SPEAKERS = {
    "02": 3.15,
    "04": 4.38,
    "07": 3.92,
    "11": 2.21,
    "16": 4.71,
    "23": 2.64,
    "30": 1.87,
}
"""Speaker ids and 1-5 ratings, invented in YouTube's format (two digits, two decimals)."""
YOUTUBE_SENTENCES = (
    "I HAD THE OPERATION LAST MONTH AND THE SWELLING IS GOING DOWN",
    "EATING IS STILL HARD BUT I CAN DRINK SOUP NOW",
    "MY TONGUE FEELS DIFFERENT WHEN I SAY SOME WORDS",
    "THE DOCTORS SAID THE SCAN LOOKS CLEAR",
    "I WANTED TO SHARE HOW THE FIRST WEEK AT HOME WENT",
    "TALKING MAKES ME TIRED BY THE END OF THE DAY",
    "THANK YOU ALL FOR THE KIND MESSAGES",
    "TODAY I WILL SHOW YOU THE EXERCISES FROM MY THERAPIST",
    "IT HURTS A LITTLE WHEN I SWALLOW",
    "MY FAMILY HAS BEEN A GREAT HELP",
    "I CAN FINALLY SLEEP THROUGH THE NIGHT AGAIN",
    "THE NURSE CHANGES THE BANDAGE EVERY MORNING",
    "I TRY TO READ ALOUD FOR TEN MINUTES A DAY",
    "SOME SOUNDS ARE HARDER THAN OTHERS",
    "NEXT WEEK I GO BACK FOR A CHECK UP",
    "I AM GETTING STRONGER EVERY DAY",
)
"""Spontaneous-speech transcripts in YouTube's style (upper case, no punctuation), written for
this test; no two utterances say the same, so no recording has an ``all`` reference."""
UTTERANCES_PER_YOUTUBE_SPEAKER = (2, 3, 2, 3, 2, 2, 2)


def youtube_plan(pool: Pool, root: Path) -> Plan:
    """YouTube's shape: PathBench's ``datasets/youtube`` holds the Kaldi files itself, has no
    ``spk2gender`` and no control set, rates every utterance (``utt2score``) as well as every
    speaker, ids are ``10<speaker><nnnn>``, and ``language`` has no final newline."""
    files: dict[str, list[str]] = defaultdict(list)
    recordings: dict[str, Recording] = {}
    ratings = list(YOUTUBE_SPEAKERS.values())
    low, high = min(ratings), max(ratings)
    rng = np.random.default_rng(20260101)
    sentences = iter(YOUTUBE_SENTENCES)
    for k, (spk, rating) in enumerate(YOUTUBE_SPEAKERS.items()):
        voice = voice_for("en-us", "", k, _severity(rating, low, high))
        for n in range(UTTERANCES_PER_YOUTUBE_SPEAKER[k]):
            utt = f"10{spk}{4 * n + k + 1:04d}"
            text = next(sentences)
            source = f"/data/spon_youtube_clean/transcription_subset/{utt}.wav"
            recordings[utt] = pool.get(source, voice)
            recordings[utt].items[utt] = text
            files["text"].append(f"{utt} {text}")
            files["utt2spk"].append(f"{utt} {spk}")
            rated = float(np.clip(rating + rng.normal(0.0, 0.25), 1.0, 5.0))
            files["utt2score"].append(f"{utt} {rated!r}")
        files["spk2score"].append(f"{spk} {rating:.2f}")
    files["language"] = ["en"]
    return Plan(root / "youtube", dict(files), recordings, language_newline=False)


# ----------------------------------------------------------------------------- writing
def write_plan(plan: Plan) -> None:
    """The dataset's Kaldi files; wav.scp holds absolute paths, as the published files do."""
    plan.folder.mkdir(parents=True, exist_ok=True)
    files = dict(plan.files)
    files["wav.scp"] = [f"{k} {r.path}" for k, r in plan.recordings.items()]
    if plan.hashes:
        files["wav_hash.scp"] = [
            f"{k} {hashlib.sha256(r.path.read_bytes()).hexdigest()}"
            for k, r in plan.recordings.items()
        ]
    if plan.segments:
        files["segments"] = [
            f"{utt} {key} {start:.3f} {end:.3f}"
            for utt, key in plan.segments.items()
            for start, end in [plan.recordings[key].spans[utt]]
        ]
    for name, lines in files.items():
        text = "".join(f"{line}\n" for line in lines)
        if name == "language" and not plan.language_newline:
            text = text.rstrip("\n")
        (plan.folder / name).write_text(text, encoding="utf-8")


def corpus_tasks() -> dict[tuple[str, str], list[str]]:
    """The columns cut from the real metadata: (corpus, task) → its conditions, in order."""
    tasks: dict[tuple[str, str], list[str]] = defaultdict(list)
    for column in COLUMNS:
        if column.corpus not in ("mdsc", "youtube"):
            tasks[column.corpus, column.task].append(column.condition)
    return dict(tasks)


@dataclass(frozen=True)
class Built:
    """What a build wrote: the config's ``datasets`` and the number of files and seconds."""

    datasets: dict[str, dict[str, str]]
    n_recordings: int
    seconds: float


def build(workdir: Path, datasets: str = "datasets") -> Built:
    """Every column's dataset under ``workdir/datasets`` (and audio under ``workdir/audio``);
    config entries with paths relative to ``workdir``, each with its condition's control set
    as ``reference`` where the corpus has one."""
    root = workdir / datasets
    pool = Pool(workdir / "audio")
    plans: list[Plan] = []
    for (corpus, task), conditions in corpus_tasks().items():
        plans += cut_task(pool, root, corpus, task, conditions)
    plans += [*mdsc_plans(pool, root), youtube_plan(pool, root)]
    pool.synthesise()
    for plan in plans:
        write_plan(plan)
    entries = {}
    for column in COLUMNS:
        entry = {"path": str(Path(datasets) / column.split("pathological"))}
        control = column.split("control")
        if column.task and (root / control).is_dir():
            entry["reference"] = str(Path(datasets) / control)
        entries[column.name] = entry
    seconds = sum(sf.info(p).duration for p in pool.recordings)
    return Built(entries, len(pool.recordings), seconds)
