"""What a CALL_ONCE does to the heap, from LiteRT's sources (*tflite/kernels/call_once.cc,
tflite/experimental/resource/initialization_status.cc, tflite/core/subgraph.cc,
tflite/arena_planner.cc*), with the builtin kernels and under XNNPACK.

* **Interpreter(...)**: the parser's `TfLiteCallOnceParams` (4 B) and Init's `OpData` (4 B:
  the init subgraph's index), in heap_kernels.
* **Prepare** (inside `allocate_tensors()`, for a CALL_ONCE in a subgraph it prepares):
  `GetInitializationStatus` finds the init subgraph's entry in the interpreter's one
  `InitializationStatusMap` (an `unordered_map<int32, unique_ptr<InitializationStatus>>`), or
  makes it: `new InitializationStatus` (16 B: a vtable and a flag), then the map's node (24 B:
  the next pointer, the key and the pointer; std::hash<int> is not cached), then, at the
  first entry, its bucket array (13 buckets). The init subgraph itself is not prepared.
* **first Eval**: once per init subgraph in the interpreter's life (the status's flag):
  `init.AllocateTensors()` prepares and plans it as allocate_tensors() would (its nodes'
  Prepare, the ArenaPlanner and its bookkeeping, both arenas committed; ExecuteAllocations'
  `tensors_allocated` vector, one int per tensor its nodes make, is held over the commit),
  `init.Invoke()` runs it on the interpreter's back end and variables, then
  `ReleaseNonPersistentMemory()` frees its arena: its persistent arena and everything else
  stay. A second CALL_ONCE of the same init subgraph (or a later turn of a loop around it)
  does nothing.

Under XNNPACK (the delegated view, heap_xnnpack): the init's delegate kernels were built with
every other subgraph's, but are first reshaped here, in its AllocateTensors' node Prepares
(xnnpack_delegate.cc Subgraph::Prepare → runtime.c xnn_reshape_runtime): each kernel's
operators' reshape-time blocks (an average pooling's or reduction's buffers ...: left out of
setup's objects) and indirection buffers, then its memory plan's tracker and scratch and,
where its plan is larger, the delegate's shared workspace grown (`KernelReshape.steps`, on the
workspace the state carries), all before the planner's commit; its Invoke then makes the
variables it assigns (heap_resources).

An init subgraph that runs other subgraphs (a CALL_ONCE, IF or WHILE of its own) would have its
AllocateTensors prepare those too: not replayed, its CALL_ONCE keeps heap_invoke's labelled
bound (under XNNPACK the model keeps the delegate's bound: xnnpack_subgraphs).

Traced on the 2.3.0 wheel (`python -m tests.litert_heap_trace`) on a CALL_ONCE whose init
adds two constants and assigns the result to a variable: `GetInitializationStatus` 16, 24,
104 at allocate; at invoke the init's Prepare and planner blocks, its arenas, the variable,
then its arena freed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, ClassVar, Protocol

from arenalens.ir import Model
from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.heap_control_flow import ControlFlowRun, Replayed
from arenalens.runtimes.litert.heap_interpreter import (
    ARENA_ALIGNMENT,
    Block,
    allocation_blocks,
    arena_request,
    bucket_count,
)
from arenalens.runtimes.litert.heap_xnnpack_reshape import KernelReshape
from arenalens.runtimes.litert.prepare.state import PreparedSubgraph, RuntimeNode
from arenalens.runtimes.litert.rules import LiteRtSubgraphPlan, litert_plans

CALL_ONCE = "CALL_ONCE"
_INDEX = "init_subgraph_index"
STATUS_BYTES = 16  # sizeof(InitializationStatus): the ResourceBase vtable and a bool
STATUS_NODE_BYTES = 24  # _Hash_node<pair<const int, unique_ptr<...>>>, hash not cached
_SITE = "GetInitializationStatus (CALL_ONCE Prepare)"
_INDEX_BYTES = 4  # the int32 tensor indices of ExecuteAllocations' vector
# CpuBackendContext::GetFromContext's blocks in allocation_blocks: made once per interpreter.
_BACKEND_SITE = "CpuBackendContext::GetFromContext (Prepare)"


class Heap(Protocol):
    """heap_invoke's running heap: blocks taken and given back, in usable bytes."""

    def take(self, usable: int) -> None: ...

    def give(self, usable: int) -> None: ...


class BackendLike(Protocol):
    """heap_invoke.BackendState as read here: whether the CPU back end exists and which init
    subgraphs ran (the interpreter's InitializationStatusMap flags)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def backend(self) -> bool: ...

    @property
    def initialized(self) -> frozenset[int]: ...

    @property
    def workspace(self) -> int: ...


def init_index(model: Model, prepared: PreparedSubgraph, node: RuntimeNode) -> int:
    """The init subgraph a CALL_ONCE node names (-1: none)."""
    operator = model.subgraphs[prepared.index].operators[node.operator]
    value = operator.options.get(_INDEX, -1)
    return value if isinstance(value, int) else -1


def prepared_entries(model: Model) -> tuple[int, ...]:
    """The init subgraphs whose status allocate_tensors() makes: those named by a CALL_ONCE in
    a subgraph it prepares, once each, in the order it prepares them."""
    found: list[int] = []
    for plan in litert_plans(model):
        if not plan.prepared.allocated_by_allocate_tensors:
            continue
        for node in plan.prepared.nodes:
            if node.opcode == CALL_ONCE:
                index = init_index(model, plan.prepared, node)
                if index not in found:
                    found.append(index)
    return tuple(found)


def status_map_blocks(model: Model) -> list[Block]:
    """The InitializationStatusMap's blocks allocate_tensors() leaves: per entry its status
    and node, and the bucket array once there is one."""
    entries = len(prepared_entries(model))
    blocks = [Block("kernel state", _SITE, request) for request in _entry_requests(entries)]
    buckets = bucket_count(entries)
    if buckets > 1:
        blocks.append(Block("kernel state", _SITE, 8 * buckets))
    return blocks


def _entry_requests(entries: int) -> list[int]:
    return [STATUS_BYTES, STATUS_NODE_BYTES] * entries


@dataclass(frozen=True, slots=True)
class InitSubgraph:
    """An init subgraph as its CALL_ONCE's first Eval allocates it: its prepared state, the
    usable bytes AllocateTensors keeps (arenas included), its arena block (freed after the
    run), ExecuteAllocations' vector held over the commit, and whether every block is
    replayed."""

    prepared: PreparedSubgraph
    kept: int
    arena_block: int
    allocated_vector: int
    exact: bool
    creates_backend: int  # the CPU back end's blocks, when an ADD_N's Prepare makes it here
    # Under XNNPACK, its delegate kernels' first reshapes, in plan order (heap_xnnpack_reshape).
    reshapes: tuple[KernelReshape, ...] = ()


def init_subgraphs(
    model: Model,
    arena_sizes: Sequence[int],
    reshapes: Callable[[int], Mapping[int, KernelReshape]] | None = None,
) -> Mapping[int, InitSubgraph]:
    """Every subgraph a CALL_ONCE names that allocate_tensors() left unprepared, as its first
    Eval allocates it (`arena_sizes`: each subgraph's arena and persistent arena high-water
    marks, `rules.arenas` order). Under XNNPACK `model` is the delegated view and `reshapes`
    gives a subgraph's delegate kernels' reshapes: an init with an indirection buffer not
    modelled is left out (bounded; xnnpack_subgraphs takes no such init)."""
    plans = litert_plans(model)
    named = {
        init_index(model, plan.prepared, node)
        for plan in plans
        for node in plan.prepared.nodes
        if node.opcode == CALL_ONCE
    }
    found = {}
    for index in sorted(named):
        if not 0 <= index < len(plans) or plans[index].prepared.allocated_by_allocate_tensors:
            continue
        if _calls_subgraphs(model, index):
            continue
        kernels = tuple(reshapes(index).values()) if reshapes is not None else ()
        if all(kernel.indirection_modelled for kernel in kernels):
            found[index] = replace(_allocated(model, plans[index], arena_sizes), reshapes=kernels)
    return MappingProxyType(found)


def _calls_subgraphs(model: Model, index: int) -> bool:
    """Whether an init subgraph runs other subgraphs (CALL_ONCE, IF, WHILE, a composite ...):
    its AllocateTensors would prepare them too, which is not replayed here (its CALL_ONCE
    keeps heap_invoke's bound)."""
    return any(
        "subgraph_ind" in key
        for operator in model.subgraphs[index].operators
        for key in operator.options
    )


def _allocated(model: Model, plan: LiteRtSubgraphPlan, arena_sizes: Sequence[int]) -> InitSubgraph:
    prepared = plan.prepared
    index = prepared.index
    arena = arena_sizes[2 * index] if 2 * index < len(arena_sizes) else 0
    persistent = arena_sizes[2 * index + 1] if 2 * index + 1 < len(arena_sizes) else 0
    requests = [
        (f"subgraph {index} {name}", arena_request(size))
        for name, size in (("arena", arena), ("persistent arena", persistent))
        if size > 0
    ]
    blocks = allocation_blocks(
        model,
        [replace(prepared, allocated_by_allocate_tensors=True)],
        [len(plan.order.aliases)],
        requests,
        [(len(plan.order.arena_order), len(plan.order.persistent_order))],
    )
    backend = sum(block.usable for block in blocks if block.site == _BACKEND_SITE)
    count = sum(
        len({tensor for tensor in (*node.outputs, *node.temporaries) if tensor >= 0})
        for node in prepared.nodes
    )
    return InitSubgraph(
        prepared,
        sum(block.usable for block in blocks),
        glibc.aligned_usable(ARENA_ALIGNMENT, arena_request(arena)) if arena > 0 else 0,
        glibc.usable(_INDEX_BYTES * count) if count else 0,
        all(block.exact for block in blocks),
        backend,
    )


def call_once_eval(
    heap: Heap,
    model: Model,
    prepared: PreparedSubgraph,
    node: RuntimeNode,
    *,
    inits: Mapping[int, InitSubgraph],
    state: BackendLike,
    replay: Callable[[PreparedSubgraph, object], Replayed],
) -> ControlFlowRun | None:
    """A CALL_ONCE's Eval replayed on `heap` (see the module's notes): nothing where its init
    subgraph ran before (`state.initialized`); else AllocateTensors' blocks (the back end's left
    out where it exists), the vector held over the commit, the init's run on the back end and
    variables `state` holds, its arena freed. None where the init subgraph is not one
    `inits` replays (its first Eval is bounded)."""
    index = init_index(model, prepared, node)
    found = inits.get(index)
    if found is None:
        return None
    if index in state.initialized:
        return ControlFlowRun(True, (), True, 0, state)
    # PrepareOpsAndTensors: its nodes' Prepare (a delegate kernel's reshape: indirection
    # buffers, then its memory plan on the delegate's shared workspace) before the commit.
    heap.take(found.kept - (found.creates_backend if state.backend else 0) - found.arena_block)
    workspace = state.workspace
    for kernel in found.reshapes:
        # Its operators' other reshape-time blocks, kept (made with its indirection buffers).
        heap.take(kernel.operator_blocks)
        steps, workspace = kernel.steps(workspace)
        for step in steps:
            if step > 0:
                heap.take(step)
            else:
                heap.give(-step)
    heap.take(found.allocated_vector)
    heap.take(found.arena_block)
    heap.give(found.allocated_vector)
    made = state.backend or found.creates_backend > 0
    inner = replay(
        found.prepared,
        replace(state, backend=made, initialized=state.initialized | {index}, workspace=workspace),
    )
    heap.take(inner.peak)
    heap.give(inner.peak - inner.kept)
    heap.give(found.arena_block)
    scratch = all(kernel.scratch_exact for kernel in found.reshapes)  # else a bound (its peak)
    return ControlFlowRun(
        inner.exact and found.exact,
        (*inner.estimated, *(() if found.exact else (CALL_ONCE,))),
        inner.peak_exact and found.exact and scratch,
        0,
        inner.backend_after,
    )
