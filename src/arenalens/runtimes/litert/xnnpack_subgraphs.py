"""Models of several subgraphs under LiteRT's XNNPACK delegate, from LiteRT's sources
(*tflite/core/interpreter.cc*: `ModifyGraphWithDelegateImpl`; *tflite/kernels/
stablehlo_composite.cc*).

The interpreter applies the delegate to every subgraph in index order (none is marked
delegation-skippable by a builtin kernel): each is partitioned and its delegated subsets
replaced by delegate kernels, whose Inits build their XNNPACK runtimes, before
`allocate_tensors()` plans subgraph 0. A STABLEHLO_COMPOSITE the delegate does not take (any
name but odml.scaled_dot_product_attention) stays the builtin kernel: its Prepare allocates
its decomposition subgraph, now planned over that subgraph's delegated plan, and its first
Eval runs it and releases its arena, as with the builtin kernels alone. The replay covers
models whose other subgraphs are all composites' decompositions or signatures' own subgraphs
(the delegate builds their kernels; `allocate_tensors()` prepares only subgraph 0, so their
runtimes are never reshaped and plan no workspace), and IF branches and WHILE conditions and
bodies: the delegate takes their operators as any subgraph's, and the IF's or WHILE's Prepare
allocates them inside `allocate_tensors()` (their delegate kernels reshaped, their workspaces
planned); their first Eval is heap_control_flow's. Children holding resource variables are
modelled too: the delegate's variable maps follow every subgraph it partitions
(xnnpack_objects.variable_maps_bytes). A CALL_ONCE's init subgraph is partitioned too, its
kernels built, but not prepared by `allocate_tensors()`: its first Eval allocates it, its
kernels' reshape then making their indirection buffers and plans (heap_call_once, session
15); an init that runs other subgraphs (or whose indirection is not modelled) keeps the
model the labelled bound, as other control flow (STABLEHLO_CASE, STABLEHLO_WHILE, ...) does. Every
IF, WHILE and CALL_ONCE is chained with the operators touching a resource in the partition
(Subgraph::OpMightHaveSideEffect: their subgraphs may)."""

from __future__ import annotations

from collections.abc import Mapping

from arenalens.ir import Model
from arenalens.runtimes.litert.xnnpack_packing import indirection_request

_COMPOSITE = "STABLEHLO_COMPOSITE"
_INDEX = "decomposition_subgraph_index"
_CALL_ONCE = "CALL_ONCE"
_INIT = "init_subgraph_index"
# Operators whose XNNPACK reshape makes an indirection buffer (heap_xnnpack_reshape).
_INDIRECTION = ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV")
# The children an IF's or WHILE's Prepare allocates (if.cc, while.cc).
_CONTROL_FLOW = {
    "IF": ("then_subgraph_index", "else_subgraph_index"),
    "WHILE": ("cond_subgraph_index", "body_subgraph_index"),
}


def only_decompositions(model: Model) -> bool:
    """One subgraph, or every other subgraph a composite's decomposition, an IF's branch, a
    WHILE's condition or body, a CALL_ONCE's init (`_replayed_init`) or a signature's entry,
    and no operator that calls a subgraph otherwise."""
    if len(model.subgraphs) == 1:
        return True
    called: set[int] = set()
    inits: dict[int, bool] = {}  # each init checked once (a hostile model names one often)
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            options = operator.options
            if operator.opcode == _COMPOSITE:
                called.add(int(options.get(_INDEX, -1) or 0))
            elif operator.opcode in _CONTROL_FLOW:
                called.update(_children(operator.opcode, options))
            elif operator.opcode == _CALL_ONCE:
                index = int(options.get(_INIT, -1) or 0)
                if index not in inits:
                    inits[index] = _replayed_init(model, index)
                if not inits[index]:
                    return False
                called.add(index)
            elif any("subgraph_ind" in key for key in options):
                return False  # IF, WHILE, CALL_ONCE, STABLEHLO_CASE / WHILE ...
    # A signature's own subgraph that nothing calls: the delegate is applied to it too (its
    # kernels built), but allocate_tensors() prepares subgraph 0 only.
    entries = {signature.subgraph for signature in model.signature_defs} - called - {0}
    return called | entries == set(range(1, len(model.subgraphs)))


def _replayed_init(model: Model, index: int) -> bool:
    """A CALL_ONCE's init subgraph whose first Eval heap_call_once replays under the delegate:
    it runs no other subgraph, is no MediaPipe custom operator's, and each indirection buffer
    its kernels' reshape makes is modelled (heap_xnnpack_reshape.KernelReshape.indirection;
    their other reshape-time blocks are its `operator_blocks`, made at the first Eval too)."""
    if not 0 <= index < len(model.subgraphs):
        return False
    subgraph = model.subgraphs[index]
    for operator in subgraph.operators:
        if operator.opcode.startswith("CUSTOM"):
            return False
        if any("subgraph_ind" in key for key in operator.options):
            return False
        if operator.opcode in _INDIRECTION and indirection_request(subgraph, operator) is None:
            return False
    return True


def prepared(view: Model | None) -> set[int]:
    """The subgraphs allocate_tensors() prepares on the delegated plan (`view`): subgraph 0,
    the decompositions of the composites left to the builtin kernel and the children of IFs
    and WHILEs, recursively. A
    decomposition whose composite the delegate took is partitioned, its kernels built, but
    never prepared: its runtimes are never reshaped and plan no workspace. All subgraphs
    when the view is not modelled."""
    if view is None:
        return set()
    reached, pending = {0}, [0]
    while pending:
        for operator in view.subgraphs[pending.pop()].operators:
            if operator.opcode == _COMPOSITE:
                called = [int(operator.options.get(_INDEX, -1) or 0)]
            else:
                called = list(_children(operator.opcode, operator.options))
            for index in called:
                if index not in reached and 0 <= index < len(view.subgraphs):
                    reached.add(index)
                    pending.append(index)
    return reached


def first_eval_inits(model: Model, view: Model | None) -> frozenset[int]:
    """The CALL_ONCE inits allocate_tensors() does not prepare on the delegated plan (`view`,
    `prepared`): their kernels' first reshape, and every block it makes, is the CALL_ONCE's
    first Eval (call_once.cc Eval: `init.AllocateTensors()`; heap_call_once)."""
    named = {
        int(str(operator.options.get(_INIT, -1) or 0))
        for subgraph in model.subgraphs
        for operator in subgraph.operators
        if operator.opcode == _CALL_ONCE
    }
    return frozenset(named - prepared(view)) if view is not None else frozenset()


def _children(opcode: str, options: Mapping[str, object]) -> tuple[int, ...]:
    return tuple(int(str(options.get(field, -1) or 0)) for field in _CONTROL_FLOW.get(opcode, ()))
