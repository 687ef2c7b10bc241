"""IF and WHILE models for the interpreter's heap (runtimes/litert/heap_control_flow.py), with
the builtin kernels and under XNNPACK: drawn after heap_control_flow.py and the control-flow
children's partition (xnnpack_subgraphs) were written.

Each case has inputs count (INT32 [1]) and x ([1, S, S, C], float or int8); the tracer's driver
sets both to zeros. Work on x is shape-preserving (a 3x3 convolution with a bias, a depthwise
one, an add of a constant), float or int8, so XNNPACK takes it wherever it is. Shapes:

* if: pick = count < limit (limit 0 or 1: the else or the then branch runs), IF(pick, x) with
  two branches of different work, work in main before or after it;
* while: WHILE(count, x) while count < N (N 1, 3 or 10), the body adds 1 and works on x;
* nested_while: the body runs an inner WHILE over a zero of its own (count - count) for M turns;
* while_if: the body runs IF(count < k) with two branches of work.

    python -m tests.litert_heap_measure --cache tests/data/litert_heap_avx2.json --only cf11_
"""

from __future__ import annotations

import random

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization

SHAPES = ("if", "while", "nested_while", "while_if")
LOOP_COUNTS = (1, 3, 10)
WORK = ("conv", "depthwise", "add")
_SCALE = 0.05


class _Draw:
    """The case's choices: its random draws and its x's type and shape."""

    def __init__(self, seed: int) -> None:
        self.draw = random.Random(seed)
        self.weights = np.random.default_rng(seed)
        self.int8 = self.draw.random() < 0.4
        self.size = self.draw.choice((4, 8, 12, 16))
        self.channels = self.draw.choice((4, 8, 16))

    @property
    def dtype(self) -> str:
        return "INT8" if self.int8 else "FLOAT32"

    @property
    def shape(self) -> list[int]:
        return [1, self.size, self.size, self.channels]

    def x(self, graph: SubgraphBuilder, name: str) -> int:
        quantized = quantization(_SCALE, 0) if self.int8 else None
        return graph.add_tensor(name, self.shape, self.dtype, quantization=quantized)


def _work(graph: SubgraphBuilder, draw: _Draw, data: int, kind: str, tag: str) -> int:
    """One shape-preserving operator on `data` → its output."""
    output = draw.x(graph, f"{tag}_out")
    channels = draw.channels
    if kind == "add":
        values = draw.weights.standard_normal(draw.shape[1:]).astype(np.float32)
        if draw.int8:
            constant = graph.add_constant(
                f"{tag}_c", np.clip(values * 10, -127, 127).astype(np.int8), "INT8",
                quantization=quantization(_SCALE, 0),
            )  # fmt: skip
        else:
            constant = graph.add_constant(f"{tag}_c", values)
        graph.add_operator(
            "ADD", [data, constant], [output], options={"fused_activation_function": "RELU"}
        )
        return output
    depthwise = kind == "depthwise"
    shape = (1, 3, 3, channels) if depthwise else (channels, 3, 3, channels)
    filter_values = draw.weights.standard_normal(shape) * 0.1
    if draw.int8:
        scales = np.full(channels, 0.01)
        filters = graph.add_constant(
            f"{tag}_w", np.clip(filter_values * 100, -127, 127).astype(np.int8), "INT8",
            quantization=quantization(scales, 0, axis=3 if depthwise else 0),
        )  # fmt: skip
        bias = graph.add_constant(
            f"{tag}_b", np.zeros(channels, np.int32), "INT32",
            quantization=quantization(scales * _SCALE, 0),
        )  # fmt: skip
    else:
        filters = graph.add_constant(f"{tag}_w", filter_values.astype(np.float32))
        bias = graph.add_constant(f"{tag}_b", np.zeros(channels, np.float32))
    options: dict[str, object] = {
        "padding": "SAME", "stride_w": 1, "stride_h": 1, "fused_activation_function": "RELU",
    }  # fmt: skip
    if depthwise:
        options["depth_multiplier"] = 1
    graph.add_operator(
        "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [data, filters, bias], [output],
        options=options,
    )  # fmt: skip
    return output


def _branch(builder: ModelBuilder, draw: _Draw, name: str) -> int:
    """An IF branch x -> work(x)."""
    graph = builder.add_subgraph(name)
    x = draw.x(graph, "x")
    y = _work(graph, draw, x, draw.draw.choice(WORK), name)
    graph.set_inputs([x])
    graph.set_outputs([y])
    return graph.index


def _if(builder: ModelBuilder, graph: SubgraphBuilder, draw: _Draw, count: int, x: int) -> int:
    limit = graph.add_constant(
        f"limit{graph.index}", np.array([draw.draw.choice((0, 1))], np.int32)
    )
    pick = graph.add_tensor(f"pick{graph.index}", [1], "BOOL")
    graph.add_operator("LESS", [count, limit], [pick])
    then, otherwise = _branch(builder, draw, "then"), _branch(builder, draw, "else")
    picked = draw.x(graph, f"picked{graph.index}")
    graph.add_operator(
        "IF", [pick, x], [picked],
        options={"then_subgraph_index": then, "else_subgraph_index": otherwise},
    )  # fmt: skip
    return picked


def _while(
    builder: ModelBuilder, graph: SubgraphBuilder, draw: _Draw, count: int, x: int, *, shape: str
) -> int:
    """WHILE(count, x) for a drawn number of turns; the body works on x (or runs an inner
    WHILE / an IF for `shape` nested_while / while_if)."""
    turns = draw.draw.choice(LOOP_COUNTS)
    cond, body = builder.add_subgraph(f"cond{turns}"), builder.add_subgraph("body")
    step, state = cond.add_tensor("count", [1], "INT32"), draw.x(cond, "x")
    limit = cond.add_constant("limit", np.array([turns], np.int32))
    flag = cond.add_tensor("continue", [1], "BOOL")
    cond.add_operator("LESS", [step, limit], [flag])
    cond.set_inputs([step, state])
    cond.set_outputs([flag])

    step, state = body.add_tensor("count", [1], "INT32"), draw.x(body, "x")
    one = body.add_constant("one", np.array([1], np.int32))
    next_step = body.add_tensor("count_next", [1], "INT32")
    body.add_operator("ADD", [step, one], [next_step])
    if shape == "nested_while":
        zero = body.add_tensor("zero", [1], "INT32")
        body.add_operator("SUB", [step, step], [zero])
        result = _while(builder, body, draw, zero, state, shape="while")
    elif shape == "while_if":
        result = _if(builder, body, draw, step, state)
    else:
        result = _work(body, draw, state, draw.draw.choice(WORK), f"body{body.index}")
    body.set_inputs([step, state])
    body.set_outputs([next_step, result])

    outputs = [graph.add_tensor(f"count_out{graph.index}", [1], "INT32"),
               draw.x(graph, f"x_out{graph.index}")]  # fmt: skip
    graph.add_operator(
        "WHILE", [count, x], outputs,
        options={"cond_subgraph_index": cond.index, "body_subgraph_index": body.index},
    )  # fmt: skip
    return outputs[1]


def control_flow_heap_case(seed: int) -> bytes:
    """The seed's case: its shape by seed (SHAPES in turn), the rest drawn."""
    draw = _Draw(seed)
    shape = SHAPES[seed % len(SHAPES)]
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    count, x = main.add_tensor("count", [1], "INT32"), draw.x(main, "x")
    data = x
    if draw.draw.random() < 0.4:
        data = _work(main, draw, data, draw.draw.choice(WORK), "pre")
    if shape == "if":
        data = _if(builder, main, draw, count, data)
    else:
        data = _while(builder, main, draw, count, data, shape=shape)
    if draw.draw.random() < 0.4:
        data = _work(main, draw, data, draw.draw.choice(WORK), "post")
    main.set_inputs([count, x])
    main.set_outputs([data])
    return builder.build()


def reshaping_while(turns: int, size: int = 1024) -> bytes:
    """WHILE(count, x [1, size]) whose body concatenates x with itself (its shape doubles each
    turn: while.cc runs Eval_dynamic), `turns` turns; the loop value's dims read [1, -1]."""
    builder = ModelBuilder()
    main, cond, body = (builder.add_subgraph(name) for name in ("main", "cond", "body"))
    signature = [1, -1]
    count, x = main.add_tensor("count", [1], "INT32"), main.add_tensor("x", [1, size])
    outputs = [main.add_tensor("count_out", [1], "INT32"),
               main.add_tensor("x_out", [1, size], shape_signature=signature)]  # fmt: skip
    main.add_operator(
        "WHILE", [count, x], outputs,
        options={"cond_subgraph_index": cond.index, "body_subgraph_index": body.index},
    )  # fmt: skip
    main.set_inputs([count, x])
    main.set_outputs(outputs)
    step, state = cond.add_tensor("count", [1], "INT32"), cond.add_tensor("x", [1, size])
    limit = cond.add_constant("limit", np.array([turns], np.int32))
    flag = cond.add_tensor("continue", [1], "BOOL")
    cond.add_operator("LESS", [step, limit], [flag])
    cond.set_inputs([step, state])
    cond.set_outputs([flag])
    step = body.add_tensor("count", [1], "INT32")
    state = body.add_tensor("x", [1, size], shape_signature=signature)
    one = body.add_constant("one", np.array([1], np.int32))
    next_step = body.add_tensor("count_next", [1], "INT32")
    body.add_operator("ADD", [step, one], [next_step])
    doubled = body.add_tensor("doubled", [1, 2 * size], shape_signature=signature)
    body.add_operator("CONCATENATION", [state, state], [doubled], options={"axis": 1})
    body.set_inputs([step, state])
    body.set_outputs([next_step, doubled])
    return builder.build()


def reshaping_if(size: int = 8) -> bytes:
    """IF(pick, x [1, size]): the then branch gives RELU(x), the else branch x concatenated with
    itself ([1, 2 * size]): outputs of different shapes (if.cc: Eval_dynamic)."""
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    then, otherwise = builder.add_subgraph("then"), builder.add_subgraph("else")
    pick, x = main.add_tensor("pick", [1], "BOOL"), main.add_tensor("x", [1, size])
    y = main.add_tensor("y", [1, size], shape_signature=[1, -1])
    main.add_operator(
        "IF", [pick, x], [y],
        options={"then_subgraph_index": then.index, "else_subgraph_index": otherwise.index},
    )  # fmt: skip
    main.set_inputs([pick, x])
    main.set_outputs([y])
    for branch, width in ((then, size), (otherwise, 2 * size)):
        given, out = branch.add_tensor("x", [1, size]), branch.add_tensor("y", [1, width])
        if width == size:
            branch.add_operator("RELU", [given], [out])
        else:
            branch.add_operator("CONCATENATION", [given, given], [out], options={"axis": 1})
        branch.set_inputs([given])
        branch.set_outputs([out])
    return builder.build()


TURN_SHAPES = ("work", "nested", "if")


def _turns_loop(
    builder: ModelBuilder, graph: SubgraphBuilder, draw: _Draw, count: int, x: int, *,
    shape: str, depth: int = 0,
) -> int:  # fmt: skip
    """WHILE(count, x) while count < a drawn limit (0: never at count 0); the body works on x,
    or runs an inner loop over a constant zero (its first check known) or an IF."""
    limit_value = draw.draw.choice((0, 0, 1, 3))
    cond, body = builder.add_subgraph(f"cond{depth}"), builder.add_subgraph(f"body{depth}")
    step, state = cond.add_tensor("count", [1], "INT32"), draw.x(cond, "x")
    limit = cond.add_constant("limit", np.array([limit_value], np.int32))
    flag = cond.add_tensor("continue", [1], "BOOL")
    cond.add_operator("LESS", [step, limit], [flag])
    cond.set_inputs([step, state])
    cond.set_outputs([flag])
    step, state = body.add_tensor("count", [1], "INT32"), draw.x(body, "x")
    one = body.add_constant("one", np.array([1], np.int32))
    next_step = body.add_tensor("count_next", [1], "INT32")
    body.add_operator("ADD", [step, one], [next_step])
    if shape == "nested" and depth == 0:
        zero = body.add_constant("zero", np.array([0], np.int32))
        result = _turns_loop(builder, body, draw, zero, state, shape="work", depth=depth + 1)
    elif shape == "if":
        result = _if(builder, body, draw, step, state)
    else:
        result = _work(body, draw, state, draw.draw.choice(WORK), f"body{body.index}")
    body.set_inputs([step, state])
    body.set_outputs([next_step, result])
    outputs = [graph.add_tensor(f"count_out{graph.index}", [1], "INT32"),
               draw.x(graph, f"x_out{graph.index}")]  # fmt: skip
    graph.add_operator(
        "WHILE", [count, x], outputs,
        options={"cond_subgraph_index": cond.index, "body_subgraph_index": body.index},
    )  # fmt: skip
    return outputs[1]


def while_turns_case(seed: int) -> bytes:
    """A WHILE whose body may run zero times (heap_control_flow._while_eval): its count a
    constant 0 (the first check known: the body runs or never does) or the input count (the
    caller's zero: a run-time value), the limit 0, 1 or 3; the body works, runs an inner loop
    over a constant zero, or an IF. Shape by seed (TURN_SHAPES in turn), the rest drawn."""
    draw = _Draw(seed)
    shape = TURN_SHAPES[seed % len(TURN_SHAPES)]
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    count_input, x = main.add_tensor("count", [1], "INT32"), draw.x(main, "x")
    count = count_input
    if draw.draw.random() < 0.5:
        count = main.add_constant("start", np.array([0], np.int32))
    data = x
    if draw.draw.random() < 0.4:
        data = _work(main, draw, data, draw.draw.choice(WORK), "pre")
    data = _turns_loop(builder, main, draw, count, data, shape=shape)
    if draw.draw.random() < 0.4:
        data = _work(main, draw, data, draw.draw.choice(WORK), "post")
    main.set_inputs([count_input, x])
    main.set_outputs([data])
    return builder.build()


def if_state_case(seed: int) -> bytes:
    """IF(count < limit, x) whose branches leave the CPU back end differently (one works on x
    with a drawn operator, the other adds a constant: no back end), then work after it in main
    (a convolution: the back end and ruy's buffer if int8), limit 0 or 1 (the else or the then
    branch runs on the caller's zero count): what runs after an IF, when the branch that ran
    made less than the other."""
    draw = _Draw(seed)
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    count, x = main.add_tensor("count", [1], "INT32"), draw.x(main, "x")
    limit = main.add_constant("limit", np.array([draw.draw.choice((0, 1))], np.int32))
    pick = main.add_tensor("pick", [1], "BOOL")
    main.add_operator("LESS", [count, limit], [pick])
    kinds = [draw.draw.choice(("conv", "depthwise")), "add"]
    draw.draw.shuffle(kinds)
    branches = []
    for name, kind in zip(("then", "else"), kinds, strict=True):
        graph = builder.add_subgraph(name)
        given = draw.x(graph, "x")
        graph.set_inputs([given])
        graph.set_outputs([_work(graph, draw, given, kind, name)])
        branches.append(graph.index)
    picked = draw.x(main, "picked")
    main.add_operator(
        "IF", [pick, x], [picked],
        options={"then_subgraph_index": branches[0], "else_subgraph_index": branches[1]},
    )  # fmt: skip
    data = _work(main, draw, picked, "conv", "post")
    main.set_inputs([count, x])
    main.set_outputs([data])
    return builder.build()


def many_decisions_case(seed: int, decisions: int = 0) -> bytes:
    """4-6 IFs and WHILEs in a row in main, each decided by the count input (IF(count < limit),
    WHILE(count, x) while count < N): more than heap_ways replays one by one (2 ** 3 ways),
    with the zero count's way named (`ways16_*`, drawn after heap_ways' zero way beyond it);
    `decisions` sets their number instead (the draws then differ)."""
    draw = _Draw(seed)
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    count, x = main.add_tensor("count", [1], "INT32"), draw.x(main, "x")
    data = x
    for _ in range(decisions if decisions else draw.draw.choice((4, 5, 6))):
        if draw.draw.random() < 0.5:
            data = _if(builder, main, draw, count, data)
        else:
            data = _while(builder, main, draw, count, data, shape="while")
        if draw.draw.random() < 0.3:
            data = _work(main, draw, data, draw.draw.choice(WORK), f"between{data}")
    main.set_inputs([count, x])
    main.set_outputs([data])
    return builder.build()
