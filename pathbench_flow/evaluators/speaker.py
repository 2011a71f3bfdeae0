"""Speaker-level measures: one value from all of a speaker's utterances.

The ``compat`` option and the unvoiced rule are those of :mod:`pathbench_flow.evaluators.signal`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.lazy import lazy_module
from pathbench_flow.common.status import UNSUPPORTED_LANGUAGE
from pathbench_flow.evaluators.base import (
    Item,
    LanguageAwareSpeakerEvaluator,
    ReferenceFreeSpeakerEvaluator,
    Score,
)
from pathbench_flow.evaluators.options import Boolean, checked
from pathbench_flow.evaluators.signal import (
    PATHBENCH,
    Compat,
    pathbench_only,
    pathbench_zero_when_unvoiced,
)
from pathbench_flow.measures.vowel_tables import PATHBENCH_TABLES, VOWEL_FORMANTS

# Loaded when a job first scores with them (Praat, scikit-learn), not when the class is read.
pitch = lazy_module("pathbench_flow.measures.pitch")
vsa = lazy_module("pathbench_flow.measures.vsa")
vsa_pathbench = lazy_module("pathbench_flow.measures.vsa_pathbench")

UseSpk2Gender = Annotated[bool, Boolean()]
"""The vowel-space measures' ``use_spk2gender`` option."""


class F0RangeEvaluator(ReferenceFreeSpeakerEvaluator):
    """Range of the speaker's pooled voiced F0; a narrow range signals monotone speech.

    ``compat="pathbench"``: a speaker without any voiced frame scores 0.0 (status
    ``unvoiced``), as in PathBench; ``compat="none"``: NaN with that status.
    """

    name = "f0_range"
    shared_tracks = ("pitch",)
    unit = "Hz"
    pathbench_compatible = True

    @checked
    def __init__(self, compat: Compat = PATHBENCH) -> None:
        self.compat = compat
        self.pathbench_compatible = compat == PATHBENCH

    def _score_audio_list(self, audios: list[np.ndarray]) -> float:
        return pitch.f0_range(audios, SAMPLE_RATE)

    def score_loaded(self, audios: list[np.ndarray], items: Sequence[Item]) -> Score:
        score = super().score_loaded(audios, items)
        return pathbench_zero_when_unvoiced(score) if self.pathbench_compatible else score


class _VowelSpaceEvaluator(LanguageAwareSpeakerEvaluator):
    """Shared by both vowel-space evaluators: the gender option and PathBench's failure rule.

    A failed estimate scores 0.0 (not NaN) with its status kept, so the speaker stays in the
    common speaker set, as PathBench does; a language without a table stays NaN.
    ``use_spk2gender=True`` takes the gender from spk2gender where the speaker has one;
    otherwise (the default, as in PathBench) it is estimated from F0.
    """

    unit = "Hz^2"

    @checked
    def __init__(self, use_spk2gender: UseSpk2Gender = False) -> None:
        self.use_spk2gender = use_spk2gender

    def _gender(self) -> str | None:
        """ "male"/"female" from spk2gender when asked for and known, else None (estimate)."""
        return vsa.normalise_gender(self._speaker_gender) if self.use_spk2gender else None

    def score_loaded(self, audios: list[np.ndarray], items: Sequence[Item]) -> Score:
        result = super().score_loaded(audios, items)
        if result.value is None and result.status != UNSUPPORTED_LANGUAGE:
            return Score(0.0, result.status, result.message)
        return result


class VSAEvaluator(_VowelSpaceEvaluator):
    """Vowel space area as PathBench computes it (:mod:`pathbench_flow.measures.vsa_pathbench`):
    sklearn outlier mixture and k-means seeded with one cluster per vowel of the language's
    table. Only ``compat="pathbench"`` exists; this project's variant is ``vsa_corners``.
    """

    name = "vsa"
    shared_tracks = ("pitch",)
    languages = tuple(sorted(PATHBENCH_TABLES))
    pathbench_compatible = True

    @checked
    def __init__(
        self,
        use_spk2gender: UseSpk2Gender = False,
        compat: Annotated[str, pathbench_only("vsa_corners")] = PATHBENCH,
    ) -> None:
        super().__init__(use_spk2gender)
        self.compat = compat

    def _score_audio_list(self, audios: list[np.ndarray], language: str) -> float:
        return vsa_pathbench.vsa_pathbench(audios, SAMPLE_RATE, language, self._gender())


class VSACornersEvaluator(_VowelSpaceEvaluator):
    """Vowel space area from corner-vowel clusters (:mod:`pathbench_flow.measures.vsa`).

    Differs from ``vsa`` on purpose: published corner vowels only (the polygon VSA is defined
    on), a deterministic outlier mixture in standardised units, clusters no frame joined are
    dropped instead of entering with their textbook position, and at least 0.3 s of voicing.
    Languages: those with a checked corner-vowel table.
    """

    name = "vsa_corners"
    shared_tracks = ("pitch",)
    languages = tuple(sorted(VOWEL_FORMANTS))

    def _score_audio_list(self, audios: list[np.ndarray], language: str) -> float:
        return vsa.vsa(audios, SAMPLE_RATE, language, self._gender())
