"""`plan` and `verify` output: Analysis → a JSON-ready document → terminal text.

The document is the report: plain numbers and strings, built once from the Analysis; the text
renderer reads only the document, so `--json` and the table always agree. Both work for any
runtime: arenas, buffers and budget parts come from the runtime's own rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from arenalens.analysis.arena_problem import BufferKind
from arenalens.analysis.lifetimes import NEVER_FREED
from arenalens.declared import DeclaredArena, declared_arena
from arenalens.report.check_output import declare_line, declare_notes
from arenalens.report.console import render_text
from arenalens.runtimes import VerifyResult
from arenalens.units import format_bytes_exact, format_bytes_short

if TYPE_CHECKING:  # the report reads an Analysis; it never runs the pipeline
    from arenalens.pipeline import Analysis, ArenaResult

PLAN_SCHEMA_VERSION = 1
_TENSOR_KINDS = (BufferKind.TENSOR, BufferKind.VARIABLE)


def _step(step: int) -> int | None:
    """A lifetime step for JSON: None for LiteRT's 'never freed'."""
    return None if step == NEVER_FREED else step


def _percent_over(value: int, bound: int) -> float | None:
    return None if bound <= 0 else round(100.0 * (value - bound) / bound, 2)


def _ratio(numerator: int, denominator: int) -> float | None:
    return None if denominator <= 0 else round(numerator / denominator, 3)


def plan_document(analysis: Analysis, *, arena_base: int | None = None) -> dict[str, Any]:
    """Analysis → the `plan --json` document (primary arena numbers at the top level)."""
    primary = analysis.primary
    tensors: list[dict[str, Any]] = []
    scratch: list[dict[str, Any]] = []
    for result in analysis.arenas:
        rows = _buffer_rows(analysis, result, arena_base)
        tensors.extend(row for row in rows if row["kind"] in _TENSOR_KINDS)
        scratch.extend(row for row in rows if row["kind"] not in _TENSOR_KINDS)
    document: dict[str, Any] = {
        "schema_version": PLAN_SCHEMA_VERSION,
        "model": analysis.model.source,
        "runtime": analysis.runtime,
        "planner": analysis.planner,
        "runtime_planner": primary.arena.runtime_planner,
        # Whether the runtime can set the model up and invoke it; when not, why (the sizes below
        # are then what it would plan, not a size that works).
        "runs": analysis.budget.runs,
        "cannot_run": [obstacle.as_dict() for obstacle in analysis.budget.obstacles],
        "alignment": _alignment(primary),
        "alignment_applies_to": "sizes" if primary.arena.size_rounding > 1 else "offsets",
        "arena_base": arena_base,
        "arena_bytes": primary.plan.arena_size,
        "lower_bound_bytes": primary.lower_bound,
        "naive_bytes": primary.naive_plan.arena_size,
        "runtime_arena_bytes": primary.runtime_plan.arena_size,
        "overhead_over_lower_bound_percent": _percent_over(
            primary.plan.arena_size, primary.lower_bound
        ),
        "reuse_ratio_vs_naive": _ratio(primary.naive_plan.arena_size, primary.plan.arena_size),
        "build": dict(analysis.budget.build) or None,
        "required_bytes": analysis.budget.required_bytes,
        "runtime_required_bytes": analysis.runtime_budget.required_bytes,
        "declare": declared_arena(analysis).as_dict(),
        "budget": {
            "parts": dict(analysis.budget.parts),
            "assumptions": list(analysis.budget.assumptions),
            "estimates": list(analysis.budget.estimate_reasons),
        },
        "arenas": [_arena_summary(result) for result in analysis.arenas],
        "tensors": tensors,
        "scratch": scratch,
    }
    if analysis.runtime == "tflm":
        document["head_bytes"] = analysis.budget.parts.get("head")
        document["tail_bytes"] = analysis.budget.parts.get("tail")
        document["min_arena_bytes"] = analysis.budget.required_bytes
        document["min_arena_is_estimate"] = bool(analysis.budget.estimate_reasons)
    return document


def _alignment(result: ArenaResult) -> int:
    if result.arena.size_rounding > 1:
        return result.arena.size_rounding
    return result.arena.problem.alignment


def _arena_summary(result: ArenaResult) -> dict[str, Any]:
    return {
        "name": result.arena.name,
        "planner": result.plan.planner,
        "arena_bytes": result.plan.arena_size,
        "lower_bound_bytes": result.lower_bound,
        "naive_bytes": result.naive_plan.arena_size,
        "runtime_planner": result.arena.runtime_planner,
        "runtime_arena_bytes": result.runtime_plan.arena_size,
        "buffers": len(result.arena.problem.buffers),
        "planning_seconds": round(result.plan.seconds, 6),
        "notes": list(result.arena.notes),
    }


def _buffer_rows(
    analysis: Analysis, result: ArenaResult, arena_base: int | None
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    by_id = result.arena.problem.by_id
    for buffer_id in sorted(result.arena.buffers):
        meaning = result.arena.buffers[buffer_id]
        buffer = by_id[buffer_id]
        offset = result.plan.offsets[buffer_id]
        row: dict[str, Any] = {
            "arena": result.arena.name,
            "buffer": buffer_id,
            "kind": meaning.kind.value,
            "subgraph": meaning.subgraph,
            "index": meaning.tensor,
            "operator": meaning.operator,
            "name": meaning.name,
            "bytes": meaning.nbytes,
            "planned_bytes": buffer.size,
            "first": _step(buffer.start),
            "last": _step(buffer.end),
            "offset": offset,
            "fixed": buffer.fixed_offset is not None,
        }
        if arena_base is not None:
            row["address"] = arena_base + offset
        rows.append(row)
        subgraph = analysis.model.subgraphs[meaning.subgraph]
        for alias in meaning.aliases:
            rows.append(
                row
                | {"index": alias, "name": subgraph.tensors[alias].name, "alias_of": meaning.tensor}
            )
    return rows


# ---------------------------------------------------------------------------------------------
# Text


def render_plan(document: Mapping[str, Any], *, color: bool = False, width: int = 120) -> str:
    """The `plan` document → terminal text: the number to declare, a summary, then one table
    per arena."""
    declared = DeclaredArena.from_dict(document["declare"], runtime=document["runtime"])
    parts: list[Any] = [declare_line(declared), *declare_notes(declared), _summary_table(document)]
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
    table.add_row("alignment", f"{document['alignment']} B ({document['alignment_applies_to']})")
    for arena in document["arenas"]:
        table.add_row(f"arena '{escape(arena['name'])}'", _arena_line(arena))
    if document["runtime"] == "tflm":
        table.add_row("head (planned buffers)", _bytes_text(document["head_bytes"]))
        table.add_row("tail (persistent data)", _bytes_text(document["tail_bytes"]))
        table.add_row("minimal arena_size", _bytes_text(document["min_arena_bytes"]))
    else:
        table.add_row("memory required", _bytes_text(document["required_bytes"]))
    if document["required_bytes"] != document["runtime_required_bytes"]:
        table.add_row("with the runtime's planner", _bytes_text(document["runtime_required_bytes"]))
    for arena in document["arenas"]:
        for note in arena["notes"]:
            table.add_row("note", escape(note))
    return table


def _arena_line(arena: Mapping[str, Any]) -> str:
    size, bound, naive = arena["arena_bytes"], arena["lower_bound_bytes"], arena["naive_bytes"]
    line = f"{format_bytes_exact(size)}; lower bound {format_bytes_exact(bound)}"
    overhead = _percent_over(size, bound)
    if overhead is not None:
        line += f" (+{overhead:g}%)"
    ratio = _ratio(naive, size)
    line += f"; no reuse {format_bytes_exact(naive)}" + (f" ({ratio:g}× reuse)" if ratio else "")
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


def verify_document(result: VerifyResult) -> dict[str, Any]:
    """VerifyResult → the `verify --json` document."""
    return {
        "runtime": result.runtime,
        "agrees": result.agrees,
        "rows": [
            {
                "label": row.label,
                "predicted": row.predicted,
                "real": row.real,
                "agrees": row.agrees,
                "note": row.note,
            }
            for row in result.rows
        ],
        "notes": list(result.notes),
    }


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
    if document["notes"]:
        parts.append(Text("\n".join(document["notes"]), style="dim"))
    return render_text(parts, color=color, width=width)
