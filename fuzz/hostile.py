"""Hand-crafted hostile models: well-formed FlatBuffers whose *content* attacks the analysis.

Random mutation rarely builds a 2,000-deep chain of control flow or a vector shared by 20,000
operators, so these are written on purpose. Each crafter is `rng -> bytes`, sized by the RNG
within a range that keeps the file small (the point is amplification: a small file that asks for
a lot of work). Most use `ModelBuilder`; what the builder refuses to write (indices out of range,
shared tables) is patched in afterwards at positions the layout walk finds.

Families: control flow (deep, exponential fan-out, cycles), absurd shapes and types, huge fan-in
and fan-out, in-place aliasing loops, second producers, odd graph inputs/outputs, offline plans,
hostile names (markup, control characters, invalid UTF-8), empty and degenerate graphs, and
amplification through shared vectors and tables.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Mapping
from types import MappingProxyType

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder
from arenalens.tflite.reader import OFFLINE_PLAN_METADATA
from fuzz.layout import SiteKind, find_layout
from fuzz.mutate import INT32_EDGES

Crafter = Callable[[random.Random], bytes]

CONTROL_FLOW = ("IF", "WHILE", "CALL_ONCE")
IN_PLACE_OPCODES = ("RESHAPE", "ADD", "MUL", "SUB", "SOFTMAX", "SQUEEZE", "EXPAND_DIMS", "BITCAST")
HOSTILE_NAMES = (
    "<script>alert('x')</script>",
    '"><img src=x onerror=alert(1)>',
    "&amp;&lt;&#0;",
    "]]></svg><svg onload=alert(1)>",
    "\x00\x01\x1b[31mred\x1b[0m\r\n\t",
    "\u202eevil\u202d",  # right-to-left override
    "{{7*7}}${7*7}",
    "\\u0000 \\\\ '' \"\"",
    "😀" * 50,
    "x" * 4096,
)


def _relu_subgraph(graph: SubgraphBuilder, width: int = 8) -> tuple[int, int]:
    x = graph.add_tensor("x", [1, width])
    y = graph.add_tensor("y", [1, width])
    graph.set_inputs([x])
    graph.set_outputs([y])
    return x, y


def _call(graph: SubgraphBuilder, opcode: str, callee: int, x: int, y: int) -> None:
    """One control-flow operator calling `callee` (both branches / cond and body = callee)."""
    if opcode == "IF":
        cond = graph.add_tensor("cond", [1], "BOOL")
        graph.add_operator(
            "IF",
            [cond, x],
            [y],
            options={"then_subgraph_index": callee, "else_subgraph_index": callee},
        )
    elif opcode == "WHILE":
        graph.add_operator(
            "WHILE",
            [x],
            [y],
            options={"cond_subgraph_index": callee, "body_subgraph_index": callee},
        )
    else:
        graph.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": callee})


def deep_control_flow(rng: random.Random) -> bytes:
    """Subgraph i calls subgraph i + 1, hundreds to thousands deep."""
    depth = rng.choice((50, 200, 600, 1500))
    builder = ModelBuilder(description="deep control flow")
    graphs = [builder.add_subgraph(f"g{i}") for i in range(depth)]
    for index, graph in enumerate(graphs):
        x, y = _relu_subgraph(graph)
        if index + 1 < depth:
            middle = graph.add_tensor("m", [1, 8])
            _call(graph, rng.choice(CONTROL_FLOW), index + 1, x, middle)
            graph.add_operator("RELU", [middle], [y])
        else:
            graph.add_operator("RELU", [x], [y])
    return builder.build()


def control_flow_fan_out(rng: random.Random) -> bytes:
    """Each subgraph calls the next one 2-3 times: visits grow as fan-out ** depth."""
    depth = rng.randrange(12, 64)
    fan_out = rng.choice((2, 2, 3))
    builder = ModelBuilder(description="control flow fan-out")
    graphs = [builder.add_subgraph(f"g{i}") for i in range(depth)]
    for index, graph in enumerate(graphs):
        x, y = _relu_subgraph(graph)
        current = x
        if index + 1 < depth:
            for call in range(fan_out):
                nxt = graph.add_tensor(f"c{call}", [1, 8])
                _call(graph, rng.choice(CONTROL_FLOW), index + 1, current, nxt)
                current = nxt
        graph.add_operator("RELU", [current], [y])
    return builder.build()


def control_flow_cycle(rng: random.Random) -> bytes:
    """Subgraphs that call each other in a ring (length 1-5), entered from subgraph 0."""
    length = rng.randrange(1, 6)
    builder = ModelBuilder(description="control flow cycle")
    graphs = [builder.add_subgraph(f"g{i}") for i in range(length + 1)]
    for index, graph in enumerate(graphs):
        x, y = _relu_subgraph(graph)
        middle = graph.add_tensor("m", [1, 8])
        callee = 1 if index == length else index + 1
        _call(graph, rng.choice(CONTROL_FLOW), callee, x, middle)
        graph.add_operator("RELU", [middle], [y])
    return builder.build()


def absurd_shapes(rng: random.Random) -> bytes:
    """Tensors with edge-value dimensions, huge ranks and odd types, all planned by the arena."""
    builder = ModelBuilder(description="absurd shapes")
    graph = builder.add_subgraph("main")
    dtypes = ("FLOAT32", "INT8", "INT4", "INT2", "STRING", "RESOURCE", "VARIANT", "FLOAT64")
    previous = graph.add_tensor("input", [1, 8])
    graph.set_inputs([previous])
    for index in range(rng.randrange(1, 12)):
        rank = rng.choice((0, 1, 2, 4, 8, 64, 1000))
        dims = [rng.choice((*INT32_EDGES, 1, 1, 1)) for _ in range(rank)]
        signature = [rng.choice((-1, *dims)) for _ in dims] if rng.random() < 0.3 else None
        tensor = graph.add_tensor(
            f"t{index}",
            dims,
            rng.choice(dtypes),
            is_variable=rng.random() < 0.1,
            shape_signature=signature,
        )
        graph.add_operator(
            rng.choice(("RELU", "RESHAPE", "ADD", "CUSTOM:odd")), [previous], [tensor]
        )
        previous = tensor
    graph.set_outputs([previous])
    return builder.build()


def wide_operators(rng: random.Random) -> bytes:
    """Operators with thousands of inputs or outputs: huge fan-in, fan-out and live sets."""
    count = rng.choice((10, 100, 500, 2000))
    builder = ModelBuilder(description="wide operators")
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", [1, 4])
    fanned = [graph.add_tensor(f"f{i}", [1, rng.choice((1, 4, 64))]) for i in range(count)]
    graph.add_operator("SPLIT" if rng.random() < 0.5 else "CUSTOM:fan_out", [source], fanned)
    joined = graph.add_tensor("joined", [count, 4])
    graph.add_operator("CONCATENATION", fanned, [joined])
    graph.set_inputs([source])
    graph.set_outputs([joined, *rng.sample(fanned, min(len(fanned), rng.choice((0, 1, 50))))])
    return builder.build()


def many_live_buffers(rng: random.Random) -> bytes:
    """Hundreds of tensors produced early and read at the end (all live at once)."""
    return many_live_model(rng.choice((50, 200, 800)), rng)


def many_live_model(count: int, rng: random.Random | None = None) -> bytes:
    """`count` RELUs of one input, then an ADD chain joining them in a (seeded) shuffled order."""
    rng = rng or random.Random(0)
    builder = ModelBuilder(description="many live buffers")
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", [1, 4])
    produced = []
    for index in range(count):
        tensor = graph.add_tensor(f"t{index}", [1, rng.randrange(1, 512)])
        graph.add_operator("RELU", [source], [tensor])
        produced.append(tensor)
    rng.shuffle(produced)
    current = produced[0]
    for index, other in enumerate(produced[1:]):
        joined = graph.add_tensor(f"j{index}", [1, 16])
        graph.add_operator("ADD", [current, other], [joined])
        current = joined
    graph.set_inputs([source])
    graph.set_outputs([current])
    return builder.build()


def in_place_loops(rng: random.Random) -> bytes:
    """In-place operators reading and writing the same tensor, and chains of aliases that loop."""
    builder = ModelBuilder(description="in-place loops")
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 8])
    tensors = [graph.add_tensor(f"a{i}", [1, 8]) for i in range(rng.randrange(1, 6))]
    graph.add_operator("RELU", [x], [tensors[0]])
    for _ in range(rng.randrange(1, 10)):
        source = rng.choice(tensors)
        target = rng.choice(tensors)
        opcode = rng.choice(IN_PLACE_OPCODES)
        inputs = (
            [source, rng.choice([source, *tensors])]
            if opcode in ("ADD", "MUL", "SUB")
            else [source]
        )
        graph.add_operator(opcode, inputs, [target])
    y = graph.add_tensor("y", [1, 8])
    graph.add_operator("RELU", [rng.choice(tensors)], [y])
    graph.set_inputs([x])
    graph.set_outputs([y] if rng.random() < 0.7 else [y, rng.choice(tensors)])
    return builder.build()


def odd_graph_io(rng: random.Random) -> bytes:
    """Second producers, inputs overwritten, outputs that are inputs, constants or repeated."""
    builder = ModelBuilder(description="odd graph inputs and outputs")
    graph = builder.add_subgraph("main")
    tensors = [graph.add_tensor(f"t{i}", [1, rng.choice((1, 8, 100))]) for i in range(6)]
    constant = graph.add_tensor("const", [4], "INT8", data=bytes(4))
    pool = [*tensors, constant]
    for _ in range(rng.randrange(1, 12)):
        inputs = [rng.choice([*pool, -1]) for _ in range(rng.randrange(0, 4))]
        outputs = [rng.choice(pool) for _ in range(rng.randrange(0, 3))]
        graph.add_operator(rng.choice(("ADD", "RELU", "CUSTOM:odd", "RESHAPE")), inputs, outputs)
    graph.set_inputs(rng.sample(pool, rng.randrange(0, 4)))
    graph.set_outputs([rng.choice(pool) for _ in range(rng.randrange(0, 5))])
    return builder.build()


def offline_plans(rng: random.Random) -> bytes:
    """`OfflineMemoryAllocation` metadata with odd offsets, counts and repeats."""
    builder = ModelBuilder(description="offline plans")
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 64])
    a = graph.add_tensor("a", [1, 64])
    y = graph.add_tensor("y", [1, 64])
    graph.add_operator("RELU", [x], [a])
    graph.add_operator("RELU", [a], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    for _ in range(rng.randrange(1, 3)):
        count = rng.choice((0, 1, 2, 3, 4, 100))
        offsets = [
            rng.choice((-1, -1, 0, 0, 64, 3, -2, 1 << 30, (1 << 31) - 1)) for _ in range(count)
        ]
        version = rng.choice((0, 1, -1))
        claimed = rng.choice((count, count, count + 1, -1, 1 << 30))
        header = struct.pack("<iii", version, rng.choice((1, 0, 7)), claimed)
        raw = header + struct.pack(f"<{count}i", *offsets)
        if rng.random() < 0.2:
            raw = raw[: rng.randrange(len(raw) + 1)]
        builder.add_metadata(OFFLINE_PLAN_METADATA, raw)
    return builder.build()


def hostile_names(rng: random.Random) -> bytes:
    """Markup, control characters, very long and invalid UTF-8 names on every named thing."""
    builder = ModelBuilder(description=rng.choice(HOSTILE_NAMES))
    graph = builder.add_subgraph(rng.choice(HOSTILE_NAMES))
    x = graph.add_tensor(rng.choice(HOSTILE_NAMES), [1, 8])
    a = graph.add_tensor(rng.choice(HOSTILE_NAMES), [1, 8])
    y = graph.add_tensor(rng.choice(HOSTILE_NAMES), [1, 8])
    graph.add_operator("CUSTOM:" + rng.choice(HOSTILE_NAMES), [x], [a])
    graph.add_operator("RELU", [a], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    builder.add_signature(rng.choice(HOSTILE_NAMES), graph)
    builder.add_metadata(rng.choice(HOSTILE_NAMES), b"\xff\xfe")
    data = bytearray(builder.build())
    # Invalid UTF-8 in place of some name bytes (the builder writes only valid strings).
    for site in find_layout(bytes(data)).of_kind(SiteKind.LENGTH):
        if site.label.endswith("name.length") and rng.random() < 0.5:
            length = struct.unpack_from("<I", data, site.position)[0]
            if length:
                data[site.position + 4] = rng.choice((0xFF, 0xC0, 0x80, 0xED))
    return bytes(data)


def degenerate_graphs(rng: random.Random) -> bytes:
    """Empty subgraphs, no operators, no tensors, many subgraphs, unreachable subgraphs."""
    builder = ModelBuilder(description="degenerate")
    for index in range(rng.choice((1, 2, 10, 300))):
        graph = builder.add_subgraph(f"g{index}")
        shape = rng.random()
        if shape < 0.3:
            continue  # nothing at all
        x = graph.add_tensor("x", [1, rng.choice((0, 1, 8))])
        if shape < 0.6:
            graph.set_inputs([x])
            graph.set_outputs([x])
            continue
        y = graph.add_tensor("y", [1, 8])
        graph.add_operator("RELU", [x], [y])
        graph.set_outputs([y])
    return builder.build()


def shared_vectors(rng: random.Random) -> bytes:
    """Every operator's inputs field points at one long vector: operators × fan-in tensor
    references from a file that grows only with their sum."""
    return shared_inputs_model(rng.choice((100, 1000, 5000)), rng.choice((100, 1000, 5000)))


def shared_inputs_model(operators: int, fan_in: int) -> bytes:
    """`operators` ADD_N operators whose inputs fields all point at one `fan_in`-long vector."""
    builder = ModelBuilder(description="shared vectors")
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 4])
    last = x
    for index in range(operators):
        output = graph.add_tensor(f"o{index}", [1, 4])
        graph.add_operator("ADD_N", [x] * (fan_in if index == 0 else 1), [output])
        last = output
    graph.set_inputs([x])
    graph.set_outputs([last])
    data = bytearray(builder.build())
    layout = find_layout(bytes(data), max_sites=1 << 24)
    lengths = [
        s.position
        for s in layout.of_kind(SiteKind.LENGTH)
        if s.label == "Operator.inputs.length"
        and struct.unpack_from("<I", data, s.position)[0] == fan_in
    ]
    if not lengths:
        return bytes(data)
    vector = lengths[0]
    for site in layout.of_kind(SiteKind.UOFFSET):
        if site.label == "Operator.inputs" and site.position < vector:
            struct.pack_into("<I", data, site.position, vector - site.position)
    return bytes(data)


def shared_tables(rng: random.Random) -> bytes:
    """Every entry of the subgraphs vector points at one subgraph table."""
    return shared_subgraphs_model(rng.choice((10, 100, 500)), rng.choice((10, 100, 500)))


def shared_subgraphs_model(count: int, tensors: int) -> bytes:
    """`count` subgraph entries that all point at one chain of `tensors` RELUs."""
    builder = ModelBuilder(description="shared tables")
    main = builder.add_subgraph("main")
    x = main.add_tensor("x", [1, 4])
    last = x
    for index in range(tensors):
        output = main.add_tensor(f"t{index}", [1, 4])
        main.add_operator("RELU", [last], [output])
        last = output
    main.set_inputs([x])
    main.set_outputs([last])
    for index in range(1, count):
        builder.add_subgraph(f"s{index}")
    data = bytearray(builder.build())
    layout = find_layout(bytes(data), max_sites=1 << 24)
    elements = [
        s for s in layout.of_kind(SiteKind.OFFSET_ELEMENT) if s.label.startswith("Model.subgraphs[")
    ]
    if not elements:
        return bytes(data)
    first = next(s for s in elements if s.label == "Model.subgraphs[0]")
    table = first.position + struct.unpack_from("<I", data, first.position)[0]
    for site in elements:
        if table > site.position:
            struct.pack_into("<I", data, site.position, table - site.position)
    return bytes(data)


def tensor_index_edges(rng: random.Random) -> bytes:
    """Valid model, then one index vector element set to an edge value (-2, count, 2**31 - 1)."""
    builder = ModelBuilder(description="index edges")
    graph = builder.add_subgraph("main")
    x, y = _relu_subgraph(graph)
    graph.add_operator("RELU", [x], [y])
    data = bytearray(builder.build())
    sites = find_layout(bytes(data)).of_kind(SiteKind.INDEX)
    for site in rng.sample(sites, min(len(sites), rng.randrange(1, 3))):
        struct.pack_into(
            "<i", data, site.position, rng.choice((-2, -1, 2, 3, 1 << 20, *INT32_EDGES))
        )
    return bytes(data)


def control_flow_options(rng: random.Random) -> bytes:
    """Control-flow operators whose options table is missing, of another type, or out of range."""
    builder = ModelBuilder(description="control flow options")
    main = builder.add_subgraph("main")
    body = builder.add_subgraph("body")
    bx, by = _relu_subgraph(body)
    body.add_operator("RELU", [bx], [by])
    x, y = _relu_subgraph(main)
    opcode = rng.choice(CONTROL_FLOW)
    options_type = rng.choice(("NONE", "ReshapeOptions", "IfOptions", "WhileOptions", None))
    if options_type is None:
        _call(main, opcode, rng.choice((1, 1, 0, 2, -1)), x, y)
    else:
        main.add_operator(opcode, [x], [y], options_type=options_type)
    data = bytearray(builder.build())
    for site in find_layout(bytes(data)).sites:
        if (
            site.label.startswith("Options.")
            and site.kind == SiteKind.SCALAR
            and rng.random() < 0.5
        ):
            struct.pack_into("<i", data, site.position, rng.choice((-1, -2, 2, 99, *INT32_EDGES)))
    return bytes(data)


HOSTILE: Mapping[str, Crafter] = MappingProxyType(
    {
        "deep_control_flow": deep_control_flow,
        "control_flow_fan_out": control_flow_fan_out,
        "control_flow_cycle": control_flow_cycle,
        "control_flow_options": control_flow_options,
        "absurd_shapes": absurd_shapes,
        "wide_operators": wide_operators,
        "many_live_buffers": many_live_buffers,
        "in_place_loops": in_place_loops,
        "odd_graph_io": odd_graph_io,
        "offline_plans": offline_plans,
        "hostile_names": hostile_names,
        "degenerate_graphs": degenerate_graphs,
        "shared_vectors": shared_vectors,
        "shared_tables": shared_tables,
        "tensor_index_edges": tensor_index_edges,
    }
)


__all__ = [
    "HOSTILE",
    "HOSTILE_NAMES",
    "Crafter",
    "many_live_model",
    "shared_inputs_model",
    "shared_subgraphs_model",
]
