"""What the cluster profiles' comments tell a user about the workflow is true of the workflow:
the files they send a reader to exist and define what is said to be there, and the numbers
they quote are the rules' own. (What they say about the executor plugins is read from the
plugins, and for slurm and cluster-generic run in tests/test_slurm.py.)"""

from __future__ import annotations

import ast
import re

import pytest
import yaml

from pathbench_flow.testing import REPO

PROFILES = sorted(path.parent.name for path in (REPO / "profiles").glob("*/config.yaml"))
RULES = REPO / "workflow" / "rules"
GPU_RULES = ("score_utterances", "score_reference", "fa_trim", "compute_track")
"""The rules that declare a `gpu` resource (rules derived with `use rule` inherit it)."""


def _comments(profile: str) -> str:
    """The profile's comments as one text, wrapped lines joined."""
    lines = (REPO / "profiles" / profile / "config.yaml").read_text().splitlines()
    return " ".join(line.strip().lstrip("#").strip() for line in lines if "#" in line)


def _named_definitions(comments: str) -> list[tuple[str, str]]:
    """(NAME, rule file) for each "NAME in workflow/rules/x.smk" or "NAME (workflow/...)"."""
    return re.findall(r"\b([A-Z][A-Z_]+) \(?(?:in )?(workflow/rules/\w+\.smk)", comments)


def _resources() -> dict[str, dict[str, int]]:
    """The RESOURCES table, read from settings.smk (plain Python) without running it."""
    tree = ast.parse((RULES / "settings.smk").read_text())
    (table,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [getattr(target, "id", None) for target in node.targets] == ["RESOURCES"]
    ]
    return ast.literal_eval(table)


def _rule_blocks() -> dict[str, str]:
    """Each rule's or checkpoint's text, by name, from every rule file."""
    blocks = {}
    for path in RULES.glob("*.smk"):
        parts = re.split(r"^(?:rule|checkpoint) (\w+):$", path.read_text(), flags=re.MULTILINE)
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            blocks[name] = re.split(r"^\S", body, maxsplit=1, flags=re.MULTILINE)[0]
    return blocks


@pytest.mark.parametrize("profile", PROFILES)
def test_every_rule_file_a_profile_names_exists_and_defines_what_it_is_said_to(profile):
    comments = _comments(profile)
    for named in re.findall(r"[\w/]+\.smk", comments):
        path = REPO / named if "/" in named else RULES / named
        assert path.is_file(), f"profiles/{profile} names {named}, which does not exist"
    for name, named in _named_definitions(comments):
        text = (REPO / named).read_text()
        assert re.search(rf"^{name} = ", text, re.MULTILINE), f"{named} does not define {name}"


def test_every_cluster_profile_says_where_the_rules_resources_are():
    clusters = {"slurm", "cluster-generic", "googlebatch", "kubernetes"}
    assert clusters <= set(PROFILES)
    for profile in clusters:
        assert ("RESOURCES", "workflow/rules/settings.smk") in _named_definitions(
            _comments(profile)
        ), profile


def test_the_rules_said_to_declare_a_gpu_are_those_that_do():
    blocks = _rule_blocks()
    declaring = sorted(name for name, body in blocks.items() if re.search(r"\bgpu=", body))
    assert declaring == sorted(GPU_RULES)
    for profile in PROFILES:
        comments = _comments(profile)
        if "declare a `gpu` resource" in comments:
            for rule in GPU_RULES:
                assert rule in comments, f"profiles/{profile} does not name {rule}"


def _local_rules() -> set[str]:
    """Rules that run on the host that runs Snakemake (``localrule: True``, or named by a
    ``localrules:`` directive), never as a cluster job."""
    named = set()
    for path in RULES.glob("*.smk"):
        for block in re.findall(r"^localrules:\n((?:\s+\w+,?\n)+)", path.read_text(), re.M):
            named |= set(re.findall(r"\w+", block))
    marked = {name for name, body in _rule_blocks().items() if "localrule: True" in body}
    return named | marked


def test_googlebatch_sizes_cover_the_largest_rules():
    """Every rule a job runs fits the executor's one size; the downloads and the build run on
    the submitting host and may take longer (fetch_archive: 35 GB)."""
    profile = yaml.safe_load((REPO / "profiles" / "googlebatch" / "config.yaml").read_text())
    local = _local_rules()
    assert {"fetch_archive", "build_espeak", "shard_manifest"} <= local
    resources = [entry for rule, entry in _resources().items() if rule not in local]
    memory = max(entry["mem_mb"] for entry in resources)
    minutes = max(entry["runtime"] for entry in resources)
    assert profile["googlebatch-memory"] >= memory
    assert int(profile["googlebatch-max-run-duration"].removesuffix("s")) >= minutes * 60
    comments = _comments("googlebatch")
    assert f"RESOURCES: {memory} MB" in comments and f"and {minutes} min" in comments
