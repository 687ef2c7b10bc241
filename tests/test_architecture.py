"""Architecture rules: no import cycle (imports inside functions included), no module over 800
lines, nothing shipped unused, no module named like a standard library module, one home for ideas
that were once copied (settings, byte text, refusal wording), each guard checked against the
spellings it must catch."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from arenalens.cli import COMMANDS
from arenalens.runtimes.tflm.kernels.families import Families
from arenalens.runtimes.tflm.kernels.registry import LIBRARIES, REFERENCE_KERNELS

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "arenalens"
MAX_LINES = 800


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


def _is_type_checking(node: ast.If) -> bool:
    """`if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`): imports for the type checker only."""
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(
    nodes: list[ast.stmt], *, top_level_only: bool, types: bool = False
) -> Iterator[ast.stmt]:
    """The import statements that run: at the top level only, or also inside functions, classes
    and any other block; those under `if TYPE_CHECKING:` too with `types` (a module that names
    another's types depends on it as much as one that calls it)."""
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node):
            if types:
                yield from _import_nodes(node.body, top_level_only=top_level_only, types=True)
            yield from _import_nodes(node.orelse, top_level_only=top_level_only, types=types)
        elif not top_level_only:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _import_nodes([child], top_level_only=False, types=types)


def _imports(
    path: Path,
    module: str,
    modules: dict[str, Path],
    *,
    top_level_only: bool,
    types: bool = False,
) -> set[str]:
    """The package's modules one module imports: `from package import submodule` reaches the
    submodule, `from module import name` the module that defines (or re-exports) the name."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str | None] = set()
    for node in _import_nodes(tree.body, top_level_only=top_level_only, types=types):
        if isinstance(node, ast.Import):
            found.update(_resolve(alias.name, modules) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else _resolve(base, modules))
    return {name for name in found if name is not None and name.startswith("arenalens")}


def _graph(*, top_level_only: bool, types: bool = False) -> dict[str, set[str]]:
    """Module → the modules it imports. Importing a submodule runs its parent packages first,
    but that is Python's order, not a dependency: edges to a module's own ancestors are left out
    (a package's __init__ importing its submodules is kept: that is a real edge)."""
    modules = _modules()
    return {
        name: {
            target
            for target in _imports(path, name, modules, top_level_only=top_level_only, types=types)
            if target != name and not name.startswith(target + ".")
        }
        for name, path in modules.items()
    }


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


def test_no_import_cycle_between_modules() -> None:
    """No cycle through any import that runs: top-level ones, and those inside functions (a
    function-level import hides a cycle from Python's loader, not from the design)."""
    assert _cycles(_graph(top_level_only=False)) == []


def test_the_cycle_guard_sees_imports_inside_functions(tmp_path: Path) -> None:
    module = tmp_path / "example.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from arenalens.ir import Model\n"
        "def load():\n"
        "    from arenalens.planning import checker\n"
        "    if True:\n"
        "        import arenalens.units\n"
    )
    modules = _modules()
    found = _imports(module, "arenalens.example", modules, top_level_only=False)
    assert found == {"arenalens.planning.checker", "arenalens.units"}  # not the type-only one
    assert _imports(module, "arenalens.example", modules, top_level_only=True) == set()


def test_no_cycle_through_type_only_imports() -> None:
    """No cycle either when the imports under `if TYPE_CHECKING:` count: a module that annotates
    with another's types depends on it (the verdict makes its steps; the steps read the verdict
    through `next_steps.Answers`, not its type)."""
    assert _cycles(_graph(top_level_only=False, types=True)) == []


def test_the_type_cycle_guard_sees_type_only_imports(tmp_path: Path) -> None:
    module = tmp_path / "example.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from arenalens.ir import Model\n"
        "def load():\n"
        "    if TYPE_CHECKING:\n"
        "        import arenalens.units\n"
    )
    found = _imports(module, "arenalens.example", _modules(), top_level_only=False, types=True)
    assert found == {"arenalens.ir", "arenalens.units"}


def test_no_import_cycle_at_import_time() -> None:
    """Top-level imports alone have no cycle at all, the known one included."""
    assert _cycles(_graph(top_level_only=True)) == []


def test_no_file_is_longer_than_the_limit() -> None:
    """No Python file of the package, its tests, benchmarks or fuzzers passes 800 lines: a long
    table of cases becomes a package of modules (tests/conformance/cases/shape/)."""
    root = PACKAGE.parents[1]
    long = {
        str(path.relative_to(root)): count
        for folder in ("src", "tests", "benchmarks", "fuzz", "flows")
        for path in sorted((root / folder).rglob("*.py"))
        if (count := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_every_module_is_used_by_the_product() -> None:
    """Every module is reachable from the entry points through imports, or named as a string by
    a registry that imports it lazily (CLI commands, runtimes, built-in planners), or by the
    package data a registry reads (a kernel library's rules package, in build_records.json)."""
    modules = _modules()
    graph = _graph(top_level_only=False)
    data = [PACKAGE / "build_records.json"]
    source = "\n".join(path.read_text() for path in (*modules.values(), *data))
    reached: set[str] = set()
    todo = ["arenalens", "arenalens.__main__", "arenalens.cli"]
    todo += [name for name in modules if f'"{name}"' in source or f"'{name}'" in source]
    todo += [f"arenalens.cli.{module}" for module in COMMANDS.values()]
    # Kernel rule modules: named by their package's family table (`kernels/families.py`).
    for table in (REFERENCE_KERNELS, *(LIBRARIES[name].rules for name in LIBRARIES)):
        assert isinstance(table, Families)
        todo += [table.module_of(opcode) for opcode in table]
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
    assert shadowing == set()


def _modules_whose_text_matches(pattern: str) -> set[str]:
    return {name for name, path in _modules().items() if re.search(pattern, path.read_text())}


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring nodes of a module and of its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            found.add(id(first.value))
    return found


def _string_texts(tree: ast.Module) -> Iterator[tuple[int, str, ast.AST]]:
    """Every string the code builds, docstrings left out: constants as they are, f-strings with
    each formatted value as '{}' (line, text, node)."""
    skip = _docstrings(tree)
    inside_fstrings = {
        id(value)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for value in node.values
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(
                value.value if isinstance(value, ast.Constant) else "{}" for value in node.values
            )
            yield node.lineno, text, node
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skip | inside_fstrings
        ):
            yield node.lineno, node.value, node


# A number followed by a byte unit: ' B', ' bytes', ' KiB' ... (units.py writes these).
_BYTE_UNIT = re.compile(r"^\s*(B|bytes?|KiB|MiB|GiB|KB|MB)\b")
# The same in a str.format template: '{:,} B', '{n} KiB'.
_BYTE_TEMPLATE = re.compile(r"\{[^{}]*\}\s*(B|bytes?|KiB|MiB|GiB)\b")
# Formatted values that are text, not a number, before the word 'bytes' (a verify row's name:
# "tensor 3 offset bytes").
TEXT_BEFORE_BYTE_UNIT = {"label"}


def _byte_texts(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Where a module writes a byte count with its unit itself: an f-string value (any format
    spec: '{n:,}', '{n:>9,}', '{n}') followed by a unit, or a str.format template doing the same."""
    for line, text, node in _string_texts(tree):
        if isinstance(node, ast.JoinedStr):
            values = node.values
            for value, after in zip(values, [*values[1:], None], strict=True):
                if not isinstance(value, ast.FormattedValue) or not isinstance(after, ast.Constant):
                    continue
                if ast.unparse(value.value) in TEXT_BEFORE_BYTE_UNIT:
                    continue
                if _BYTE_UNIT.match(str(after.value)):
                    yield line, ast.unparse(node)
        elif _BYTE_TEMPLATE.search(text):
            yield line, text


def test_byte_counts_are_written_by_units_only() -> None:
    """Every byte count a user reads is written by units.format_bytes_exact ('73,728 B') or
    format_bytes_short ('72 KiB'), whatever the format spec or the word for the unit: copies
    drifted apart before ('73728 bytes', '73,728 bytes', right-aligned '   73,728 B')."""
    found = {
        f"{name}:{line}: {text}"
        for name, path in _modules().items()
        if name != "arenalens.units"
        for line, text in _byte_texts(ast.parse(path.read_text()))
    }
    assert found == set()


def test_the_byte_guard_sees_every_spelling() -> None:
    source = (
        'a = f"{n:,} B"\nb = f"{n:>9,} B"\nc = f"({n} bytes)"\nd = f"{n / 1024:.1f} KiB"\n'
        'e = "{:,} B".format(n)\nf = f"{label} bytes"\ng = f"{n:,} entries"\n'
    )
    assert [line for line, _ in _byte_texts(ast.parse(source))] == [1, 2, 3, 4, 5]


# TF_LITE_ENSURE's and TF_LITE_ENSURE_EQ's messages: "<cond> was not true.", "a != b (x != y)".
_REFUSAL_TEXT = re.compile(r"was not true|\S+ != \S+ \(\S+ != \S+\)")


def _refusal_texts(tree: ast.Module) -> Iterator[int]:
    """Lines that word a failed TFLM check (in any string the code builds, f-strings included)."""
    for line, text, _ in _string_texts(tree):
        if _REFUSAL_TEXT.search(text):
            yield line


def test_one_home_for_settings_and_refusal_helpers() -> None:
    """Planner and reorderer settings are read from signatures by the registry only; TFLM's
    failed checks are worded by kernels/refusals.py, wherever the words are built (copies of
    each drifted apart before)."""
    assert _modules_whose_text_matches(r"inspect\.signature") == {"arenalens.registry"}
    refusals = "arenalens.runtimes.tflm.kernels.refusals"
    assert _modules_whose_text_matches(r"\ndef (not_true|not_equal)\(") == {refusals}
    wording = {
        name
        for name, path in _modules().items()
        if any(_refusal_texts(ast.parse(path.read_text())))
    }
    assert wording == {refusals}


def test_the_refusal_guard_sees_every_spelling() -> None:
    source = (
        '"""A docstring may say: x was not true."""\n'
        'a = "x > 0 was not true."\nb = f"{file} {cond} was not true."\n'
        'c = f"{file} {left} != {right} ({x} != {y})"\nd = f"{a} != {b}"\n'
    )
    assert list(_refusal_texts(ast.parse(source))) == [2, 3, 4]


def test_the_build_value_is_neutral() -> None:
    """`builds` is what every layer receives: it imports no runtime, report or model code."""
    graph = _graph(top_level_only=False)
    reached = {
        target
        for name, targets in graph.items()
        if name.startswith("arenalens.builds")
        for target in targets
    }
    # records: the record decorator (standard library only), as every layer uses it.
    neutral = {"arenalens.errors", "arenalens.records"}
    assert {t for t in reached if not t.startswith("arenalens.builds")} <= neutral


# The TFLM package's modules: only `runtimes/` reaches them; the rest asks the door,
# `runtimes.door.tflm_runtime()`.
_TFLM_PACKAGE = "arenalens.runtimes.tflm"


def _tflm_internals(tree: ast.Module) -> Iterator[int]:
    """The lines of every import of the TFLM package or its modules, wherever it sits (inside a
    function, under `if TYPE_CHECKING:`, relative or absolute)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(alias.name.startswith(_TFLM_PACKAGE) for alias in node.names):
                yield node.lineno
        elif isinstance(node, ast.ImportFrom) and not node.level:
            module = node.module or ""
            inside = module == _TFLM_PACKAGE or module.startswith(_TFLM_PACKAGE + ".")
            package = module == "arenalens.runtimes" and any(a.name == "tflm" for a in node.names)
            if inside or package:
                yield node.lineno


def test_only_runtimes_reaches_tflm_internals() -> None:
    """One door into the runtime: optimization, diagnostics, the CLI and every other stage ask
    `runtimes.door.tflm_runtime()` (setup replay, tail parts, kernel rules, plan validity, proofs);
    no module outside `runtimes/` imports a module of `runtimes/tflm/`."""
    outside = {
        f"{name}:{line}"
        for name, path in _modules().items()
        if not name.startswith("arenalens.runtimes")
        for line in _tflm_internals(ast.parse(path.read_text()))
    }
    assert sorted(outside) == []


def test_the_tflm_guard_sees_every_spelling() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from arenalens.runtimes import tflm\n"
        "import arenalens.runtimes.tflm.support\n"
        "if TYPE_CHECKING:\n"
        "    from arenalens.runtimes.tflm.plan_validity import SharedBytes\n"
        "def f():\n"
        "    from arenalens.runtimes.tflm import run\n"
        "from arenalens.runtimes.door import tflm_runtime\n"
        "from arenalens.runtimes.litert.shapes import parse_input_shape\n"
    )
    assert list(_tflm_internals(ast.parse(source))) == [2, 3, 5, 7]
