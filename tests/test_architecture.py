"""Architecture rules: no import cycle, no module over 800 lines, nothing shipped unused, no
module named like a standard library module, one home for ideas that were once copied."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from arenalens.cli import COMMANDS

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "arenalens"
MAX_LINES = 800
# Modules still named like a standard library module, each with the reason it is not renamed yet.
STDLIB_NAMES_PENDING = {
    # TFLM's signal library's kernels; kernels/ is being rewritten by other engineers right now.
    "arenalens.runtimes.tflm.kernels.signal": "rename to signal_library.py when kernels/ is free",
}


def _modules() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """An imported dotted name → the module it loads (a name imported from a package may be a
    submodule or an attribute)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(path: Path, module: str, *, top_level_only: bool) -> Iterator[str]:
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    for node in nodes:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _graph(*, top_level_only: bool) -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imports(path, name, top_level_only=top_level_only):
            if imported.startswith("arenalens"):
                resolved = _resolve(imported, modules)
                if resolved is not None and resolved != name:
                    targets.add(resolved)
        graph[name] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _is_parent_package(first: str, second: str) -> bool:
    return second.startswith(first + ".") or first.startswith(second + ".")


def test_no_import_cycle_between_modules() -> None:
    graph = _graph(top_level_only=True)
    # A package's __init__ importing its own submodules is not a cycle between peers.
    for name, targets in graph.items():
        graph[name] = {t for t in targets if not _is_parent_package(name, t)}
    assert _cycles(graph) == []


def test_no_module_is_longer_than_the_limit() -> None:
    long = {
        name: count
        for name, path in _modules().items()
        if (count := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_every_module_is_used_by_the_product() -> None:
    """Every module is reachable from the entry points through imports, or named as a string by
    a registry that imports it lazily (CLI commands, runtimes, built-in planners)."""
    modules = _modules()
    graph = _graph(top_level_only=False)
    source = "\n".join(path.read_text() for path in modules.values())
    reached: set[str] = set()
    todo = ["arenalens", "arenalens.__main__", "arenalens.cli"]
    todo += [name for name in modules if f'"{name}"' in source or f"'{name}'" in source]
    todo += [f"arenalens.cli.{module}" for module in COMMANDS.values()]
    while todo:
        name = todo.pop()
        if name in reached or name not in modules:
            continue
        reached.add(name)
        todo.extend(graph[name])
        # Importing a submodule runs its parent packages first.
        parent = name.rpartition(".")[0]
        if parent:
            todo.append(parent)
    assert sorted(set(modules) - reached) == []


def test_no_module_is_named_like_a_standard_library_module() -> None:
    """A module named `inspect` or `html` is the standard library's to a reader, and to Python
    whenever its folder is on sys.path (`python path/to/module.py`, some tools): name the noun
    (`inspect_command`, `html_page`)."""
    shadowing = {name for name in _modules() if name.rpartition(".")[2] in sys.stdlib_module_names}
    assert shadowing == set(STDLIB_NAMES_PENDING)


def _modules_whose_text_matches(pattern: str) -> set[str]:
    return {name for name, path in _modules().items() if re.search(pattern, path.read_text())}


def test_one_home_for_settings_byte_text_and_refusal_helpers() -> None:
    """Planner and reorderer settings are read from signatures by the registry only; exact byte
    counts are written by units.format_bytes_exact only; TFLM's failed checks are worded by
    kernels/refusals.py (copies of each drifted apart before)."""
    assert _modules_whose_text_matches(r"inspect\.signature") == {"arenalens.registry"}
    assert _modules_whose_text_matches(r":,\} B\b") == {"arenalens.units"}
    refusals = "arenalens.runtimes.tflm.kernels.refusals"
    assert _modules_whose_text_matches(r"\ndef (not_true|not_equal)\(") == {refusals}
