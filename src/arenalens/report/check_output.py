"""FitCheck → terminal text: the number to declare first, then the verdict, the numbers behind it
and what to do; the board table (`--target all`), the input search and the preset list."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.table import Table
from rich.text import Text

from arenalens.builds.build import build_flags
from arenalens.declared import DeclaredArena, Status, parts_text
from arenalens.fit import FitCheck
from arenalens.max_input import InputSearch
from arenalens.report.console import render_text
from arenalens.report.labels import declared_qualifier, reason_prefix
from arenalens.target_build import KERNELS_WHY
from arenalens.targets import Target
from arenalens.units import format_bytes_exact, format_bytes_short

_RUNTIME_TITLES = {"tflm": "TFLM", "litert": "LiteRT"}
_VERDICT_STYLES = {
    "FITS": "bold green",
    "FITS (estimate)": "bold yellow",
    "FITS AFTER OPTIMIZE": "bold yellow",
    "DOES NOT FIT": "bold red",
    "CANNOT RUN": "bold red",
    "INPUT SHAPE UNKNOWN": "bold red",
}


# Reasons listed under the number; --json has every one.
_REASONS_SHOWN = 5


def declare_line(declared: DeclaredArena) -> Text:
    """'kTensorArenaSize = 7,584 B (7.41 KiB): head 5.83 KiB + tail 1.58 KiB, both inside the
    tensor arena' — the first line of every report that shows a size."""
    if declared.status is Status.CANNOT_RUN:
        return Text.assemble(
            (f"{declared.symbol}: none", "bold red"),
            f" — {_RUNTIME_TITLES.get(declared.runtime, declared.runtime)} cannot run this model",
        )
    line = Text.assemble(
        (f"{declared.symbol} = ", "bold"),
        (format_bytes_exact(declared.required_bytes), "bold cyan"),
        f" ({format_bytes_short(declared.required_bytes)})",
    )
    qualifier = declared_qualifier(declared.status)
    if qualifier:
        style = "bold red" if declared.status is Status.PLACEHOLDER_SHAPE else "yellow"
        line.append(f" ({qualifier})", style=style)
    if declared.parts:
        line.append(": " + parts_text(declared, format_bytes_short))
    return line


def _host_figure_for_cortex_m(check: FitCheck) -> bool:
    """True when a Cortex-M board is checked against the host wheel's figure."""
    return (
        check.runtime == "tflm"
        and check.build.get("cpu") is None
        and check.target is not None
        and check.target.cpu.startswith("cortex-m")
    )


def declare_notes(declared: DeclaredArena) -> list[Text]:
    """The lines under the number: what build it is for, why it is an estimate, and whose plan."""
    notes = []
    if declared.device:
        notes.append(Text(f"figure for: {declared.device}", style="dim"))
    prefix = reason_prefix(declared.status) + ": "
    style = "red" if declared.status in (Status.CANNOT_RUN, Status.PLACEHOLDER_SHAPE) else "yellow"
    for reason in declared.reasons[:_REASONS_SHOWN]:
        notes.append(Text(prefix + reason, style))
    if len(declared.reasons) > _REASONS_SHOWN:
        more = len(declared.reasons) - _REASONS_SHOWN
        notes.append(Text(f"... and {more} more (--json lists them all)", style=style))
    if not declared.runtime_plan:
        notes.append(
            Text(
                f"with the '{declared.planner}' plan, which the device uses only after "
                "`arenalens optimize` writes it into the model",
                style="yellow",
            )
        )
    return notes


def verdict_text(check: FitCheck) -> Text:
    """'FITS  on ST NUCLEO-F746ZG (Cortex-M7 216 MHz): 320,096 B to spare'."""
    where = ""
    if check.target is not None:
        where = f" on {check.target.title} ({check.target.core})"
    elif check.budget_text:
        where = f" in {check.budget_text}"
    verdict = check.verdict
    text = Text.assemble(
        (verdict, _VERDICT_STYLES.get(verdict, "bold")), "  ", (check.model, "bold")
    )
    text.append(where)
    if check.runs and check.shape_known:
        if check.fits:
            text.append(f": {format_bytes_exact(check.headroom_bytes)} to spare")
        else:
            text.append(f": {format_bytes_exact(-check.headroom_bytes)} short")
    return text


def render_check(check: FitCheck, *, color: bool, width: int = 120) -> str:
    """FitCheck → the number to declare, the verdict, a small table of the numbers, advice."""
    lines: list[Text | Table] = [declare_line(check.declared), verdict_text(check)]
    table = Table(show_header=False, box=None, padding=(0, 2, 0, 2))
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_column(justify="right", style="dim")
    table.add_column()
    runtime = _RUNTIME_TITLES.get(check.runtime, check.runtime)
    if check.runs:
        table.add_row(
            "needs",
            format_bytes_exact(check.required_bytes),
            format_bytes_short(check.required_bytes),
            f"{runtime}, planner {check.planner}"
            + ("" if check.shape_known else ", at the placeholder input shape"),
        )
    else:
        table.add_row("needs", "—", "", f"{runtime} cannot run this model: no size works")
    table.add_row(
        "available",
        format_bytes_exact(check.available_bytes),
        format_bytes_short(check.available_bytes),
        _budget_source(check),
    )
    if check.fits:
        share = 100.0 * check.headroom_bytes / check.available_bytes
        table.add_row(
            "headroom",
            format_bytes_exact(check.headroom_bytes),
            format_bytes_short(check.headroom_bytes),
            f"{share:.1f}% of available",
        )
    elif check.runs and check.shape_known:
        short = -check.headroom_bytes
        table.add_row(
            "shortfall",
            format_bytes_exact(short),
            format_bytes_short(short),
            f"{100.0 * short / check.available_bytes:.1f}% more RAM needed",
        )
    lines.append(table)
    lines.extend(declare_notes(check.declared))
    if _host_figure_for_cortex_m(check):
        assert check.target is not None
        lines.append(
            Text(
                f"the x86-64 wheel's figure: --cpu {check.target.cpu} [--kernels cmsis-nn] "
                "gives the device's",
                style="yellow",
            )
        )
    advice = next_step(check)
    if advice:
        lines.append(Text(advice, style="yellow" if not check.fits else ""))
    return _strip(render_text(lines, color=color, width=width))


def next_step(check: FitCheck) -> str:
    """What to do, in one sentence: nothing, optimize, or change the model."""
    if not check.runs:
        return "Change the model so the runtime can run it (see the reasons above)."
    if not check.shape_known:
        return (
            f"Give the input size your application feeds: `arenalens check {check.source} "
            "--input-shape NAME=SHAPE ...` (the number above is for a placeholder)."
        )
    if check.fits:
        return ""
    if check.fits_after_optimize:
        after = check.optimized_bytes
        figure = format_bytes_exact(after) if after is not None else "less"
        return (
            f"It fits after `arenalens optimize {check.source}{build_flags(check.build)} -o "
            "optimized.tflite`: that model "
            f"declares {figure} "
            f"({format_bytes_exact(check.available_bytes - (after or 0))} to spare)."
        )
    if check.best_case_bytes <= check.available_bytes:
        return (
            f"A plan at the lower bound would need {format_bytes_exact(check.best_case_bytes)}, "
            f"but `arenalens optimize` reaches {format_bytes_exact(check.optimized_bytes or 0)}: "
            "shrink the model (`arenalens diagnose` shows what each change saves) or pick a "
            "larger board (`arenalens check MODEL --target all`)."
        )
    return (
        f"Even a plan at the lower bound needs {format_bytes_exact(check.best_case_bytes)}: "
        "shrink the model "
        "(`arenalens diagnose` shows the peak and what each change saves; `--max-input` the "
        "largest input that fits) or pick a larger board (`--target all`)."
    )


def _strip(text: str) -> str:
    """Drop the spaces rich pads table rows with."""
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _budget_source(check: FitCheck) -> str:
    reserve = f" − reserve {format_bytes_exact(check.reserve_bytes)}" if check.reserve_bytes else ""
    if check.target is not None:
        block = format_bytes_exact(check.budget_bytes)
        return f"{check.target.name}: largest static block {block}{reserve}"
    typed = (
        f"{check.budget_text} = " if check.budget_text and not check.budget_text.isdigit() else ""
    )
    return f"budget {typed}{format_bytes_exact(check.budget_bytes)}{reserve}"


def _yes_no(value: bool | None) -> Text:
    if value is None:
        return Text("?", style="dim")
    return Text("yes", style="green") if value else Text("no", style="red")


def render_boards(checks: Sequence[FitCheck], *, color: bool, width: int = 120) -> str:
    """`check --target all`: the number to declare, then one row per board, most useful first."""
    first = checks[0]
    fitting = sum(1 for check in checks if check.fits)
    after = sum(1 for check in checks if check.fits_after_optimize and not check.fits)
    heading = Text.assemble(
        (first.model, "bold"),
        f" fits {fitting} of {len(checks)} boards as it is",
        f", {after} more after `arenalens optimize`" if after else "",
    )
    reserve = (
        f", minus a reserve of {format_bytes_exact(first.reserve_bytes)}"
        if first.reserve_bytes
        else ""
    )
    table = Table(
        title=f"boards (available = the largest static block{reserve})",
        title_justify="left",
        header_style="bold",
    )
    for column, justify in (
        ("board", "left"),
        ("build", "left"),
        ("needs", "right"),
        ("available", "right"),
        ("headroom", "right"),
        ("fits", "left"),
        ("after optimize", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for check in checks:
        assert check.target is not None
        headroom = check.headroom_bytes
        table.add_row(
            check.target.name,
            _build_label(check),
            f"{check.required_bytes:,}" + (" ~" if check.declared.is_estimate else ""),
            f"{check.available_bytes:,}",
            Text(f"{headroom:+,}", style="green" if headroom >= 0 else "red"),
            Text("cannot run", style="red") if not check.runs else _yes_no(check.fits),
            _yes_no(check.fits_after_optimize),
        )
    builds = _distinct_builds(checks)
    lines: list[Text | Table] = []
    if len(builds) == 1:
        lines.append(declare_line(first.declared))
    else:
        lines.append(Text(f"{first.declared.symbol} depends on the board's core and kernels:"))
        label_width = max(len(_build_label(check)) for check in builds)
        lines.extend(
            Text.assemble(
                f"  {_build_label(check):<{label_width}}  ",
                (format_bytes_exact(check.required_bytes).rjust(11), "bold cyan"),
                f" ({format_bytes_short(check.required_bytes)})",
                (" estimate", "yellow") if check.declared.is_estimate else "",
            )
            for check in builds
        )
    lines.extend([heading, table])
    seen: set[str] = set()
    for check in builds:
        for note in declare_notes(check.declared):
            if len(builds) > 1 and note.plain.startswith("figure for:"):
                continue  # the headline names each build
            if note.plain not in seen:
                seen.add(note.plain)
                lines.append(note)
    lines.append(
        Text(
            "needs: the number to declare on the board's build (its core with the kernels it "
            "implies, or --cpu / --kernels); ~ marks an estimate. `arenalens check "
            "--list-targets` shows each board's core, kernels and where its RAM figure comes "
            "from.",
            style="dim",
        )
    )
    return _strip(render_text(lines, color=color, width=width))


def _build_label(check: FitCheck) -> str:
    """The build a board's figure is for, short: 'cortex-m4/cmsis-nn', or 'host wheel'."""
    name = check.build.get("name")
    return "host wheel" if name in (None, "host") else str(name)


def _distinct_builds(checks: Sequence[FitCheck]) -> list[FitCheck]:
    """One check per distinct build, ordered by build name (the headline's lines)."""
    by_build: dict[str, FitCheck] = {}
    for check in checks:
        by_build.setdefault(_build_label(check), check)
    return [by_build[label] for label in sorted(by_build)]


def render_input_search(search: InputSearch, *, color: bool, width: int = 120) -> str:
    """`--max-input`: the largest input that fits, then the arena at the sizes planned."""
    largest = search.largest
    original = "x".join(str(d) for d in search.original_shape)
    if largest is None:
        headline = Text.assemble(
            ("largest input: none", "bold red"),
            f" — not even a 1-pixel-high '{search.input_name}' fits "
            f"{format_bytes_exact(search.available_bytes)}",
        )
    else:
        shape = "x".join(str(d) for d in largest.shape)
        headline = Text.assemble(
            ("largest input that fits: ", "bold"),
            (f"{search.input_name}={shape}", "bold cyan"),
            f" (needs {format_bytes_exact(largest.required_bytes or 0)} of "
            f"{format_bytes_exact(search.available_bytes)}; "
            f"the model's own is {original})",
        )
    table = Table(title="arena by input size", title_justify="left", header_style="bold")
    for column, justify in (("input", "left"), ("needs", "right"), ("fits", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for size in search.sizes:
        shape = "x".join(str(d) for d in size.shape)
        if size.required_bytes is None:
            table.add_row(shape, "-", Text("graph refuses this shape", style="dim"))
            continue
        mark = " (model's own)" if size.shape == search.original_shape else ""
        table.add_row(shape + mark, f"{size.required_bytes:,}", _yes_no(size.fits))
    hint = Text(
        f"try it: --input-shape '{search.input_name}=<shape>' on plan, report or check; "
        "retrain or convert at that size",
        style="dim",
    )
    return _strip(render_text([Text(""), headline, table, hint], color=color, width=width))


def render_targets(
    boards: Iterable[Target], chips: Iterable[Target], *, color: bool, width: int = 120
) -> str:
    """The --list-targets tables: boards, then chips; name, part, core, SRAM, limit, source."""
    tables = []
    for title, targets in (("boards (--target NAME)", boards), ("chips (--target NAME)", chips)):
        table = Table(title=title, title_justify="left", header_style="bold")
        table.add_column("name", no_wrap=True)  # the spelling to type: never cut
        table.add_column("part / core")
        table.add_column("SRAM", justify="right")
        table.add_column("arena limit", justify="right")
        table.add_column("kernels")
        table.add_column("why, and the source", overflow="fold")
        for target in targets:
            table.add_row(
                target.name,
                f"{target.title}\n{target.core}",
                format_bytes_short(target.sram_bytes),
                format_bytes_short(target.arena_limit_bytes),
                target.kernels or "host figure",
                f"{target.note}\n{target.source}" if target.note else target.source,
            )
        tables.append(table)
    return render_text([*tables, Text(KERNELS_WHY, style="dim")], color=color, width=width)
