"""Metric categories, in one place: PathBench's taxonomy of measures and this project's lookup.

PathBench groups its measures by what they need besides the audio: nothing (signal and
speaker measures), a model's view of the audio (Reference-Free (Model)), the transcription
(Reference-Text) or parallel recordings of healthy speakers (Reference-Audio (Parallel));
its published table (``results_table.csv``, built by ``scripts/combine_results.py``) lists
its rows in that order under those names. Every stage that knows categories reads them here:
evaluators declare a :attr:`Category.key`, the correlation stage refuses any other, the
results table orders its rows and names their groups by :attr:`Category.table_name`, and the
figures colour and label by it. A category known to one stage and unknown to the next once
stopped every run with a model measure at ``correlate``; one list makes that impossible.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Category:
    """One group of metrics.

    ``key`` is what an evaluator declares (``Evaluator.category``) and what the correlation
    tables record; plugins declare it too, so it never changes. ``table_name`` is PathBench's
    name of the group in its published table. ``colour`` is the group's colour in every figure.
    """

    key: str
    table_name: str
    colour: str


SIGNAL = Category("reference-free signal", "Reference-Free (Signal)", "#4c72b0")
SPEAKER = Category("reference-free speaker", "Reference-Free (Speaker)", "#55a868")
MODEL = Category("reference-free model", "Reference-Free (Model)", "#8172b3")
TEXT = Category("reference-text", "Reference-Text", "#dd8452")
AUDIO = Category("reference-audio", "Reference-Audio (Parallel)", "#c44e52")
EXTERNAL = Category("external predictor", "External Predictor", "#da8bc3")
"""A user's own predictor, read from a CSV (config ``predictors``), unless its entry names one
of the categories above. PathBench's categories are defined by what a measure reads, which
the workflow cannot check for scores computed elsewhere, so by default it does not file them
under one; this project's, not PathBench's."""
LOOKUP = Category("lookup", "Lookup", "#8c8c8c")
"""Pre-computed values such as ``spk2age``: baselines rather than measures, so listed last;
this project's, not PathBench's."""

CATEGORIES: tuple[Category, ...] = (SIGNAL, SPEAKER, MODEL, TEXT, AUDIO, EXTERNAL, LOOKUP)
"""Every category, in PathBench's table order, then this project's."""

_BY_KEY = {category.key: category for category in CATEGORIES}


def category(key: str) -> Category:
    """The category an evaluator declared as ``key``.

    Raises:
        ValueError: naming the unknown key and the known ones.
    """
    require_known([key])
    return _BY_KEY[key]


def require_known(keys: Iterable[str]) -> None:
    """Refuse metric categories outside :data:`CATEGORIES`, naming them and the known ones."""
    unknown = sorted(set(keys) - set(_BY_KEY))
    if unknown:
        raise ValueError(f"unknown metric categories {unknown}; known: {list(_BY_KEY)}")


def rank(key: str) -> int:
    """Position of a category in table order (its figures and tables sort by it)."""
    return CATEGORIES.index(category(key))
