"""The held17 campaign's later draws (tests/litert_held17_cases.py is the campaign), each made
after a rule the campaign found was written, none fitted: `held17b_int4_*` (int4 filters under
int8 or 16x8 activations), `held17c_16x8_*` (16x8 FULLY_CONNECTEDs), `held17d_*` (depthwise
convolutions with batches, strides and dilations; hybrid FULLY_CONNECTEDs on 2-40 rows).
Measured with `python -m tests.litert_heap_measure --cache tests/data/litert_heap_avx2.json
--only held17b_,held17c_,held17d_`."""

from __future__ import annotations

import numpy as np

from arenalens.tflite.builder import ModelBuilder, quantization
from tests.litert_held15_cases import _Draw
from tests.litert_held17_cases import SEED_BASE, _conv, _like


def integer_int4_case(n: int) -> bytes:
    """`held17b_int4_<n>`, drawn after the int4 filter under an integer input was replayed
    (four_bit.integer_unpacked_bytes; held17_int4_1 was under): int8 (or 16x8) activations,
    one to three FULLY_CONNECTEDs with int4 per-channel or per-tensor filters, rows from 1 (the
    custom GEMV) up, odd depths and channel counts."""
    return _integer_fc_case(_Draw(SEED_BASE + 5000 + n), sixteen=False)


def sixteen_case(n: int) -> bytes:
    """`held17c_16x8_<n>`, drawn after the 16x8 FULLY_CONNECTED's ruy GEMM was replayed
    (ruy_heap.sixteen_by_eight; held17b_int4_1, 2, 3, 7, 8, 12 were under): int16 activations
    always, int8 or int4 filters, no bias, an int32 or an int64 one, now and then a non-zero
    output zero point (the reference kernel)."""
    return _integer_fc_case(_Draw(SEED_BASE + 6000 + n), sixteen=True)


def _integer_fc_case(d: _Draw, *, sixteen: bool) -> bytes:
    name = "held17c 16x8" if sixteen else "held17b integer int4"
    model = ModelBuilder(description=f"arenalens: {name}")
    g = model.add_subgraph("main")
    kind = "int16" if sixteen or d.rng.random() < 0.3 else "int8"
    rows, depth = d.rng.choice((1, 1, 2, 3, 8)), d.rng.choice((8, 33, 64, 96, 250, 512))
    x = g.add_tensor("x", [rows, depth])
    current = _like(g, "xq", [rows, depth], kind)
    g.add_operator("QUANTIZE", [x], [current])
    for layer in range(d.rng.choice((1, 2, 3))):
        channels = d.rng.choice((1, 3, 16, 37, 100, 256))
        four = not sixteen or d.rng.random() < 0.5
        if four:
            nibbles = d.np.integers(-8, 8, (channels, depth)).astype(np.int8).reshape(-1)
        per_channel = d.rng.random() < 0.7
        scales = d.np.uniform(0.01, 0.05, channels if per_channel else 1)
        if four:
            padded = np.pad(nibbles, (0, nibbles.size % 2))
            packed = ((padded[1::2] & 0x0F) << 4 | (padded[0::2] & 0x0F)).astype(np.uint8)
            w = g.add_tensor(
                f"w{layer}",
                [channels, depth],
                "INT4",
                data=packed.tobytes(),
                quantization=quantization(scales, 0),
            )
        else:
            w = g.add_constant(
                f"w{layer}", d.int8(channels, depth), "INT8", quantization=quantization(scales, 0)
            )
        inputs = [current, w]
        if d.rng.random() < 0.6:
            in_scale = 0.05 if kind == "int8" else 0.001
            wide = kind == "int16" and (not sixteen or d.rng.random() < 0.5)
            bias = d.np.integers(-50, 50, channels).astype(np.int64 if wide else np.int32)
            inputs.append(
                g.add_constant(f"b{layer}", bias, quantization=quantization(scales * in_scale, 0))
            )
        out = _like(g, f"y{layer}", [rows, channels], kind)
        if sixteen and d.rng.random() < 0.15:
            out = g.add_tensor(
                f"y{layer}", [rows, channels], "INT16", quantization=quantization(0.001, 3)
            )
        options = {"fused_activation_function": d.rng.choice(("NONE", "RELU"))}
        g.add_operator("FULLY_CONNECTED", inputs, [out], options=options, version=13)
        current, depth = out, channels
    y = g.add_tensor("y", g.shape(current))
    g.add_operator("DEQUANTIZE", [current], [y])
    g.set_inputs([x])
    g.set_outputs([y])
    return model.build()


INTEGER_INT4_NAMES = tuple((f"held17b_int4_{n}", "integer_int4", n) for n in range(1, 13))
SIXTEEN_NAMES = tuple((f"held17c_16x8_{n}", "sixteen", n) for n in range(1, 13))


def late_case(n: int) -> bytes:
    """`held17d_<n>`, drawn after the depthwise indirection and hybrid row-tile rules were
    changed: odd n, 2-3 depthwise convolutions (int8 or float, batches of 1-4, kernels 1-5,
    strides 1-3, dilations 1-2); even n, 1-2 hybrid FULLY_CONNECTEDs on 2-40 rows."""
    d = _Draw(SEED_BASE + 7000 + n)
    model = ModelBuilder(description="arenalens: held17d")
    g = model.add_subgraph("main")
    if n % 2:
        kind = d.rng.choice(("int8", "float"))
        side = d.rng.choice((9, 16, 23, 30))
        shape = [d.rng.choice((1, 2, 3, 4)), side, side, d.rng.choice((1, 4, 7, 16))]
        x = current = _like(g, "x", shape, kind)
        for layer in range(d.rng.randint(2, 3)):
            small = min(g.shape(current)[1:3])
            kernel = d.rng.choice((1, 2, 3, 5)) if small > 5 else 1
            stride = d.rng.choice((1, 2, 3)) if small > 6 else 1
            dilation = d.rng.choice((1, 2)) if small > 10 and kernel > 1 else 1
            current = _conv(d, g, current, "DEPTHWISE_CONV_2D", (0, kernel, stride),
                            name=f"dw{layer}", dilation=dilation)  # fmt: skip
        g.set_inputs([x])
        g.set_outputs([current])
        return model.build()
    x = current = g.add_tensor(
        "x", [d.rng.choice((2, 3, 5, 7, 16, 40)), d.rng.choice((24, 100, 257))]
    )
    for layer in range(d.rng.choice((1, 2))):
        units, depth = d.rng.choice((8, 33, 130)), g.shape(current)[-1]
        scales = d.np.uniform(0.01, 0.03, units) if d.rng.random() < 0.5 else 0.02
        w = g.add_constant(f"w{layer}", d.int8(units, depth), "INT8",
                           quantization=quantization(scales))  # fmt: skip
        out = g.add_tensor(f"y{layer}", [g.shape(current)[0], units])
        options = {"asymmetric_quantize_inputs": d.rng.random() < 0.5}
        g.add_operator("FULLY_CONNECTED", [current, w, -1], [out], options=options)
        current = out
    g.set_inputs([x])
    g.set_outputs([current])
    return model.build()


LATE_NAMES = tuple((f"held17d_{n}", "late", n) for n in range(1, 13))
