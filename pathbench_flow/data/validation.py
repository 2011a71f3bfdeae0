"""Validation of a Kaldi-style dataset directory: every defect becomes a finding.

A dataset is checked completely before any scoring starts. Every defect becomes a
:class:`~pathbench_flow.data.kaldi.Finding` naming file, line, value and fix; with
``on_error="fail"`` any error stops the run listing all of them, with ``on_error="drop"`` only
the utterances a defect touches are removed, and each removal is listed. Nothing disappears
silently. The checks of the audio itself are in :mod:`pathbench_flow.data.recording_checks`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pathbench_flow.common.languages import LANGUAGES, canonical_language
from pathbench_flow.common.staging import is_present
from pathbench_flow.common.transcripts import clean_text
from pathbench_flow.data.kaldi import (
    Finding,
    FindingLog,
    Table,
    parse_score,
    read_lines,
    read_table,
)
from pathbench_flow.data.overlap import digests
from pathbench_flow.data.recording_checks import RecordingChecks, Span, resolve
from pathbench_flow.data.recording_file import AudioFacts

REQUIRED_FILES = ("wav.scp", "text", "utt2spk", "spk2score", "language")
"""``spk2gender`` is optional: PathBench's YouTube set has none (see
:meth:`_Validation._genders`)."""
GENDERS = ("m", "f")
ON_ERROR = ("fail", "drop")
MAX_UTTERANCE_S = 600.0
"""The longest utterance accepted by default (``validation.max_utterance_s``). Every measure
is made for one word or sentence, and every job's declared memory
(``RESOURCES``, workflow/rules/settings.smk) is measured for utterances up to this length
(benchmarks/README.md, "Long recordings"); a whole session listed as one utterance is a
different input, refused before it is scored as a sentence."""


class DatasetError(Exception):
    """A dataset that cannot be used; carries every finding so users fix all in one pass."""

    def __init__(self, path: Path, findings: list[Finding]) -> None:
        errors = [f for f in findings if f.severity == "error"]
        lines = "\n".join(f"  - {finding}" for finding in errors)
        super().__init__(f"dataset {path} has {len(errors)} problem(s):\n{lines}")
        self.findings = findings


@dataclass(frozen=True)
class Utterance:
    """One validated utterance; ``end = -1.0`` means "to the end of the file".

    ``audio_sha256`` is the SHA-256 of the recording file's bytes as validation read them
    (empty without audio checks): it finds byte-identical copies shared with a reference set.
    """

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
    audio_sha256: str


@dataclass
class Validated:
    """What validating a directory found: its utterances (those without defects, before
    ``on_error`` is applied), the dataset-wide facts and every finding."""

    findings: list[Finding] = field(default_factory=list)
    utterances: dict[str, Utterance] = field(default_factory=dict)
    language: str = ""
    speaker_scores: dict[str, float] = field(default_factory=dict)
    speaker_genders: dict[str, str] = field(default_factory=dict)
    recording_hashes: dict[str, str] = field(default_factory=dict)


def validate_directory(
    path: Path,
    *,
    check_audio: bool,
    verify_hashes: bool,
    lossy_audio: str = "warn",
    max_utterance_s: float = MAX_UTTERANCE_S,
) -> Validated:
    """Check every file of the dataset in ``path``; never raises for a defect of the data."""
    validation = _Validation(path, max_utterance_s)
    validation.load(check_audio=check_audio, verify_hashes=verify_hashes, lossy_audio=lossy_audio)
    return validation.result


def apply_on_error(
    path: Path, findings: list[Finding], utterances: dict[str, Utterance], on_error: str
) -> list[str]:
    """Apply ``on_error`` to the errors among ``findings``: raise :class:`DatasetError`, or
    remove the utterances they touch from ``utterances`` and return those ids.

    An error that touches no utterance, or a dataset left empty, is fatal either way.
    """
    errors = [f for f in findings if f.severity == "error"]
    fatal = [f for f in errors if not f.utterances]
    if errors and (on_error == "fail" or fatal):
        raise DatasetError(path, findings)
    bad = sorted({utt for f in errors for utt in f.utterances})
    for utt in bad:
        utterances.pop(utt, None)
    if not utterances:
        FindingLog(findings).error(
            path,
            0,
            "",
            f"no utterance left: all {len(bad)} were dropped by on_error: drop"
            if bad
            else "dataset has no utterances (utt2spk, text and wav.scp list none)",
            "fix the findings above" if bad else "add utterances or remove the dataset",
        )
        raise DatasetError(path, findings)
    return bad


class _UtteranceFiles(NamedTuple):
    """The parsed files every utterance is built from."""

    wav: Table
    text: Table
    utt2spk: Table
    utt2group: Table | None


class _Validation:
    """The checks of one directory's files, collecting findings and the facts they read."""

    def __init__(self, path: Path, max_utterance_s: float) -> None:
        self.path = path
        self.max_utterance_s = max_utterance_s
        self.result = Validated()
        self.log = FindingLog(self.result.findings)

    def load(self, *, check_audio: bool, verify_hashes: bool, lossy_audio: str) -> None:
        """Run every check; a missing required file stops here, as nothing else can be read."""
        missing = [name for name in REQUIRED_FILES if not is_present(self.path / name)]
        for name in missing:
            self.log.error(
                self.path / name,
                0,
                "",
                "required file is missing",
                f"add {name}; required files: {', '.join(REQUIRED_FILES)}",
            )
        if missing:
            return
        f = self.result.findings
        wav = read_table(self.path / "wav.scp", f, n_fields=None, rest_joined=True)
        text = read_table(self.path / "text", f, n_fields=None, rest_joined=True)
        utt2spk = read_table(self.path / "utt2spk", f, n_fields=1)
        spk2score = read_table(self.path / "spk2score", f, n_fields=1)
        spk2gender = self._optional("spk2gender", n_fields=1)
        segments = self._optional("segments", n_fields=3, optional_fields=1)
        utt2group = self._optional("utt2group", n_fields=1)
        hashes = self._optional("wav_hash.scp", n_fields=1)
        result = self.result
        result.language = self._read_language()
        result.speaker_scores = self._read_scores(spk2score, utt2spk)
        result.speaker_genders = self._genders(spk2gender, utt2spk)
        result.recording_hashes = digests(hashes)
        spans = self._spans(wav, utt2spk, segments)
        recordings = RecordingChecks(self.path, self.log)
        audio = recordings.check_recordings(
            wav, spans, check_audio, hashes if verify_hashes else None
        )
        recordings.check_sample_rates(wav, spans, audio)
        recordings.check_codecs(wav, spans, audio, lossy_audio)
        self._check_speakers(utt2spk, spk2score, spk2gender)
        self._build(_UtteranceFiles(wav, text, utt2spk, utt2group), spans, audio)

    def _optional(self, name: str, *, n_fields: int, optional_fields: int = 0) -> Table | None:
        file = self.path / name
        if not is_present(file):
            return None
        return read_table(
            file, self.result.findings, n_fields=n_fields, optional_fields=optional_fields
        )

    def _read_language(self) -> str:
        file = self.path / "language"
        lines = [ln.strip() for _n, ln in read_lines(file, self.result.findings) if ln.strip()]
        code = canonical_language(lines[0]) if lines else ""
        if len(lines) != 1 or code not in LANGUAGES:
            self.log.error(
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
                self.log.error(
                    table, entry.line, entry.fields[0], problem, fix, tuple(by_speaker.get(spk, ()))
                )
            else:
                values[spk] = value
        return values

    def _read_scores(self, spk2score: Table, utt2spk: Table) -> dict[str, float]:
        return self._read_speaker_values(
            spk2score,
            utt2spk,
            parse_score,
            "score is neither a finite number nor N/A",
            "write a number, or N/A for speakers without a rating",
        )

    def _genders(self, spk2gender: Table | None, utt2spk: Table) -> dict[str, str]:
        """Speaker genders; without spk2gender every gender is unknown (empty in the
        manifest), which is a warning, not an error: such speakers are still scored,
        gender-dependent measures estimate gender from F0 and ``control`` references, which
        need a matching gender, stay empty for the reason this warning records."""
        if spk2gender is None:
            self.log.error(
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

    def _spans(self, wav: Table, utt2spk: Table, segments: Table | None) -> dict[str, Span | None]:
        """Map each utterance to its :class:`Span`.

        Segments follow Kaldi's ``extract-segments``: ``<utt> <recording> <start> <end>
        [<channel>]``, where an end of -1 runs to the end of the file. A malformed segment maps
        to ``None``: it was reported here and must not be reported again as a missing segment.
        """
        spans: dict[str, Span | None] = {}
        if segments is None:
            return {utt: Span(utt, 0.0, -1.0, 0) for utt in utt2spk.entries}
        for utt, entry in segments.entries.items():
            spans[utt] = self._segment(wav, segments, utt, entry.line, entry.fields)
        return spans

    def _segment(
        self, wav: Table, segments: Table, utt: str, line: int, fields: tuple[str, ...]
    ) -> Span | None:
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
            self.log.error(segments, line, value, problem, fix, (utt,))
            return None
        return Span(rec, start, end, line, int(channel_raw[0]) if channel_raw else None)

    def _check_speakers(self, utt2spk: Table, spk2score: Table, spk2gender: Table | None) -> None:
        """Every speaker needs a spk2score line (N/A allowed); a missing gender only warns,
        because such a speaker is still scored, it just gets no control references (a missing
        spk2gender file was reported once by :meth:`_genders`)."""
        by_speaker = self._utts_of(utt2spk)
        for spk, utts in sorted(by_speaker.items()):
            line = utt2spk.entries[utts[0]].line
            if spk not in spk2score.entries:
                self.log.error(
                    utt2spk,
                    line,
                    spk,
                    "speaker has no line in spk2score",
                    "add '<speaker> <score>' or '<speaker> N/A'",
                    tuple(sorted(utts)),
                )
            if spk2gender is not None and spk not in spk2gender.entries:
                self.log.error(
                    utt2spk,
                    line,
                    spk,
                    "speaker has no line in spk2gender",
                    "add '<speaker> m' or '<speaker> f' to get control references",
                    severity="warning",
                )
        for spk, entry in spk2score.entries.items():
            if spk not in by_speaker:
                self.log.error(
                    spk2score,
                    entry.line,
                    spk,
                    "speaker has no utterance in utt2spk",
                    "remove the speaker or add its utterances",
                    severity="warning",
                )

    def _build(
        self, files: _UtteranceFiles, spans: dict[str, Span | None], audio: dict[str, AudioFacts]
    ) -> None:
        has_segments = is_present(self.path / "segments")
        keyed = set(files.utt2spk.entries) | set(files.text.entries)
        keyed |= set(spans) if has_segments else set(files.wav.entries)
        for utt in sorted(keyed):
            built = self._build_one(utt, files, spans, audio)
            if built is not None:
                self.result.utterances[utt] = built

    def _build_one(
        self,
        utt: str,
        files: _UtteranceFiles,
        spans: dict[str, Span | None],
        audio: dict[str, AudioFacts],
    ) -> Utterance | None:
        wav, text, utt2spk, utt2group = files
        spk_entry, text_entry = utt2spk.get(utt), text.get(utt)
        if spk_entry is None:
            where = text_entry or wav.get(utt)
            self.log.error(
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
            self.log.error(
                text, 0, utt, "utterance has no transcription", "add '<utt> <text>' to text", (utt,)
            )
            return None
        if utt in spans and spans[utt] is None:
            return None
        span = spans.get(utt)
        if span is None:
            if is_present(self.path / "segments"):
                self.log.error(
                    self.path / "segments",
                    0,
                    utt,
                    "utterance has no segment",
                    "add '<utt> <recording> <start> <end>'",
                    (utt,),
                )
            elif utt not in wav.entries:
                self.log.error(wav, 0, utt, "utterance has no audio", "add it to wav.scp", (utt,))
            return None
        rec, start, end = span.recording, span.start, span.end
        if rec not in wav.entries:
            self.log.error(wav, 0, rec, "utterance has no audio", "add it to wav.scp", (utt,))
            return None
        cleaned = clean_text(text_entry.fields[0])
        if not cleaned:
            self.log.error(
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
            self.log.error(
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
        self._check_length(utt, span, duration, wav)
        return Utterance(
            utt_id=utt,
            speaker_id=speaker,
            recording_id=rec,
            group_id=group.fields[0] if group else rec,
            audio_path=str(resolve(self.path, wav.entries[rec].fields[0])),
            start=start,
            end=end,
            text=text_entry.fields[0],
            text_clean=cleaned,
            gender=self.result.speaker_genders.get(speaker, ""),
            language=self.result.language,
            score=self.result.speaker_scores.get(speaker, math.nan),
            duration_s=duration,
            sample_rate=facts.sample_rate if facts else 0,
            channels=facts.channels if facts else 0,
            audio_sha256=facts.sha256 if facts else "",
        )

    def _check_length(self, utt: str, span: Span, duration: float, wav: Table) -> None:
        """Refuse an utterance longer than ``max_utterance_s``: a recording of a session
        listed as one utterance would be scored as one sentence (P-ESTOI ``ok`` for two hours
        against a six-word reference) and needs memory in proportion to its length."""
        if not duration > self.max_utterance_s:
            return
        where = (
            (self.path / "segments", span.line)
            if span.line
            else (wav, wav.entries[span.recording].line)
        )
        self.log.error(
            *where,
            utt,
            f"utterance is {duration:.1f} s long, longer than validation.max_utterance_s "
            f"({self.max_utterance_s:g} s): the measures are made for one word or sentence, "
            "and the jobs' memory is declared for utterances up to that length",
            "cut the recording into utterances with a segments file, or raise "
            "validation.max_utterance_s (memory per length: benchmarks/README.md)",
            (utt,),
        )
