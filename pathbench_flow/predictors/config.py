"""The ``predictors`` config block, read once into typed entries.

A predictor's scores come either per speaker (``speakers:``, PathBench's ``speaker_id,score``
exchange format) or per utterance (``utterances:``, ``utt_id,score``), which the aggregation
averages per speaker exactly as it averages a built-in utterance measure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SPEAKERS, UTTERANCES = "speakers", "utterances"
ID_COLUMNS: dict[str, str] = {SPEAKERS: "speaker_id", UTTERANCES: "utt_id"}
"""The id column each kind of CSV is keyed by; its header is ``<id column>,score``."""
SCORE_COLUMN = "score"


@dataclass(frozen=True)
class PredictorFile:
    """One dataset's CSV of a predictor: ``kind`` is :data:`SPEAKERS` or :data:`UTTERANCES`."""

    kind: str
    path: Path

    @property
    def header(self) -> list[str]:
        return [ID_COLUMNS[self.kind], SCORE_COLUMN]


@dataclass(frozen=True)
class Predictor:
    """A predictor of the config: its metric name, direction (+1: higher values go with more
    intelligible speech, as an evaluator declares it), category key and CSV per dataset."""

    name: str
    direction: int
    category: str
    files: Mapping[str, PredictorFile]

    def key(self, dataset: str) -> str:
        """The config key of this predictor's CSV for ``dataset``, as problems name it."""
        return f"predictors.{self.name}.datasets.{dataset}.{self.files[dataset].kind}"


def predictors_of(config: Mapping[str, Any]) -> dict[str, Predictor]:
    """The schema-validated ``predictors`` block (name → entry) as :class:`Predictor` objects,
    sorted by name."""
    return {
        name: Predictor(
            name=name,
            direction=int(entry["direction"]),
            category=entry["category"],
            files={
                dataset: PredictorFile(kind, Path(path))
                for dataset, source in sorted(entry["datasets"].items())
                for kind, path in source.items()
            },
        )
        for name, entry in sorted(config["predictors"].items())
    }


def declared_metadata(predictors: Mapping[str, Predictor]) -> dict[str, dict[str, Any]]:
    """What the correlation stage needs of each predictor, where it asks the registry about an
    evaluator: ``{name: {"direction": ..., "category": ...}}`` (JSON-ready, for rule params)."""
    return {
        name: {"direction": predictor.direction, "category": predictor.category}
        for name, predictor in predictors.items()
    }
