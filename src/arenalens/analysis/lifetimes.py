"""Tensor lifetimes: model + runtime rules → one inclusive [first, last] step interval per tensor.

Both ends are inclusive: a tensor with `last = s` is still live at step s. Two rule sets exist,
one per runtime (facts and source files in docs/runtime-semantics.md):

* **TFLM** (*micro_allocation_info.cc — MarkAllocationLifetimes*): one global step counter over the
  whole model. Step 0 precedes the first operator of subgraph 0; each operator adds a step, and an
  IF / WHILE / CALL_ONCE adds one more step per visited subgraph, then that subgraph's own steps.
  Only subgraph 0 is marked from the top; unreachable subgraphs keep (-1, -1).
* **LiteRT** (*arena_planner.cc — PlanAllocations*): each subgraph on its own timeline 0..E-1 (its
  execution plan). Graph inputs, variables and outputs are never freed (`last = NEVER_FREED`);
  in-place operators may make an output an alias of an input (*IdentifyInPlaceTensors*).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from arenalens.errors import ModelError
from arenalens.ir import Model, Operator, Subgraph, Tensor

UNSET = -1
# LiteRT's kNodeNotAssigned (INT32_MAX): "allocated until the end", and "not yet allocated".
NEVER_FREED = 2**31 - 1

# Operators whose nested subgraphs TFLM walks while marking lifetimes. TFLM tests the raw
# `builtin_code` field here, not max(builtin_code, deprecated_builtin_code).
TFLM_CONTROL_FLOW_CODES = frozenset({118, 119, 129})  # IF, WHILE, CALL_ONCE
# Steps a TFLM walk may take beyond one per operator: far above any real model's control flow
# (each subgraph call adds one step plus the callee's), low enough that a hostile call graph
# whose walk grows exponentially is refused in milliseconds instead of running for hours. (At
# a million, a 30 KB fan-out model's million-step timeline cost every later stage seconds:
# about a minute of CPU from report to optimize.)
MAX_EXTRA_TFLM_STEPS = 100_000


@dataclass(frozen=True, slots=True)
class TensorLifetime:
    """One tensor's inclusive [first, last] steps; -1 = never written / never read."""

    subgraph: int
    tensor: int
    first: int
    last: int
    alias_of: int | None = None  # LiteRT in-place: this tensor lives in that tensor's bytes


@dataclass(frozen=True, slots=True)
class ScratchRequest:
    """A kernel's scratch memory request for one operator (TFLM RequestScratchBufferInArena)."""

    subgraph: int
    operator: int
    nbytes: int
    label: str = ""


@dataclass(frozen=True, slots=True)
class ScratchLifetime:
    """One scratch request with its inclusive step interval."""

    request: ScratchRequest
    first: int
    last: int


@dataclass(frozen=True, slots=True)
class Step:
    """What happens at one step: an operator runs, or a subgraph is entered (operator = None)."""

    step: int
    subgraph: int
    operator: int | None
    label: str


@dataclass(frozen=True)
class Timeline:
    """Lifetimes of every tensor under one runtime's rules, plus what each step is."""

    runtime: str
    lifetimes: Mapping[tuple[int, int], TensorLifetime]  # (subgraph, tensor) → lifetime
    scratch: tuple[ScratchLifetime, ...]
    steps: tuple[Step, ...]  # TFLM: one timeline; LiteRT: subgraphs' steps concatenated

    def of(self, subgraph: int, tensor: int) -> TensorLifetime:
        """Lifetime of one tensor."""
        return self.lifetimes[(subgraph, tensor)]

    def steps_of(self, subgraph: int) -> tuple[Step, ...]:
        """Steps that belong to one subgraph (LiteRT) or run its operators (TFLM)."""
        return tuple(step for step in self.steps if step.subgraph == subgraph)


def tflm_planned(tensor: Tensor) -> bool:
    """TFLM places a tensor in the head iff it has no constant data, is not a variable, and has
    bytes (*AllocationInfoBuilder::InitializeAllocationInfo*); offline variables are the caller's
    concern."""
    return not tensor.has_data and not tensor.is_variable and tensor.nbytes > 0


# ---------------------------------------------------------------------------------------------
# TFLM


def tflm_timeline(model: Model, scratch: Sequence[ScratchRequest] = ()) -> Timeline:
    """Model (+ kernel scratch requests) → lifetimes by TFLM's MarkAllocationLifetimes."""
    limit = tflm_step_limit(model)
    if tflm_step_count(model, limit) > limit:
        raise ModelError(
            model.source,
            f"control flow expands to more than {limit:,} steps: TFLM walks a "
            f"subgraph again for every operator that calls it, and subgraphs here call others "
            f"several times, nested (the walk grows exponentially with the nesting)",
        )
    marker = _TflmMarker(model, scratch)
    marker.mark(0)
    return marker.timeline()


def tflm_step_limit(model: Model) -> int:
    """Most steps a TFLM walk of this model may take: one per operator plus a fixed allowance."""
    return model.operator_count + MAX_EXTRA_TFLM_STEPS


def tflm_step_count(model: Model, limit: int) -> int:
    """Steps TFLM's walk takes from subgraph 0 (operators and subgraph entries), or limit + 1.

    Counted bottom-up over the call graph (acyclic after `check_model`; a cycle counts as too
    many), so a model whose walk would take billions of steps is refused before it starts.
    """
    cap = limit + 1
    counts: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[int, bool]] = [(0, False)]
    while stack:
        index, children_done = stack.pop()
        if index in counts:
            continue
        subgraph = model.subgraphs[index]
        callees = [c for op in subgraph.operators for c in _tflm_callees(op)]
        if not children_done:
            if index in on_path:
                return cap
            on_path.add(index)
            stack.append((index, True))
            stack.extend((c, False) for c in callees if c not in counts)
            continue
        on_path.discard(index)
        # One step per operator, one per subgraph entry, plus the called subgraph's own steps.
        total = len(subgraph.operators) + sum(1 + counts.get(c, cap) for c in callees)
        counts[index] = min(total, cap)
    return counts.get(0, cap)


def _tflm_callees(op: Operator) -> tuple[int, ...]:
    if op.raw_builtin_code not in TFLM_CONTROL_FLOW_CODES:
        return ()
    return tuple(s for s in op.called_subgraphs if s >= 0)


class _TflmMarker:
    """Replays MarkAllocationLifetimes with one global step counter.

    TFLM recurses into called subgraphs; this walks an explicit stack of tasks instead, so deep
    control-flow nesting cannot exhaust Python's recursion limit.
    """

    def __init__(self, model: Model, scratch: Sequence[ScratchRequest]) -> None:
        self.model = model
        self.step = 0
        self.first: dict[tuple[int, int], int] = {}
        self.last: dict[tuple[int, int], int] = {}
        self.scratch = tuple(scratch)
        self.scratch_first = [UNSET] * len(self.scratch)
        self.scratch_last = [UNSET] * len(self.scratch)
        self.scratch_by_op: dict[tuple[int, int], list[int]] = {}
        for position, request in enumerate(self.scratch):
            key = (request.subgraph, request.operator)
            self.scratch_by_op.setdefault(key, []).append(position)
        self.steps: list[Step] = [Step(0, 0, None, "inputs of subgraph 0")]

    def set_first(self, key: tuple[int, int]) -> None:
        if self.first.get(key, UNSET) == UNSET:
            self.first[key] = self.step

    def set_last(self, key: tuple[int, int]) -> None:
        self.last[key] = self.step

    def mark(self, subgraph_index: int) -> None:
        # Tasks, popped last-first: ("enter", subgraph) marks its inputs and queues its
        # operators; ("operator", subgraph, op) starts one; ("call", subgraph) steps into a
        # callee; ("finish", subgraph, op, start step) ends an operator after its callees;
        # ("leave", subgraph) marks the outputs.
        tasks: list[tuple[Any, ...]] = [("enter", subgraph_index)]
        while tasks:
            task = tasks.pop()
            action = task[0]
            if action == "enter":
                index = task[1]
                subgraph = self.model.subgraphs[index]
                self.mark_boundary(index, subgraph.inputs)
                tasks.append(("leave", index))
                tasks.extend(("operator", subgraph, op) for op in reversed(subgraph.operators))
            elif action == "operator":
                subgraph, op = task[1], task[2]
                self.step += 1
                self.steps.append(Step(self.step, subgraph.index, op.index, op.opcode))
                for tensor in op.outputs:
                    if tensor >= 0:
                        self.set_first((subgraph.index, tensor))
                tasks.append(("finish", subgraph, op, self.step))
                tasks.extend(("call", called) for called in reversed(_tflm_callees(op)))
            elif action == "call":
                called = task[1]
                self.step += 1
                self.steps.append(Step(self.step, called, None, f"enter subgraph {called}"))
                tasks.append(("enter", called))
            elif action == "finish":
                self.finish_operator(task[1], task[2], task[3])
            else:
                index = task[1]
                self.mark_boundary(index, self.model.subgraphs[index].outputs)

    def mark_boundary(self, index: int, tensors: tuple[int, ...]) -> None:
        for tensor in tensors:
            if tensor >= 0:
                self.set_first((index, tensor))
                self.set_last((index, tensor))

    def finish_operator(self, subgraph: Subgraph, op: Operator, start: int) -> None:
        index = subgraph.index
        for tensor in op.inputs:
            if tensor >= 0:
                self.set_last((index, tensor))
        for tensor in op.outputs:
            if tensor >= 0:
                self.set_last((index, tensor))
        for position in self.scratch_by_op.get((index, op.index), ()):
            if self.scratch_first[position] == UNSET:
                self.scratch_first[position] = start
            self.scratch_last[position] = self.step

    def timeline(self) -> Timeline:
        lifetimes: dict[tuple[int, int], TensorLifetime] = {}
        for subgraph in self.model.subgraphs:
            for tensor in subgraph.tensors:
                key = (subgraph.index, tensor.index)
                lifetimes[key] = TensorLifetime(
                    subgraph.index,
                    tensor.index,
                    self.first.get(key, UNSET),
                    self.last.get(key, UNSET),
                )
        scratch = tuple(
            ScratchLifetime(request, self.scratch_first[i], self.scratch_last[i])
            for i, request in enumerate(self.scratch)
        )
        return Timeline("tflm", MappingProxyType(lifetimes), scratch, tuple(self.steps))


# ---------------------------------------------------------------------------------------------
# LiteRT

# In-place flags of builtin registrations (*tflite/core/c/common.h*, kTfLiteInplaceOp*).
INPLACE_DATA_UNMODIFIED = 1
INPLACE_INPUT0_SHARED = 4
INPLACE_INPUT1_SHARED = 8
INPLACE_INPUT2_SHARED = 16
LITERT_INPLACE_FLAGS: Mapping[str, int] = MappingProxyType(
    {
        "ADD": INPLACE_INPUT0_SHARED | INPLACE_INPUT1_SHARED,
        "SUB": INPLACE_INPUT0_SHARED | INPLACE_INPUT1_SHARED,
        "MUL": INPLACE_INPUT0_SHARED | INPLACE_INPUT1_SHARED,
        "DIV": INPLACE_INPUT0_SHARED | INPLACE_INPUT1_SHARED,
        "RESHAPE": INPLACE_INPUT0_SHARED | INPLACE_DATA_UNMODIFIED,
        "SQUEEZE": INPLACE_INPUT0_SHARED | INPLACE_DATA_UNMODIFIED,
        "EXPAND_DIMS": INPLACE_INPUT0_SHARED | INPLACE_DATA_UNMODIFIED,
        "BITCAST": INPLACE_INPUT0_SHARED | INPLACE_DATA_UNMODIFIED,
        "SOFTMAX": INPLACE_INPUT0_SHARED,
        "DYNAMIC_UPDATE_SLICE": INPLACE_INPUT0_SHARED,
    }
)
_SHARED_INPUT_BITS = (INPLACE_INPUT0_SHARED, INPLACE_INPUT1_SHARED, INPLACE_INPUT2_SHARED)


def litert_arena_rw(tensor: Tensor) -> bool:
    """LiteRT puts a tensor in the (non-persistent) arena iff it is kTfLiteArenaRw at build time:
    no constant data, not a variable, and a fixed-size type (*Subgraph::SetTensorParameters*)."""
    dynamic_type = tensor.dtype.name in ("STRING", "RESOURCE", "VARIANT")
    return not tensor.has_data and not tensor.is_variable and not dynamic_type


def litert_build_allocation(tensor: Tensor) -> str:
    """A tensor's build-time LiteRT allocation type: mmap_ro, dynamic, arena_rw_persistent or
    arena_rw (*Subgraph::SetTensorParametersReadOnly / ReadWrite*); Prepare may change it."""
    if tensor.has_data:
        return "mmap_ro"
    if tensor.dtype.name in ("STRING", "RESOURCE", "VARIANT"):
        return "dynamic"
    return "arena_rw_persistent" if tensor.is_variable else "arena_rw"


def litert_timeline(model: Model, *, inplace: bool = True) -> Timeline:
    """Model → per-subgraph lifetimes by LiteRT's PlanAllocations (steps = plan positions)."""
    lifetimes: dict[tuple[int, int], TensorLifetime] = {}
    steps: list[Step] = []
    for subgraph in model.subgraphs:
        lifetimes.update(litert_subgraph_lifetimes(subgraph, inplace=inplace))
        steps.extend(
            Step(op.index, subgraph.index, op.index, op.opcode) for op in subgraph.operators
        )
    return Timeline("litert", MappingProxyType(lifetimes), (), tuple(steps))


def litert_subgraph_lifetimes(
    subgraph: Subgraph,
    *,
    inplace: bool = True,
    execution_plan: Sequence[int] | None = None,
) -> dict[tuple[int, int], TensorLifetime]:
    """One subgraph → (subgraph, tensor) → lifetime, alloc/dealloc as ArenaPlanner computes them.

    `first`/`last` hold LiteRT's alloc/dealloc node positions; NEVER_FREED means kept to the end
    (and, as `first`, never allocated).
    """
    plan = list(range(len(subgraph.operators))) if execution_plan is None else list(execution_plan)
    nodes = [subgraph.operators[i] for i in plan]
    alloc: dict[int, int] = {}
    dealloc: dict[int, int] = {}
    working: dict[int, int] = {}

    def allocate(tensor: int, node: int) -> None:
        alloc.setdefault(tensor, node)

    def deallocate(tensor: int, node: int) -> None:
        if tensor in alloc:
            dealloc.setdefault(tensor, node)

    for tensor in subgraph.outputs:
        if tensor >= 0:
            working[tensor] = working.get(tensor, 0) + 1
    for tensor in (t.index for t in subgraph.tensors if t.is_variable):
        working[tensor] = working.get(tensor, 0) + 1
        allocate(tensor, 0)
    for tensor in subgraph.inputs:
        if tensor >= 0:
            working[tensor] = working.get(tensor, 0) + 1
            allocate(tensor, 0)
    full = dict(working)
    for node in nodes:
        for tensor in node.inputs:
            if tensor >= 0:
                full[tensor] = full.get(tensor, 0) + 1
    alias = _litert_inplace_aliases(subgraph, nodes, full) if inplace else {}

    def root(tensor: int) -> int:
        while tensor in alias:
            tensor = alias[tensor]
        return tensor

    for node in nodes:
        for tensor in node.inputs:
            if tensor >= 0:
                key = root(tensor)
                working[key] = working.get(key, 0) + 1
    for position, node in enumerate(nodes):
        for tensor in node.outputs:
            if tensor >= 0:
                allocate(tensor, position)
        for tensor in node.inputs:
            if tensor >= 0:
                key = root(tensor)
                working[key] -= 1
                if working[key] == 0:
                    deallocate(key, position)
    return {
        (subgraph.index, t.index): TensorLifetime(
            subgraph.index,
            t.index,
            alloc.get(t.index, NEVER_FREED),
            dealloc.get(t.index, NEVER_FREED),
            alias_of=root(t.index) if t.index in alias else None,
        )
        for t in subgraph.tensors
    }


def _litert_inplace_aliases(
    subgraph: Subgraph, nodes: Sequence[Operator], full_counts: Mapping[int, int]
) -> dict[int, int]:
    """IdentifyInPlaceTensors: output 0 of an in-place op → the input whose bytes it reuses."""
    alias: dict[int, int] = {}
    inputs = {t for t in subgraph.inputs if t >= 0}
    outputs = {t for t in subgraph.outputs if t >= 0}
    tensors = subgraph.tensors

    def root(tensor: int) -> int:
        while tensor in alias:
            tensor = alias[tensor]
        return tensor

    for node in nodes:
        flags = LITERT_INPLACE_FLAGS.get(node.opcode, 0)
        if not flags or not node.outputs or node.outputs[0] < 0:
            continue
        out = node.outputs[0]
        modifies = not flags & INPLACE_DATA_UNMODIFIED
        chosen = None
        for slot, bit in enumerate(_SHARED_INPUT_BITS[: len(node.inputs)]):
            candidate = node.inputs[slot]
            if candidate < 0 or not flags & bit:
                continue
            if _input_can_be_shared(
                tensors[candidate],
                target=tensors[out],
                modifies=modifies,
                full_count=full_counts.get(candidate, 0),
                graph_inputs=inputs,
                graph_outputs=outputs,
            ):
                chosen = candidate
                break
        if chosen is None:
            continue
        base = root(chosen)
        if modifies and full_counts.get(base, 0) > 1:
            continue
        if base == out:
            # An operator that writes the tensor it reads (RESHAPE a -> a), directly or through
            # earlier aliases: already sharing; an edge to itself would make root() loop forever.
            continue
        alias[out] = base
    return alias


def _input_can_be_shared(
    source: Tensor,
    *,
    target: Tensor,
    modifies: bool,
    full_count: int,
    graph_inputs: set[int],
    graph_outputs: set[int],
) -> bool:
    """ArenaPlanner::InputTensorCanBeShared, for tensors as the flatbuffer describes them."""
    if modifies and (
        source.packed_nbytes != target.packed_nbytes or source.packed_nbytes <= 4 or full_count > 1
    ):
        return False
    if source.index in graph_inputs or target.index in graph_outputs:
        return False
    # The runtime compares allocation types (not element types): equal, or the input is ArenaRw.
    source_allocation = litert_build_allocation(source)
    return source_allocation in (litert_build_allocation(target), "arena_rw")
