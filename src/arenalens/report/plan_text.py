"""`plan` and `verify` documents → terminal text; `plan_output` builds the documents."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from arenalens.declared import DeclaredArena
from arenalens.report.console import render_text
from arenalens.report.heap_output import heap_tables
from arenalens.report.npu_memory import npu_memory_lines
from arenalens.report.plan_output import percent_over, ratio
from arenalens.report.verdict_lines import declare_line, declare_notes
from arenalens.units import format_bytes_exact, format_bytes_short


def render_plan(document: Mapping[str, Any], *, color: bool = False, width: int = 120) -> str:
    """The `plan` document → terminal text: the number to declare, a summary, then one table
    per arena."""
    declared = DeclaredArena.from_dict(document["declare"], runtime=document["runtime"])
    parts: list[Any] = [declare_line(declared), *declare_notes(declared)]
    if document.get("npu_memory"):
        parts += [Text(line, style="cyan") for line in npu_memory_lines(document["npu_memory"])]
    parts.append(_summary_table(document))
    parts.extend(heap_tables(document.get("interpreter_heap") or ()))
    for arena in document["arenas"]:
        rows = [
            row
            for row in [*document["tensors"], *document["scratch"]]
            if row["arena"] == arena["name"]
        ]
        if rows:  # an empty arena (e.g. LiteRT's persistent one) needs no table
            parts.append(_buffer_table(arena["name"], rows, document["arena_base"] is not None))
    return render_text(parts, color=color, width=width)


def _bytes_text(value: int | None) -> str:
    if value is None:
        return "—"
    return format_bytes_exact(value) + (f" ({format_bytes_short(value)})" if value >= 1024 else "")


def _summary_table(document: Mapping[str, Any]) -> Table:
    table = Table(
        title=f"{escape(document['model'])}: {document['runtime']} memory plan",
        show_header=False,
        title_justify="left",
    )
    table.add_column("what", style="bold")
    table.add_column("value")
    table.add_row("planner", f"{document['planner']} (runtime: {document['runtime_planner']})")
    table.add_row(
        "alignment",
        f"{format_bytes_exact(document['alignment'])} ({document['alignment_applies_to']})",
    )
    for arena in document["arenas"]:
        table.add_row(f"arena '{escape(arena['name'])}'", _arena_line(arena))
    if document["runtime"] == "tflm":
        table.add_row("head (planned buffers)", _bytes_text(document["head_bytes"]))
        table.add_row("tail (persistent data)", _bytes_text(document["tail_bytes"]))
        minimal = document["min_arena_bytes"]
        table.add_row(
            "minimal arena_size",
            _bytes_text(minimal) if minimal is not None else "— (TFLM cannot run this model)",
        )
    else:
        table.add_row("memory required", _bytes_text(document["required_bytes"]))
    for heap in document.get("interpreter_heap") or ():
        label = "with XNNPACK" if heap["delegate"] == "xnnpack" else "builtin kernels only"
        estimate = ", within 1%" if heap["exact"] else ", estimate"
        table.add_row(
            f"interpreter heap ({label})",
            f"{format_bytes_exact(heap['after_setup_bytes'])} after setup, "
            f"{format_bytes_exact(heap['after_first_invoke_bytes'])} after the first invoke, "
            f"{format_bytes_exact(heap['peak_bytes'])} peak{estimate}",
        )
    unsized = document.get("interpreter_heap_unsized")
    if unsized:  # check's one-line error, without the model's name
        table.add_row("interpreter heap", f"no figure: {escape(unsized)}")
    if document["required_bytes"] != document["runtime_required_bytes"]:
        table.add_row("with the runtime's planner", _bytes_text(document["runtime_required_bytes"]))
    for arena in document["arenas"]:
        for note in arena["notes"]:
            table.add_row("note", escape(note))
    return table


def _arena_line(arena: Mapping[str, Any]) -> str:
    size, bound, naive = arena["arena_bytes"], arena["lower_bound_bytes"], arena["naive_bytes"]
    line = f"{format_bytes_exact(size)}; lower bound (whole tensors) {format_bytes_exact(bound)}"
    overhead = percent_over(size, bound)
    if overhead is not None and overhead < 0:
        # Only a plan that gives live tensors common bytes gets below the bound: an offline
        # plan's (Vela keeps an NPU operator's inputs and outputs inside its scratch tensor).
        line += f" ({overhead:g}%: live tensors share bytes in its offline plan)"
    elif overhead is not None:
        line += f" (+{overhead:g}%)"
    reuse = ratio(naive, size)
    line += f"; no reuse {format_bytes_exact(naive)}" + (f" ({reuse:g}× reuse)" if reuse else "")
    if arena["runtime_arena_bytes"] != size:
        line += f"; runtime planner {format_bytes_exact(arena['runtime_arena_bytes'])}"
    return line


def _buffer_table(name: str, rows: list[Mapping[str, Any]], with_address: bool) -> Table:
    table = Table(title=f"arena '{escape(name)}': {len(rows)} buffers", title_justify="left")
    columns = ["subgraph", "index", "name", "bytes", "first", "last", "offset"]
    if with_address:
        columns.append("address")
    for column in columns:
        table.add_column(column, justify="left" if column == "name" else "right")
    for row in sorted(rows, key=lambda r: (r["offset"], r["buffer"])):
        label = row["name"]
        if row["kind"] != "tensor":
            label = f"[{row['kind']}] {label}"
        if "alias_of" in row:
            label += f" (alias of {row['alias_of']})"
        index = row["index"] if row["index"] is not None else f"op {row['operator']}"
        cells: list[str | Text] = [
            str(row["subgraph"]),
            str(index),
            Text(label),
            f"{row['bytes']:,}",
            "end" if row["first"] is None else str(row["first"]),
            "end" if row["last"] is None else str(row["last"]),
            f"{row['offset']:,}" + (" (fixed)" if row["fixed"] else ""),
        ]
        if with_address:
            cells.append(f"0x{row['address']:08x}")
        table.add_row(*cells)
    return table


def render_verify(document: Mapping[str, Any], *, color: bool = False, width: int = 120) -> str:
    """The `verify` document → predicted vs real, side by side, and a verdict line."""
    table = Table(title=f"{document['runtime']}: predicted vs real", title_justify="left")
    for column in ("what", "predicted", "real", "", "note"):
        table.add_column(column, justify="right" if column in ("predicted", "real") else "left")
    for row in document["rows"]:
        table.add_row(
            escape(row["label"]),
            "—" if row["predicted"] is None else f"{row['predicted']:,}",
            "—" if row["real"] is None else f"{row['real']:,}",
            "ok" if row["agrees"] else "MISMATCH",
            escape(row["note"]),
        )
    verdict = (
        "all predictions agree with the real runtime"
        if document["agrees"]
        else "MISMATCH: some predictions differ from the real runtime"
    )
    parts: list[Any] = [table, Text(verdict, style="bold")]
    refused = document.get("cannot_run")
    if refused:  # the runtime's answer, said first
        parts.insert(0, Text(f"CANNOT RUN on the real interpreter: {refused}", style="bold red"))
    wrong = document.get("cannot_run_correctly") or []
    if wrong:
        parts.insert(
            0,
            Text(
                "CANNOT RUN CORRECTLY on the x86-64 tflite_micro wheel (reference kernels): "
                + "; ".join(wrong),
                style="bold red",
            ),
        )
    if document.get("interpreter"):
        parts.append(
            Text(f"real: {document['interpreter']}; predicted for: {document['predicted_for']}")
        )
    unsized = document.get("interpreter_heap_unsized")
    if unsized:  # plan's and check's reason: the arenas are verified, the heap has no figure
        parts.append(Text(f"interpreter heap: no figure: {unsized}"))
    if document["notes"]:
        parts.append(Text("\n".join(document["notes"]), style="dim"))
    return render_text(parts, color=color, width=width)
