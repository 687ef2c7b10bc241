"""The re-plan a LiteRT interpreter's first invoke makes where allocate_tensors() stopped early:
a rank-0 READ_VARIABLE's output is dynamic (sized at Eval), so Prepare ends its chunk there and
the nodes after it are prepared and planned at the first invoke.

Source: *tflite/core/subgraph.cc* (AllocateTensors → PrepareOpsAndTensors, whose
PrepareOpsStartingAt stops after a node with a dynamic output; InvokeImpl prepares the rest at
the next node: PrepareOpsAndTensors again), *tflite/arena_planner.cc* (ExecuteAllocations,
CalculateAllocations, GetTensorsToAllocate), *tflite/simple_memory_arena.cc*
(PurgeActiveAllocs, Allocate's sorted insert, Commit → ResizableAlignedBuffer::Resize).

After setup each arena holds the high-water mark of the first chunk's tensors only, and
ArenaPlanner's per-tensor vectors the tensors there were then. At the first node of each later
chunk, in order (the 2.3.0 wheel's trace of var7_10, block by block):

1. each node of the chunk is prepared: EnsureTensorsVectorCapacity and the tensors its Prepare
   adds may grow the tensors' vector (heap_interpreter.tensors_growth), then what its Prepare
   keeps (heap_interpreter.node_prepare_blocks: a FULLY_CONNECTED adds six tensors, an int8
   one with per-channel weights keeps two vectors, an int8 SOFTMAX its table);
2. ExecuteAllocations resizes alloc_node_, dealloc_node_ and allocs_ to the tensors there are
   now (past the capacity, libstdc++ grows to size + max(size, added)); GetTensorsToAllocate
   reserves one int per tensor (freed when CalculateAllocations returns), CalculateAllocations
   one per tensor of the chunk's nodes (`tensors_allocated`, freed when ExecuteAllocations
   returns);
3. the arena drops its allocations that ended before the chunk (PurgeActiveAllocs) and inserts
   each new one in its sorted vector, which doubles when full (the new block taken before the
   old is freed); the persistent arena's vector is never purged;
4. Commit grows each arena to its new high-water mark: the new block is allocated and the old
   copied into it before it is freed, the moment both are live.

Under XNNPACK (the delegated view's plan) a delegate kernel among the later nodes is prepared
there too: its Prepare reshapes its runtime, plans its memory and may grow the delegate's
shared workspace (heap_xnnpack_reshape, step 1's Prepare); the workspace after setup holds the
plans of the kernels allocate_tensors() prepared only.

Replayed exactly where each chunk ends at a rank-0 READ_VARIABLE whose output no later node
reads (else the later nodes' shapes follow the variable's, which the flatbuffer does not give),
the later nodes make no temporaries (their sets and index arrays) and no CPU back end, each
later delegate kernel's reshape is replayed (`reshapes`: none with an operator's own reshape
blocks), and no kernel's Eval grows the tensors' vector after the re-plan; elsewhere the
re-plan stays an upper bound (heap_resources.VariableReplay).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.ir import Model, Subgraph
from arenalens.planning.registry import run_planner
from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.heap_interpreter import (
    ALLOC_INTERVAL_BYTES,
    ARENA_ALIGNMENT,
    TENSOR_STRUCT_BYTES,
    TENSORS_CAPACITY_HEADROOM,
    arena_request,
    capacity_after_init,
    node_prepare_blocks,
    prepare_added,
    tensor_capacity_after_prepare,
    tensors_growth,
    vector_capacity_after_push_backs,
)
from arenalens.runtimes.litert.heap_kernels import DELEGATE_OPCODE, PREPARE_CREATES_CPU_BACKEND
from arenalens.runtimes.litert.heap_xnnpack_reshape import KernelReshape, setup_workspace
from arenalens.runtimes.litert.planner import plan_order
from arenalens.runtimes.litert.prepare.state import PreparedSubgraph, RuntimeNode, RuntimeTensor
from arenalens.runtimes.litert.rules import (
    RUNTIME_PLANNER,
    LiteRtSubgraphPlan,
    arena_problem,
    litert_plans,
)

INDEX_BYTES = 4  # the int32 tensor indices of ArenaPlanner's two vectors


@dataclass(frozen=True, slots=True)
class ChunkPlan:
    """What one ExecuteAllocations call placed: its nodes, the tensors each arena placed in it,
    each placed arena tensor's last node, and the arenas' high-water marks after it."""

    first: int
    last: int
    arena_placed: int
    persistent_placed: int
    arena_last_nodes: tuple[int, ...]  # of the arena tensors placed in this chunk
    arena_high_water: int
    persistent_high_water: int


@dataclass(frozen=True, slots=True)
class Replan:
    """A subgraph's chunks, whether the first invoke's re-plan is replayed (heap_replan's
    docstring) and, where it is, its steps by the node that starts each later chunk."""

    chunks: tuple[ChunkPlan, ...]
    exact: bool
    steps_at: Mapping[int, tuple[int, ...]]  # node position → usable-byte steps (+ taken)
    # The delegate kernels (operator indices) the first invoke prepares, where replayed.
    later_kernels: frozenset[int] = frozenset()

    @property
    def setup(self) -> ChunkPlan:
        """What allocate_tensors() planned: the first chunk."""
        return self.chunks[0]

    @property
    def later_first_node(self) -> int | None:
        """The first node left to the first invoke where that is replayed, else None."""
        return self.chunks[1].first if self.exact and len(self.chunks) > 1 else None

    def steps(self, node: RuntimeNode) -> tuple[int, ...]:
        """The usable-byte steps (positive taken, negative freed) of the re-plan made before
        `node` runs, when it starts a later chunk (none otherwise)."""
        return self.steps_at.get(node.position, ())


def replan(
    prepared: PreparedSubgraph,
    subgraph: Subgraph,
    reshapes: Mapping[int, KernelReshape] = MappingProxyType({}),
) -> Replan:
    """The subgraph's chunks as ArenaPlanner plans them, and the re-plan's steps where they
    are replayed. `reshapes`: under XNNPACK, each delegate kernel's reshape by its operator
    (heap_xnnpack_reshape.kernel_reshapes; a later kernel without one keeps the bound)."""
    order = plan_order(prepared)
    plan = LiteRtSubgraphPlan(prepared, order)
    arena = _offsets_end(plan, persistent=False)
    persistent = _offsets_end(plan, persistent=True)
    chunks = []
    arena_high = persistent_high = 0
    for number, (first, last) in enumerate(prepared.chunks):
        placed = [t for t in order.arena_order if order.chunk_of[t] == number]
        kept = [t for t in order.persistent_order if order.chunk_of[t] == number]
        arena_high = max([arena_high, *(arena[t] for t in placed)])
        persistent_high = max([persistent_high, *(persistent[t] for t in kept)])
        chunks.append(
            ChunkPlan(
                first,
                last,
                len(placed),
                len(kept),
                tuple(order.dealloc[t] for t in placed),
                arena_high,
                persistent_high,
            )
        )
    exact = _replayable(prepared, reshapes)
    later = frozenset(
        node.operator
        for node in prepared.nodes[prepared.chunks[0][1] + 1 :]
        if node.opcode == DELEGATE_OPCODE and exact
    )
    steps = _replayed_steps(prepared, subgraph, tuple(chunks), reshapes, later) if exact else {}
    return Replan(tuple(chunks), exact, MappingProxyType(steps), later)


def _replayed_steps(
    prepared: PreparedSubgraph,
    subgraph: Subgraph,
    chunks: tuple[ChunkPlan, ...],
    reshapes: Mapping[int, KernelReshape],
    later: frozenset[int],
) -> dict[int, tuple[int, ...]]:
    """Each later chunk's re-plan (the module docstring's steps 1-4), by its first node."""
    workspace = setup_workspace(reshapes, later)  # the delegate's, as allocate_tensors() left it
    setup_nodes = prepared.nodes[: chunks[0].last + 1]
    capacity, size = capacity_after_init(prepared.model_tensor_count, prepared.init_added)
    _, capacity, size = tensors_growth(prepared, setup_nodes, capacity, size)
    # PlanAllocations sized its vectors for the tensors after the first chunk (`planned`).
    planned = vectors = size
    found = {}
    for number in range(1, len(chunks)):
        chunk, steps = chunks[number], []
        for node in prepared.nodes[chunk.first : chunk.last + 1]:
            grown, capacity, size = tensors_growth(prepared, (node,), capacity, size)
            for old, new in grown:  # the vector reallocated: the new block before the old goes
                steps += [glibc.usable(TENSOR_STRUCT_BYTES * new)]
                steps += [-glibc.usable(TENSOR_STRUCT_BYTES * old)]
            if node.opcode == DELEGATE_OPCODE:
                reshaped, workspace = reshapes[node.operator].steps(workspace)
                steps += reshaped
                continue
            steps += [block.usable for block in node_prepare_blocks(subgraph, node)]
        if size > vectors:  # ExecuteAllocations resizes alloc_node_, dealloc_node_, allocs_
            grown_to = planned + max(planned, size - planned)  # _M_default_append
            for entry in (INDEX_BYTES, INDEX_BYTES, ALLOC_INTERVAL_BYTES):
                steps += [glibc.usable(entry * grown_to), -glibc.usable(entry * vectors)]
            vectors = grown_to
        planned = size
        to_allocate = glibc.usable(INDEX_BYTES * size)
        count = _chunk_tensor_count(prepared.nodes[chunk.first : chunk.last + 1])
        allocated = glibc.usable(INDEX_BYTES * count) if count else 0
        steps += [to_allocate, allocated, *_insert_steps(chunks[:number], chunk), -to_allocate]
        steps += _commit_steps(chunks[number - 1].arena_high_water, chunk.arena_high_water)
        steps += _commit_steps(
            chunks[number - 1].persistent_high_water, chunk.persistent_high_water
        )
        steps += [-allocated]
        found[chunk.first] = tuple(step for step in steps if step)
    return found


def bounded_reads(model: Model) -> bool:
    """A rank-0 READ_VARIABLE with an operator after it in subgraph 0 whose re-plan at the
    first invoke (builtin kernels) is bounded, not replayed; a read that ends the graph
    re-plans nothing."""
    subgraph, operators = model.subgraphs[0], model.subgraphs[0].operators
    inner = any(
        operator.opcode == "READ_VARIABLE"
        and operator.outputs
        and operator.outputs[0] >= 0
        and not subgraph.tensors[operator.outputs[0]].shape
        and position < len(operators) - 1
        for position, operator in enumerate(operators)
    )
    return inner and not replan(litert_plans(model)[0].prepared, subgraph).exact


def _offsets_end(plan: LiteRtSubgraphPlan, *, persistent: bool) -> dict[int, int]:
    """Each placed tensor's end (offset + bytes) as the runtime's planner places it."""
    problem = arena_problem(plan, ARENA_ALIGNMENT, persistent=persistent).problem
    offsets = run_planner(RUNTIME_PLANNER, problem).offsets
    return {buffer.id: offsets[buffer.id] + buffer.size for buffer in problem.buffers}


def _replayable(prepared: PreparedSubgraph, reshapes: Mapping[int, KernelReshape]) -> bool:
    """Every chunk but the last ends at a rank-0 READ_VARIABLE no later node reads; the later
    nodes make no temporaries and no CPU back end, each delegate kernel's reshape is replayed
    (`reshapes`), and any tensors their Prepare adds have no dims; and no kernel's Eval grows
    the tensors' vector after the re-plan (heap_invoke grows it at the first kernel's)."""
    for _, last in prepared.chunks[:-1]:
        end = prepared.nodes[last]
        if end.opcode != "READ_VARIABLE" or not end.dynamic_output or not end.outputs:
            return False
        if any(end.outputs[0] in node.inputs for node in prepared.nodes[last + 1 :]):
            return False
    later = prepared.nodes[prepared.chunks[0][1] + 1 :]
    added = sum(prepare_added(prepared, node) for node in later)
    capacity = tensor_capacity_after_prepare(prepared)
    return (
        not any(node.temporaries or node.opcode in PREPARE_CREATES_CPU_BACKEND for node in later)
        and all(
            node.operator in reshapes and reshapes[node.operator].replayed
            for node in later
            if node.opcode == DELEGATE_OPCODE
        )
        and all(
            tensor.shape is None for tensor in prepared.tensors[len(prepared.tensors) - added :]
        )
        and len(prepared.tensors) + TENSORS_CAPACITY_HEADROOM <= capacity
    )


def _last(tensors: tuple[RuntimeTensor, ...], count: int) -> tuple[RuntimeTensor, ...]:
    return tensors[len(tensors) - count :]


def _chunk_tensor_count(nodes: tuple[RuntimeNode, ...]) -> int:
    """GetTensorsToAllocate's entries: each node's set of outputs and temporaries."""
    return sum(
        len({index for index in (*node.outputs, *node.temporaries) if index >= 0}) for node in nodes
    )


def _insert_steps(done: tuple[ChunkPlan, ...], chunk: ChunkPlan) -> Iterator[int]:
    """The two arenas' sorted vectors of active allocations growing as the chunk's tensors go
    in (the arena's first purged of those ended before the chunk)."""
    arena_live = sum(
        1 for previous in done for last in previous.arena_last_nodes if last >= chunk.first
    )
    arena_capacity = _capacity_after(done, persistent=False)
    yield from _growth(arena_live, arena_capacity, chunk.arena_placed)
    persistent_live = sum(previous.persistent_placed for previous in done)
    persistent_capacity = _capacity_after(done, persistent=True)
    yield from _growth(persistent_live, persistent_capacity, chunk.persistent_placed)


def _capacity_after(done: tuple[ChunkPlan, ...], *, persistent: bool) -> int:
    """The vector's capacity after the chunks `done` (the first fills it from empty)."""
    capacity = 0
    for number, chunk in enumerate(done):
        if persistent:
            live = sum(previous.persistent_placed for previous in done[:number])
            added = chunk.persistent_placed
        else:
            live = sum(
                1
                for previous in done[:number]
                for last in previous.arena_last_nodes
                if last >= chunk.first
            )
            added = chunk.arena_placed
        if number == 0:
            capacity = vector_capacity_after_push_backs(added)
            continue
        for size in range(live, live + added):
            if size == capacity:
                capacity = max(1, 2 * capacity)
    return capacity


def _growth(live: int, capacity: int, added: int) -> Iterator[int]:
    """A vector of `live` of `capacity` entries taking `added` more: the reallocations."""
    for size in range(live, live + added):
        if size == capacity:
            grown = max(1, 2 * capacity)
            yield glibc.usable(ALLOC_INTERVAL_BYTES * grown)
            if capacity:
                yield -glibc.usable(ALLOC_INTERVAL_BYTES * capacity)
            capacity = grown


def _commit_steps(before: int, after: int) -> Iterator[int]:
    """ResizableAlignedBuffer::Resize: a larger block taken, the old one freed after the copy."""
    if after <= before:
        return
    yield glibc.aligned_usable(ARENA_ALIGNMENT, arena_request(after))
    if before:
        yield -glibc.aligned_usable(ARENA_ALIGNMENT, arena_request(before))
