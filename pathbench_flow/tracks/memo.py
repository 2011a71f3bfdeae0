"""The tracks (:class:`Track`: pitch, CPPS, P-(E)STOI envelopes, NAD's MFCCs, intensity), the
uses consumers declare (:class:`TrackUse`), and the in-process memo that runs each once per audio.

Praat's pitch track feeds ``std_pitch``, ``f0_range``, ``speech_rate``, both vowel-space
measures and the open-set features; its intensity contour feeds ``speech_rate`` and the
open-set features' speech rate and pause fraction; the CPPS value feeds ``cpps`` and the
open-set features, and is the costliest signal analysis in the benchmark; the envelopes of
P-ESTOI and P-STOI and NAD's MFCCs of every recording feed every reference-scoring job whose
utterances it is a reference of, for both reference sets. A :class:`Track` names such an
analysis: a pure function of (audio, sample rate) with fixed settings. :func:`value` looks a
track up in a content-addressed memo before running it. The key is the track's name and
settings, the sample rate and a SHA-256 of the audio's dtype, shape and bytes, so a value is
reused only for exactly the samples it was computed from, whichever job, variant or file it
came from, and two tracks or two settings can never collide.

The workflow fills the memo from track files (read and written by
:mod:`pathbench_flow.tracks.store`), so the consumers of a track read it instead of recomputing
it: rule ``compute_track`` writes one file per track, variant and shard, and for the
reference-audio measures ``compute_set_track`` one per track, variant and set (test or
reference) of the analyses that run no model: a set takes seconds, less than a job per shard
would cost to start, and each reference job loads only its rows (``load_tracks(utt_ids=)``).
A consumer without a file, or holding audio no file covers, computes the track itself. Values
are float64 arrays stored bit for bit, so a result never depends on whether a track file was
there. A measure that finds no value (``NoScore``) is remembered and replayed as the same
``NoScore``; any other exception is not remembered, so it is raised again, as itself, by
whoever computes the track.

Files are planned only for the tracks a consumer declares (``shared_tracks``,
:data:`OPENSET_FEATURE_TRACKS`), and a track is declared only where its file saves more than a
job costs (about 0.6 CPU-s of start-up). ``intensity`` is therefore shared within a job only:
it takes 0.3 ms per second of audio (0.1 s for a shard of 250 one-word utterances), less than
its file would cost; the open-set features read it twice per utterance and run it once.
``praat_speech_rate`` runs the same To Intensity but then Praat commands on the Intensity
object, which parselmouth cannot rebuild from arrays, so it analyses its own. Burg formants
(:func:`pathbench_flow.measures.vsa.burg_formants`, ~6.5 ms per second of audio) are no track:
each job that reads them reads them once, and ``vsa_corners`` picks its ceiling from the
speaker's pitch while scoring, so a file would have to hold both ceilings for everyone.

Model outputs are tracks too (:mod:`pathbench_flow.neural.model_tracks`): the phone model's
log-posteriors feed ``artp``, ``artp_old``, ``dper`` and ``artp_double_asr``, each character
ASR model's feed ``per``, ``double_asr`` and ``artp_double_asr``, and wav2vec2 features feed
``nad`` in all four of its jobs, for tests and references alike. Such a track is parameterised
by its model: ``arguments`` name the model directory (and layer) the function runs, and the
name and settings carry a digest of what the directory holds, never where it is, so a changed
model can never be served an old value and moving a model changes no result file. A consumer
declares the tracks it reads with :class:`TrackUse` (the evaluator's ``track_uses``), which
also says which utterances it reads them for (the languages it scores), so a track file holds
only outputs someone reads. A ``batched`` track's function analyses many audios at once, so
the misses of a call go through a model together (:func:`outcomes`).

This module imports no analysis library: the workflow reads the track names when it plans,
and each analysis is imported when first computed.
"""

from __future__ import annotations

import hashlib
import importlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pathbench_flow.common.status import NoScore

Arrays = tuple[np.ndarray, ...]
Outcome = Arrays | Exception
"""What analysing one audio gave: its arrays, the :class:`NoScore` it has instead, or the
error its analysis raised."""


@dataclass(frozen=True)
class Track:
    """One shared analysis: its name, the arrays it yields, its settings and its function.

    ``function`` is ``"module:attribute"`` of a callable ``(audio, fs, **arguments) -> tuple of
    1-D float64 arrays`` (one per field), imported on first use; a ``batched`` one maps a list
    of audios to one tuple (or the :class:`NoScore` or other exception of that audio) each and
    takes ``batch_size`` too.
    ``settings`` describes the analysis parameters; it is part of every memo key and of the
    track files' metadata, so changing them makes old values unreachable instead of wrong.
    ``arguments`` (a model track's ``model_dir``, ``layer``) say where the analysis finds what
    it runs, and are not part of the key: the settings identify what is computed.
    ``sources`` names the tracks whose values the function reads through the memo (the
    n-gram transcription reads the ASR model's log-posteriors): a job writing this track
    loads their files first, so it never runs what another job already ran.
    """

    name: str
    fields: tuple[str, ...]
    settings: str
    function: str
    arguments: tuple[tuple[str, str | int], ...] = ()
    batched: bool = False
    sources: tuple[str, ...] = ()

    @property
    def runs_model(self) -> bool:
        """Whether the analysis runs a neural model (its jobs need a model's resources)."""
        return any(key == "model_dir" for key, _ in self.arguments)

    def compute(self, audios: Sequence[np.ndarray], fs: int, batch_size: int = 1) -> list[Outcome]:
        """Analyse each audio; a failure is the outcome of its audio (of every audio of the
        call, when a batched analysis raises), so one bad recording never hides the others."""
        module, _, attribute = self.function.partition(":")
        analysis: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
        arguments = dict(self.arguments)
        if not self.batched:
            return [self._checked(lambda a=a: analysis(a, fs, **arguments)) for a in audios]
        try:
            found = analysis(list(audios), fs, batch_size=batch_size, **arguments)
        except Exception as error:  # noqa: BLE001 - the outcome of every audio of the batch
            return [error] * len(audios)
        return [o if isinstance(o, Exception) else self._checked(lambda o=o: o) for o in found]

    def _checked(self, analysis: Callable[[], Arrays]) -> Outcome:
        try:
            arrays = tuple(np.ascontiguousarray(a, dtype=np.float64) for a in analysis())
        except Exception as error:  # noqa: BLE001 - NoScore or not, the outcome of this audio
            return error
        if len(arrays) != len(self.fields) or any(a.ndim != 1 for a in arrays):
            return TypeError(f"track {self.name!r} must yield one 1-D array per field")
        return arrays


@dataclass(frozen=True)
class TrackUse:
    """What a consumer reads: ``track``, for the utterances of ``languages`` (None: all).

    ``batch_size`` is how many utterances the consumer lets a model run at once on a GPU; a
    track job for several consumers takes the smallest.
    """

    track: Track
    languages: tuple[str, ...] | None = None
    batch_size: int = 1
    read: bool = True
    """Whether the consumer reads the track's files itself; False for a track it needs only
    as another's source (DArtP needs the ASR log-posteriors only for its n-gram
    transcription), which the workflow plans without making the consumer's job load it."""


def merge_uses(uses: Iterable[TrackUse]) -> dict[str, TrackUse]:
    """One use per track name for all of ``uses``: the union of their languages, the
    smallest batch size, read when any of them reads it. Two definitions of one name must
    agree on the settings."""
    merged: dict[str, TrackUse] = {}
    for use in uses:
        known = merged.get(use.track.name)
        if known is None:
            merged[use.track.name] = use
            continue
        if known.track.settings != use.track.settings:
            raise ValueError(
                f"track {use.track.name!r} is declared with two settings: "
                f"{known.track.settings!r} and {use.track.settings!r}"
            )
        languages = (
            None
            if known.languages is None or use.languages is None
            else tuple(sorted({*known.languages, *use.languages}))
        )
        merged[use.track.name] = replace(
            known,
            languages=languages,
            batch_size=min(known.batch_size, use.batch_size),
            read=known.read or use.read,
        )
    return merged


PITCH = Track(
    "pitch",
    ("times_s", "f0_hz"),
    "Praat To Pitch (ac) defaults: time step 0 (10 ms), floor 75 Hz, ceiling 600 Hz",
    "pathbench_flow.measures.pitch:praat_pitch",
)
"""Frame times and F0 (0 = unvoiced) of Praat's default pitch analysis
(:func:`pathbench_flow.measures.pitch.pitch_track`)."""

CPPS = Track(
    "cpps",
    ("cpps_db",),
    "Praat PowerCepstrogram CPPS (pathbench_flow.measures.cepstral.praat_settings)",
    "pathbench_flow.measures.cepstral.smoothed:cpps_arrays",
)
"""The CPPS value of an utterance (:func:`pathbench_flow.measures.cepstral.cpps`), one element."""

PESTOI_ENVELOPES = Track(
    "pestoi_envelopes",
    ("values", "shape"),
    "P-ESTOI log one-third-octave envelopes (pathbench_flow.measures.pestoi constants)",
    "pathbench_flow.measures.pestoi:envelope_arrays",
)
"""The (15, frames) envelopes P-ESTOI and P-STOI compare (:func:`pestoi.pestoi_features`),
as a matrix (:func:`as_arrays`)."""

NAD_MFCC = Track(
    "nad_mfcc",
    ("values", "shape"),
    "NAD MFCC frames (pathbench_flow.measures.nad constants)",
    "pathbench_flow.measures.nad:mfcc_arrays",
)
"""The (frames, 20) mean-removed MFCCs NAD aligns with ``features: mfcc``
(:func:`nad.nad_features`), as a matrix (:func:`as_arrays`)."""

INTENSITY = Track(
    "intensity",
    ("times_s", "intensity_db"),
    "Praat To Intensity: minimum pitch 50 Hz, time step 0 (16 ms), mean subtracted",
    "pathbench_flow.measures.speech_rate:praat_intensity",
)
"""Frame times and intensity contour that nucleus detection and the pause fraction read
(:func:`pathbench_flow.measures.speech_rate.praat_intensity`); shared within a job, no files."""

TRACKS: dict[str, Track] = {
    track.name: track for track in (PITCH, CPPS, PESTOI_ENVELOPES, NAD_MFCC, INTENSITY)
}
"""Every fixed shared track by name (a model's tracks are made for its model:
:mod:`pathbench_flow.neural.model_tracks`)."""

OPENSET_FEATURE_TRACKS: tuple[str, ...] = (PITCH.name, CPPS.name)
"""The tracks :func:`pathbench_flow.openset.features.utterance_features` reads."""

_Key = tuple[str, str, int, str]
_memo: dict[_Key, Arrays | NoScore] = {}
_counts: Counter[tuple[str, str]] = Counter()


def audio_digest(audio: np.ndarray) -> str:
    """SHA-256 of the audio's dtype, shape and bytes: what an analysis of it depends on."""
    samples = np.ascontiguousarray(audio)
    digest = hashlib.sha256(f"{samples.dtype.str}{samples.shape}".encode())
    digest.update(memoryview(samples).cast("B"))
    return digest.hexdigest()


def _key(track: Track, digest: str, fs: int) -> _Key:
    return (track.name, track.settings, int(fs), digest)


def _read_only(arrays: Arrays) -> Arrays:
    for array in arrays:
        array.setflags(write=False)
    return arrays


def remember(track: Track, digest: str, fs: int, outcome: Arrays | NoScore) -> None:
    """Store a track value (or the ``NoScore`` it ended with) for audio with ``digest``."""
    _memo[_key(track, digest, fs)] = (
        outcome
        if isinstance(outcome, NoScore)
        else _read_only(tuple(np.ascontiguousarray(a, dtype=np.float64) for a in outcome))
    )


def outcomes(
    track: Track, audios: Sequence[np.ndarray], fs: int, batch_size: int = 1
) -> list[Outcome]:
    """The track's outcome for each audio: remembered if known, else computed and remembered.

    The audios not known yet are analysed together (once each, however often they occur), so
    a model track runs its misses as one batch. Arrays are read-only, since every later caller
    shares them; a :class:`NoScore` is remembered, any other error is not.
    """
    digests = [audio_digest(audio) for audio in audios]
    missing: dict[str, np.ndarray] = {}
    for digest, audio in zip(digests, audios, strict=True):
        if _key(track, digest, fs) not in _memo:
            missing.setdefault(digest, audio)
    computed = track.compute(list(missing.values()), fs, batch_size) if missing else []
    fresh: dict[str, Outcome] = {}
    for digest, outcome in zip(missing, computed, strict=True):
        if isinstance(outcome, NoScore) or not isinstance(outcome, Exception):
            remember(track, digest, fs, outcome)
        fresh[digest] = _memo.get(_key(track, digest, fs), outcome)
    for kind, count in (("computed", len(missing)), ("reused", len(digests) - len(missing))):
        if count:
            _counts[(track.name, kind)] += count
    return [fresh[d] if d in fresh else _memo[_key(track, d, fs)] for d in digests]


def arrays(outcome: Outcome) -> Arrays:
    """The arrays of an outcome, or its failure raised (a fresh copy of a remembered NoScore)."""
    if isinstance(outcome, NoScore):
        raise NoScore(outcome.status, outcome.reason)
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def value(track: Track, audio: np.ndarray, fs: int) -> Arrays:
    """The track's arrays for ``audio`` (:func:`outcomes` of one audio).

    Raises the remembered or fresh :class:`NoScore` when the analysis has no value for this
    audio, and any other error of the analysis as itself.
    """
    return arrays(outcomes(track, [audio], fs)[0])


def values(
    track: Track, audios: Sequence[np.ndarray], fs: int, batch_size: int = 1
) -> list[Arrays]:
    """The track's arrays for each audio (:func:`outcomes`); raises the first failure."""
    return [arrays(outcome) for outcome in outcomes(track, audios, fs, batch_size)]


def as_arrays(matrix: np.ndarray) -> Arrays:
    """A matrix as a track value: its C-order values and its shape."""
    return np.ascontiguousarray(matrix).ravel(), np.asarray(matrix.shape, dtype=np.float64)


def as_matrix(arrays: Arrays) -> np.ndarray:
    """The matrix of a track value made by :func:`as_arrays` (a read-only C-order view)."""
    flat, shape = arrays
    return flat.reshape(tuple(int(n) for n in shape))


def cpps(audio: np.ndarray, fs: int) -> float:
    """CPPS (dB) through the shared ``cpps`` track; equal to ``cepstral.cpps(audio, fs)``."""
    return float(value(CPPS, audio, fs)[0][0])


def summary() -> str:
    """One log line: how often each track was reused and computed in this process."""
    names = sorted({name for name, _ in _counts})
    parts = [
        f"{name} {_counts[(name, 'reused')]} reused, {_counts[(name, 'computed')]} computed"
        for name in names
    ]
    return "tracks: " + ("; ".join(parts) if parts else "none used")


def counts() -> dict[tuple[str, str], int]:
    """(track, "reused" | "computed") → number of calls in this process (tests, logs)."""
    return dict(_counts)


def forget() -> None:
    """Empty the memo and the counts (tests; a job process starts empty)."""
    _memo.clear()
    _counts.clear()
