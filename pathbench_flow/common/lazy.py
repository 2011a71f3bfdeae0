"""Modules imported on first use, so a process imports only the libraries it runs.

The workflow's parse (``snakemake -n``) reads every evaluator class for its metadata, and
each job imports its stage's module; if those imported their measures' libraries at once,
every job of a run would pay for Praat, PocketSphinx, librosa, scikit-learn and numba (about
1.4 s together) whether it used them or not. :func:`lazy_module` binds a name to a stand-in
whose attributes are the module's, imported when one is first read, so the import line stays
at the top of the file while the cost moves to the first call that needs it.

A module that does not exist fails at once, as a plain import would. An error raised while
importing it is raised by every attribute read, each time (a failed import leaves nothing
half-loaded behind), so a broken installation is reported on every row, never as a
confusing missing attribute.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any


class LazyModule:
    """Stands for the module ``name``: each attribute read is ``import name`` and a look-up."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> Any:
    """Module ``name`` (absolute), imported when one of its attributes is first read.

    Its parent packages are imported now, to check that it exists.
    """
    if importlib.util.find_spec(name) is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return LazyModule(name)
