"""A check's verdict as lines made without rich: the number to declare first, then the verdict,
the numbers behind it and what to do (`render_check`); the first lines of every report that shows
a size (`declare_line`, `declare_notes`). Printed to a pipe or a file they need no rich at all
(`report.styled`); the board table, the input search and the preset list are `check_output`'s."""

from __future__ import annotations

from collections.abc import Sequence

from arenalens.builds.build import REFERENCE
from arenalens.builds.records import CORE_SPELLINGS, CORES
from arenalens.declared import DeclaredArena, Status, parts_text
from arenalens.next_steps import Step
from arenalens.planning.problem import missing_extra_note
from arenalens.report.console import render_text
from arenalens.report.labels import declared_qualifier, reason_prefix
from arenalens.report.npu_memory import npu_fit_lines, npu_memory_lines
from arenalens.report.styled import Grid, GridColumn, Styled, Verbatim, styled
from arenalens.units import format_bytes_exact, format_bytes_short
from arenalens.verdict import Answer, Verdict

_RUNTIME_TITLES = {"tflm": "TFLM", "litert": "LiteRT"}
_VERDICT_STYLES = {
    "FITS": "bold green",
    "FITS (estimate)": "bold yellow",
    "FITS AFTER OPTIMIZE": "bold yellow",
    "DOES NOT FIT": "bold red",
    "CANNOT RUN": "bold red",
    "CANNOT RUN CORRECTLY": "bold red",
    "INPUT SHAPE UNKNOWN": "bold red",
}
# Why there is no number, after 'kTensorArenaSize: none — '.
_NO_NUMBER = {
    Status.CANNOT_RUN: "{runtime} cannot run this model",
    Status.WRONG_OUTPUTS: "the model's offline plan would corrupt tensors (CANNOT RUN CORRECTLY)",
}


_RED_STATUSES = (Status.CANNOT_RUN, Status.WRONG_OUTPUTS, Status.PLACEHOLDER_SHAPE)
# Reasons listed under the number; --json has every one.
_REASONS_SHOWN = 5


def declare_line(declared: DeclaredArena) -> Styled:
    """'kTensorArenaSize = 7,584 B (7.41 KiB): head 5.83 KiB + tail 1.58 KiB, both inside the
    tensor arena' — the first line of every report that shows a size."""
    why = _NO_NUMBER.get(declared.status)
    if why is not None:
        runtime = _RUNTIME_TITLES.get(declared.runtime, declared.runtime)
        return Styled(
            ((f"{declared.symbol}: none", "bold red"), (" — " + why.format(runtime=runtime), ""))
        )
    line = Styled(
        (
            (f"{declared.symbol} = ", "bold"),
            (format_bytes_exact(declared.required_bytes), "bold cyan"),
            (f" ({format_bytes_short(declared.required_bytes)})", ""),
        )
    )
    qualifier = declared_qualifier(declared.status)
    if qualifier:
        style = (
            "bold red"
            if declared.status in (Status.PLACEHOLDER_SHAPE, Status.WRONG_OUTPUTS)
            else "yellow"
        )
        line += styled(f" ({qualifier})", style)
    if declared.parts:
        line += styled(": " + parts_text(declared, format_bytes_short))
    return line


def _device_options(verdict: Verdict) -> str | None:
    """'--cpu cortex-m7 [--kernels cmsis-nn]' when a board whose core has a 32-bit model (a core
    of the build records) is checked against the host wheel's figure: the options that give the
    device's, with the libraries its firmware may link besides the core's default; else None."""
    target = None if verdict.fit is None else verdict.fit.target
    if verdict.runtime != "tflm" or target is None:
        return None
    if verdict.build is not None and not verdict.build.is_host:
        return None
    core = CORES.get(CORE_SPELLINGS.get(target.cpu, ""))
    if core is None:
        return None
    others = sorted(core.libraries - {core.default_kernels, REFERENCE})
    return f"--cpu {target.cpu}" + "".join(f" [--kernels {name}]" for name in others)


def declare_notes(declared: DeclaredArena) -> list[Styled]:
    """The lines under the number: what build it is for, why it is an estimate (or why there is
    none: one line per distinct reason), and whose plan."""
    notes = []
    if declared.device:
        notes.append(styled(f"figure for: {declared.device}", "dim"))
    prefix = reason_prefix(declared.status) + ": "
    style = "yellow" if declared.status.gives_a_number else "red"
    for reason in declared.reasons[:_REASONS_SHOWN]:
        notes.append(styled(prefix + reason, style))
    if len(declared.reasons) > _REASONS_SHOWN:
        more = len(declared.reasons) - _REASONS_SHOWN
        notes.append(styled(f"... and {more} more reasons (--json lists them all)", style))
    if not declared.runtime_plan:
        notes.append(
            styled(
                f"with the '{declared.planner}' plan, which the device uses only after "
                "`arenalens optimize` writes it into the model",
                "yellow",
            )
        )
    return notes


def verdict_text(verdict: Verdict) -> Styled:
    """'FITS  kws on ST NUCLEO-F746ZG (Cortex-M7 216 MHz): 320,096 B to spare'; just the word
    when there is no number to compare."""
    answer = verdict.answer
    word = "" if answer is None else answer.value
    text = Styled(((word, _VERDICT_STYLES.get(word, "bold")), ("  ", ""), (verdict.model, "bold")))
    fit = verdict.fit
    if fit is not None:
        text += styled(f" on {verdict.where}" if fit.target is not None else f" in {verdict.where}")
    headroom = verdict.headroom_bytes
    if verdict.npu_short and headroom is not None:
        text += styled(
            f": the arena fits ({format_bytes_exact(headroom)} to spare), not with what the NPU "
            "needs beside it"
        )
    elif headroom is not None:
        text += styled(
            f": {format_bytes_exact(headroom)} to spare"
            if headroom >= 0
            else f": {format_bytes_exact(-headroom)} short"
        )
    return text


def npu_lines(verdict: Verdict) -> list[Styled]:
    """A Vela-compiled model's NPU memories under the number, and where they go on the board
    (or why they do not fit)."""
    memory = verdict.npu_memory
    if memory is None:
        return []
    lines = [
        styled(line, "cyan") for line in npu_memory_lines(memory.document(verdict.required_bytes))
    ]
    fit = verdict.fit
    if fit is not None and fit.npu is not None and verdict.has_number:
        style = "green" if fit.npu.fits else "bold red"
        lines.extend(styled(line, style) for line in npu_fit_lines(fit.npu))
    return lines


def steps_lines(steps: Sequence[Step], *, style: str = "") -> list[Styled | Verbatim]:
    """'what to do next:' and the numbered steps, each command on a line of its own that is
    never wrapped, so it pastes as printed."""
    if not steps:
        return []
    lines: list[Styled | Verbatim] = [styled("what to do next:", "bold")]
    for number, step in enumerate(steps, start=1):
        lines.append(styled(f"{number}. {step.text}", style))
        if step.command:
            lines.append(Verbatim(" " * len(f"{number}. ") + step.command))
    return lines


def render_check(verdict: Verdict, *, color: bool, width: int = 120) -> str:
    """Verdict → the number to declare, the verdict, a small table of the numbers, what next."""
    lines: list[Styled | Grid | Verbatim] = [declare_line(verdict.declared), verdict_text(verdict)]
    fit = verdict.fit
    if fit is not None:
        lines.append(_numbers_table(verdict))
        lines.extend(placement_lines(verdict))
    lines.extend(declare_notes(verdict.declared))
    lines.extend(npu_lines(verdict))
    device_options = _device_options(verdict)
    if device_options is not None:
        lines.append(
            styled(f"the x86-64 wheel's figure: {device_options} gives the device's", "yellow")
        )
    style = "" if verdict.fits or verdict.answer is None else "yellow"
    lines.extend(steps_lines(verdict.steps, style=style))
    return strip(render_text(lines, color=color, width=width))


def placement_lines(verdict: Verdict) -> list[Styled | Verbatim]:
    """On a board with several RAM banks: where each part goes (the fastest placement that
    fits) and the code that does it, or the most the board could hold."""
    fit = verdict.fit
    if fit is None or fit.placement is None or fit.target is None or not verdict.has_number:
        return []
    found = fit.placement
    best = found.best
    if best is None:
        two = found.largest_two_blocks
        split = (
            ""
            if two is None
            else f", or {format_bytes_exact(found.largest_two_bytes)} split into a persistent "
            f"buffer in {two[1]} and a non-persistent one in {two[0]}"
        )
        return [
            styled(
                f"banks: the board holds at most {format_bytes_exact(found.largest_one_bytes)} "
                f"as one arena (in {found.largest_one_block}){split}",
                "yellow",
            )
        ]
    lines: list[Styled | Verbatim] = [
        styled(f"placement ({best.kind}, fastest that fits):", "bold")
    ]
    for use in best.uses:
        lines.append(
            styled(
                f"  {use.part:<15} {format_bytes_exact(use.nbytes):>12}  in {use.block.name} "
                f"({use.block.speed}; {format_bytes_exact(use.spare_bytes)} spare)"
            )
        )
    lines.extend(styled(f"  note: {note}", "yellow") for note in best.notes)
    from arenalens.placement_code import placement_code  # noqa: PLC0415 - only with banks

    code = placement_code(
        best, fit.target, model=verdict.model, variable_count=found.variable_count
    )
    lines.append(styled("code to paste:", "bold"))
    lines.extend(Verbatim("  " + line if line else "") for line in code.rstrip("\n").split("\n"))
    return lines


# The numbers' columns: what, bytes, the short size, where the figure comes from.
_NUMBER_COLUMNS = (
    GridColumn(style="bold"),
    GridColumn(justify="right"),
    GridColumn(justify="right", style="dim"),
    GridColumn(),
)


def _numbers_table(verdict: Verdict) -> Grid:
    fit = verdict.fit
    assert fit is not None
    rows: list[tuple[str, str, str, str]] = []
    runtime = _RUNTIME_TITLES.get(verdict.runtime, verdict.runtime)
    required = verdict.required_bytes
    if required is not None:
        rows.append(
            (
                "needs",
                format_bytes_exact(required),
                format_bytes_short(required),
                f"{runtime}, planner {verdict.declared.planner}",
            )
        )
    else:
        why = {
            Answer.CANNOT_RUN: f"{runtime} cannot run this model: no size works",
            Answer.CANNOT_RUN_CORRECTLY: "its offline plan would corrupt tensors: no size is safe",
            Answer.INPUT_SHAPE_UNKNOWN: "the input size is unknown: no size is known",
        }.get(verdict.answer or Answer.CANNOT_RUN, "")
        rows.append(("needs", "—", "", why))
    if fit.placement is not None and fit.placement.best is not None and required is not None:
        # The placement's lines say where it goes and what each bank leaves.
        return Grid(_NUMBER_COLUMNS, tuple(rows))
    rows.append(
        (
            "available",
            format_bytes_exact(fit.available_bytes),
            format_bytes_short(fit.available_bytes),
            _budget_source(verdict),
        )
    )
    npu = fit.npu
    if npu is not None and npu.beside_arena and verdict.has_number:
        names = " + ".join(name for name, _ in npu.pieces)
        rows.append(
            (
                "SRAM in all",
                format_bytes_exact(npu.sram_bytes),
                format_bytes_short(npu.sram_bytes),
                f"{names}, each in a bank the NPU reaches" if npu.memories.banks else names,
            )
        )
    ladder = fit.ladder if verdict.has_number else None
    if ladder is not None and len(ladder.rungs) > 1:
        from arenalens.ladder import rungs_text  # noqa: PLC0415 - loaded with any ladder

        rung = ladder.answer
        tried = "" if rung is ladder.rungs[1] else f" (tried: {rungs_text(ladder)})"
        rows.append(
            (
                "rewritten",
                format_bytes_exact(rung.required_bytes),
                format_bytes_short(rung.required_bytes),
                f"optimize {' '.join(rung.options) or '(offline plan)'}".rstrip()
                + tried
                + missing_extra_note(verdict.optimized_missing_extra),
            )
        )
    headroom = verdict.headroom_bytes
    if headroom is not None and headroom >= 0:
        share = 100.0 * headroom / fit.available_bytes
        rows.append(
            (
                "headroom",
                format_bytes_exact(headroom),
                format_bytes_short(headroom),
                f"{share:.1f}% of available",
            )
        )
    elif headroom is not None:
        rows.append(
            (
                "shortfall",
                format_bytes_exact(-headroom),
                format_bytes_short(-headroom),
                f"{100.0 * -headroom / fit.available_bytes:.1f}% more RAM needed",
            )
        )
    return Grid(_NUMBER_COLUMNS, tuple(rows))


def strip(text: str) -> str:
    """Drop the spaces rich pads table rows with."""
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _budget_source(verdict: Verdict) -> str:
    check = verdict.fit
    assert check is not None
    taken = check.reserve_taken_bytes
    reserve = f" − reserve {format_bytes_exact(taken)}" if taken else ""
    block = check.block
    if check.target is not None and block is not None and len(check.target.banks) > 1:
        whole = format_bytes_exact(block.available_bytes + taken)
        return f"{check.target.name}: largest block {block.name} {whole}{reserve}"
    if check.target is not None:
        budget = format_bytes_exact(check.budget_bytes)
        if check.target.runs_linux:
            reserve = f" − OS and app {format_bytes_exact(taken)}" if taken else ""
            return f"{check.target.name}: RAM {budget}{reserve}"
        return f"{check.target.name}: largest static block {budget}{reserve}"
    typed = (
        f"{check.budget_text} = " if check.budget_text and not check.budget_text.isdigit() else ""
    )
    return f"budget {typed}{format_bytes_exact(check.budget_bytes)}{reserve}"
