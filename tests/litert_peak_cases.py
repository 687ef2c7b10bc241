"""Generated held-out models for the LiteRT peak heap (issue 32): float convolution chains whose
GEMMs are large enough for Eigen to pack blocks on the heap (over 128 KiB), drawn from a seed
(input size, channels, kernels, strides, a fully connected head). Their heap figures are measured
with the wheel (`python -m tests.litert_heap_measure --only peak5_`, tests/data/litert_heap.json)
after the rules they check were written (runtimes/litert/eigen_blocking.py, heap_build.py)."""

from __future__ import annotations

import random

import numpy as np

from arenalens.tflite.builder import ModelBuilder


def float_conv_chain(seed: int) -> bytes:
    """2-4 float 3×3/1×1/5×5 convolutions (SAME, stride 1 or 2, RELU) on a 16-48 px input, then
    a mean over the pixels and a fully connected head."""
    draw = random.Random(seed)
    weights = np.random.default_rng(seed)
    size = draw.choice((16, 24, 32, 40, 48))
    channels = draw.choice((3, 8, 16))
    model = ModelBuilder()
    graph = model.add_subgraph("main")
    x = graph.add_tensor("x", [1, size, size, channels])
    inputs, data = [x], x
    for layer in range(draw.randint(2, 4)):
        kernel = draw.choice((1, 3, 3, 5))
        stride = draw.choice((1, 1, 2))
        out_channels = draw.choice((16, 24, 32, 48, 64, 96))
        size = -(-size // stride)
        filters = graph.add_constant(
            f"w{layer}",
            (weights.standard_normal((out_channels, kernel, kernel, channels)) * 0.1).astype(
                np.float32
            ),
        )
        bias = graph.add_constant(
            f"b{layer}", weights.standard_normal(out_channels).astype(np.float32)
        )
        output = graph.add_tensor(f"c{layer}", [1, size, size, out_channels])
        graph.add_operator(
            "CONV_2D",
            [data, filters, bias],
            [output],
            options={
                "padding": "SAME",
                "stride_w": stride,
                "stride_h": stride,
                "fused_activation_function": "RELU",
            },
        )
        data, channels = output, out_channels
    axes = graph.add_constant("axes", np.array([1, 2], dtype=np.int32), "INT32")
    pooled = graph.add_tensor("pooled", [1, channels])
    graph.add_operator("MEAN", [data, axes], [pooled], options={"keep_dims": False})
    classes = draw.choice((2, 10, 12))
    head = graph.add_constant(
        "fc", (weights.standard_normal((classes, channels)) * 0.1).astype(np.float32)
    )
    logits = graph.add_tensor("logits", [1, classes])
    graph.add_operator("FULLY_CONNECTED", [pooled, head], [logits])
    graph.set_inputs(inputs)
    graph.set_outputs([logits])
    return model.build()


# The weighted operators whose first creation makes XNNPACK fingerprint its kind of packing.
_FINGERPRINTED = ("FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D")


def fingerprint_case(seed: int) -> bytes:
    """1-3 small weighted operators (float or int8 FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D,
    1×1 to 3×3, SAME or VALID), each reading the model's input, some of whose outputs nobody
    reads: XNNPACK's fingerprint dummies outweigh what the model packs, so the delegate's
    build moment (heap_build) is the peak. Drawn from a seed; measured after the rules."""
    from arenalens.tflite.builder import quantization

    draw = random.Random(seed)
    weights = np.random.default_rng(seed)
    int8 = draw.random() < 0.5
    size, channels = draw.choice((4, 6, 8)), draw.choice((1, 2, 3, 4, 8))
    kind = "INT8" if int8 else "FLOAT32"
    activation = quantization(0.05, 1) if int8 else None
    model = ModelBuilder()
    graph = model.add_subgraph("main")
    x = graph.add_tensor("x", [1, size, size, channels], kind, quantization=activation)
    outputs: list[int] = []
    for index in range(draw.randint(1, 3)):
        opcode = draw.choice(_FINGERPRINTED)
        kernel = 1 if opcode == "FULLY_CONNECTED" else draw.choice((1, 3))
        padding = draw.choice(("SAME", "VALID"))
        out_channels = channels if opcode == "DEPTHWISE_CONV_2D" else draw.choice((1, 4, 8, 20))
        if opcode == "FULLY_CONNECTED":
            shape = [out_channels, size * size * channels]
            out_shape = [1, out_channels]
        else:
            leading = 1 if opcode == "DEPTHWISE_CONV_2D" else out_channels
            last = out_channels if opcode == "DEPTHWISE_CONV_2D" else channels
            shape = [leading, kernel, kernel, last]
            side = size if padding == "SAME" else size - kernel + 1
            out_shape = [1, side, side, out_channels]
        axis = 3 if opcode == "DEPTHWISE_CONV_2D" else 0
        scales = np.linspace(0.01, 0.02, out_channels)
        if int8:
            filters = graph.add_constant(
                f"w{index}",
                weights.integers(-127, 128, shape).astype(np.int8),
                "INT8",
                quantization=quantization(scales, 0, axis=axis),
            )
            bias = graph.add_constant(
                f"b{index}",
                weights.integers(-500, 500, out_channels).astype(np.int32),
                "INT32",
                quantization=quantization(scales * 0.05, 0),
            )
        else:
            filters = graph.add_constant(
                f"w{index}", (weights.standard_normal(shape) * 0.1).astype(np.float32)
            )
            bias = graph.add_constant(
                f"b{index}", weights.standard_normal(out_channels).astype(np.float32)
            )
        output = graph.add_tensor(
            f"y{index}", out_shape, kind, quantization=quantization(0.2, -3) if int8 else None
        )
        options: dict[str, object] = {}
        if opcode != "FULLY_CONNECTED":
            options = {"padding": padding, "stride_w": 1, "stride_h": 1}
            if opcode == "DEPTHWISE_CONV_2D":
                options["depth_multiplier"] = 1
        graph.add_operator(opcode, [x, filters, bias], [output], options=options)
        if index == 0 or draw.random() < 0.6:
            outputs.append(output)
    graph.set_inputs([x])
    graph.set_outputs(outputs)
    return model.build()


def batch_matmul_adj_x_case(seed: int) -> bytes:
    """A BATCH_MATMUL with adj_x (its A stored transposed), drawn from a seed: float (a constant
    B), hybrid (float A, int8 B: constant, per-tensor or per-channel) or int8 (a constant or
    run-time B); adj_y or not; A from an element-wise operator or a graph input; a RELU after
    or none. The delegate transposes A in a node of its own (xnnpack_workspace._nodes)."""
    from tests.litert_xnnpack_cases import _batch_matmul

    draw = random.Random(seed)
    kind = draw.choice(("float", "hybrid", "int8"))
    batch = draw.choice(([], [2], [1, 3]))
    rows, depth, columns = (
        draw.choice((1, 4, 7, 16)),
        draw.choice((5, 8, 12, 33)),
        draw.choice((3, 8, 20)),
    )
    adj_y = draw.random() < 0.5
    constant_b = kind != "int8" or draw.random() < 0.5
    shared = draw.random() < 0.5 or not batch  # B without batch dimensions
    b_dims = [columns, depth] if adj_y else [depth, columns]
    b = b_dims if shared else [*batch, *b_dims]
    per_channel = kind == "hybrid" and shared and draw.random() < 0.5
    return _batch_matmul(
        a=[*batch, depth, rows],
        b=b,
        kind=kind,
        constant_b=constant_b,
        adj_y=adj_y,
        adj_x=True,
        per_channel=per_channel,
        before=draw.random() < 0.5,
        after=kind != "int8" and draw.random() < 0.5,
        seed=seed,
    )


def hybrid_fingerprint_case(seed: int) -> bytes:
    """1-3 small weighted operators on a float input with 8-bit weights (FULLY_CONNECTED,
    CONV_2D 1×1 or 3×3, SAME or VALID; one scale or one per output channel, a float bias or
    none), the delegate's dynamically quantized (qd8_f32_qc8w) kinds, some beside a float
    operator of the same kind, some outputs unread: their fingerprint dummies
    (xnnpack_fingerprint) outweigh what the model packs, so the build moment is the peak.
    Drawn (session 16) after the qd8 dummies were replayed; measured after the rules."""
    from arenalens.tflite.builder import quantization

    draw = random.Random(seed)
    weights = np.random.default_rng(seed)
    size, channels = draw.choice((4, 6, 8)), draw.choice((1, 2, 3, 4, 8))
    model = ModelBuilder()
    graph = model.add_subgraph("main")
    x = graph.add_tensor("x", [1, size, size, channels])
    outputs: list[int] = []
    for index in range(draw.randint(1, 3)):
        opcode = draw.choice(("FULLY_CONNECTED", "CONV_2D"))
        hybrid = index == 0 or draw.random() < 0.7
        kernel = 1 if opcode == "FULLY_CONNECTED" else draw.choice((1, 3))
        padding = draw.choice(("SAME", "VALID"))
        out_channels = draw.choice((1, 4, 8, 20))
        if opcode == "FULLY_CONNECTED":
            shape = [out_channels, size * size * channels]
            out_shape = [1, out_channels]
        else:
            shape = [out_channels, kernel, kernel, channels]
            side = size if padding == "SAME" else size - kernel + 1
            out_shape = [1, side, side, out_channels]
        if hybrid:
            per_channel = opcode == "CONV_2D" and draw.random() < 0.5
            scales = np.linspace(0.01, 0.02, out_channels) if per_channel else 0.015
            filters = graph.add_constant(
                f"w{index}",
                weights.integers(-127, 128, shape).astype(np.int8),
                "INT8",
                quantization=quantization(scales, 0, axis=0),
            )
        else:
            filters = graph.add_constant(
                f"w{index}", (weights.standard_normal(shape) * 0.1).astype(np.float32)
            )
        bias = (
            graph.add_constant(
                f"b{index}", weights.standard_normal(out_channels).astype(np.float32)
            )
            if draw.random() < 0.6
            else -1
        )
        output = graph.add_tensor(f"y{index}", out_shape)
        options: dict[str, object] = {}
        if opcode != "FULLY_CONNECTED":
            options = {"padding": padding, "stride_w": 1, "stride_h": 1}
        graph.add_operator(opcode, [x, filters, bias], [output], options=options)
        if index == 0 or draw.random() < 0.6:
            outputs.append(output)
    graph.set_inputs([x])
    graph.set_outputs(outputs)
    return model.build()
