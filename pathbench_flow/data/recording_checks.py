"""Checks of the audio a dataset lists: readable, complete, with signal, at one bandwidth.

Each defect becomes a finding naming the ``wav.scp`` or ``segments`` line and the utterances
it invalidates, so ``on_error: drop`` can remove exactly those. What one file is (its kind,
header, samples and digest, from one read) is found by :mod:`pathbench_flow.data.recording_file`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.data.kaldi import FindingLog, Table
from pathbench_flow.data.recording_file import AudioDefect, AudioFacts, read_recording

SEGMENT_TOLERANCE_S = 0.05
SILENCE_PEAK = 1.0 / 32768.0
"""A file whose peak never exceeds one 16-bit step holds no signal at all."""
LOSSY_AUDIO = ("warn", "error")
"""What validation does with recordings stored with a lossy codec (``validation.lossy_audio``)."""
LOSSY_EXAMPLES = 5
CONSTANT_SPREAD = 1.0 / 32768.0
"""Audio whose standard deviation stays below one 16-bit step is a constant (DC), not speech."""


class Span(NamedTuple):
    """Where an utterance lies: ``end = -1`` runs to the end of the file; ``line`` is its
    segments line (0 when unsegmented); ``channel`` the optional Kaldi channel field."""

    recording: str
    start: float
    end: float
    line: int
    channel: int | None = None


def recording_users(spans: dict[str, Span | None]) -> dict[str, list[str]]:
    """The utterances of each recording."""
    users: dict[str, list[str]] = {}
    for utt, span in spans.items():
        if span is not None:
            users.setdefault(span.recording, []).append(utt)
    return users


def resolve(directory: Path, location: str) -> Path:
    """A ``wav.scp`` path; relative paths resolve against the dataset directory."""
    path = Path(location)
    return path if path.is_absolute() else directory / path


class RecordingChecks:
    """The audio checks of the dataset in ``directory``, adding findings to ``log``."""

    def __init__(self, directory: Path, log: FindingLog) -> None:
        self.path = directory
        self.log = log

    def check_recordings(
        self,
        wav: Table,
        spans: dict[str, Span | None],
        check_audio: bool,
        hashes: Table | None,
    ) -> dict[str, AudioFacts]:
        users = recording_users(spans)
        facts: dict[str, AudioFacts] = {}
        for rec, entry in wav.entries.items():
            location = entry.fields[0]
            affected = tuple(sorted(users.get(rec, ())))
            if location.endswith("|"):
                self.log.error(
                    wav,
                    entry.line,
                    location,
                    "wav.scp entry is a pipe command; pathbench-flow never executes commands",
                    "convert the audio to a file first and list its path",
                    affected,
                )
                continue
            if not location:
                self.log.error(
                    wav, entry.line, rec, "no audio path", "write '<id> <path>'", affected
                )
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
        spans: dict[str, Span | None],
        utts: list[str],
        hashes: Table | None,
    ) -> AudioFacts | None:
        path = resolve(self.path, location)
        try:
            data, facts = read_recording(path)
        except AudioDefect as defect:
            problem = f"recording {rec}: {defect.problem}"
            self.log.error(wav, line, location, problem, defect.fix, affected)
            return None
        if hashes is not None:
            self._check_hash(hashes, rec, path, facts.sha256, affected)
        for utt in utts:
            self._check_span(wav.path, line, utt, spans[utt], data, facts)
        return facts

    def _check_span(
        self,
        wav_path: Path,
        wav_line: int,
        utt: str,
        span: Span,
        data: np.ndarray,
        facts: AudioFacts,
    ) -> None:
        """The utterance's part of the recording exists, is addressable and holds a signal."""
        segments = self.path / "segments"
        where = (segments, span.line) if span.line else (wav_path, wav_line)
        if span.end > facts.duration_s + SEGMENT_TOLERANCE_S:
            self.log.error(
                segments,
                span.line,
                f"{span.end}",
                f"segment ends after the audio ({facts.duration_s:.3f} s)",
                "correct the end time or the recording",
                (utt,),
            )
            return
        if span.start >= facts.duration_s:
            self.log.error(
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
                    "pathbench-flow averages all channels and cannot select one"
                    if span.channel < facts.channels
                    else "no such channel"
                )
            )
            self.log.error(
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
            self.log.error(
                *where,
                utt,
                "audio holds only silence",
                "check the recording or the segment times",
                (utt,),
            )
        elif region.std(axis=0).max() < CONSTANT_SPREAD:
            self.log.error(
                *where,
                utt,
                f"audio holds no signal, only the constant value {float(region.mean()):.4f} "
                "(DC offset)",
                "check the recording (a disconnected microphone or a broken conversion)",
                (utt,),
            )

    def check_codecs(
        self,
        wav: Table,
        spans: dict[str, Span | None],
        audio: dict[str, AudioFacts],
        lossy_audio: str,
    ) -> None:
        """Name the recordings stored with a lossy codec, one finding per codec.

        A perceptual codec keeps what a listener hears and drops what spectral and cepstral
        measures read (an MP3 of a WAV scores 9 % higher CPP), so such a recording's values
        are the codec's as much as the speaker's. A warning by default, since some corpora
        exist only as MP3; ``lossy_audio: error`` refuses them (``on_error: drop`` then drops
        their utterances).
        """
        if lossy_audio not in LOSSY_AUDIO:
            raise ValueError(f"lossy_audio must be one of {LOSSY_AUDIO}, not {lossy_audio!r}")
        by_codec: dict[str, list[str]] = {}
        for rec in sorted(audio, key=lambda rec: wav.entries[rec].line):
            if audio[rec].codec:
                by_codec.setdefault(audio[rec].codec, []).append(rec)
        users = recording_users(spans)
        for codec, recs in sorted(by_codec.items()):
            files = [wav.entries[rec].fields[0] for rec in recs]
            shown = ", ".join(files[:LOSSY_EXAMPLES])
            more = len(files) - LOSSY_EXAMPLES
            self.log.error(
                wav,
                wav.entries[recs[0]].line,
                shown + (f" and {more} more" if more > 0 else ""),
                f"{len(recs)} recording(s) stored with the lossy codec {codec}: the codec removed "
                "part of the spectrum, which biases spectral and cepstral measures (CPP, CPPS, "
                "P-ESTOI)",
                "list the original (uncompressed) recordings"
                + (
                    ""
                    if lossy_audio == "error"
                    else ", or set validation.lossy_audio: error to refuse them"
                ),
                tuple(sorted(utt for rec in recs for utt in users.get(rec, ()))),
                severity="error" if lossy_audio == "error" else "warning",
            )

    def check_sample_rates(
        self, wav: Table, spans: dict[str, Span | None], audio: dict[str, AudioFacts]
    ) -> None:
        """Name recordings whose bandwidth differs from the rest of the dataset.

        Every stage resamples to :data:`~pathbench_flow.SAMPLE_RATE`, so what matters is the rate
        after that, ``min(rate, SAMPLE_RATE)``: 44.1 and 48 kHz both become full-band 16 kHz
        audio, while an 8 kHz file among 16 kHz ones is upsampled with nothing above 4 kHz,
        which shifts spectral measures (CPP by more than half on such a file). The dataset's
        most common rate (the higher on a tie) is the norm; recordings at another one are
        errors. A dataset entirely below ``SAMPLE_RATE`` is consistent and only gets a warning.
        """
        effective = {rec: min(f.sample_rate, SAMPLE_RATE) for rec, f in audio.items()}
        counts = Counter(effective.values())
        if not counts:
            return
        norm = max(counts, key=lambda rate: (counts[rate], rate))
        users = recording_users(spans)
        for rec, rate in sorted(effective.items(), key=lambda item: wav.entries[item[0]].line):
            if rate != norm:
                self.log.error(
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
            self.log.error(
                wav,
                0,
                f"{norm} Hz",
                f"every recording is sampled at {norm} Hz: upsampled to {SAMPLE_RATE} Hz, "
                f"nothing above {norm // 2} Hz, so values are not comparable with "
                f"{SAMPLE_RATE} Hz datasets",
                "compare only with datasets of the same rate",
                severity="warning",
            )

    def _check_hash(
        self, hashes: Table, rec: str, path: Path, digest: str, affected: tuple[str, ...]
    ) -> None:
        """The recording's ``digest`` (SHA-256 of its bytes) is the one wav_hash.scp lists."""
        entry = hashes.get(rec)
        if entry is None:
            self.log.error(
                hashes, 0, rec, "no hash for this recording", "add its SHA-256", affected
            )
            return
        if digest != entry.fields[0].lower():
            self.log.error(
                hashes,
                entry.line,
                entry.fields[0],
                f"SHA-256 of {path} is {digest}",
                "the audio changed: restore it or update the hash",
                affected,
            )
