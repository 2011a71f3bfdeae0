"""Config checks that run when the workflow is parsed, before any job starts.

The schema catches wrong types and unknown keys; what it cannot see (an option an evaluator's
constructor does not take, a value it does not accept, a dataset directory that is a file, a
model an evaluator cannot find) would otherwise fail inside every job of a run, or as a
traceback from an input function. Each problem here names its config key and the fix, and all
are reported at once. Option values are checked against what the constructor's signature
declares (:mod:`~pathbench_flow.evaluators.options`), without building the evaluator: the parse
must not
load models or measures' libraries.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.metric import FA, MetricKey
from pathbench_flow.evaluators.options import value_problems
from pathbench_flow.schemas.config import ConfigError


def check_config(config: Mapping[str, Any], generated: Callable[[Path], bool]) -> None:
    """Raise :class:`ConfigError` listing every problem of an already schema-valid config.

    ``generated(path)`` tells whether a directory is produced by the workflow itself (the
    demo corpus), so that its absence before the first run is not a problem.
    """
    problems = _evaluator_problems(config) + _dataset_problems(config, generated)
    if problems:
        raise ConfigError(problems)


def _evaluator_problems(config: Mapping[str, Any]) -> list[str]:
    problems = []
    if not config["evaluators"]:
        problems.append("evaluators: the list is empty; name at least one evaluator")
    known = set(registry.names())
    # Names of fa metrics, which configs listed as evaluators before variants applied to all.
    fa_names = {MetricKey(name, FA).name: name for name in known}
    variant_of = {fa: name for fa, name in fa_names.items() if fa not in known}
    for name in config["evaluators"]:
        if name in variant_of:
            problems.append(
                f"evaluators: {name!r} is the fa variant of {variant_of[name]!r}, not an "
                f"evaluator; list {variant_of[name]!r} and keep fa in variants (e.g. [raw, fa])"
            )
        elif name not in known:
            problems.append(
                f"evaluators: unknown evaluator {name!r}; installed: {', '.join(sorted(known))}"
            )
    for name, options in sorted(config["evaluator_options"].items()):
        if name in variant_of:
            problems.append(
                f"evaluator_options.{name}: the fa variant takes the options of "
                f"{variant_of[name]!r}; move them to evaluator_options.{variant_of[name]}"
            )
        elif name not in known:
            problems.append(
                f"evaluator_options.{name}: no evaluator is called {name!r}; "
                "fix the name or remove the entry"
            )
        elif name in config["evaluators"]:
            problems += _option_problems(name, options)
    for name in config["evaluators"]:
        if name in known and name not in config["evaluator_options"]:
            problems += _option_problems(name, {})
    for name in config.get("correlation", {}).get("allowlist", ()):
        if name not in known:
            problems.append(
                f"correlation.allowlist: {name!r} is not an evaluator; the allowlist names "
                "evaluators, and covers all their variants and reference sets"
            )
    return problems


def _option_problems(name: str, options: Mapping[str, Any]) -> list[str]:
    """Options against the constructor's signature (names, then declared values), then the
    evaluator's own preflight, which runs only on values the constructor accepts: it reads
    them as the constructor would (a model name as a path, say)."""
    cls = registry.info(name).cls
    key = f"evaluator_options.{name}"
    parameters = [
        p for p in inspect.signature(cls).parameters.values() if p.name not in cls.context_options
    ]
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    accepted = [p.name for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD]
    unknown = sorted(set(options) - set(accepted))
    if unknown and not takes_any:
        takes = ", ".join(accepted) if accepted else "no options"
        return [f"{key}: unknown option(s) {', '.join(unknown)}; {cls.__name__} takes {takes}"]
    required = [
        p.name
        for p in parameters
        if p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        and p.name not in options
    ]
    if required:
        return [f"{key}: required option(s) {', '.join(required)} missing; set them here"]
    refused = value_problems(cls, options)
    if refused:
        return refused
    preflight = getattr(cls, "preflight", None)
    if preflight is None:
        return []
    try:
        preflight(dict(options))
    except ValueError as error:
        message = str(error)
        return [message if message.startswith(key) else f"{key}: {message}"]
    return []


def _dataset_problems(config: Mapping[str, Any], generated: Callable[[Path], bool]) -> list[str]:
    problems = []
    for name, settings in sorted(config["datasets"].items()):
        for field in ("path", "reference"):
            if field in settings:
                problem = _directory_problem(Path(settings[field]), generated)
                if problem:
                    problems.append(f"datasets.{name}.{field}: {problem}")
    return problems


def _directory_problem(path: Path, generated: Callable[[Path], bool]) -> str:
    if path.is_dir():
        if (path / "utt2spk").is_file():
            return ""
        return f"{path} has no utt2spk file; point the key at a Kaldi-style dataset directory"
    if generated(path):
        return ""
    if path.exists():
        return f"{path} is a file, not a directory; give the dataset directory that holds it"
    return (
        f"directory {path} does not exist (relative paths resolve against {Path.cwd()}); "
        "fix the path"
    )
