"""LiteRT lifetimes: model → per-subgraph inclusive [first, last] steps, with in-place aliases.

*arena_planner.cc — PlanAllocations*: each subgraph on its own timeline 0..E-1 (its execution
plan). Graph inputs, variables and outputs are never freed (`last = NEVER_FREED`); in-place
operators may make an output an alias of an input (*IdentifyInPlaceTensors*)
(docs/runtime-rules.md §L3, §L4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from arenalens.analysis.lifetimes import NEVER_FREED, Step, TensorLifetime, Timeline
from arenalens.ir import Model, Operator, Subgraph, Tensor

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
