"""The HTML viewer's modules: joined deterministically, refused when the join cannot take them,
type-annotated with spelled-out names, their document typedef complete, shipped in the wheel."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from arenalens.fit import check_fit
from arenalens.report.build import build_report
from arenalens.report.data import FindingRow, InputSizeRow, report_document
from arenalens.report.viewer import (
    ViewerBuildError,
    join_modules,
    module_order,
    parse_module,
    read_modules,
    viewer_script,
)
from arenalens.verdict import verdict_for
from tests.conftest import REPO_ROOT
from tests.report_helpers import analysis_for, synthetic_model

VIEWER = REPO_ROOT / "src" / "arenalens" / "report" / "assets" / "viewer"
MODULES = sorted(VIEWER.glob("*.js"))
VIEWER_FOLDER = resources.files("arenalens.report").joinpath("assets", "viewer")


def _join(**sources: str) -> str:
    modules = {f"{name}.js": parse_module(f"{name}.js", text) for name, text in sources.items()}
    return join_modules(modules)


def test_the_joined_viewer_is_the_same_every_time_and_holds_every_module() -> None:
    script = viewer_script()
    assert script == join_modules(read_modules(VIEWER_FOLDER))
    joined = re.findall(r"^// ---- (\S+)$", script, re.MULTILINE)
    # Every module but the typedefs (types only) is on the page, each exactly once.
    assert sorted(joined) == sorted(path.name for path in MODULES if path.name != "document.js")
    assert joined[-1] == "main.js"
    assert not re.search(r"^\s*(import|export)\b", script, re.MULTILINE)
    assert "</script" not in script.lower() and "<!--" not in script


def test_modules_are_joined_in_the_order_a_browser_evaluates_them() -> None:
    script = _join(
        main='import { b } from "./bee.js";\nimport { a } from "./ay.js";\nb(a);\n',
        bee='import { a } from "./ay.js";\nexport function b(x) { return a + x; }\n',
        ay="export const a = 1;\n",
    )
    assert re.findall(r"^// ---- (\S+)$", script, re.MULTILINE) == ["ay.js", "bee.js", "main.js"]
    assert "const a = 1;" in script and "function b(x)" in script
    assert "export const" not in script and "export function" not in script
    assert script.startswith("/*") and '"use strict";' in script


def test_whole_line_jsdoc_blocks_stay_off_the_page_and_inline_casts_stay() -> None:
    script = _join(
        main=(
            "/**\n * Two.\n * @type {number}\n */\nconst two = 2;\n"
            "const three = /** @type {number} */ (3);\n// why: kept\n"
        )
    )
    assert "Two." not in script and "@type {number} */ (3)" in script and "// why: kept" in script


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        ({"main": 'import { b } from "./bee.js";\n', "bee": "export const a = 1;\n"}, "export b"),
        ({"main": 'import { a as b } from "./bee.js";\n', "bee": "export const a = 1;\n"}, "plain"),
        ({"main": 'import * as bee from "./bee.js";\n', "bee": "export const a = 1;\n"}, "only"),
        ({"main": "export default 1;\n"}, "only `export`"),
        ({"main": 'import { a } from "./bee.js";\n'}, "does not exist"),
        (
            {
                "main": 'import { a } from "./bee.js";\n',
                "bee": 'import { c } from "./sea.js";\nexport const a = 1;\n',
                "sea": 'import { a } from "./bee.js";\nexport const c = 1;\n',
            },
            "cycle: bee.js → sea.js → bee.js",
        ),
        (
            {
                "main": 'import { a } from "./bee.js";\nconst helper = 1;\n',
                "bee": "export const a = 1;\nfunction helper() {}\n",
            },
            "both declare 'helper'",
        ),
    ],
)
def test_the_join_refuses_what_it_cannot_join_faithfully(
    sources: dict[str, str], message: str
) -> None:
    with pytest.raises(ViewerBuildError, match=re.escape(message)):
        _join(**sources)


def test_main_needs_every_module_but_the_typedefs() -> None:
    modules = read_modules(VIEWER_FOLDER)
    assert set(modules) - set(module_order(modules)) == {"document.js"}


def _code(source: str) -> str:
    """Source without comments and string literals (what names are declared in)."""
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.DOTALL)
    source = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', source)
    return re.sub(r"//[^\n]*", " ", source)


# Coordinates keep their conventional names.
_ALLOWED_SHORT = {"x", "y"}
_DECLARED_NAMES = (
    re.compile(r"\b(?:const|let|var|function|class)\s+([A-Za-z_$][\w$]*)"),
    re.compile(r"\b(?:const|let)\s*[\[{]([^\]}=]*)[\]}]\s*="),  # destructuring
    re.compile(r"\bfor\s*\(\s*(?:const|let)\s*\[([^\]]*)\]"),
    re.compile(r"\bfunction\s*[\w$]*\s*\(([^)]*)\)"),
    re.compile(r"\(([^()]*)\)\s*=>"),
    re.compile(r"([A-Za-z_$][\w$]*)\s*=>"),
    # class methods
    re.compile(r"^\s+(?!if\b|for\b|while\b|switch\b|catch\b)[\w$]+\s*\(([^)]*)\)\s*\{", re.M),
)


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_each_module_is_type_checked_and_names_are_spelled_out(path: Path) -> None:
    source = path.read_text("utf-8")
    assert source.startswith("// @ts-check\n/*"), "opens with // @ts-check, then what it is for"
    short = set()
    for pattern in _DECLARED_NAMES:
        for match in pattern.finditer(_code(source)):
            for part in re.split(r"[,\s]+", match.group(1)):
                name = part.split(":")[-1].strip(".").strip()  # {a: name}, ...rest
                if len(name) == 1 and name not in _ALLOWED_SHORT:
                    short.add(name)
    assert not short, f"{path.name}: one-letter names {sorted(short)}"


def _typedefs() -> dict[str, set[str]]:
    """document.js → {typedef name: its property names}, for typedefs of objects."""
    found: dict[str, set[str]] = {}
    for block in re.findall(r"/\*\*(.*?)\*/", (VIEWER / "document.js").read_text(), re.DOTALL):
        named = re.search(r"@typedef \{object\} (\w+)", block)
        if named:
            found[named.group(1)] = set(re.findall(r"@property \{[^}]*\} \[?(\w+)", block))
    return found


def _optional_properties() -> set[tuple[str, str]]:
    """(typedef, property) for the properties document.js marks optional (`[name]`): present in
    the document only when they say something."""
    found: set[tuple[str, str]] = set()
    for block in re.findall(r"/\*\*(.*?)\*/", (VIEWER / "document.js").read_text(), re.DOTALL):
        named = re.search(r"@typedef \{object\} (\w+)", block)
        if named:
            for name in re.findall(r"@property \{[^}]*\} \[(\w+)\]", block):
                found.add((named.group(1), name))
    return found


def _placed_verdict() -> dict[str, Any]:
    """The report document's verdict on a board with several RAM banks (it has `placement`)."""
    from arenalens.pipeline import analyze
    from arenalens.targets import get_target
    from tests.fixtures.bank_models import TWO_BANKS

    analysis = analyze(TWO_BANKS[1](), build="cortex-m7/cmsis-nn")
    fit = check_fit(analysis, target=get_target("nucleo-h743zi"))
    report = replace(build_report(analysis), verdict=verdict_for(analysis, fit=fit))
    verdict: dict[str, Any] = report_document([report], tool="arenalens")["reports"][0]["verdict"]
    return verdict


def _interpreter_heap() -> dict[str, Any]:
    """A LiteRT report document's first interpreter heap (XNNPACK's)."""
    from arenalens.examples import example_bytes
    from arenalens.pipeline import analyze

    analysis = analyze(example_bytes("kws_ds_cnn"), runtime="litert")
    report = report_document([build_report(analysis)], tool="arenalens")["reports"][0]
    heap: dict[str, Any] = report["interpreter_heap"][0]
    return heap


def _heap_way() -> dict[str, Any]:
    """A LiteRT report document's first way a model input picks (an IF's branch)."""
    from arenalens.pipeline import analyze
    from tests.litert_control_flow_heap_cases import if_state_case

    analysis = analyze(if_state_case(12), runtime="litert")
    report = report_document([build_report(analysis)], tool="arenalens")["reports"][0]
    way: dict[str, Any] = report["interpreter_heap"][0]["ways"][0]
    return way


def test_the_typedefs_describe_every_field_of_the_document() -> None:
    analysis = analysis_for(synthetic_model(4))
    report = build_report(analysis, budget=64 * 1024)
    report = replace(
        report,
        verdict=verdict_for(analysis, fit=check_fit(analysis, budget_bytes=64 * 1024)),
        findings=(FindingRow("rule", "info", "model", "message", "fix", 16),),
        input_sizes=(InputSizeRow((1, 8, 8, 3), 8, 4096, True),),
    )
    document = report_document([report], tool="arenalens")
    first = document["reports"][0]
    arena = first["arenas"][0]
    samples: dict[str, dict[str, Any]] = {
        "ReportDocument": document,
        "Report": first,
        "Build": first["build"],
        "TflmRelease": first["build"]["tflm"],
        "Declare": first["declare"],
        "DeclarePart": first["declare"]["parts"][0],
        "Verdict": first["verdict"],
        "Finding": first["findings"][0],
        "InputSize": first["input_sizes"][0],
        "Arena": arena,
        "OverlapColumns": arena["overlaps"],
        "BufferColumns": arena["buffers"],
        "StepColumns": arena["steps"],
        "Plan": arena["plans"][0],
        "Section": first["arena_sections"][-1],
        "SectionPart": first["arena_sections"][-1]["parts"][0],
        "SectionItem": first["arena_sections"][-1]["parts"][0]["largest"][0],
        "Placement": _placed_verdict()["placement"],
        "PlacedBuffer": _placed_verdict()["placement"]["banks"][0],
        "InterpreterHeap": _interpreter_heap(),
        "HeapPart": _interpreter_heap()["parts"][0],
        "HeapWay": _heap_way(),
        "WayChoice": _heap_way()["choices"][0],
    }
    typedefs = _typedefs()
    optional = _optional_properties()
    assert set(typedefs) == set(samples)
    for name, sample in samples.items():
        absent = {field for field in typedefs[name] - set(sample) if (name, field) in optional}
        assert typedefs[name] - absent == set(sample), name


@pytest.mark.slow
def test_a_built_wheel_ships_the_viewer_and_renders_the_same_page(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, source / name)
    skipped = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(REPO_ROOT / "src", source / "src", ignore=skipped)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), "."],
        check=False,
        cwd=source,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = tmp_path.glob("arenalens-*.whl")
    installed = tmp_path / "installed"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(installed)
    for path in [*MODULES, VIEWER.parent / "report.css"]:
        assert f"arenalens/report/{path.relative_to(VIEWER.parent.parent).as_posix()}" in names

    def page(path: Path) -> str:
        output = tmp_path / f"{path.name}.html"
        script = (
            "import sys, arenalens; from arenalens.cli import main; "
            f"assert arenalens.__file__.startswith({str(path)!r}), arenalens.__file__; "
            f"sys.exit(main(['report', 'example:kws_ds_cnn', '-o', {str(output)!r}]))"
        )
        environment = {**os.environ, "PYTHONPATH": str(path)}
        ran = subprocess.run(
            [sys.executable, "-c", script],
            check=False,
            env=environment,
            capture_output=True,
            text=True,
        )
        assert ran.returncode == 0, ran.stderr[-2000:]
        return output.read_text("utf-8")

    from_wheel = page(installed)
    assert from_wheel == page(REPO_ROOT / "src")
    assert "// ---- main.js" in from_wheel
