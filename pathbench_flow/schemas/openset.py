"""The frozen acoustic feature schema the open-set evaluation reads.

Candidate configurations name features by bit position in a 24-bit mask, and fold files, count
tables and results are compared across runs, so the order below is part of the schema: it may
never change under the same :data:`SCHEMA_ID`. A new feature or a new order needs a new id.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

SCHEMA_ID = "pathbench-acoustic-24/1"

FEATURE_NAMES: tuple[str, ...] = (
    "f0_median_hz",
    "f0_std_st",
    "f0_range_st",
    "voiced_fraction",
    "jitter_local",
    "shimmer_local_db",
    "hnr_db",
    "cpps_db",
    "h1_h2_db",
    "spectral_tilt_db_oct",
    "f1_median_hz",
    "f2_median_hz",
    "f3_median_hz",
    "formant_dispersion_hz",
    "f2_iqr_hz",
    "spectral_centroid_hz",
    "spectral_flatness",
    "mfcc1_mean",
    "mfcc2_mean",
    "mfcc3_mean",
    "mfcc4_mean",
    "wada_snr_db",
    "speech_rate_syll_s",
    "pause_fraction",
)
"""Mask bit ``i`` (0-based) selects ``FEATURE_NAMES[i]``."""

FEATURE_SCHEMA = pa.schema(
    [("utt_id", pa.string()), ("speaker_id", pa.string()), ("group_id", pa.string())]
    + [(name, pa.float64()) for name in FEATURE_NAMES]
)
"""Arrow schema of ``openset/features.parquet``: one row of features per utterance."""

N_FEATURES = len(FEATURE_NAMES)
FULL_MASK = (1 << N_FEATURES) - 1
"""The mask selecting every feature; a valid mask is a nonzero subset of these bits."""


def mask_from_names(names: Iterable[str]) -> int:
    """The mask selecting exactly ``names``.

    Configuration files list features by name so they survive review; unknown or repeated names
    are almost always typos, so they raise ``ValueError`` instead of being ignored.
    """
    mask = 0
    for name in names:
        if name not in FEATURE_NAMES:
            raise ValueError(f"unknown feature {name!r} (schema {SCHEMA_ID})")
        bit = 1 << FEATURE_NAMES.index(name)
        if mask & bit:
            raise ValueError(f"feature {name!r} listed twice")
        mask |= bit
    return mask


def mask_text(mask: int) -> str:
    """The features ``mask`` selects, by name in schema order, joined with ``+``: the mask as a
    reader of a results table can check it (``499`` is
    ``f0_median_hz+f0_std_st+jitter_local+shimmer_local_db+hnr_db+cpps_db+h1_h2_db``)."""
    return "+".join(FEATURE_NAMES[i] for i in mask_columns(mask))


def mask_columns(mask: int) -> tuple[int, ...]:
    """Column positions selected by ``mask``, ascending, so masked matrices keep schema order."""
    return tuple(i for i in range(N_FEATURES) if mask >> i & 1)
