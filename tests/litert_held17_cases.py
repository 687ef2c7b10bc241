"""Session 17's held-out campaign over the whole LiteRT heap (`held17_<family>_<n>`): models of
what users bring, drawn from seeds (SEED_BASE 17_000) by a helper that wrote none of the heap's
rules, none fitted. `python -m tests.litert_heap_measure --cache tests/data/litert_heap_avx2.json
--only held17_` measures them (1 thread, the AMD EPYC), `python -m tests.litert_held17` prints
the per-family table (docs/litert-heap.md).

Families (what tests/litert_held15_cases.py's draws did not vary): `cnn` (int8 or float
CONV_2D / DEPTHWISE_CONV_2D / MAX_POOL_2D / AVERAGE_POOL_2D stacks at prime sides and channel
counts, a batch above 1, dilations, a FULLY_CONNECTED and SOFTMAX head), `autoencoder` (dense
encoder/decoder stacks, float or int8 between QUANTIZE and DEQUANTIZE, a 1-wide bottleneck now
and then), `recurrent` (LSTM cells unrolled over SLICEs with CONCATENATION, one
FULLY_CONNECTED and SPLIT into gates, or a plain tanh RNN), `attention` (rank-3 BATCH_MATMULs
with adj_y, a batch of 2, a scale and a causal mask before SOFTMAX, the residual ADD), `int16`
(16x8 FULLY_CONNECTED stacks with TANH, CONCATENATION, AVERAGE_POOL_2D and ADD), `hybrid`
(dynamic-range FULLY_CONNECTED with a batch, CONV_2D, DEPTHWISE_CONV_2D and BATCH_MATMUL),
`int4` (int4 FULLY_CONNECTED weights, blockwise or per channel, on float input, and on int8
input), `residual` (ADD / MUL / CONCATENATION of convolution branches, broadcast constants),
`control` (IF and WHILE over dense work in their subgraphs), `variables` (VAR_HANDLE /
READ_VARIABLE / ASSIGN_VARIABLE state with CALL_ONCE inits) and `large` (models above 4 MB:
dense, int8 convolution and float convolution)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arenalens.tflite.builder import (
    ModelBuilder,
    SubgraphBuilder,
    blockwise_quantization,
    quantization,
)
from tests.litert_held15_cases import _Draw, _unary

SEED_BASE = 17_000
PER_FAMILY = 6
Q8 = quantization(0.05, -3)
Q16 = quantization(0.001, 0)


def _ints(g: SubgraphBuilder, name: str, values: list[int]) -> int:
    return g.add_constant(name, np.array(values, dtype=np.int32))


def _like(g: SubgraphBuilder, name: str, shape: list[int], kind: str) -> int:
    """A tensor of kind 'float', 'int8' (Q8) or 'int16' (Q16)."""
    if kind == "int8":
        return g.add_tensor(name, shape, "INT8", quantization=Q8)
    if kind == "int16":
        return g.add_tensor(name, shape, "INT16", quantization=Q16)
    return g.add_tensor(name, shape)


def _kind(g: SubgraphBuilder, x: int) -> str:
    return {"INT8": "int8", "INT16": "int16"}.get(_dtype(g, x), "float")


def _dtype(g: SubgraphBuilder, x: int) -> str:
    from arenalens.tflite.builder import _type_code

    code = g.tensors[x].type_code
    return next(n for n in ("INT8", "INT16", "FLOAT32") if _type_code(n) == code)


def _conv(
    d: _Draw,
    g: SubgraphBuilder,
    x: int,
    opcode: str,
    geometry: tuple[int, int, int],
    *,
    name: str,
    multiplier: int = 1,
    dilation: int = 1,
) -> int:
    """A CONV_2D or DEPTHWISE_CONV_2D on x (float or int8, any batch) of (filters, kernel,
    stride), its bias, SAME or VALID."""
    filters, kernel, stride = geometry
    batch, height, width, channels = g.shape(x)
    kind = _kind(g, x)
    reach = (kernel - 1) * dilation + 1
    padding = d.rng.choice(("SAME", "VALID")) if min(height, width) > reach else "SAME"
    depthwise = opcode == "DEPTHWISE_CONV_2D"
    outs = channels * multiplier if depthwise else filters
    shape = (1, kernel, kernel, outs) if depthwise else (outs, kernel, kernel, channels)
    if kind == "float":
        w = g.add_constant("w" + name, d.floats(*shape))
        b = g.add_constant("b" + name, d.floats(outs))
    else:
        scales = d.np.uniform(0.005, 0.02, outs)
        w = g.add_constant(
            "w" + name,
            d.int8(*shape),
            "INT8",
            quantization=quantization(scales, 0, axis=3 if depthwise else 0),
        )
        b = g.add_constant(
            "b" + name,
            d.np.integers(-300, 300, outs).astype(np.int32),
            quantization=quantization(scales * 0.05, 0),
        )

    def size(n: int) -> int:
        return -(-n // stride) if padding == "SAME" else (n - reach) // stride + 1

    out = _like(g, name, [batch, size(height), size(width), outs], kind)
    options: dict[str, object] = {
        "padding": padding,
        "stride_w": stride,
        "stride_h": stride,
        "fused_activation_function": d.rng.choice(("NONE", "RELU", "RELU6")),
    }
    if depthwise:
        options["depth_multiplier"] = multiplier
    options["dilation_wfactor"] = options["dilation_hfactor"] = dilation
    g.add_operator(opcode, [x, w, b], [out], options=options)
    return out


def _pool(d: _Draw, g: SubgraphBuilder, x: int, name: str) -> int:
    batch, height, width, channels = g.shape(x)
    size, stride = d.rng.choice(((2, 2), (3, 2), (3, 1)))
    padding = "VALID" if min(height, width) >= size else "SAME"

    def out(n: int) -> int:
        return (n - size) // stride + 1 if padding == "VALID" else -(-n // stride)

    pooled = _like(g, name, [batch, out(height), out(width), channels], _kind(g, x))
    g.add_operator(
        d.rng.choice(("MAX_POOL_2D", "AVERAGE_POOL_2D")),
        [x],
        [pooled],
        options={
            "padding": padding,
            "stride_w": stride,
            "stride_h": stride,
            "filter_width": size,
            "filter_height": size,
        },
    )
    return pooled


def _dense(
    d: _Draw, g: SubgraphBuilder, x: int, units: int, name: str, *, activation: str = "NONE"
) -> int:
    """A FULLY_CONNECTED of x (float, int8 or 16x8) to `units`, keep_num_dims off."""
    shape = g.shape(x)
    depth, rows = shape[-1], int(np.prod(shape[:-1]))
    kind = _kind(g, x)
    if kind == "float":
        w = g.add_constant("w" + name, d.floats(units, depth, scale=1 / np.sqrt(depth)))
        b = g.add_constant("b" + name, d.floats(units)) if d.rng.random() < 0.8 else -1
    else:
        scale = float(d.np.uniform(0.005, 0.02))
        w = g.add_constant(
            "w" + name, d.int8(units, depth), "INT8", quantization=quantization(scale)
        )
        in_scale = 0.05 if kind == "int8" else 0.001
        bias_type = np.int32 if kind == "int8" else np.int64
        b = g.add_constant(
            "b" + name,
            d.np.integers(-100, 100, units).astype(bias_type),
            quantization=quantization(scale * in_scale, 0),
        )
    out = _like(g, name, [rows, units], kind)
    options = {"fused_activation_function": activation}
    g.add_operator("FULLY_CONNECTED", [x, w, b], [out], options=options)
    return out


def _softmax(g: SubgraphBuilder, x: int, name: str) -> int:
    kind = _kind(g, x)
    if kind == "int8":
        out = g.add_tensor(name, g.shape(x), "INT8", quantization=quantization(1 / 256, -128))
    elif kind == "int16":
        out = g.add_tensor(name, g.shape(x), "INT16", quantization=quantization(1 / 32768, 0))
    else:
        out = g.add_tensor(name, g.shape(x))
    g.add_operator("SOFTMAX", [x], [out], options={"beta": 1.0})
    return out


def _flatten(g: SubgraphBuilder, x: int, name: str) -> int:
    shape = g.shape(x)
    dims = [shape[0], int(np.prod(shape[1:]))]
    out = _like(g, name, dims, _kind(g, x))
    g.add_operator("RESHAPE", [x, _ints(g, name + "s", dims)], [out])
    return out


def cnn(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    kind = "int8" if d.rng.random() < 0.55 else "float"
    batch = d.rng.choice((1, 1, 1, 2, 3))
    side = d.rng.choice((11, 17, 23, 31, 37, 41))
    x = _like(g, "x", [batch, side, side + d.rng.choice((0, 1, 4)), d.rng.choice((1, 3, 5))], kind)
    current = x
    for layer in range(d.rng.randint(2, 4)):
        opcode = d.rng.choice(("CONV_2D", "CONV_2D", "DEPTHWISE_CONV_2D"))
        small = min(g.shape(current)[1:3])
        filters = d.rng.choice((7, 11, 13, 17, 19, 29))
        kernel = d.rng.choice((1, 3, 3, 5)) if small > 5 else 1
        stride = d.rng.choice((1, 2)) if small > 6 else 1
        current = _conv(
            d,
            g,
            current,
            opcode,
            (filters, kernel, stride),
            name=f"c{layer}",
            multiplier=d.rng.choice((1, 1, 2)),
            dilation=d.rng.choice((1, 1, 1, 2)) if small > 12 else 1,
        )
        if d.rng.random() < 0.5 and min(g.shape(current)[1:3]) >= 3:
            current = _pool(d, g, current, f"p{layer}")
    logits = _dense(d, g, _flatten(g, current, "flat"), d.rng.choice((2, 5, 10)), "head")
    return [x], [_softmax(g, logits, "probs") if d.rng.random() < 0.7 else logits]


def autoencoder(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    int8 = d.rng.random() < 0.45
    width = d.rng.choice((61, 128, 127, 257, 320, 640))
    x = g.add_tensor("x", [d.rng.choice((1, 1, 2, 4)), width])
    current = x
    if int8:
        current = _like(g, "xq", list(g.shape(x)), "int8")
        g.add_operator("QUANTIZE", [x], [current])
    code = d.rng.choice((1, 4, 8, 13))
    hidden = sorted({d.rng.choice((128, 96, 64, 37)), d.rng.choice((32, 23, 16))}, reverse=True)
    for n, units in enumerate([*hidden, code, *hidden[::-1], width]):
        last = n == 2 * len(hidden)
        current = _dense(d, g, current, units, f"fc{n}", activation="NONE" if last else "RELU")
    if int8:
        out = g.add_tensor("y", g.shape(current))
        g.add_operator("DEQUANTIZE", [current], [out])
        current = out
    return [x], [current]


def _binary(g: SubgraphBuilder, opcode: str, a: int, b: int, name: str) -> int:
    out = _like(g, name, list(g.shape(a)), _kind(g, a))
    g.add_operator(opcode, [a, b], [out])
    return out


def recurrent(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    batch, steps = d.rng.choice((1, 1, 2)), d.rng.randint(2, 6)
    width, units = d.rng.choice((3, 7, 12, 40)), d.rng.choice((5, 16, 31, 64))
    lstm = d.rng.random() < 0.6
    x = g.add_tensor("x", [batch, steps, width])
    h = g.add_constant("h0", np.zeros((batch, units), np.float32))
    c = g.add_constant("c0", np.zeros((batch, units), np.float32))
    outputs = []
    for t in range(steps):
        piece = g.add_tensor(f"s{t}", [batch, 1, width])
        g.add_operator(
            "SLICE",
            [x, _ints(g, f"sb{t}", [0, t, 0]), _ints(g, f"ss{t}", [batch, 1, width])],
            [piece],
        )
        frame = g.add_tensor(f"f{t}", [batch, width])
        g.add_operator("RESHAPE", [piece, _ints(g, f"fs{t}", [batch, width])], [frame])
        if not lstm:
            both = _binary(
                g,
                "ADD",
                _dense(d, g, frame, units, f"x{t}"),
                _dense(d, g, h, units, f"h{t}"),
                f"a{t}",
            )
            h = _unary(g, "TANH", both, f"t{t}")
            outputs.append(h)
            continue
        joined = g.add_tensor(f"j{t}", [batch, width + units])
        g.add_operator("CONCATENATION", [frame, h], [joined], options={"axis": 1})
        gates = _dense(d, g, joined, 4 * units, f"g{t}")
        parts = [g.add_tensor(f"q{t}{i}", [batch, units]) for i in range(4)]
        g.add_operator("SPLIT", [_ints(g, f"ax{t}", [1]), gates], parts, options={"num_splits": 4})
        i, f, o = (_unary(g, "LOGISTIC", parts[k], f"l{t}{k}") for k in (0, 1, 3))
        cand = _unary(g, "TANH", parts[2], f"cand{t}")
        c = _binary(
            g,
            "ADD",
            _binary(g, "MUL", f, c, f"fc{t}"),
            _binary(g, "MUL", i, cand, f"ic{t}"),
            f"c{t}",
        )
        h = _binary(g, "MUL", o, _unary(g, "TANH", c, f"tc{t}"), f"h{t}")
        outputs.append(h)
    if d.rng.random() < 0.5:
        packed = g.add_tensor("states", [batch, steps, units])
        g.add_operator("PACK", outputs, [packed], options={"values_count": steps, "axis": 1})
        return [x], [packed]
    return [x], [_dense(d, g, h, d.rng.choice((1, 3, 8)), "head")]


def _attention_block(d: _Draw, g: SubgraphBuilder, x: int, tag: str) -> int:
    batch, steps, width = g.shape(x)
    flat = g.add_tensor(tag + "flat", [batch * steps, width])
    g.add_operator("RESHAPE", [x, _ints(g, tag + "fs", [batch * steps, width])], [flat])

    def project(name: str) -> int:
        y = _dense(d, g, flat, width, tag + name)
        out = g.add_tensor(tag + name + "3", [batch, steps, width])
        g.add_operator("RESHAPE", [y, _ints(g, tag + name + "s", [batch, steps, width])], [out])
        return out

    q, k, v = project("q"), project("k"), project("v")
    scores = g.add_tensor(tag + "scores", [batch, steps, steps])
    g.add_operator("BATCH_MATMUL", [q, k], [scores], options={"adj_x": False, "adj_y": True})
    scale = g.add_constant(tag + "scale", np.array([1 / np.sqrt(width)], np.float32))
    scores = _binary(g, "MUL", scores, scale, tag + "scaled")
    if d.rng.random() < 0.5:
        mask = np.triu(np.full((steps, steps), -1e4, np.float32), 1)
        scores = _binary(g, "ADD", scores, g.add_constant(tag + "mask", mask), tag + "masked")
    probs = _softmax(g, scores, tag + "probs")
    mixed = g.add_tensor(tag + "mixed", [batch, steps, width])
    g.add_operator("BATCH_MATMUL", [probs, v], [mixed])
    return _binary(g, "ADD", x, mixed, tag + "res")


def attention(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    shape = [
        d.rng.choice((1, 1, 2)),
        d.rng.choice((3, 7, 11, 19, 31)),
        d.rng.choice((12, 20, 36, 60)),
    ]
    x = g.add_tensor("x", shape)
    y = _attention_block(d, g, x, "a")
    if d.rng.random() < 0.4:
        y = _attention_block(d, g, y, "b")
    return [x], [y]


def int16(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    batch = d.rng.choice((1, 1, 3))
    if d.rng.random() < 0.5:
        side, channels = d.rng.choice((7, 13, 20)), d.rng.choice((2, 5, 11))
        x = _like(g, "x", [batch, side, side, channels], "int16")
        pooled = _like(g, "pool", [batch, side // 2, side // 2, channels], "int16")
        g.add_operator(
            "AVERAGE_POOL_2D",
            [x],
            [pooled],
            options={
                "padding": "VALID",
                "stride_w": 2,
                "stride_h": 2,
                "filter_width": 2,
                "filter_height": 2,
            },
        )
        current = _flatten(g, pooled, "flat")
    else:
        x = _like(g, "x", [batch, d.rng.choice((17, 64, 101))], "int16")
        current = x
    branches = []
    for n in range(d.rng.randint(1, 3)):
        current = _dense(d, g, current, d.rng.choice((8, 19, 32, 50)), f"fc{n}")
        if d.rng.random() < 0.5:
            squashed = g.add_tensor(
                f"t{n}", g.shape(current), "INT16", quantization=quantization(1 / 32768, 0)
            )
            g.add_operator(d.rng.choice(("TANH", "LOGISTIC")), [current], [squashed])
            current = _like(g, f"tq{n}", list(g.shape(current)), "int16")
            g.add_operator("ADD", [squashed, squashed], [current])
        branches.append(current)
    if len(branches) > 1:
        width = sum(g.shape(b)[1] for b in branches)
        joined = _like(g, "cat", [batch, width], "int16")
        g.add_operator("CONCATENATION", branches, [joined], options={"axis": 1})
        current = joined
    logits = _dense(d, g, current, d.rng.choice((3, 10)), "head")
    return [x], [_softmax(g, logits, "probs") if d.rng.random() < 0.6 else logits]


def hybrid(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    asymmetric = d.rng.random() < 0.5
    if d.rng.random() < 0.5:
        batch, side, channels = (
            d.rng.choice((1, 2)),
            d.rng.choice((9, 14, 21)),
            d.rng.choice((1, 3, 6)),
        )
        x = g.add_tensor("x", [batch, side, side, channels])
        current = x
        for n in range(d.rng.randint(1, 3)):
            opcode = d.rng.choice(("CONV_2D", "DEPTHWISE_CONV_2D"))
            depthwise = opcode == "DEPTHWISE_CONV_2D"
            chans = g.shape(current)[3]
            outs = chans if depthwise else d.rng.choice((5, 8, 17))
            per_channel = depthwise or d.rng.random() < 0.5
            scales = d.np.uniform(0.01, 0.03, outs) if per_channel else 0.02
            shape = (1, 3, 3, outs) if depthwise else (outs, 3, 3, chans)
            w = g.add_constant(
                f"w{n}",
                d.int8(*shape),
                "INT8",
                quantization=quantization(scales, 0, axis=3 if depthwise else 0),
            )
            out = g.add_tensor(f"c{n}", [*g.shape(current)[:3], outs])
            options: dict[str, object] = {
                "padding": "SAME",
                "stride_w": 1,
                "stride_h": 1,
                "fused_activation_function": "RELU",
            }
            if depthwise:
                options["depth_multiplier"] = 1
            b = g.add_constant(f"b{n}", d.floats(outs))
            g.add_operator(opcode, [current, w, b], [out], options=options)
            current = out
        current = _flatten(g, current, "flat")
    else:
        x = g.add_tensor("x", [d.rng.choice((1, 2, 5, 8)), d.rng.choice((33, 64, 150, 300))])
        current = x
    for n in range(d.rng.randint(1, 3)):
        units = d.rng.choice((7, 24, 64, 129))
        depth = g.shape(current)[-1]
        per_channel = d.rng.random() < 0.4
        scales = d.np.uniform(0.01, 0.03, units) if per_channel else 0.02
        w = g.add_constant(
            f"fw{n}", d.int8(units, depth), "INT8", quantization=quantization(scales)
        )
        b = g.add_constant(f"fb{n}", d.floats(units)) if d.rng.random() < 0.6 else -1
        out = g.add_tensor(f"fc{n}", [g.shape(current)[0], units])
        g.add_operator(
            "FULLY_CONNECTED",
            [current, w, b],
            [out],
            options={
                "asymmetric_quantize_inputs": asymmetric,
                "fused_activation_function": d.rng.choice(("NONE", "RELU")),
            },
        )
        current = out
    if d.rng.random() < 0.4:
        rows, depth = g.shape(current)
        lhs = g.add_tensor("lhs", [1, rows, depth])
        g.add_operator("RESHAPE", [current, _ints(g, "ls", [1, rows, depth])], [lhs])
        cols = d.rng.choice((5, 16))
        rhs = g.add_constant("bm", d.int8(depth, cols), "INT8", quantization=quantization(0.02, 0))
        current = g.add_tensor("bmm", [1, rows, cols])
        g.add_operator(
            "BATCH_MATMUL",
            [lhs, rhs],
            [current],
            options={"asymmetric_quantize_inputs": asymmetric},
        )
    return [x], [current]


def int4(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    int8_input = d.rng.random() < 0.35
    rows, depth = d.rng.choice((1, 3, 5)), d.rng.choice((64, 96, 160, 192, 320))
    x = g.add_tensor("x", [rows, depth])
    current = x
    if int8_input:
        current = _like(g, "xq", [rows, depth], "int8")
        g.add_operator("QUANTIZE", [x], [current])
    for layer in range(d.rng.choice((1, 2, 2, 3))):
        channels = d.rng.choice((32, 37, 64, 97, 128, 160))
        nibbles = d.np.integers(-8, 8, (channels, depth)).astype(np.int8)
        packed = ((nibbles[:, 1::2] & 0x0F) << 4 | (nibbles[:, 0::2] & 0x0F)).astype(np.uint8)
        blocks = [b for b in (32, 64) if depth % b == 0]
        scale_values = d.np.uniform(0.01, 0.05, channels)
        if not int8_input and blocks and d.rng.random() < 0.5:
            block = d.rng.choice(blocks)
            scale_blocks = d.np.uniform(0.01, 0.05, (channels, depth // block))
            spec = blockwise_quantization(
                g.add_constant(f"scales{layer}", scale_blocks.astype(np.float16)), -1, block
            )
        else:
            spec = quantization(scale_values, 0)
        w = g.add_tensor(
            f"w{layer}", [channels, depth], "INT4", data=packed.tobytes(), quantization=spec
        )
        inputs = [current, w]
        if int8_input:
            inputs.append(
                g.add_constant(
                    f"b{layer}",
                    d.np.integers(-50, 50, channels).astype(np.int32),
                    quantization=quantization(scale_values * 0.05, 0),
                )
            )
            out = _like(g, f"y{layer}", [rows, channels], "int8")
        else:
            if d.rng.random() < 0.5:
                inputs.append(g.add_constant(f"b{layer}", d.floats(channels)))
            out = g.add_tensor(f"y{layer}", [rows, channels])
        options = {
            "asymmetric_quantize_inputs": d.rng.random() < 0.6,
            "fused_activation_function": d.rng.choice(("NONE", "RELU")),
        }
        g.add_operator(
            "FULLY_CONNECTED", inputs, [out], options=options, version=6 if not int8_input else 13
        )
        current, depth = out, channels
    if int8_input:
        y = g.add_tensor("y", g.shape(current))
        g.add_operator("DEQUANTIZE", [current], [y])
        current = y
    return [x], [current]


def residual(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    kind = "int8" if d.rng.random() < 0.5 else "float"
    batch, side = d.rng.choice((1, 1, 2)), d.rng.choice((8, 13, 19, 29))
    channels = d.rng.choice((3, 8, 16))
    x = _like(g, "x", [batch, side, side, channels], kind)
    current = _conv(d, g, x, "CONV_2D", (d.rng.choice((11, 16, 23)), 3, 1), name="stem")
    for block in range(d.rng.randint(1, 3)):
        chans = g.shape(current)[3]
        left = _conv(d, g, current, "CONV_2D", (chans, 3, 1), name=f"l{block}")
        left = _conv(d, g, left, "DEPTHWISE_CONV_2D", (0, 3, 1), name=f"ld{block}")
        if g.shape(left) != g.shape(current):
            left = _conv(d, g, current, "CONV_2D", (chans, 1, 1), name=f"lp{block}")
        join = d.rng.choice(("ADD", "CONCATENATION", "MUL"))
        if join == "CONCATENATION":
            right = _conv(
                d, g, current, "CONV_2D", (d.rng.choice((5, 7, 13)), 1, 1), name=f"r{block}"
            )
            width = chans + g.shape(right)[3]
            joined = _like(g, f"j{block}", [*g.shape(current)[:3], width], kind)
            g.add_operator("CONCATENATION", [left, right], [joined], options={"axis": 3})
            current = joined
        elif join == "MUL" and kind == "float":
            gate = g.add_constant(f"gate{block}", d.floats(1, 1, 1, chans) + 1)
            current = _binary(
                g, "ADD", current, _binary(g, "MUL", left, gate, f"m{block}"), f"a{block}"
            )
        else:
            current = _binary(g, "ADD", current, left, f"a{block}")
    shape = g.shape(current)
    pooled = _like(g, "pooled", [shape[0], shape[3]], kind)
    g.add_operator(
        "MEAN", [current, _ints(g, "axes", [1, 2])], [pooled], options={"keep_dims": False}
    )
    return [x], [pooled]


def _vector_work(d: _Draw, g: SubgraphBuilder, x: int, tag: str) -> int:
    """Shape-preserving dense work on a float [rows, n] tensor."""
    width = g.shape(x)[1]
    choice = d.rng.choice(("dense", "tanh", "dense2"))
    if choice == "tanh":
        return _unary(g, "TANH", _binary(g, "ADD", x, x, tag + "d"), tag + "t")
    y = _dense(
        d, g, x, width if choice == "dense" else d.rng.choice((9, 40)), tag + "a", activation="RELU"
    )
    return y if choice == "dense" else _dense(d, g, y, width, tag + "b")


def control(d: _Draw, model: ModelBuilder) -> bytes:
    main = model.add_subgraph("main")
    rows, width = d.rng.choice((1, 2)), d.rng.choice((7, 16, 33, 100))
    count, x = main.add_tensor("count", [1], "INT32"), main.add_tensor("x", [rows, width])
    current = _vector_work(d, main, x, "pre") if d.rng.random() < 0.5 else x

    def branch(name: str) -> int:
        graph = model.add_subgraph(name)
        y = graph.add_tensor("x", [rows, width])
        graph.set_inputs([y])
        graph.set_outputs([_vector_work(d, graph, y, name)])
        return graph.index

    if d.rng.random() < 0.5:
        pick = main.add_tensor("pick", [1], "BOOL")
        limit = _ints(main, "limit", [d.rng.choice((0, 1))])
        main.add_operator("LESS", [count, limit], [pick])
        then, otherwise = branch("then"), branch("else")
        out = main.add_tensor("picked", [rows, width])
        main.add_operator(
            "IF",
            [pick, current],
            [out],
            options={"then_subgraph_index": then, "else_subgraph_index": otherwise},
        )
    else:
        turns = d.rng.choice((1, 2, 5))
        cond, body = model.add_subgraph("cond"), model.add_subgraph("body")
        step, state = cond.add_tensor("count", [1], "INT32"), cond.add_tensor("x", [rows, width])
        flag = cond.add_tensor("continue", [1], "BOOL")
        cond.add_operator("LESS", [step, _ints(cond, "limit", [turns])], [flag])
        cond.set_inputs([step, state])
        cond.set_outputs([flag])
        step, state = body.add_tensor("count", [1], "INT32"), body.add_tensor("x", [rows, width])
        after = body.add_tensor("next", [1], "INT32")
        body.add_operator("ADD", [step, _ints(body, "one", [1])], [after])
        body.set_inputs([step, state])
        body.set_outputs([after, _vector_work(d, body, state, "body")])
        outs = [
            main.add_tensor("count_out", [1], "INT32"),
            main.add_tensor("looped", [rows, width]),
        ]
        main.add_operator(
            "WHILE",
            [count, current],
            outs,
            options={"cond_subgraph_index": cond.index, "body_subgraph_index": body.index},
        )
        out = outs[1]
    if d.rng.random() < 0.5:
        out = _dense(d, main, out, d.rng.choice((1, 5)), "head")
    main.set_inputs([count, x])
    main.set_outputs([out])
    return model.build()


def _handle(g: SubgraphBuilder, name: str) -> int:
    tensor = g.add_tensor(f"{name}/handle", [1], "RESOURCE")
    g.add_operator("VAR_HANDLE", [], [tensor], options={"shared_name": name})
    return tensor


def variables(d: _Draw, model: ModelBuilder) -> bytes:
    main = model.add_subgraph("main")
    rows, width = d.rng.choice((1, 3)), d.rng.choice((5, 24, 61, 128))
    x = main.add_tensor("x", [rows, width])
    names = ["state"] + (["memory"] if d.rng.random() < 0.4 else [])
    init = model.add_subgraph("init")
    for name in names:
        start = init.add_constant(name + "0", d.floats(rows, width))
        value = _vector_work(d, init, start, name) if d.rng.random() < 0.5 else start
        init.add_operator("ASSIGN_VARIABLE", [_handle(init, name), value], [])
    init.set_inputs([])
    init.set_outputs([])
    current = _vector_work(d, main, x, "pre") if d.rng.random() < 0.4 else x
    main.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": init.index})
    for name in names:
        read = main.add_tensor(name + "_read", [rows, width])
        main.add_operator("READ_VARIABLE", [_handle(main, name)], [read])
        mixed = _unary(
            main,
            "TANH",
            _binary(main, "ADD", _dense(d, main, read, width, name + "h"), current, name + "s"),
            name + "t",
        )
        main.add_operator("ASSIGN_VARIABLE", [_handle(main, name), mixed], [])
        current = mixed
    main.set_inputs([x])
    main.set_outputs([current])
    return model.build()


def large(d: _Draw, g: SubgraphBuilder, n: int) -> tuple[list[int], list[int]]:
    """n 1: a float dense stack (> 4 MB of weights); 2: an int8 convolution stack with wide
    3x3 layers; 3: a float CNN on a 96-128 px image with wide late layers."""
    if n % 3 == 1:
        x = g.add_tensor("x", [1, d.rng.choice((1000, 1100, 1200))])
        h = _dense(d, g, x, 1024, "fc0", activation="RELU")
        h = _dense(d, g, h, d.rng.choice((256, 300)), "fc1", activation="RELU")
        return [x], [_softmax(g, _dense(d, g, h, 10, "fc2"), "probs")]
    kind = "int8" if n % 3 == 2 else "float"
    side = d.rng.choice((33, 48)) if kind == "int8" else d.rng.choice((96, 112, 128))
    x = _like(g, "x", [1, side, side, 3], kind)
    current = _conv(d, g, x, "CONV_2D", (32, 3, 2), name="stem")
    for layer, filters in enumerate((128, 320, 512) if kind == "int8" else (64, 160, 256)):
        current = _conv(
            d, g, current, "CONV_2D", (filters, 3, 2 if layer < 2 else 1), name=f"c{layer}"
        )
        current = _conv(d, g, current, "CONV_2D", (filters, 3, 1), name=f"d{layer}")
    logits = _dense(d, g, _flatten(g, current, "flat"), 10, "head")
    return [x], [logits]


_BODIES: dict[str, Callable[[_Draw, SubgraphBuilder], tuple[list[int], list[int]]]] = {
    "cnn": cnn,
    "autoencoder": autoencoder,
    "recurrent": recurrent,
    "attention": attention,
    "int16": int16,
    "hybrid": hybrid,
    "int4": int4,
    "residual": residual,
}
_MODELS: dict[str, Callable[[_Draw, ModelBuilder], bytes]] = {
    "control": control,
    "variables": variables,
}
FAMILIES = (*_BODIES, *_MODELS, "large")


def held17_case(family: str, n: int) -> bytes:
    """A held17 model's bytes: family and its number n (1-based), seed SEED_BASE + 100 x the
    family's place + n."""
    d = _Draw(SEED_BASE + 100 * FAMILIES.index(family) + n)
    model = ModelBuilder(description=f"arenalens: held17 {family}")
    if family in _MODELS:
        return _MODELS[family](d, model)
    g = model.add_subgraph("main")
    inputs, outputs = large(d, g, n) if family == "large" else _BODIES[family](d, g)
    g.set_inputs(inputs)
    g.set_outputs(outputs)
    return model.build()


NAMES = tuple(
    (f"held17_{family}_{n}", family, n)
    for family in FAMILIES
    for n in range(1, (3 if family == "large" else PER_FAMILY) + 1)
)
