"""Terminal report: MemoryReport → text (rich): summary panel, plans, tensor table, ASCII plan.

Model-derived names go into `Text` objects, never into markup strings, so a tensor called
`[bold]x[/]` prints as written.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from arenalens.builds.build import build_flags
from arenalens.names import short_name
from arenalens.next_steps import Step, optimized_file
from arenalens.planning.problem import missing_extra_note
from arenalens.report.console import Line, render_text
from arenalens.report.data import ArenaReport, FindingRow, MemoryReport, PlanView
from arenalens.report.heap_output import heap_table, heap_tables
from arenalens.report.labels import shape_label
from arenalens.report.verdict_lines import (
    declare_line,
    declare_notes,
    placement_lines,
    steps_lines,
    verdict_text,
)
from arenalens.units import format_bytes_exact, format_bytes_short

if TYPE_CHECKING:  # a diff exists only when two models are compared
    from arenalens.report.diff import ReportDiff


def render_report_text(
    report: MemoryReport,
    *,
    color: bool = False,
    width: int = 120,
    tensor_rows: int | None = 20,
    memory_plan: str | None = None,
    diff: ReportDiff | None = None,
    screen_lines: int | None = None,
) -> str:
    """Report → terminal text: the number to declare, the verdict and what to do next first;
    then the summary, plans, the largest tensors (None = all), the ASCII plan.

    With `screen_lines` (the CLI's default), only what fits that many lines: the number, the
    verdict, the steps, the findings one line each, then the summary while room is left."""
    if screen_lines is not None:
        return one_screen(report, color=color, width=width, diff=diff, lines=screen_lines)
    parts: list[Line] = [
        *headline(report),
        *next_steps_block(report),
        summary_panel(report),
        *heap_tables(report.interpreter_heap),
        plans_table(report),
    ]
    if report.primary.buffers:
        parts.append(tensor_table(report.primary, tensor_rows=tensor_rows))
    if memory_plan:
        parts.append(
            Panel(
                Text(memory_plan.rstrip("\n")),
                title="memory plan (TFLM PrintMemoryPlan format)",
                title_align="left",
                border_style="dim",
            )
        )
    if diff is not None:
        parts.append(diff_table(diff))
    return render_text(parts, color=color, width=width)


# The terminal report's default length: one screen.
SCREEN_LINES = 60
_SEVERITY_STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan"}
# Findings listed in full under "what to do next"; the rest are counted (diagnose shows all).
SHOWN_FINDINGS = 8
# Findings listed on the one-screen report, one line each.
SCREEN_FINDINGS = 5
# Characters of a tensor name in a table cell.
NAME_CELL_CHARS = 48


def one_screen(
    report: MemoryReport,
    *,
    color: bool,
    width: int,
    diff: ReportDiff | None = None,
    lines: int = SCREEN_LINES,
) -> str:
    """At most `lines` lines: the number, the verdict and the steps always; then the findings,
    the comparison's totals, the summary and the largest buffers while they fit; a last line
    says what `--all` adds."""
    hint = Text(
        "--all prints every plan, every buffer and TFLM's memory plan; -o report.html writes "
        "the interactive page",
        style="dim",
    )

    def rendered(parts: list[Line]) -> str:
        return render_text(parts, color=color, width=width) if parts else ""

    text = rendered([*headline(report), *report_steps(report)])
    blocks: list[list[Line]] = [findings_lines(report)]
    if diff is not None:
        blocks.append([diff_totals(diff)])
    verdict = report.verdict
    if verdict is None or verdict.has_number:  # a plan with no number to it is --all's
        blocks.append([summary_panel(report)])
        if report.interpreter_heap:  # the delegate the figure is for
            blocks.append([heap_table(report.interpreter_heap[0])])
        if report.primary.buffers:
            blocks.append([tensor_table(report.primary, tensor_rows=5)])
    room = lines - _count_lines(rendered([hint]))
    if _count_lines(text) > room:  # the first lines alone: cut them, never the hint
        text = "\n".join(text.splitlines()[:room]) + "\n"
    for block in blocks:
        more = rendered(block)
        if more and _count_lines(text) + _count_lines(more) <= room:
            text += more
    return strip_lines(text + rendered([hint]))


def strip_lines(text: str) -> str:
    """Drop the spaces rich pads lines with."""
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _count_lines(text: str) -> int:
    return len(text.splitlines())


def report_steps(report: MemoryReport) -> list[Line]:
    """'what to do next:' and the numbered steps (the verdict's, each command on its own line)."""
    verdict = report.verdict
    if verdict is not None:
        return list(steps_lines(verdict.steps))
    return list(steps_lines([Step(text) for text in report.next_steps]))


def findings_lines(report: MemoryReport) -> list[Line]:
    """diagnose's findings, one line each (severity, rule, where, the fix), the rest counted."""
    if not report.findings:
        return []
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True, min_width=len("WARNING"))
    grid.add_column()  # wrapped, never cut: a fix may be a command to run as printed
    _add_findings(
        grid,
        report,
        SCREEN_FINDINGS,
        lambda finding, saves: Text.assemble(
            (finding.rule, "bold"), f"  {finding.where}: {finding.fix}{saves}"
        ),
    )
    return [grid]


def _add_findings(
    table: Table, report: MemoryReport, shown: int, text: Callable[[FindingRow, str], Text]
) -> None:
    """The first `shown` findings, a row each (severity, then `text` of the finding and what it
    saves), and how many more `diagnose` lists."""
    for finding in report.findings[:shown]:
        saves = (
            f" (saves {format_bytes_exact(finding.saving_bytes)})" if finding.saving_bytes else ""
        )
        table.add_row(
            Text(finding.severity.upper(), style=_SEVERITY_STYLES.get(finding.severity, "")),
            text(finding, saves),
        )
    hidden = len(report.findings) - shown
    if hidden > 0:
        table.add_row(
            "", Text(f"{hidden} more: arenalens diagnose {report.model_argument}", style="dim")
        )


def headline(report: MemoryReport) -> list[Line]:
    """The first lines: the number to declare with its parts, what build it is for, the verdict
    (the command's verdict when there is one: the number the device needs as the model is)."""
    lines: list[Line] = []
    verdict = report.verdict
    declared = verdict.declared if verdict is not None else report.declared
    if declared is not None:
        lines.append(declare_line(declared))
        lines.extend(declare_notes(declared))
    else:
        lines.append(Text(f"to declare: {format_bytes_exact(report.required_bytes)}", style="bold"))
    if verdict is not None and verdict.answer is not None:
        lines.append(verdict_text(verdict))
        lines.extend(placement_lines(verdict))
    return lines


def next_steps_block(report: MemoryReport) -> list[Line]:
    """'what to do next': the steps, then the findings (id, severity, where, fix, bytes saved)."""
    steps = report_steps(report)
    if not report.findings:
        return steps
    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold")
    table.add_column()
    _add_findings(
        table,
        report,
        SHOWN_FINDINGS,
        lambda finding, saves: Text.assemble(
            (finding.rule, "bold"),
            ("  " + finding.where, "dim"),
            "\n",
            finding.message,
            "\n",
            ("fix: " + finding.fix + saves, "green"),
        ),
    )
    return [*steps, Panel(table, title="findings", title_align="left", border_style="yellow")]


def _percent(part: int, whole: int) -> str:
    return "-" if whole <= 0 else f"{100 * part / whole:.1f}%"


def summary_panel(report: MemoryReport) -> Panel:
    """The ten-second answer: arena, bound, overhead, reuse, peak and budget."""
    arena = report.primary
    chosen = arena.plans[0]
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    bound = arena.lower_bound_for(chosen)
    overhead = chosen.arena_size - bound
    table.add_row(
        f"arena ({arena.name})",
        Text.assemble(
            (format_bytes_short(chosen.arena_size), "bold cyan"),
            f"  {format_bytes_exact(chosen.arena_size)} with ",
            (chosen.planner, "bold"),
            " (the runtime's planner)" if chosen.is_runtime else "",
            missing_extra_note(chosen.missing_extra),
        ),
    )
    table.add_row(
        "lower bound",
        f"{format_bytes_short(arena.lower_bound)}  live at the busiest step: no plan that keeps "
        "tensors whole can use less (overlaps and splits can)",
    )
    if arena.overlap_lower_bound is not None:
        table.add_row("with overlaps", _overlap_text(arena, chosen))
    table.add_row("overhead", _overhead_text(overhead, bound))
    saved = arena.no_reuse_bytes - chosen.arena_size
    table.add_row(
        "reuse",
        f"{format_bytes_short(arena.no_reuse_bytes)} without reuse → "
        f"{format_bytes_short(chosen.arena_size)} ({format_bytes_short(saved)} saved, "
        f"{_percent(saved, arena.no_reuse_bytes)})",
    )
    table.add_row("peak", _peak_text(arena))
    if report.budget is not None and report.verdict is None:
        table.add_row("budget", _budget_text(report))
    for note in arena.notes:
        table.add_row("note", Text(note, style="dim"))
    title = Text.assemble(
        (report.model, "bold"), f"  ·  {report.runtime}  ·  {report.operator_count} operators"
    )
    return Panel(table, title=title, title_align="left", border_style="cyan")


def _overlap_text(arena: ArenaReport, chosen: PlanView) -> Text:
    """The bound with overlaps and which outputs the chosen plan slides over their inputs."""
    assert arena.overlap_lower_bound is not None
    regions = arena.shared_regions(chosen)
    opcodes = sorted({arena.overlaps[index].opcode for index, *_ in regions})
    text = (
        f"lower bound {format_bytes_short(arena.overlap_lower_bound)} when an output may start "
        f"below an input it consumes ({len(arena.overlaps)} allowed by the kernels' access order); "
    )
    if regions:
        text += f"this plan shares bytes in {len(regions)}: " + ", ".join(opcodes)
    else:
        text += "this plan shares none"
    return Text(text)


def _overhead_text(overhead: int, lower_bound: int) -> Text:
    if overhead < 0:
        # Only fixed (offline-planned) buffers may share bytes while live; then no bound holds.
        return Text(
            f"none: {format_bytes_short(-overhead)} below the whole-tensor bound, as its fixed "
            "offsets share bytes on purpose (overlaps)",
            style="green",
        )
    if overhead == 0:
        return Text("0 B: the plan meets the lower bound", style="green")
    return Text(
        f"{format_bytes_short(overhead)} ({_percent(overhead, lower_bound)} above the bound)",
        style="yellow",
    )


def _peak_text(arena: ArenaReport) -> Text:
    peak = arena.peak
    if peak is None:
        return Text("no steps")
    live = arena.live_at(peak.step)
    text = Text.assemble(
        (format_bytes_short(peak.live_bytes), "bold"),
        f" live at step {peak.step}, while ",
        (arena.step_label(peak), "bold magenta"),
        f" runs ({len(live)} buffers live)",
    )
    return text


def _budget_text(report: MemoryReport) -> Text:
    assert report.budget is not None
    margin = report.budget - report.required_bytes
    if margin >= 0:
        return Text(
            f"{format_bytes_short(report.budget)}: fits, {format_bytes_short(margin)} to spare",
            style="green",
        )
    return Text(
        f"{format_bytes_short(report.budget)}: over by {format_bytes_short(-margin)}",
        style="bold red",
    )


def plans_table(report: MemoryReport) -> Table:
    """One row per planner: arena, gap to the bound, and change vs the runtime's plan."""
    arena = report.primary
    runtime = next((p for p in arena.plans if p.is_runtime), arena.plans[0])
    caption = None
    if report.runtime == "tflm" and len(arena.plans) > 1:
        caption = (
            "a plan other than the runtime's applies after `arenalens optimize "
            f"{report.model_argument}{build_flags(report.build)} -o "
            f"{optimized_file(shlex.split(report.model_argument)[0])} --planner NAME`"
        )
    table = Table(title="plans", title_justify="left", caption=caption, caption_justify="left")
    table.add_column("planner")
    table.add_column("arena", justify="right")
    table.add_column("bytes", justify="right")
    table.add_column("over bound", justify="right")
    table.add_column(f"vs {runtime.planner}", justify="right")
    with_required = any(view.required_bytes is not None for view in arena.plans)
    if with_required:
        table.add_column("kTensorArenaSize" if report.runtime == "tflm" else "declare")
    if report.budget is not None:
        table.add_column("budget", justify="left")
    for view in arena.plans:
        row: list[Any] = [
            _planner_label(view),
            format_bytes_short(view.arena_size),
            f"{view.arena_size:,}",
            _percent(view.arena_size - arena.lower_bound_for(view), arena.lower_bound_for(view)),
            _signed_bytes(view.arena_size - runtime.arena_size),
        ]
        if with_required:
            row.append("-" if view.required_bytes is None else f"{view.required_bytes:,}")
        if report.budget is not None:
            fits = report.required_with(view.planner) <= report.budget
            row.append(Text("fits", style="green") if fits else Text("over", style="red"))
        table.add_row(*row)
    return table


def _planner_label(view: PlanView) -> Text:
    label = Text(view.planner)
    if view.is_runtime:
        label.append(" (runtime)", style="dim")
    if view.proven_optimal:
        label.append(" (optimal)", style="green")
    return label


def _signed_bytes(delta: int) -> Text:
    if delta == 0:
        return Text("=")
    text = ("+" if delta > 0 else "−") + format_bytes_short(abs(delta))
    return Text(text, style="red" if delta > 0 else "green")


def tensor_table(arena: ArenaReport, *, tensor_rows: int | None = 20) -> Table:
    """The largest buffers (all when tensor_rows is None), marking those live at the peak."""
    peak = arena.peak
    at_peak = set(arena.live_at(peak.step)) if peak is not None else set()
    chosen = arena.plans[0]
    order = sorted(range(len(arena.buffers)), key=lambda i: (-arena.buffers[i].size, i))
    shown = order if tensor_rows is None else order[:tensor_rows]
    title = "buffers, largest first" + (
        "" if peak is None else f" (● = live at peak step {peak.step})"
    )
    hidden = len(order) - len(shown)
    table = Table(
        title=title,
        title_justify="left",
        caption=f"{hidden} smaller buffers not shown (--all shows them)" if hidden else None,
        caption_justify="left",
    )
    for column, justify in (
        ("", "left"),
        ("id", "right"),
        ("name", "left"),
        ("shape", "left"),
        ("dtype", "left"),
        ("bytes", "right"),
        ("steps", "right"),
        ("offset", "right"),
        ("written by", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for i in shown:
        row = arena.buffers[i]
        table.add_row(
            Text("●", style="bold magenta") if i in at_peak else Text(""),
            str(row.id),
            Text(short_name(row.name, limit=NAME_CELL_CHARS), no_wrap=True, overflow="ellipsis"),
            shape_label(row.kind, row.shape),
            row.dtype,
            f"{row.nbytes:,}",
            f"{row.first}–{row.last}",
            f"{chosen.offsets[i]:,}",
            _writer(arena, row.producer),
        )
    return table


def _writer(arena: ArenaReport, step: int | None) -> str:
    if step is None:
        return "input"
    for row in arena.steps:
        if row.step == step:
            return arena.step_label(row)
    return f"step {step}"


def diff_totals(diff: ReportDiff) -> Group:
    """The comparison's totals only (the one-screen report; --all adds the per-tensor table)."""
    return Group(*diff_table(diff).renderables[:2])


def diff_table(diff: ReportDiff) -> Group:
    """Where the bytes went between two reports: totals and the largest per-tensor changes."""
    heading = Text.assemble(
        ("compare  ", "bold"),
        "left: ",
        (diff.left_label, "cyan"),
        "   right: ",
        (diff.right_label, "cyan"),
    )
    totals = Table()
    for column in ("", "left", "right", "change"):
        totals.add_column(column, justify="left" if not column else "right")
    for label, left, right in diff.totals:
        totals.add_row(
            label, format_bytes_short(left), format_bytes_short(right), _signed_bytes(right - left)
        )
    changes = Table(title="largest changes per tensor", title_justify="left")
    for column in ("name", "left bytes", "right bytes", "change", "left offset", "right offset"):
        changes.add_column(column, justify="left" if column == "name" else "right")
    for change in diff.largest_changes(15):
        changes.add_row(
            Text(short_name(change.name, limit=NAME_CELL_CHARS), no_wrap=True, overflow="ellipsis"),
            _maybe_bytes(change.left_bytes),
            _maybe_bytes(change.right_bytes),
            _signed_bytes(change.byte_change),
            _maybe_offset(change.left_offset),
            _maybe_offset(change.right_offset),
        )
    return Group(heading, totals, changes)


def _maybe_bytes(nbytes: int | None) -> str:
    return "-" if nbytes is None else format_bytes_short(nbytes)


def _maybe_offset(offset: int | None) -> str:
    return "-" if offset is None else f"{offset:,}"


__all__: Sequence[str] = ("plans_table", "render_report_text", "summary_panel", "tensor_table")
