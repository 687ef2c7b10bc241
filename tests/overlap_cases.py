"""One-operator models for the overlap rules, and an offline plan that uses a rule's distance.

Each case builds a model with the project's builder: the operator under test reads model inputs
(so the real interpreter feeds it random data) and writes a model output. `place_overlap` writes
an offline plan (TFLM's OfflineMemoryAllocation) in which the output starts exactly the rule's
distance below the input (rounded up to the element size, less `short_by` bytes), every other
planned tensor above both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from arenalens.analysis.overlap_pairs import OverlapPair
from arenalens.builds.build import HOST
from arenalens.builds.kernel_paths import REFERENCE_PATH, KernelPath
from arenalens.examples.layers import Int8Network
from arenalens.ir import Model, OfflinePlan
from arenalens.planning.problem import align_up
from arenalens.runtimes import get_runtime
from arenalens.runtimes.tflm.overlap import arena_overlaps
from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from arenalens.tflite.reader import load_model
from arenalens.tflite.rewriter import rewrite_model


@dataclass(frozen=True)
class Placed:
    """A model rewritten so that one operator's output slides over one of its inputs."""

    data: bytes
    pair: OverlapPair
    distance: int  # offset(input) - offset(output) as written


def place_overlap(
    data: bytes,
    *,
    input_slot: int = 0,
    output_slot: int = 0,
    operator: int = 0,
    short_by: int = 0,
    paths: tuple[KernelPath, ...] = (REFERENCE_PATH,),
) -> Placed:
    """Model bytes → the same model with an offline plan that overlaps the chosen pair."""
    model = load_model(data)
    subgraph = model.subgraphs[0]
    op = subgraph.operators[operator]
    input_tensor, output_tensor = op.inputs[input_slot], op.outputs[output_slot]
    arena = get_runtime("tflm").arenas(model, HOST)[0]
    pairs = [
        p
        for p in arena_overlaps(model, arena, paths=paths)
        if (p.operator, p.input_tensor, p.output_tensor) == (operator, input_tensor, output_tensor)
    ]
    assert pairs, f"{op.opcode}: no overlap allowed for input {input_tensor}"
    pair = pairs[0]
    element = subgraph.tensors[input_tensor].dtype.element_bytes or 1
    distance = align_up(pair.overlap.min_offset_distance, element) - short_by
    output_offset = max(0, -distance)
    input_offset = output_offset + distance
    offsets = {output_tensor: output_offset, input_tensor: input_offset}
    cursor = align_up(
        max(
            output_offset + subgraph.tensors[output_tensor].nbytes,
            input_offset + subgraph.tensors[input_tensor].nbytes,
        ),
        16,
    )
    for planned in sorted(arena.buffers.values(), key=lambda p: p.id):
        if planned.tensor is None or planned.tensor in offsets or planned.subgraph != 0:
            continue
        offsets[planned.tensor] = cursor
        cursor = align_up(cursor + arena.problem.by_id[planned.id].size, 16)
    values = tuple(offsets.get(t.index, -1) for t in subgraph.tensors)
    written = rewrite_model(data, offline_plan=OfflinePlan(0, 1, values))
    return Placed(written, pair, distance)


# ---------------------------------------------------------------------------------------------
# Models


def _float_graph(seed: int) -> tuple[ModelBuilder, SubgraphBuilder, np.random.Generator]:
    builder = ModelBuilder(description="overlap rule test")
    return builder, builder.add_subgraph("main"), np.random.default_rng(seed)


def _finish(
    builder: ModelBuilder, graph: SubgraphBuilder, inputs: list[int], outputs: list[int]
) -> bytes:
    graph.set_inputs(inputs)
    graph.set_outputs(outputs)
    return builder.build()


def int8_conv(
    *,
    kernel: int | tuple[int, int],
    stride: int,
    channels: int,
    padding: str = "SAME",
    shape: tuple[int, int, int, int] = (1, 9, 9, 4),
) -> bytes:
    """int8 CONV_2D (a 9x9x4 input unless `shape` says otherwise)."""
    net = Int8Network(seed=3, description="conv")
    x = net.input("x", shape, (-4.0, 4.0))
    y = net.conv2d(
        x,
        "conv",
        channels=channels,
        kernel=kernel if isinstance(kernel, tuple) else (kernel, kernel),
        stride=stride,
        padding=padding,
        activation="NONE",
    )
    return net.build([x], [y])


def int8_depthwise(
    *,
    stride: int,
    kernel: int = 3,
    shape: tuple[int, int, int, int] = (1, 9, 9, 8),
    multiplier: int = 1,
) -> bytes:
    """int8 DEPTHWISE_CONV_2D (a 9x9x8 input, multiplier 1, unless told otherwise)."""
    net = Int8Network(seed=4, description="depthwise")
    x = net.input("x", shape, (-4.0, 4.0))
    y = net.depthwise_conv2d(
        x,
        "dw",
        kernel=(kernel, kernel),
        stride=stride,
        activation="NONE",
        multiplier=multiplier,
    )
    return net.build([x], [y])


def int8_pool(
    opcode: str,
    *,
    pool: int,
    stride: int,
    padding: str,
    shape: tuple[int, int, int, int] = (1, 9, 9, 6),
) -> bytes:
    """int8 AVERAGE_POOL_2D / MAX_POOL_2D (a 9x9x6 input unless `shape` says otherwise)."""
    net = Int8Network(seed=5, description="pool")
    x = net.input("x", shape, (-4.0, 4.0))
    if opcode == "AVERAGE_POOL_2D":
        y = net.average_pool(x, "pool", pool=(pool, pool), stride=stride, padding=padding)
    else:
        y = net.max_pool(x, "pool", pool=(pool, pool), stride=stride, padding=padding)
    return net.build([x], [y])


def int8_add() -> bytes:
    """int8 ADD of two 6x6x8 inputs."""
    net = Int8Network(seed=6, description="add")
    a = net.input("a", (1, 6, 6, 8), (-4.0, 4.0))
    b = net.input("b", (1, 6, 6, 8), (-2.0, 2.0))
    y = net.add(a, b, "add", activation="NONE")
    return net.build([a, b], [y])


def int8_softmax() -> bytes:
    """int8 SOFTMAX over rows of 10."""
    net = Int8Network(seed=7, description="softmax")
    x = net.input("x", (6, 10), (-4.0, 4.0))
    return net.build([x], [net.softmax(x, "softmax")])


def float_conv(
    *, kernel: int, stride: int, dilation: int = 1, groups: int = 1, channels: int = 8
) -> bytes:
    """float CONV_2D (optionally dilated or grouped) on a 9x9x4 input."""
    builder, graph, rng = _float_graph(8)
    x = graph.add_tensor("x", (1, 9, 9, 4))
    weights = graph.add_constant(
        "w", rng.normal(0, 0.5, (channels, kernel, kernel, 4 // groups)).astype(np.float32)
    )
    bias = graph.add_constant("b", rng.normal(0, 0.1, (channels,)).astype(np.float32))
    out_size = -(-9 // stride)
    y = graph.add_tensor("y", (1, out_size, out_size, channels))
    graph.add_operator(
        "CONV_2D",
        [x, weights, bias],
        [y],
        options={
            "padding": "SAME",
            "stride_w": stride,
            "stride_h": stride,
            "dilation_wfactor": dilation,
            "dilation_hfactor": dilation,
        },
    )
    return _finish(builder, graph, [x], [y])


def float_depthwise(*, multiplier: int, stride: int) -> bytes:
    """float DEPTHWISE_CONV_2D with a depth multiplier on a 7x7x3 input."""
    builder, graph, rng = _float_graph(9)
    x = graph.add_tensor("x", (1, 7, 7, 3))
    channels = 3 * multiplier
    weights = graph.add_constant("w", rng.normal(0, 0.5, (1, 3, 3, channels)).astype(np.float32))
    bias = graph.add_constant("b", rng.normal(0, 0.1, (channels,)).astype(np.float32))
    out_size = -(-7 // stride)
    y = graph.add_tensor("y", (1, out_size, out_size, channels))
    graph.add_operator(
        "DEPTHWISE_CONV_2D",
        [x, weights, bias],
        [y],
        options={
            "padding": "SAME",
            "stride_w": stride,
            "stride_h": stride,
            "depth_multiplier": multiplier,
        },
    )
    return _finish(builder, graph, [x], [y])


def float_l2_pool() -> bytes:
    """float L2_POOL_2D 2x2 stride 2."""
    builder, graph, _ = _float_graph(10)
    x = graph.add_tensor("x", (1, 8, 8, 4))
    y = graph.add_tensor("y", (1, 4, 4, 4))
    graph.add_operator(
        "L2_POOL_2D",
        [x],
        [y],
        options={
            "padding": "VALID",
            "stride_w": 2,
            "stride_h": 2,
            "filter_width": 2,
            "filter_height": 2,
        },
    )
    return _finish(builder, graph, [x], [y])


def float_unary(opcode: str) -> bytes:
    """A float32 unary operator on 4x5x6 (inputs drawn from a unit normal)."""
    builder, graph, _ = _float_graph(11)
    x = graph.add_tensor("x", (4, 5, 6))
    y = graph.add_tensor("y", (4, 5, 6))
    graph.add_operator(opcode, [x], [y])
    return _finish(builder, graph, [x], [y])


def int8_unary(opcode: str, output_type: str = "INT8") -> bytes:
    """An int8 operator with one input (LOGISTIC, TANH, QUANTIZE, DEQUANTIZE, CAST, ...)."""
    builder, graph, _ = _float_graph(12)
    spec = quantization(0.05, 3)
    x = graph.add_tensor("x", (3, 40), "INT8", quantization=spec)
    out_spec = {
        "LOGISTIC": quantization(1 / 256, -128),
        "TANH": quantization(1 / 128, 0),
        "QUANTIZE": quantization(0.07, -5),
    }.get(opcode, spec)
    y = graph.add_tensor(
        "y", (3, 40), output_type, quantization=out_spec if output_type == "INT8" else None
    )
    graph.add_operator(opcode, [x], [y])
    return _finish(builder, graph, [x], [y])


def float_binary(opcode: str, *, broadcast: bool = False, output_type: str = "FLOAT32") -> bytes:
    """A float32 binary operator, optionally broadcasting the second input over the first."""
    builder, graph, _ = _float_graph(13)
    a = graph.add_tensor("a", (2, 5, 5, 6))
    b = graph.add_tensor("b", (1, 1, 5, 6) if broadcast else (2, 5, 5, 6))
    y = graph.add_tensor("y", (2, 5, 5, 6), output_type)
    graph.add_operator(opcode, [a, b], [y])
    return _finish(builder, graph, [a, b], [y])


def int8_compare(opcode: str) -> bytes:
    """int8 comparison → bool (same quantization on both inputs)."""
    builder, graph, _ = _float_graph(14)
    spec = quantization(0.05, 0)
    a = graph.add_tensor("a", (4, 30), "INT8", quantization=spec)
    b = graph.add_tensor("b", (4, 30), "INT8", quantization=spec)
    y = graph.add_tensor("y", (4, 30), "BOOL")
    graph.add_operator(opcode, [a, b], [y])
    return _finish(builder, graph, [a, b], [y])


def float_softmax(opcode: str = "SOFTMAX") -> bytes:
    """float SOFTMAX / LOG_SOFTMAX over rows of 7."""
    builder, graph, _ = _float_graph(15)
    x = graph.add_tensor("x", (5, 7))
    y = graph.add_tensor("y", (5, 7))
    graph.add_operator(opcode, [x], [y], options={"beta": 1.0} if opcode == "SOFTMAX" else None)
    return _finish(builder, graph, [x], [y])


def float_pad(opcode: str = "PAD") -> bytes:
    """PAD / PADV2 of a 4x5x3 input with uneven paddings."""
    builder, graph, _ = _float_graph(16)
    x = graph.add_tensor("x", (1, 4, 5, 3))
    paddings = graph.add_constant("paddings", np.array([[0, 0], [1, 2], [2, 1], [0, 1]], np.int32))
    inputs = [x, paddings]
    if opcode == "PADV2":
        inputs.append(graph.add_constant("value", np.array([0.5], np.float32)))
    y = graph.add_tensor("y", (1, 7, 8, 4))
    graph.add_operator(opcode, inputs, [y])
    return _finish(builder, graph, [x], [y])


def float_transpose() -> bytes:
    """TRANSPOSE with perm (0, 2, 1, 3)."""
    builder, graph, _ = _float_graph(17)
    x = graph.add_tensor("x", (1, 4, 6, 5))
    perm = graph.add_constant("perm", np.array([0, 2, 1, 3], np.int32))
    y = graph.add_tensor("y", (1, 6, 4, 5))
    graph.add_operator("TRANSPOSE", [x, perm], [y])
    return _finish(builder, graph, [x], [y])


def float_concatenation(axis: int) -> bytes:
    """CONCATENATION of two inputs along an axis."""
    builder, graph, _ = _float_graph(18)
    a = graph.add_tensor("a", (1, 4, 3, 5))
    shape_b = [1, 4, 3, 5]
    shape_b[axis] = 2
    b = graph.add_tensor("b", tuple(shape_b))
    shape_y = [1, 4, 3, 5]
    shape_y[axis] += 2
    y = graph.add_tensor("y", tuple(shape_y))
    graph.add_operator("CONCATENATION", [a, b], [y], options={"axis": axis})
    return _finish(builder, graph, [a, b], [y])


def float_split(opcode: str) -> bytes:
    """SPLIT / SPLIT_V / UNPACK of a 3x4x6 input into parts along axis 1."""
    builder, graph, _ = _float_graph(19)
    x = graph.add_tensor("x", (3, 4, 6))
    if opcode == "UNPACK":
        outputs = [graph.add_tensor(f"y{i}", (3, 6)) for i in range(4)]
        graph.add_operator("UNPACK", [x], outputs, options={"num": 4, "axis": 1})
        return _finish(builder, graph, [x], outputs)
    axis = graph.add_constant("axis", np.array([1], np.int32))
    if opcode == "SPLIT":
        outputs = [graph.add_tensor(f"y{i}", (3, 2, 6)) for i in range(2)]
        graph.add_operator("SPLIT", [axis, x], outputs, options={"num_splits": 2})
    else:
        sizes = graph.add_constant("sizes", np.array([1, 3], np.int32))
        outputs = [graph.add_tensor("y0", (3, 1, 6)), graph.add_tensor("y1", (3, 3, 6))]
        graph.add_operator("SPLIT_V", [x, sizes, axis], outputs, options={"num_splits": 2})
    return _finish(builder, graph, [x], outputs)


def float_pack() -> bytes:
    """PACK of three 4x5 inputs along axis 1."""
    builder, graph, _ = _float_graph(20)
    parts = [graph.add_tensor(f"x{i}", (4, 5)) for i in range(3)]
    y = graph.add_tensor("y", (4, 3, 5))
    graph.add_operator("PACK", parts, [y], options={"values_count": 3, "axis": 1})
    return _finish(builder, graph, parts, [y])


def float_strided_slice() -> bytes:
    """STRIDED_SLICE with unit inner stride over a 6x8x5 input."""
    builder, graph, _ = _float_graph(21)
    x = graph.add_tensor("x", (6, 8, 5))
    begin = graph.add_constant("begin", np.array([1, 2, 0], np.int32))
    end = graph.add_constant("end", np.array([5, 8, 5], np.int32))
    strides = graph.add_constant("strides", np.array([1, 2, 1], np.int32))
    y = graph.add_tensor("y", (4, 3, 5))
    graph.add_operator("STRIDED_SLICE", [x, begin, end, strides], [y])
    return _finish(builder, graph, [x], [y])


def int8_pad(paddings: tuple[tuple[int, int], ...] = ((0, 0), (1, 2), (2, 1), (0, 0))) -> bytes:
    """int8 PAD of a 1x5x6x4 input (CMSIS-NN: arm_pad_s8)."""
    builder, graph, _ = _float_graph(22)
    spec = quantization(0.05, 3)
    x = graph.add_tensor("x", (1, 5, 6, 4), "INT8", quantization=spec)
    table = graph.add_constant("paddings", np.array(paddings, np.int32))
    shape = tuple(
        size + low + high for size, (low, high) in zip((1, 5, 6, 4), paddings, strict=True)
    )
    y = graph.add_tensor("y", shape, "INT8", quantization=spec)
    graph.add_operator("PAD", [x, table], [y])
    return _finish(builder, graph, [x], [y])


def int8_transpose(shape: tuple[int, ...], perm: tuple[int, ...]) -> bytes:
    """int8 TRANSPOSE (CMSIS-NN: arm_transpose_s8)."""
    builder, graph, _ = _float_graph(23)
    spec = quantization(0.05, 3)
    x = graph.add_tensor("x", shape, "INT8", quantization=spec)
    order = graph.add_constant("perm", np.array(perm, np.int32))
    y = graph.add_tensor("y", tuple(shape[p] for p in perm), "INT8", quantization=spec)
    graph.add_operator("TRANSPOSE", [x, order], [y])
    return _finish(builder, graph, [x], [y])


def load(data: bytes) -> Model:
    """Model bytes → IR."""
    return load_model(data)


Case = tuple[str, Callable[[], bytes], int, int]
