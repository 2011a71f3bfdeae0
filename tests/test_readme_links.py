"""The Markdown files outside the MkDocs site (the README, config/README.md, .test/README.md,
benchmarks/README.md) link into docs/ and to each other by relative links: each names a file
that exists and, after `#`, a heading of that file. `mkdocs build --strict` checks the links
inside docs/ the same way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OUTSIDE_THE_SITE = ("README.md", "config/README.md", ".test/README.md", "benchmarks/README.md")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """A heading's anchor as GitHub and MkDocs both make it for this project's headings:
    markup and punctuation dropped, lower case, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"\s", "-", text)


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return {slug(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


@pytest.mark.parametrize("name", OUTSIDE_THE_SITE)
def test_relative_links_name_an_existing_file_and_heading(name):
    source = REPO / name
    broken = []
    for target in LINK.findall(source.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = (source.parent / file).resolve() if file else source
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading #{anchor} in {path.relative_to(REPO)}")
    assert not broken, f"{name}: {broken}"


def test_the_readme_links_every_guide_of_the_site():
    """The README's map of the guides lists every page of the site's navigation."""
    nav = re.findall(r":\s*(\S+\.md)\s*$", (REPO / "mkdocs.yml").read_text(), flags=re.M)
    readme = (REPO / "README.md").read_text()
    missing = [page for page in nav if page != "index.md" and f"(docs/{page})" not in readme]
    assert nav and not missing, f"guides in mkdocs.yml's nav but not in the README: {missing}"


def test_the_site_lists_every_page_in_docs():
    nav = set(re.findall(r":\s*(\S+\.md)\s*$", (REPO / "mkdocs.yml").read_text(), flags=re.M))
    pages = {path.name for path in (REPO / "docs").glob("*.md")}
    assert pages == nav, f"docs/ pages and mkdocs.yml's nav differ: {sorted(pages ^ nav)}"
