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
