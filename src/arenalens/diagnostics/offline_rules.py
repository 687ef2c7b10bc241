"""Offline-plan rules: `OfflineMemoryAllocation` metadata (Vela, TFLM's test builder) checked.

TFLM places offline tensors at their exact offsets with no overlap or alignment check, and fails
setup when the offset count differs from the tensor count (docs/runtime-rules.md §T9). LiteRT
ignores the metadata.

Two tensors may share bytes safely when one is an operator's output placed at least its kernel's
access-order distance below an input that dies at that operator (`optimize --overlap` writes such
plans; `runtimes.tflm.overlap`): those are reported as info, with the kernel libraries they are
safe on, not as errors.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from arenalens.analysis.overlap_pairs import OverlapPair
from arenalens.builds.build import HOST, KernelLibrary
from arenalens.diagnostics.context import DiagnoseContext, Interval
from arenalens.diagnostics.findings import (
    Finding,
    Location,
    Severity,
    model_argument,
    optimize_output,
)
from arenalens.diagnostics.graph_rules import VELA_OPCODE
from arenalens.errors import ArenalensError
from arenalens.ir import Model, Tensor
from arenalens.names import short_name
from arenalens.runtimes import get_runtime
from arenalens.runtimes.tflm.arena import prepare_bound_tensors
from arenalens.runtimes.tflm.lifetimes import tflm_planned
from arenalens.runtimes.tflm.overlap import arena_overlaps
from arenalens.units import format_bytes_exact


@dataclass(frozen=True, slots=True)
class OfflineTensor:
    """One tensor the offline plan places: where, how many bytes, and when it is in use."""

    subgraph: int
    tensor: int
    offset: int
    nbytes: int
    interval: Interval


def offline_plan_count(context: DiagnoseContext) -> Iterator[Finding]:
    """An offline plan whose offset count differs from the model's tensor count."""
    plan = context.model.offline_plan
    if plan is None or context.runtime != "tflm":
        return
    expected = context.model.tensor_count
    if len(plan.offsets) == expected:
        return
    yield Finding(
        rule="offline-plan-count",
        severity=Severity.ERROR,
        location=Location(),
        message=f"the OfflineMemoryAllocation metadata has {len(plan.offsets)} offsets but the "
        f"model has {expected} tensors; TFLM fails setup with 'Nbr of offline buffer offsets "
        f"({len(plan.offsets)}) in metadata not equal nbr tensors ({expected})'",
        fix="re-run the tool that wrote the plan (Vela) on this exact model; a graph edit after "
        "compilation changed the tensor count. Or delete the metadata to plan online",
        details={"offsets": len(plan.offsets), "tensors": expected},
    )


def offline_tensors(context: DiagnoseContext) -> list[OfflineTensor]:
    """Planned tensors with an offline offset != -1, in offset order (empty if no usable plan)."""
    model = context.model
    plan = model.offline_plan
    if plan is None or len(plan.offsets) != model.tensor_count:
        return []
    placed: list[OfflineTensor] = []
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            offset = plan.offsets[model.tensor_offset_index(subgraph.index, tensor.index)]
            if offset == -1 or not _offline_planned(tensor):
                continue
            lifetime = context.execution_timeline.of(subgraph.index, tensor.index)
            placed.append(
                OfflineTensor(
                    subgraph.index,
                    tensor.index,
                    offset,
                    tensor.nbytes,
                    Interval(lifetime.first, lifetime.last),
                )
            )
    return sorted(placed, key=lambda t: (t.offset, t.subgraph, t.tensor))


def _offline_planned(tensor: Tensor) -> bool:
    """TFLM honours an offline offset for planned tensors and for variables
    (docs/runtime-rules.md §T2)."""
    return tflm_planned(tensor) or (
        tensor.is_variable and not tensor.has_data and tensor.nbytes > 0
    )


@dataclass(frozen=True)
class SharedBytes:
    """Pairs of offline tensors live at a common step whose offsets give them common bytes,
    sorted by why: corrupting, Vela's on purpose (by its ethos-u operator), or allowed by the
    kernels' access order (with whether CMSIS-NN's allows it too)."""

    corrupting: tuple[tuple[OfflineTensor, OfflineTensor], ...]
    by_vela_operator: dict[int, list[tuple[OfflineTensor, OfflineTensor]]]
    safe: tuple[tuple[OverlapPair, bool], ...]


def shared_bytes(context: DiagnoseContext) -> SharedBytes:
    """The offline plan's tensors live together that share bytes, each pair judged."""
    placed = offline_tensors(context)
    corrupting: list[tuple[OfflineTensor, OfflineTensor]] = []
    by_vela_operator: dict[int, list[tuple[OfflineTensor, OfflineTensor]]] = {}
    safe: list[tuple[OverlapPair, bool]] = []
    allowed: dict[frozenset[int], dict[KernelLibrary, OverlapPair]] | None = None
    for index, first in enumerate(placed):
        end = first.offset + first.nbytes
        for second in placed[index + 1 :]:
            if second.offset >= end:
                break
            if not first.interval.overlaps(second.interval):
                continue
            if allowed is None:
                allowed = _allowed_overlaps(context)
            verdict = _judge(allowed, first, second)
            if verdict is not None:
                safe.append(verdict)
                continue
            operator = _shared_vela_operator(context.model, first, second)
            if operator is None:
                corrupting.append((first, second))
            else:
                by_vela_operator.setdefault(operator, []).append((first, second))
    return SharedBytes(tuple(corrupting), by_vela_operator, tuple(safe))


def offline_plan_overlap(context: DiagnoseContext) -> Iterator[Finding]:
    """Offline offsets that give two tensors live at the same step common bytes."""
    if context.runtime != "tflm":
        return
    found = shared_bytes(context)
    for first, second in found.corrupting:
        yield _overlap_finding(context, first, second)
    for operator, pairs in sorted(found.by_vela_operator.items()):
        yield _vela_overlap_finding(context, operator, pairs)
    if found.safe:
        yield _safe_overlap_finding(context.model, list(found.safe))


def _allowed_overlaps(
    context: DiagnoseContext,
) -> dict[frozenset[int], dict[KernelLibrary, OverlapPair]]:
    """Subgraph-0 tensor pairs → the overlap each kernel library allows them (if any)."""
    try:
        arena = get_runtime("tflm").arenas(context.model, HOST)[0]
    except ArenalensError:
        return {}
    found: dict[frozenset[int], dict[KernelLibrary, OverlapPair]] = {}
    for library in KernelLibrary:
        for pair in arena_overlaps(context.model, arena, library=library):
            key = frozenset((pair.input_tensor, pair.output_tensor))
            found.setdefault(key, {})[library] = pair
    return found


def _judge(
    allowed: dict[frozenset[int], dict[KernelLibrary, OverlapPair]],
    first: OfflineTensor,
    second: OfflineTensor,
) -> tuple[OverlapPair, bool] | None:
    """(the pair, also safe under CMSIS-NN) when the reference kernels make this overlap safe."""
    if first.subgraph or second.subgraph:
        return None
    by_library = allowed.get(frozenset((first.tensor, second.tensor)), {})
    reference = by_library.get(KernelLibrary.REFERENCE)
    if reference is None:
        return None
    offsets = {first.tensor: first.offset, second.tensor: second.offset}

    def fits(pair: OverlapPair | None) -> bool:
        return pair is not None and pair.overlap.allows(
            offsets[pair.output_tensor], offsets[pair.input_tensor]
        )

    if not fits(reference):
        return None
    return reference, fits(by_library.get(KernelLibrary.CMSIS_NN))


def _safe_overlap_finding(model: Model, safe: list[tuple[OverlapPair, bool]]) -> Finding:
    pairs = sorted(safe, key=lambda item: (item[0].operator, item[0].input_tensor))
    portable = all(cmsis for _, cmsis in pairs)
    listing = ", ".join(f"{p.opcode} (op {p.operator})" for p, _ in pairs[:8]) + (
        f", ... ({len(pairs) - 8} more)" if len(pairs) > 8 else ""
    )
    not_cmsis = [p for p, cmsis in pairs if not cmsis]
    message = (
        f"the offline plan lets {len(pairs)} operator output(s) start below an input they "
        f"consume ({listing}), each at least the distance its kernel's access order allows: "
        "the kernel never reads back an input byte it has overwritten"
    )
    if portable:
        message += "; safe on the reference and the CMSIS-NN kernels"
        fix = "nothing to do: both kernel libraries' access orders allow these overlaps"
    else:
        message += (
            "; safe on TFLM's reference kernels only: a CMSIS-NN build walks "
            + ", ".join(sorted({f"{p.opcode} (op {p.operator})" for p in not_cmsis})[:6])
            + " differently and would compute garbage"
        )
        fix = (
            "for a CMSIS-NN (Cortex-M) build, plan it again with overlaps CMSIS-NN allows: "
            f"`arenalens optimize {model_argument(model)} --kernels cmsis-nn -o "
            f"{optimize_output(model)} --overlap`"
        )
    return Finding(
        rule="offline-plan-overlap",
        severity=Severity.INFO if portable else Severity.WARNING,
        location=Location(0, None, tuple(sorted({p.output_tensor for p, _ in pairs}))),
        message=message,
        fix=fix,
        details={"safe_overlaps": len(pairs), "cmsis_nn_safe": portable, "vela": False},
    )


def shared_bytes_text(model: Model, first: OfflineTensor, second: OfflineTensor) -> str:
    """'tensor 0 'image' [0, 27648) and tensor 3 'conv_0/output' [6912, 25344) in common bytes
    [6912, 25344) while both are live (steps 1 to 1)'."""
    low = max(first.offset, second.offset)
    high = min(first.offset + first.nbytes, second.offset + second.nbytes)
    steps_from = max(first.interval.first, second.interval.first)
    steps_to = min(first.interval.last, second.interval.last)
    return (
        f"{_label(model, first)} [{first.offset}, {first.offset + first.nbytes}) and "
        f"{_label(model, second)} [{second.offset}, {second.offset + second.nbytes}) in common "
        f"bytes [{low}, {high}) while both are live (steps {steps_from} to {steps_to})"
    )


def _overlap_finding(
    context: DiagnoseContext, first: OfflineTensor, second: OfflineTensor
) -> Finding:
    low = max(first.offset, second.offset)
    high = min(first.offset + first.nbytes, second.offset + second.nbytes)
    return Finding(
        rule="offline-plan-overlap",
        severity=Severity.ERROR,
        location=Location(first.subgraph, None, (first.tensor, second.tensor)),
        message=f"the offline plan puts {shared_bytes_text(context.model, first, second)}; TFLM "
        "applies offline offsets unchecked, so one tensor overwrites the other (garbage "
        "outputs)",
        fix="regenerate the offline plan for this model (`arenalens optimize "
        f"{model_argument(context.model)} -o {optimize_output(context.model)}` writes a checked "
        "one), or set "
        "these offsets to -1 so TFLM plans them online",
        details={"bytes": high - low, "vela": False},
    )


def _vela_overlap_finding(
    context: DiagnoseContext, operator: int, pairs: list[tuple[OfflineTensor, OfflineTensor]]
) -> Finding:
    involved = sorted({t for pair in pairs for t in pair}, key=lambda t: t.tensor)
    listing = ", ".join(
        f"{_label(context.model, t)} [{t.offset}, {t.offset + t.nbytes})" for t in involved
    )
    return Finding(
        rule="offline-plan-overlap",
        severity=Severity.INFO,
        location=Location(involved[0].subgraph, operator, tuple(t.tensor for t in involved)),
        message=f"the offline plan overlaps {listing} while they are live together; all belong "
        f"only to Vela's ethos-u operator {operator} of subgraph {involved[0].subgraph}, whose "
        "command stream orders the NPU's "
        "reads and writes, so Vela shares these bytes on purpose",
        fix="nothing to do for a Vela-compiled model; do not edit the graph around the ethos-u "
        "operator without re-running Vela",
        details={"pairs": len(pairs), "vela": True},
    )


def _label(model: Model, placed: OfflineTensor) -> str:
    tensor = model.subgraphs[placed.subgraph].tensors[placed.tensor]
    return f"tensor {placed.tensor} '{short_name(tensor.name)}'"


def _shared_vela_operator(model: Model, first: OfflineTensor, second: OfflineTensor) -> int | None:
    """The ethos-u operator both tensors belong to, if each is touched by it alone."""
    if first.subgraph != second.subgraph:
        return None
    subgraph = model.subgraphs[first.subgraph]
    users: set[int] = set()
    for tensor in (first.tensor, second.tensor):
        touching = set(subgraph.consumers.get(tensor, ()))
        producer = subgraph.producers.get(tensor)
        if producer is not None:
            touching.add(producer)
        users |= touching
    if len(users) != 1:
        return None
    (operator,) = users
    return operator if subgraph.operators[operator].opcode == VELA_OPCODE else None


def offline_plan_incomplete(context: DiagnoseContext) -> Iterator[Finding]:
    """Planned tensors the offline plan leaves online (-1) next to offline ones."""
    model = context.model
    plan = model.offline_plan
    if plan is None or context.runtime != "tflm" or len(plan.offsets) != model.tensor_count:
        return
    # Outputs a kernel binds in Prepare (VAR_HANDLE's resource id) are never planned, so an
    # offline plan rightly leaves them at -1 (arenalens optimize does).
    bound_in_prepare = prepare_bound_tensors(model)
    for subgraph in model.subgraphs:
        online = tuple(
            t.index
            for t in subgraph.tensors
            if tflm_planned(t)
            and (subgraph.index, t.index) not in bound_in_prepare
            and plan.offsets[model.tensor_offset_index(subgraph.index, t.index)] == -1
        )
        if not online:
            continue
        nbytes = sum(subgraph.tensors[t].nbytes for t in online)
        yield Finding(
            rule="offline-plan-incomplete",
            severity=Severity.WARNING,
            location=Location(subgraph.index, None, online),
            message=f"the offline plan leaves {len(online)} planned tensor(s) "
            f"({format_bytes_exact(nbytes)}) at -1: TFLM's greedy planner places them around the "
            "fixed ones, so the layout is no longer the one the plan's author checked (and "
            "misaligned fixed offsets misalign them too)",
            fix="give every planned tensor an offset (re-run Vela, or `arenalens optimize "
            f"{model_argument(model)} -o {optimize_output(model)}` on the final model), or drop "
            "the "
            "metadata to plan everything online",
            details={"nbytes": nbytes, "count": len(online)},
        )


def offline_plan_ignored(context: DiagnoseContext) -> Iterator[Finding]:
    """An offline plan under LiteRT, which ignores it."""
    if context.model.offline_plan is None or context.runtime != "litert":
        return
    yield Finding(
        rule="offline-plan-ignored",
        severity=Severity.INFO,
        location=Location(),
        message="the model carries an OfflineMemoryAllocation plan, which only TFLM reads; "
        "LiteRT plans every tensor itself",
        fix="nothing to do; run with --runtime tflm to check the plan itself",
    )
