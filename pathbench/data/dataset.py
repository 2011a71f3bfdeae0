"""Kaldi-style dataset directories: loading, validation and reference matching.

A dataset is checked completely before any scoring starts. Every defect becomes a
:class:`~pathbench.data.kaldi.Finding` naming file, line, value and fix; with
``on_error="fail"`` any error stops the run listing all of them, with ``on_error="drop"`` only
the utterances a defect touches are removed, and each removal is listed. Nothing disappears
silently.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import soundfile as sf

from pathbench import SAMPLE_RATE
from pathbench.data.kaldi import Finding, Table, read_lines, read_table
from pathbench.data.references import (
    REFERENCE_TYPES,
    Recording,
    ReferenceAudio,
    TextIndex,
    index_by_text,
    select_references,
    shared_recordings,
)
from pathbench.data.wavcheck import wav_truncation
from pathbench.text import clean_text

REQUIRED_FILES = ("wav.scp", "text", "utt2spk", "spk2score", "language")
"""``spk2gender`` is optional: PathBench's YouTube set has none (see :meth:`Dataset._genders`)."""
LANGUAGES = ("en", "nl", "it", "es", "cmn")
LANGUAGE_ALIASES = {"zh": "cmn"}
GENDERS = ("m", "f")
SEGMENT_TOLERANCE_S = 0.05
SILENCE_PEAK = 1.0 / 32768.0
"""A file whose peak never exceeds one 16-bit step holds no signal at all."""
CONSTANT_SPREAD = 1.0 / 32768.0
"""Audio whose standard deviation stays below one 16-bit step is a constant (DC), not speech."""
OVERLAP_EXAMPLES = 5
"""How many shared test/reference recordings a finding names before summarising the rest."""


def _parse_score(raw: str) -> float | None:
    """A finite float, NaN for ``N/A`` (unrated speakers, e.g. controls), None if invalid."""
    if raw == "N/A":
        return math.nan
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _users(spans: dict[str, _Span | None]) -> dict[str, list[str]]:
    """The utterances of each recording."""
    users: dict[str, list[str]] = {}
    for utt, span in spans.items():
        if span is not None:
            users.setdefault(span.recording, []).append(utt)
    return users


def reference_overlap(
    test_path: Path,
    test: Iterable[Recording],
    test_hashes: Mapping[str, str],
    reference_path: Path,
    reference: Iterable[Recording],
    reference_hashes: Mapping[str, str],
    affected: str,
) -> list[Finding]:
    """Findings naming both datasets when the reference dataset is, or shares recordings
    with, the test dataset.

    A reference dataset that is the test dataset is fatal. A shared recording with the same
    cleaned text would be its own reference: an error listing the shared utterances of the
    ``affected`` side ("test" or "reference", the dataset being validated), so ``on_error:
    drop`` removes them there and ``fail`` refuses. The same audio under different
    transcriptions is never matched as a reference but is a labelling defect: a warning.
    EasyCall's metadata has both (byte-identical files under several speakers and words).
    """
    fix = (
        "use a reference dataset of other recordings (e.g. the control speakers), "
        "or remove the shared recordings from one of the two"
    )
    if test_path.resolve() == reference_path.resolve():
        problem = (
            f"reference dataset {reference_path} is the test dataset {test_path}: "
            "every utterance would be scored against itself"
        )
        return [Finding(str(reference_path), 0, "", problem, fix)]
    pairs = shared_recordings(test, reference, test_hashes, reference_hashes)
    same_text = [(t.utt_id, r.utt_id) for t, r in pairs if t.text_clean == r.text_clean]
    other_text = [(t.utt_id, r.utt_id) for t, r in pairs if t.text_clean != r.text_clean]
    side = 0 if affected == "test" else 1
    shared = (
        f"reference dataset {reference_path} shares {{}} recording(s) with test dataset "
        f"{test_path} (same audio file and time, or same wav_hash.scp digest)"
    )
    findings = []
    if same_text:
        findings.append(
            Finding(
                str(reference_path),
                0,
                _examples(same_text),
                shared.format(len(same_text))
                + " with the same text: they would be scored against themselves",
                fix,
                utterances=tuple(sorted({pair[side] for pair in same_text})),
            )
        )
    if other_text:
        findings.append(
            Finding(
                str(reference_path),
                0,
                _examples(other_text),
                shared.format(len(other_text)) + " under different transcriptions",
                "check which transcription the audio holds; fix or remove the duplicate",
                severity="warning",
            )
        )
    return findings


def _examples(pairs: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"{test} = {ref}" for test, ref in pairs[:OVERLAP_EXAMPLES])
    rest = len(pairs) - OVERLAP_EXAMPLES
    return shown + (f" and {rest} more" if rest > 0 else "")


def read_hashes(directory: Path) -> dict[str, str]:
    """Recording id -> SHA-256 from ``wav_hash.scp``, empty when the file is absent.

    Used to compare recordings across datasets; malformed lines were already reported by the
    validation of ``directory`` itself and are skipped here.
    """
    file = Path(directory) / "wav_hash.scp"
    return _digests(read_table(file, [], n_fields=1)) if file.is_file() else {}


def _digests(table: Table | None) -> dict[str, str]:
    return {key: e.fields[0].lower() for key, e in table.entries.items()} if table else {}


class DatasetError(Exception):
    """A dataset that cannot be used; carries every finding so users fix all in one pass."""

    def __init__(self, path: Path, findings: list[Finding]) -> None:
        errors = [f for f in findings if f.severity == "error"]
        lines = "\n".join(f"  - {finding}" for finding in errors)
        super().__init__(f"dataset {path} has {len(errors)} problem(s):\n{lines}")
        self.findings = findings


@dataclass(frozen=True)
class Utterance:
    """One validated utterance; ``end = -1.0`` means "to the end of the file"."""

    utt_id: str
    speaker_id: str
    recording_id: str
    group_id: str
    audio_path: str
    start: float
    end: float
    text: str
    text_clean: str
    gender: str
    language: str
    score: float
    duration_s: float
    sample_rate: int
    channels: int


@dataclass(frozen=True)
class _AudioFacts:
    duration_s: float
    sample_rate: int
    channels: int


class _Span(NamedTuple):
    """Where an utterance lies: ``end = -1`` runs to the end of the file; ``line`` is its
    segments line (0 when unsegmented); ``channel`` the optional Kaldi channel field."""

    recording: str
    start: float
    end: float
    line: int
    channel: int | None = None


class Dataset:
    """A validated Kaldi directory.

    Iterating yields ``(utt_id, audio_path, transcription, ref_audio_list, start, end)`` in
    utt_id order, where ``ref_audio_list`` holds the references of ``reference_type``.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        reference: Dataset | None = None,
        reference_type: str = "control",
        check_audio: bool = True,
        verify_hashes: bool = False,
        on_error: str = "fail",
    ) -> None:
        if on_error not in ("fail", "drop"):
            raise ValueError(f"on_error must be 'fail' or 'drop', not {on_error!r}")
        if reference_type not in REFERENCE_TYPES:
            raise ValueError(f"reference_type must be one of {REFERENCE_TYPES}")
        self.path = Path(path)
        self.reference = reference
        self.reference_type = reference_type
        self.on_error = on_error
        self.findings: list[Finding] = []
        self.dropped: list[str] = []
        self.utterances: dict[str, Utterance] = {}
        self.language = ""
        self.speaker_scores: dict[str, float] = {}
        self.speaker_genders: dict[str, str] = {}
        self.recording_hashes: dict[str, str] = {}
        self._load(check_audio=check_audio, verify_hashes=verify_hashes)
        if reference is not None:
            self._check_reference(reference)
        self._apply_policy(on_error)
        self._by_text: TextIndex | None = None

    # ----------------------------------------------------------------- loading
    def _load(self, *, check_audio: bool, verify_hashes: bool) -> None:
        missing = [name for name in REQUIRED_FILES if not (self.path / name).is_file()]
        for name in missing:
            self.findings.append(
                Finding(
                    str(self.path / name),
                    0,
                    "",
                    "required file is missing",
                    f"add {name}; required files: {', '.join(REQUIRED_FILES)}",
                )
            )
        if missing:
            return
        f = self.findings
        wav = read_table(self.path / "wav.scp", f, n_fields=None, rest_joined=True)
        text = read_table(self.path / "text", f, n_fields=None, rest_joined=True)
        utt2spk = read_table(self.path / "utt2spk", f, n_fields=1)
        spk2score = read_table(self.path / "spk2score", f, n_fields=1)
        spk2gender = self._optional("spk2gender", n_fields=1)
        segments = self._optional("segments", n_fields=3, optional_fields=1)
        utt2group = self._optional("utt2group", n_fields=1)
        hashes = self._optional("wav_hash.scp", n_fields=1)
        self.language = self._read_language()
        self.speaker_scores = self._read_scores(spk2score, utt2spk)
        self.speaker_genders = self._genders(spk2gender, utt2spk)
        self.recording_hashes = _digests(hashes)
        spans = self._spans(wav, utt2spk, segments)
        audio = self._check_recordings(wav, spans, check_audio, hashes if verify_hashes else None)
        self._check_sample_rates(wav, spans, audio)
        self._check_speakers(utt2spk, spk2score, spk2gender)
        self._build(utt2spk, text, wav, spans, utt2group, audio)

    def _optional(self, name: str, *, n_fields: int, optional_fields: int = 0) -> Table | None:
        file = self.path / name
        if not file.is_file():
            return None
        return read_table(file, self.findings, n_fields=n_fields, optional_fields=optional_fields)

    def _error(
        self,
        table: Table | Path,
        line: int,
        value: str,
        problem: str,
        fix: str,
        utterances: tuple[str, ...] = (),
        severity: str = "error",
    ) -> None:
        path = table.path if isinstance(table, Table) else table
        self.findings.append(Finding(str(path), line, value, problem, fix, severity, utterances))

    def _read_language(self) -> str:
        file = self.path / "language"
        lines = [ln.strip() for _n, ln in read_lines(file, self.findings) if ln.strip()]
        code = LANGUAGE_ALIASES.get(lines[0].lower(), lines[0].lower()) if lines else ""
        if len(lines) != 1 or code not in LANGUAGES:
            self._error(
                file,
                1,
                " ".join(lines),
                "unknown or missing language code",
                f"write one line with one of {', '.join(LANGUAGES)} (zh is read as cmn)",
            )
            return ""
        return code

    def _utts_of(self, utt2spk: Table) -> dict[str, list[str]]:
        by_speaker: dict[str, list[str]] = {}
        for utt, entry in utt2spk.entries.items():
            by_speaker.setdefault(entry.fields[0], []).append(utt)
        return by_speaker

    def _read_speaker_values(
        self,
        table: Table,
        utt2spk: Table,
        parse: Callable[[str], object | None],
        problem: str,
        fix: str,
    ) -> dict[str, Any]:
        """Per-speaker values of ``table``; a value ``parse`` rejects (None) becomes a finding
        that invalidates that speaker's utterances."""
        by_speaker = self._utts_of(utt2spk)
        values: dict[str, Any] = {}
        for spk, entry in table.entries.items():
            value = parse(entry.fields[0])
            if value is None:
                self._error(
                    table, entry.line, entry.fields[0], problem, fix, tuple(by_speaker.get(spk, ()))
                )
            else:
                values[spk] = value
        return values

    def _read_scores(self, spk2score: Table, utt2spk: Table) -> dict[str, float]:
        return self._read_speaker_values(
            spk2score,
            utt2spk,
            _parse_score,
            "score is neither a finite number nor N/A",
            "write a number, or N/A for speakers without a rating",
        )

    def _genders(self, spk2gender: Table | None, utt2spk: Table) -> dict[str, str]:
        """Speaker genders; without spk2gender every gender is unknown (empty in the
        manifest), which is a warning, not an error: such speakers are still scored,
        gender-dependent measures estimate gender from F0 and ``control`` references, which
        need a matching gender, stay empty for the reason this warning records."""
        if spk2gender is None:
            self._error(
                self.path / "spk2gender",
                0,
                "",
                "no spk2gender: every speaker's gender is unknown, so no utterance gets "
                "'control' references and gender-dependent measures estimate gender from F0",
                "add spk2gender ('<speaker> m' or '<speaker> f') to get control references",
                severity="warning",
            )
            return {}
        return self._read_speaker_values(
            spk2gender,
            utt2spk,
            lambda raw: raw if raw in GENDERS else None,
            "gender is not m or f",
            "write m or f",
        )

    def _spans(self, wav: Table, utt2spk: Table, segments: Table | None) -> dict[str, _Span | None]:
        """Map each utterance to its :class:`_Span`.

        Segments follow Kaldi's ``extract-segments``: ``<utt> <recording> <start> <end>
        [<channel>]``, where an end of -1 runs to the end of the file. A malformed segment maps
        to ``None``: it was reported here and must not be reported again as a missing segment.
        """
        spans: dict[str, _Span | None] = {}
        if segments is None:
            return {utt: _Span(utt, 0.0, -1.0, 0) for utt in utt2spk.entries}
        for utt, entry in segments.entries.items():
            spans[utt] = self._segment(wav, segments, utt, entry.line, entry.fields)
        return spans

    def _segment(
        self, wav: Table, segments: Table, utt: str, line: int, fields: tuple[str, ...]
    ) -> _Span | None:
        rec, start_raw, end_raw, *channel_raw = fields
        times = f"{start_raw} {end_raw}"
        try:
            start, end = float(start_raw), float(end_raw)
        except ValueError:
            start = end = math.nan
        problem, fix, value = "", "", times
        if not (math.isfinite(start) and math.isfinite(end)):
            problem, fix = "segment times are not numbers", "write start and end in seconds"
        elif rec not in wav.entries:
            problem, value = "segment names a recording not in wav.scp", rec
            fix = "add the recording to wav.scp or fix the recording id"
        elif start < 0 or (end < 0 and end != -1.0):
            problem = "negative segment time"
            fix = "times are seconds from the file start; an end of -1 means the end of the file"
        elif end != -1.0 and start >= end:
            problem, fix = "segment start is not before its end", "swap or correct the times"
        elif channel_raw and not (channel_raw[0].isdigit() and channel_raw[0].isascii()):
            problem, value = "segment channel is not a channel number", channel_raw[0]
            fix = "write the 0-based channel number or leave the field out"
        if problem:
            self._error(segments, line, value, problem, fix, (utt,))
            return None
        return _Span(rec, start, end, line, int(channel_raw[0]) if channel_raw else None)

    def _resolve(self, location: str) -> Path:
        path = Path(location)
        return path if path.is_absolute() else self.path / path

    def _check_recordings(
        self,
        wav: Table,
        spans: dict[str, _Span | None],
        check_audio: bool,
        hashes: Table | None,
    ) -> dict[str, _AudioFacts]:
        users = _users(spans)
        facts: dict[str, _AudioFacts] = {}
        for rec, entry in wav.entries.items():
            location = entry.fields[0]
            affected = tuple(sorted(users.get(rec, ())))
            if location.endswith("|"):
                self._error(
                    wav,
                    entry.line,
                    location,
                    "wav.scp entry is a pipe command; pathbench never executes commands",
                    "convert the audio to a file first and list its path",
                    affected,
                )
                continue
            if not location:
                self._error(wav, entry.line, rec, "no audio path", "write '<id> <path>'", affected)
                continue
            if check_audio:
                checked = self._check_audio_file(
                    wav, entry.line, rec, location, affected, spans, users.get(rec, []), hashes
                )
                if checked is not None:
                    facts[rec] = checked
        return facts

    def _check_audio_file(
        self,
        wav: Table,
        line: int,
        rec: str,
        location: str,
        affected: tuple[str, ...],
        spans: dict[str, _Span | None],
        utts: list[str],
        hashes: Table | None,
    ) -> _AudioFacts | None:
        path = self._resolve(location)
        if not path.is_file():
            self._error(
                wav,
                line,
                location,
                "audio file is missing",
                "fix the path (relative paths resolve against the dataset directory)",
                affected,
            )
            return None
        try:
            data, rate = sf.read(str(path), dtype="float32", always_2d=True)
        except (sf.LibsndfileError, RuntimeError) as exc:
            self._error(
                wav,
                line,
                location,
                f"audio file is unreadable ({exc})",
                "convert it to WAV/FLAC",
                affected,
            )
            return None
        if data.shape[0] == 0:
            self._error(
                wav, line, location, "audio file is empty", "replace the recording", affected
            )
            return None
        truncation = wav_truncation(path)
        if truncation is not None:
            declared_s, held_s = truncation
            self._error(
                wav,
                line,
                location,
                f"audio file is truncated: its header declares {declared_s:.3f} s of audio, "
                f"the file holds {held_s:.3f} s",
                "copy or export the recording again (an interrupted copy or recording)",
                affected,
            )
            return None
        if hashes is not None:
            self._check_hash(hashes, rec, path, affected)
        facts = _AudioFacts(data.shape[0] / rate, int(rate), int(data.shape[1]))
        for utt in utts:
            self._check_span(wav.path, line, utt, spans[utt], data, facts)
        return facts

    def _check_span(
        self,
        wav_path: Path,
        wav_line: int,
        utt: str,
        span: _Span,
        data: np.ndarray,
        facts: _AudioFacts,
    ) -> None:
        """The utterance's part of the recording exists, is addressable and holds a signal."""
        segments = self.path / "segments"
        where = (segments, span.line) if span.line else (wav_path, wav_line)
        if span.end > facts.duration_s + SEGMENT_TOLERANCE_S:
            self._error(
                segments,
                span.line,
                f"{span.end}",
                f"segment ends after the audio ({facts.duration_s:.3f} s)",
                "correct the end time or the recording",
                (utt,),
            )
            return
        if span.start >= facts.duration_s:
            self._error(
                segments,
                span.line,
                f"{span.start}",
                f"segment starts after the audio ends ({facts.duration_s:.3f} s)",
                "correct the start time or the recording",
                (utt,),
            )
            return
        if span.channel is not None and (facts.channels > 1 or span.channel >= facts.channels):
            problem = (
                f"segment selects channel {span.channel} of a {facts.channels}-channel recording; "
                + (
                    "pathbench averages all channels and cannot select one"
                    if span.channel < facts.channels
                    else "no such channel"
                )
            )
            self._error(
                segments,
                span.line,
                str(span.channel),
                problem,
                "extract the channel to its own mono file and list that in wav.scp",
                (utt,),
            )
            return
        rate = facts.sample_rate
        stop = data.shape[0] if span.end < 0 else int(round(span.end * rate))
        region = data[int(round(span.start * rate)) : stop]
        if region.size == 0 or np.abs(region).max() <= SILENCE_PEAK:
            self._error(
                *where,
                utt,
                "audio holds only silence",
                "check the recording or the segment times",
                (utt,),
            )
        elif region.std(axis=0).max() < CONSTANT_SPREAD:
            self._error(
                *where,
                utt,
                f"audio holds no signal, only the constant value {float(region.mean()):.4f} "
                "(DC offset)",
                "check the recording (a disconnected microphone or a broken conversion)",
                (utt,),
            )

    def _check_sample_rates(
        self, wav: Table, spans: dict[str, _Span | None], audio: dict[str, _AudioFacts]
    ) -> None:
        """Name recordings whose bandwidth differs from the rest of the dataset.

        Every stage resamples to :data:`~pathbench.SAMPLE_RATE`, so what matters is the rate
        after that, ``min(rate, SAMPLE_RATE)``: 44.1 and 48 kHz both become full-band 16 kHz
        audio, while an 8 kHz file among 16 kHz ones is upsampled with nothing above 4 kHz,
        which shifts spectral measures (CPP by +65% in issue 12). The dataset's most common
        rate (the higher on a tie) is the norm; recordings at another one are errors. A
        dataset entirely below ``SAMPLE_RATE`` is consistent and only gets a warning.
        """
        effective = {rec: min(f.sample_rate, SAMPLE_RATE) for rec, f in audio.items()}
        counts = Counter(effective.values())
        if not counts:
            return
        norm = max(counts, key=lambda rate: (counts[rate], rate))
        users = _users(spans)
        for rec, rate in sorted(effective.items(), key=lambda item: wav.entries[item[0]].line):
            if rate != norm:
                self._error(
                    wav,
                    wav.entries[rec].line,
                    rec,
                    f"sample rate {audio[rec].sample_rate} Hz differs from the dataset's "
                    f"{norm} Hz (as resampled to {SAMPLE_RATE} Hz): its bandwidth differs "
                    "from the other recordings' and biases spectral measures",
                    "resample every recording to one rate, or put these in their own dataset",
                    tuple(sorted(users.get(rec, ()))),
                )
        if len(counts) == 1 and norm < SAMPLE_RATE:
            self._error(
                wav,
                0,
                f"{norm} Hz",
                f"every recording is sampled at {norm} Hz: upsampled to {SAMPLE_RATE} Hz, "
                f"nothing above {norm // 2} Hz, so values are not comparable with "
                f"{SAMPLE_RATE} Hz datasets",
                "compare only with datasets of the same rate",
                severity="warning",
            )

    def _check_hash(self, hashes: Table, rec: str, path: Path, affected: tuple[str, ...]) -> None:
        entry = hashes.get(rec)
        if entry is None:
            self._error(hashes, 0, rec, "no hash for this recording", "add its SHA-256", affected)
            return
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != entry.fields[0].lower():
            self._error(
                hashes,
                entry.line,
                entry.fields[0],
                f"SHA-256 of {path} is {digest}",
                "the audio changed: restore it or update the hash",
                affected,
            )

    def _check_speakers(self, utt2spk: Table, spk2score: Table, spk2gender: Table | None) -> None:
        """Every speaker needs a spk2score line (N/A allowed); a missing gender only warns,
        because such a speaker is still scored, it just gets no control references (a missing
        spk2gender file was reported once by :meth:`_genders`)."""
        by_speaker = self._utts_of(utt2spk)
        for spk, utts in sorted(by_speaker.items()):
            line = utt2spk.entries[utts[0]].line
            if spk not in spk2score.entries:
                self._error(
                    utt2spk,
                    line,
                    spk,
                    "speaker has no line in spk2score",
                    "add '<speaker> <score>' or '<speaker> N/A'",
                    tuple(sorted(utts)),
                )
            if spk2gender is not None and spk not in spk2gender.entries:
                self._error(
                    utt2spk,
                    line,
                    spk,
                    "speaker has no line in spk2gender",
                    "add '<speaker> m' or '<speaker> f' to get control references",
                    severity="warning",
                )
        for spk, entry in spk2score.entries.items():
            if spk not in by_speaker:
                self._error(
                    spk2score,
                    entry.line,
                    spk,
                    "speaker has no utterance in utt2spk",
                    "remove the speaker or add its utterances",
                    severity="warning",
                )

    def _build(
        self,
        utt2spk: Table,
        text: Table,
        wav: Table,
        spans: dict[str, _Span | None],
        utt2group: Table | None,
        audio: dict[str, _AudioFacts],
    ) -> None:
        has_segments = (self.path / "segments").is_file()
        keyed = set(utt2spk.entries) | set(text.entries)
        keyed |= set(spans) if has_segments else set(wav.entries)
        for utt in sorted(keyed):
            built = self._build_one(utt, utt2spk, text, wav, spans, utt2group, audio)
            if built is not None:
                self.utterances[utt] = built

    def _build_one(
        self,
        utt: str,
        utt2spk: Table,
        text: Table,
        wav: Table,
        spans: dict[str, _Span | None],
        utt2group: Table | None,
        audio: dict[str, _AudioFacts],
    ) -> Utterance | None:
        spk_entry, text_entry = utt2spk.get(utt), text.get(utt)
        if spk_entry is None:
            where = text_entry or wav.get(utt)
            self._error(
                utt2spk,
                0,
                utt,
                f"utterance has no speaker (listed in "
                f"{'text' if text_entry else 'wav.scp/segments'}"
                f"{f' line {where.line}' if where else ''})",
                "add '<utt> <speaker>' to utt2spk",
                (utt,),
            )
            return None
        if text_entry is None:
            self._error(
                text, 0, utt, "utterance has no transcription", "add '<utt> <text>' to text", (utt,)
            )
            return None
        if utt in spans and spans[utt] is None:
            return None
        span = spans.get(utt)
        if span is None:
            if (self.path / "segments").is_file():
                self._error(
                    self.path / "segments",
                    0,
                    utt,
                    "utterance has no segment",
                    "add '<utt> <recording> <start> <end>'",
                    (utt,),
                )
            elif utt not in wav.entries:
                self._error(wav, 0, utt, "utterance has no audio", "add it to wav.scp", (utt,))
            return None
        rec, start, end = span.recording, span.start, span.end
        if rec not in wav.entries:
            self._error(wav, 0, rec, "utterance has no audio", "add it to wav.scp", (utt,))
            return None
        cleaned = clean_text(text_entry.fields[0])
        if not cleaned:
            self._error(
                text,
                text_entry.line,
                text_entry.fields[0],
                "transcription is empty after cleaning",
                "write the words that were spoken",
                (utt,),
            )
        speaker = spk_entry.fields[0]
        facts = audio.get(rec)
        group = utt2group.get(utt) if utt2group else None
        if utt2group is not None and group is None:
            self._error(
                utt2group,
                0,
                utt,
                "utterance has no group",
                "add '<utt> <group>' to utt2group",
                (utt,),
            )
        if facts is not None:
            duration = (facts.duration_s if end < 0 else end) - start
        else:
            duration = math.nan if end < 0 else end - start
        return Utterance(
            utt_id=utt,
            speaker_id=speaker,
            recording_id=rec,
            group_id=group.fields[0] if group else rec,
            audio_path=str(self._resolve(wav.entries[rec].fields[0])),
            start=start,
            end=end,
            text=text_entry.fields[0],
            text_clean=cleaned,
            gender=self.speaker_genders.get(speaker, ""),
            language=self.language,
            score=self.speaker_scores.get(speaker, math.nan),
            duration_s=duration,
            sample_rate=facts.sample_rate if facts else 0,
            channels=facts.channels if facts else 0,
        )

    def add_findings(self, findings: list[Finding]) -> None:
        """Add findings made outside this dataset's own files (against its test set) and
        apply ``on_error`` again: raise, or drop the utterances they touch."""
        self.findings += findings
        self._apply_policy(self.on_error)

    def _apply_policy(self, on_error: str) -> None:
        errors = [f for f in self.findings if f.severity == "error"]
        fatal = [f for f in errors if not f.utterances]
        if errors and (on_error == "fail" or fatal):
            raise DatasetError(self.path, self.findings)
        bad = sorted({utt for f in errors for utt in f.utterances})
        for utt in bad:
            self.utterances.pop(utt, None)
        self.dropped = bad
        if not self.utterances:
            self._error(
                self.path,
                0,
                "",
                f"no utterance left: all {len(bad)} were dropped by on_error: drop"
                if bad
                else "dataset has no utterances (utt2spk, text and wav.scp list none)",
                "fix the findings above" if bad else "add utterances or remove the dataset",
            )
            raise DatasetError(self.path, self.findings)

    def _check_reference(self, reference: Dataset) -> None:
        """Refuse a reference dataset that shares recordings with this one: its utterances
        would be scored against themselves (P-ESTOI 0.995 in issue 12)."""
        self.findings += reference_overlap(
            self.path,
            self.utterances.values(),
            self.recording_hashes,
            reference.path,
            reference.utterances.values(),
            reference.recording_hashes,
            affected="test",
        )

    # ----------------------------------------------------------------- access
    def __len__(self) -> int:
        return len(self.utterances)

    def __iter__(self) -> Iterator[tuple[str, str, str, list[ReferenceAudio], float, float]]:
        for utt in self.utterances.values():
            refs = self.references(utt.utt_id, self.reference_type)
            yield utt.utt_id, utt.audio_path, utt.text, refs, utt.start, utt.end

    def references(self, utt_id: str, kind: str) -> list[ReferenceAudio]:
        """References of ``utt_id``: see :func:`pathbench.data.references.select_references`."""
        reference = self.reference._index() if self.reference is not None else {}
        return select_references(self.utterances[utt_id], self._index(), reference, kind)

    def _index(self) -> TextIndex:
        if self._by_text is None:
            self._by_text = index_by_text(self.utterances.values())
        return self._by_text

    def to_frame(self) -> pd.DataFrame:
        """The manifest rows, one per utterance in utt_id order."""
        columns = list(Utterance.__dataclass_fields__)
        return pd.DataFrame([asdict(u) for u in self.utterances.values()], columns=columns)
