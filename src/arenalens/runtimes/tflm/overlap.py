"""TFLM allowed overlaps: model + head arena → the (output, dying input) pairs its kernels allow.

`overlap_distance` answers for one operator from its kernel rules' access orders
(`KernelRule.access`): the reference kernel's, and under a kernel library (CMSIS-NN) also its
variant's where it differs, the larger distance winning, so that the plan holds on either build.
Two limits hold for every rule: only data inputs may be overlapped, and input and output types
must be allowed to alias in C++ (the same type, or one a byte type): otherwise the compiler may
reorder loads after stores and the trace would not hold.

An operator's output buffer may share bytes with one of its input buffers when the input dies at
that operator (its buffer's last step is the operator's step), the output is born there (its
buffer's first step), and `overlap_distance` gives a distance. Only
operators of subgraph 0 that run once are paired: a control-flow subgraph may run at several
steps. The result is an `OverlapPair` per pair (`analysis/overlap_pairs.py`): the planner's
`Overlap` with what made it, for reports. Traces cost
time in proportion to the elements they walk, so one model gets at most MAX_MODEL_TRACE_ELEMENTS
of them (a hostile model of huge tensors); operators past it get no overlap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from arenalens.analysis.arena_problem import ArenaProblem, BufferKind, PlannedBuffer
from arenalens.analysis.overlap_pairs import OverlapPair
from arenalens.builds.build import HOST, Build, KernelLibrary, overlap_kernels
from arenalens.errors import UsageError
from arenalens.ir import Model, Tensor
from arenalens.planning.problem import Overlap
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


@dataclass(frozen=True, slots=True)
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
    library: KernelLibrary = KernelLibrary.REFERENCE,
) -> OverlapDistance:
    """Operator + one input and one output tensor index → minimal offset distance, or None."""
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
    distances = [(reference, reference.distance(view, slots, outputs[0]))]
    if distances[0][1] is None:
        return OverlapDistance(
            None, opcode, reference.pattern, f"{reference.pattern}: {reference.source}"
        )
    library_rule = registry.library_rule(opcode, library)
    if library_rule is not None and library_rule.access is not reference_rule.access:
        own = access_of(library_rule, view)
        if isinstance(own, NoOverlap):
            return OverlapDistance(None, opcode, "", own.reason)
        if own is not None:
            distance = own.distance(view, slots, outputs[0])
            if distance is None:
                return OverlapDistance(None, opcode, own.pattern, f"{own.pattern}: {own.source}")
            distances.append((own, distance))
    worst = max(d for _, d in distances if d is not None)
    pattern = " / ".join(order.pattern for order, _ in distances)
    return OverlapDistance(worst, opcode, pattern, "")


def libraries_respected(library: KernelLibrary) -> frozenset[KernelLibrary]:
    """The kernel libraries whose access order the overlaps planned with `library`'s rules
    respect: a library's (CMSIS-NN's, ESP-NN's) take the larger of its and the reference
    kernel's distance (`overlap_distance`), so they hold on both."""
    return frozenset({KernelLibrary.REFERENCE, library})


def overlap_library(build: Build, asked: KernelLibrary | None = None) -> KernelLibrary:
    """The library whose rules overlaps planned for this build follow: the build's own
    (`builds.build.overlap_kernels`), or `asked` when its rules respect the kernels the build
    runs as well; UsageError when they do not (a plan that build would compute wrong)."""
    if asked is None:
        return overlap_kernels(build)
    if build.kernels not in libraries_respected(asked):
        raise UsageError(
            f"the {asked} kernels' access order does not hold on {build.name}, which runs "
            f"{build.kernels} kernels: overlaps planned by it would compute wrong outputs there "
            "(plan overlaps with the build's own kernels: --overlap without another --kernels, "
            "overlap=True in Python)"
        )
    return asked


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
    model: Model, arena: ArenaProblem, *, library: KernelLibrary = KernelLibrary.REFERENCE
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
                if problem_buffers[source.id].end != step:
                    continue
                answer = overlap_distance(view, input_tensor, output_tensor, library)
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
    "libraries_respected",
    "overlap_distance",
    "overlap_library",
]
