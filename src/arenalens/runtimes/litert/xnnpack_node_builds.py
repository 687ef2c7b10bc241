"""One call's XNNPACK runtime nodes, each subset's built once (issue 31).

The delegate's replayed build moment (heap_build.replayed_moment) asks for the same nodes
again and again: each kernel's fused and unfused nodes (`xnnpack_objects.runtime_counts`,
`operators_bytes`), the fused ones once more for its reshape blocks and for the operators it
creates (`heap_build._created`), and those of each run from an operator on (`_created_from`)
for every fingerprint, scale scratch and transposed convolution. `xnnpack_workspace._nodes`
is a pure function of the subgraph, the run, its boundary, the model and whether it fuses, so
a call builds each once and hands the lists on: MobileNetV2 built 182 node lists per check,
most of them twice or more.

`NodeBuilds` is a value one call makes for one model and passes down; nothing outlives it,
so nothing can go stale across models. The lists it hands out are shared: read them, never
change them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arenalens.ir import Model, Subgraph
from arenalens.runtimes.litert.heap_xnnpack import NodeSubset
from arenalens.runtimes.litert.xnnpack_workspace import _Node, _nodes


@dataclass(slots=True)
class NodeBuilds:
    """The nodes built so far for `model`, by (subgraph index, subset, fused)."""

    model: Model
    built: dict[tuple[int, NodeSubset, bool], list[_Node]] = field(default_factory=dict)


def subset_nodes(
    subgraph: Subgraph,
    subset: NodeSubset,
    model: Model | None,
    builds: NodeBuilds | None = None,
    *,
    fuse: bool = True,
) -> Sequence[_Node]:
    """`_nodes` of a subset's run within its boundary (its inputs and outputs), from `builds`
    where it holds them for this model, else built (and kept there)."""
    ours = builds is not None and model is builds.model
    if builds is None or not ours or builds.model.subgraphs[subgraph.index] is not subgraph:
        boundary = set(subset.inputs) | set(subset.outputs)
        return _nodes(subgraph, subset.operators, boundary, model, fuse=fuse)
    key = (subgraph.index, subset, fuse)
    nodes = builds.built.get(key)
    if nodes is None:
        boundary = set(subset.inputs) | set(subset.outputs)
        nodes = builds.built[key] = _nodes(subgraph, subset.operators, boundary, model, fuse=fuse)
    return nodes
