"""librosa's MFCC front end (centred STFT, Slaney mel filters, dB, orthonormal DCT) in numpy.

NAD's MFCCs and the open-set features' must stay librosa's numbers, but importing librosa's
spectral code loads all of ``librosa.core`` (scipy.signal, pitch tracking, constant-Q: about
1-2.5 CPU-s), which every job computing a few hundred MFCCs paid. This module builds the same
arrays from the same definitions and hands the FFTs to scipy.fft as librosa does, with each
frame's transform along the same axis, so the values are librosa's to the last bit (tests
compare them). float64 audio takes NAD's composition (float64 filters); float32 audio takes
``librosa.feature.mfcc``'s own single-precision path: the spectrum rounded to complex64 as
librosa stores it, float32 filters, float32 dB.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import scipy.fft
from numpy.lib.stride_tricks import sliding_window_view

_SLANEY_LINEAR_HZ_PER_MEL = 200.0 / 3.0
"""Slaney's mel scale is linear below 1 kHz, 200/3 Hz per mel..."""
_SLANEY_LOG_FROM_HZ = 1000.0
_SLANEY_LOG_STEP = np.log(6.4) / 27.0
"""...and logarithmic above, 27 mels per factor 6.4."""
_POWER_FLOOR = 1e-10
"""librosa's ``amin``: powers below it are read as it before taking dB."""
TOP_DB = 80.0
"""dB values more than this below the utterance's maximum are raised to that floor."""


@cache
def _hann(length: int) -> np.ndarray:
    """The periodic Hann window, evaluated as scipy's ``get_window('hann', length)`` does."""
    phase = np.linspace(-np.pi, np.pi, length + 1)
    window = np.zeros(length + 1)
    window += 0.5 * np.cos(0.0 * phase)
    window += 0.5 * np.cos(phase)
    window = window[:-1]
    window.flags.writeable = False  # shared through the cache
    return window


def _hz_to_mel(hz: np.ndarray) -> np.ndarray:
    mels = hz / _SLANEY_LINEAR_HZ_PER_MEL
    log_region = hz >= _SLANEY_LOG_FROM_HZ
    mels[log_region] = _SLANEY_LOG_FROM_HZ / _SLANEY_LINEAR_HZ_PER_MEL + (
        np.log(hz[log_region] / _SLANEY_LOG_FROM_HZ) / _SLANEY_LOG_STEP
    )
    return mels


def _mel_to_hz(mels: np.ndarray) -> np.ndarray:
    hz = _SLANEY_LINEAR_HZ_PER_MEL * mels
    first_log_mel = _SLANEY_LOG_FROM_HZ / _SLANEY_LINEAR_HZ_PER_MEL
    log_region = mels >= first_log_mel
    hz[log_region] = _SLANEY_LOG_FROM_HZ * np.exp(
        _SLANEY_LOG_STEP * (mels[log_region] - first_log_mel)
    )
    return hz


@cache
def mel_filters(
    fs: int, n_fft: int, n_mels: int = 128, dtype: type[np.floating] = np.float64
) -> np.ndarray:
    """Slaney-normalised triangular mel filters from 0 Hz to fs / 2, (n_mels, n_fft // 2 + 1):
    ``librosa.filters.mel(sr=fs, n_fft=n_fft, dtype=dtype)``. Each triangle spans three
    neighbouring mel-spaced edge frequencies and is scaled to unit area in Hz; like librosa's,
    a float32 bank rounds the triangles before scaling them."""
    bin_hz = np.fft.rfftfreq(n=n_fft, d=1.0 / fs)
    lowest, highest = _hz_to_mel(np.array([0.0, fs / 2]))
    edges = _mel_to_hz(np.linspace(lowest, highest, n_mels + 2))
    widths = np.diff(edges)
    offsets = np.subtract.outer(edges, bin_hz)
    filters = np.zeros((n_mels, bin_hz.size), dtype=dtype)
    for band in range(n_mels):
        rising = -offsets[band] / widths[band]
        falling = offsets[band + 2] / widths[band + 1]
        filters[band] = np.maximum(0, np.minimum(rising, falling))
    filters *= (2.0 / (edges[2 : n_mels + 2] - edges[:n_mels]))[:, np.newaxis]
    filters.flags.writeable = False  # shared through the cache
    return filters


def power_spectrogram(audio: np.ndarray, n_fft: int, hop: int) -> np.ndarray:
    """|STFT|² (n_fft // 2 + 1, frames) of ``audio``: Hann frames of ``n_fft`` samples every
    ``hop``, centred on the samples (zeros read beyond both ends), as ``librosa.stft``; in the
    audio's precision (float32 audio: the float64 transform stored as complex64)."""
    if not np.isfinite(audio).all():
        raise ValueError("audio holds non-finite samples")
    half = n_fft // 2
    padded = np.concatenate((np.zeros(half), audio, np.zeros(half)))
    frames = sliding_window_view(padded, n_fft)[::hop].T
    spectrum = scipy.fft.rfft(_hann(n_fft)[:, np.newaxis] * frames, axis=-2)
    if audio.dtype == np.float32:
        spectrum = spectrum.astype(np.complex64)
    # Frame-major in memory, as librosa's: a matrix product over it (the mel filters) sums in
    # an order that depends on the layout.
    return np.asfortranarray(np.abs(spectrum) ** 2)


def mfcc(audio: np.ndarray, fs: int, n_mfcc: int, n_fft: int, hop: int) -> np.ndarray:
    """MFCCs (n_mfcc, frames) of float64 or float32 ``audio`` with librosa's defaults for the
    rest: 128 mel bands, dB with the floor :data:`TOP_DB` below the maximum, type-2
    orthonormal DCT; in the audio's precision."""
    if audio.dtype not in (np.float64, np.float32):
        raise TypeError(f"audio must be float64 or float32, not {audio.dtype}")
    filters = mel_filters(fs, n_fft, dtype=audio.dtype.type)
    mel_power = filters @ power_spectrogram(audio, n_fft, hop)
    db = 10.0 * np.log10(np.maximum(_POWER_FLOOR, mel_power))  # relative to a power of 1
    db = np.maximum(db, db.max() - TOP_DB)
    return scipy.fft.dct(db, axis=-2, type=2, norm="ortho")[:n_mfcc, :]
