"""The frozen 24-feature vector ``pathbench-acoustic-24/1`` of one utterance.

The names, units and computations are tabulated in ``docs/openset.md``.

A feature that cannot be measured (no voiced frame, too short) is NaN. It is never imputed:
each candidate uses the rows its own features measure (:mod:`pathbench_flow.openset.coverage`).

The pitch track and the CPPS value are the shared tracks of :mod:`pathbench_flow.tracks`
(:data:`~pathbench_flow.tracks.OPENSET_FEATURE_TRACKS`), so the open-set stage reuses what the
workflow's track jobs computed for ``std_pitch``, ``cpps`` and the other measures. The
intensity contour is the ``intensity`` track too, computed once per utterance for the speech
rate and the pause fraction; the formants come from the Burg analysis of ``vsa_corners``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import parselmouth
from parselmouth.praat import call
from scipy.signal import welch

from pathbench_flow import tracks
from pathbench_flow.common.status import NoScore
from pathbench_flow.measures import mfcc, pitch, speech_rate, vsa, wada_snr
from pathbench_flow.schemas.openset import FEATURE_NAMES

_PERIOD_ARGS = (0.0, 0.0, 0.0001, 0.02, 1.3)
_MFCC = {"n_mfcc": 5, "n_fft": 400, "hop": 160}
"""``librosa.feature.mfcc`` on float32 audio with these settings, without importing librosa
(:mod:`pathbench_flow.measures.mfcc` gives its values bit for bit)."""
_FORMANT_CEILING_HZ = 5500.0


def _safe(compute: Callable[[], float]) -> float:
    """NaN for a feature the signal does not support; other errors propagate to the caller."""
    try:
        value = float(compute())
    except (NoScore, parselmouth.PraatError):
        return np.nan
    return value if np.isfinite(value) else np.nan


def _pitch_features(f0: np.ndarray) -> dict[str, float]:
    voiced = f0[f0 > 0]
    semitones = 12.0 * np.log2(voiced) if voiced.size else voiced
    enough = voiced.size >= 2
    return {
        "f0_median_hz": float(np.median(voiced)) if voiced.size else np.nan,
        "f0_std_st": float(np.std(semitones)) if enough else np.nan,
        "f0_range_st": float(np.subtract(*np.percentile(semitones, [95, 5]))) if enough else np.nan,
        "voiced_fraction": float(voiced.size / f0.size) if f0.size else np.nan,
    }


def _voice_quality(sound: parselmouth.Sound) -> dict[str, float]:
    points = call(sound, "To PointProcess (periodic, cc)", 75.0, 600.0)
    harmonicity = sound.to_harmonicity_cc()
    return {
        "jitter_local": _safe(lambda: call(points, "Get jitter (local)", *_PERIOD_ARGS)),
        "shimmer_local_db": _safe(
            lambda: call([sound, points], "Get shimmer (local_dB)", *_PERIOD_ARGS, 1.6)
        ),
        "hnr_db": _safe(lambda: call(harmonicity, "Get mean", 0.0, 0.0)),
    }


_H1_H2_CHUNK = 256
"""Voiced frames whose spectra are computed at once (a chunk holds ~8 MB of spectra)."""


def _h1_h2(audio: np.ndarray, fs: int, times: np.ndarray, f0: np.ndarray) -> float:
    """Median H1−H2 over voiced frames: the level of the first harmonic above the second,
    each the spectral peak within ±10 % of its nominal frequency. Frames reaching past either
    end of the audio are skipped; the spectra of a chunk of frames are one FFT call."""
    size = int(0.04 * fs)
    n_fft = 4096
    window = np.hanning(size)
    freqs = np.fft.rfftfreq(n_fft, 1 / fs)
    starts = (times[f0 > 0] * fs).astype(int) - size // 2
    inside = (starts >= 0) & (starts + size <= audio.size)
    starts, voiced_f0 = starts[inside], f0[f0 > 0][inside]
    # Each harmonic's band [0.9 k f0, 1.1 k f0] as a slice of the ascending frequencies.
    bands = [
        (
            np.searchsorted(freqs, 0.9 * k * voiced_f0),
            np.searchsorted(freqs, 1.1 * k * voiced_f0, "right"),
        )
        for k in (1, 2)
    ]
    values = []
    for first in range(0, starts.size, _H1_H2_CHUNK):
        chunk = starts[first : first + _H1_H2_CHUNK]
        frames = audio[chunk[:, np.newaxis] + np.arange(size)] * window
        levels = 20 * np.log10(np.abs(np.fft.rfft(frames, n_fft, axis=1)) + 1e-12)
        for row, level in enumerate(levels, start=first):
            peaks = [level[low[row] : high[row]].max() for low, high in bands]
            values.append(peaks[0] - peaks[1])
    return float(np.median(values)) if values else np.nan


def _formant_features(audio: np.ndarray, fs: int, times: np.ndarray, f0: np.ndarray) -> dict:
    """Formant statistics over voiced frames, from the Burg analysis ``vsa_corners`` runs
    (:func:`pathbench_flow.measures.vsa.burg_formants`) with the 5500 Hz ceiling."""
    frame_times, formants = vsa.burg_formants(audio, fs, _FORMANT_CEILING_HZ, 4)
    keep = pitch.voicing_at(frame_times, times, f0)
    tracks = np.where(formants > 0, formants, np.nan)[keep]
    if tracks.shape[0] == 0:
        return {
            name: np.nan
            for name in (
                "f1_median_hz",
                "f2_median_hz",
                "f3_median_hz",
                "formant_dispersion_hz",
                "f2_iqr_hz",
            )
        }
    medians = np.nanmedian(tracks, axis=0) if np.isfinite(tracks).any() else np.full(4, np.nan)
    f2 = tracks[:, 1][np.isfinite(tracks[:, 1])]
    return {
        "f1_median_hz": float(medians[0]),
        "f2_median_hz": float(medians[1]),
        "f3_median_hz": float(medians[2]),
        "formant_dispersion_hz": float((medians[3] - medians[0]) / 3.0),
        "f2_iqr_hz": float(np.subtract(*np.percentile(f2, [75, 25]))) if f2.size else np.nan,
    }


def _spectral_features(audio: np.ndarray, fs: int) -> dict[str, float]:
    freqs, power = welch(audio, fs=fs, nperseg=min(1024, len(audio)))
    band = (freqs >= 100) & (freqs <= 5000) & (power > 0)
    slope = (
        np.polyfit(np.log2(freqs[band]), 10 * np.log10(power[band]), 1)[0]
        if band.sum() >= 2
        else np.nan
    )
    positive = power[power > 0]
    cepstra = mfcc.mfcc(audio.astype(np.float32), fs, **_MFCC)
    features = {
        "spectral_tilt_db_oct": float(slope),
        "spectral_centroid_hz": float(np.sum(freqs * power) / np.sum(power))
        if power.sum() > 0
        else np.nan,
        "spectral_flatness": float(np.exp(np.mean(np.log(positive))) / np.mean(positive))
        if positive.size
        else np.nan,
    }
    features.update({f"mfcc{k}_mean": float(cepstra[k].mean()) for k in range(1, 5)})
    return features


def utterance_features(audio: np.ndarray, fs: int) -> dict[str, float]:
    """All 24 features of one utterance, in schema order, NaN where unmeasurable."""
    sound = parselmouth.Sound(np.asarray(audio, dtype=np.float64), sampling_frequency=fs)
    times, f0 = pitch.pitch_track(audio, fs)
    values: dict[str, float] = {}
    values.update(_pitch_features(f0))
    values.update(_voice_quality(sound))
    values["cpps_db"] = _safe(lambda: tracks.cpps(audio, fs))
    values["h1_h2_db"] = _h1_h2(audio, fs, times, f0)
    values.update(_formant_features(audio, fs, times, f0))
    values.update(_spectral_features(audio, fs))
    values["wada_snr_db"] = _safe(lambda: wada_snr.wada_snr(audio, fs))
    values["speech_rate_syll_s"] = _safe(lambda: speech_rate.speech_rate(audio, fs))
    values["pause_fraction"] = _safe(lambda: speech_rate.pause_fraction(audio, fs))
    return {name: values[name] for name in FEATURE_NAMES}
