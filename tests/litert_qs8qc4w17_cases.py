"""Held-out models for XNNPACK's int4 per-channel FULLY_CONNECTED on an int8 input
(`qs8qc4w17_<n>`: the delegate's supported_srq path, XNNPACK's qs8_qc4w GEMM), drawn from
seeds after the rule was written (src/arenalens/runtimes/litert/xnnpack_qc4w.py):

    python -m tests.litert_heap_measure --cache tests/data/litert_heap_avx2.json --only qs8qc4w17_

Each model: an int8 input quantized from float, one to four FULLY_CONNECTEDs with int4 filters
(one scale per output channel or one for all), input sizes and output channel counts odd and
even (an odd depth leaves its layer to the builtin kernels), batches of rows, a rank-3 input
with keep_num_dims on or off, a bias or none, a fused activation (NONE, RELU, RELU6,
RELU_N1_TO_1: XNNPACK's output ranges), then DEQUANTIZE. Each bias's scale is its input's
times its filter's (kernel_util.cc GetQuantizedConvolutionMultipler refuses a 2% difference)."""

from __future__ import annotations

import random

import numpy as np

from arenalens.tflite.builder import ModelBuilder, quantization

SEED_BASE = 17_700
COUNT = 24
NAMES = tuple((f"qs8qc4w17_{n}", "qs8qc4w", n) for n in range(1, COUNT + 1))
_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
_IN_SCALE = 0.05  # the first layer's input scale
_OUT_SCALE = 0.1  # every layer's output scale (the next one's input)


def _int4_filter(rng: np.random.Generator, channels: int, depth: int) -> bytes:
    """An int4 filter's packed nibbles (two a byte, low first, padded to whole bytes)."""
    nibbles = rng.integers(-8, 8, (channels, depth)).astype(np.int8).reshape(-1)
    padded = np.pad(nibbles, (0, nibbles.size % 2))
    return ((padded[1::2] & 0x0F) << 4 | (padded[0::2] & 0x0F)).astype(np.uint8).tobytes()


def qs8qc4w17_case(n: int) -> bytes:
    """`qs8qc4w17_<n>`'s model bytes."""
    seed = SEED_BASE + n
    draw, rng = random.Random(seed), np.random.default_rng(seed)
    model = ModelBuilder(description="arenalens: qs8qc4w17 int8-input int4 FULLY_CONNECTED")
    g = model.add_subgraph("main")
    rows = draw.choice((1, 1, 2, 3, 5, 7, 8, 16))
    depth = draw.choice((8, 16, 30, 33, 64, 96, 126, 200, 250, 384, 512, 1000))
    three = draw.random() < 0.3  # a [batch, rows, depth] input
    batch = draw.choice((2, 3)) if three else 1
    lead = [batch, rows] if three else [rows]
    x = g.add_tensor("x", [*lead, depth])
    current = g.add_tensor("xq", [*lead, depth], "INT8", quantization=quantization(_IN_SCALE, 0))
    g.add_operator("QUANTIZE", [x], [current])
    shape, in_scale = [*lead, depth], _IN_SCALE
    for layer in range(draw.choice((1, 2, 3, 4))):
        channels = draw.choice((1, 3, 7, 8, 15, 16, 37, 64, 100, 129, 256, 513))
        per_channel = draw.random() < 0.7
        scales = rng.uniform(0.01, 0.05, channels if per_channel else 1)
        w = g.add_tensor(
            f"w{layer}",
            [channels, depth],
            "INT4",
            data=_int4_filter(rng, channels, depth),
            quantization=quantization(scales, 0),
        )
        inputs = [current, w]
        if draw.random() < 0.6:
            bias = rng.integers(-50, 50, channels).astype(np.int32)
            inputs.append(
                g.add_constant(f"b{layer}", bias, quantization=quantization(scales * in_scale, 0))
            )
        keep = len(shape) == 3 and draw.random() < 0.5
        rows_out = shape[:-1] if keep else [int(np.prod(shape[:-1]))]
        shape = [*rows_out, channels]
        out = g.add_tensor(f"y{layer}", shape, "INT8", quantization=quantization(_OUT_SCALE, 0))
        options = {
            "fused_activation_function": draw.choice(_ACTIVATIONS),
            "keep_num_dims": keep,
        }
        g.add_operator("FULLY_CONNECTED", inputs, [out], options=options, version=13)
        current, depth, in_scale = out, channels, _OUT_SCALE
    y = g.add_tensor("y", shape)
    g.add_operator("DEQUANTIZE", [current], [y])
    g.set_inputs([x])
    g.set_outputs([y])
    return model.build()
