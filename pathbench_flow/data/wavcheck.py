"""The RIFF/WAVE header of a recording, read from its bytes: what libsndfile does not check.

libsndfile reads a WAV whose data chunk is cut short without complaint: it returns the frames
that are there. An interrupted copy or recording therefore scores as a shorter, healthy file.
The header still says how much audio there should be, so comparing the data chunk's declared
size with the bytes the file holds finds the damage.

libsndfile also ignores a header's byte rate and block align, which other readers trust:
scipy refuses a PCM file whose byte rate is not sample rate × block align, and takes the
sample width from block align where libsndfile takes it from the bits per sample. On such a
file the readers disagree about the audio; no correct writer produces one.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

_CHUNK = struct.Struct("<4sI")
_FMT = struct.Struct("<HHIIHH")
_EXTENSIBLE = 0xFFFE
_SUBFORMAT_AT = 24
"""Offset in an extensible ``fmt `` chunk of the sub-format GUID, whose first two bytes are the
format tag of the samples."""
FRAME_FORMATS = {1: "PCM", 3: "IEEE float", 6: "A-law", 7: "mu-law"}
"""Format tags whose frames are whole samples side by side, so block align and byte rate follow
from channels, bits and rate; compressed formats (ADPCM, GSM) define them otherwise."""


@dataclass(frozen=True)
class WavHeader:
    """The ``fmt `` chunk's values and the data chunk's declared and held sizes in bytes."""

    format_tag: int
    channels: int
    sample_rate: int
    byte_rate: int
    block_align: int
    bits: int
    declared_bytes: int
    held_bytes: int

    def inconsistency(self) -> str | None:
        """What in the header contradicts itself, for the formats whose layout it fixes."""
        name = FRAME_FORMATS.get(self.format_tag)
        if name is None:
            return None
        width = self.channels * -(-self.bits // 8)
        if self.block_align != width:
            return (
                f"its {name} header declares a block align of {self.block_align} bytes where "
                f"{self.channels} channel(s) of {self.bits} bits take {width}: readers disagree "
                "on where its samples lie"
            )
        if self.byte_rate != self.sample_rate * self.block_align:
            return (
                f"its {name} header declares {self.byte_rate} bytes per second where "
                f"{self.sample_rate} Hz × {self.block_align} bytes per frame make "
                f"{self.sample_rate * self.block_align}: readers disagree on its duration "
                "(scipy refuses it)"
            )
        return None

    def truncation(self) -> tuple[float, float] | None:
        """``(declared seconds, held seconds)`` when the data chunk extends past the end of
        the file, else None."""
        if self.declared_bytes <= self.held_bytes or self.byte_rate == 0:
            return None
        return self.declared_bytes / self.byte_rate, self.held_bytes / self.byte_rate


def wav_header(raw: bytes) -> WavHeader | None:
    """The header of the RIFF/WAVE file whose bytes are ``raw``; None for other formats (RF64,
    FLAC, ...) and for files without a ``fmt `` chunk before the data, which this module does
    not read (libsndfile judges those)."""
    if len(raw) < 12 or raw[:4] != b"RIFF" or raw[8:12] != b"WAVE":
        return None
    fmt: tuple[int, ...] | None = None
    position = 12
    while position + _CHUNK.size <= len(raw):
        name, length = _CHUNK.unpack_from(raw, position)
        start = position + _CHUNK.size
        if name == b"fmt " and length >= _FMT.size and start + length <= len(raw):
            fmt = _FMT.unpack_from(raw, start)
            if fmt[0] == _EXTENSIBLE and length >= _SUBFORMAT_AT + 2:
                fmt = (struct.unpack_from("<H", raw, start + _SUBFORMAT_AT)[0], *fmt[1:])
        elif name == b"data":
            if fmt is None:
                return None
            return WavHeader(*fmt, declared_bytes=length, held_bytes=len(raw) - start)
        position = start + length + (length & 1)
    return None
