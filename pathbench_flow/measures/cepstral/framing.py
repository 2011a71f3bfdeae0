"""What every cepstral measure shares: the sample-rate check and the frame blocks.

Frames are analysed in blocks of :data:`CHUNK_FRAMES` so that memory stays bounded on long
recordings while each block is large enough for vectorised FFTs and matrix products.
"""

from __future__ import annotations

from collections.abc import Iterator

from pathbench_flow import SAMPLE_RATE

CHUNK_FRAMES = 512
"""Frames analysed per block; bounds memory on long recordings (arrays scale with frames)."""


def require_rate(fs: int) -> None:
    """Both definitions are tied to 16 kHz (FFT lengths, bins); other rates are caller bugs."""
    if fs != SAMPLE_RATE:
        raise ValueError(f"cepstral measures need audio at {SAMPLE_RATE} Hz, got {fs} Hz")


def chunks(n_frames: int, size: int | None = None) -> Iterator[tuple[int, int]]:
    """[start, stop) frame ranges of at most ``size`` (default CHUNK_FRAMES) frames covering
    all frames."""
    size = size or CHUNK_FRAMES
    for start in range(0, n_frames, size):
        yield start, min(start + size, n_frames)
