"""TFLite Micro's rules: model → the head arena it plans, and the `kTensorArenaSize` it needs.

* **Head** (docs/runtime-semantics.md §2.2–2.5): every planned tensor of every subgraph in index
  order (no constant data, not a variable, bytes ≠ 0; a variable with an offline offset ≠ -1 is
  planned too), then the kernel scratch requests (`tflm_scratch`), each size rounded up to 16, the
  offline plan's offsets as fixed offsets, lifetimes by MarkAllocationLifetimes. The planner index
  is the buffer id; `tflm_greedy` reproduces the runtime.
* **Budget** (§2.10): replaying every setup allocation (`tflm_setup`) gives the tail, the head and
  the smallest working arena: the most of the planning phase, the Prepare phase and the final
  head + tail, with the arena-end alignment effect.
* **Verify**: the real interpreter in a child process (`tflm_probe`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from arenalens.analysis.lifetimes import Timeline, tflm_planned, tflm_timeline
from arenalens.analysis.problem import ArenaProblem, BufferKind, PlannedBuffer
from arenalens.errors import ModelError, UsageError
from arenalens.ir import Model, Operator, Subgraph
from arenalens.planning.problem import Buffer, Plan, Problem, align_up
from arenalens.runtimes import MemoryBudget, RuntimeRules, VerifyResult
from arenalens.runtimes.tflm_kernels import KERNELS, KernelMemoryUse
from arenalens.runtimes.tflm_resources import resource_variables
from arenalens.runtimes.tflm_scratch import OperatorView, scratch_requests
from arenalens.runtimes.tflm_setup import (
    HOST_64,
    MCU_32,
    HostLayout,
    PlanFacts,
    SetupOutcome,
    minimal_arena_size,
    operator_kernels,
    replay,
    setup_sequence,
)
from arenalens.runtimes.tflm_types import TFLM_ELEMENT_BYTES, tflm_tensor_bytes

# MicroArenaBufferAlignment() (micro_arena_constants.h): TFLM rounds every planned size to it.
TFLM_SIZE_ALIGNMENT = 16
ONLINE = -1  # kOnlinePlannedBuffer
HEAD = "head"
MCU_VARIANT = "32-bit MCU"


def tflm_timeline_with_scratch(model: Model) -> Timeline:
    """Model → TFLM lifetimes of every tensor and kernel scratch request."""
    return tflm_timeline(model, scratch_requests(model))


@dataclass(frozen=True, slots=True)
class _Entry:
    """One AllocationInfo entry TFLM submits to its planner."""

    kind: BufferKind
    subgraph: int
    tensor: int | None
    operator: int | None
    name: str
    nbytes: int
    first: int
    last: int
    offline: int


def offline_offsets(model: Model) -> tuple[int, ...] | None:
    """The offline plan's offsets (all subgraphs' tensors concatenated), checked like TFLM."""
    plan = model.offline_plan
    if plan is None:
        return None
    if len(plan.offsets) != model.tensor_count:
        raise ModelError(
            model.source,
            f"Nbr of offline buffer offsets ({len(plan.offsets)}) in metadata not equal nbr "
            f"tensors ({model.tensor_count}): TFLM refuses this offline plan",
        )
    return plan.offsets


# Kernels whose Prepare points their output at kernel-owned memory: TFLM plans only tensors
# whose data pointer is still null after Prepare (micro_allocation_info.cc —
# InitializeAllocationInfo, `needs_allocating`). VAR_HANDLE points its output at the resource id
# in its OpData (kernels/var_handle.cc — Prepare).
PREPARE_BOUND_OUTPUTS = frozenset({"VAR_HANDLE"})


def prepare_bound_tensors(model: Model) -> frozenset[tuple[int, int]]:
    """Model → (subgraph, tensor) of outputs a kernel binds in Prepare (never planned)."""
    return frozenset(
        (subgraph.index, tensor)
        for subgraph in model.subgraphs
        for op in subgraph.operators
        if op.opcode in PREPARE_BOUND_OUTPUTS
        for tensor in op.outputs
        if tensor >= 0
    )


def _planned_entries(model: Model, timeline: Timeline) -> list[_Entry]:
    """AllocationInfo in TFLM's order: all subgraphs' tensors by index, then scratch requests."""
    offsets = offline_offsets(model)
    bound_in_prepare = prepare_bound_tensors(model)
    entries: list[_Entry] = []
    position = 0
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            offline = offsets[position] if offsets is not None else ONLINE
            position += 1
            nbytes = tflm_tensor_bytes(tensor)
            planned = tflm_planned(tensor) and nbytes > 0
            if (subgraph.index, tensor.index) in bound_in_prepare:
                planned = False
            if tensor.is_variable and offline != ONLINE:
                planned = True  # an offline-planned variable moves from the tail to the head
            if not planned:
                continue
            if offline < ONLINE:
                raise ModelError(
                    model.source,
                    f"offline plan gives tensor {tensor.index} of subgraph {subgraph.index} "
                    f"the offset {offline}, before the arena start",
                )
            life = timeline.of(subgraph.index, tensor.index)
            entries.append(
                _Entry(
                    BufferKind.VARIABLE if tensor.is_variable else BufferKind.TENSOR,
                    subgraph.index,
                    tensor.index,
                    None,
                    tensor.name,
                    nbytes,
                    life.first,
                    life.last,
                    offline,
                )
            )
    for scratch in timeline.scratch:
        request = scratch.request
        entries.append(
            _Entry(
                BufferKind.SCRATCH,
                request.subgraph,
                None,
                request.operator,
                request.label or "scratch",
                request.nbytes,
                scratch.first,
                scratch.last,
                ONLINE,
            )
        )
    return entries


def arenas(model: Model, alignment: int | None = None) -> tuple[ArenaProblem, ...]:
    """Model → the one arena TFLM plans: the head.

    `alignment` replaces MicroArenaBufferAlignment (16), the multiple every size is rounded up
    to; TFLM never aligns offsets, so the Problem's own alignment is 1.
    """
    rounding = TFLM_SIZE_ALIGNMENT if alignment is None else alignment
    if rounding < 1:
        raise UsageError(f"alignment must be >= 1, got {alignment}")
    timeline = tflm_timeline_with_scratch(model)
    entries = _planned_entries(model, timeline)
    buffers = tuple(
        Buffer(
            id=index,
            start=entry.first,
            end=entry.last,
            size=align_up(entry.nbytes, rounding),
            fixed_offset=None if entry.offline == ONLINE else entry.offline,
        )
        for index, entry in enumerate(entries)
    )
    meanings = {
        index: PlannedBuffer(
            id=index,
            kind=entry.kind,
            subgraph=entry.subgraph,
            tensor=entry.tensor,
            operator=entry.operator,
            name=entry.name,
            nbytes=entry.nbytes,
        )
        for index, entry in enumerate(entries)
    }
    notes = _arena_notes(model, entries)
    return (
        ArenaProblem(
            name=HEAD,
            problem=Problem(buffers, alignment=1),
            buffers=MappingProxyType(meanings),
            steps=timeline.steps,
            runtime_planner="tflm_greedy",
            notes=notes,
            size_rounding=rounding,
        ),
    )


def _arena_notes(model: Model, entries: Sequence[_Entry]) -> tuple[str, ...]:
    notes: list[str] = []
    untouched = sum(1 for e in entries if e.first == -1 and e.last == -1)
    if untouched:
        notes.append(
            f"{untouched} planned buffers are never touched from subgraph 0 (lifetime -1..-1, "
            "e.g. unreachable subgraphs); TFLM still plans them"
        )
    if model.offline_plan is not None:
        notes.append("offline plan (OfflineMemoryAllocation): fixed offsets, never checked")
    notes.extend(setup_failures(model))
    return tuple(notes)


# Kernels that refuse float activations with int8 weights ("hybrid" models), and the input slot
# that holds the weights (the activation input is 0, or 2 for TRANSPOSE_CONV).
_HYBRID_WEIGHTS: Mapping[str, tuple[int, int]] = MappingProxyType(
    {
        "FULLY_CONNECTED": (0, 1),
        "CONV_2D": (0, 1),
        "DEPTHWISE_CONV_2D": (0, 1),
        "TRANSPOSE_CONV": (2, 1),
        "SVDF": (0, 1),
        "UNIDIRECTIONAL_SEQUENCE_LSTM": (0, 2),
    }
)


def _kernel_refusals(subgraph: Subgraph, operator: Operator, label: str) -> list[str]:
    """Prepare-time refusals of the reference kernels that depend only on tensor types."""
    if operator.opcode == "CUSTOM:ethos-u":
        return [f"{label}: the tflite_micro pip package has no ethos-u kernel (device builds do)"]
    slots = _HYBRID_WEIGHTS.get(operator.opcode)
    if slots is None or max(slots) >= len(operator.inputs):
        return []
    activation, weights = (operator.inputs[slot] for slot in slots)
    if activation < 0 or weights < 0:
        return []
    types = (subgraph.tensors[activation].dtype.name, subgraph.tensors[weights].dtype.name)
    if types[0] == "FLOAT32" and types[1] in ("INT8", "INT4", "UINT8"):
        return [f"{label}: float32 input with {types[1]} weights: hybrid models are not supported"]
    return []


def setup_failures(model: Model) -> list[str]:
    """Reasons TFLM's setup would fail on this model whatever the arena size (§2.1-2.2)."""
    found: list[str] = []
    for subgraph in model.subgraphs:
        where = f"subgraph {subgraph.index}"
        unsized = [t for t in subgraph.tensors if t.dtype.name not in TFLM_ELEMENT_BYTES]
        if unsized:
            tensor = unsized[0]
            found.append(
                f"TFLM cannot size tensor {tensor.index} '{tensor.name}' of {where} "
                f"({tensor.dtype.name}): setup fails"
            )
        for operator in subgraph.operators:
            label = f"operator {operator.index} ({operator.opcode}) of {where}"
            found.extend(_kernel_refusals(subgraph, operator, label))
            for index in operator.outputs:
                shape = subgraph.tensors[index].shape if index >= 0 else ()
                if shape != (0,) and any(dim <= 0 for dim in shape):
                    found.append(
                        f"{label} has output {index} with shape {list(shape)}: "
                        "'Dynamic tensors are not supported'"
                    )
            for index in operator.intermediates:
                if index >= 0 and tflm_tensor_bytes(subgraph.tensors[index]) != 0:
                    found.append(
                        f"{label} has a non-empty intermediate tensor {index}: "
                        "'Does not support intermediate tensor with non-zero size'"
                    )
    found.extend(resource_variables(model).failures)
    return found


# ---------------------------------------------------------------------------------------------
# Budget


@dataclass(frozen=True)
class SetupPrediction:
    """What the setup replay predicts for one plan on one build."""

    layout: HostLayout
    minimal_arena: int  # the smallest arena_size that works
    at_minimum: SetupOutcome  # head, tail and categories printed at that size
    aligned: SetupOutcome  # the same at a roomy arena size that is a multiple of 16
    unknown_kernels: tuple[str, ...]  # opcodes whose tail bytes are estimates

    @property
    def head(self) -> int:
        """The head: the plan's maximum."""
        return self.aligned.head

    @property
    def tail(self) -> int:
        """The tail with a 16-aligned arena end (what a roomy, aligned arena prints)."""
        return self.aligned.tail


def plan_facts(model: Model, arena: ArenaProblem, plan: Plan) -> PlanFacts:
    """Model + head arena + plan → what the setup replay needs to know about the plan."""
    offsets = offline_offsets(model)
    variables: list[tuple[str, int]] = []
    position = 0
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            offline = offsets[position] if offsets is not None else ONLINE
            position += 1
            if tensor.is_variable and offline == ONLINE:
                variables.append((tensor.name, tflm_tensor_bytes(tensor)))
    return PlanFacts(
        scratch=scratch_requests(model),
        planned_buffer_count=len(arena.problem.buffers),
        head_bytes=plan.arena_size,
        tail_variables=tuple(variables),
        preserve_all_tensors=plan.planner == "tflm_linear",
    )


def predict_setup(
    model: Model,
    arena: ArenaProblem,
    plan: Plan,
    layout: HostLayout = HOST_64,
    kernels: Sequence[tuple[OperatorView, KernelMemoryUse]] | None = None,
) -> SetupPrediction:
    """Model + head arena + plan → minimal arena, head, tail and categories on one build.

    A plan by `tflm_linear` is replayed as a preserve_all_tensors interpreter; any other plan as
    the default interpreter with that plan's maximum as head (deployable as an offline plan).
    """
    sequence = setup_sequence(model, plan_facts(model, arena, plan), layout, kernels)
    minimum = minimal_arena_size(sequence, layout)
    roomy = align_up(minimum, 16) + 16
    while not (aligned := replay(sequence, roomy, layout)).fits:
        roomy += 16
    unknown = sorted(
        {op.opcode for sg in model.subgraphs for op in sg.operators if op.opcode not in KERNELS}
    )
    return SetupPrediction(
        layout, minimum, replay(sequence, minimum, layout), aligned, tuple(unknown)
    )


def setup_outcome(
    model: Model, arena: ArenaProblem, plan: Plan, arena_size: int, layout: HostLayout = HOST_64
) -> SetupOutcome:
    """What setup does with one arena_size: fits or not, where it fails, head, tail, categories."""
    sequence = setup_sequence(model, plan_facts(model, arena, plan), layout)
    return replay(sequence, arena_size, layout)


def budget(
    model: Model, arena_problems: Sequence[ArenaProblem], plans: Sequence[Plan]
) -> MemoryBudget:
    """Model + head arena + plan → the minimal kTensorArenaSize, its parts, the MCU variant."""
    arena, plan = arena_problems[0], plans[0]
    kernels = operator_kernels(model)
    host = predict_setup(model, arena, plan, HOST_64, kernels)
    mcu_minimum = minimal_arena_size(
        setup_sequence(model, plan_facts(model, arena, plan), MCU_32, kernels), MCU_32
    )
    assumptions = list(HOST_64.assumptions)
    if plan.planner == "tflm_linear":
        assumptions.append("preserve_all_tensors: LinearMemoryPlanner, no allocation recording")
    elif plan.planner != "tflm_greedy":
        assumptions.append(
            f"the '{plan.planner}' plan deployed as an offline plan (OfflineMemoryAllocation); "
            "the greedy planner object stays"
        )
    capacity = resource_variables(model).capacity
    if capacity:
        # A C++ application sizes this table itself; the Python interpreter's count is assumed.
        assumptions.append(
            f"MicroResourceVariables::Create(allocator, {capacity}): one entry per distinct "
            "VAR_HANDLE shared_name, as the tflite_micro Python interpreter counts them"
        )
    if host.unknown_kernels:
        assumptions.append(
            "estimated tail bytes (kernels without a row): " + ", ".join(host.unknown_kernels)
        )
    assumptions.append(f"{MCU_VARIANT}: " + "; ".join(MCU_32.assumptions))
    final = host.at_minimum.head + host.at_minimum.tail
    parts = {
        "head": host.head,
        "tail": host.tail,
        "tail_at_minimum": host.at_minimum.tail,
        "setup_overhead": host.minimal_arena - final,
    }
    return MemoryBudget(
        required_bytes=host.minimal_arena,
        parts=MappingProxyType(parts),
        assumptions=tuple(assumptions),
        variants=MappingProxyType({MCU_VARIANT: mcu_minimum}),
    )


def _verify(path: str, analysis: Any, **options: Any) -> VerifyResult:
    from arenalens.runtimes.tflm_verify import verify  # noqa: PLC0415 - needs the runtime extra

    return verify(path, analysis, **options)


RUNTIME = RuntimeRules(
    name="tflm",
    title="TensorFlow Lite Micro",
    timeline=tflm_timeline_with_scratch,
    arenas=arenas,
    budget=budget,
    verify=_verify,
    default_alignment=1,
)
