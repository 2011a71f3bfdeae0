"""Evaluator names → classes, including third-party evaluators from entry points.

A plugin package adds an evaluator without touching pathbench-flow by declaring, in its own
``pyproject.toml``::

    [project.entry-points."pathbench_flow.evaluators"]
    my_measure = "my_package.module:MyMeasureEvaluator"

The class must subclass one of the abstract classes in :mod:`pathbench_flow.evaluators.base` and set
``name`` (equal to the entry-point name), ``direction`` and ``unit``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from pathbench_flow.evaluators import lookup, neural, reference, reference_text, signal, speaker
from pathbench_flow.evaluators.base import Evaluator

ENTRY_POINT_GROUP = "pathbench_flow.evaluators"

_BUILTIN: tuple[type[Evaluator], ...] = (
    signal.CPPEvaluator,
    signal.CPPSEvaluator,
    signal.WadaSNREvaluator,
    signal.StdPitchEvaluator,
    signal.SpeechRateEvaluator,
    signal.PraatSpeechRateEvaluator,
    speaker.F0RangeEvaluator,
    speaker.VSAEvaluator,
    speaker.VSACornersEvaluator,
    reference_text.SphinxWEREvaluator,
    reference_text.SphinxPEREvaluator,
    reference_text.SphinxGOPEvaluator,
    reference_text.WPMEvaluator,
    reference.PEstoiEvaluator,
    reference.PStoiEvaluator,
    reference.NADEvaluator,
    lookup.Spk2AgeEvaluator,
    neural.ArtPEvaluator,
    neural.ConfidenceEvaluator,
    neural.DArtPEvaluator,
    neural.PEREvaluator,
    neural.DPEREvaluator,
    neural.DoubleASREvaluator,
)


@dataclass(frozen=True)
class EvaluatorInfo:
    """What the workflow needs to know about an evaluator before instantiating it."""

    name: str
    cls: type[Evaluator]
    kind: str
    direction: int
    unit: str
    languages: tuple[str, ...] | None
    pathbench_compatible: bool
    level: str
    category: str
    trimmable: bool
    source: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "direction": self.direction,
            "unit": self.unit,
            "languages": list(self.languages) if self.languages else None,
            "pathbench_compatible": self.pathbench_compatible,
            "level": self.level,
            "category": self.category,
            "trimmable": self.trimmable,
            "source": self.source,
        }


def _abc_of(cls: type[Evaluator]) -> str:
    """The nearest abstract ancestor defined in :mod:`.base`: the evaluator's kind."""
    for base in cls.__mro__:
        if base.__module__ == "pathbench_flow.evaluators.base" and base is not Evaluator:
            return base.__name__
    raise TypeError(f"{cls.__name__} does not derive from a pathbench-flow evaluator class")


def _info(cls: type[Evaluator], source: str) -> EvaluatorInfo:
    return EvaluatorInfo(
        name=cls.name,
        cls=cls,
        kind=_abc_of(cls),
        direction=cls.direction,
        unit=cls.unit,
        languages=cls.languages,
        pathbench_compatible=cls.pathbench_compatible,
        level=cls.level,
        category=cls.category,
        trimmable=cls.trimmable,
        source=source,
    )


@cache
def _catalogue() -> dict[str, EvaluatorInfo]:
    found = {cls.name: _info(cls, "pathbench-flow") for cls in _BUILTIN}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        cls = point.load()
        if not (isinstance(cls, type) and issubclass(cls, Evaluator)):
            raise TypeError(f"entry point {point.name} = {point.value} is not an Evaluator class")
        if point.name in found:
            raise ValueError(f"entry point {point.name} clashes with an existing evaluator")
        if getattr(cls, "name", None) != point.name:
            raise ValueError(f"entry point {point.name}: class name attribute must match")
        found[point.name] = _info(cls, point.value)
    return dict(sorted(found.items()))


def names() -> list[str]:
    """Every available evaluator name, sorted."""
    return list(_catalogue())


def info(name: str) -> EvaluatorInfo:
    """Metadata of one evaluator; an unknown name lists the known ones."""
    try:
        return _catalogue()[name]
    except KeyError:
        raise KeyError(f"unknown evaluator {name!r}; known: {', '.join(names())}") from None


def create(name: str, **options: Any) -> Evaluator:
    """A ready instance of evaluator ``name`` configured with ``options``."""
    return info(name).cls(**options)
