"""Shared analysis tracks: analyses that several measures run on the same audio, done once.

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

The workflow fills the memo from track files (rule ``compute_track``: one file per track,
variant and shard, read and written by :mod:`pathbench_flow.tracks.store`), so the consumers of a
track read it instead of recomputing it. A consumer without a file, or holding audio no file
covers, computes the track itself. Values are float64 arrays stored bit for bit, so a result
never depends on whether a track file was there. A measure that finds no value (``NoScore``)
is remembered and replayed as the same ``NoScore``; any other exception is not remembered,
so it is raised again, as itself, by whoever computes the track.

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

This module imports no analysis library: the workflow reads the track names when it plans,
and each analysis is imported when first computed.
"""

from __future__ import annotations

import hashlib
import importlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pathbench_flow.status import NoScore

Arrays = tuple[np.ndarray, ...]


@dataclass(frozen=True)
class Track:
    """One shared analysis: its name, the arrays it yields, its settings and its function.

    ``function`` is ``"module:attribute"`` of a callable ``(audio, fs) -> tuple of 1-D float64
    arrays`` (one per field), imported on first use. ``settings`` describes the analysis
    parameters; it is part of every memo key and of the track files' metadata, so changing
    them makes old values unreachable instead of wrong.
    """

    name: str
    fields: tuple[str, ...]
    settings: str
    function: str

    def compute(self, audio: np.ndarray, fs: int) -> Arrays:
        module, _, attribute = self.function.partition(":")
        analysis: Callable[[np.ndarray, int], Arrays] = getattr(
            importlib.import_module(module), attribute
        )
        arrays = tuple(np.ascontiguousarray(a, dtype=np.float64) for a in analysis(audio, fs))
        if len(arrays) != len(self.fields) or any(a.ndim != 1 for a in arrays):
            raise TypeError(f"track {self.name!r} must yield one 1-D array per field")
        return arrays


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
    "pathbench_flow.tracks:cpps_arrays",
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
"""Every shared track by name."""

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


def value(track: Track, audio: np.ndarray, fs: int) -> Arrays:
    """The track's arrays for ``audio``: remembered if known, else computed and remembered.

    The arrays are read-only, since every later caller shares them. Raises the remembered or
    fresh :class:`NoScore` when the analysis has no value for this audio.
    """
    digest = audio_digest(audio)
    key = _key(track, digest, fs)
    known = _memo.get(key)
    if known is None:
        _counts[(track.name, "computed")] += 1
        try:
            known = track.compute(audio, fs)
        except NoScore as missing:
            known = missing
        remember(track, digest, fs, known)
        known = _memo[key]
    else:
        _counts[(track.name, "reused")] += 1
    if isinstance(known, NoScore):
        raise NoScore(known.status, known.reason)
    return known


def as_arrays(matrix: np.ndarray) -> Arrays:
    """A matrix as a track value: its C-order values and its shape."""
    return np.ascontiguousarray(matrix).ravel(), np.asarray(matrix.shape, dtype=np.float64)


def as_matrix(arrays: Arrays) -> np.ndarray:
    """The matrix of a track value made by :func:`as_arrays` (a read-only C-order view)."""
    values, shape = arrays
    return values.reshape(tuple(int(n) for n in shape))


def cpps_arrays(audio: np.ndarray, fs: int) -> Arrays:
    """The ``cpps`` track's analysis: :func:`pathbench_flow.measures.cepstral.cpps` as one array."""
    from pathbench_flow.measures import cepstral  # numba-compiled: imported only when computed

    return (np.array([cepstral.cpps(audio, fs)]),)


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
