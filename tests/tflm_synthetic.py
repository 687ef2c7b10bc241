"""Small synthetic models that exercise TFLM memory rules the shared corpus does not reach."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from flatbuffers import flexbuffers

from arenalens.ir import OfflinePlan
from arenalens.tflite.builder import ModelBuilder, QuantizationSpec, SubgraphBuilder, quantization
from arenalens.tflite.offline_plan import encode_offline_plan
from tests.fixtures.optimize_models import streaming_state_model

INT8_Q = quantization(0.1, 0)


def single_operator(
    opcode: str,
    inputs: Sequence[tuple[Any, ...]],
    outputs: Sequence[tuple[tuple[int, ...], str, QuantizationSpec | None]],
    options: dict[str, Any] | None = None,
) -> bytes:
    """One operator; inputs are ('in', shape, dtype, q) | ('const', array, dtype, q) | ('none',)."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    tensors: list[int] = []
    graph_inputs: list[int] = []
    for position, spec in enumerate(inputs):
        if spec[0] == "none":
            tensors.append(-1)
        elif spec[0] == "const":
            _, array, dtype, *rest = spec
            q = rest[0] if rest else None
            tensors.append(graph.add_constant(f"c{position}", array, dtype, quantization=q))
        else:
            _, shape, dtype, *rest = spec
            q = rest[0] if rest else None
            tensors.append(graph.add_tensor(f"in{position}", shape, dtype, quantization=q))
            graph_inputs.append(tensors[-1])
    results = [
        graph.add_tensor(f"out{i}", shape, dtype, quantization=q)
        for i, (shape, dtype, q) in enumerate(outputs)
    ]
    graph.add_operator(opcode, tensors, results, options=options)
    graph.set_inputs(graph_inputs)
    graph.set_outputs(results)
    return builder.build()


def per_channel(count: int, axis: int = 0) -> QuantizationSpec:
    return quantization([0.1] * count, 0, axis=axis)


def add_n_float() -> bytes:
    return single_operator(
        "ADD_N", [("in", (1, 8, 8), "FLOAT32")] * 3, [((1, 8, 8), "FLOAT32", None)]
    )


def add_n_int8() -> bytes:
    return single_operator(
        "ADD_N", [("in", (1, 8, 8), "INT8", INT8_Q)] * 3, [((1, 8, 8), "INT8", INT8_Q)]
    )


def mirror_pad() -> bytes:
    paddings = np.array([[0, 0], [1, 1], [1, 1], [0, 0]], dtype=np.int32)
    return single_operator(
        "MIRROR_PAD",
        [("in", (1, 6, 6, 2), "FLOAT32"), ("const", paddings, "INT32")],
        [((1, 8, 8, 2), "FLOAT32", None)],
        {"mode": "REFLECT"},
    )


def reduce(opcode: str, dtype: str) -> Callable[[], bytes]:
    def build() -> bytes:
        q = INT8_Q if dtype == "INT8" else None
        axes = np.array([1, 2], dtype=np.int32)
        return single_operator(
            opcode,
            [("in", (1, 6, 6, 4), dtype, q), ("const", axes, "INT32")],
            [((1, 1, 1, 4), dtype, q)],
            {"keep_dims": True},
        )

    return build


def softmax_int16() -> bytes:
    q16 = quantization(1 / 32768, 0)
    return single_operator("SOFTMAX", [("in", (1, 40), "INT16", q16)], [((1, 40), "INT16", q16)])


def transpose_conv_int8() -> bytes:
    return single_operator(
        "TRANSPOSE_CONV",
        [
            ("const", np.array([1, 8, 8, 8], np.int32), "INT32"),
            ("const", np.ones((8, 3, 3, 4), np.int8), "INT8", per_channel(8)),
            ("in", (1, 4, 4, 4), "INT8", INT8_Q),
        ],
        [((1, 8, 8, 8), "INT8", INT8_Q)],
        {"padding": "SAME", "stride_w": 2, "stride_h": 2},
    )


def fully_connected_per_channel(channels: int = 16) -> bytes:
    return single_operator(
        "FULLY_CONNECTED",
        [
            ("in", (1, 32), "INT8", INT8_Q),
            ("const", np.ones((channels, 32), np.int8), "INT8", per_channel(channels)),
            ("const", np.zeros(channels, np.int32), "INT32", per_channel(channels)),
        ],
        [((1, channels), "INT8", INT8_Q)],
    )


def depthwise_per_channel(channels: int = 16) -> bytes:
    return single_operator(
        "DEPTHWISE_CONV_2D",
        [
            ("in", (1, 6, 6, channels), "INT8", INT8_Q),
            ("const", np.ones((1, 3, 3, channels), np.int8), "INT8", per_channel(channels, 3)),
            ("const", np.zeros(channels, np.int32), "INT32", per_channel(channels)),
        ],
        [((1, 4, 4, channels), "INT8", INT8_Q)],
        {"padding": "VALID", "depth_multiplier": 1},
    )


def conv_int4(channels: int = 8) -> bytes:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("x", [1, 6, 6, 4], "INT8", quantization=INT8_Q)
    weights = graph.add_tensor(
        "w",
        [channels, 3, 3, 4],
        "INT4",
        data=bytes(channels * 18),
        quantization=per_channel(channels),
    )
    bias = graph.add_constant("b", np.zeros(channels, np.int32), quantization=per_channel(channels))
    result = graph.add_tensor("y", [1, 4, 4, channels], "INT8", quantization=INT8_Q)
    graph.add_operator("CONV_2D", [source, weights, bias], [result], options={"padding": "VALID"})
    graph.set_inputs([source])
    graph.set_outputs([result])
    return builder.build()


def if_with_unreachable_subgraph() -> bytes:
    """IF over two branch subgraphs, plus a subgraph nothing calls (TFLM still prepares it)."""
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    branches = [builder.add_subgraph(name) for name in ("then", "else", "unreachable")]
    condition = main.add_tensor("cond", [1], "BOOL")
    source = main.add_tensor("x", [1, 64])
    picked = main.add_tensor("y", [1, 64])
    result = main.add_tensor("z", [1, 64])
    main.add_operator(
        "IF",
        [condition, source],
        [picked],
        options={"then_subgraph_index": 1, "else_subgraph_index": 2},
    )
    main.add_operator("RELU", [picked], [result])
    main.set_inputs([condition, source])
    main.set_outputs([result])
    for graph, opcode in zip(branches, ("RELU", "TANH", "LOGISTIC"), strict=True):
        inner = graph.add_tensor("i", [1, 64])
        middle = graph.add_tensor("m", [1, 64])
        out = graph.add_tensor("o", [1, 64])
        graph.add_operator(opcode, [inner], [middle])
        graph.add_operator("RELU", [middle], [out])
        graph.set_inputs([inner])
        graph.set_outputs([out])
    return builder.build()


def offline_planned_chain() -> bytes:
    """Two FULLY_CONNECTED with the input pinned at offset 8 by an OfflineMemoryAllocation."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("x", [1, 48])
    middle = graph.add_tensor("m", [1, 92])
    result = graph.add_tensor("o", [1, 10])
    first = graph.add_constant("w1", np.ones((92, 48), np.float32))
    second = graph.add_constant("w2", np.ones((10, 92), np.float32))
    graph.add_operator("FULLY_CONNECTED", [source, first, -1], [middle])
    graph.add_operator("FULLY_CONNECTED", [middle, second, -1], [result])
    graph.set_inputs([source])
    graph.set_outputs([result])
    plan = OfflinePlan(0, 1, (8, -1, -1, -1, -1))
    builder.add_metadata("OfflineMemoryAllocation", encode_offline_plan(plan))
    return builder.build()


def svdf_with_variable_state() -> bytes:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("x", [1, 16], "INT8", quantization=INT8_Q)
    state = graph.add_tensor(
        "state", [1, 32], "INT16", quantization=quantization(0.01, 0), is_variable=True
    )
    features = graph.add_constant("wf", np.ones((8, 16), np.int8), quantization=INT8_Q)
    time = graph.add_constant("wt", np.ones((8, 4), np.int16), quantization=quantization(0.01, 0))
    bias = graph.add_constant("b", np.zeros(8, np.int32), quantization=quantization(0.0001, 0))
    result = graph.add_tensor("o", [1, 8], "INT8", quantization=INT8_Q)
    graph.add_operator("SVDF", [source, features, time, bias, state], [result], options={"rank": 1})
    graph.set_inputs([source])
    graph.set_outputs([result])
    return builder.build()


def detection_postprocess(boxes: int = 32, classes: int = 3, max_detections: int = 5) -> bytes:
    """TFLite_Detection_PostProcess: eleven scratch buffers sized by boxes and detections."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    encodings = graph.add_tensor("boxes", [1, boxes, 4])
    scores = graph.add_tensor("scores", [1, boxes, classes + 1])
    anchors = graph.add_constant("anchors", np.ones((boxes, 4), np.float32))
    results = [
        graph.add_tensor("detection_boxes", [1, max_detections, 4]),
        graph.add_tensor("detection_classes", [1, max_detections]),
        graph.add_tensor("detection_scores", [1, max_detections]),
        graph.add_tensor("detections", [1]),
    ]
    options = {
        "max_detections": max_detections,
        "max_classes_per_detection": 1,
        "detections_per_class": 100,
        "num_classes": classes,
        "nms_score_threshold": 0.5,
        "nms_iou_threshold": 0.5,
        "y_scale": 10.0,
        "x_scale": 10.0,
        "h_scale": 5.0,
        "w_scale": 5.0,
        "use_regular_nms": False,
    }
    graph.add_operator(
        "CUSTOM:TFLite_Detection_PostProcess",
        [encodings, scores, anchors],
        results,
        custom_options=bytes(flexbuffers.Dumps(options)),
    )
    graph.set_inputs([encodings, scores])
    graph.set_outputs(results)
    return builder.build()


def _resource_handle(graph: SubgraphBuilder, name: str, **options: str) -> int:
    """A VAR_HANDLE for the variable `name` in graph; returns its handle tensor."""
    handle = graph.add_tensor(f"{name}/handle", [1], "RESOURCE")
    graph.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": name, **options})
    return handle


# Variables of several sizes and types, none a multiple of 16 bytes: (name, shape, dtype).
MIXED_VARIABLES = (
    ("counter", (1, 7), "INT8"),
    ("history", (3, 5), "INT16"),
    ("features", (2, 9), "FLOAT32"),
    ("steps", (1, 3), "INT64"),
)


def resource_variables_mixed() -> bytes:
    """Four resource variables of different sizes and types, zeroed by a CALL_ONCE subgraph.

    Main reads and re-assigns each (its ASSIGN_VARIABLE allocates the buffer, in Prepare); the
    init subgraph, prepared later, finds every buffer allocated.
    """
    builder = ModelBuilder()
    main, init = builder.add_subgraph("main"), builder.add_subgraph("init")
    source = main.add_tensor("x", [1, 4])
    result = main.add_tensor("y", [1, 4])
    main.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": init.index})
    for name, shape, dtype in MIXED_VARIABLES:
        handle = _resource_handle(main, name)
        q = INT8_Q if dtype in ("INT8", "INT16") else None
        value = main.add_tensor(f"{name}/value", shape, dtype, quantization=q)
        main.add_operator("READ_VARIABLE", [handle], [value])
        main.add_operator("ASSIGN_VARIABLE", [handle, value], [])
    main.add_operator("RELU", [source], [result])
    main.set_inputs([source])
    main.set_outputs([result])
    for name, shape, dtype in MIXED_VARIABLES:
        handle = _resource_handle(init, name)
        zeros = init.add_constant(f"{name}/zeros", np.zeros(shape, dtype.lower()))
        init.add_operator("ASSIGN_VARIABLE", [handle, zeros], [])
    return builder.build()


def resource_variables_init_only() -> bytes:
    """Main only reads; CALL_ONCE's subgraph assigns two variables; a third is never assigned.

    The buffers are allocated in the init subgraph's Prepare (after main's), in its order; the
    never-assigned variable still takes a table entry but no buffer.
    """
    builder = ModelBuilder()
    main, init = builder.add_subgraph("main"), builder.add_subgraph("init")
    source = main.add_tensor("x", [1, 4])
    result = main.add_tensor("y", [1, 4])
    main.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": init.index})
    for name, shape in (("p", (1, 5)), ("q", (2, 13)), ("never", (1, 100))):
        handle = _resource_handle(main, name)
        main.add_operator("READ_VARIABLE", [handle], [main.add_tensor(f"{name}/value", shape)])
    main.add_operator("RELU", [source], [result])
    main.set_inputs([source])
    main.set_outputs([result])
    for name, shape in (("q", (2, 13)), ("p", (1, 5))):
        handle = _resource_handle(init, name)
        zeros = init.add_constant(f"{name}/zeros", np.zeros(shape, np.float32))
        init.add_operator("ASSIGN_VARIABLE", [handle, zeros], [])
    return builder.build()


def resource_variable_shared_handles() -> bytes:
    """Two VAR_HANDLEs of one variable in one container (one id, one buffer), assigned twice."""
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    source = main.add_tensor("x", [1, 6])
    result = main.add_tensor("y", [1, 6])
    first, second = (_resource_handle(main, "s", container="c") for _ in range(2))
    main.add_operator("ASSIGN_VARIABLE", [second, source], [])
    value = main.add_tensor("value", [1, 6])
    main.add_operator("READ_VARIABLE", [first], [value])
    main.add_operator("ADD", [value, source], [result])
    main.add_operator("ASSIGN_VARIABLE", [first, result], [])
    main.set_inputs([source])
    main.set_outputs([result])
    return builder.build()


def resource_handle_through_if() -> bytes:
    """A handle passed into IF branches that assign it: unbound in their Prepare, so no buffer."""
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    branches = [builder.add_subgraph(name) for name in ("then", "else")]
    condition = main.add_tensor("cond", [1], "BOOL")
    source = main.add_tensor("x", [1, 6])
    result = main.add_tensor("y", [1, 6])
    handle = _resource_handle(main, "s")
    main.add_operator(
        "IF",
        [condition, handle, source],
        [result],
        options={"then_subgraph_index": 1, "else_subgraph_index": 2},
    )
    main.set_inputs([condition, source])
    main.set_outputs([result])
    for graph in branches:
        inner_handle = graph.add_tensor("h", [1], "RESOURCE")
        inner = graph.add_tensor("x", [1, 6])
        out = graph.add_tensor("y", [1, 6])
        graph.add_operator("RELU", [inner], [out])
        graph.add_operator("ASSIGN_VARIABLE", [inner_handle, out], [])
        graph.set_inputs([inner_handle, inner])
        graph.set_outputs([out])
    return builder.build()


def resource_variable_in_while_body() -> bytes:
    """WHILE (LESS in cond) whose body binds, reads and assigns a variable of its own."""
    builder = ModelBuilder()
    main, cond, body = (builder.add_subgraph(name) for name in ("main", "cond", "body"))
    count, source = main.add_tensor("i", [1], "INT32"), main.add_tensor("x", [1, 10])
    outputs = [main.add_tensor("i_out", [1], "INT32"), main.add_tensor("x_out", [1, 10])]
    main.add_operator(
        "WHILE",
        [count, source],
        outputs,
        options={"cond_subgraph_index": cond.index, "body_subgraph_index": body.index},
    )
    main.set_inputs([count, source])
    main.set_outputs(outputs)
    step, state = cond.add_tensor("i", [1], "INT32"), cond.add_tensor("x", [1, 10])
    limit = cond.add_constant("limit", np.array([3], np.int32))
    flag = cond.add_tensor("continue", [1], "BOOL")
    cond.add_operator("LESS", [step, limit], [flag])
    cond.set_inputs([step, state])
    cond.set_outputs([flag])
    step, state = body.add_tensor("i", [1], "INT32"), body.add_tensor("x", [1, 10])
    one = body.add_constant("one", np.array([1], np.int32))
    next_step, total = body.add_tensor("i_next", [1], "INT32"), body.add_tensor("total", [1, 10])
    handle = _resource_handle(body, "accumulator")
    value = body.add_tensor("value", [1, 10])
    body.add_operator("READ_VARIABLE", [handle], [value])
    body.add_operator("ADD", [value, state], [total])
    body.add_operator("ASSIGN_VARIABLE", [handle, total], [])
    body.add_operator("ADD", [step, one], [next_step])
    body.set_inputs([step, state])
    body.set_outputs([next_step, total])
    return builder.build()


SYNTHETIC_MODELS: dict[str, Callable[[], bytes]] = {
    "detection_postprocess": detection_postprocess,
    "add_n_float": add_n_float,
    "add_n_int8": add_n_int8,
    "mirror_pad": mirror_pad,
    "sum_int8": reduce("SUM", "INT8"),
    "mean_float": reduce("MEAN", "FLOAT32"),
    "reduce_max_float": reduce("REDUCE_MAX", "FLOAT32"),
    "softmax_int16": softmax_int16,
    "transpose_conv_int8": transpose_conv_int8,
    "fully_connected_per_channel": fully_connected_per_channel,
    "depthwise_per_channel": depthwise_per_channel,
    "conv_int4": conv_int4,
    "if_with_unreachable_subgraph": if_with_unreachable_subgraph,
    "offline_planned_chain": offline_planned_chain,
    "svdf_with_variable_state": svdf_with_variable_state,
    "resource_variables_mixed": resource_variables_mixed,
    "resource_variables_init_only": resource_variables_init_only,
    "resource_variable_shared_handles": resource_variable_shared_handles,
    "resource_handle_through_if": resource_handle_through_if,
    "resource_variable_in_while_body": resource_variable_in_while_body,
    "streaming_state": streaming_state_model,
}
