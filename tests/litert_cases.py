"""Small models that exercise one LiteRT planning rule each (kernel temporaries, allocation-type
changes, chunks, ties, in-place sharing, control flow), built with arenalens.tflite.builder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization

RANDOM = np.random.default_rng(0)


def _floats(*shape: int) -> np.ndarray:
    return RANDOM.standard_normal(shape).astype(np.float32)


def _int8(*shape: int) -> np.ndarray:
    return RANDOM.integers(-127, 128, size=shape, dtype=np.int64).astype(np.int8)


def _single(build: Callable[[ModelBuilder, SubgraphBuilder], tuple[list[int], list[int]]]) -> bytes:
    model = ModelBuilder()
    graph = model.add_subgraph("main")
    inputs, outputs = build(model, graph)
    graph.set_inputs(inputs)
    graph.set_outputs(outputs)
    return model.build()


def split20() -> bytes:
    """A 20-way equal-size SPLIT — 20 tied outputs, more than insertion sort's 16
    (docs/runtime-rules.md §L5)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 20, 8])
        axis = g.add_constant("axis", np.array(1, dtype=np.int32))
        parts = [g.add_tensor(f"part{i}", [1, 1, 8]) for i in range(20)]
        g.add_operator("SPLIT", [axis, x], parts, options={"num_splits": 20})
        relus = []
        for i, part in enumerate(parts):
            relus.append(g.add_tensor(f"relu{i}", [1, 1, 8]))
            g.add_operator("RELU", [part], [relus[-1]])
        y = g.add_tensor("y", [1, 20, 8])
        g.add_operator("CONCATENATION", relus, [y], options={"axis": 1})
        return [x], [y]

    return _single(build)


def _conv(
    g: SubgraphBuilder,
    x: int,
    filter_shape: tuple[int, int, int, int],
    out_shape: list[int],
    **options: object,
) -> int:
    weights = g.add_constant("w", _floats(*filter_shape))
    bias = g.add_constant("b", _floats(filter_shape[0]))
    y = g.add_tensor("y", out_shape)
    g.add_operator("CONV_2D", [x, weights, bias], [y], options=options)
    return y


def conv_float_im2col() -> bytes:
    """3×3 stride-2 SAME conv: im2col [1, 4, 4, 27]."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 8, 8, 3])
        y = _conv(g, x, (4, 3, 3, 3), [1, 4, 4, 4], stride_w=2, stride_h=2, padding="SAME")
        return [x], [y]

    return _single(build)


def conv_dilated() -> bytes:
    """Dilated 3×3 conv, stride 1: im2col needed for dilation alone."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 9, 9, 2])
        y = _conv(
            g,
            x,
            (3, 3, 3, 2),
            [1, 5, 5, 3],
            padding="VALID",
            dilation_wfactor=2,
            dilation_hfactor=2,
        )
        return [x], [y]

    return _single(build)


def conv_1x1_chain() -> bytes:
    """1×1 stride-1 convs: no im2col; a residual ADD shares its input in place."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 6, 6, 8])
        a = _conv(g, x, (8, 1, 1, 8), [1, 6, 6, 8])
        b = _conv(g, a, (8, 1, 1, 8), [1, 6, 6, 8])
        c = g.add_tensor("sum", [1, 6, 6, 8])
        g.add_operator("ADD", [b, a], [c])
        d = _conv(g, c, (4, 1, 1, 8), [1, 6, 6, 4])
        return [x], [d]

    return _single(build)


def _hybrid_filter(shape: tuple[int, ...], *, per_channel: bool, axis: int = 0) -> tuple[Any, Any]:
    channels = shape[axis]
    scales = np.linspace(0.01, 0.05, channels) if per_channel else [0.02]
    return _int8(*shape), quantization(scales, 0, axis=axis)


def conv_hybrid(per_channel: bool) -> bytes:
    """Float input, int8 filter: im2col (int8) + hybrid temporaries (+ per-channel extras)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 6, 6, 4])
        data, spec = _hybrid_filter((3, 3, 3, 4), per_channel=per_channel)
        weights = g.add_constant("w", data, "INT8", quantization=spec)
        bias = g.add_constant("b", _floats(3))
        y = g.add_tensor("y", [1, 3, 3, 3])
        g.add_operator(
            "CONV_2D",
            [x, weights, bias],
            [y],
            options={"stride_w": 2, "stride_h": 2, "padding": "SAME"},
        )
        z = g.add_tensor("z", [1, 3, 3, 3])
        g.add_operator("RELU", [y], [z])
        return [x], [z]

    return _single(build)


def depthwise_hybrid() -> bytes:
    """Float input, per-channel int8 depthwise filter: three hybrid temporaries."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 6, 6, 4])
        data, spec = _hybrid_filter((1, 3, 3, 4), per_channel=True, axis=3)
        weights = g.add_constant("w", data, "INT8", quantization=spec)
        bias = g.add_constant("b", _floats(4))
        y = g.add_tensor("y", [1, 6, 6, 4])
        g.add_operator("DEPTHWISE_CONV_2D", [x, weights, bias], [y], options={"padding": "SAME"})
        return [x], [y]

    return _single(build)


def fully_connected_hybrid() -> bytes:
    """Float input, int8 weights: five temporaries, row sums in the persistent arena."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [2, 16])
        data, spec = _hybrid_filter((8, 16), per_channel=False)
        weights = g.add_constant("w", data, "INT8", quantization=spec)
        bias = g.add_constant("b", _floats(8))
        y = g.add_tensor("y", [2, 8])
        g.add_operator("FULLY_CONNECTED", [x, weights, bias], [y])
        data2, spec2 = _hybrid_filter((4, 8), per_channel=False)
        weights2 = g.add_constant("w2", data2, "INT8", quantization=spec2)
        z = g.add_tensor("z", [2, 4])
        g.add_operator("FULLY_CONNECTED", [y, weights2, -1], [z])
        return [x], [z]

    return _single(build)


def reductions() -> bytes:
    """MEAN (int8), SUM, REDUCE_MAX with constant axes: four temporaries each."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        q = quantization(0.1, 0)
        x = g.add_tensor("x", [1, 5, 5, 8], "INT8", quantization=q)
        axes = g.add_constant("axes", np.array([1, 2], dtype=np.int32))
        mean = g.add_tensor("mean", [1, 1, 1, 8], "INT8", quantization=q)
        g.add_operator("MEAN", [x, axes], [mean], options={"keep_dims": True})
        f = g.add_tensor("f", [1, 5, 5, 8])
        g.add_operator("DEQUANTIZE", [x], [f])
        axis = g.add_constant("axis", np.array([3], dtype=np.int32))
        total = g.add_tensor("sum", [1, 5, 5])
        g.add_operator("SUM", [f, axis], [total])
        peak = g.add_tensor("max", [1])
        g.add_operator("REDUCE_MAX", [total, axes], [peak])
        return [x], [mean, peak]

    return _single(build)


def mean_dynamic_axis() -> bytes:
    """MEAN whose axis is a graph input: output Dynamic, planning splits into two chunks."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 4, 4, 8])
        axis = g.add_tensor("axis", [2], "INT32")
        a = g.add_tensor("a", [1, 4, 4, 8])
        g.add_operator("RELU", [x], [a])
        m = g.add_tensor("m", [1, 8])
        g.add_operator("MEAN", [a, axis], [m])
        n = g.add_tensor("n", [1, 8])
        g.add_operator("RELU", [m], [n])
        return [x, axis], [n]

    return _single(build)


def batch_matmul(hybrid: bool) -> bytes:
    """BATCH_MATMUL: transposed-operand scratches (RHS persistent when constant)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        lhs = g.add_tensor("lhs", [2, 4, 8])
        if hybrid:
            data, spec = _hybrid_filter((2, 8, 3), per_channel=False)
            rhs = g.add_constant("rhs", data, "INT8", quantization=spec)
            inputs = [lhs]
        else:
            rhs = g.add_tensor("rhs", [2, 8, 3])
            inputs = [lhs, rhs]
        y = g.add_tensor("y", [2, 4, 3])
        g.add_operator("BATCH_MATMUL", [lhs, rhs], [y])
        z = g.add_tensor("z", [2, 4, 3])
        g.add_operator("RELU", [y], [z])
        return inputs, [z]

    return _single(build)


def conv_3d() -> bytes:
    """CONV_3D 3×3×2 kernel: im2col."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 4, 6, 6, 2])
        weights = g.add_constant("w", _floats(2, 3, 3, 2, 4))
        y = g.add_tensor("y", [1, 3, 4, 4, 4])
        g.add_operator(
            "CONV_3D",
            [x, weights],
            [y],
            options={
                "padding": "VALID",
                "stride_d": 1,
                "stride_w": 1,
                "stride_h": 1,
                "dilation_dfactor": 1,
                "dilation_wfactor": 1,
                "dilation_hfactor": 1,
            },
        )
        return [x], [y]

    return _single(build)


def add_n() -> bytes:
    """ADD_N of three inputs: one scratch of the input's size (Init-time tensor)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        xs = [g.add_tensor(f"x{i}", [1, 10]) for i in range(3)]
        y = g.add_tensor("y", [1, 10])
        g.add_operator("ADD_N", xs, [y])
        return xs, [y]

    return _single(build)


def constant_folding() -> bytes:
    """DEQUANTIZE of a constant (persistent arena), SHAPE → RESHAPE (PersistentRo shape), and a
    RESHAPE of a constant (PersistentRo output); an ADD with a constant operand (never shared)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [4, 16])
        weights = g.add_constant("wq", _int8(16), "INT8", quantization=quantization(0.1, 0))
        w = g.add_tensor("w", [16])
        g.add_operator("DEQUANTIZE", [weights], [w])
        a = g.add_tensor("a", [4, 16])
        g.add_operator("ADD", [x, w], [a])
        shape = g.add_tensor("shape", [2], "INT32")
        g.add_operator("SHAPE", [x], [shape], options={"out_type": 2})  # INT32
        b = g.add_tensor("b", [4, 16])
        g.add_operator("RESHAPE", [a, shape], [b])
        table = g.add_constant("table", _floats(64))
        new_shape = g.add_constant("new_shape", np.array([4, 16], dtype=np.int32))
        c = g.add_tensor("c", [4, 16])
        g.add_operator("RESHAPE", [table, new_shape], [c])
        d = g.add_tensor("d", [4, 16])
        g.add_operator("ADD", [b, c], [d])
        return [x], [d]

    return _single(build)


def reshape_unknown_shape() -> bytes:
    """RESHAPE whose shape is a graph input: kTfLiteOutputShapeNotKnown ends the first chunk."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [2, 32])
        shape = g.add_tensor("shape", [2], "INT32")
        a = g.add_tensor("a", [2, 32])
        g.add_operator("RELU", [x], [a])
        b = g.add_tensor("b", [4, 16])
        g.add_operator("RESHAPE", [a, shape], [b])
        c = g.add_tensor("c", [4, 16])
        g.add_operator("RELU", [b], [c])
        return [x, shape], [c]

    return _single(build)


def pad_dynamic() -> bytes:
    """PAD with non-constant paddings: Dynamic output."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 4, 4, 2])
        paddings = g.add_tensor("paddings", [4, 2], "INT32")
        a = g.add_tensor("a", [1, 4, 4, 2])
        g.add_operator("RELU", [x], [a])
        b = g.add_tensor("b", [1, 6, 6, 2])
        g.add_operator("PAD", [a, paddings], [b])
        return [x, paddings], [b]

    return _single(build)


def transpose_conv(dtype: str) -> bytes:
    """TRANSPOSE_CONV with a constant output shape (float: col2im; int8: + int32 scratch)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        shape = g.add_constant("shape", np.array([1, 8, 8, 3], dtype=np.int32))
        if dtype == "FLOAT32":
            weights = g.add_constant("w", _floats(3, 3, 3, 4))
            x = g.add_tensor("x", [1, 4, 4, 4])
            y = g.add_tensor("y", [1, 8, 8, 3])
        else:
            q = quantization(0.05, 0)
            weights = g.add_constant(
                "w", _int8(3, 3, 3, 4), "INT8", quantization=quantization([0.01, 0.02, 0.03], 0)
            )
            x = g.add_tensor("x", [1, 4, 4, 4], "INT8", quantization=q)
            y = g.add_tensor("y", [1, 8, 8, 3], "INT8", quantization=q)
        g.add_operator(
            "TRANSPOSE_CONV",
            [shape, weights, x],
            [y],
            options={"stride_w": 2, "stride_h": 2, "padding": "SAME"},
        )
        return [x], [y]

    return _single(build)


def svdf(hybrid: bool) -> bytes:
    """SVDF float (one scratch) or hybrid (int8 weights: six temporaries, two persistent)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        batch, inputs, filters, memory, rank = 2, 10, 8, 4, 2
        x = g.add_tensor("x", [batch, inputs])
        if hybrid:
            feature_data, spec = _hybrid_filter((filters, inputs), per_channel=False)
            feature = g.add_constant("feature", feature_data, "INT8", quantization=spec)
            time_data, time_spec = _hybrid_filter((filters, memory), per_channel=False)
            time = g.add_constant("time", time_data, "INT8", quantization=time_spec)
        else:
            feature = g.add_constant("feature", _floats(filters, inputs))
            time = g.add_constant("time", _floats(filters, memory))
        bias = g.add_constant("bias", _floats(filters // rank))
        state = g.add_tensor("state", [batch, memory * filters], is_variable=True)
        y = g.add_tensor("y", [batch, filters // rank])
        g.add_operator("SVDF", [x, feature, time, bias, state], [y], options={"rank": rank})
        return [x], [y]

    return _single(build)


def lstm_float() -> bytes:
    """Full-kernel LSTM (20 inputs, CIFG off, no peepholes/projection): scratch [B, 5·cell]."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        batch, n_input, cell = 2, 5, 6
        x = g.add_tensor("x", [batch, n_input])
        tensors = [x]
        for _gate in range(4):
            tensors.append(g.add_constant("wi", _floats(cell, n_input)))
        for _gate in range(4):
            tensors.append(g.add_constant("wr", _floats(cell, cell)))
        tensors += [-1, -1, -1]  # peepholes
        for _gate in range(4):
            tensors.append(g.add_constant("bias", _floats(cell)))
        tensors += [-1, -1]  # projection
        tensors.append(g.add_tensor("output_state", [batch, cell], is_variable=True))
        tensors.append(g.add_tensor("cell_state", [batch, cell], is_variable=True))
        y = g.add_tensor("y", [batch, cell])
        g.add_operator(
            "LSTM",
            tensors,
            [y],
            options={"fused_activation_function": "TANH", "cell_clip": 0.0, "proj_clip": 0.0},
        )
        z = g.add_tensor("z", [batch, cell])
        g.add_operator("RELU", [y], [z])
        return [x], [z]

    return _single(build)


def control_flow_if() -> bytes:
    """IF with two branch subgraphs: branch inputs become Custom, both branches allocated."""
    model = ModelBuilder()
    main = model.add_subgraph("main")
    cond = main.add_tensor("cond", [1], "BOOL")
    x = main.add_tensor("x", [1, 8])
    a = main.add_tensor("a", [1, 8])
    main.add_operator("RELU", [x], [a])
    y = main.add_tensor("y", [1, 8])
    main.add_operator(
        "IF", [cond, a], [y], options={"then_subgraph_index": 1, "else_subgraph_index": 2}
    )
    main.set_inputs([cond, x])
    main.set_outputs([y])
    for name, opcode in (("then", "RELU"), ("else", "TANH")):
        branch = model.add_subgraph(name)
        bx = branch.add_tensor("bx", [1, 8])
        mid = branch.add_tensor("mid", [1, 8])
        branch.add_operator(opcode, [bx], [mid])
        by = branch.add_tensor("by", [1, 8])
        branch.add_operator("ABS", [mid], [by])
        branch.set_inputs([bx])
        branch.set_outputs([by])
    return model.build()


def transpose_conv_hybrid() -> bytes:
    """TRANSPOSE_CONV, float input and int8 weights: three hybrid arena temporaries."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        shape = g.add_constant("shape", np.array([1, 8, 8, 3], dtype=np.int32))
        data, spec = _hybrid_filter((3, 3, 3, 4), per_channel=True)
        weights = g.add_constant("w", data, "INT8", quantization=spec)
        x = g.add_tensor("x", [1, 4, 4, 4])
        y = g.add_tensor("y", [1, 8, 8, 3])
        g.add_operator(
            "TRANSPOSE_CONV",
            [shape, weights, x],
            [y],
            options={"stride_w": 2, "stride_h": 2, "padding": "SAME"},
        )
        return [x], [y]

    return _single(build)


def in_place_chains() -> bytes:
    """In-place sharing: EXPAND_DIMS → SQUEEZE → RESHAPE aliases collapse onto one root; SOFTMAX
    and ADD modify their input in place; an ADD whose first operand is a constant of the same
    size must not share it (allocation types differ), so it shares its second operand."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [4, 16])
        a = g.add_tensor("a", [4, 16])
        g.add_operator("RELU", [x], [a])
        axis = g.add_constant("axis", np.array([0], dtype=np.int32))
        b = g.add_tensor("b", [1, 4, 16])
        g.add_operator("EXPAND_DIMS", [a, axis], [b])
        c = g.add_tensor("c", [4, 16])
        g.add_operator("SQUEEZE", [b], [c], options={"squeeze_dims": [0]})
        new_shape = g.add_constant("shape", np.array([8, 8], dtype=np.int32))
        d = g.add_tensor("d", [8, 8])
        g.add_operator("RESHAPE", [c, new_shape], [d])
        e = g.add_tensor("e", [8, 8])
        g.add_operator("SOFTMAX", [d], [e])
        table = g.add_constant("table", _floats(8, 8))
        f = g.add_tensor("f", [8, 8])
        g.add_operator("ADD", [table, e], [f])
        out = g.add_tensor("out", [8, 8])
        g.add_operator("RELU", [f], [out])
        return [x], [out]

    return _single(build)


def control_flow_while() -> bytes:
    """WHILE: cond keeps its inputs in its arena, body inputs become Custom."""
    model = ModelBuilder()
    main = model.add_subgraph("main")
    x = main.add_tensor("x", [1, 8])
    counter = main.add_tensor("i", [1], "INT32")
    a = main.add_tensor("a", [1, 8])
    main.add_operator("RELU", [x], [a])
    out_counter = main.add_tensor("i_out", [1], "INT32")
    out = main.add_tensor("y", [1, 8])
    main.add_operator(
        "WHILE",
        [counter, a],
        [out_counter, out],
        options={"cond_subgraph_index": 1, "body_subgraph_index": 2},
    )
    main.set_inputs([x, counter])
    main.set_outputs([out])
    cond = model.add_subgraph("cond")
    ci = cond.add_tensor("i", [1], "INT32")
    cx = cond.add_tensor("x", [1, 8])
    limit = cond.add_constant("limit", np.array([3], dtype=np.int32))
    keep_going = cond.add_tensor("keep_going", [1], "BOOL")
    cond.add_operator("LESS", [ci, limit], [keep_going])
    cond.set_inputs([ci, cx])
    cond.set_outputs([keep_going])
    body = model.add_subgraph("body")
    bi = body.add_tensor("i", [1], "INT32")
    bx = body.add_tensor("x", [1, 8])
    one = body.add_constant("one", np.array([1], dtype=np.int32))
    bi_next = body.add_tensor("i_next", [1], "INT32")
    body.add_operator("ADD", [bi, one], [bi_next])
    mid = body.add_tensor("mid", [1, 8])
    body.add_operator("TANH", [bx], [mid])
    bx_next = body.add_tensor("x_next", [1, 8])
    body.add_operator("RELU", [mid], [bx_next])
    body.set_inputs([bi, bx])
    body.set_outputs([bi_next, bx_next])
    return model.build()


CASES: dict[str, Callable[[], bytes]] = {
    "split20": split20,
    "conv_float_im2col": conv_float_im2col,
    "conv_dilated": conv_dilated,
    "conv_1x1_chain": conv_1x1_chain,
    "conv_hybrid_per_tensor": lambda: conv_hybrid(per_channel=False),
    "conv_hybrid_per_channel": lambda: conv_hybrid(per_channel=True),
    "depthwise_hybrid": depthwise_hybrid,
    "fully_connected_hybrid": fully_connected_hybrid,
    "reductions": reductions,
    "mean_dynamic_axis": mean_dynamic_axis,
    "batch_matmul_float": lambda: batch_matmul(hybrid=False),
    "batch_matmul_hybrid": lambda: batch_matmul(hybrid=True),
    "conv_3d": conv_3d,
    "add_n": add_n,
    "constant_folding": constant_folding,
    "reshape_unknown_shape": reshape_unknown_shape,
    "pad_dynamic": pad_dynamic,
    "transpose_conv_float": lambda: transpose_conv("FLOAT32"),
    "transpose_conv_int8": lambda: transpose_conv("INT8"),
    "svdf_float": lambda: svdf(hybrid=False),
    "svdf_hybrid": lambda: svdf(hybrid=True),
    "svdf_integer_stack": lambda: _recurrent_cases().svdf_integer_stack(),
    "lstm_float": lstm_float,
    "control_flow_if": control_flow_if,
    "control_flow_while": control_flow_while,
    "transpose_conv_hybrid": transpose_conv_hybrid,
    "in_place_chains": in_place_chains,
}


def _recurrent_cases() -> Any:
    """tests/litert_recurrent_cases.py, which builds on this module (imported when used)."""
    from tests import litert_recurrent_cases

    return litert_recurrent_cases


def _lstm_inputs(
    g: SubgraphBuilder, x: int, n_input: int, cell: int, *, hybrid: bool, cifg: bool
) -> list[int]:
    """The 20 standard LSTM inputs after x (no peepholes, no projection)."""

    def weights(rows: int, columns: int) -> int:
        if hybrid:
            data, spec = _hybrid_filter((rows, columns), per_channel=False)
            return g.add_constant("w", data, "INT8", quantization=spec)
        return g.add_constant("w", _floats(rows, columns))

    tensors = [x]
    tensors += [-1 if cifg and gate == 0 else weights(cell, n_input) for gate in range(4)]
    tensors += [-1 if cifg and gate == 0 else weights(cell, cell) for gate in range(4)]
    tensors += [-1, -1, -1]  # peepholes
    tensors += [
        -1 if cifg and gate == 0 else g.add_constant("b", _floats(cell)) for gate in range(4)
    ]
    tensors += [-1, -1]  # projection
    return tensors


def sequence_lstm(*, hybrid: bool, cifg: bool) -> bytes:
    """UNIDIRECTIONAL_SEQUENCE_LSTM: float scratch [B, 4|5·cell + 16]; hybrid: 12 temporaries."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        batch, steps, n_input, cell = 2, 3, 5, 6
        x = g.add_tensor("x", [batch, steps, n_input])
        tensors = _lstm_inputs(g, x, n_input, cell, hybrid=hybrid, cifg=cifg)
        tensors.append(g.add_tensor("output_state", [batch, cell], is_variable=True))
        tensors.append(g.add_tensor("cell_state", [batch, cell], is_variable=True))
        y = g.add_tensor("y", [batch, steps, cell])
        g.add_operator(
            "UNIDIRECTIONAL_SEQUENCE_LSTM",
            tensors,
            [y],
            options={"fused_activation_function": "TANH", "time_major": False},
        )
        z = g.add_tensor("z", [batch, steps, cell])
        g.add_operator("RELU", [y], [z])
        return [x], [z]

    return _single(build)


def lstm_hybrid() -> bytes:
    """Full-kernel LSTM with int8 weights: twelve temporaries, row sums persistent."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        batch, n_input, cell = 2, 5, 6
        x = g.add_tensor("x", [batch, n_input])
        tensors = _lstm_inputs(g, x, n_input, cell, hybrid=True, cifg=False)
        tensors.append(g.add_tensor("output_state", [batch, cell], is_variable=True))
        tensors.append(g.add_tensor("cell_state", [batch, cell], is_variable=True))
        y = g.add_tensor("y", [batch, cell])
        g.add_operator("LSTM", tensors, [y], options={"fused_activation_function": "TANH"})
        return [x], [y]

    return _single(build)


def folding_and_dynamic_split() -> bytes:
    """CONCATENATION and GATHER of constants fold to PersistentRo; SPLIT with a non-constant
    axis makes its outputs Dynamic (the chunk ends there)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [4, 8])
        first = g.add_constant("c1", _floats(2, 8))
        second = g.add_constant("c2", _floats(2, 8))
        both = g.add_tensor("both", [4, 8])
        g.add_operator("CONCATENATION", [first, second], [both], options={"axis": 0})
        indices = g.add_constant("indices", np.array([3, 2, 1, 0], dtype=np.int32))
        gathered = g.add_tensor("gathered", [4, 8])
        g.add_operator("GATHER", [both, indices], [gathered], options={"axis": 0})
        summed = g.add_tensor("summed", [4, 8])
        g.add_operator("ADD", [x, gathered], [summed])
        axis = g.add_tensor("axis", [], "INT32")
        halves = [g.add_tensor(f"half{i}", [2, 8]) for i in range(2)]
        g.add_operator("SPLIT", [axis, summed], halves, options={"num_splits": 2})
        out = g.add_tensor("out", [2, 8])
        g.add_operator("RELU", [halves[0]], [out])
        return [x, axis], [out]

    return _single(build)


CASES.update(
    {
        "sequence_lstm_float": lambda: sequence_lstm(hybrid=False, cifg=False),
        "sequence_lstm_float_cifg": lambda: sequence_lstm(hybrid=False, cifg=True),
        "sequence_lstm_hybrid": lambda: sequence_lstm(hybrid=True, cifg=False),
        "lstm_hybrid": lstm_hybrid,
        "folding_and_dynamic_split": folding_and_dynamic_split,
    }
)


def control_flow_pass_through() -> bytes:
    """WHILE with a pass-through loop variable whose output nobody reads (dropped from the
    node) and an IF whose else branch ignores one input (removed, 0 bytes)."""
    model = ModelBuilder()
    main = model.add_subgraph("main")
    x = main.add_tensor("x", [1, 8])
    counter = main.add_tensor("i", [1], "INT32")
    carried = main.add_tensor("carried", [1, 16])
    a = main.add_tensor("a", [1, 8])
    main.add_operator("RELU", [x], [a])
    loop_outputs = [
        main.add_tensor("i_out", [1], "INT32"),
        main.add_tensor("x_out", [1, 8]),
        main.add_tensor("carried_out", [1, 16]),  # read by nobody
    ]
    main.add_operator(
        "WHILE",
        [counter, a, carried],
        loop_outputs,
        options={"cond_subgraph_index": 1, "body_subgraph_index": 2},
    )
    flag = main.add_tensor("flag", [1], "BOOL")
    y = main.add_tensor("y", [1, 8])
    main.add_operator(
        "IF",
        [flag, loop_outputs[1], a],
        [y],
        options={"then_subgraph_index": 3, "else_subgraph_index": 4},
    )
    main.set_inputs([x, counter, carried, flag])
    main.set_outputs([y])

    cond = model.add_subgraph("cond")
    ci = cond.add_tensor("i", [1], "INT32")
    cx = cond.add_tensor("x", [1, 8])
    cc = cond.add_tensor("carried", [1, 16])
    limit = cond.add_constant("limit", np.array([2], dtype=np.int32))
    keep_going = cond.add_tensor("keep_going", [1], "BOOL")
    cond.add_operator("LESS", [ci, limit], [keep_going])
    cond.set_inputs([ci, cx, cc])
    cond.set_outputs([keep_going])

    body = model.add_subgraph("body")
    bi = body.add_tensor("i", [1], "INT32")
    bx = body.add_tensor("x", [1, 8])
    bc = body.add_tensor("carried", [1, 16])
    one = body.add_constant("one", np.array([1], dtype=np.int32))
    bi_next = body.add_tensor("i_next", [1], "INT32")
    body.add_operator("ADD", [bi, one], [bi_next])
    bx_next = body.add_tensor("x_next", [1, 8])
    body.add_operator("TANH", [bx], [bx_next])
    body.set_inputs([bi, bx, bc])
    body.set_outputs([bi_next, bx_next, bc])  # `carried` passes straight through

    for name, uses_second in (("then", True), ("else", False)):
        branch = model.add_subgraph(name)
        first = branch.add_tensor("first", [1, 8])
        second = branch.add_tensor("second", [1, 8])
        result = branch.add_tensor("result", [1, 8])
        if uses_second:
            branch.add_operator("ADD", [first, second], [result])
        else:
            branch.add_operator("RELU", [first], [result])
        branch.set_inputs([first, second])
        branch.set_outputs([result])
    return model.build()


CASES["control_flow_pass_through"] = control_flow_pass_through


def shape_ops() -> bytes:
    """Constant folding (MUL, RANGE, TILE, STRIDED_SLICE of constants → PersistentRo), static
    shape ops (RESIZE_BILINEAR, SPLIT_V, SLICE with constant sizes) and a Dynamic BROADCAST_TO
    (shape from a graph input) that ends the first chunk."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 4, 4, 2])
        two = g.add_constant("two", np.array([2.0], dtype=np.float32))
        table = g.add_constant("table", _floats(4))
        doubled = g.add_tensor("doubled", [4])
        g.add_operator("MUL", [table, two], [doubled])
        start = g.add_constant("start", np.array(0, dtype=np.int32))
        limit = g.add_constant("limit", np.array(4, dtype=np.int32))
        delta = g.add_constant("delta", np.array(1, dtype=np.int32))
        steps = g.add_tensor("steps", [4], "INT32")
        g.add_operator("RANGE", [start, limit, delta], [steps])
        multiples = g.add_constant("multiples", np.array([2], dtype=np.int32))
        tiled = g.add_tensor("tiled", [8])
        g.add_operator("TILE", [doubled, multiples], [tiled])
        begin = g.add_constant("begin", np.array([2], dtype=np.int32))
        end = g.add_constant("end", np.array([6], dtype=np.int32))
        stride = g.add_constant("stride", np.array([1], dtype=np.int32))
        sliced = g.add_tensor("sliced", [4])
        g.add_operator("STRIDED_SLICE", [tiled, begin, end, stride], [sliced])
        size = g.add_constant("size", np.array([8, 8], dtype=np.int32))
        resized = g.add_tensor("resized", [1, 8, 8, 2])
        g.add_operator("RESIZE_BILINEAR", [x, size], [resized])
        splits = g.add_constant("splits", np.array([3, 5], dtype=np.int32))
        axis = g.add_constant("axis", np.array(1, dtype=np.int32))
        parts = [g.add_tensor("top", [1, 3, 8, 2]), g.add_tensor("bottom", [1, 5, 8, 2])]
        g.add_operator("SPLIT_V", [resized, splits, axis], parts, options={"num_splits": 2})
        slice_begin = g.add_constant("slice_begin", np.array([0, 1, 0, 0], dtype=np.int32))
        slice_size = g.add_constant("slice_size", np.array([1, 2, 8, 2], dtype=np.int32))
        cut = g.add_tensor("cut", [1, 2, 8, 2])
        g.add_operator("SLICE", [parts[1], slice_begin, slice_size], [cut])
        target = g.add_tensor("target", [4], "INT32")
        broadcast = g.add_tensor("broadcast", [2, 2, 8, 2])
        g.add_operator("BROADCAST_TO", [cut, target], [broadcast], version=2)
        out = g.add_tensor("out", [2, 2, 8, 2])
        g.add_operator("RELU", [broadcast], [out])
        added = g.add_tensor("added", [4])
        g.add_operator("ADD", [sliced, doubled], [added])
        return [x, target], [out, parts[0], added, steps]

    return _single(build)


CASES["shape_ops"] = shape_ops
