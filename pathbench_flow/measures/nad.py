"""Normalised alignment distance (NAD): how far a test utterance is from healthy references.

NAD aligns the test's feature frames to each reference recording of the same text with DTW and
reports the alignment cost per step, averaged over the references; lower means closer to
healthy speech and so more intelligible. It follows PathBench, which calls dtw-python with its
defaults: Euclidean local distance, the ``symmetric2`` step pattern (a diagonal step costs
twice the local distance, so every path between the same corners carries the same total weight)
and normalisation by n + m.

As with P-ESTOI, :func:`nad_features` is the cacheable per-signal step and :func:`nad` the
comparison. The DTW accumulation is compiled with numba: it is a strictly sequential recurrence,
and a per-cell Python loop would dominate the run time of the whole measure.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numba
import numpy as np

from pathbench_flow import SAMPLE_RATE, tracks
from pathbench_flow.common.status import ERROR, NO_REFERENCES, TOO_SHORT, NoScore
from pathbench_flow.measures.dtw_path import frame_distance
from pathbench_flow.measures.mfcc import mfcc
from pathbench_flow.neural import model_tracks
from pathbench_flow.neural.models import MIN_SAMPLES, NAD_LAYER

FeatureKind = Literal["mfcc", "wav2vec2"]

N_MFCC = 20
"""MFCC coefficients per frame."""
MFCC_WINDOW_S = 0.025
"""MFCC analysis window (25 ms), the usual speech-recognition front end."""
MFCC_HOP_S = 0.010
"""MFCC frame shift (10 ms)."""
MIN_FRAMES = 2
"""Fewer frames give no alignment worth the name (PathBench's limit too)."""


def _mfcc(audio: np.ndarray, fs: int) -> np.ndarray:
    """MFCCs (frames, 20) with the utterance mean removed, which cancels channel colouring.

    Equal to ``librosa.feature.mfcc`` with a 25 ms window and 10 ms hop (librosa's other
    defaults: 128 mel bands, dB with an 80 dB floor, orthonormal DCT-II), except that the
    filter bank is float64 where librosa's is float32 (:mod:`pathbench_flow.measures.mfcc`).
    """
    window = int(round(MFCC_WINDOW_S * fs))
    coefficients = mfcc(audio, fs, N_MFCC, n_fft=window, hop=int(round(MFCC_HOP_S * fs))).T
    return coefficients - coefficients.mean(axis=0)


def mfcc_arrays(audio: np.ndarray, fs: int) -> tracks.Arrays:
    """The ``nad_mfcc`` track's analysis: :func:`_mfcc` as a track value."""
    return tracks.as_arrays(_mfcc(np.asarray(audio, dtype=np.float64), fs))


def _require(package: str) -> None:
    """Fail naming an optional dependency that is not installed (only wav2vec2 features need
    it). It is not imported here: a job reading the features from track files never needs it,
    and importing torch and transformers costs ~1.7 CPU-s."""
    if importlib.util.find_spec(package) is None:
        raise ImportError(f"NAD with wav2vec2 features needs the {package!r} package")


def _wav2vec2_hidden(
    audio: np.ndarray, fs: int, model_dir: str | Path, layer: int
) -> tracks.Arrays:
    """Hidden layer ``layer`` of the local wav2vec2 checkpoint at ``model_dir``, through its
    shared track (:func:`pathbench_flow.neural.model_tracks.hidden_track`): computed once per
    recording, whether it is the test or a reference, in however many jobs.

    The raw waveform goes in as float32 without normalisation, as in PathBench; the model is
    loaded once per process by :mod:`pathbench_flow.neural.models`.
    """
    for package in ("torch", "transformers"):
        _require(package)
    if not Path(model_dir).is_dir():
        raise FileNotFoundError(f"wav2vec2 model directory not found: {model_dir}")
    track = model_tracks.hidden_track(str(Path(model_dir).resolve()), int(layer))
    return tracks.value(track, audio, fs)


def nad_features(
    audio: np.ndarray,
    fs: int = SAMPLE_RATE,
    kind: FeatureKind = "mfcc",
    model_dir: str | Path | None = None,
    layer: int = NAD_LAYER,
) -> np.ndarray:
    """Feature frames (frames, dims) of one recording for :func:`nad`.

    MFCCs come through the shared track ``nad_mfcc`` (:mod:`pathbench_flow.tracks`), wav2vec2
    features through the model's track: each computed once per recording however many
    reference-scoring jobs compare with it (read-only).
    ``kind="wav2vec2"`` needs ``model_dir``, a local wav2vec2 checkpoint directory (nothing is
    ever downloaded; PathBench's is facebook/wav2vec2-large), 16 kHz audio, and the optional
    packages torch and transformers; ``layer`` is the hidden layer compared.

    Raises:
        NoScore: ``too_short`` with fewer than 2 frames, or for wav2vec2 under 400 samples,
        so that such a reference is left out of NAD and such a test gets no score, as in
        PathBench.
    """
    audio = np.asarray(audio, dtype=np.float64)
    if kind == "mfcc":
        features = tracks.as_matrix(tracks.value(tracks.NAD_MFCC, audio, fs))
    elif kind == "wav2vec2":
        if model_dir is None:
            raise ValueError("NAD with wav2vec2 features needs model_dir, a local checkpoint")
        if fs != SAMPLE_RATE:
            raise ValueError(f"wav2vec2 expects {SAMPLE_RATE} Hz audio, got {fs} Hz")
        if len(audio) < MIN_SAMPLES:  # wav2vec2's convolutions need one 400-sample frame
            raise NoScore(TOO_SHORT, f"{len(audio)} samples; wav2vec2 needs {MIN_SAMPLES}")
        features = tracks.as_matrix(_wav2vec2_hidden(audio, fs, model_dir, layer))
    else:
        raise ValueError(f"unknown NAD feature kind {kind!r}; use 'mfcc' or 'wav2vec2'")
    if features.shape[0] < MIN_FRAMES:
        raise NoScore(TOO_SHORT, f"{features.shape[0]} feature frame(s); NAD needs {MIN_FRAMES}")
    return features


@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def dtw_accumulate(test_features: np.ndarray, ref_features: np.ndarray) -> np.ndarray:
    """Accumulated cost (n, m) of the dtw-python ``symmetric2`` pattern over two sequences.

    With d = the Euclidean distance between test frame i and reference frame j,
    D[0, 0] = d and D[i, j] = min(D[i-1, j] + d, D[i, j-1] + d, D[i-1, j-1] + 2 d);
    D[-1, -1] is the alignment distance. Distances are computed as the recursion reaches them,
    which halves the time of a separate distance matrix; ``reassoc`` lets the compiler
    vectorise each distance's sum of squares, changing it only in the last bits.
    """
    rows, cols = test_features.shape[0], ref_features.shape[0]
    acc = np.empty((rows, cols))
    for i in range(rows):
        for j in range(cols):
            step = frame_distance(test_features, i, ref_features, j)
            if i == 0 and j == 0:
                acc[i, j] = step
            elif i == 0:
                acc[i, j] = acc[i, j - 1] + step
            elif j == 0:
                acc[i, j] = acc[i - 1, j] + step
            else:
                acc[i, j] = min(
                    acc[i - 1, j] + step, acc[i, j - 1] + step, acc[i - 1, j - 1] + 2.0 * step
                )
    return acc


def alignment_distance(test_features: np.ndarray, ref_features: np.ndarray) -> float:
    """Normalised symmetric2 DTW distance between two (frames, dims) sequences.

    NaN when either holds a non-finite value: the recursion's ``min`` would otherwise skip
    NaN cells silently and return a finite but meaningless distance.
    """
    if test_features.shape[1] != ref_features.shape[1]:
        raise ValueError(
            f"feature sizes differ: {test_features.shape[1]} vs {ref_features.shape[1]}"
        )
    if not (np.isfinite(test_features).all() and np.isfinite(ref_features).all()):
        return float("nan")
    accumulated = dtw_accumulate(
        np.ascontiguousarray(test_features, dtype=np.float64),
        np.ascontiguousarray(ref_features, dtype=np.float64),
    )
    return float(accumulated[-1, -1] / (test_features.shape[0] + ref_features.shape[0]))


def nad(test_features: np.ndarray, ref_features: Sequence[np.ndarray]) -> float:
    """NAD: the test's alignment distance averaged over the references; lower is better.

    References whose distance is NaN (non-finite features) are ignored, as in PathBench.

    Raises:
        NoScore: ``no_references`` without references, ``error`` if no distance is finite.
    """
    if len(ref_features) == 0:
        raise NoScore(NO_REFERENCES, "NAD needs reference recordings of the same text")
    distances = np.array([alignment_distance(test_features, ref) for ref in ref_features])
    if np.isnan(distances).all():
        raise NoScore(ERROR, "no reference gave a finite alignment distance")
    return float(np.nanmean(distances))


def nad_from_audio(
    test: np.ndarray,
    references: Sequence[np.ndarray],
    fs: int = SAMPLE_RATE,
    kind: FeatureKind = "mfcc",
    model_dir: str | Path | None = None,
) -> float:
    """NAD straight from audio, for one-off use; the workflow caches the feature step."""
    return nad(
        nad_features(test, fs, kind, model_dir),
        [nad_features(reference, fs, kind, model_dir) for reference in references],
    )
