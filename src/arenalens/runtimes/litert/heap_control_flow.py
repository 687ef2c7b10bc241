"""What an IF or a WHILE does to the heap in the first `invoke()`, from LiteRT's sources
(*tflite/kernels/if.cc, while.cc, control_flow_common.h; tflite/core/subgraph.cc*), with the
builtin kernels alone or over the XNNPACK delegate's plan.

Both kernels' Prepare (inside `allocate_tensors()`) already allocated their children (IF: both
branches; WHILE: the condition and the body): each child's arena is in the setup's blocks. Their
first Eval, body outputs static:

* **IF** (`Eval_static`): the inputs' indices in a vector; each branch input resized to the
  caller's dims (`ResizeInputTensor`: the branch's inputs hold no data since Prepare, so the
  branch turns uninvokable and gets new dims, the old freed) through a vector of those dims;
  `AllocateTensors()` prepares the branch again (each node's output dims made anew, the old
  freed; the planner's two vectors of tensors to place; over a delegated plan, the set of
  delegated nodes whose temporaries it frees) on the arena it already has; the IF's outputs get
  the branch outputs' dims; the branch runs; `ReleaseMemory()` frees its arena (its persistent
  arena stays). Which branch runs is the condition's value at run time: both are replayed and
  the larger of each figure counted (exact where the two agree, else a bound that says so);
  the operators after the IF run on what both branches made (`_made_by_both`: a kernel after
  it makes what the branch that ran did not, counted whichever ran).
* **WHILE** (`Eval_static`): `AllocateTensors()` on both children does nothing (they are
  invokable since Prepare); the inputs are copied into the condition's inputs and the outputs
  (dims copied: the same sizes); the condition runs, then the body, as many turns as the
  condition says: the first turn of each is where their kernels make what they keep (ruy's
  buffers, a delegate kernel's external values, set once: the body's inputs share the WHILE's
  outputs and the condition's are its own, so no pointer changes after), later turns add
  nothing. Whether the body runs at all is the condition's first check: known where the
  values it reads are constants or folded in Prepare (`RuntimeNode.first_check`: the body's
  run replayed or not, exact either way), else a run-time value: both replayed and the larger
  of each figure counted (a body that never runs leaves its own children's arenas allocated;
  one that runs keeps what its kernels make), exact where the two agree, else a bound that
  says so. Then `ReleaseMemory()` frees both children's arenas.

A child that was released earlier in the same invoke (an IF inside a WHILE body, run each
turn) commits its arena again before it runs. The children run on what the parent's run left
(heap_invoke.BackendState): the CPU back end's context and ruy's allocator, and the
interpreter's resource variables (heap_resources: a child's ASSIGN_VARIABLE makes its variable
the first time it runs; a WHILE body's turns after the first assign the same bytes). Children
with dynamic outputs (`Eval_dynamic`: tensors resized and copied each turn) are not replayed
(`dynamic_control_flow`: no figure).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Protocol

from arenalens.ir import Model
from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.heap_interpreter import ARENA_ALIGNMENT, int_array_bytes
from arenalens.runtimes.litert.heap_invoke_state import BackendState
from arenalens.runtimes.litert.heap_kernels import DELEGATE_OPCODE
from arenalens.runtimes.litert.prepare.state import Allocation, PreparedSubgraph, RuntimeNode
from arenalens.runtimes.litert.rules import litert_plans

CONTROL_FLOW_REPLAYED = frozenset({"IF", "WHILE"})
# What an IF whose branches hold different bytes is counted as (its condition is a run-time
# value: either branch may run, at any turn of a loop around it).
_EITHER = "IF (either branch may run: the larger of each figure)"
# What a WHILE whose first check is a run-time value is counted as (its body may run or not).
_TURNS = "WHILE (its body may run or not: the larger of each figure)"
# The children each kernel names in its options, in the order its Eval runs them first.
_CHILDREN = {
    "IF": ("then_subgraph_index", "else_subgraph_index"),
    "WHILE": ("cond_subgraph_index", "body_subgraph_index"),
}
# The ways run-time values pick, given: by (subgraph index, node position), an IF's then branch
# (True) or else branch, whether a WHILE's body runs, whether a FULLY_CONNECTED that unpacks an
# int4 filter reads an input that is not all zeros (heap_invoke; absent: counted, a bound).
# An IF that takes both branches in turn (in a loop's body): the branches in order.
Ways = Mapping[tuple[int, int], bool | tuple[bool, ...]]
NO_WAYS: Ways = MappingProxyType({})
# Subgraph::AllocateTensors over a delegated plan: the unordered_set of delegated node indices
# (its node and its bucket array), freed at once.
_DELEGATED_SET_REQUESTS = (16, 104)


class Heap(Protocol):
    """heap_invoke's running heap: blocks taken and given back, in usable bytes."""

    def take(self, usable: int) -> None: ...

    def give(self, usable: int) -> None: ...


class Replayed(Protocol):
    """A child's first run as heap_invoke replays it (its FirstInvoke)."""

    @property
    def kept(self) -> int: ...

    @property
    def peak(self) -> int: ...

    @property
    def exact(self) -> bool: ...

    @property
    def estimated(self) -> tuple[str, ...]: ...

    @property
    def peak_exact(self) -> bool: ...

    @property
    def released(self) -> int: ...

    @property
    def backend_after(self) -> object: ...


@dataclass(frozen=True, slots=True)
class Decomposition:
    """A subgraph allocate_tensors() prepared besides subgraph 0 (a composite's decomposition,
    an IF's branch, a WHILE's condition or body): its prepared state and the usable bytes of
    its arena block, which the Eval that runs it releases."""

    prepared: PreparedSubgraph
    arena_block: int


def decompositions(
    prepared: Sequence[PreparedSubgraph], arena_requests: Sequence[int]
) -> Mapping[int, Decomposition]:
    """Every subgraph a composite's or a control flow's Prepare may have allocated (not
    subgraph 0), with its arena block (`arena_requests`: each subgraph's arena request, 0 for
    none)."""
    found = {}
    for subgraph in prepared[1:]:
        if not subgraph.allocated_by_allocate_tensors:
            continue
        request = arena_requests[subgraph.index] if subgraph.index < len(arena_requests) else 0
        block = glibc.aligned_usable(ARENA_ALIGNMENT, request) if request else 0
        found[subgraph.index] = Decomposition(subgraph, block)
    return MappingProxyType(found)


@dataclass(frozen=True, slots=True)
class ControlFlowRun:
    """What an IF's or WHILE's first Eval leaves to its subgraph's replay (its blocks are on
    the heap already): the operators its children count at a bound, whether every block at
    its peak is replayed, and the setup blocks (children's arenas) it frees."""

    exact: bool
    estimated: tuple[str, ...]
    peak_exact: bool
    released: int
    state: object  # the CPU back end's state after it (heap_invoke.BackendState)


@dataclass(frozen=True, slots=True)
class _Children:
    """The children of one control-flow node and how to replay one."""

    indices: tuple[int, ...]
    allocated: Mapping[int, Decomposition]
    replay: Callable[[PreparedSubgraph, object], Replayed]


def children(model: Model, prepared: PreparedSubgraph, node: RuntimeNode) -> tuple[int, ...]:
    """The subgraphs an IF (then, else) or WHILE (cond, body) node names, in that order."""
    operator = model.subgraphs[prepared.index].operators[node.operator]
    return tuple(
        int(operator.options.get(field, -1) or 0) for field in _CHILDREN.get(node.opcode, ())
    )


def control_flow_eval(
    heap: Heap,
    model: Model,
    prepared: PreparedSubgraph,
    node: RuntimeNode,
    *,
    allocated: Mapping[int, Decomposition],
    replay: Callable[[PreparedSubgraph, object], Replayed],
    released: set[int],
    state: object,
    ways: Ways = NO_WAYS,
) -> ControlFlowRun | None:
    """An IF's or WHILE's first Eval replayed on `heap` (see the module's notes); None where it
    is not replayed: a child not allocated, or one with dynamic outputs. `state`: what the
    parent's run left (heap_invoke.BackendState), which each child's replay takes and gives
    back. `ways`: the way a run-time value picks, given (heap_ways), by (subgraph, position):
    an IF's then branch (True) or else branch, a WHILE's body run or not; replayed that way
    only, exactly."""
    indices = children(model, prepared, node)
    if len(indices) != 2 or node.eval_dynamic or any(i not in allocated for i in indices):
        return None
    named = _Children(indices, allocated, replay)
    way = ways.get((prepared.index, node.position))
    if node.opcode == "IF":
        if way is not None:
            return _if_given(heap, prepared, node, named, way, released=released, state=state)
        return _if_eval(heap, prepared, node, named, released=released, state=state)
    return _while_eval(
        heap, node, named, released=released, state=state,
        way=way if isinstance(way, bool) else None,
    )  # fmt: skip


def _if_given(
    heap: Heap,
    prepared: PreparedSubgraph,
    node: RuntimeNode,
    named: _Children,
    way: bool | tuple[bool, ...],
    *,
    released: set[int],
    state: object,
) -> ControlFlowRun:
    """The branch `way` names run (True: then), or each of several in turn (an IF in a loop's
    body that takes its then branch at the first turn and its else branch after: each one's
    first run, its arena released before the next; later turns add nothing)."""
    runs = []
    for taken in (way,) if isinstance(way, bool) else way:
        index = named.indices[not taken]
        moment = sum(_if_moment(prepared, node, named.allocated[index].prepared))
        heap.take(moment)
        heap.give(moment)
        run = _run_children(heap, replace(named, indices=(index,)), released, state)
        state = run.state
        runs.append(run)
    return ControlFlowRun(
        exact=all(run.exact for run in runs),
        estimated=tuple(name for run in runs for name in run.estimated),
        peak_exact=all(run.peak_exact for run in runs),
        released=sum(run.released for run in runs),
        state=state,
    )


def control_flow_unsized(model: Model) -> tuple[str, ...]:
    """`dynamic_control_flow` on the model's prepared subgraphs (the planner replica's)."""
    if not any(
        operator.opcode in CONTROL_FLOW_REPLAYED
        for subgraph in model.subgraphs
        for operator in subgraph.operators
    ):
        return ()
    return dynamic_control_flow(model, [plan.prepared for plan in litert_plans(model)])


def control_flow_refusal(model: Model) -> str:
    """Why a model with `control_flow_unsized` operators gets no heap figure."""
    return (
        "the interpreter's heap after the first invoke is not sized for "
        f"{', '.join(control_flow_unsized(model))}: LiteRT resizes and copies its values at "
        "every run (Eval_dynamic), so it follows the number of turns or the branch taken, "
        "run-time values"
    )


def dynamic_control_flow(model: Model, prepared: Sequence[PreparedSubgraph]) -> tuple[str, ...]:
    """The IFs and WHILEs that run Eval_dynamic (their children resized and copied at each
    run), as the Prepare replica found them (`RuntimeNode.eval_dynamic`, from while.cc
    Prepare_impl / if.cc Prepare: a body or branch with dynamic tensors, a body that gives a
    loop value another shape than it took, branches of different output shapes): the heap
    after the first invoke follows the number of turns or the branch, run-time values. No
    figure that never falls under can be given for those; one description each."""
    del model  # the reason is on the node
    return tuple(
        f"{node.opcode} in subgraph {state.index} ({node.eval_dynamic})"
        for state in prepared
        for node in state.nodes
        if node.eval_dynamic
    )


def _if_eval(
    heap: Heap,
    prepared: PreparedSubgraph,
    node: RuntimeNode,
    named: _Children,
    *,
    released: set[int],
    state: object,
) -> ControlFlowRun:
    """Both branches replayed on recording heaps from the same back-end state; the one with
    the higher peak is replayed on the heap, then what the other keeps over it (a branch that
    frees a smaller arena, or grows ruy's buffer more), so that both figures bound either
    branch's; called exact only where both hold the same."""
    runs = []
    for index in named.indices:
        branch = _Recording()
        moment = sum(_if_moment(prepared, node, named.allocated[index].prepared))
        branch.take(moment)
        branch.give(moment)
        one = replace(named, indices=(index,))
        runs.append((branch, _run_children(branch, one, set(released), state), index))
    chosen, outcome, index = max(runs, key=lambda run: (run[0].peak, run[0].live))
    chosen.replay_on(heap)
    heap.take(max(run[0].live for run in runs) - chosen.live)  # kept as if never freed
    released.add(index)
    (first, one_way, _), (second, other_way, _) = runs
    # The operators after it run on what both branches made (a kernel after it makes what the
    # branch that ran did not: counted whichever ran).
    after = _made_by_both(one_way.state, other_way.state)
    if (first.peak, first.live) == (second.peak, second.live) and after == outcome.state:
        return outcome
    return replace(
        outcome,
        exact=False,
        estimated=(*outcome.estimated, _EITHER),
        peak_exact=False,
        state=after,
    )


def _made_by_both(first: object, second: object) -> object:
    """The back end's state two ways of a run both leave: the CPU back end and ruy's allocator
    where both made them, ruy's smaller buffer and vector, cpuinfo still to initialize where
    either left it, the variables and run inits both made, the smaller delegate workspace."""
    if not isinstance(first, BackendState) or not isinstance(second, BackendState):
        return first
    (made, size, capacity), (other_made, other_size, other_capacity) = first.ruy, second.ruy
    both = set(second.variables)
    return BackendState(
        first.backend and second.backend,
        first.cpuinfo or second.cpuinfo,
        (made and other_made, min(size, other_size), min(capacity, other_capacity)),
        tuple(item for item in first.variables if item in both),
        first.initialized & second.initialized,
        min(first.workspace, second.workspace),
    )


def _while_eval(
    heap: Heap,
    node: RuntimeNode,
    named: _Children,
    *,
    released: set[int],
    state: object,
    way: bool | None = None,
) -> ControlFlowRun:
    """The condition, then the body if the first check says so (`RuntimeNode.first_check`,
    from the values known before the run: exact either way). Where the first check is a
    run-time value, both are replayed on recording heaps from the same back-end state, the
    one with the higher peak on the heap, then what the other keeps over it: a body that
    never runs leaves its own children's arenas allocated, one that runs keeps what its
    kernels make; called exact only where both hold the same."""
    condition = named.indices[:1]
    first = node.first_check if node.first_check is not None else way
    if first is not None:
        ran = named.indices if first else condition
        return _run_children(heap, named, released, state, ran=ran)
    runs = []
    for ran in (named.indices, condition):
        recording = _Recording()
        runs.append((recording, _run_children(recording, named, set(released), state, ran=ran)))
    chosen, outcome = max(runs, key=lambda run: (run[0].peak, run[0].live))
    chosen.replay_on(heap)
    heap.take(max(run[0].live for run in runs) - chosen.live)  # kept as if never freed
    released.update(named.indices)
    (body, _), (no_body, skipped) = runs
    if (body.peak, body.live) == (no_body.peak, no_body.live):
        return outcome
    # The operators after it run on the back end the condition alone left (what the body's
    # kernels made, a later kernel makes when the body never ran: counted in either case).
    return replace(
        outcome,
        exact=False,
        estimated=(*outcome.estimated, _TURNS),
        peak_exact=False,
        state=skipped.state,
    )


def _if_moment(
    prepared: PreparedSubgraph, node: RuntimeNode, branch: PreparedSubgraph
) -> Iterator[int]:
    """The small blocks live together before the branch runs (an upper bound of that moment:
    each is counted as if all were live at once): the input-index vector, a dims vector and
    the new dims per input, a node's new output dims, the planner's two vectors, the
    delegated-node set."""
    inputs = max(len(node.inputs) - 1, 0)
    yield glibc.usable(4 * inputs) if inputs else 0
    for index in node.inputs[1:]:
        rank = _rank(prepared, index)
        yield glibc.usable(4 * rank) if rank else 0
        yield glibc.usable(int_array_bytes(rank))
    ranks = [_rank(branch, index) for branch_node in branch.nodes for index in branch_node.outputs]
    yield glibc.usable(int_array_bytes(max(ranks, default=0)))
    yield 2 * glibc.usable(4 * max(len(branch.tensors), 1))
    if any(branch_node.opcode == DELEGATE_OPCODE for branch_node in branch.nodes):
        yield sum(glibc.usable(request) for request in _DELEGATED_SET_REQUESTS)


def _rank(prepared: PreparedSubgraph, index: int) -> int:
    tensor = prepared.tensors[index] if 0 <= index < len(prepared.tensors) else None
    return len(tensor.shape or ()) if tensor is not None else 0


def _run_children(
    heap: Heap,
    named: _Children,
    released: set[int],
    state: object,
    *,
    ran: tuple[int, ...] | None = None,
) -> ControlFlowRun:
    """Each child's arena committed again if released before (while.cc Eval: AllocateTensors
    on the condition and the body before the loop, whether the body runs or not), the first
    run of each child that runs (`ran`, all by default: a WHILE whose body never runs runs only
    its condition) on the back end the one before left, then every child's arena released;
    what they count at a bound, the arenas freed for the first time and the back end's state
    after."""
    for index in named.indices:
        if index in released:
            heap.take(named.allocated[index].arena_block)
    runs: list[Replayed] = []
    for index in named.indices if ran is None else ran:
        child = named.allocated[index]
        inner = named.replay(child.prepared, state)
        state = inner.backend_after
        heap.take(inner.peak)
        heap.give(inner.peak - inner.kept)
        runs.append(inner)
    freed = 0
    for index in named.indices:
        heap.give(named.allocated[index].arena_block)
        if index not in released:
            freed += named.allocated[index].arena_block
        released.add(index)
    return ControlFlowRun(
        exact=all(run.exact for run in runs),
        estimated=tuple(name for run in runs for name in run.estimated),
        peak_exact=all(run.peak_exact for run in runs),
        released=sum(run.released for run in runs) + freed,
        state=state,
    )


# stablehlo_composite.cc Eval_static, before its decomposition runs: the composite's own dims
# copy, and per decomposition input the copy of its dims and the dims ResizeInputTensor gives
# it (the old one freed after), then the ArenaPlanner's two vectors as the subgraph is planned
# again (DeepOrShallowCopyTensorsShapeTypeData marks it uninvokable): small blocks, held for a
# moment (read off tests/litert_heap_trace.py's events on composite6_1).
_COMPOSITE_PLANNER_BLOCKS = 2


def composite_eval(
    heap: Heap,
    model: Model,
    prepared: PreparedSubgraph,
    node: RuntimeNode,
    *,
    allocated: Mapping[int, Decomposition],
    replay: Callable[[PreparedSubgraph], Replayed],
    released: set[int],
) -> ControlFlowRun | None:
    """A STABLEHLO_COMPOSITE's first Eval (stablehlo_composite.cc), decomposition outputs
    static: its inputs copied into the decomposition, which is planned again (the same
    sizes: its arena does not grow) and invoked (its nodes replayed), then released
    (Subgraph::ReleaseMemory frees its arena; its persistent arena stays). None where that is
    not replayed: a decomposition not prepared, or with dynamic tensors (Eval_dynamic). A
    decomposition another composite released before (`released`) commits its arena again."""
    operator = model.subgraphs[prepared.index].operators[node.operator]
    index = int(operator.options.get("decomposition_subgraph_index", -1) or 0)
    found = allocated.get(index)
    if found is None or has_dynamic_outputs(found.prepared):
        return None
    small = glibc.usable(int_array_bytes(4))
    inputs = sum(1 for tensor in found.prepared.inputs if tensor >= 0)
    moment = small * (1 + 2 * inputs + _COMPOSITE_PLANNER_BLOCKS)
    heap.take(moment)
    heap.give(moment)
    again = index in released
    if again:
        heap.take(found.arena_block)
    released.add(index)
    inner = replay(found.prepared)
    heap.take(inner.peak)
    heap.give(inner.peak - inner.kept)
    heap.give(found.arena_block)
    freed = inner.released + (0 if again else found.arena_block)
    return ControlFlowRun(inner.exact, inner.estimated, inner.peak_exact, freed, state=None)


def has_dynamic_outputs(prepared: PreparedSubgraph) -> bool:
    """Subgraph::HasDynamicTensors, which sends a composite, an IF or a WHILE to Eval_dynamic: a
    dynamic subgraph output, or a node whose Prepare left an output dynamic
    (PrepareOpsStartingAt looks at outputs only: a kernel's dynamic temporary, such as a
    reduction's resolved axes, does not count)."""
    outputs = (
        prepared.tensors[index] for index in prepared.outputs if 0 <= index < len(prepared.tensors)
    )
    return any(node.dynamic_output for node in prepared.nodes) or any(
        tensor is not None and tensor.allocation is Allocation.DYNAMIC for tensor in outputs
    )


class _Recording:
    """A heap that records its steps, to replay the chosen branch's on the real one."""

    def __init__(self) -> None:
        self.steps: list[int] = []
        self.live = 0
        self.peak = 0

    def take(self, usable: int) -> None:
        self.steps.append(usable)
        self.live += usable
        self.peak = max(self.peak, self.live)

    def give(self, usable: int) -> None:
        self.steps.append(-usable)
        self.live -= usable

    def replay_on(self, heap: Heap) -> None:
        for step in self.steps:
            if step >= 0:
                heap.take(step)
            else:
                heap.give(-step)
