"""docs/architecture.md stays true to the tree: every file and folder it names exists, every
name it quotes is defined somewhere in the code (or is TFLM's, TypeScript's: listed below), and
its size table is current."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from arenalens.builds.build import build_named
from arenalens.errors import UsageError
from tests import sizes

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "architecture.md"
CODE_FOLDERS = ("src", "tests", "flows", "fuzz", "benchmarks")
# Names the document quotes that belong to other projects: TFLM's C++ (its macros, methods and
# build variables) and the TypeScript compiler's options.
EXTERNAL = frozenset(
    {
        "AllocateTensors",  # tflite::MicroInterpreter
        "MicroMutableOpResolver",  # the op resolver a firmware declares
        "OPTIMIZED_KERNEL_DIR",  # TFLM's Makefile
        "TFLITE_CHECK",
        "TFLITE_DCHECK",
        "TF_LITE_ENSURE",
        "_EQ",  # TF_LITE_ENSURE_EQ, quoted as a suffix
        "print_allocations",  # RecordingMicroAllocator::PrintAllocations' output
        "checkJs",  # tsc
    }
)
_PATH_LIKE = re.compile(r"\.(py|json|md|js|sh|toml|txt|css)$")
_NAME_LIKE = re.compile(r"([A-Za-z_][\w.]*)(\(.*\))?")


def quoted(text: str) -> list[str]:
    """Every inline code span of the document's prose (fenced blocks left out)."""
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    return sorted(set(re.findall(r"`([^`\n]+)`", prose)))


@cache
def tree() -> tuple[frozenset[str], frozenset[str]]:
    """(files, folders) of the checkout, relative to it, as posix paths."""
    files = {
        path.relative_to(ROOT).as_posix()
        for folder in (*CODE_FOLDERS, "docs", ".ci")
        for path in (ROOT / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    files |= {path.name for path in ROOT.iterdir() if path.is_file()}
    folders = {str(Path(f).parent.as_posix()) for f in files}
    return frozenset(files), frozenset(folders)


@cache
def defined_names() -> frozenset[str]:
    """Every name the code defines or spells: modules and folders, functions, classes, assigned
    names and attributes, parameters and keywords, short string constants (JSON keys, rule
    names), and the viewer's JavaScript modules."""
    found: set[str] = set()
    for folder in CODE_FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            found.update(path.relative_to(ROOT).with_suffix("").parts)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    found.add(node.name)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    found.add(node.id)
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    found.add(node.attr)
                elif isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and node.arg):
                    found.add(node.arg)
                elif isinstance(node, ast.Constant) and _word(node.value):
                    found.add(node.value)
    found.update(path.stem for path in (ROOT / "src").rglob("*.js"))
    return frozenset(found)


def _word(value: object) -> bool:
    """A string constant that could be a quoted name: a word, dotted or dashed."""
    return isinstance(value, str) and re.fullmatch(r"[\w.-]+", value) is not None


def _is_path(token: str) -> bool:
    return " " not in token and ("/" in token or bool(_PATH_LIKE.search(token)))


def _path_exists(token: str) -> bool:
    """A file or folder of the checkout that ends with this path (the document names modules
    relative to their package: `build.py` under `builds/`)."""
    files, folders = tree()
    wanted = token.rstrip("/")
    return any(
        candidate == wanted or candidate.endswith("/" + wanted) for candidate in (*files, *folders)
    )


def _is_build_name(token: str) -> bool:
    try:
        build_named(token)
    except UsageError:
        return False
    return True


def missing(text: str) -> list[str]:
    """The files and names a document quotes that the tree lacks."""
    found = []
    for token in quoted(text):
        if any(mark in token for mark in "<*"):  # a pattern: kernels/<library>/, Register_*
            continue
        if _is_path(token):
            # A module and one of its names ('cli/common.selected_build'); TFLM's own sources.
            path, _, attribute = token.rpartition(".") if "/" in token else (token, "", "")
            if token.endswith((".cc", ".h")):
                continue
            if _path_exists(token) or _is_build_name(token):
                continue
            if attribute and _path_exists(path + ".py") and attribute in defined_names():
                continue
            found.append(token)
            continue
        name = _NAME_LIKE.fullmatch(token)
        if name is None:
            continue
        parts = [part for part in name[1].split(".") if part]
        if any(part not in defined_names() and part not in EXTERNAL for part in parts):
            found.append(token)
    return found


def test_every_file_and_name_the_architecture_names_exists() -> None:
    assert missing(DOCUMENT.read_text(encoding="utf-8")) == []


def test_the_check_catches_a_stale_name() -> None:
    stale = "See `builds/nowhere.py`, `no_such_function()` and `Build.no_such_field`; `Build`."
    assert missing(stale) == ["Build.no_such_field", "builds/nowhere.py", "no_such_function()"]


def test_the_size_table_is_current() -> None:
    """Each folder within a tenth of the size the table states (`python -m tests.sizes`)."""
    stated = {size.folder: size for size in sizes.documented()}
    now = {size.folder: size for size in sizes.measured()}
    assert sorted(stated) == sorted(now), "a folder came or went: python -m tests.sizes"
    grown = [
        f"{folder}: {stated[folder].lines:,} -> {size.lines:,} lines, "
        f"{stated[folder].files} -> {size.files} files"
        for folder, size in now.items()
        if sizes.moved(stated[folder], size)
    ]
    assert grown == [], "python -m tests.sizes rewrites the table"
