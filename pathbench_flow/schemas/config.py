"""The config against its JSON schema, with every problem said in one line a person can act on.

Snakemake's own ``snakemake.utils.validate`` stops at the first problem and prints it with the
whole schema and the whole config (hundreds of lines for a misspelt key, the useful one near
the top). This check runs first and reports each problem as the preflight checks do
(:class:`ConfigError`): the key, the config file and line it is on,
and for an unknown key the keys allowed there and the nearest one. Snakemake's ``validate``
still runs after it, to fill in the schema's defaults.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError


class ConfigError(ValueError):
    """The config cannot work; ``problems`` are ``key: what is wrong; fix`` lines."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {problem}" for problem in problems)
        super().__init__(f"the configuration cannot run ({len(problems)} problem(s)):\n{lines}")


MESSAGE_LIMIT = 200
"""Characters of a jsonschema message kept: it quotes the offending value, which may be a
whole block of the config."""

KeyPath = tuple[str | int, ...]


def check_schema(
    config: Mapping[str, Any], schema: Mapping[str, Any], sources: Sequence[Path]
) -> None:
    """Raise :class:`ConfigError` listing every way ``config`` breaks ``schema``.

    ``sources`` are the config files the config was merged from, in merge order (Snakemake's
    ``workflow.configfiles``); they are re-read only to say where a problem is.
    """
    problems = schema_problems(config, schema, sources)
    if problems:
        raise ConfigError(problems)


def schema_problems(
    config: Mapping[str, Any], schema: Mapping[str, Any], sources: Sequence[Path]
) -> list[str]:
    """One ``key (file, line N): what is wrong`` line per problem, in key order."""
    errors = sorted(
        Draft202012Validator(schema).iter_errors(config),
        key=lambda error: (_dotted(error.absolute_path), error.message),
    )
    locate = _Locator(sources)
    problems = []
    for error in errors:
        path = tuple(error.absolute_path)
        if error.validator == "additionalProperties" and error.validator_value is False:
            allowed = list(error.schema.get("properties", {}))
            for key in _unexpected(error.instance, allowed):
                problems.append(_unknown_key(path + (key,), allowed, locate(path + (key,))))
        else:
            problems.append(_described(path, locate(path), _brief(error)))
    return problems


def _unexpected(instance: Mapping[str, Any], allowed: list[str]) -> list[str]:
    return [key for key in instance if key not in allowed]


def _unknown_key(path: KeyPath, allowed: list[str], where: str) -> str:
    key = str(path[-1])
    nearest = difflib.get_close_matches(key, allowed, n=1)
    hint = f"did you mean `{nearest[0]}`? " if nearest else ""
    return _described(path, where, f"unknown key; {hint}allowed here: {', '.join(allowed)}")


def _brief(error: ValidationError) -> str:
    message = error.message
    if len(message) > MESSAGE_LIMIT:
        return message[:MESSAGE_LIMIT] + "…"
    return message


def _described(path: KeyPath, where: str, what: str) -> str:
    key = _dotted(path) or "the config"
    return f"{key}{f' ({where})' if where else ''}: {what}"


def _dotted(path: Sequence[str | int]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(
        "."
    )


class _Locator:
    """Where a key path is written: the last config file that has it (later files override
    earlier ones in Snakemake's merge), with its line; empty where no file has it (a
    ``--config`` value, or a key the config lacks)."""

    def __init__(self, sources: Sequence[Path]) -> None:
        self.sources = list(sources)
        self._trees: dict[Path, yaml.Node | None] = {}

    def __call__(self, path: KeyPath) -> str:
        if not path:
            return ", ".join(map(str, self.sources))
        for source in reversed(self.sources):
            node = _find(self._tree(source), path)
            if node is not None:
                return f"{source}, line {node.start_mark.line + 1}"
        return ""

    def _tree(self, source: Path) -> yaml.Node | None:
        if source not in self._trees:
            try:
                self._trees[source] = yaml.compose(Path(source).read_text())
            except (OSError, yaml.YAMLError):
                self._trees[source] = None
        return self._trees[source]


def _find(node: yaml.Node | None, path: KeyPath) -> yaml.Node | None:
    """The node of ``path`` in a composed YAML document: a mapping key's own node (the line
    the key is written on), a sequence item's node; None where the document lacks it."""
    found = node
    for part in path:
        if isinstance(node, yaml.MappingNode):
            pairs = [(key, value) for key, value in node.value if key.value == str(part)]
            if not pairs:
                return None
            found, node = pairs[-1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return None
            found = node = node.value[part]
        else:
            return None
    return found


DATASET_PATH_KEYS = ("path", "reference")
"""The keys of a ``datasets`` entry that name a directory."""


def rooted_datasets(
    datasets: Mapping[str, Mapping[str, Any]], root: str | None
) -> dict[str, dict[str, Any]]:
    """``datasets`` with each relative ``path`` and ``reference`` resolved against ``root``
    (config ``datasets_root``); absolute ones, and all of them without a root, unchanged.

    Why: a config of many corpora (PathBench's 21 columns) names each directory relative to
    one place, so a user sets that place once; everything after settings.smk (the checks, the
    facts, the results table's columns, read from the path's last parts) sees the full path.
    """
    return {
        name: {
            key: str(Path(root, value)) if root and key in DATASET_PATH_KEYS else value
            for key, value in entry.items()
        }
        for name, entry in datasets.items()
    }
