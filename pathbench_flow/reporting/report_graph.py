"""The workflow graph of ``snakemake --report`` with each rule once, as ``--rulegraph`` draws it.

Snakemake 9's HTML report (``snakemake.report.rulegraph_spec``) draws one node per rule *per
level* of the job DAG's topological sort. A rule whose jobs sit at different depths is drawn
once per depth. Here an ``fa`` track job reads the ``raw`` file of its own track
(``raw_counterpart``, track_plan.smk), so ``compute_track`` and the set-track rules run at two
depths, and so do the scoring rules that read them: the demo's report drew 29 nodes for the
24 rules of ``--rulegraph``, five of them twice. The cure cannot come from the rules without
splitting every track and scoring rule by variant, so the workflow gives the report a graph of
rules built as ``--rulegraph`` builds its own (``DAG.rule_dot``: a rule's inputs are the rules
of its jobs' dependencies), laid out in the report's format.

The report's page layout is given a stylesheet too (:data:`REPORT_STYLE`): Snakemake
centres every view in the window, so a landing page or a figure shorter than the window began
part of the way down, and one wider than the window lost its left edge beyond the scroll; and
its Tailwind shrinks every image to the window's width, which made the labels of a wide figure
(the 28 × 28 pairwise matrix) too small to read.

The Snakefile hands both to :mod:`pathbench_flow.runtime.snakemake_patches`, which puts them in
Snakemake's report for the versions they were checked on; this module reads only the DAG.
"""

from __future__ import annotations

from graphlib import TopologicalSorter
from typing import Any


def rule_dependencies(dag: Any) -> dict[str, set[str]]:
    """Each rule of the DAG's jobs and the other rules whose jobs those jobs read."""
    dependencies: dict[str, set[str]] = {}
    for job in dag.jobs:
        rule = job.rule.name
        dependencies.setdefault(rule, set()).update(
            dependency.rule.name for dependency in dag.dependencies[job]
        )
        dependencies[rule].discard(rule)
    return dependencies


def rulegraph_spec(dag: Any) -> tuple[dict[str, list[dict[str, Any]]], int, int]:
    """The report's graph specification (as ``snakemake.report.rulegraph_spec`` returns it:
    nodes, links between distant nodes, links between neighbours, and the extent) with one
    node per rule, in topological order, rules of one level sorted by name."""
    dependencies = rule_dependencies(dag)
    sorter = TopologicalSorter(dependencies)
    sorter.prepare()
    order: list[str] = []
    while sorter.is_active():
        level = sorted(sorter.get_ready())
        sorter.done(*level)
        order += level
    index = {rule: position for position, rule in enumerate(order)}
    nodes = [{"rule": rule, "fx": 10, "fy": position * 50} for position, rule in enumerate(order)]
    links: list[dict[str, Any]] = []
    direct: list[dict[str, Any]] = []
    for target in order:
        for source in sorted(dependencies[target]):
            link = {
                "target": index[target],
                "source": index[source],
                "sourcerule": source,
                "targetrule": target,
                "value": 1,
            }
            (direct if index[target] - index[source] == 1 else links).append(link)
    ymax = max((node["fy"] for node in nodes), default=0)
    return {"nodes": nodes, "links": links, "links_direct": direct}, 100, ymax


REPORT_STYLE = """\
/* pathbench-flow (pathbench_flow/reporting/report_graph.py): every view starts at the top */
#app div.grow.h-screen.overflow-auto { align-items: flex-start; justify-content: flex-start; }
/* a figure at the size it was drawn, its labels readable; a wider one scrolls */
#app div.grow.h-screen.overflow-auto img { max-width: none; }
"""
"""Rules on the content area of Snakemake's report (the element its ``ContentDisplay`` draws,
Tailwind's ``flex items-center justify-center h-screen``); the id outranks Tailwind's classes
whatever order the styles load in."""
