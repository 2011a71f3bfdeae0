"""config/README.md is the reference for the config's keys: its table has a row for every key
of workflow/schemas/config.schema.yaml, and every row names a key the schema has.

A key is dotted (`fa_trim.margin_s`); a map's entry is written `<name>` (`datasets.<name>.path`,
`uncertainty.meta_analysis.<corpus>`) or `*` (`fa_trim.energy.*`), and `{a,b}` stands for two
keys (`evaluator_options.{vsa,vsa_corners}.use_spk2gender`). Beneath a map whose entries the
schema leaves open (an evaluator's options, which its constructor checks) a row may name the
entry and its option (`evaluator_options.<name>.compat`).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
CONFIG_README = REPO / "config/README.md"
ENTRY = "<*>"
"""A map's entry, whatever its name."""


def schema_keys() -> dict[str, bool]:
    """Every key of the schema, dotted, with whether a row must describe it: a key whose value
    has keys of its own (`demo`, `datasets.<*>`) is described by those rows, every other key
    (a value, or a map of values such as `fa_trim.energy`) by a row of its own, the map's or
    its entries' (`fa_trim.energy.*`)."""
    keys: dict[str, bool] = {}

    def walk(node: dict, prefix: str) -> None:
        children = dict(node.get("properties", {}))
        entry = node.get("additionalProperties")
        if isinstance(entry, dict):
            children[ENTRY] = entry
        for name, child in children.items():
            key = f"{prefix}.{name}" if prefix else name
            nested = "properties" in child or (
                isinstance(child.get("additionalProperties"), dict)
                and "properties" in child["additionalProperties"]
            )
            keys[key] = not nested
            walk(child, key)

    walk(SCHEMA, "")
    return keys


def open_maps() -> set[str]:
    """Maps whose entries the schema leaves open: objects of any keys (evaluator options)."""
    return {
        key
        for key in schema_keys()
        if key.endswith(ENTRY)
        and _node(key).get("type") == "object"
        and "properties" not in _node(key)
    }


def _node(key: str) -> dict:
    node = SCHEMA
    for part in key.split("."):
        node = node["additionalProperties"] if part == ENTRY else node["properties"][part]
    return node


def documented_keys() -> dict[str, str]:
    """The keys the table's rows name (their first cell), normalised: `<name>` and `*` to
    `<*>`, `{a,b}` expanded; mapped to the row's cell as written."""
    keys: dict[str, str] = {}
    for line in CONFIG_README.read_text().splitlines():
        if not line.startswith("| `"):
            continue
        cell = line.split("|")[1].strip()
        written = re.fullmatch(r"`([^`]+)`", cell)
        assert written, f"config/README.md: a row's first cell is one key in backticks: {cell}"
        parts = []
        for part in written.group(1).split("."):
            if part == "*" or re.fullmatch(r"<[^>]+>", part):
                parts.append([ENTRY])
            elif part.startswith("{"):
                parts.append([name.strip() for name in part.strip("{}").split(",")])
            else:
                parts.append([part])
        for combination in itertools.product(*parts):
            keys[".".join(combination)] = cell
    return keys


def names_a_schema_key(key: str, schema: dict[str, bool], maps: set[str]) -> bool:
    """Whether a documented key is a schema key, reading a named entry of a map (`vsa` in
    `evaluator_options.vsa`) as the map's entry, and anything beneath an open map's entry as
    that entry's own option."""
    prefix: list[str] = []
    for part in key.split("."):
        if ".".join(prefix) in maps:
            return True
        for candidate in (part, ENTRY):
            if ".".join([*prefix, candidate]) in schema:
                prefix.append(candidate)
                break
        else:
            return False
    return True


def test_every_schema_key_has_a_row_in_config_readme():
    documented = documented_keys()
    missing = [
        key
        for key, needs_row in schema_keys().items()
        if needs_row
        and not {key, f"{key}.{ENTRY}", key.removesuffix(f".{ENTRY}")} & documented.keys()
    ]
    assert not missing, f"schema keys without a row in config/README.md: {missing}"


def test_every_row_of_config_readme_names_a_schema_key():
    schema = schema_keys()
    maps = open_maps()
    unknown = sorted(
        {
            cell
            for key, cell in documented_keys().items()
            if not names_a_schema_key(key, schema, maps)
        }
    )
    assert not unknown, f"config/README.md rows naming no key of the schema: {unknown}"


def test_the_check_sees_a_missing_row_and_an_invented_one():
    """The two checks above are not vacuous: a key the table lacks and a row the schema
    lacks are both found."""
    schema = schema_keys()
    maps = open_maps()
    assert schema["fa_trim.margin_s"] and not schema["datasets"]
    assert "evaluator_options.<*>" in maps
    assert names_a_schema_key("evaluator_options.vsa.use_spk2gender", schema, maps)
    assert names_a_schema_key("datasets.<*>.score_scale", schema, maps)
    assert not names_a_schema_key("fa_trim.margin", schema, maps)
    assert not names_a_schema_key("datasets.<*>.language", schema, maps)
    assert "validation.max_utterance_s" in documented_keys()
