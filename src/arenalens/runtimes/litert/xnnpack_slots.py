"""XNNPACK's operator-data slots: a delegate kernel's nodes → how many entries its runtime's
operator-data array holds (xnn_create_runtime_v4 allocates one per node the optimized subgraph
still counts).

Source: XNNPACK subgraph.c. xnn_subgraph_fusion (a zero PAD into its convolution, a variable
copy into its producer or consumer) and xnn_subgraph_fuse_unary_quantized_into_lut clear the
nodes they fuse (xnn_node_clear: the node stays in the array, of the invalid type) and call no
clean-up. The passes after them call xnn_subgraph_clean_up when they change anything:
optimize_common_subgraphs (a clamp merged into its producer, `mul(x, x)` made a square, a
reduction of a square made `reduce_sum_squared`) and optimize_packed_lhs (a hybrid GEMM's
`convert` short-circuited: its input is packed inline). That clean-up compacts the array to
its valid nodes: every cleared node's slot goes, a trailing one's too (the wheel's var11_1122:
its kernel's last node, a RELU merged into the FULLY_CONNECTED, holds no slot; XNNPACK's
sources of 2025-2026 cut the array only when a node moved, so the wheel's build is taken as
the rule).

Measured (the 2.3.0 wheel's xnn_create_runtime_v4 requests, 240 B per slot): var11_1102's
first kernel holds 9 slots (3 variable reads fused, then its RELU merged into the
FULLY_CONNECTED: 12 counted before), var11_1110's 6 (a square made by the fused reads).
"""

from __future__ import annotations

from collections.abc import Sequence

from arenalens.ir import Operator, Subgraph
from arenalens.runtimes.litert.xnnpack_workspace import (
    _Node,
    _square,
    dynamically_quantized,
    hybrid_batch_matmul,
)

_REDUCTIONS = ("SUM", "MEAN")


def operator_slots(subgraph: Subgraph, unfused: Sequence[_Node], fused: Sequence[_Node]) -> int:
    """The runtime's operator-data entries: `fused` (the nodes after XNNPACK's optimizer,
    xnnpack_workspace._nodes) and the nodes the fusions cleared, unless a later clean-up
    compacted them away (the module docstring). `unfused`: the nodes before the fusions."""
    survivors = _surviving_positions(unfused, fused)
    cleared = [position for position in range(len(unfused)) if position not in survivors]
    # The two lists are made apart: a node is known by its operator and kind.
    into_luts = {(node.operator, node.kind) for lut in fused for node in lut.chain[: lut.folded]}
    merged_clamps = any(
        unfused[position].kind == "clamp" and (unfused[position].operator, "clamp") not in into_luts
        for position in cleared
    )
    if not _cleaned_up(subgraph, unfused, fused, merged_clamps=merged_clamps):
        return len(fused) + len(cleared)  # cleared by the fusions, no clean-up after them
    return len(fused)  # the clean-up cut the array to its valid nodes


def _surviving_positions(unfused: Sequence[_Node], fused: Sequence[_Node]) -> set[int]:
    """Positions in `unfused` of the nodes still there after the optimizer (a LUT stands where
    its chain's last node stood)."""
    left = {(node.operator, node.kind): 0 for node in unfused}
    for node in fused:
        key = (node.operator, node.kind if node.kind != "lut" else node.chain[node.folded].kind)
        if key in left:
            left[key] += 1
    found = set()
    for position, node in enumerate(unfused):
        key = (node.operator, node.kind)
        if left.get(key, 0) > 0:
            left[key] -= 1
            found.add(position)
    return found


def _cleaned_up(
    subgraph: Subgraph, unfused: Sequence[_Node], fused: Sequence[_Node], *, merged_clamps: bool
) -> bool:
    """Whether a pass after the fusions changed the subgraph (and so ran its clean-up)."""
    if merged_clamps or any(node.kind == "binary" and _square(subgraph, node) for node in fused):
        return True
    before = {(node.operator, node.kind): node.inputs for node in unfused}
    if any(
        node.kind in _REDUCTIONS and before.get((node.operator, node.kind)) != node.inputs
        for node in fused
    ):
        return True  # reduce_sum_to_square
    return any(_packed_lhs(subgraph, subgraph.operators[node.operator]) for node in fused)


def _packed_lhs(subgraph: Subgraph, operator: Operator) -> bool:
    """A GEMM whose dynamically quantized input optimize_packed_lhs packs inline (its convert
    node cleared): a hybrid FULLY_CONNECTED or BATCH_MATMUL."""
    if operator.opcode == "FULLY_CONNECTED":
        return dynamically_quantized(subgraph, operator)
    return hybrid_batch_matmul(subgraph, operator)
