"""`optimize` output: Optimization (+ real-runtime proof) → a JSON-ready document → text."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from arenalens.builds.build import build_summary
from arenalens.planning.problem import missing_extra_text
from arenalens.report.console import render_text
from arenalens.units import format_bytes_exact

if TYPE_CHECKING:  # the report reads results; it never runs the optimizer
    from arenalens.optimization import Optimization
    from arenalens.runtimes.verification import OutputProof

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
        # What the firmware must set up for the written model: its resolver and variable table.
        "firmware": _firmware(optimization) if optimization.runs else None,
        "model": optimization.source,
        "output": output,
        "written": written,
        # The model's own offline plan would corrupt tensors at these shapes: the file replaces it.
        "replaces_plan": optimization.replaces_plan,
        # Given at input shapes its file does not store: the file at them is what TFLM runs.
        "resized": optimization.resized,
        "build": build_summary(optimization.build),
        # The number to declare (minimal kTensorArenaSize) before and after: what savings count.
        "required_bytes": optimization.original_required_bytes,
        "new_required_bytes": optimization.new_required_bytes,
        "saved_bytes": optimization.saved_bytes,
        # The extra whose exact search the written plan went without (OR-Tools): the number may
        # fall with it (None: none was missing, or the plan is at its lower bound).
        "missing_extra": optimization.missing_extra or None,
        "saved_percent": _percent(optimization.saved_bytes, optimization.original_required_bytes),
        "runtime_head": optimization.original_head,
        "new_head": optimization.new_head,
        "lower_bound": chosen.lower_bound if chosen else optimization.original_lower_bound,
        "original_lower_bound": optimization.original_lower_bound,
        # The minimal kTensorArenaSize on each build the number must hold on (without --kernels,
        # every kernel library of the core).
        "required_by_build": dict(optimization.original_required_by_build),
        "new_required_by_build": dict(chosen.required_by_build) if chosen else None,
        # The code paths the written plan computes the right outputs on ([] when it shares no
        # bytes: every build), and the real-runtime checks that back it, each naming its build.
        "valid_for": [path.name for path in optimization.valid_for],
        "proven": list(optimization.proven),
        "overlap": None
        if not optimization.overlap
        else {
            "kernels": optimization.rules.title if optimization.rules else "",
            "explicit": bool(optimization.rules and optimization.rules.explicit),
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
        "split": _split_document(optimization),
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


def _split_document(optimization: Optimization) -> dict[str, Any] | None:
    """What --split cut and what it costs per inference (None without --split)."""
    splitting = optimization.split
    if splitting is None:
        return None
    return {
        "measured_before": splitting.original_measured,
        "measured_after": splitting.measured,
        "operators_added": splitting.operators_added,
        "tensors_added": splitting.tensors_added,
        "extra_macs": splitting.extra_macs,
        "region_macs": sum(s.original_macs for s in splitting.splits),
        "copied_bytes": splitting.copied_bytes,
        "weight_bytes": splitting.weight_bytes,
        "splits": [
            {
                "kind": str(s.kind),
                "operators": list(s.region.operators),
                "parts": s.parts,
                "source_tensor": s.region.source,
                "result_tensor": s.region.result,
                "operators_added": len(s.operators) - len(s.region.operators),
                "region_macs": s.original_macs,
                "extra_macs": s.extra_macs,
                "copied_bytes": s.copied_bytes,
                "weight_bytes": s.weight_bytes,
            }
            for s in splitting.splits
        ],
        "levels": list(splitting.levels),
    }


def _split_lines(split: Mapping[str, Any]) -> list[str]:
    """The split section of the text: what was cut, the work it adds."""
    if not split["splits"]:
        return []
    cuts = "; ".join(
        f"operators {s['operators'][0]}-{s['operators'][-1]} into {s['parts']} "
        + ("bands of rows" if s["kind"] == "bands" else "channel groups")
        for s in split["splits"]
    )
    region = split["region_macs"]
    extra = split["extra_macs"]
    share = f" (+{100.0 * extra / region:.1f}% of those operators' {region:,})" if region else ""
    return [
        f"split: {cuts} (+{split['operators_added']} operators, +{split['tensors_added']} tensors)",
        f"extra work per inference: {extra:,} MACs recomputed in halos{share}; "
        f"{format_bytes_exact(split['copied_bytes'])} copied by slices, pads and "
        f"concatenations; {format_bytes_exact(split['weight_bytes'])} of new constants in "
        "the file",
    ]


def _percent(part: int, whole: int) -> float | None:
    return None if whole <= 0 else round(100.0 * part / whole, 2)


def _disjoint_bound(optimization: Optimization) -> int:
    """The busiest step of the chosen order when no bytes are shared."""
    chosen = optimization.chosen
    if chosen is not None and chosen.disjoint_lower_bound:
        return chosen.disjoint_lower_bound
    return optimization.original_lower_bound


def _fit_lines(fit: Mapping[str, Any] | None) -> list[str]:
    """`optimize --target`: the written model's verdict on the board, last."""
    if not fit or fit["required_bytes"] is None:
        return []
    headroom = fit["headroom_bytes"]
    reserve = format_bytes_exact(fit["reserve_bytes"])
    kept = f"{reserve} kept for its firmware"
    if fit["reserve_from"] != "firmware":
        kept = f"{reserve} reserved"
    where = f"{fit['where'][:-1]}; {kept})" if fit["reserve_bytes"] else fit["where"]
    if not fit.get("fits", headroom >= 0):
        short = format_bytes_exact(-headroom)
        return [f"DOES NOT FIT  the written model on {where}: {short} short"]
    tight = fit.get("tight")
    word = "FITS, TIGHT" if (headroom < fit["margin_bytes"] if tight is None else tight) else "FITS"
    lines = [f"{word}  the written model on {where}: {format_bytes_exact(headroom)} to spare"]
    placement = fit.get("placement") or {}
    if placement.get("banks"):
        lines.append(
            "  placed: "
            + ", ".join(
                f"{row['part']} {format_bytes_exact(row['bytes'])} in {row['bank']}"
                for row in placement["banks"]
            )
        )
    if fit.get("moved"):
        lines.append(
            f"  the saving moves the activations {fit['moved']}: every activation and scratch "
            "buffer is read and written there on every inference, so this rewrite is worth more "
            "than its bytes alone"
        )
    return lines


def _firmware(optimization: Optimization) -> dict[str, Any]:
    """The written model's firmware needs, and the operators the original did not run."""
    from arenalens.firmware import firmware_needs  # noqa: PLC0415
    from arenalens.tflite.reader import parse_model  # noqa: PLC0415

    written = optimization.chosen.model if optimization.chosen is not None else None
    original = parse_model(optimization.original_data, optimization.source)
    needs = firmware_needs(written or original, optimization.build.resource_variables)
    before = set(firmware_needs(original).operators)
    return {
        **needs.as_dict(),
        "operators_added": [op for op in needs.operators if op not in before],
        "resource_table": needs.resource_line or None,
    }


def _firmware_lines(firmware: Mapping[str, Any] | None) -> list[str]:
    """'firmware must register ...' and the resolver lines to paste, one per line."""
    if not firmware:
        return []
    count = len(firmware["operators"])
    added = firmware["operators_added"]
    more = f", {len(added)} not in the model as given: {', '.join(added)}" if added else ""
    lines = [f"the firmware's resolver must register {count} operators{more}:"]
    lines.extend(f"  {line}" for line in firmware["resolver"])
    if firmware["resource_table"]:
        lines.append(
            f"the figure assumes a resource-variable table of {firmware['resource_variables']} "
            "entries (a larger table takes more of the tail):"
        )
        lines.append(f"  {firmware['resource_table']}")
    return lines


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
            (format_bytes_exact(after), "bold cyan"),
            "  the model's offline plan, which would corrupt tensors at these shapes, replaced",
        )
    elif document.get("resized"):
        headline = Text.assemble(
            ("kTensorArenaSize ", "bold"),
            (format_bytes_exact(after), "bold cyan"),
            "  the model at the input shapes given (TFLM runs the shapes a file stores); no plan "
            "declares fewer bytes than the runtime's own",
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
    if document.get("split"):
        lines.extend(_split_lines(document["split"]))
    if overlap is not None and overlap["shared"]:
        shared = overlap["shared"]
        lines.append(
            f"overlaps (safe on {overlap['kernels']}): {len(shared)} outputs start below an "
            f"input they consume: "
            + ", ".join(f"{p['opcode']} (op {p['operator']})" for p in shared[:8])
            + (f", ... ({len(shared) - 8} more)" if len(shared) > 8 else "")
        )
    if changed and document.get("valid_for"):
        lines.append(
            "the plan shares bytes: right on " + ", ".join(document["valid_for"]) + " only "
            "(recorded in the model; `arenalens check` says CANNOT RUN CORRECTLY on other builds)"
        )
    by_build = document.get("new_required_by_build") or {}
    if changed and len(by_build) > 1:
        lines.append(
            f"kTensorArenaSize {after:,} holds on every build listed: "
            + ", ".join(f"{name} {value:,}" for name, value in by_build.items())
        )
    if real:
        verdict = "bit-identical" if real["outputs_identical"] else "DIFFERENT"
        lines.append(
            "real TFLM (x86-64 tflite_micro wheel, reference kernels)"
            + f": outputs {verdict} over {real['invocations']} invocations"
            + (f" ({real['detail']})" if real["detail"] else "")
        )
    if document["output"] is not None and document["written"]:
        missing = document.get("missing_extra")
        lines.append(
            f"written: {document['output']} (declare kTensorArenaSize = {after:,}"
            + (f"; {missing_extra_text(missing)})" if missing else ")")
        )
        lines.extend(_firmware_lines(document.get("firmware")))
    elif document["output"] is not None:
        lines.append(f"NOT written: {document['output']}")
    lines.extend(document["notes"])
    lines.extend(_fit_lines(document.get("fit")))
    return render_text([headline, table, Text("\n".join(lines))], color=color, width=width)
