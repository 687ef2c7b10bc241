"""`inspect` output: Model (+ Timeline) → a JSON-ready document or terminal text."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from arenalens.analysis.lifetimes import NEVER_FREED, Timeline
from arenalens.analysis.summary import ModelSummary, summarize
from arenalens.ir import Model, Tensor
from arenalens.report.console import render_text
from arenalens.report.labels import format_shape
from arenalens.units import format_bytes_short

INSPECT_SCHEMA_VERSION = 1


def tensor_brief(tensor: Tensor) -> dict[str, Any]:
    """A subgraph input/output → index, name, shape, shape_signature, dtype."""
    return {
        "index": tensor.index,
        "name": tensor.name,
        "shape": list(tensor.shape),
        "shape_signature": list(tensor.shape_signature),
        "dtype": tensor.dtype.name,
    }


def tensor_record(tensor: Tensor) -> dict[str, Any]:
    """One tensor → its full JSON record."""
    quantization = None
    if tensor.quantization is not None:
        q = tensor.quantization
        quantization = {
            "scale": q.scale,
            "zero_point": q.zero_point,
            "channels": q.channel_count,
            "axis": q.axis,
        }
    return {
        **tensor_brief(tensor),
        "bytes": tensor.nbytes,
        "kind": tensor.kind.value,
        "buffer": tensor.buffer,
        "is_input": tensor.is_input,
        "is_output": tensor.is_output,
        "is_variable": tensor.is_variable,
        "quantization": quantization,
    }


def inspect_document(model: Model, timeline: Timeline | None = None) -> dict[str, Any]:
    """Model (+ lifetimes) → the `inspect --json` document."""
    summary = summarize(model)
    document: dict[str, Any] = {
        "schema_version": INSPECT_SCHEMA_VERSION,
        "model": model.source,
        "file_bytes": model.file_bytes,
        "tflite_schema_version": model.version,
        "description": model.description,
        "subgraph_count": len(model.subgraphs),
        "tensor_count": model.tensor_count,
        "operator_count": model.operator_count,
        "op_histogram": dict(summary.op_histogram),
        "custom_ops": list(summary.custom_ops),
        "tensors_by_kind": dict(summary.tensors_by_kind),
        "bytes": {
            "constants": summary.constant_bytes,
            "arena_candidates": summary.arena_candidate_bytes,
            "variables": summary.variable_bytes,
        },
        "metadata": [{"name": m.name, "buffer": m.buffer} for m in model.metadata],
        "offline_plan": None
        if model.offline_plan is None
        else {
            "version": model.offline_plan.version,
            "subgraph_count": model.offline_plan.subgraph_count,
            "offsets": list(model.offline_plan.offsets),
        },
        # arenalens' record of the builds the offline plan is right on (as written; `check`
        # re-checks it against the plan and the kernels' access rules).
        "plan_record": None
        if model.plan_record is None
        else {
            "version": model.plan_record.version,
            "valid_for": list(model.plan_record.valid_for),
            "proven": list(model.plan_record.proven),
            "writer": model.plan_record.writer,
        },
        "signature_defs": [
            {
                "key": s.key,
                "subgraph": s.subgraph,
                "inputs": dict(s.inputs),
                "outputs": dict(s.outputs),
            }
            for s in model.signature_defs
        ],
        "subgraphs": [_subgraph_document(model, i, summary) for i in range(len(model.subgraphs))],
    }
    if timeline is not None:
        document["lifetimes"] = lifetimes_document(model, timeline)
    return document


def _subgraph_document(model: Model, index: int, summary: ModelSummary) -> dict[str, Any]:
    subgraph = model.subgraphs[index]
    sub_summary = summary.subgraphs[index]
    return {
        "index": index,
        "name": subgraph.name,
        "operators": len(subgraph.operators),
        "op_histogram": dict(sub_summary.op_histogram),
        "inputs": [tensor_brief(subgraph.tensors[i]) for i in subgraph.inputs if i >= 0],
        "outputs": [tensor_brief(subgraph.tensors[i]) for i in subgraph.outputs if i >= 0],
        "tensors": [tensor_record(t) for t in subgraph.tensors],
        "operator_list": [
            {
                "index": op.index,
                "opcode": op.opcode,
                "inputs": list(op.inputs),
                "outputs": list(op.outputs),
                "intermediates": list(op.intermediates),
                "called_subgraphs": list(op.called_subgraphs),
            }
            for op in subgraph.operators
        ],
    }


def _step_value(step: int) -> int | None:
    return None if step == NEVER_FREED else step


def lifetimes_document(model: Model, timeline: Timeline) -> dict[str, Any]:
    """Timeline → {runtime, steps[], tensors[]}: first write / last read per non-constant tensor."""
    rows = []
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            if tensor.has_data:
                continue
            lifetime = timeline.of(subgraph.index, tensor.index)
            rows.append(
                {
                    "subgraph": subgraph.index,
                    "index": tensor.index,
                    "name": tensor.name,
                    "bytes": tensor.nbytes,
                    "kind": tensor.kind.value,
                    "first": _step_value(lifetime.first),
                    "last": _step_value(lifetime.last),
                    "alias_of": lifetime.alias_of,
                    "producer": subgraph.producers.get(tensor.index),
                    "consumers": list(subgraph.consumers.get(tensor.index, ())),
                }
            )
    return {
        "runtime": timeline.runtime,
        "step_rule": _STEP_RULES[timeline.runtime],
        "steps": [
            {"step": s.step, "subgraph": s.subgraph, "operator": s.operator, "label": s.label}
            for s in timeline.steps
        ],
        "tensors": rows,
    }


_STEP_RULES = {
    "tflm": "one timeline for the model: step 0 = before the first operator, operator k of "
    "subgraph 0 = step k+1 (plus one step per nested subgraph entry); intervals inclusive; "
    "-1 = never written / never read",
    "litert": "one timeline per subgraph: step = position in its execution plan; graph inputs "
    "start at 0; null last = never freed (inputs, outputs, variables); intervals inclusive",
}


# ---------------------------------------------------------------------------------------------
# Terminal text


def render_inspect(
    model: Model,
    *,
    show_tensors: bool = False,
    timeline: Timeline | None = None,
    color: bool = False,
    width: int = 120,
) -> str:
    """Model → the `inspect` terminal text (summary, optionally tensors and lifetimes)."""
    summary = summarize(model)
    parts: list[Any] = [_summary_table(model, summary), _io_table(model)]
    if show_tensors:
        parts.extend(_tensor_table(model, i) for i in range(len(model.subgraphs)))
    if timeline is not None:
        parts.extend(_lifetime_table(model, timeline, i) for i in range(len(model.subgraphs)))
    return render_text(parts, color=color, width=width)


def _summary_table(model: Model, summary: ModelSummary) -> Table:
    table = Table(title=f"{escape(model.name)}", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    table.add_row("file", f"{escape(model.source)} ({format_bytes_short(model.file_bytes)})")
    table.add_row(
        "subgraphs",
        ", ".join(
            f"{s.index} '{escape(s.name)}' ({s.operator_count} ops, {s.tensor_count} tensors)"
            for s in summary.subgraphs
        ),
    )
    table.add_row(
        "operators",
        f"{model.operator_count}: "
        + ", ".join(f"{escape(name)} ×{count}" for name, count in summary.op_histogram.items()),
    )
    table.add_row(
        "tensors",
        f"{model.tensor_count}: "
        + ", ".join(f"{kind} {count}" for kind, count in summary.tensors_by_kind.items() if count),
    )
    table.add_row("constants", format_bytes_short(summary.constant_bytes) + " (weights, in flash)")
    table.add_row(
        "arena candidates",
        format_bytes_short(summary.arena_candidate_bytes) + " summed, before any reuse",
    )
    table.add_row("variables", format_bytes_short(summary.variable_bytes) + " (persistent state)")
    if summary.dynamic_tensors:
        table.add_row(
            "dynamic shapes", f"{summary.dynamic_tensors} tensors have -1 in shape_signature"
        )
    if model.metadata:
        table.add_row("metadata", ", ".join(escape(m.name) for m in model.metadata))
    if model.offline_plan is not None:
        planned = sum(1 for o in model.offline_plan.offsets if o >= 0)
        table.add_row(
            "offline plan",
            f"{planned} of {len(model.offline_plan.offsets)} tensors "
            "have fixed offsets (OfflineMemoryAllocation)",
        )
    if model.plan_record is not None:
        valid = ", ".join(model.plan_record.valid_for).replace("*", "every build") or "no build"
        table.add_row(
            "plan record",
            escape(f"right on: {valid} (written by {model.plan_record.writer or 'arenalens'})"),
        )
    if model.signature_defs:
        table.add_row(
            "signatures",
            ", ".join(f"{escape(s.key)} → subgraph {s.subgraph}" for s in model.signature_defs),
        )
    return table


def _io_table(model: Model) -> Table:
    table = Table(title="inputs and outputs", title_justify="left")
    for column in ("subgraph", "role", "index", "name", "shape", "dtype", "bytes"):
        table.add_column(column, justify="right" if column in ("index", "bytes") else "left")
    for subgraph in model.subgraphs:
        for role, indices in (("input", subgraph.inputs), ("output", subgraph.outputs)):
            for index in indices:
                if index < 0:
                    continue
                tensor = subgraph.tensors[index]
                shape = format_shape(tensor.shape)
                if tensor.has_dynamic_dims:
                    shape += f" (signature {format_shape(tensor.shape_signature)})"
                table.add_row(
                    str(subgraph.index),
                    role,
                    str(index),
                    Text(tensor.name),
                    shape,
                    tensor.dtype.name,
                    f"{tensor.nbytes:,}",
                )
    return table


def _tensor_table(model: Model, subgraph_index: int) -> Table:
    subgraph = model.subgraphs[subgraph_index]
    table = Table(title=f"tensors of subgraph {subgraph_index}", title_justify="left")
    for column in ("index", "name", "shape", "dtype", "bytes", "kind", "quantization"):
        table.add_column(column, justify="right" if column in ("index", "bytes") else "left")
    for tensor in subgraph.tensors:
        quantization = ""
        if tensor.quantization is not None:
            q = tensor.quantization
            quantization = f"scale {q.scale:.4g} zp {q.zero_point}"
            if q.channel_count > 1:
                quantization = f"{q.channel_count} channels (axis {q.axis})"
        table.add_row(
            str(tensor.index),
            Text(tensor.name),
            format_shape(tensor.shape),
            tensor.dtype.name,
            f"{tensor.nbytes:,}",
            tensor.kind.value,
            quantization,
        )
    return table


def _lifetime_table(model: Model, timeline: Timeline, subgraph_index: int) -> Table:
    subgraph = model.subgraphs[subgraph_index]
    table = Table(
        title=f"lifetimes of subgraph {subgraph_index} ({timeline.runtime} rules; steps inclusive)",
        title_justify="left",
        caption=_STEP_RULES[timeline.runtime],
    )
    for column in (
        "index",
        "name",
        "bytes",
        "kind",
        "first write",
        "last read",
        "written by",
        "read by",
    ):
        table.add_column(column, justify="right" if column in ("index", "bytes") else "left")
    for tensor in subgraph.tensors:
        if tensor.has_data:
            continue
        lifetime = timeline.of(subgraph_index, tensor.index)
        producer = subgraph.producers.get(tensor.index)
        readers = subgraph.consumers.get(tensor.index, ())
        last = "end" if lifetime.last == NEVER_FREED else str(lifetime.last)
        first = "never" if lifetime.first == NEVER_FREED else str(lifetime.first)
        if lifetime.alias_of is not None:
            last += f" (shares tensor {lifetime.alias_of})"
        table.add_row(
            str(tensor.index),
            Text(tensor.name),
            f"{tensor.nbytes:,}",
            tensor.kind.value,
            first,
            last,
            "-" if producer is None else f"op {producer} {subgraph.operators[producer].opcode}",
            _readers_text(subgraph, readers),
        )
    return table


def _readers_text(subgraph: Any, readers: tuple[int, ...]) -> str:
    if not readers:
        return "-"
    shown = ", ".join(f"op {r} {subgraph.operators[r].opcode}" for r in readers[:3])
    return shown + (f" +{len(readers) - 3}" if len(readers) > 3 else "")
