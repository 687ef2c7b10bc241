"""CALL_ONCE models for the interpreter's heap (runtimes/litert/heap_call_once.py), with the
builtin kernels and under XNNPACK: drawn after heap_call_once.py was written.

Each case has one input x ([1, S, S, C], float or int8, as tests/litert_control_flow_heap_cases
draws it). An init subgraph computes a value from a constant (zero to two shape-preserving
operators: a 3x3 convolution, a depthwise one, an add of a constant) and assigns it to a
resource variable; main runs CALL_ONCE on it (first, or after its own work), reads the variable
and adds it to its x. A second CALL_ONCE may name the same init (its Eval does nothing) or a
second init assigning a second variable, also read; a CALL_ONCE may sit in a WHILE body run
one or three times (its init runs in the first turn only).

    python -m tests.litert_heap_measure --cache tests/data/litert_heap_avx2.json --only callonce12_
"""

from __future__ import annotations

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from tests.litert_control_flow_heap_cases import WORK, _Draw, _work


def _handle(graph: SubgraphBuilder, name: str) -> int:
    tensor = graph.add_tensor(f"{name}/handle", [1], "RESOURCE")
    graph.add_operator("VAR_HANDLE", [], [tensor], options={"shared_name": name})
    return tensor


def _init(builder: ModelBuilder, draw: _Draw, variable: str) -> int:
    """An init subgraph: a constant, zero to two operators on it, assigned to `variable`."""
    graph = builder.add_subgraph(f"init_{variable}")
    values = draw.weights.standard_normal(draw.shape)
    if draw.int8:
        value = graph.add_constant(
            "start", np.clip(values * 10, -127, 127).astype(np.int8), "INT8",
            quantization=quantization(0.05, 0),
        )  # fmt: skip
    else:
        value = graph.add_constant("start", values.astype(np.float32))
    for step in range(draw.draw.choice((0, 1, 1, 2))):
        value = _work(graph, draw, value, draw.draw.choice(WORK), f"{variable}{step}")
    graph.add_operator("ASSIGN_VARIABLE", [_handle(graph, variable), value], [])
    graph.set_inputs([])
    graph.set_outputs([])
    return graph.index


def _call_once(graph: SubgraphBuilder, init: int) -> None:
    graph.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": init})


def _read_add(graph: SubgraphBuilder, draw: _Draw, variable: str, data: int) -> int:
    read, total = draw.x(graph, f"{variable}_read"), draw.x(graph, f"{variable}_sum")
    graph.add_operator("READ_VARIABLE", [_handle(graph, variable)], [read])
    graph.add_operator("ADD", [data, read], [total])
    return total


def _loop(
    builder: ModelBuilder, graph: SubgraphBuilder, draw: _Draw, x: int, init: int
) -> tuple[int, int]:
    """WHILE(count, x) for 1 or 3 turns (count: a new input of `graph`, zero when measured)
    whose body runs CALL_ONCE(init) and one operator → (count, the loop's x)."""
    turns = draw.draw.choice((1, 3))
    cond, body = builder.add_subgraph("cond"), builder.add_subgraph("body")
    step, state = cond.add_tensor("count", [1], "INT32"), draw.x(cond, "x")
    limit = cond.add_constant("limit", np.array([turns], np.int32))
    flag = cond.add_tensor("continue", [1], "BOOL")
    cond.add_operator("LESS", [step, limit], [flag])
    cond.set_inputs([step, state])
    cond.set_outputs([flag])
    step, state = body.add_tensor("count", [1], "INT32"), draw.x(body, "x")
    one = body.add_constant("one", np.array([1], np.int32))
    after = body.add_tensor("count_next", [1], "INT32")
    body.add_operator("ADD", [step, one], [after])
    _call_once(body, init)
    worked = _work(body, draw, state, draw.draw.choice(WORK), "body")
    body.set_inputs([step, state])
    body.set_outputs([after, worked])
    count = graph.add_tensor("count", [1], "INT32")
    outputs = [graph.add_tensor("count_out", [1], "INT32"), draw.x(graph, "looped")]
    graph.add_operator(
        "WHILE", [count, x], outputs,
        options={"cond_subgraph_index": cond.index, "body_subgraph_index": body.index},
    )  # fmt: skip
    return count, outputs[1]


def call_once_case(seed: int) -> bytes:
    """One drawn case (see the module's notes)."""
    draw = _Draw(12_000 + seed)
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    x = draw.x(main, "x")
    first = _init(builder, draw, "v")
    value, inputs = x, [x]
    if draw.draw.random() < 0.25:
        count, value = _loop(builder, main, draw, value, first)
        inputs.append(count)
    elif draw.draw.random() < 0.5:
        _call_once(main, first)
    else:
        value = _work(main, draw, value, draw.draw.choice(WORK), "main")
        _call_once(main, first)
    value = _read_add(main, draw, "v", value)
    second = draw.draw.random()
    if second < 0.2:
        _call_once(main, first)  # its init ran: this Eval does nothing
    elif second < 0.45:
        _call_once(main, _init(builder, draw, "w"))
        value = _read_add(main, draw, "w", value)
    main.set_inputs(inputs)
    main.set_outputs([value])
    return builder.build()


def _init15(builder: ModelBuilder, draw: _Draw, variables: list[str]) -> int:
    """An init subgraph assigning each of `variables`: from a constant, or (half the time,
    after the first) from the value assigned before it, through zero to two operators."""
    graph = builder.add_subgraph(f"init_{'_'.join(variables)}")
    value = -1
    for variable in variables:
        if value < 0 or draw.draw.random() < 0.5:
            values = draw.weights.standard_normal(draw.shape)
            if draw.int8:
                value = graph.add_constant(
                    f"{variable}_start", np.clip(values * 10, -127, 127).astype(np.int8),
                    "INT8", quantization=quantization(0.05, 0),
                )  # fmt: skip
            else:
                value = graph.add_constant(f"{variable}_start", values.astype(np.float32))
        for step in range(draw.draw.choice((0, 1, 1, 2))):
            value = _work(graph, draw, value, draw.draw.choice(WORK), f"{variable}{step}")
        graph.add_operator("ASSIGN_VARIABLE", [_handle(graph, variable), value], [])
    graph.set_inputs([])
    graph.set_outputs([])
    return graph.index


def call_once_case15(seed: int) -> bytes:
    """Session 15's draws (seeds 15_001-), made after the XNNPACK delegate's inits were
    replayed (heap_call_once under XNNPACK): one or two inits assigning one to three variables
    each (chained values, convolutions, adds), main's own work before the first CALL_ONCE
    (mostly), reads of every variable, work between, a CALL_ONCE repeated or after the reads."""
    draw = _Draw(15_000 + seed)
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    x = draw.x(main, "x")
    value = x
    for step in range(draw.draw.choice((0, 1, 1, 2))):
        value = _work(main, draw, value, draw.draw.choice(WORK), f"main{step}")
    names = iter("uvwxyz")
    inits = []
    for _ in range(draw.draw.choice((1, 1, 2))):
        variables = [next(names) for _ in range(draw.draw.choice((1, 2, 3)))]
        inits.append((_init15(builder, draw, variables), variables))
    for number, (init, variables) in enumerate(inits):
        _call_once(main, init)
        for variable in variables:
            value = _read_add(main, draw, variable, value)
        if draw.draw.random() < 0.4:
            value = _work(main, draw, value, draw.draw.choice(WORK), f"between{number}")
        if draw.draw.random() < 0.2:
            _call_once(main, init)  # its init ran: this Eval does nothing
    main.set_inputs([x])
    main.set_outputs([value])
    return builder.build()


def call_once_case15b(seed: int) -> bytes:
    """Session 15's second draws (seeds 15_101-): main's work, then two CALL_ONCEs; the first
    init assigns u from a constant through one operator and a 3x3 max or average pooling
    (SAME, stride 1), half the time also the MEAN of it over its rows and columns to t; the
    second reads u, works on it and assigns v; main reads v, then u. Poolings and reductions
    make reshape-time blocks of their own (heap_xnnpack_reshape, xnnpack_objects)."""
    draw = _Draw(15_100 + seed)
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    x = draw.x(main, "x")
    first = builder.add_subgraph("init_u")
    values = draw.weights.standard_normal(draw.shape)
    if draw.int8:
        value = first.add_constant(
            "u_start", np.clip(values * 10, -127, 127).astype(np.int8), "INT8",
            quantization=quantization(0.05, 0),
        )  # fmt: skip
    else:
        value = first.add_constant("u_start", values.astype(np.float32))
    value = _work(first, draw, value, draw.draw.choice(WORK), "u0")
    pooled = draw.x(first, "u_pooled")
    first.add_operator(
        draw.draw.choice(("MAX_POOL_2D", "AVERAGE_POOL_2D")), [value], [pooled],
        options={"padding": "SAME", "stride_w": 1, "stride_h": 1, "filter_width": 3,
                 "filter_height": 3},
    )  # fmt: skip
    if draw.draw.random() < 0.5:
        axis = first.add_constant("axis", np.array([1, 2], np.int32))
        mean = first.add_tensor(
            "t_mean", [1, 1, 1, draw.channels], draw.dtype,
            quantization=quantization(0.05, 0) if draw.int8 else None,
        )  # fmt: skip
        first.add_operator("MEAN", [pooled, axis], [mean], options={"keep_dims": True})
        first.add_operator("ASSIGN_VARIABLE", [_handle(first, "t"), mean], [])
    first.add_operator("ASSIGN_VARIABLE", [_handle(first, "u"), pooled], [])
    first.set_inputs([])
    first.set_outputs([])
    second = builder.add_subgraph("init_v")
    read = draw.x(second, "u_read")
    second.add_operator("READ_VARIABLE", [_handle(second, "u")], [read])
    worked = _work(second, draw, read, draw.draw.choice(WORK), "v0")
    second.add_operator("ASSIGN_VARIABLE", [_handle(second, "v"), worked], [])
    second.set_inputs([])
    second.set_outputs([])
    value = _work(main, draw, x, draw.draw.choice(WORK), "main")
    _call_once(main, first.index)
    _call_once(main, second.index)
    value = _read_add(main, draw, "v", value)
    value = _read_add(main, draw, "u", value)
    main.set_inputs([x])
    main.set_outputs([value])
    return builder.build()
