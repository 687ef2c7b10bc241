"""Diagnosis → JSON document and terminal text (findings grouped by severity, fixes spelled out)."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from arenalens.builds.build import build_document
from arenalens.declared import DeclaredArena, declared_arena
from arenalens.diagnostics import Diagnosis, Severity
from arenalens.report.console import render_text
from arenalens.report.verdict_lines import declare_line
from arenalens.units import format_bytes_exact

DIAGNOSE_SCHEMA_VERSION = 1
_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_RUNTIME_TITLES = {"tflm": "TFLM", "litert": "LiteRT"}
_LITERT_ARENAS = (
    "the findings on arenas below are about LiteRT's arenas with the builtin kernels (`plan "
    "--runtime litert`), one part of that memory"
)


def diagnosis_document(diagnosis: Diagnosis) -> dict[str, Any]:
    """Diagnosis → the `diagnose --json` document."""
    model = diagnosis.model
    return {
        "schema": "arenalens.diagnose",
        "schema_version": DIAGNOSE_SCHEMA_VERSION,
        "model": model.name,
        "file": model.source,
        "runtime": diagnosis.runtime,
        "build": None
        if diagnosis.analysis is None
        else build_document(diagnosis.analysis.budget.build),
        "counts": {severity.value: diagnosis.count(severity) for severity in Severity},
        "findings": [finding.as_dict(model) for finding in diagnosis.findings],
    }


def summary_line(diagnosis: Diagnosis) -> str:
    """'2 errors, 1 warning, 3 info' (or 'no findings')."""
    parts = []
    for severity in Severity:
        count = diagnosis.count(severity)
        if count:
            noun = severity.value if severity == Severity.INFO or count == 1 else f"{severity}s"
            parts.append(f"{count} {noun}")
    return ", ".join(parts) if parts else "no findings"


def render_diagnosis(
    diagnosis: Diagnosis,
    *,
    color: bool,
    width: int = 120,
    minimum: Severity = Severity.INFO,
    declared: DeclaredArena | None = None,
) -> str:
    """Diagnosis → text: the number to declare (`declared`, check's; by default the analysis's
    arenas), a header, then each finding with its location, message and fix."""
    runtime = _RUNTIME_TITLES.get(diagnosis.runtime, diagnosis.runtime)
    build = diagnosis.analysis.build if diagnosis.analysis is not None else None
    if build is not None and not build.is_host:
        runtime += f" on {build.name}"
    header = Text.assemble(
        (diagnosis.model.name, "bold"), f" — {runtime}: {summary_line(diagnosis)}"
    )
    blocks: list[RenderableType] = [header]
    if diagnosis.analysis is not None:
        # The number to declare leads, as in every report (diagnose explains how to lower it).
        if declared is None:
            declared = declared_arena(diagnosis.analysis)
        blocks = [declare_line(declared), header]
        if declared.is_process_memory:
            # check's figure (model file + heap); the arena findings are about one of its parts.
            blocks[1:1] = [
                Text(f"figure for: {declared.device}", style="dim"),
                Text(_LITERT_ARENAS, style="dim"),
            ]
    shown = [f for f in diagnosis.findings if f.severity.rank <= minimum.rank]
    for finding in shown:
        blocks.append(Text(""))
        blocks.append(_finding_block(diagnosis, finding))
    hidden = len(diagnosis.findings) - len(shown)
    if hidden:
        blocks.append(Text(f"\n({hidden} finding(s) below {minimum.value} not shown)", "dim"))
    text = render_text([Group(*blocks)], color=color, width=width)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _finding_block(diagnosis: Diagnosis, finding: Any) -> RenderableType:
    title = Text.assemble(
        (f"{finding.severity.value.upper():<7}", _STYLES[finding.severity]),
        " ",
        (finding.rule, "bold"),
        ("  " + finding.location.describe(diagnosis.model), "dim"),
    )
    lines: list[RenderableType] = [title, _indented(finding.message)]
    lines.append(_indented(f"fix: {finding.fix}", style="green"))
    if finding.saving_bytes:
        lines.append(_indented(f"saves {format_bytes_exact(finding.saving_bytes)}", style="green"))
    return Group(*lines)


def _indented(text: str, style: str = "") -> RenderableType:
    """Text wrapped under the title, continuation lines indented too."""
    return Padding(Text(text, style=style), (0, 0, 0, 8))
