"""Held-out models for a uint8 TRANSPOSE_CONV under LiteRT's default delegate (issue 32, session
18), drawn from seeds after the rule: `tconvu8_<n>`, one or two uint8 TRANSPOSE_CONVs (per-tensor
uint8 filter of zero point 100-156, SAME or VALID, strides 1-3, a bias now and then), measured
through ../shared/tools/litert-heap under both delegates:

    python -m tests.litert_heap_measure --cache tests/data/litert_heap_avx2.json --only tconvu8_

XNNPACK takes each (deconvolution-nhwc.c's qu8 variant; the builtin kernel would refuse some of
them, e.g. tests/litert_refusal_cases.py's bias_transpose_uint8, which runs under XNNPACK)."""

from __future__ import annotations

import random

import numpy as np

from arenalens.tflite.builder import ModelBuilder, quantization

TCONVU8_SEED, TCONVU8_COUNT = 18_500, 16
TCONVU8_NAMES = tuple((f"tconvu8_{n}", "tconvu8", n) for n in range(1, TCONVU8_COUNT + 1))


def tconvu8_case(n: int) -> bytes:
    """`tconvu8_<n>`'s model: a uint8 input, one or two uint8 TRANSPOSE_CONVs, a uint8 output."""
    seed = TCONVU8_SEED + n
    draw, rng = random.Random(seed), np.random.default_rng(seed)
    model = ModelBuilder(description="arenalens: tconvu8 uint8 TRANSPOSE_CONV")
    g = model.add_subgraph("main")
    batch = draw.choice((1, 1, 1, 2))
    height, width = draw.randrange(2, 13), draw.randrange(2, 13)
    channels = draw.choice((1, 3, 4, 8, 13, 16, 24))
    scale, point = 0.05, draw.randrange(100, 157)
    x = g.add_tensor("x", [batch, height, width, channels], "UINT8",
                     quantization=quantization(scale, point))  # fmt: skip
    current = x
    for layer in range(draw.choice((1, 1, 2))):
        stride = draw.choice((1, 2, 2, 3))
        kernel = draw.randrange(max(stride, 1), 6)
        same = draw.random() < 0.6
        if same:
            out_h, out_w = height * stride, width * stride
        else:
            out_h, out_w = (height - 1) * stride + kernel, (width - 1) * stride + kernel
        out_channels = draw.choice((1, 5, 8, 16, 17, 32, 40))
        w_scale, w_point = draw.choice((0.01, 0.02, 0.05)), draw.randrange(100, 157)
        values = rng.integers(0, 256, (out_channels, kernel, kernel, channels)).astype(np.uint8)
        w = g.add_constant(f"w{layer}", values, "UINT8",
                           quantization=quantization(w_scale, w_point))  # fmt: skip
        shape = g.add_constant(
            f"shape{layer}", np.array([batch, out_h, out_w, out_channels], np.int32)
        )
        inputs = [shape, w, current]
        if draw.random() < 0.5:
            bias = rng.integers(-100, 100, out_channels).astype(np.int32)
            bias_spec = quantization(scale * w_scale, 0)
            inputs.append(g.add_constant(f"b{layer}", bias, "INT32", quantization=bias_spec))
        out_scale, out_point = draw.choice((0.1, 0.5, 1.0)), draw.randrange(0, 256)
        y = g.add_tensor(f"y{layer}", [batch, out_h, out_w, out_channels], "UINT8",
                         quantization=quantization(out_scale, out_point))  # fmt: skip
        options = {"padding": "SAME" if same else "VALID", "stride_h": stride, "stride_w": stride}
        g.add_operator("TRANSPOSE_CONV", inputs, [y], options=options)
        current, height, width, channels, scale = y, out_h, out_w, out_channels, out_scale
    g.set_inputs([x])
    g.set_outputs([current])
    return model.build()
