"""XNNPACK's clamp fusion in one forward pass (xnnpack_workspace._fuse_clamps) gives the nodes
that fusing one pair at a time and starting again gives: the restart loop it replaced was
quadratic, and a 10,000-operator chain took more than ten minutes to plan under LiteRT."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from arenalens.runtimes.litert import xnnpack_workspace
from arenalens.runtimes.litert.xnnpack_workspace import _CLAMPING, _Node

KINDS = ("clamp", "clamp", "clamp", "CONV_2D", "FULLY_CONNECTED", "MAX_POOL_2D", "binary", "copy")


def _fused_one_pair_at_a_time(nodes: list[_Node], boundary: set[int]) -> None:
    """The reference: fuse the first clamp that can fuse, recount, start again."""
    while True:
        consumers = xnnpack_workspace._consumers(nodes, boundary)
        producers = {tensor: node for node in nodes for tensor in node.outputs}
        for node in nodes:
            if node.kind != "clamp" or len(node.inputs) != 1 or len(node.outputs) != 1:
                continue
            if consumers.get(node.inputs[0], 0) > 1:
                continue
            producer = producers.get(node.inputs[0])
            if producer is None or producer.kind not in ("clamp", *_CLAMPING):
                continue
            producer.outputs[0] = node.outputs[0]
            nodes.remove(node)
            break
        else:
            return


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[_Node], set[int]]:
    """Nodes in execution order over values 0..: each reads one or two earlier values (a
    clamp sometimes two, as a hostile model's may) and writes a new one."""
    count = draw(st.integers(1, 30))
    nodes = []
    for index in range(count):
        kind = draw(st.sampled_from(KINDS))
        arity = 2 if kind == "binary" else draw(st.sampled_from((1, 1, 1, 2)))
        inputs = [draw(st.integers(0, index)) for _ in range(arity)]
        nodes.append(_Node(kind, inputs, [index + 1], index))
    boundary = set(draw(st.sets(st.integers(0, count), max_size=4))) | {0}
    return nodes, boundary


@settings(max_examples=400, deadline=None)
@given(graphs())
def test_one_pass_fusion_equals_fusing_one_pair_at_a_time(
    graph: tuple[list[_Node], set[int]],
) -> None:
    nodes, boundary = graph
    expected = copy.deepcopy(nodes)
    _fused_one_pair_at_a_time(expected, boundary)
    xnnpack_workspace._fuse_clamps(nodes, boundary)
    assert nodes == expected
