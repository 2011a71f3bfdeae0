"""Detecting truncated WAV files from their RIFF header.

libsndfile reads a WAV whose data chunk is cut short without complaint: it returns the frames
that are there. An interrupted copy or recording therefore scores as a shorter, healthy file.
The header still says how much audio there should be, so comparing the data chunk's declared
size with the bytes the file holds finds the damage.
"""

from __future__ import annotations

import struct
from pathlib import Path

_CHUNK = struct.Struct("<4sI")


def wav_truncation(path: Path) -> tuple[float, float] | None:
    """``(declared seconds, held seconds)`` when ``path`` is a RIFF/WAVE file whose data chunk
    extends past the end of the file; None for intact files and other formats (RF64, FLAC,
    ...), which this check does not read."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        head = handle.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        byte_rate = 0
        while True:
            raw = handle.read(_CHUNK.size)
            if len(raw) < _CHUNK.size:
                return None
            name, length = _CHUNK.unpack(raw)
            start = handle.tell()
            if name == b"fmt " and length >= 12:
                byte_rate = struct.unpack("<I", handle.read(12)[8:12])[0]
            elif name == b"data":
                held = size - start
                if length <= held or byte_rate == 0:
                    return None
                return length / byte_rate, held / byte_rate
            handle.seek(start + length + (length & 1))
