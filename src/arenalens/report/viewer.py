"""The HTML report's viewer: its ES modules (assets/viewer/*.js) → one script for the page.

The viewer is written as ES modules, one concern each, type-checked by the TypeScript compiler in
CI (`bash .ci/typecheck`). A page that opens offline from a file cannot load modules (browsers
refuse `import` from file:// URLs, and the Content-Security-Policy allows one inline script), so
this joins them, in Python, when the first page is rendered; pip users need no node.

The join is deliberately small, and refuses anything it does not handle:

* Modules use one import form, `import { a, b } from "./name.js";` (no renaming, no default or
  namespace imports), and `export` only in front of a top-level `function`, `class`, `const` or
  `let`. Type-only imports live in JSDoc comments (`import("./document.js").Report`), which the
  browser never sees.
* Starting at main.js, the modules are ordered the way a browser evaluates them: depth first,
  each module after the modules it imports, in the order it imports them. So the joined script
  runs every module's top-level code in the same order as the modules would run.
* Import lines are dropped and the `export` keywords removed; the modules, in that order, go into
  one strict-mode function scope. That scope is shared, so two modules must not declare the same
  top-level name: the join checks this, and that every imported name is exported by its module,
  and raises ViewerBuildError naming the module otherwise. Imported bindings are never assigned
  (tsc forbids it), so one shared binding behaves as the live ES binding would.
* JSDoc blocks that fill whole lines (`/** ... */`: types and API notes for tsc and readers) are
  left out of the page; `//` comments and inline casts stay.

The result depends only on the module files: the same files give the same bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable

ENTRY_MODULE = "main.js"

_IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([a-z_]+\.js)";[ \t]*\n', re.MULTILINE)
_ANY_IMPORT = re.compile(r"^import\b", re.MULTILINE)
_EXPORT = re.compile(r"^export\s+(?=(?:async\s+)?(?:function|class|const|let)\b)", re.MULTILINE)
_ANY_EXPORT = re.compile(r"^export\b", re.MULTILINE)
_DECLARATION = re.compile(
    r"^(?:export\s+)?(?:async\s+)?(?:function\*?|class|const|let|var)\s+([A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
_NAME = re.compile(r"^[A-Za-z_$][\w$]*$")
# A JSDoc block from the start of a line to a `*/` that ends a line (never across a `*/`).
_JSDOC_LINES = re.compile(r"^[ \t]*/\*\*(?:(?!\*/).)*?\*/[ \t]*\n", re.MULTILINE | re.DOTALL)


class ViewerBuildError(ValueError):
    """A viewer module the join cannot take as it is (the message names the module and why)."""


@dataclass(frozen=True)
class ViewerModule:
    """One module: its file name, its source without imports and export keywords, and names."""

    name: str
    body: str
    imports: tuple[tuple[str, tuple[str, ...]], ...]  # (module, names), in source order
    declared: tuple[str, ...]  # top-level names, exported or not
    exported: tuple[str, ...]


def parse_module(name: str, source: str) -> ViewerModule:
    """One module's source → its imports, top-level names and body for the join."""
    imports: list[tuple[str, tuple[str, ...]]] = []
    for match in _IMPORT.finditer(source):
        names = tuple(part.strip() for part in match.group(1).split(",") if part.strip())
        for imported in names:
            if not _NAME.match(imported):
                raise ViewerBuildError(f"{name}: import '{imported}' is not a plain name")
        imports.append((match.group(2), names))
    body = _IMPORT.sub("", source)
    if _ANY_IMPORT.search(body):
        raise ViewerBuildError(f'{name}: only `import {{ name }} from "./module.js";` is joined')
    exported = tuple(
        match.group(1)
        for match in _DECLARATION.finditer(body)
        if match.group(0).startswith("export")
    )
    body = _EXPORT.sub("", body)
    # A module of types only ends with `export {};` (it makes the file a module for tsc).
    body = re.sub(r"^export \{\};[ \t]*\n", "", body, flags=re.MULTILINE)
    if _ANY_EXPORT.search(body):
        raise ViewerBuildError(
            f"{name}: only `export` before a top-level function, class, const or let is joined"
        )
    declared = tuple(match.group(1) for match in _DECLARATION.finditer(body))
    return ViewerModule(name, _JSDOC_LINES.sub("", body), tuple(imports), declared, exported)


def module_order(modules: dict[str, ViewerModule], entry: str = ENTRY_MODULE) -> list[str]:
    """The modules the entry needs, each after its imports, as a browser evaluates them."""
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            cycle = " → ".join([*visiting[visiting.index(name) :], name])
            raise ViewerBuildError(f"import cycle: {cycle}")
        if name not in modules:
            raise ViewerBuildError(f"{visiting[-1]}: imports {name}, which does not exist")
        visiting.append(name)
        for imported, _names in modules[name].imports:
            visit(imported)
        visiting.pop()
        order.append(name)

    visit(entry)
    return order


def join_modules(modules: dict[str, ViewerModule], entry: str = ENTRY_MODULE) -> str:
    """Parsed modules → one script: every module the entry needs, in evaluation order, in one
    strict-mode function scope (checked: imports exist, no top-level name declared twice)."""
    order = module_order(modules, entry)
    owner: dict[str, str] = {}
    for name in order:
        module = modules[name]
        for imported, names in module.imports:
            missing = [each for each in names if each not in modules[imported].exported]
            if missing:
                raise ViewerBuildError(f"{name}: {imported} does not export {', '.join(missing)}")
        for declared in module.declared:
            if declared in owner:
                raise ViewerBuildError(
                    f"{name} and {owner[declared]} both declare '{declared}': the joined "
                    "modules share one scope, so top-level names must differ"
                )
            owner[declared] = name
    parts = [
        "/* arenalens HTML report viewer: the ES modules of arenalens/report/assets/viewer/,",
        " * joined by arenalens/report/viewer.py (imports and export keywords removed, each",
        " * module after the modules it imports). Model-derived text is only ever assigned to",
        " * textContent or drawn with fillText, never parsed as HTML. */",
        "(function () {",
        '"use strict";',
    ]
    for name in order:
        parts.append(f"// ---- {name}")
        parts.append(modules[name].body.strip("\n"))
    parts.append("})();")
    return "\n".join(parts) + "\n"


def read_modules(folder: Traversable) -> dict[str, ViewerModule]:
    """Every *.js file of a folder → its parsed module, by file name."""
    return {
        entry.name: parse_module(entry.name, entry.read_text("utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".js")
    }


@cache
def viewer_script() -> str:
    """The joined viewer the HTML report embeds (built once per process, from package data)."""
    folder = resources.files("arenalens.report").joinpath("assets", "viewer")
    return join_modules(read_modules(folder))
