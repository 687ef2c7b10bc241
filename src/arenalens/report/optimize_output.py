"""`optimize` output: Optimization (+ real-runtime proof) → a JSON-ready document → text."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from arenalens.builds.build import build_summary
from arenalens.report.console import render_text
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:  # the report reads results; it never runs the optimizer
    from arenalens.optimization import Optimization, OutputProof

OPTIMIZE_SCHEMA_VERSION = 1


def optimize_document(
    optimization: Optimization,
    *,
    output: str | None,
    written: bool,
    proof: OutputProof | None,
    proof_note: str = "",
) -> dict[str, Any]:
    """Optimization and its proof → the `optimize --json` document."""
    chosen = optimization.chosen
    reorder = optimization.reorder
    return {
        "schema_version": OPTIMIZE_SCHEMA_VERSION,
        "model": optimization.source,
        "output": output,
        "written": written,
        # The model's own offline plan would corrupt tensors at these shapes: the file replaces it.
        "replaces_plan": optimization.replaces_plan,
        "build": build_summary(optimization.build),
        # The number to declare (minimal kTensorArenaSize) before and after: what savings count.
        "required_bytes": optimization.original_required_bytes,
        "new_required_bytes": optimization.new_required_bytes,
        "saved_bytes": optimization.saved_bytes,
        "saved_percent": _percent(optimization.saved_bytes, optimization.original_required_bytes),
        "runtime_head": optimization.original_head,
        "new_head": optimization.new_head,
        "lower_bound": chosen.lower_bound if chosen else optimization.original_lower_bound,
        "original_lower_bound": optimization.original_lower_bound,
        "overlap": None
        if not optimization.overlap
        else {
            "kernels": str(optimization.kernels),
            "disjoint_head": optimization.disjoint_head,
            "disjoint_lower_bound": _disjoint_bound(optimization),
            "allowed": len(chosen.overlaps) if chosen else 0,
            "shared": [
                {
                    "operator": p.operator,
                    "opcode": p.opcode,
                    "input": p.input_tensor,
                    "output": p.output_tensor,
                    "min_offset_distance": p.overlap.min_offset_distance,
                    "pattern": p.pattern,
                }
                for p in sorted(
                    chosen.shared if chosen else (), key=lambda p: (p.operator, p.input_tensor)
                )
            ],
        },
        "chosen": None
        if chosen is None
        else {
            "label": chosen.label,
            "planner": chosen.plan.planner,
            "planned_arena_bytes": chosen.plan.arena_size,
            "predicted_head": chosen.predicted_head,
            "required_bytes": chosen.required_bytes,
            "reproduced": chosen.reproduced,
            "operators_moved": chosen.schedule.moved(),
            "aliases": [
                {"operator": a.operator, "opcode": a.opcode, "input": a.input, "output": a.output}
                for a in chosen.aliases
            ],
        },
        "reorder": None
        if reorder is None
        else {
            "reorderer": reorder.reorderer,
            "file_order_peak": reorder.file_order_peak,
            "peak": reorder.peak,
            "proven_optimal": reorder.proven_optimal,
        },
        "candidates": [
            {
                "label": c.label,
                "planned_arena_bytes": c.plan.arena_size,
                "predicted_head": c.predicted_head,
                "required_bytes": c.required_bytes,
                "lower_bound": c.lower_bound,
            }
            for c in optimization.candidates
        ],
        "real_tflm": None
        if proof is None
        else {
            "original_head": proof.original_head,
            "new_head": proof.new_head,
            "outputs_identical": proof.identical,
            "invocations": proof.invocations,
            "detail": proof.detail,
        },
        "notes": [*optimization.notes, *([proof_note] if proof_note else [])],
    }


def _percent(part: int, whole: int) -> float | None:
    return None if whole <= 0 else round(100.0 * part / whole, 2)


def _disjoint_bound(optimization: Optimization) -> int:
    """The busiest step of the chosen order when no bytes are shared."""
    chosen = optimization.chosen
    if chosen is not None and chosen.disjoint_lower_bound:
        return chosen.disjoint_lower_bound
    return optimization.original_lower_bound


def render_optimize(document: Mapping[str, Any], *, color: bool = False, width: int = 120) -> str:
    """The `optimize` document → kTensorArenaSize before/after first, then the head, what changed,
    and the real-runtime check."""
    saved = document["saved_bytes"]
    percent = document["saved_percent"]
    before, after = document["required_bytes"], document["new_required_bytes"]
    if saved > 0:
        headline = Text.assemble(
            ("kTensorArenaSize ", "bold"),
            (f"{before:,} → {format_bytes_exact(after)}", "bold cyan"),
            f"  saves {format_bytes_exact(saved)}"
            + (f" ({percent:.1f}%)" if percent is not None else ""),
        )
    elif document.get("replaces_plan"):
        headline = Text.assemble(
            ("kTensorArenaSize ", "bold"),
            (format_bytes_exact(before), "bold cyan"),
            "  the model's offline plan, which would corrupt tensors at these shapes, replaced",
        )
    else:
        headline = Text.assemble(
            ("kTensorArenaSize ", "bold"),
            (format_bytes_exact(before), "bold cyan"),
            "  no plan declares fewer bytes than the runtime's own",
        )
    name = PurePath(document["model"]).name
    build = document.get("build") or {}  # documents before builds had none: the host
    on_device = build.get("cpu") is not None
    where = f", {build['name']}" if on_device else ""
    table = Table(title=f"{escape(name)} (TFLM{where})", title_justify="left")
    for column in ("", "bytes", "real TFLM"):
        table.add_column(column, justify="left" if not column else "right")
    real = document["real_tflm"] or {}

    def measured(key: str) -> str:
        # The real interpreter is the x86-64 wheel: its heads are the wheel's, not a device's.
        value = None if on_device else real.get(key)
        return "—" if value is None else f"{value:,}"

    changed = document["chosen"] is not None
    overlap = document.get("overlap")
    table.add_row("kTensorArenaSize (as given)", f"{before:,}", "")
    if changed:
        table.add_row("kTensorArenaSize (optimized)", f"{after:,}", "")
    table.add_row("  head (as given)", f"{document['runtime_head']:,}", measured("original_head"))
    if overlap is not None:
        table.add_row("  head without overlaps", f"{overlap['disjoint_head']:,}", "")
    if changed:
        table.add_row("  head (optimized)", f"{document['new_head']:,}", measured("new_head"))
    if overlap is not None:
        table.add_row("  head lower bound, disjoint", f"{overlap['disjoint_lower_bound']:,}", "")
        table.add_row("  head lower bound, with overlaps", f"{document['lower_bound']:,}", "")
    else:
        table.add_row("  head lower bound", f"{document['lower_bound']:,}", "")
    lines: list[str] = []
    chosen = document["chosen"]
    if chosen is not None:
        lines.append(f"plan: {chosen['label']}")
        if chosen["operators_moved"]:
            lines.append(f"operators moved: {chosen['operators_moved']}")
        if chosen["aliases"]:
            names = ", ".join(f"{a['opcode']} (op {a['operator']})" for a in chosen["aliases"])
            lines.append(f"in-place: {names}")
    if overlap is not None and overlap["shared"]:
        shared = overlap["shared"]
        lines.append(
            f"overlaps ({overlap['kernels']} kernels): {len(shared)} outputs start below an "
            f"input they consume: "
            + ", ".join(f"{p['opcode']} (op {p['operator']})" for p in shared[:8])
            + (f", ... ({len(shared) - 8} more)" if len(shared) > 8 else "")
        )
    if real:
        verdict = "bit-identical" if real["outputs_identical"] else "DIFFERENT"
        lines.append(
            ("real TFLM (x86-64 wheel)" if on_device else "real TFLM")
            + f": outputs {verdict} over {real['invocations']} invocations"
            + (f" ({real['detail']})" if real["detail"] else "")
        )
    if document["output"] is not None and document["written"]:
        lines.append(f"written: {document['output']} (declare kTensorArenaSize = {after:,})")
    elif document["output"] is not None:
        lines.append(f"NOT written: {document['output']}")
    lines.extend(document["notes"])
    return render_text([headline, table, Text("\n".join(lines))], color=color, width=width)
