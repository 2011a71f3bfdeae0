"""Reading one recording for validation, once: what kind of file it is, its bytes, their
SHA-256, its header and its samples.

Validation reads every byte of every recording anyway, so everything it learns about a file
comes from that one read: the digest is the SHA-256 of the file's bytes, the digest
``wav_hash.scp`` holds (PathBench's ``scripts/generate_wav_hashes.py``), so byte-identical
copies shared by a test and a reference set are found without a ``wav_hash.scp``. Every defect
is an :class:`AudioDefect` naming what is wrong and how to fix it; the caller adds where.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from pathbench_flow.common.staging import located
from pathbench_flow.data.wavcheck import wav_header

MIN_SAMPLE_RATE = 4_000
"""Half the telephone rate (8 kHz), the lowest rate speech is recorded at: below it the band
ends under 2 kHz, beneath the second formant, so a lower rate is a damaged header, not speech."""
MAX_SAMPLE_RATE = 384_000
"""The highest rate audio converters record at (384 kHz; DXD is 352.8 kHz). libsndfile accepts
any positive rate, also a damaged header's 2.1 GHz, whose audio resamples to a few samples."""
MAX_CHANNELS = 64
"""The largest microphone arrays recorded into one file (Eigenmike em64); libsndfile accepts
1,024, and decoding a damaged header's count would allocate that many channels of audio."""
FILE_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
)
"""What a path that is no regular file is; reading one would block (a FIFO) or never end
(``/dev/zero``), so such a path is named and never opened."""
MISSING_FIX = "fix the path (relative paths resolve against the dataset directory)"
ACCESS_FIX = "fix the path or its permissions: the user running the workflow must read it"
EXPORT = "export the recording again from its source"
LOSSY_SUBTYPES = {
    "MPEG_LAYER_I": "MPEG Layer I",
    "MPEG_LAYER_II": "MPEG Layer II (MP2)",
    "MPEG_LAYER_III": "MPEG Layer III (MP3)",
    "VORBIS": "Ogg Vorbis",
    "OPUS": "Opus",
    "GSM610": "GSM 06.10",
    "IMA_ADPCM": "IMA ADPCM",
    "MS_ADPCM": "Microsoft ADPCM",
    "VOX_ADPCM": "OKI/Dialogic ADPCM",
    "G721_32": "G.721 ADPCM",
    "G723_24": "G.723 ADPCM",
    "G723_40": "G.723 ADPCM",
    "NMS_ADPCM_16": "NMS ADPCM",
    "NMS_ADPCM_24": "NMS ADPCM",
    "NMS_ADPCM_32": "NMS ADPCM",
    "ULAW": "mu-law (G.711)",
    "ALAW": "A-law (G.711)",
}
"""libsndfile's sample encodings that discard signal: a perceptual codec (MP3, Vorbis, Opus)
removes what a listener would not miss, which spectral measures do see (CPP 9 % higher on an
MP3 of a WAV); ADPCM, GSM and G.711 quantise coarsely. Keyed by ``SoundFile.subtype``, so a WAV
that holds one is named as well as an .mp3."""
UNDECODABLE_LOSSY_TAGS = {
    0x0055: "MPEG Layer III (MP3)",
    0x00FF: "AAC",
    0x1600: "AAC",
    0x1610: "AAC",
}
"""WAV format tags of lossy codecs libsndfile cannot decode."""


class AudioDefect(Exception):
    """A recording validation cannot use: ``problem`` says what is wrong, ``fix`` what to do."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix


@dataclass(frozen=True)
class AudioFacts:
    """What validation read from a recording; ``sha256`` is the digest of the file's bytes."""

    duration_s: float
    sample_rate: int
    channels: int
    sha256: str
    codec: str = ""
    """The lossy codec the file's samples were stored with (:data:`LOSSY_SUBTYPES`), or empty."""


def read_recording(path: Path) -> tuple[np.ndarray, AudioFacts]:
    """The samples of ``path`` (float32, frames × channels) and its facts, from one read of
    its bytes; raises :class:`AudioDefect` for a file that is no usable recording."""
    raw = _regular_file_bytes(path)
    header = wav_header(raw)
    inconsistency = header.inconsistency() if header else None
    if inconsistency:
        raise AudioDefect(f"audio file is damaged: {inconsistency}", f"{EXPORT} (sox, ffmpeg)")
    try:
        with sf.SoundFile(io.BytesIO(raw)) as handle:
            rate, channels = handle.samplerate, handle.channels
            codec = LOSSY_SUBTYPES.get(handle.subtype, "")
            _check_layout(rate, channels)
            # libsndfile cannot seek in some codecs' files (GSM 06.10 WAV); soundfile then
            # reads only a given number of frames, which the header states.
            frames = -1 if handle.seekable() else handle.frames
            samples = handle.read(frames, dtype="float32", always_2d=True)
    except sf.LibsndfileError as exc:
        lossy = _undecodable_lossy(raw, header.format_tag if header else None)
        raise AudioDefect(
            f"audio file is unreadable ({exc.error_string})"
            + (f": it holds {lossy}, a lossy codec libsndfile cannot decode" if lossy else ""),
            "convert it to WAV/FLAC"
            + (
                " from the original recording; a decoded lossy copy keeps the codec's spectrum"
                if lossy
                else ""
            ),
        ) from None
    if samples.shape[0] == 0:
        raise AudioDefect("audio file is empty", "replace the recording")
    truncation = header.truncation() if header else None
    if truncation is not None:
        declared_s, held_s = truncation
        raise AudioDefect(
            f"audio file is truncated: its header declares {declared_s:.3f} s of audio, "
            f"the file holds {held_s:.3f} s",
            "copy or export the recording again (an interrupted copy or recording)",
        )
    _check_finite(samples, rate)
    digest = hashlib.sha256(raw).hexdigest()
    return samples, AudioFacts(samples.shape[0] / rate, rate, channels, digest, codec)


def _undecodable_lossy(raw: bytes, format_tag: int | None) -> str:
    """The lossy codec of a file libsndfile refused, when its bytes say: an MP4/M4A container
    (``ftyp``), raw AAC (an ADTS frame header) or a WAV whose format tag names one."""
    if format_tag in UNDECODABLE_LOSSY_TAGS:
        return f"{UNDECODABLE_LOSSY_TAGS[format_tag]} in a WAV file"
    if raw[4:8] == b"ftyp":
        return "an MP4/M4A container (usually AAC)"
    if len(raw) > 1 and raw[0] == 0xFF and raw[1] & 0xF6 == 0xF0:
        return "AAC (ADTS)"
    return ""


def _regular_file_bytes(path: Path) -> bytes:
    """The bytes of ``path`` once it is known to be a regular file (symlinks followed)."""
    try:
        path = located(path)
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        dangling = f" (a symbolic link to {os.readlink(path)})" if path.is_symlink() else ""
        raise AudioDefect(f"audio file is missing{dangling}", MISSING_FIX) from None
    except OSError as exc:
        raise AudioDefect(f"audio file cannot be opened ({exc.strerror})", ACCESS_FIX) from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in FILE_KINDS if test(mode)), "a special file")
        raise AudioDefect(
            f"audio path is {kind}, not a regular file", "list the recording's audio file"
        )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise AudioDefect(f"audio file cannot be read ({exc.strerror})", ACCESS_FIX) from None


def _check_layout(rate: int, channels: int) -> None:
    """Refuse header values no recording has, before decoding what they describe."""
    if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
        raise AudioDefect(
            f"audio file is damaged: its header declares a sample rate of {rate} Hz, outside "
            f"the {MIN_SAMPLE_RATE}-{MAX_SAMPLE_RATE} Hz any recording of speech has",
            f"{EXPORT} with its true sample rate",
        )
    if channels > MAX_CHANNELS:
        raise AudioDefect(
            f"audio file is damaged: its header declares {channels} channels, more than the "
            f"{MAX_CHANNELS} of the largest microphone arrays",
            f"{EXPORT} with its real channels",
        )


def _check_finite(samples: np.ndarray, rate: int) -> None:
    """Refuse NaN and infinite samples: every measure would compute on them (WADA-SNR reads
    all-NaN audio as -20 dB with status ok) and no recorder writes them, so they come from a
    broken processing step of a float WAV. A DOUBLE sample beyond float32's range counts as
    infinite: every stage loads float32, where it is."""
    finite = np.isfinite(samples)
    if finite.all():
        return
    bad_frames = np.flatnonzero(~finite.all(axis=1))
    n_bad = finite.size - int(np.count_nonzero(finite))
    n_nan = int(np.count_nonzero(np.isnan(samples)))
    raise AudioDefect(
        f"audio holds {n_bad} of {finite.size} samples that are not finite numbers "
        f"({n_nan} NaN, {n_bad - n_nan} infinite) from {bad_frames[0] / rate:.3f} s to "
        f"{(bad_frames[-1] + 1) / rate:.3f} s",
        f"{EXPORT}: NaN and infinite samples come from a broken processing step",
    )
