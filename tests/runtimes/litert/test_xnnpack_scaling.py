"""XNNPACK's replayed passes in linear time, each proven equal to the quadratic form it replaced:
the clamp fusion in one forward pass (xnnpack_workspace._fuse_clamps) gives the nodes that
fusing one pair at a time and starting again gives, and the value planner (plan_records)
finds overlapping records by where they start. A 10,000-operator chain took more than ten
minutes to plan under LiteRT; the copy fusion scanned every node per value (a hostile model
hung the fuzz campaign there)."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from arenalens.runtimes.litert import xnnpack_planner, xnnpack_workspace
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


def _plan_records_against_every_placed_record(records: list[tuple[int, int, int]]) -> int:
    """The reference: each record placed against every record placed before it."""
    order = sorted(range(len(records)), key=lambda i: -records[i][0])
    offsets: dict[int, int] = {}
    arena = 0
    for position, index in enumerate(order):
        live = sorted(
            (offsets[other], offsets[other] + records[other][0])
            for other in order[:position]
            if xnnpack_planner._overlap(records[index], records[other])
        )
        offsets[index] = xnnpack_planner._smallest_gap(live, records[index][0])
        arena = max(arena, offsets[index] + records[index][0])
    return arena


@st.composite
def value_records(draw: st.DrawFn) -> list[tuple[int, int, int]]:
    """(bytes, first node, last node): short and long lives, equal sizes (ties keep order)."""
    count = draw(st.integers(0, 40))
    records = []
    for _ in range(count):
        first = draw(st.integers(0, 60))
        length = draw(st.sampled_from((0, 0, 1, 2, 5, 15, 16, 17, 40)))
        size = draw(st.sampled_from((64, 128, 192, 1024))) * draw(st.integers(1, 3))
        records.append((size, first, first + length))
    return records


@settings(max_examples=400, deadline=None)
@given(value_records())
def test_placing_against_nearby_records_equals_placing_against_all(
    records: list[tuple[int, int, int]],
) -> None:
    """plan_records finds the placed records a value's life overlaps by where they start (the
    short ones) instead of testing every placed record: the same arena, and the planner took
    2.3x per doubling of a chain before."""
    assert xnnpack_planner.plan_records(records) == _plan_records_against_every_placed_record(
        records
    )


def _copies_fused_by_scanning(subgraph: Any, nodes: list[_Node], external: set[int]) -> None:
    """The reference: every value of every node, its readers and writers found by scanning."""
    values = sorted({tensor for node in nodes for tensor in (*node.inputs, *node.outputs)})
    for value in values:
        if value in external:
            continue
        readers = [node for node in nodes if value in node.inputs]
        writers = [node for node in nodes if value in node.outputs]
        if len(readers) != 1 or len(writers) != 1:
            continue
        producer, consumer = writers[0], readers[0]
        start, end = nodes.index(producer), nodes.index(consumer)
        if start >= end:
            continue
        between = nodes[start + 1 : end]
        copy_test = xnnpack_workspace.variable_copy
        if copy_test(subgraph, consumer) and len(consumer.outputs) == 1:
            moved = consumer.outputs[0]
            if not any(moved in (*node.inputs, *node.outputs) for node in between):
                producer.outputs[producer.outputs.index(value)] = moved
                nodes.remove(consumer)
                continue
        if copy_test(subgraph, producer) and len(producer.inputs) == 1:
            moved = producer.inputs[0]
            if not any(moved in (*node.inputs, *node.outputs) for node in between):
                consumer.inputs[consumer.inputs.index(value)] = moved
                nodes.remove(producer)


COPY_OPCODES = ("READ_VARIABLE", "ASSIGN_VARIABLE", "RESHAPE", "CONV_2D", "ADD")


@st.composite
def copy_graphs(draw: st.DrawFn) -> tuple[Any, list[_Node], set[int]]:
    """Nodes in execution order: variable copies (one input, one output) and others reading
    one or two values; some write a value already written (a resource's accesses), some read
    a value twice."""
    count = draw(st.integers(1, 25))
    opcodes, nodes = [], []
    for index in range(count):
        opcode = draw(st.sampled_from(COPY_OPCODES))
        opcodes.append(SimpleNamespace(opcode=opcode))
        is_copy = opcode in ("READ_VARIABLE", "ASSIGN_VARIABLE", "RESHAPE")
        arity = 1 if is_copy else draw(st.sampled_from((1, 2)))
        inputs = [draw(st.integers(0, index)) for _ in range(arity)]
        rewritten = draw(st.integers(0, index))  # a value written again: a resource
        output = draw(st.sampled_from((index + 1, index + 1, index + 1, rewritten)))
        nodes.append(_Node("copy" if is_copy else opcode, inputs, [output], index))
    external = set(draw(st.sets(st.integers(0, count), max_size=4)))
    return SimpleNamespace(operators=opcodes), nodes, external


@settings(max_examples=400, deadline=None)
@given(copy_graphs())
def test_copy_fusion_by_maps_equals_scanning_every_node(
    graph: tuple[Any, list[_Node], set[int]],
) -> None:
    subgraph, nodes, external = graph
    expected = copy.deepcopy(nodes)
    _copies_fused_by_scanning(subgraph, expected, external)
    xnnpack_workspace.fuse_copies(subgraph, nodes, external)
    assert nodes == expected
