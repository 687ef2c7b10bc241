"""FitCheck → terminal text: the verdict, then needed / available / headroom with their parts."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table
from rich.text import Text

from arenalens.fit import FitCheck
from arenalens.report.console import format_bytes, render_text
from arenalens.targets import Target

_RUNTIME_TITLES = {"tflm": "TFLM", "litert": "LiteRT"}


def render_check(check: FitCheck, *, color: bool, width: int = 120) -> str:
    """FitCheck → a verdict line and a small table of the numbers."""
    runtime = _RUNTIME_TITLES.get(check.runtime, check.runtime)
    where = f" on {check.target.title}" if check.target else ""
    verdict = Text.assemble(
        ("FITS" if check.fits else "DOES NOT FIT", "bold green" if check.fits else "bold red"),
        "  ",
        (check.model, "bold"),
        f"{where} ({runtime}, planner {check.planner})",
    )
    table = Table(show_header=False, box=None, padding=(0, 2, 0, 2))
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_column(justify="right", style="dim")
    table.add_column()
    table.add_row(
        "needs",
        f"{check.required_bytes:,} B",
        format_bytes(check.required_bytes),
        _parts(check.parts.items()),
    )
    table.add_row(
        "available",
        f"{check.available_bytes:,} B",
        format_bytes(check.available_bytes),
        _budget_source(check),
    )
    if check.fits:
        share = 100.0 * check.headroom_bytes / check.available_bytes
        table.add_row(
            "headroom",
            f"{check.headroom_bytes:,} B",
            format_bytes(check.headroom_bytes),
            f"{share:.1f}% of available",
        )
    else:
        short = -check.headroom_bytes
        table.add_row(
            "shortfall",
            f"{short:,} B",
            format_bytes(short),
            f"{100.0 * short / check.available_bytes:.1f}% more RAM needed",
        )
    lines: list[Text | Table] = [verdict, table]
    if not check.fits:
        lines.append(_advice(check))
    return _strip(render_text(lines, color=color, width=width))


def _strip(text: str) -> str:
    """Drop the spaces rich pads table rows with."""
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _parts(parts: Iterable[tuple[str, int]]) -> str:
    return ", ".join(f"{name.replace('_', ' ')} {value:,} B" for name, value in parts if value)


def _budget_source(check: FitCheck) -> str:
    reserve = f" − reserve {check.reserve_bytes:,} B" if check.reserve_bytes else ""
    if check.target is not None:
        return f"{check.target.name} arena limit {check.budget_bytes:,} B{reserve}"
    return f"budget {check.budget_bytes:,} B{reserve}"


def _advice(check: FitCheck) -> Text:
    if check.best_case_bytes <= check.available_bytes < check.required_bytes:
        return Text(
            f"An optimal plan needs about {check.best_case_bytes:,} B, which fits: try "
            "`arenalens optimize`, then re-check.",
            style="yellow",
        )
    return Text(
        f"Even an optimal plan needs about {check.best_case_bytes:,} B: shrink the model "
        "(`arenalens diagnose` shows the peak and what each change saves).",
        style="yellow",
    )


def render_targets(targets: Iterable[Target], *, color: bool, width: int = 120) -> str:
    """The --list-targets table: name, part, SRAM, arena limit, notes."""
    table = Table(title="targets (--target NAME)", title_justify="left", header_style="bold")
    table.add_column("name")
    table.add_column("part")
    table.add_column("SRAM", justify="right")
    table.add_column("arena limit", justify="right")
    table.add_column("notes / source", overflow="fold")
    for target in targets:
        table.add_row(
            target.name,
            f"{target.title}\n{target.core}",
            format_bytes(target.sram_bytes),
            format_bytes(target.arena_limit_bytes),
            f"{target.note}\n{target.source}" if target.note else target.source,
        )
    return render_text([table], color=color, width=width)
