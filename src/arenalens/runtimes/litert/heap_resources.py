"""The heap a LiteRT interpreter's resource variables take, from LiteRT's sources
(*tflite/kernels/var_handle.cc*, *read_variable.cc*, *assign_variable.cc*,
*tflite/experimental/resource/resource_variable.cc*, *tflite/core/c/common.cc*), checked block
by block on the 2.3.0 wheel's traces (tests/litert_heap_trace.py).

* **At creation** each VAR_HANDLE's Init looks its (container, shared name) up in the
  interpreter's `std::map<pair<string, string>, int>` of resource ids and inserts it when new:
  one tree node per distinct name pair (`_Rb_tree_node_base` + two strings + the id), with a
  heap block for each name longer than std::string's 15 inline characters.
* **At the first invoke** a variable is made where it is first written: the builtin
  ASSIGN_VARIABLE's `CreateResourceVariableIfNotAvailable` inserts `new ResourceVariable` (a
  TfLiteTensor and a flag: 128 B) into the interpreter's `unordered_map<int, unique_ptr>`
  (its bucket array on the first insertion, a 24-byte node each), then `AssignFrom` copies the
  value's dims (`TfLiteIntArrayCopy`) and reallocates its data as every dynamic tensor is
  (`TfLiteTensorRealloc`: the bytes plus 16). The XNNPACK delegate makes the variables its
  kernels read or write (their resource tensors are in the kernel's externals) the same way
  at the first invoke of the first kernel touching them, shaped as their proxy value
  (`Subgraph::Invoke`), before any builtin kernel runs after it.

A READ_VARIABLE whose output has no rank makes that output dynamic: its Eval resizes it to
the variable's dims and bytes (counted). Prepare stopped its chunk there, so when a node follows
it in the execution plan the first invoke prepares and plans the rest of the graph
(`Subgraph::InvokeImpl` → `PrepareOpsAndTensors` at the next node): replayed block by block
where heap_replan can (its docstring says where), else bounded (`VariableReplay._dynamic_read`)
and the figure is an estimate that errs high. A read that is the plan's last node re-plans
nothing (the invoke loop ends): exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from arenalens.ir import Model, Subgraph
from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.heap_interpreter import Key, handle_key
from arenalens.runtimes.litert.heap_kernels import DELEGATE_OPCODE
from arenalens.runtimes.litert.heap_replan import replan
from arenalens.runtimes.litert.heap_xnnpack_reshape import KernelReshape
from arenalens.runtimes.litert.libstdcxx import BUCKET_COUNT_CHAIN
from arenalens.runtimes.litert.prepare.state import PreparedSubgraph, RuntimeNode

RESOURCE_VARIABLE_BYTES = 128  # sizeof(ResourceVariable): vtable, TfLiteTensor, flag
RESOURCE_NODE_BYTES = 24  # _Hash_node<pair<const int, unique_ptr<ResourceBase>>>
TENSOR_EXTRA_BYTES = 16  # TfLiteTensorAllocationSize pads every dynamic block by this
ALLOCATION_ENTRY_BYTES = 32  # ArenaAllocWithUsage: offset, size, tensor, first and last node
VARIABLE_OPCODES = frozenset({"VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"})


def handle_keys(subgraph: Subgraph) -> dict[int, Key]:
    """Resource tensor → the name pair of the VAR_HANDLE that makes it."""
    return {
        operator.outputs[0]: handle_key(operator.options)
        for operator in subgraph.operators
        if operator.opcode == "VAR_HANDLE" and operator.outputs and operator.outputs[0] >= 0
    }


def _buckets_bytes(count: int) -> int:
    if count <= 0:
        return 0
    buckets = next((b for b in BUCKET_COUNT_CHAIN if b >= count), BUCKET_COUNT_CHAIN[-1])
    return glibc.usable(8 * buckets)


@dataclass(slots=True)
class Variables:
    """The interpreter's resource variables while a first invoke is replayed: which exist,
    each one's dims and bytes. `take` / `give` move the replay's live bytes."""

    created: dict[Key, tuple[int, int]] = field(default_factory=dict)  # key → (rank, bytes)

    def assign(self, key: Key, shape: tuple[int, ...], nbytes: int) -> Iterator[int]:
        """CreateResourceVariableIfNotAvailable + AssignFrom → signed usable-byte steps
        (positive taken, negative freed), in order."""
        if key not in self.created:
            count = len(self.created) + 1
            before, after = _buckets_bytes(count - 1), _buckets_bytes(count)
            yield glibc.usable(RESOURCE_VARIABLE_BYTES)
            if after != before:
                yield after  # the rehash allocates the new buckets before it frees the old
                if before:
                    yield -before
            yield glibc.usable(RESOURCE_NODE_BYTES)
            self.created[key] = (-1, 0)
        rank, old_bytes = self.created[key]
        if rank != len(shape):
            # TfLiteIntArrayEqual fails on another rank (dims of equal rank but other sizes
            # are copied too: counted the same, a same-size block).
            yield glibc.usable(4 + 4 * len(shape))
            if rank >= 0:
                yield -glibc.usable(4 + 4 * rank)
        if nbytes != old_bytes:
            # AssignFrom cleared the tensor's byte count first, so any other size reallocates
            # (counted as a new block before the old one goes: a peak that errs high).
            yield glibc.usable(nbytes + TENSOR_EXTRA_BYTES)
            if old_bytes:
                yield -glibc.usable(old_bytes + TENSOR_EXTRA_BYTES)
        self.created[key] = (len(shape), nbytes)


def dynamic_reads(subgraph: Subgraph) -> bool:
    """A READ_VARIABLE whose output has no rank (its Eval sizes it: not replayed)."""
    return any(
        operator.opcode == "READ_VARIABLE"
        and operator.outputs
        and operator.outputs[0] >= 0
        and not subgraph.tensors[operator.outputs[0]].shape
        for operator in subgraph.operators
    )


Creation = tuple[Key, tuple[int, ...], int]  # a variable's name pair, shape and bytes


@dataclass(frozen=True, slots=True)
class VariablePlan:
    """What a first invoke needs to replay the variables: each resource tensor's name pair,
    and per delegate kernel (in execution order) the variables it makes."""

    keys: Mapping[int, Key]
    by_kernel: tuple[tuple[Creation, ...], ...] = ()
    # Every other subgraph's plan, by index (an IF's branches, a WHILE's cond and body run
    # their own delegate kernels on the interpreter's variables: heap_control_flow).
    others: Mapping[int, VariablePlan] = field(default_factory=dict)
    # Subgraph 0's delegate kernels' reshapes, by view operator (heap_xnnpack_reshape): the
    # re-plan after a rank-0 read prepares those after it.
    reshapes: Mapping[int, KernelReshape] = field(default_factory=dict)

    def of(self, index: int) -> VariablePlan | None:
        """Subgraph `index`'s plan, which knows the others too (None: not planned)."""
        found = self.others.get(index)
        return None if found is None else VariablePlan(found.keys, found.by_kernel, self.others)


class VariableReplay:
    """The variables' part of one subgraph's first-invoke replay (heap_invoke): `node` gives
    each node's usable-byte steps (positive taken, negative freed), in order; a node not
    replayed is added to `estimated`, the replay's list."""

    def __init__(
        self,
        subgraph: Subgraph,
        prepared: PreparedSubgraph,
        plan: VariablePlan | None,
        estimated: list[str],
        arena_block: int = 0,
        *,
        created: Mapping[Key, tuple[int, int]] | None = None,
    ) -> None:
        """`created`: the variables made before this subgraph runs (a control flow's child
        runs on the interpreter's variables as its parent left them)."""
        self.plan = plan or VariablePlan(handle_keys(subgraph))
        # The re-plan the first invoke makes after a rank-0 read (heap_replan), replayed in
        # subgraph 0, whose setup counts its first chunk only (heap.setup_blocks); a control
        # flow's child keeps the bound.
        chunked = prepared.index == 0 and len(prepared.chunks) > 1
        self.replan = replan(prepared, subgraph, self.plan.reshapes) if chunked else None
        tensors = len(prepared.tensors)
        # Where it is not: its bound, the old arena block (at most the final one,
        # `arena_block`), the allocation list (ArenaAllocWithUsage: 32 B) and two int vectors,
        # one entry a tensor.
        self.replan_bytes = (
            arena_block
            + glibc.usable(ALLOCATION_ENTRY_BYTES * tensors)
            + 2 * glibc.usable(4 * tensors)
        )
        self.variables = Variables(dict(created or {}))
        self.shapes = {
            tensor.index: (tensor.shape or (), tensor.nbytes)
            for tensor in prepared.tensors
            if tensor.dtype != "RESOURCE"
        }
        self.kernels = 0  # delegate kernels met so far
        # InvokeImpl plans the rest at the node after a dynamic output: none after the last.
        self.last_position = prepared.nodes[-1].position if prepared.nodes else -1
        self.estimated = estimated  # the replay's list of operators not replayed

    def run(
        self, node: RuntimeNode, take: Callable[[int], None], give: Callable[[int], None]
    ) -> None:
        """Replay one node's steps on the replay's heap: the re-plan it starts, then its own."""
        replanned = self.replan.steps(node) if self.replan else ()
        for step in (*replanned, *self.node(node)):
            if step >= 0:
                take(step)
            else:
                give(-step)

    def node(self, node: RuntimeNode) -> Iterator[int]:
        """A builtin ASSIGN_VARIABLE's value; the variables a delegate kernel makes first; a
        rank-0 READ_VARIABLE (Eval sizes its output; the re-plan of the rest is bounded here
        where heap_replan does not replay it)."""
        inputs, keys = node.inputs, self.plan.keys
        if node.opcode == "ASSIGN_VARIABLE" and len(inputs) > 1 and inputs[0] in keys:
            shape, nbytes = self.shapes.get(inputs[1], ((), 0))
            yield from self.variables.assign(keys[inputs[0]], shape, nbytes)
        elif node.opcode == DELEGATE_OPCODE:
            kernel, self.kernels = self.kernels, self.kernels + 1
            made = self.plan.by_kernel[kernel] if kernel < len(self.plan.by_kernel) else ()
            for key, shape, nbytes in made:
                if key not in self.variables.created:
                    yield from self.variables.assign(key, shape, nbytes)
        elif node.opcode == "READ_VARIABLE" and node.dynamic_output:
            # The re-plan at the next node is replayed there (`run`) where it can be; else
            # bounded here. A read that ends the plan re-plans nothing.
            replanned = node.position != self.last_position
            replanned = replanned and not (self.replan is not None and self.replan.exact)
            if replanned:
                self.estimated.append(node.opcode)
            yield from self._dynamic_read(keys.get(inputs[0]) if inputs else None, replanned)

    def _dynamic_read(self, key: Key | None, replanned: bool) -> Iterator[int]:
        """read_variable.cc Eval on an output of no rank: ResizeTensor gives it a copy of the
        variable's dims (the old, rank-0 ones freed) and a data block of its bytes plus 16,
        kept; the output was dynamic, so Subgraph::InvokeImpl re-plans the rest of the graph:
        the arena is committed again (the new block taken before the old is freed), the
        allocation list grows and two index vectors are held meanwhile. The re-plan is
        bounded (`replan_bytes`): the whole arena, the list and the vectors at one entry per
        tensor. Without a node after the read (`replanned` false) there is no re-plan."""
        rank, nbytes = self.variables.created.get(key, (0, 0)) if key is not None else (0, 0)
        yield glibc.usable(4 + 4 * max(rank, 0))
        yield -glibc.usable(4)
        yield glibc.usable(nbytes + TENSOR_EXTRA_BYTES)
        if replanned:
            yield self.replan_bytes
            yield -self.replan_bytes


def delegated_plan(
    model: Model, reshapes: Mapping[int, KernelReshape] | None = None
) -> VariablePlan:
    """The variables' plan once XNNPACK took its subsets, subgraph 0's and (`others`) every
    other subgraph's (`subgraph_plan`); `reshapes`: subgraph 0's kernels' (VariablePlan)."""
    others = {index: subgraph_plan(model, index) for index in range(1, len(model.subgraphs))}
    main = subgraph_plan(model, 0)
    return VariablePlan(main.keys, main.by_kernel, others, dict(reshapes or {}))


def subgraph_plan(model: Model, index: int) -> VariablePlan:
    """One subgraph's variables once XNNPACK took its subsets: the resources each delegate
    kernel reads or writes whose value it defines from a proxy (xnnpack_variables), made by
    the first kernel touching them, shaped as the proxy."""
    from arenalens.runtimes.litert import heap_xnnpack, xnnpack_variables  # noqa: PLC0415

    subgraph = model.subgraphs[index]
    keys = handle_keys(subgraph)
    proxies = xnnpack_variables.proxies(subgraph)
    split = heap_xnnpack.partition(subgraph, model)
    by_kernel: list[tuple[Creation, ...]] = []
    for subset in heap_xnnpack.node_subsets(subgraph, split.delegated):
        if not subset.delegated:
            continue
        touched = sorted(
            {
                tensor
                for index in subset.operators
                for tensor in (
                    *subgraph.operators[index].inputs,
                    *subgraph.operators[index].outputs,
                )
                if tensor in proxies and tensor in keys
            }
        )
        by_kernel.append(
            tuple(
                (keys[tensor], proxies[tensor].shape, proxies[tensor].nbytes) for tensor in touched
            )
        )
    return VariablePlan(keys, tuple(by_kernel))
