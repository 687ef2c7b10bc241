"""The docs stay true to the tree: section citations resolve, cited files and names exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "runtime-rules.md"
PACKAGE = ROOT / "src" / "arenalens"
# A section id of docs/runtime-rules.md: §V, §T1..., §L1..., §M1..., §X.
SECTION = re.compile(r"§([VTLMX]\d*)\b")
ANCHOR = re.compile(r'<a id="([a-z]\d*)"></a>\n#+ §([VTLMX]\d*) ')


def rules_text() -> str:
    return RULES.read_text(encoding="utf-8")


def defined_sections() -> set[str]:
    """Section ids with an anchor of the same name right above their heading."""
    found = set()
    for anchor, section in ANCHOR.findall(rules_text()):
        assert anchor == section.lower(), f"anchor '{anchor}' above heading §{section}"
        found.add(section)
    return found


def citing_files() -> list[Path]:
    """Source, test, fuzz and benchmark files that cite docs/runtime-rules.md."""
    return sorted(
        path
        for folder in ("src", "tests", "fuzz", "flows", "benchmarks")
        for path in (ROOT / folder).rglob("*.py")
        if "runtime-rules.md" in path.read_text(encoding="utf-8")
    )


def test_every_section_has_a_stable_anchor() -> None:
    sections = defined_sections()
    headings = re.findall(r"^#+ §([VTLMX]\d*) ", rules_text(), re.M)
    assert sorted(headings) == sorted(sections)
    assert len(headings) == len(set(headings)), "a section id is used twice"


@pytest.mark.parametrize("path", citing_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_cited_sections_exist(path: Path) -> None:
    cited = set(SECTION.findall(path.read_text(encoding="utf-8")))
    missing = cited - defined_sections()
    assert not missing, f"{path.relative_to(ROOT)} cites missing sections {sorted(missing)}"


def test_internal_section_links_resolve() -> None:
    text = rules_text()
    linked = set(re.findall(r"\]\(#([a-z]\d*)\)", text))
    assert linked <= {s.lower() for s in defined_sections()}
    assert set(SECTION.findall(text)) <= defined_sections()


# Pages that name modules: each name must stay true as files move.
CITING_PAGES = ("runtime-rules.md", "litert-heap.md")


@pytest.mark.parametrize("page", CITING_PAGES)
def test_cited_modules_and_names_exist(page: str) -> None:
    """Every `path.py` the page names exists (tests/ from the root, the rest under
    src/arenalens/), and every name written after it (`path.py — name, name`) is in that file."""
    problems = []
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    for match in re.finditer(r"`([\w/]+\.py)(?:\s—\s([\w.]+(?:,\s[\w.]+)*))?`", text):
        relative, names = match.group(1), match.group(2)
        path = ROOT / relative if relative.startswith("tests/") else PACKAGE / relative
        if not path.is_file():
            problems.append(f"{relative}: no such file")
            continue
        source = path.read_text(encoding="utf-8")
        for name in re.split(r",\s", names or ""):
            if name and name.split(".")[-1] not in source:
                problems.append(f"{relative}: no '{name}'")
    assert not problems, problems


def test_cited_folders_exist() -> None:
    folders = re.findall(r"`((?:runtimes|planning|analysis|diagnostics)/[\w/]+/)`", rules_text())
    assert folders
    assert [f for f in folders if not (PACKAGE / f).is_dir()] == []


def test_readme_links_the_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in ("architecture.md", "runtime-rules.md", "conformance.md", "litert-heap.md"):
        assert f"(docs/{name})" in readme
        assert (ROOT / "docs" / name).is_file()
