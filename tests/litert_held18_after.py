"""Held-out models drawn after session 18's fixes (`held18b_<n>`, seeds from 18,500): each one
takes a rule the held18 campaign found (tests/litert_held18_cases.py) on shapes it did not draw:
CONV_3D's ruy GEMM (kernels of 1 without im2col, strides, dilations, batches of 2, out channels
off the kernel's 8, with and without a bias), DEQUANTIZE's copy (float16, int8 per tensor and per
channel constants, and a float16 input), float SOFTMAX's row temporaries and its tasks (2 to
4,000 rows), and the parse / Init facts (HARD_SWISH float and int8, ARG_MAX / ARG_MIN,
RESIZE_NEAREST_NEIGHBOR, EMBEDDING_LOOKUP). `python -m tests.litert_heap_measure --cache
tests/data/litert_heap_held18.json --only held18b_` measures them, `python -m tests.litert_held18
--threads` at 2 threads too."""

from __future__ import annotations

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from tests.litert_held15_cases import _Draw
from tests.litert_held18_cases import Q8, _ints, _unary

SEED_BASE = 18_500
COUNT = 16


def _conv3d(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    batch, depth = d.rng.choice((1, 2)), d.rng.choice((3, 5, 7))
    side, chans = d.rng.choice((6, 9, 14)), d.rng.choice((1, 2, 5))
    x = g.add_tensor("x", [batch, depth, side, side, chans])
    kernel, stride = d.rng.choice((1, 1, 2, 3)), d.rng.choice((1, 2))
    dilation = d.rng.choice((1, 2)) if kernel > 1 and depth > 2 * kernel else 1
    outs = d.rng.choice((3, 7, 9, 17, 24))
    reach = (kernel - 1) * dilation + 1
    padding = "SAME" if depth <= reach else d.rng.choice(("SAME", "VALID"))

    def size(m: int) -> int:
        return -(-m // stride) if padding == "SAME" else (m - reach) // stride + 1

    inputs = [x, g.add_constant("w", d.floats(kernel, kernel, kernel, chans, outs))]
    if d.rng.random() < 0.5:
        inputs.append(g.add_constant("b", d.floats(outs)))
    y = g.add_tensor("y", [batch, size(depth), size(side), size(side), outs])
    options = {
        "padding": padding,
        "stride_d": stride,
        "stride_w": stride,
        "stride_h": stride,
        "dilation_dfactor": dilation,
        "dilation_wfactor": dilation,
        "dilation_hfactor": dilation,
    }
    g.add_operator("CONV_3D", inputs, [y], options=options)
    return [x], [y]


def _dequantize(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    rows, width = d.rng.choice((4, 16, 64, 200)), d.rng.choice((16, 50, 128))
    x = g.add_tensor("x", [rows, width])
    kind = d.rng.choice(("fp16", "int8", "int8_channel", "fp16_input"))
    inputs = [x]
    if kind == "fp16":
        source = g.add_constant("c", d.floats(rows, width).astype(np.float16))
    elif kind == "int8":
        source = g.add_constant(
            "c", d.int8(rows, width), "INT8", quantization=quantization(0.02, 3)
        )
    elif kind == "int8_channel":
        scales = d.np.uniform(0.01, 0.03, rows)
        spec = quantization(scales, 0, axis=0)
        source = g.add_constant("c", d.int8(rows, width), "INT8", quantization=spec)
    else:
        source = g.add_tensor("c", [rows, width], "FLOAT16")
        inputs.append(source)
    real = g.add_tensor("real", [rows, width])
    g.add_operator("DEQUANTIZE", [source], [real])
    out = g.add_tensor("y", [rows, width])
    g.add_operator("ADD", [x, real], [out])
    return inputs, [out]


def _softmax(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    shape = d.rng.choice(([2, 7], [16, 10], [1, 30, 30, 3], [4000, 2], [3, 11, 13, 5], [1, 9, 64]))
    x = g.add_tensor("x", list(shape))
    y = g.add_tensor("y", list(shape))
    g.add_operator("SOFTMAX", [x], [y], options={"beta": d.rng.choice((1.0, 0.5))})
    return [x], [y]


def _facts(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    side, chans = d.rng.choice((5, 12, 21)), d.rng.choice((3, 8))
    int8 = d.rng.random() < 0.5
    x = g.add_tensor("x", [1, side, side, chans], "INT8" if int8 else "FLOAT32",
                     quantization=Q8 if int8 else None)  # fmt: skip
    current = _unary(g, "HARD_SWISH", x, "hs")
    size = [side * 2, side * 2 + d.rng.choice((0, 3))]
    resized = g.add_tensor("up", [1, *size, chans], "INT8" if int8 else "FLOAT32",
                           quantization=Q8 if int8 else None)  # fmt: skip
    options = {"align_corners": False, "half_pixel_centers": d.rng.random() < 0.5}
    g.add_operator(
        "RESIZE_NEAREST_NEIGHBOR", [current, _ints(g, "size", size)], [resized], options=options
    )
    index = g.add_tensor("arg", [1, *size], "INT32")
    opcode = d.rng.choice(("ARG_MAX", "ARG_MIN"))
    g.add_operator(opcode, [resized, _ints(g, "axis", [3])], [index], options={"output_type": 2})
    ids = g.add_tensor("ids", [d.rng.choice((3, 40))], "INT32")
    looked = g.add_tensor("rows", [g.shape(ids)[0], 16])
    g.add_operator("EMBEDDING_LOOKUP", [ids, g.add_constant("table", d.floats(100, 16))], [looked])
    return [x, ids], [index, looked]


_BODIES = (_conv3d, _conv3d, _conv3d, _conv3d, _dequantize, _dequantize, _dequantize, _softmax,
           _softmax, _softmax, _facts, _facts, _facts, _conv3d, _dequantize, _softmax)  # fmt: skip
NAMES = tuple((f"held18b_{n}", "held18b", n) for n in range(1, COUNT + 1))


def held18b_case(n: int) -> bytes:
    """The n-th model (1-based), seed SEED_BASE + n."""
    d = _Draw(SEED_BASE + n)
    model = ModelBuilder(description="arenalens: held18b")
    g = model.add_subgraph("main")
    inputs, outputs = _BODIES[n - 1](d, g)
    g.set_inputs(inputs)
    g.set_outputs(outputs)
    return model.build()
