"""TFLM allowed overlaps: model + head arena → the (output, dying input) pairs its kernels allow.

`overlap_distance` answers for one operator on a set of kernel code paths (`kernel_paths`) from its
kernel rules' access orders (`KernelRule.access`): on each path the order of the kernel that path
runs (on a CMSIS-NN path its variant's where CMSIS-NN runs its own loops, chosen for that path's
instruction set; else the reference kernel's), and the largest distance over the paths wins, so a
plan holds on every one of them; a path that refuses, or whose access order is not known, refuses
the pair. Two limits hold for every rule: only data inputs may be overlapped, and input and output
types must be allowed to alias in C++ (the same type, or one a byte type): otherwise the compiler
may reorder loads after stores and the trace would not hold.

An operator's output buffer may share bytes with one of its input buffers when the input dies at
that operator (its buffer's last step is the operator's step) and is no model output (the
application reads those after Invoke), the output is born there (its buffer's first step), and
`overlap_distance` gives a distance. Only
operators of subgraph 0 that run once are paired: a control-flow subgraph may run at several
steps. The result is an `OverlapPair` per pair (`analysis/overlap_pairs.py`): the planner's
`Overlap` with what made it, for reports. Traces cost
time in proportion to the elements they walk, so one model gets at most MAX_MODEL_TRACE_ELEMENTS
of them (a hostile model of huge tensors); operators past it get no overlap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arenalens.analysis.arena_problem import ArenaProblem, BufferKind, PlannedBuffer
from arenalens.analysis.overlap_pairs import OverlapPair
from arenalens.builds.build import HOST, REFERENCE
from arenalens.builds.kernel_paths import (
    REFERENCE_PATH,
    KernelPath,
    build_for,
    sorted_paths,
)
from arenalens.ir import Model, Tensor
from arenalens.planning.problem import Overlap
from arenalens.records import record
from arenalens.runtimes.tflm.kernels import registry
from arenalens.runtimes.tflm.kernels.base import (
    AccessByPath,
    AccessOrder,
    KernelContext,
    KernelRule,
    NoOverlap,
)

# An operator no kernel rule covers (not registered by any build).
NOT_ANALYSED = "no access-order rule for this kernel"
_PAIRABLE = (BufferKind.TENSOR,)
# Output elements traced per model, over all operators: about ten times the largest real model.
MAX_MODEL_TRACE_ELEMENTS = 50_000_000
# (output, input) pairs one operator may form; an operator with more (a hostile 20,000-output
# SPLIT) gets none, so the pairs stay linear in the model's size.
MAX_PAIRS_PER_OPERATOR = 32
# Character types alias every type in C++ (GCC treats int8_t, a signed char, the same way).
_BYTE_TYPES = frozenset({"INT8", "UINT8"})


@record(slots=True)
class OverlapDistance:
    """The answer for one (operator, input tensor, output tensor)."""

    distance: int | None  # None: never overlap
    opcode: str
    pattern: str
    reason: str  # why not, when distance is None


def overlap_distance(
    view: KernelContext,
    input_tensor: int,
    output_tensor: int,
    paths: Sequence[KernelPath] = (REFERENCE_PATH,),
) -> OverlapDistance:
    """Operator + one input and one output tensor index + the code paths it must hold on →
    minimal offset distance, or None (with the path that refuses and why)."""
    opcode = view.operator.opcode
    slots = frozenset(
        position for position, index in enumerate(view.operator.inputs) if index == input_tensor
    )
    outputs = [p for p, index in enumerate(view.operator.outputs) if index == output_tensor]
    reference_rule = registry.REFERENCE_KERNELS.get(opcode)
    if reference_rule is None:
        return OverlapDistance(None, opcode, "", NOT_ANALYSED)
    reference = access_of(reference_rule, view)
    if not isinstance(reference, AccessOrder):
        reason = reference.reason if isinstance(reference, NoOverlap) else NOT_ANALYSED
        return OverlapDistance(None, opcode, "", reason)
    if not slots or len(outputs) != 1:
        return OverlapDistance(None, opcode, reference.pattern, "not an input and output of it")
    if reference.data_inputs is not None and not slots <= set(reference.data_inputs):
        return OverlapDistance(
            None, opcode, reference.pattern, "not a data input (shape, axis or parameters)"
        )
    source = view.subgraph.tensors[input_tensor]
    target = view.subgraph.tensors[output_tensor]
    if not _may_alias(source, target):
        return OverlapDistance(
            None,
            opcode,
            reference.pattern,
            f"{source.dtype.name} input and {target.dtype.name} output may not alias in C++: "
            "the compiler may reorder their loads and stores",
        )
    # One answer per (order, build asked with): a CMSIS-NN order answers per code path.
    distances: dict[tuple[int, str], tuple[AccessOrder, int]] = {}
    for path in sorted_paths(paths):
        if not path.has_rules:
            return OverlapDistance(
                None, opcode, reference.pattern, f"the access order of {path.title} is not known"
            )
        orders = _path_orders(view, reference_rule, reference, path)
        if isinstance(orders, NoOverlap):
            return OverlapDistance(None, opcode, "", orders.reason)
        for order, path_view in orders:
            key = (id(order), path_view.build.name)
            if key in distances:
                continue
            distance = order.distance(path_view, slots, outputs[0])
            if distance is None:
                return OverlapDistance(
                    None, opcode, order.pattern, f"{order.pattern}: {order.source}"
                )
            distances[key] = (order, distance)
    if not distances:
        return OverlapDistance(None, opcode, reference.pattern, "no kernel code path given")
    worst = max(d for _, d in distances.values())
    pattern = " / ".join(dict.fromkeys(order.pattern for order, _ in distances.values()))
    return OverlapDistance(worst, opcode, pattern, "")


def _path_orders(
    view: KernelContext, reference_rule: KernelRule, reference: AccessOrder, path: KernelPath
) -> list[tuple[AccessOrder, KernelContext]] | NoOverlap:
    """The access order one code path runs for this operator, with the view it is asked with
    (the path's build: a CMSIS-NN order picks its loops by the instruction set): the library's
    own where it runs its own loops for this operator, else the reference kernel's."""
    found = [(reference, view)]
    if path.kernels == REFERENCE:
        return found
    library_rule = registry.library_rule(view.operator.opcode, path.kernels)
    if library_rule is None or library_rule.access is reference_rule.access:
        return found
    path_view = KernelContext(view.model, view.subgraph, view.operator, build_for(path))
    own = access_of(library_rule, path_view)
    if isinstance(own, NoOverlap):
        return own
    if own is None:
        return found  # the library calls the reference kernel for this type
    return [(own, path_view)]


def access_of(rule: KernelRule, view: KernelContext) -> AccessOrder | NoOverlap | None:
    """The access order of the code path this operator takes in the rule's kernel (None: the
    library runs the reference kernel's code for it)."""
    access = rule.access
    return access.choose(view) if isinstance(access, AccessByPath) else access


def _may_alias(source: Tensor, target: Tensor) -> bool:
    """C++ strict aliasing: same element type, or one side a byte type (char aliases all)."""
    names = (source.dtype.name, target.dtype.name)
    return names[0] == names[1] or bool(_BYTE_TYPES & set(names))


def arena_overlaps(
    model: Model, arena: ArenaProblem, *, paths: Sequence[KernelPath] = (REFERENCE_PATH,)
) -> tuple[OverlapPair, ...]:
    """Model + its TFLM head arena → every allowed overlap, by operator then tensor."""
    by_tensor = _buffers_by_tensor(arena)
    problem_buffers = arena.problem.by_id
    step_of: dict[int, int] = {}
    repeated: set[int] = set()
    for entry in arena.steps:
        if entry.subgraph != 0 or entry.operator is None:
            continue
        if entry.operator in step_of:
            repeated.add(entry.operator)
        step_of[entry.operator] = entry.step
    subgraph = model.subgraphs[0]
    # A model output is read by the application after Invoke: TFLM's lifetime for it ends at
    # the last operator's scope (micro_allocation_info.cc marks outputs used to the end of the
    # subgraph), where the last operator may consume it; an output born there must not start
    # below it.
    read_after_invoke = frozenset(subgraph.outputs)
    found: dict[tuple[int, int], OverlapPair] = {}
    traced = 0
    for op in subgraph.operators:
        step = step_of.get(op.index)
        if step is None or op.index in repeated:
            continue
        outputs = [t for t in op.outputs if t >= 0]
        inputs = [t for t in op.inputs if t >= 0]
        if len(set(outputs)) * len(set(inputs)) > MAX_PAIRS_PER_OPERATOR:
            continue
        traced += sum(subgraph.tensors[t].element_count for t in outputs)
        if traced > MAX_MODEL_TRACE_ELEMENTS:
            break
        view = KernelContext(model, subgraph, op, HOST)
        for output_tensor in dict.fromkeys(outputs):
            target = by_tensor.get(output_tensor)
            if target is None or problem_buffers[target.id].start != step:
                continue
            for input_tensor in dict.fromkeys(inputs):
                source = by_tensor.get(input_tensor)
                if source is None or source.id == target.id:
                    continue
                if read_after_invoke.intersection((source.tensor, *source.aliases)):
                    continue
                if problem_buffers[source.id].end != step:
                    continue
                answer = overlap_distance(view, input_tensor, output_tensor, paths)
                if answer.distance is None:
                    continue
                key = (target.id, source.id)
                pair = OverlapPair(
                    Overlap(target.id, source.id, answer.distance),
                    0,
                    op.index,
                    op.opcode,
                    input_tensor,
                    output_tensor,
                    answer.pattern,
                )
                known = found.get(key)
                if known is None or known.overlap.min_offset_distance < answer.distance:
                    found[key] = pair
    return tuple(found[key] for key in sorted(found))


def _buffers_by_tensor(arena: ArenaProblem) -> Mapping[int, PlannedBuffer]:
    """Subgraph-0 tensor index → the tensor buffer holding it (directly or as an alias)."""
    found: dict[int, PlannedBuffer] = {}
    for planned in arena.buffers.values():
        if planned.subgraph != 0 or planned.kind not in _PAIRABLE or planned.tensor is None:
            continue
        for tensor in (planned.tensor, *planned.aliases):
            found[tensor] = planned
    return found


__all__ = [
    "OverlapDistance",
    "arena_overlaps",
    "overlap_distance",
]
