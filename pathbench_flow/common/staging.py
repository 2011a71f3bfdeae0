"""A job's declared input files, looked up by the paths the configuration gives them.

Manifests and Kaldi directories name files by their configured (logical) paths: a ``wav.scp``
entry resolved against the dataset's ``path``. Those names go into the outputs, so they must not
depend on where a job runs. Where jobs share no file system, Snakemake downloads each declared
input from the storage provider into the job's scratch, under a local path that ends with the
configured one (``.snakemake/storage/s3/<bucket>/<prefix>/<configured path>``), and nothing else
of the dataset is there. A job script therefore calls :func:`stage` with its inputs once, and the
few places that open dataset files (audio loading, Kaldi tables, recording checks) open
:func:`located` of the logical path: the staged copy, or, when Snakemake handed the path
unchanged (a shared file system), the path itself. A path that is not among the job's inputs is
refused, so a job can never read a file its rule does not declare. On a shared file system
(:func:`stage_job`) nothing is staged and the datasets are read in place: there the jobs do not
declare the audio the manifest's digests already stand for (``AUDIO_DECLARED``, staging.smk).
"""

from __future__ import annotations

import errno
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

FACTS_KEY = "pathbench_dataset_facts"
"""The config key of the dataset facts a run with a storage provider ships to its jobs
(:mod:`pathbench_flow.data.facts`); its presence in a job's config marks a staged job."""

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def _key(path: str | Path) -> str:
    """The comparable form of a path: normalised, without a URL scheme or a leading slash."""
    text = _SCHEME.sub("", str(path))
    return posixpath.normpath(text).lstrip("/")


class StagedInputs(Mapping[str, str]):
    """Logical path → the job's staged copy of it, for the job's declared ``inputs``.

    A logical path maps to the input that is that path, or to the one input whose path ends
    with it (a storage provider's local copy); two candidates are an error, not a guess.
    """

    def __init__(self, inputs: Iterable[str | Path]) -> None:
        self._inputs = sorted({str(path) for path in inputs})
        self._exact = set(self._inputs)
        self._by_name: dict[str, list[str]] = {}
        for path in self._inputs:
            self._by_name.setdefault(posixpath.basename(path), []).append(path)

    def _find(self, logical: str) -> str | None:
        if logical in self._exact:
            return logical
        key = _key(logical)
        candidates = [
            path
            for path in self._by_name.get(posixpath.basename(key), [])
            if _key(path) == key or _key(path).endswith(f"/{key}")
        ]
        if len(candidates) > 1:
            raise ValueError(
                f"{logical}: several of the job's inputs could be its staged copy "
                f"({', '.join(candidates)}); give the datasets paths that do not end alike"
            )
        return candidates[0] if candidates else None

    def __getitem__(self, logical: str) -> str:
        found = self._find(str(logical))
        if found is None:
            raise KeyError(logical)
        return found

    def __contains__(self, logical: object) -> bool:
        return isinstance(logical, str | Path) and self._find(str(logical)) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._inputs)

    def __len__(self) -> int:
        return len(self._inputs)


_staged: StagedInputs | None = None


def stage(inputs: Iterable[str | Path]) -> None:
    """Make ``inputs`` (a job's declared inputs, as Snakemake hands them to its script) the
    only dataset files this process opens."""
    global _staged
    _staged = StagedInputs(inputs)


def stage_job(job: Any) -> None:
    """:func:`stage` a Snakemake job's inputs (``job``: a script's ``snakemake`` object) when it
    runs where only they are: with a storage provider, whose config carries the shipped
    dataset facts (staging.smk)."""
    if FACTS_KEY in job.config:
        stage(job.input)


def located(path: str | Path) -> Path:
    """Where to open the file the configuration calls ``path``: its staged copy once
    :func:`stage` ran (``FileNotFoundError`` when it is not among the job's inputs), else
    ``path`` itself (tests and tools that call the stages directly)."""
    if _staged is None:
        return Path(path)
    try:
        return Path(_staged[str(path)])
    except KeyError:
        raise FileNotFoundError(
            errno.ENOENT,
            "not among the job's declared inputs, so the job cannot read it; declare it as an "
            "input of the rule",
            str(path),
        ) from None


def is_present(path: str | Path) -> bool:
    """Whether the file the configuration calls ``path`` can be read by this job."""
    try:
        return located(path).is_file()
    except FileNotFoundError:
        return False
