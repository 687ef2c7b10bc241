"""TFLM setup replay: model → every allocation `AllocateTensors` makes, in order, and what fits.

TFLM runs inside one user array: the head grows up from its start, the tail grows down from its
end, and short-lived "temp" memory sits just above the head (docs/runtime-rules.md §T1,
§T10). Whether setup succeeds for a given `arena_size`, and the head and tail it prints, follow
from the exact sequence of allocations and their alignments, because every tail allocation rounds
the tail pointer *down* from the array's (possibly unaligned) end. This module writes that sequence
out as data (`setup_sequence`) and replays it against an arena size (`replay`), reproducing:

* *SingleArenaBufferAllocator* (arena_allocator/single_arena_buffer_allocator.cc): persistent
  allocations round down and fail below the head; temp allocations round up and fail above the
  tail; the resizable head buffer needs `tail - start >= size`.
* *Kernel buffers filled while their temps are live* (`temp_overlap`): AllocatePersistentBuffer
  checks the head, not the temp end, so such a buffer may lie on the kernel's own temp
  TfLiteTensors; setup fails only at the start addresses where its written bytes hit what is read
  afterwards (`Allocation.fails_at`), so the minimal arena is the size from which every larger
  one works (a few smaller ones may too).
* *MicroAllocator::StartModelAllocation, FinishModelAllocation, CommitStaticMemoryPlan*
  (micro_allocator.cc) and *MicroInterpreter::AllocateTensors* (micro_interpreter.cc): the order.
* *RecordingMicroAllocator* (recording_micro_allocator.cc): which allocations each
  `print_allocations()` category counts.
* *MicroResourceVariables* (micro_resource_variable.cc): the resource-variable table the
  interpreter's owner creates right after the allocator, and the variables' buffers
  (`tflm_resources`).

Struct sizes depend on the build (`layout_for`, from the C field lists in `structs`): the x86-64
`tflite_micro` pip package (LP64, `USE_TFLM_COMPRESSION`, RecordingMicroAllocator), measured
against the wheel, and Cortex-M firmware (ILP32 Arm EABI, no compression, the plain
MicroAllocator or the recording one), measured against TFLM built for Cortex-M under QEMU. The
sequence is the same on every build; only the sizes and the first three objects differ (the
plain allocator's need 104 bytes less on Cortex-M, 232 on the wheel). Kernel allocations come from
`kernels`.

Two places where C and this replay part on purpose, neither ever lowering the minimal arena:

* A temp allocation that would start above the tail (only after a persistent allocation that
  went below the temp end: persistent allocations are checked against the head, not the temp
  end) wraps around in C's unsigned arithmetic and "succeeds" over the persistent data. The
  replay counts it as a failure; when the planner step that follows wraps the same way, TFLM
  faults there (keyword_scrambled's variables), and the replay's failure is the same answer.
* FinishPrepareNodeAllocations' head resize may fail without stopping setup (its status is
  ignored); the replay fails there, because the planning step later needs more room anyway.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from types import MappingProxyType

from arenalens.analysis.lifetimes import ScratchRequest
from arenalens.builds.build import COMPRESSION, HOST, Build, allocator_name
from arenalens.ir import Model, Tensor
from arenalens.runtimes.tflm import structs, temp_overlap
from arenalens.runtimes.tflm.abi import Struct
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.kernels.base import (
    MAX_SCRATCH_PER_OPERATOR,
    Event,
    KernelContext,
    Persistent,
    TempBytes,
    TempTensor,
)
from arenalens.runtimes.tflm.kernels.setups import OperatorSetup, operator_setups
from arenalens.runtimes.tflm.resources import resource_variables
from arenalens.runtimes.tflm.tensor_bytes import tflm_tensor_bytes

# print_allocations() category names (RecordingMicroAllocator::PrintAllocations), in print order.
EVAL_TENSORS = "TfLiteEvalTensor data"
PERSISTENT_TENSORS = "Persistent TfLiteTensor data"
QUANTIZATION = "Persistent TfLiteTensor quantization data"
PERSISTENT_BUFFERS = "Persistent buffer data"
VARIABLES = "TfLiteTensor variable buffer data"
NODES = "NodeAndRegistration struct"
CATEGORY_ORDER = (
    EVAL_TENSORS,
    PERSISTENT_TENSORS,
    QUANTIZATION,
    PERSISTENT_BUFFERS,
    VARIABLES,
    NODES,
)
CATEGORY_UNITS: Mapping[str, str] = MappingProxyType(
    {
        EVAL_TENSORS: "allocations",
        PERSISTENT_TENSORS: "tensors",
        QUANTIZATION: "allocations",
        PERSISTENT_BUFFERS: "allocations",
        VARIABLES: "allocations",
        NODES: "NodeAndRegistration structs",
    }
)
# LinearMemoryPlanner::kMaxBufferCount (linear_memory_planner.h).
LINEAR_PLANNER_CAPACITY = structs.LINEAR_PLANNER_CAPACITY


@dataclass(frozen=True, slots=True)
class RuntimeLayout:
    """Struct sizes of one TFLM build: what the runtime's own bookkeeping costs, in bytes."""

    name: str
    pointer_bytes: int
    struct_alignment: int  # alignof of every runtime struct below (none holds a 64-bit scalar)
    # The arena allocator, the memory planner and the MicroAllocator, as Create places them:
    # RecordingSingleArenaBufferAllocator + GreedyMemoryPlanner + RecordingMicroAllocator with
    # the recording allocator, SingleArenaBufferAllocator + GreedyMemoryPlanner + MicroAllocator
    # without.
    allocator_objects: int
    builtin_data_allocator: int  # MicroBuiltinDataAllocator
    subgraph_allocations: int  # SubgraphAllocations, per subgraph
    eval_tensor: int  # TfLiteEvalTensor
    node_and_registration: int  # NodeAndRegistration
    tflite_tensor: int  # TfLiteTensor (TF_LITE_STATIC_MEMORY)
    affine_quantization: int  # TfLiteAffineQuantization
    scratch_request: int  # internal::ScratchBufferRequest
    scratch_handle: int  # ScratchBufferHandle
    allocation_info: int  # AllocationInfo, per tensor and scratch request while planning
    planner_bytes_per_buffer: int  # GreedyMemoryPlanner::per_buffer_size()
    resource_variables: int  # MicroResourceVariables
    resource_variable: int  # MicroResourceVariables::MicroResourceVariable, per variable
    # SingleArenaBufferAllocator + LinearMemoryPlanner (1024 offsets) + MicroAllocator: the
    # objects of a preserve_all_tensors interpreter, which records nothing.
    preserve_all_allocator_objects: int
    assumptions: tuple[str, ...] = ()


_HOST_ASSUMPTIONS = (
    "64-bit host build of the tflite_micro pip package (reference kernels, "
    "USE_TFLM_COMPRESSION, RecordingMicroAllocator, GreedyMemoryPlanner)",
    "the arena array starts 16-byte aligned (malloc); its end may be unaligned",
)


@cache
def layout_for(build: Build) -> RuntimeLayout:
    """The runtime's struct sizes on a build, from the C field lists (`structs`): pointer-sized
    fields halve on 32-bit cores, compression adds fields, and the recording allocator's objects
    replace the plain ones."""
    abi, features = build.abi, build.features

    def size(layout: Struct) -> int:
        return layout.size(abi, features)

    if build.recording:
        allocator = structs.RECORDING_SINGLE_ARENA_BUFFER_ALLOCATOR
        micro_allocator = structs.RECORDING_MICRO_ALLOCATOR
    else:
        allocator = structs.SINGLE_ARENA_BUFFER_ALLOCATOR
        micro_allocator = structs.MICRO_ALLOCATOR
    return RuntimeLayout(
        name=_layout_name(build),
        pointer_bytes=abi.pointer_bytes,
        struct_alignment=max(item.layout(abi, features)[1] for item in structs.RUNTIME_STRUCTS),
        allocator_objects=size(allocator)
        + size(structs.GREEDY_MEMORY_PLANNER)
        + size(micro_allocator),
        builtin_data_allocator=size(structs.MICRO_BUILTIN_DATA_ALLOCATOR),
        subgraph_allocations=size(structs.SUBGRAPH_ALLOCATIONS),
        eval_tensor=size(structs.TF_LITE_EVAL_TENSOR),
        node_and_registration=size(structs.NODE_AND_REGISTRATION),
        tflite_tensor=size(structs.TF_LITE_TENSOR),
        affine_quantization=size(structs.TF_LITE_AFFINE_QUANTIZATION),
        scratch_request=size(structs.SCRATCH_BUFFER_REQUEST),
        scratch_handle=size(structs.SCRATCH_BUFFER_HANDLE),
        allocation_info=size(structs.ALLOCATION_INFO),
        planner_bytes_per_buffer=size(structs.GREEDY_PLANNER_PER_BUFFER),
        resource_variables=size(structs.MICRO_RESOURCE_VARIABLES),
        resource_variable=size(structs.MICRO_RESOURCE_VARIABLE),
        preserve_all_allocator_objects=size(structs.SINGLE_ARENA_BUFFER_ALLOCATOR)
        + size(structs.LINEAR_MEMORY_PLANNER)
        + size(structs.MICRO_ALLOCATOR),
        assumptions=_layout_assumptions(build),
    )


def _layout_name(build: Build) -> str:
    if build == HOST:
        return "x86-64 host (tflite_micro pip package)"
    return f"{build.title} ({build.abi.name}, {allocator_name(build)})"


def _layout_assumptions(build: Build) -> tuple[str, ...]:
    if build == HOST:
        return _HOST_ASSUMPTIONS
    allocator = (
        "RecordingMicroAllocator (RecordingMicroAllocator::Create, as the Cortex-M probes use)"
        if build.recording
        else "MicroAllocator (as MicroInterpreter(model, resolver, arena, arena_size) creates it)"
    )
    compression = "USE_TFLM_COMPRESSION" if COMPRESSION in build.features else "no compression"
    if build.is_host:
        return (
            f"64-bit host build (LP64), {compression}, {allocator}, GreedyMemoryPlanner",
            _HOST_ASSUMPTIONS[1],
        )
    return (
        f"{build.title}: TFLM's Makefile build for Cortex-M (TARGET=cortex_m_generic, "
        f"arm-none-eabi-gcc: {build.abi.name}, short enums), {compression}",
        f"{allocator}, GreedyMemoryPlanner",
        "the arena array starts 16-byte aligned (alignas(16)); its end may be unaligned",
    )


HOST_64 = layout_for(HOST)


class Action(enum.StrEnum):
    """What one step of setup does to the arena."""

    PERSISTENT = "persistent"  # tail allocation (AllocatePersistentBuffer)
    HEAD = "head"  # resize the head buffer (scratch requests; final head reservation)
    TEMP = "temp"  # temp allocation above the head
    RESET_TEMP = "reset temp"  # ResetTempAllocations: temp back to the head
    PLANNER = "planner"  # the planner takes all free memory: nbytes = buffers it must hold
    LINEAR_PLANNER = "linear planner"  # LinearMemoryPlanner: a fixed table, nbytes = buffers
    RELEASE_HEAD = "release head"  # DeallocateResizableBuffer: head back to the start


@dataclass(frozen=True, slots=True)
class Allocation:
    """One step of TFLM's setup: an allocation (or a head / temp reset) and what it is for."""

    action: Action
    nbytes: int
    alignment: int = 1
    what: str = ""
    category: str = ""  # the print_allocations() category that records it ("" = none)
    count: int = 1  # how many allocations the category counts for this one (arrays count items)
    part: str = ""  # TEMP: which struct of a temp tensor view (temp_overlap.TENSOR, ...)
    # PERSISTENT: a kernel buffer written while its temps are live (temp_overlap), and the
    # closed ranges of start addresses at which it breaks setup (set by setup_sequence).
    hazard: temp_overlap.Hazard | None = None
    fails_at: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class SetupOutcome:
    """One replay: did setup fit, where it failed, and what print_allocations() would print."""

    arena_size: int
    fits: bool
    head: int
    tail: int
    failed_at: Allocation | None = None
    # Category → (used, requested, count), only categories with bytes, in print order.
    categories: Mapping[str, tuple[int, int, int]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    @property
    def total(self) -> int:
        """Head plus tail, as 'Arena allocation total'."""
        return self.head + self.tail


def _align_down(value: int, alignment: int) -> int:
    return value - value % alignment


def _align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def replay(
    sequence: Sequence[Allocation], arena_size: int, layout: RuntimeLayout = HOST_64
) -> SetupOutcome:
    """(setup sequence, arena size) → whether TFLM's setup fits, and its head, tail, categories.

    SingleArenaBufferAllocator over [0, arena_size), the array start assumed 16-byte aligned. One
    loop with the arena in local variables: a 10,000-operator model's setup is ~60,000 steps,
    replayed twice per budget.
    """
    head = temp = 0
    tail = arena_size
    used: dict[str, int] = {}
    requested: dict[str, int] = {}
    counted: dict[str, int] = {}
    planner_bytes_per_buffer = layout.planner_bytes_per_buffer
    persistent, temporary, resize_head = Action.PERSISTENT, Action.TEMP, Action.HEAD
    reset_temp, release_head = Action.RESET_TEMP, Action.RELEASE_HEAD
    planner, linear_planner = Action.PLANNER, Action.LINEAR_PLANNER
    failed_at: Allocation | None = None
    for step in sequence:
        action = step.action
        if action is persistent:
            result = tail - step.nbytes
            result -= result % step.alignment
            if result < head or (
                # Most buffers have no failing starts: skip building the generator (hot loop).
                step.fails_at and any(low <= result <= high for low, high in step.fails_at)
            ):
                failed_at = step
                break
            category = step.category
            if category:
                used[category] = used.get(category, 0) + tail - result
                requested[category] = requested.get(category, 0) + step.nbytes
                counted[category] = counted.get(category, 0) + step.count
            tail = result
        elif action is temporary:
            start = -(-temp // step.alignment) * step.alignment
            if tail - start < step.nbytes:
                failed_at = step
                break
            temp = start + step.nbytes
        elif action is resize_head:
            # ResizeBuffer starts at the aligned array start; the array start is aligned.
            if tail < step.nbytes:
                failed_at = step
                break
            head = temp = step.nbytes
        elif action is reset_temp:
            temp = head
        elif action is release_head:
            head = temp = 0
        elif action is planner or action is linear_planner:
            available = _align_down(tail, ARENA_ALIGNMENT) - _align_up(temp, ARENA_ALIGNMENT)
            linear = action is linear_planner
            limit = LINEAR_PLANNER_CAPACITY if linear else available // planner_bytes_per_buffer
            if available < 0 or step.nbytes > limit:
                failed_at = step
                break
            temp = _align_down(tail, ARENA_ALIGNMENT)
    categories = {
        name: (used[name], requested[name], counted[name])
        for name in CATEGORY_ORDER
        if used.get(name, 0) > 0 or requested.get(name, 0) > 0
    }
    return SetupOutcome(
        arena_size,
        failed_at is None,
        max(head, temp),
        arena_size - tail,
        failed_at=failed_at,
        categories=MappingProxyType(categories),
    )


def minimal_arena_size(sequence: Sequence[Allocation], layout: RuntimeLayout = HOST_64) -> int:
    """Setup sequence → the smallest arena_size from which every larger size sets up.

    Head and temp positions count from the (aligned) array start and never depend on the size.
    Write the size as n = 16·k + r and the tail address as n - used: every alignment divides 16,
    so the tail's offset d = tail - 16·k depends on the residue r only, and every check becomes
    a lower bound `n >= value - d + r`. One pass therefore finds each residue's minimum; the
    residues share one offset d as soon as a 16-aligned tail allocation lines them up (in
    practice the first kernel buffer), after which the pass costs O(1) per step.

    A kernel buffer written over live temps (`Allocation.fails_at`) fails at some start
    addresses only; for stability its start must lie above the highest of them, one more lower
    bound. Each residue r then fits exactly from its own S_r on, so the sizes that fail are
    below max(S_r) - 15 (without such buffers fitting is monotone and this is the first size
    that fits).
    """
    needs = _residue_needs(sequence, layout.planner_bytes_per_buffer)
    firsts = [need + (residue - need) % 16 for residue, need in needs.items() if need is not None]
    if len(firsts) < len(needs):
        raise ValueError("no arena size fits this setup (a planner limit is exceeded)")
    return max(firsts) - 15


class _ResidueGroup:
    """Residues whose tail offset d currently agree: a shared running bound, and earlier ones."""

    __slots__ = ("earlier", "shared")

    def __init__(self, earlier: dict[int, int]) -> None:
        self.earlier = earlier  # residue → bound (value - d) collected before joining
        self.shared = -(1 << 62)  # bound collected since, for every residue of the group


def _residue_needs(
    sequence: Sequence[Allocation], planner_bytes_per_buffer: int
) -> dict[int, int | None]:
    """Sequence → for each residue r, the largest lower bound on the size (None: none fits)."""
    groups: dict[int, _ResidueGroup] = {r: _ResidueGroup({r: -(1 << 62)}) for r in range(16)}
    head = temp = 0
    impossible = False
    # Temp and head checks bound every group by (their end - its offset): between two tail
    # moves only the highest end matters, so it is kept here and given to the groups when the
    # offsets are about to move (or at the end), not at every step.
    highest_end = nothing = -(1 << 62)
    persistent, temporary, resize_head = Action.PERSISTENT, Action.TEMP, Action.HEAD
    reset_temp, release_head = Action.RESET_TEMP, Action.RELEASE_HEAD
    for step in sequence:
        action = step.action
        if action is persistent:
            if highest_end != nothing:
                _bound_all(groups, highest_end)
                highest_end = nothing
            groups = _move_tail(groups, step.nbytes, step.alignment, head)
            if step.fails_at:
                _bound_above_failing_starts(groups, step.fails_at)
        elif action is temporary:
            temp = -(-temp // step.alignment) * step.alignment + step.nbytes
            highest_end = max(highest_end, temp)
        elif action is resize_head:
            highest_end = max(highest_end, step.nbytes)
            head = temp = step.nbytes
        elif action is reset_temp:
            temp = head
        elif action is release_head:
            head = temp = 0
        elif action in (Action.PLANNER, Action.LINEAR_PLANNER):
            linear = action is Action.LINEAR_PLANNER
            impossible |= linear and step.nbytes > LINEAR_PLANNER_CAPACITY
            start = _align_up(temp, ARENA_ALIGNMENT)
            table = 0 if linear else step.nbytes * planner_bytes_per_buffer
            # align_down(tail, 16) - start >= table: the tail's own misalignment is lost.
            for offset, group in groups.items():
                group.shared = max(group.shared, start + table - offset + offset % 16)
            temp = start + table
    if highest_end != nothing:
        _bound_all(groups, highest_end)
    needs: dict[int, int | None] = {}
    for group in groups.values():
        for residue, earlier in group.earlier.items():
            needs[residue] = None if impossible else max(earlier, group.shared) + residue
    return dict(sorted(needs.items()))


def _bound_all(groups: dict[int, _ResidueGroup], start_relative: int) -> None:
    """A check `tail >= start_relative` for every residue: n >= start_relative - d + r."""
    for offset, group in groups.items():
        bound = start_relative - offset
        group.shared = max(group.shared, bound)


def _bound_above_failing_starts(
    groups: dict[int, _ResidueGroup], fails_at: tuple[tuple[int, int], ...]
) -> None:
    """The allocation just made (the tail, 16·k + d) must start above every failing start: the
    highest failing k of each group is a lower bound n >= 16·(k + 1) + r."""
    for offset, group in groups.items():
        for low, high in fails_at:
            highest = (high - offset) // 16
            if 16 * highest + offset >= low:
                group.shared = max(group.shared, 16 * (highest + 1))


def _move_tail(
    groups: dict[int, _ResidueGroup], nbytes: int, alignment: int, head: int
) -> dict[int, _ResidueGroup]:
    """A persistent allocation: each group's tail offset moves down; groups that meet merge."""
    moved: dict[int, _ResidueGroup] = {}
    for offset, group in groups.items():
        new_offset = offset - nbytes
        new_offset -= new_offset % alignment
        # The new tail must not fall below the head: n + new_offset - r >= head.
        group.shared = max(group.shared, head - new_offset)
        target = moved.get(new_offset)
        if target is None:
            moved[new_offset] = group
            continue
        for merged in (target, group):  # fold running bounds into per-residue history
            for residue in merged.earlier:
                merged.earlier[residue] = max(merged.earlier[residue], merged.shared)
            merged.shared = -(1 << 62)
        target.earlier.update(group.earlier)
    return moved


# ---------------------------------------------------------------------------------------------
# The sequence


def _quantized(tensor: Tensor) -> bool:
    """TFLM copies quantization only when both scale and zero_point are non-empty."""
    quantization = tensor.quantization
    return quantization is not None and quantization.zero_point is not None


def _tensor_struct(
    tensor: Tensor, layout: RuntimeLayout, action: Action, what: str, *, recorded: bool
) -> list[Allocation]:
    """A TfLiteTensor struct plus its quantization copies, as persistent or temp allocations."""
    steps = [
        Allocation(
            action,
            layout.tflite_tensor,
            layout.struct_alignment,
            what,
            PERSISTENT_TENSORS if recorded else "",
            part=temp_overlap.TENSOR,
        )
    ]
    if _quantized(tensor) and tensor.quantization is not None:
        channels = tensor.quantization.channel_count
        category = QUANTIZATION if recorded else ""
        steps.append(
            Allocation(
                action,
                layout.affine_quantization,
                layout.struct_alignment,
                what,
                category,
                part=temp_overlap.AFFINE,
            )
        )
        steps.append(
            Allocation(action, 4 + 4 * channels, 4, what, category, part=temp_overlap.ZERO_POINTS)
        )
    return steps


@dataclass(frozen=True)
class PlanFacts:
    """What setup needs to know about the plan besides the model."""

    scratch: tuple[ScratchRequest, ...]  # kernel scratch requests, in request order
    planned_buffer_count: int  # buffers given to the planner
    head_bytes: int  # the plan's maximum: the head TFLM reserves
    tail_variables: tuple[tuple[str, int], ...]  # (name, bytes) of variables placed in the tail
    preserve_all_tensors: bool = False  # LinearMemoryPlanner (kPreserveAllTensors)


def setups_with_resources(model: Model, build: Build = HOST) -> tuple[OperatorSetup, ...]:
    """Every operator's setup on a build, with the resource-variable buffers that ASSIGN_VARIABLE
    allocates in its Prepare (they depend on the operators prepared before it: `resources`)."""
    resources = resource_variables(model).buffers
    found: list[OperatorSetup] = []
    for setup in operator_setups(model, build):
        context = setup.context
        buffer = resources.get((context.subgraph.index, context.operator.index))
        if buffer is None:
            found.append(setup)
            continue
        # MicroResourceVariables::Allocate, between fetching the value and releasing it.
        what = f"resource variable '{buffer.shared_name}'"
        allocation = Persistent(tflm_tensor_bytes(buffer.tensor), what)
        found.append(replace(setup, prepare=(*setup.prepare, allocation)))
    return tuple(found)


def setup_sequence(
    model: Model,
    facts: PlanFacts,
    layout: RuntimeLayout = HOST_64,
    setups: Sequence[OperatorSetup] | None = None,
) -> tuple[Allocation, ...]:
    """Model + plan facts → every allocation MicroInterpreter::AllocateTensors makes, in order.

    `setups` (from `setups_with_resources`) may be passed in to share them between replays.
    """
    pointer = layout.struct_alignment
    objects = (
        layout.preserve_all_allocator_objects
        if facts.preserve_all_tensors
        else layout.allocator_objects
    )
    steps: list[Allocation] = [
        Allocation(Action.PERSISTENT, objects, pointer, "allocator and planner")
    ]
    # MicroResourceVariables::Create, between the allocator and the interpreter (tflm_resources).
    capacity = resource_variables(model).capacity
    if capacity:
        for nbytes, what in (
            (layout.resource_variables, "resource variable table"),
            (layout.resource_variable * capacity, f"{capacity} resource variable entries"),
        ):
            steps.append(
                Allocation(Action.PERSISTENT, nbytes, ARENA_ALIGNMENT, what, PERSISTENT_BUFFERS)
            )
    # StartModelAllocation.
    steps.append(
        Allocation(Action.PERSISTENT, layout.builtin_data_allocator, pointer, "builtin allocator")
    )
    first_head = layout.scratch_request * MAX_SCRATCH_PER_OPERATOR
    steps.append(Allocation(Action.HEAD, first_head, pointer, "scratch request buffer"))
    steps.append(
        Allocation(
            Action.PERSISTENT,
            layout.subgraph_allocations * len(model.subgraphs),
            pointer,
            "subgraph allocations",
        )
    )
    for subgraph in model.subgraphs:
        count = len(subgraph.tensors)
        steps.append(
            Allocation(
                Action.PERSISTENT,
                layout.eval_tensor * count,
                pointer,
                f"eval tensors of subgraph {subgraph.index}",
                EVAL_TENSORS,
                count,
            )
        )
    for subgraph in model.subgraphs:
        count = len(subgraph.operators)
        steps.append(
            Allocation(
                Action.PERSISTENT,
                layout.node_and_registration * count,
                pointer,
                f"nodes of subgraph {subgraph.index}",
                NODES,
                count,
            )
        )
    operators = setups_with_resources(model) if setups is None else setups
    writing = _Writing(layout, steps)
    labels = [_label(setup.context) for setup in operators]  # each used up to three times
    # PrepareNodeAndRegistrationDataFromFlatbuffer: builtin options, every operator.
    for setup, label in zip(operators, labels, strict=True):
        if setup.builtin_data is not None:
            size, alignment = setup.builtin_data
            steps.append(Allocation(Action.PERSISTENT, size, alignment, f"options of {label}"))
    # InitSubgraphs: kernel Init.
    for setup, label in zip(operators, labels, strict=True):
        if setup.init:
            _kernel_steps(writing, setup.init, setup.context, label, "Init")
    # PrepareSubgraphs: kernel Prepare, then FinishPrepareNodeAllocations.
    requests_so_far = 0
    scratch_per_operator: dict[tuple[int, int], int] = {}
    for request in facts.scratch:
        key = (request.subgraph, request.operator)
        scratch_per_operator[key] = scratch_per_operator.get(key, 0) + 1
    for setup, label in zip(operators, labels, strict=True):
        view = setup.context
        _kernel_steps(writing, setup.prepare, view, label, "Prepare")
        steps.append(_RESET_TEMP)
        requests_so_far += scratch_per_operator.get((view.subgraph.index, view.operator.index), 0)
        steps.append(
            Allocation(
                Action.HEAD,
                layout.scratch_request * (requests_so_far + MAX_SCRATCH_PER_OPERATOR),
                pointer,
                f"scratch requests after {label}",
            )
        )
    steps.extend(_planning_steps(model, facts, layout))
    steps.extend(_io_tensor_steps(model, layout))
    return _with_failing_starts(steps)


# ResetTempAllocations after every Prepare: one frozen step shared by all of them.
_RESET_TEMP = Allocation(Action.RESET_TEMP, 0)


def _with_failing_starts(steps: list[Allocation]) -> tuple[Allocation, ...]:
    """Kernel buffers written over live temps get the start addresses at which they break setup
    (`temp_overlap`): temp positions never depend on the arena size, so walk them once."""
    if not any(step.hazard is not None for step in steps):
        return tuple(steps)
    placed: list[Allocation] = []
    head = temp = 0
    # (fetch position, [start, end) of each struct of the temp view)
    live: list[tuple[int, dict[str, tuple[int, int]]]] = []
    for step in steps:
        action = step.action
        if action is Action.TEMP:
            start = _align_up(temp, step.alignment)
            temp = start + step.nbytes
            if step.part == temp_overlap.TENSOR:
                live.append((len(live), {step.part: (start, temp)}))
            elif step.part and live:
                live[-1][1][step.part] = (start, temp)
        elif action is Action.HEAD:
            head = temp = step.nbytes
            live = []
        elif action in (Action.RESET_TEMP, Action.RELEASE_HEAD):
            head = 0 if action is Action.RELEASE_HEAD else head
            temp = head
            live = []
        elif action is Action.PERSISTENT and step.hazard is not None:
            failing = step.hazard.failing_starts(live, step.alignment)
            placed.append(replace(step, fails_at=failing))
            continue
        placed.append(step)
    return tuple(placed)


def _planning_steps(model: Model, facts: PlanFacts, layout: RuntimeLayout) -> list[Allocation]:
    """FinishModelAllocation: scratch handles, then CommitStaticMemoryPlan."""
    pointer = layout.struct_alignment
    steps: list[Allocation] = []
    scratch = facts.scratch
    if scratch:
        steps.append(
            Allocation(
                Action.PERSISTENT, layout.scratch_handle * len(scratch), pointer, "scratch handles"
            )
        )
    steps.append(
        Allocation(
            Action.TEMP, layout.pointer_bytes * len(model.subgraphs), pointer, "subgraph offsets"
        )
    )
    steps.append(
        Allocation(
            Action.TEMP,
            layout.allocation_info * (model.tensor_count + len(scratch)),
            pointer,
            "allocation info",
        )
    )
    for name, nbytes in facts.tail_variables:
        steps.append(
            Allocation(Action.PERSISTENT, nbytes, ARENA_ALIGNMENT, f"variable {name}", VARIABLES)
        )
    planner = Action.LINEAR_PLANNER if facts.preserve_all_tensors else Action.PLANNER
    steps.append(Allocation(planner, facts.planned_buffer_count, ARENA_ALIGNMENT, "memory planner"))
    steps.append(Allocation(Action.RESET_TEMP, 0))
    steps.append(Allocation(Action.RELEASE_HEAD, 0))
    steps.append(
        Allocation(Action.HEAD, facts.head_bytes, ARENA_ALIGNMENT, "head (planned buffers)")
    )
    return steps


def _io_tensor_steps(model: Model, layout: RuntimeLayout) -> list[Allocation]:
    """The input and output TfLiteTensor structs MicroInterpreter keeps after setup."""
    steps: list[Allocation] = []
    main = model.subgraphs[0]
    for role, indices in (("input", main.inputs), ("output", main.outputs)):
        steps.append(
            Allocation(
                Action.PERSISTENT,
                layout.pointer_bytes * len(indices),
                ARENA_ALIGNMENT,
                f"{role} tensor pointers",
                PERSISTENT_BUFFERS,
            )
        )
        for index in indices:
            tensor = main.tensors[index]
            steps.extend(
                _tensor_struct(
                    tensor, layout, Action.PERSISTENT, f"{role} tensor {index}", recorded=True
                )
            )
    return steps


@dataclass
class _Writing:
    """A sequence being written: the build's sizes, the steps so far, and the temp structs of
    each tensor by id (the same tensor always costs the same temp bytes)."""

    layout: RuntimeLayout
    steps: list[Allocation]
    temp_structs: dict[int, list[Allocation]] = field(default_factory=dict)


def _kernel_steps(
    writing: _Writing,
    allocations: Sequence[Event],
    view: KernelContext,
    operator_label: str,
    phase: str,
) -> None:
    """Append one kernel phase's allocations to the steps (one call per operator and phase)."""
    steps, layout, temp_structs = writing.steps, writing.layout, writing.temp_structs
    label = ""  # written when a step needs it: most Prepare events are temp tensors
    for allocation in allocations:
        if isinstance(allocation, TempTensor):
            # The same tensor always costs the same temp bytes: build its steps once.
            tensor = allocation.tensor
            cached = temp_structs.get(id(tensor))
            if cached is None:
                what = f"temp TfLiteTensor for tensor {tensor.index} '{tensor.name}'"
                cached = _tensor_struct(tensor, layout, Action.TEMP, what, recorded=False)
                temp_structs[id(tensor)] = cached
            steps.extend(cached)
            continue
        if not label:
            label = f"{phase} of {operator_label}"
        if isinstance(allocation, Persistent):
            over = allocation.written
            steps.append(
                Allocation(
                    Action.PERSISTENT,
                    allocation.nbytes,
                    ARENA_ALIGNMENT,
                    f"{label}: {allocation.what}",
                    PERSISTENT_BUFFERS,
                    1,
                    "",
                    None
                    if over is None
                    else temp_overlap.resolve(over, allocation.nbytes, view.build.abi),
                )
            )
        elif isinstance(allocation, TempBytes):
            steps.append(
                Allocation(Action.TEMP, allocation.nbytes, allocation.alignment, f"{label}: temp")
            )


def _label(view: KernelContext) -> str:
    return (
        f"operator {view.operator.index} ({view.operator.opcode}) of subgraph {view.subgraph.index}"
    )
