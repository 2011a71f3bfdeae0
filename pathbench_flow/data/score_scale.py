"""Which way a dataset's ratings point, and the one place severity ratings are turned round.

Every direction in this project (an evaluator's ``direction``, PathBench's expected signs, the
sign alignment, a predictor's declared direction) reads "+1 = more intelligible", because
PathBench's ratings are intelligibility: higher is better (UASpeech's word accuracy, TORGO's
Frenchay grade A mapped to 5.0, NeuroVoz's 3 = normal; EasyCall's scores "flipped in
directionality to match with the other datasets", PathBench's datasets/*/README.md). Many
clinical scales rate severity instead (a dysarthria severity of 0-4, higher = worse). A
dataset whose ``spk2score`` rates severity says so with ``datasets.<name>.score_scale:
severity``, and its ratings are negated where they become the correlations' ground truth
(:func:`as_intelligibility`), so every r, interval, sign vote, predictor comparison and
meta-analysis downstream is against intelligibility without a case of its own.

Why negate the ratings rather than flip r: negation is the only change that needs no range
(``max + min - score`` would need the scale's ends, which a file need not contain) and that
Pearson and Spearman r, their bootstrap intervals and the Steiger/Wilcoxon tests all see as
the reversed scale; flipping r afterwards would have to be repeated in every stage that
correlates, and one forgotten would invert a result silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

INTELLIGIBILITY = "intelligibility"
SEVERITY = "severity"
SCALES = (INTELLIGIBILITY, SEVERITY)
"""The values of ``datasets.<name>.score_scale`` (workflow/schemas/config.schema.yaml)."""
DEFAULT_SCALE = INTELLIGIBILITY
"""PathBench's convention, and what a dataset without the key is read as."""


def score_scale_of(config: Mapping[str, Any], dataset: str) -> str:
    """The ``score_scale`` of ``dataset`` in a workflow ``config``; the default where the schema
    has not filled it in (a module used with ``skip_validation``)."""
    return _checked(config["datasets"][dataset].get("score_scale", DEFAULT_SCALE))


def _checked(scale: str) -> str:
    if scale not in SCALES:
        raise ValueError(f"score_scale must be one of {', '.join(SCALES)}, not {scale!r}")
    return scale


def as_intelligibility(ratings: pd.Series, scale: str) -> pd.Series:
    """``ratings`` on the intelligibility scale: as they are, or negated for ``severity``.
    ``N/A`` (NaN) stays NaN, so the rated speakers are the same on either scale."""
    return -ratings if _checked(scale) == SEVERITY else ratings


def ground_truth_name(scale: str, file: str = "spk2score") -> str:
    """What a correlation of a dataset on ``scale`` is against, named by its ratings ``file``
    (``spk2score`` or ``utt2score``): the file, or its negation."""
    return f"-{file}" if _checked(scale) == SEVERITY else file


def describe(scale: str, file: str = "spk2score") -> str:
    """One sentence for validation's summary and the logs: how ``file`` is read."""
    if _checked(scale) == SEVERITY:
        return (
            f"{file} rates severity (higher = less intelligible; score_scale: severity): "
            f"correlated as -{file}, so every r is against intelligibility"
        )
    return (
        f"{file} rates intelligibility (higher = more intelligible; score_scale: "
        "intelligibility, PathBench's convention)"
    )


def ground_truth_of(speakers: pd.DataFrame) -> pd.Series:
    """speaker_id → rating on the intelligibility scale (NaN for N/A), from the speakers
    table, where aggregation put it (negated for a severity-rated dataset)."""
    first = speakers.drop_duplicates("speaker_id").set_index("speaker_id")
    return first["ground_truth"].astype(float)
