"""`compare` output: Comparison → a JSON-ready document → one terminal table, a row per planner."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from arenalens.builds.build import build_summary
from arenalens.report.console import render_text
from arenalens.report.verdict_lines import declare_line
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:  # the report reads a Comparison; it never runs the planners
    from arenalens.comparison import Comparison
    from arenalens.declared import DeclaredArena

COMPARE_SCHEMA_VERSION = 1


def compare_document(
    comparison: Comparison, declared: DeclaredArena | None = None
) -> dict[str, Any]:
    """Comparison → the `compare --json` document; with `declared`, the verdict's number to
    declare (`declare`: CANNOT RUN, a placeholder input, a plan that corrupts tensors)."""
    bound = comparison.lower_bound
    baseline = comparison.runtime_arena_bytes
    rows: list[dict[str, Any]] = []
    overlap_rows = {row.planner: row for row in comparison.overlap_rows}
    for row in comparison.rows:
        entry: dict[str, Any] = {
            "planner": row.planner,
            "runtime_planner": row.is_runtime_planner,
            "arena_bytes": None,
            "over_lower_bound_percent": None,
            "saving_bytes": None,
            "saving_percent": None,
            "proven_optimal": False,
            "proven_bound": None,
            "searched": False,
            "seconds": None,
            "notes": [],
            "error": row.error or None,
        }
        if row.plan is not None:
            size = row.plan.arena_size
            entry.update(
                arena_bytes=size,
                over_lower_bound_percent=_percent(size - bound, bound),
                saving_bytes=baseline - size,
                saving_percent=_percent(baseline - size, baseline),
                proven_optimal=row.plan.proven_optimal or size == bound,
                proven_bound=max(row.plan.bound or 0, bound),
                searched=row.plan.bound is not None,
                seconds=round(row.plan.seconds, 4),
                notes=list(row.plan.notes),
            )
        if comparison.overlap_lower_bound is not None:
            entry["with_overlaps"] = _overlap_entry(
                overlap_rows.get(row.planner), comparison.overlap_lower_bound, baseline
            )
        rows.append(entry)
    reorder = None
    if comparison.reorder is not None:
        result = comparison.reorder
        reorder = {
            "reorderer": result.reorderer,
            "file_order_peak": result.file_order_peak,
            "peak": min(result.peak, result.file_order_peak),
            "proven_optimal": result.proven_optimal,
            "file_order_lower_bound": comparison.file_order_lower_bound,
            "seconds": round(result.seconds, 4),
        }
    return {
        "schema_version": COMPARE_SCHEMA_VERSION,
        "model": comparison.model.source,
        "runtime": comparison.runtime,
        "build": None if comparison.build is None else build_summary(comparison.build),
        "arena": comparison.arena.name,
        "buffers": len(comparison.arena.problem.buffers),
        "lower_bound": bound,
        "runtime_planner": comparison.arena.runtime_planner,
        "runtime_arena_bytes": baseline,
        "reorder": reorder,
        "overlap": None
        if comparison.overlap_lower_bound is None
        else {"allowed": comparison.overlap_count, "lower_bound": comparison.overlap_lower_bound},
        "rows": rows,
        **({} if declared is None else {"declare": declared.as_dict()}),
    }


def _overlap_entry(row: Any, bound: int, baseline: int) -> dict[str, Any]:
    """One planner's plan with overlaps allowed: arena, saving and optimality."""
    if row is None or row.plan is None:
        return {"arena_bytes": None, "error": None if row is None else row.error or None}
    size = row.plan.arena_size
    return {
        "arena_bytes": size,
        "over_lower_bound_percent": _percent(size - bound, bound),
        "saving_bytes": baseline - size,
        "saving_percent": _percent(baseline - size, baseline),
        "proven_optimal": row.plan.proven_optimal or size == bound,
        "seconds": round(row.plan.seconds, 4),
        "error": None,
    }


def _percent(part: int, whole: int) -> float | None:
    return None if whole <= 0 else round(100.0 * part / whole, 2)


def _overlap_cells(entry: Mapping[str, Any] | None) -> list[str]:
    if entry is None or entry["arena_bytes"] is None:
        return ["—", "—", "—"]
    percent = entry["saving_percent"]
    saving = format_bytes_exact(entry["saving_bytes"]) + (
        f" ({percent:.1f}%)" if percent is not None else ""
    )
    return [f"{entry['arena_bytes']:,}", saving, "proven" if entry["proven_optimal"] else "no"]


def render_compare(
    document: Mapping[str, Any],
    *,
    color: bool = False,
    width: int = 120,
    declared: DeclaredArena | None = None,
) -> str:
    """The `compare` document → a header line and one table, a row per planner; led by the
    verdict when `declared` has no number to trust (the plans are then the arena's only)."""
    header = (
        f"{escape(document['model'])} — {document['runtime']} arena '{document['arena']}': "
        f"{document['buffers']} buffers, "
        f"lower bound {format_bytes_exact(document['lower_bound'])}, "
        f"runtime planner {document['runtime_planner']} "
        f"{format_bytes_exact(document['runtime_arena_bytes'])}"
        + (" (file order)" if document["reorder"] is not None else "")
    )
    build = document.get("build")
    if build is not None and build.get("cpu") is not None:
        header += f"; build {build['name']}"
    parts: list[Any] = [Text(header, style="bold")]
    if declared is not None and not declared.status.gives_a_number:
        # The runtime's answer first (as plan and check say it): no planner makes it run.
        parts[:0] = [declare_line(declared), *(Text(reason) for reason in declared.reasons[:1])]
    overlap = document.get("overlap")
    if overlap is not None:
        parts.append(
            Text(
                f"with overlaps ({overlap['allowed']} outputs may start below an input they "
                f"consume): lower bound {format_bytes_exact(overlap['lower_bound'])}"
            )
        )
    reorder = document["reorder"]
    if reorder is not None:
        before = reorder["file_order_lower_bound"]
        parts.append(
            Text(
                f"reordered ({reorder['reorderer']}): busiest step {reorder['file_order_peak']:,}"
                f" → {format_bytes_exact(reorder['peak'])}"
                + (
                    f"; file-order lower bound {format_bytes_exact(before)}"
                    if before is not None
                    else ""
                )
                + ("; order proven optimal" if reorder["proven_optimal"] else "")
            )
        )
    table = Table(title_justify="left")
    columns: tuple[str, ...] = (
        "planner",
        "arena bytes",
        "over bound",
        "saving vs runtime",
        "optimal",
        "time",
    )
    if overlap is not None:
        columns = (*columns, "with overlaps", "saving", "optimal ")
    for column in columns:
        table.add_column(column, justify="left" if column == "planner" else "right")
    for row in document["rows"]:
        name = row["planner"] + (" (runtime)" if row["runtime_planner"] else "")
        extra = _overlap_cells(row.get("with_overlaps")) if overlap is not None else []
        if row["arena_bytes"] is None:
            table.add_row(escape(name), "—", "—", "—", "—", escape(row["error"] or ""), *extra)
            continue
        over = row["over_lower_bound_percent"]
        saving = row["saving_bytes"]
        saving_text = format_bytes_exact(saving) + (
            f" ({row['saving_percent']:.1f}%)" if row["saving_percent"] is not None else ""
        )
        if row["proven_optimal"]:
            optimal = "proven"
        elif row["searched"]:
            # A search planner that ran out of time: what is left between its plan and its bound.
            optimal = f"gap {format_bytes_exact(row['arena_bytes'] - row['proven_bound'])}"
        else:
            optimal = "no"
        table.add_row(
            escape(name),
            f"{row['arena_bytes']:,}",
            "—" if over is None else f"{over:.1f}%",
            saving_text,
            optimal,
            f"{row['seconds']:.3f} s",
            *extra,
        )
    parts.append(table)
    return render_text(parts, color=color, width=width)
