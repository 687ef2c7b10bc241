"""Check results → terminal text: the board table (`--target all`), the input search and the
preset list. One board's verdict is `verdict_lines`' (it prints without rich)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from arenalens.builds.build import HOST
from arenalens.planning.problem import missing_extra_note, missing_extra_text
from arenalens.report.console import render_text
from arenalens.report.styled import Styled, Verbatim
from arenalens.report.verdict_lines import declare_line, declare_notes, steps_lines, strip
from arenalens.target_build import KERNELS_WHY
from arenalens.targets import Target
from arenalens.units import format_bytes_exact, format_bytes_short
from arenalens.verdict import Answer, Verdict

if TYPE_CHECKING:
    from arenalens.max_input import InputSearch


def _yes_no(value: bool | None) -> Text:
    if value is None:
        return Text("?", style="dim")
    return Text("yes", style="green") if value else Text("no", style="red")


def _fits_cell(verdict: Verdict) -> Text:
    answer = verdict.answer
    if answer is Answer.CANNOT_RUN:
        return Text("cannot run", style="red")
    if answer is Answer.CANNOT_RUN_CORRECTLY:
        return Text("plan corrupts", style="red")
    if answer is Answer.INPUT_SHAPE_UNKNOWN:
        return Text("shape?", style="red")
    if verdict.npu_short:
        return Text("no: NPU memory", style="red")  # the arena alone would fit
    placed = _placed_in(verdict)
    if placed:
        return Text(f"yes: {placed}", style="green")
    return _yes_no(verdict.fits)


def _placed_in(verdict: Verdict) -> str:
    """Where the board's placement puts the memory when that is not one arena in the block
    the available column counts: 'sram1-3 + axi-sram' (persistent + non-persistent), 'psram'.
    Empty otherwise."""
    fit = verdict.fit
    if fit is None or fit.placement is None or fit.placement.best is None:
        return ""
    uses = fit.placement.best.uses
    block = fit.block
    if len(uses) == 1 and (block is None or uses[0].block.name == block.name):
        return ""
    return " + ".join(use.block.name for use in uses)


# Board rows `check --target all` shows without --all (the table is sorted most useful first).
BOARD_ROWS_SHOWN = 12


def _useful_rows(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The rows shown by default: the cheapest boards it fits, those a rewrite makes it fit,
    then the closest it does not (each group in the table's order), BOARD_ROWS_SHOWN in all."""
    fitting = [v for v in verdicts if v.fits]
    after = [v for v in verdicts if not v.fits and v.fits_after_optimize]
    rest = [v for v in verdicts if not v.fits and not v.fits_after_optimize]
    third = BOARD_ROWS_SHOWN // 3
    chosen = {id(v) for v in (*fitting[:third], *after[:third], *rest[:third])}
    for verdict in verdicts:  # fill what a short group left
        if len(chosen) >= BOARD_ROWS_SHOWN:
            break
        chosen.add(id(verdict))
    return [verdict for verdict in verdicts if id(verdict) in chosen]


def _after_optimize_cell(verdict: Verdict) -> Text:
    """'yes', or the rewrite that gets it there: 'yes: split', 'yes: overlap'; marked
    EXTRA_MARK when the exact search it went without could change it (the footnote says so)."""
    if not verdict.has_number:
        return Text("—")
    ladder = None if verdict.fit is None else verdict.fit.ladder
    if verdict.fits or ladder is None or ladder.first_fit is None:
        cell = _yes_no(verdict.fits_after_optimize)
    else:
        from arenalens.ladder import rung_title  # noqa: PLC0415 - loaded with any ladder

        cell = Text(f"yes: {rung_title(ladder.first_fit)}", style="green")
    if _missing_extra(verdict):
        cell.append(EXTRA_MARK)
    return cell


# Marks an after-optimize cell whose rewrites went without OR-Tools' exact search.
EXTRA_MARK = " *"


def _missing_extra(verdict: Verdict) -> str:
    """The extra whose exact search could change the after-optimize cell ('' none)."""
    return verdict.optimized_missing_extra if verdict.has_number and not verdict.fits else ""


def render_boards(
    verdicts: Sequence[Verdict], *, color: bool, width: int = 120, every_row: bool = False
) -> str:
    """`check --target all`: the number to declare, then one row per board, most useful first
    (the first BOARD_ROWS_SHOWN unless `every_row`)."""
    first = verdicts[0]
    first_fit = first.fit
    assert first_fit is not None
    fitting = sum(1 for verdict in verdicts if verdict.fits)
    after = sum(1 for verdict in verdicts if verdict.fits_after_optimize and not verdict.fits)
    # Boards where no size is safe (it cannot run there, correctly, or the input size is
    # unknown): counted by answer, never as boards it does not fit.
    blocked: dict[str, int] = {}
    for verdict in verdicts:
        if not verdict.has_number and verdict.answer is not None:
            blocked[verdict.answer.value] = blocked.get(verdict.answer.value, 0) + 1
    # Linux devices by the target, not the figure: a model LiteRT cannot run has no process
    # memory figure, only its arenas' verdict, and is still listed as devices.
    linux = first_fit.target is not None and first_fit.target.runs_linux
    board = "Linux device" if linux else "board"
    if sum(blocked.values()) == len(verdicts) and len(blocked) == 1:
        heading = Text.assemble(
            (first.model, "bold"), ": ", (next(iter(blocked)), "bold red"), f" on every {board}"
        )
    else:
        heading = Text.assemble(
            (first.model, "bold"),
            f" fits {fitting} of {len(verdicts)} {board}s as it is",
            f", {after} more after `arenalens optimize`" if after else "",
            "".join(f"; {answer} on {count}" for answer, count in blocked.items()),
        )
    if first_fit.reserve_is_default and linux:
        reserve = " minus what the OS and the rest of the app keep (--list-targets; --reserve)"
    elif first_fit.reserve_is_default:
        reserve = " minus what the board's usual firmware keeps (--list-targets; --reserve)"
    elif first_fit.reserve_bytes:
        reserve = f", minus a reserve of {format_bytes_exact(first_fit.reserve_bytes)}"
    else:
        reserve = ""
    table = Table(
        title=f"Linux devices (available = RAM{reserve})"
        if linux
        else f"boards (available = the largest block one arena can take{reserve}; placed in "
        "banks, the bank the fits column names)",
        title_justify="left",
        header_style="bold",
    )
    columns = [
        ("device" if linux else "board", "left"),
        ("build", "left"),
        ("needs", "right"),
        ("available", "right"),
        ("headroom", "right"),
        ("fits", "left"),
    ]
    if not linux:  # LiteRT takes no offline plan: nothing to optimize there
        columns.append(("after optimize", "left"))
    for column, justify in columns:
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    shown = verdicts if every_row else _useful_rows(verdicts)
    for verdict in shown:
        fit = verdict.fit
        assert fit is not None and fit.target is not None
        headroom = verdict.headroom_bytes
        required = verdict.required_bytes
        table.add_row(
            fit.target.name,
            _build_label(verdict),
            "—"
            if required is None
            else f"{required:,}" + (" ~" if verdict.declared.is_estimate else ""),
            # With a number, the bank the headroom is counted in (the fits column names it).
            f"{fit.spare_available_bytes if verdict.has_number else fit.available_bytes:,}",
            Text("—")
            if headroom is None
            else Text(f"{headroom:+,}", style="green" if headroom >= 0 else "red"),
            _fits_cell(verdict),
            *(() if linux else (_after_optimize_cell(verdict),)),
        )
    builds = _distinct_builds(verdicts)
    lines: list[Text | Table | Styled | Verbatim] = []
    if len(builds) == 1 or not first.has_number:
        lines.append(declare_line(first.declared))
    else:
        lines.append(Text(f"{first.declared.symbol} depends on the board's core and kernels:"))
        label_width = max(len(_build_label(verdict)) for verdict in builds)
        lines.extend(_build_line(verdict, label_width) for verdict in builds)
    lines.extend([heading, table])
    if len(shown) < len(verdicts):
        lines.append(
            Text(f"... {len(verdicts) - len(shown)} more boards: --all lists them", style="dim")
        )
    seen: set[str] = set()
    for verdict in builds:
        for note in declare_notes(verdict.declared):
            if len(builds) > 1 and note.plain.startswith("figure for:"):
                continue  # the headline names each build
            if note.plain not in seen:
                seen.add(note.plain)
                lines.append(note)
    if not any(verdict.has_number for verdict in verdicts):
        lines.extend(steps_lines(first.steps))  # what to do first, whichever board
    missing = next((_missing_extra(v) for v in shown if _missing_extra(v) and not linux), "")
    if missing:
        footnote = f"after optimize{EXTRA_MARK}: {missing_extra_text(missing)}"
        lines.append(Text(footnote, style="dim"))
    if any(_placed_in(verdict) for verdict in shown):
        lines.append(
            Text(
                "yes: BANK + BANK: placed in the board's RAM banks (persistent + non-persistent "
                "part, or the one arena's bank), as `arenalens check --target BOARD` prints it "
                "with the code to paste; headroom is then the least any buffer leaves in its bank, "
                "and available that bank's.",
                style="dim",
            )
        )
    lines.append(
        Text(
            "needs: the model file + the interpreter's peak heap under the delegate (LiteRT "
            "measured on x86-64; ~ marks an estimate). `arenalens check --list-targets` shows "
            "each device's RAM, what its OS and the app keep, and the sources.",
            style="dim",
        )
        if linux
        else Text(
            "needs: the number to declare on the board's build (its core with the kernels it "
            "implies, or --cpu / --kernels); ~ marks an estimate. `arenalens check "
            "--list-targets` shows each board's core, kernels and where its RAM figure comes "
            "from.",
            style="dim",
        )
    )
    return strip(render_text(lines, color=color, width=width))


def _build_line(verdict: Verdict, label_width: int) -> Text:
    """One build's number in the --target all headline; none for a build that cannot run the
    model, or whose offline plan corrupts tensors there (what its rows say)."""
    label = f"  {_build_label(verdict):<{label_width}}  "
    if not verdict.has_number:
        answer = verdict.answer.value if verdict.answer else ""
        return Text.assemble(label, ("—".rjust(11), "bold red"), f" {answer}")
    required = verdict.declared.required_bytes
    return Text.assemble(
        label,
        (format_bytes_exact(required).rjust(11), "bold cyan"),
        f" ({format_bytes_short(required)})",
        (" estimate", "yellow") if verdict.declared.is_estimate else "",
    )


def _build_label(verdict: Verdict) -> str:
    """The build a board's figure is for, short: 'cortex-m4/cmsis-nn', or 'host wheel'."""
    build = verdict.build
    target = None if verdict.fit is None else verdict.fit.target
    if target is not None and target.runs_linux:
        from arenalens.litert_memory import target_isa  # noqa: PLC0415 - LiteRT only

        return f"LiteRT, {target_isa(target)}"
    return "host wheel" if build is None or build.name == HOST.name else build.name


def _distinct_builds(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """One verdict per distinct build, ordered by build name (the headline's lines)."""
    by_build: dict[str, Verdict] = {}
    for verdict in verdicts:
        by_build.setdefault(_build_label(verdict), verdict)
    return [by_build[label] for label in sorted(by_build)]


def render_input_search(verdict: Verdict, *, color: bool, width: int = 120) -> str:
    """`--max-input`: what the network accepts and the largest input that fits, then the arena
    at the sizes planned. Nothing of it when the model has no number to compare."""
    search = verdict.search
    assert search is not None
    if search.unavailable:
        line = Text.assemble(("largest input that fits: unknown", "bold yellow"), " — ")
        line.append(search.unavailable)
        return strip(render_text([Text(""), line], color=color, width=width))
    original = "x".join(str(d) for d in search.original_shape)
    accepted = _accepted_line(search)
    largest = search.largest if verdict.has_number else None
    if not verdict.has_number:
        headline = Text.assemble(
            ("largest input that fits: none", "bold red"),
            f" — {verdict.answer.value if verdict.answer else ''} at the model's own size "
            f"({original}), so no size is compared",
        )
    elif largest is None:
        smallest = search.smallest_accepted
        needs = ""
        if smallest is not None:
            smallest_bytes = format_bytes_exact(smallest.required_bytes or 0)
            needs = f": the smallest it accepts needs {smallest_bytes}"
        headline = Text.assemble(
            ("largest input that fits: none", "bold red"),
            f" — no size the network accepts fits {format_bytes_exact(search.available_bytes)}"
            + needs,
        )
    else:
        shape = "x".join(str(d) for d in largest.shape)
        limit = search.limit_text()
        headline = Text.assemble(
            ("largest input that fits: ", "bold"),
            (f"{search.input_name}={shape}", "bold cyan"),
            f" (needs {format_bytes_exact(largest.required_bytes or 0)} of "
            f"{format_bytes_exact(search.available_bytes)}; {limit}; the model's own is "
            f"{original})",
        )
    lines: list[Text | Table] = [Text(""), accepted, headline]
    after = search.largest_after_optimize if verdict.has_number else None
    if after is not None:
        shape = "x".join(str(d) for d in after.shape)
        lines.append(
            Text.assemble(
                ("largest after `arenalens optimize`: ", "bold"),
                (f"{search.input_name}={shape}", "bold cyan"),
                f" (the optimized model declares {format_bytes_exact(after.required_bytes or 0)}"
                + (
                    f"; optimize {' '.join(search.after_optimize_options)}"
                    if search.after_optimize_options
                    else ""
                )
                + missing_extra_note(search.after_optimize_missing_extra)
                + ")",
            )
        )
    table = Table(title="arena by input size", title_justify="left", header_style="bold")
    for column, justify in (("input", "left"), ("needs", "right"), ("fits", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for size in search.sizes:
        shape = "x".join(str(d) for d in size.shape)
        if size.required_bytes is None:
            table.add_row(shape, "-", Text(_refusal_cell(size.error), style="dim"))
            continue
        mark = " (model's own)" if size.shape == search.original_shape else ""
        table.add_row(shape + mark, f"{size.required_bytes:,}", _yes_no(size.fits))
    return strip(render_text([*lines, table], color=color, width=width))


def _accepted_line(search: InputSearch) -> Text:
    """'the network accepts input=1x65x65x3 to 1x191x191x3 (other sizes: ...)'."""
    low, high = search.smallest_accepted, search.largest_accepted
    if low is None or high is None:
        return Text(
            f"the network (or the runtime) refuses every size of '{search.input_name}' tried",
            style="bold red",
        )
    first = "x".join(str(d) for d in low.shape)
    last = "x".join(str(d) for d in high.shape)
    if search.accepts_beyond:
        return Text.assemble(
            "the network accepts ",
            (f"{search.input_name}={first}", "bold"),
            " up to at least ",
            (last, "bold"),
            " (the search stops at 4x the model's own height)",
        )
    return Text.assemble(
        "the network accepts ", (f"{search.input_name}={first}", "bold"), " to ", (last, "bold")
    )


def _refusal_cell(error: str) -> str:
    """Why a size was refused, short: the graph (LiteRT) or the runtime (TFLM)."""
    if "cannot run the model at this size" in error:
        return "the runtime refuses this shape"
    return "graph refuses this shape"


def render_targets(
    boards: Iterable[Target],
    chips: Iterable[Target],
    devices: Iterable[Target] = (),
    *,
    color: bool,
    width: int = 120,
) -> str:
    """The --list-targets tables: boards, then chips; name, part, core, SRAM, limit, source;
    then the Linux-class devices LiteRT runs on."""
    tables = []
    for title, targets in (("boards (--target NAME)", boards), ("chips (--target NAME)", chips)):
        table = Table(title=title, title_justify="left", header_style="bold")
        table.add_column("name", no_wrap=True)  # the spelling to type: never cut
        table.add_column("part / core")
        table.add_column("SRAM", justify="right")
        table.add_column("arena limit", justify="right")
        table.add_column("firmware keeps", justify="right")
        table.add_column("kernels")
        table.add_column("why, and the source", overflow="fold")
        for target in targets:
            table.add_row(
                target.name,
                f"{target.title}\n{target.core}",
                format_bytes_short(target.sram_bytes),
                format_bytes_short(target.arena_limit_bytes),
                format_bytes_short(target.reserve_bytes),
                target.kernels or "host figure",
                _why(target),
            )
        tables.append(table)
    tables.append(_devices_table(devices))
    return render_text([*tables, Text(KERNELS_WHY, style="dim")], color=color, width=width)


def _devices_table(devices: Iterable[Target]) -> Table:
    """Linux-class devices (`check --target NAME`, LiteRT): RAM, what the OS and the rest of
    the app keep, and the sources."""
    from arenalens.litert_memory import target_isa  # noqa: PLC0415 - LiteRT only

    table = Table(
        title="Linux devices (--target NAME: LiteRT, the model file + the interpreter's peak heap)",
        title_justify="left",
        header_style="bold",
    )
    table.add_column("name", no_wrap=True)
    table.add_column("device / cores")
    table.add_column("RAM", justify="right")
    table.add_column("OS and app keep", justify="right")
    table.add_column("ISA (--isa)")
    table.add_column("why, and the source", overflow="fold")
    for device in devices:
        table.add_row(
            device.name,
            f"{device.title}\n{device.core}",
            format_bytes_short(device.sram_bytes),
            format_bytes_short(device.reserve_bytes),
            target_isa(device),
            _why(device),
        )
    return table


def _why(target: Target) -> str:
    """A target's 'why, and the source' cell: its note, its source, and what its usual firmware
    or operating system keeps, part by part."""
    firmware = target.firmware
    kept = "" if firmware is None else f"\n{firmware.title}: {firmware.parts_text()}"
    return (f"{target.note}\n{target.source}" if target.note else target.source) + kept
