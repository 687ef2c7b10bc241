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
runtimes are never reshaped and plan no workspace); control flow (IF, WHILE, CALL_ONCE, ...)
stays a labelled bound."""

from __future__ import annotations

from arenalens.ir import Model

_COMPOSITE = "STABLEHLO_COMPOSITE"
_INDEX = "decomposition_subgraph_index"


def only_decompositions(model: Model) -> bool:
    """One subgraph, or every other subgraph a composite's decomposition or a signature's
    entry, and no operator that calls a subgraph otherwise."""
    if len(model.subgraphs) == 1:
        return True
    called: set[int] = set()
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            options = operator.options
            if operator.opcode == _COMPOSITE:
                called.add(int(options.get(_INDEX, -1) or 0))
            elif any("subgraph_ind" in key for key in options):
                return False  # IF, WHILE, CALL_ONCE, STABLEHLO_CASE / WHILE ...
    # A signature's own subgraph that nothing calls: the delegate is applied to it too (its
    # kernels built), but allocate_tensors() prepares subgraph 0 only.
    entries = {signature.subgraph for signature in model.signature_defs} - called - {0}
    return called | entries == set(range(1, len(model.subgraphs)))


def prepared(view: Model | None) -> set[int]:
    """The subgraphs allocate_tensors() prepares on the delegated plan (`view`): subgraph 0
    and the decompositions of the composites left to the builtin kernel, recursively. A
    decomposition whose composite the delegate took is partitioned, its kernels built, but
    never prepared: its runtimes are never reshaped and plan no workspace. All subgraphs
    when the view is not modelled."""
    if view is None:
        return set()
    reached, pending = {0}, [0]
    while pending:
        for operator in view.subgraphs[pending.pop()].operators:
            index = int(operator.options.get(_INDEX, -1) or 0)
            if operator.opcode == _COMPOSITE and index not in reached:
                reached.add(index)
                pending.append(index)
    return reached
