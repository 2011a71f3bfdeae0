"""The values an evaluator option may take, declared in its constructor's signature.

A bad value (``cpps: {implementation: fastest}``) would pass the config checks and then fail,
as a traceback, in every job of the run. So a constructor parameter says what it accepts in
its annotation, next to its default::

    def __init__(self, implementation: Annotated[str, OneOf("fast", "praat")] = "fast"): ...

The signature that tells preflight which option names an evaluator takes then tells it the
values too, with no second copy of the rules: :func:`checked` makes the constructor refuse a
bad value, and :func:`value_problems` checks a config's options against the same declarations
without constructing the evaluator (a constructor may resolve models or import its measure's
libraries, which the workflow's parse must not). ``None`` is accepted wherever the
parameter's default is ``None``: it asks for that default. Checks that need the machine (is
the model there, does it have that layer) stay in the evaluator's ``preflight``.
"""

from __future__ import annotations

import functools
import inspect
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pathbench_flow.common.languages import LANGUAGES

Init = TypeVar("Init", bound=Callable[..., None])


def quoted(values: Iterable[Any]) -> str:
    """``'a', 'b'``: values as a message lists them."""
    return ", ".join(repr(value) for value in values)


class Constraint(ABC):
    """What one option accepts: an ``Annotated`` metadata item of a constructor parameter."""

    @abstractmethod
    def allows(self, value: Any) -> bool:
        """Whether ``value`` is accepted."""

    @abstractmethod
    def describe(self) -> str:
        """The accepted values, as the end of "<key> = <value> is not ..."."""

    def problems(self, key: str, value: Any) -> list[str]:
        """What is wrong with ``value`` of option ``key``, naming both and what is accepted
        (nothing: accepted)."""
        return [] if self.allows(value) else [f"{key} = {value!r} is not {self.describe()}"]


class OneOf(Constraint):
    """One of a fixed set of values; ``hint`` adds where to look instead (another evaluator)."""

    def __init__(self, *choices: str, hint: str = "") -> None:
        self.choices, self.hint = choices, hint

    def allows(self, value: Any) -> bool:
        return value in self.choices

    def describe(self) -> str:
        return f"one of {quoted(self.choices)}" + (f"; {self.hint}" if self.hint else "")


@dataclass(frozen=True)
class Integer(Constraint):
    """An integer of at least ``minimum``; YAML's ``true``, a float or a string is none."""

    minimum: int

    def allows(self, value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= self.minimum

    def describe(self) -> str:
        return f"an integer >= {self.minimum}"


class Boolean(Constraint):
    """``true`` or ``false``; a string such as ``"no"`` would otherwise count as true."""

    def allows(self, value: Any) -> bool:
        return isinstance(value, bool)

    def describe(self) -> str:
        return "true or false"


@dataclass(frozen=True)
class Text(Constraint):
    """A non-empty string; ``what`` says what it names (a model, a file)."""

    what: str

    def allows(self, value: Any) -> bool:
        return isinstance(value, str) and bool(value.strip())

    def describe(self) -> str:
        return self.what


MODEL_NAME = Text("a model: a local directory or a Hugging Face id")
"""What a ``model`` option (and each model of a ``models`` mapping) names."""


@dataclass(frozen=True)
class ByLanguage(Constraint):
    """A mapping of known language (:data:`pathbench_flow.common.languages.LANGUAGES`) to a value
    ``each`` accepts; with ``one_for_all`` also a single such value, for every language.

    A language a dataset cannot have would be a model or file never used, silently.
    """

    each: Constraint
    one_for_all: bool = False

    def allows(self, value: Any) -> bool:
        return not self.problems("", value)

    def describe(self) -> str:
        mapping = f"a mapping of language ({quoted(LANGUAGES)}) to {self.each.describe()}"
        if self.one_for_all:
            return f"{self.each.describe()} for every language, or {mapping}"
        return mapping

    def problems(self, key: str, value: Any) -> list[str]:
        if not isinstance(value, Mapping):
            if self.one_for_all and self.each.allows(value):
                return []
            return [f"{key} = {value!r} is not {self.describe()}"]
        found = []
        for language, each in value.items():
            if language in LANGUAGES:
                found += self.each.problems(f"{key}.{language}", each)
            else:
                found.append(f"{key}: {language!r} is not one of the languages {quoted(LANGUAGES)}")
        return found


@functools.cache
def declared(init: Callable[..., None]) -> dict[str, tuple[Constraint, ...]]:
    """The constraints each parameter of ``init`` declares in its annotation.

    A plugin's constructor whose annotations name a type imported for type checkers only
    cannot be evaluated, and so declares nothing: its own ``preflight`` checks its values.
    """
    try:
        hints = typing.get_type_hints(init, include_extras=True)
    except NameError:
        return {}
    return {
        name: tuple(m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Constraint))
        for name, hint in hints.items()
    }


def _problems(key: str, init: Callable[..., None], values: Mapping[str, Any]) -> list[str]:
    """``values`` (parameter → value) against what ``init`` declares; ``key`` prefixes names."""
    constraints = declared(init)
    defaults = {p.name: p.default for p in inspect.signature(init).parameters.values()}
    found = []
    for name, value in values.items():
        if value is None and name in defaults and defaults[name] is None:
            continue
        for constraint in constraints.get(name, ()):
            found += constraint.problems(f"{key}.{name}", value)
    return found


def value_problems(cls: type, options: Mapping[str, Any]) -> list[str]:
    """Every value in ``options`` (an ``evaluator_options`` entry) that the constructor of
    evaluator class ``cls`` declares it does not accept, without constructing it."""
    return _problems(f"evaluator_options.{cls.name}", cls.__init__, options)


def checked(init: Init) -> Init:
    """``init``, an evaluator's ``__init__``, refusing a value its annotations do not accept
    with a ``ValueError`` holding :func:`value_problems`' messages, so that building an
    evaluator in Python says what the config checks say."""
    signature = inspect.signature(init)

    @functools.wraps(init)
    def refusing(self: Any, *args: Any, **kwargs: Any) -> None:
        arguments = signature.bind(self, *args, **kwargs).arguments
        found = _problems(f"evaluator_options.{type(self).name}", init, arguments)
        if found:
            raise ValueError("; ".join(found))
        init(self, *args, **kwargs)

    return typing.cast(Init, refusing)
