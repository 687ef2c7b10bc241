"""Session 15's held-out campaign over the whole LiteRT heap (`held15_<family>_<n>`): families the
caches held few of, each model drawn from a seed after every heap rule it meets was written, none
fitted. `python -m tests.litert_heap_measure --cache tests/data/litert_heap_avx2.json --only
held15_` measures them (1 thread), `python -m tests.litert_held15 --threads` at 4 threads, and
`python -m tests.litert_held15` prints the per-family table (docs/litert-heap.md).

Families: `transformer` (a float pre-norm transformer block of builtin operators: layer norm,
Q/K/V projections, heads by RESHAPE and TRANSPOSE, BATCH_MATMULs, SOFTMAX, a feed-forward pair,
residual ADDs), `gru` (a GRU unrolled over 2-5 steps: UNPACK, FULLY_CONNECTED gates, LOGISTIC,
TANH, the blend), `lstm` (UNIDIRECTIONAL_SEQUENCE_LSTM, float or hybrid weights, CIFG drawn, at
drawn sizes), `depthwise` (int8 or float depthwise-heavy CNNs at odd image sizes and channel
counts, multipliers 1-2, strides 1-2), `int16` (16x8 activations: CONV_2D, DEPTHWISE_CONV_2D and
FULLY_CONNECTED with int64 biases, ADD, LOGISTIC, MAX_POOL_2D, SOFTMAX), `int4` (int4
FULLY_CONNECTED weights, per channel or blockwise), `hybrid` (dynamic-range int8 weights on float
activations: FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, BATCH_MATMUL), `slices` (STRIDED_SLICE
with strides and masks, GATHER, GATHER_ND, SLICE, CONCATENATION, SPLIT_V, PAD) and `signatures`
(3-4 signatures, each its own subgraph of a drawn family's layers)."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from arenalens.tflite.builder import (
    ModelBuilder,
    SubgraphBuilder,
    blockwise_quantization,
    quantization,
)

FAMILIES = (
    "transformer",
    "gru",
    "lstm",
    "depthwise",
    "int16",
    "int4",
    "hybrid",
    "slices",
    "signatures",
)
PER_FAMILY = 6
SEED_BASE = 15_000


class _Draw:
    """One model's draws: a seeded random.Random for choices and a numpy one for weights."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.np = np.random.default_rng(seed)

    def floats(self, *shape: int, scale: float = 0.2) -> np.ndarray:
        return (self.np.standard_normal(shape) * scale).astype(np.float32)

    def int8(self, *shape: int) -> np.ndarray:
        return self.np.integers(-127, 128, size=shape).astype(np.int8)


def _fc(d: _Draw, g: SubgraphBuilder, x: int, units: int, name: str, **options: object) -> int:
    shape = g.shape(x)
    w = g.add_constant("w" + name, d.floats(units, shape[-1]))
    b = g.add_constant("b" + name, d.floats(units)) if d.rng.random() < 0.7 else -1
    out = g.add_tensor(name, [*shape[:-1], units])
    g.add_operator("FULLY_CONNECTED", [x, w, b], [out], options={"keep_num_dims": True, **options})
    return out


def _unary(g: SubgraphBuilder, opcode: str, x: int, name: str, **options: object) -> int:
    out = g.add_tensor(name, g.shape(x))
    g.add_operator(opcode, [x], [out], options=options or None)
    return out


def _binary(g: SubgraphBuilder, opcode: str, a: int, b: int, name: str) -> int:
    out = g.add_tensor(name, g.shape(a))
    g.add_operator(opcode, [a, b], [out])
    return out


def _layer_norm(d: _Draw, g: SubgraphBuilder, x: int, name: str) -> int:
    shape = g.shape(x)
    axis = g.add_constant("ax" + name, np.array([len(shape) - 1], dtype=np.int32))
    reduced = [*shape[:-1], 1]
    mean = g.add_tensor(name + "m", reduced)
    g.add_operator("MEAN", [x, axis], [mean], options={"keep_dims": True})
    centred = _binary(g, "SUB", x, mean, name + "c")
    squared = _binary(g, "MUL", centred, centred, name + "s")
    variance = g.add_tensor(name + "v", reduced)
    g.add_operator("MEAN", [squared, axis], [variance], options={"keep_dims": True})
    eps = g.add_constant("e" + name, np.array([1e-5], dtype=np.float32))
    shifted = g.add_tensor(name + "v2", reduced)
    g.add_operator("ADD", [variance, eps], [shifted])
    scale = _unary(g, "RSQRT", shifted, name + "r")
    normed = g.add_tensor(name + "n", shape)
    g.add_operator("MUL", [centred, scale], [normed])
    gamma = g.add_constant("g" + name, d.floats(shape[-1]) + 1)
    return _binary(g, "MUL", normed, gamma, name)


def _transformer_layers(d: _Draw, g: SubgraphBuilder, x: int) -> int:
    _, steps, width = g.shape(x)
    heads = d.rng.choice([h for h in (1, 2, 4) if width % h == 0])
    size = width // heads
    normed = _layer_norm(d, g, x, "ln1")
    q, k, v = (_fc(d, g, normed, width, n) for n in ("q", "k", "v"))

    def split_heads(t: int, name: str) -> int:
        shape = g.add_constant("s" + name, np.array([1, steps, heads, size], dtype=np.int32))
        r = g.add_tensor(name + "r", [1, steps, heads, size])
        g.add_operator("RESHAPE", [t, shape], [r])
        perm = g.add_constant("p" + name, np.array([0, 2, 1, 3], dtype=np.int32))
        out = g.add_tensor(name + "t", [1, heads, steps, size])
        g.add_operator("TRANSPOSE", [r, perm], [out])
        return out

    qh, kh, vh = split_heads(q, "qh"), split_heads(k, "kh"), split_heads(v, "vh")
    scores = g.add_tensor("scores", [1, heads, steps, steps])
    g.add_operator("BATCH_MATMUL", [qh, kh], [scores], options={"adj_y": True})
    scaled = g.add_tensor("scaled", [1, heads, steps, steps])
    factor = g.add_constant("scale", np.array([size**-0.5], dtype=np.float32))
    g.add_operator("MUL", [scores, factor], [scaled])
    probabilities = _unary(g, "SOFTMAX", scaled, "probs", beta=1.0)
    context = g.add_tensor("context", [1, heads, steps, size])
    g.add_operator("BATCH_MATMUL", [probabilities, vh], [context])
    perm = g.add_constant("pc", np.array([0, 2, 1, 3], dtype=np.int32))
    merged = g.add_tensor("merged", [1, steps, heads, size])
    g.add_operator("TRANSPOSE", [context, perm], [merged])
    flat_shape = g.add_constant("sc", np.array([1, steps, width], dtype=np.int32))
    flat = g.add_tensor("flat", [1, steps, width])
    g.add_operator("RESHAPE", [merged, flat_shape], [flat])
    attended = _fc(d, g, flat, width, "o")
    residual = _binary(g, "ADD", x, attended, "res1")
    hidden = _fc(d, g, _layer_norm(d, g, residual, "ln2"), width * d.rng.choice((2, 3, 4)), "ff1")
    activated = _unary(g, d.rng.choice(["RELU", "GELU", "TANH"]), hidden, "act")
    return _binary(g, "ADD", residual, _fc(d, g, activated, width, "ff2"), "res2")


def transformer(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    x = g.add_tensor("x", [1, d.rng.choice((5, 7, 9, 13, 17)), d.rng.choice((24, 40, 48, 64))])
    y = _transformer_layers(d, g, x)
    if d.rng.random() < 0.4:
        y = _transformer_layers(d, g, y)
    return [x], [y]


def gru(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    batch, steps = d.rng.choice((1, 1, 2)), d.rng.randint(2, 5)
    width, units = d.rng.choice((6, 10, 16, 24)), d.rng.choice((8, 12, 20, 32))
    x = g.add_tensor("x", [batch, steps, width])
    frames = [g.add_tensor(f"x{t}", [batch, width]) for t in range(steps)]
    g.add_operator("UNPACK", [x], frames, options={"num": steps, "axis": 1})
    h = g.add_constant("h0", np.zeros((batch, units), dtype=np.float32))
    one = g.add_constant("one", np.ones((1,), dtype=np.float32))
    states = []
    for t, frame in enumerate(frames):
        gates = []
        for gate in ("z", "r"):
            both = _binary(
                g,
                "ADD",
                _fc(d, g, frame, units, f"{gate}x{t}"),
                _fc(d, g, h, units, f"{gate}h{t}"),
                f"{gate}{t}",
            )
            gates.append(_unary(g, "LOGISTIC", both, f"{gate}s{t}"))
        z, r = gates
        reset = _binary(g, "MUL", r, h, f"rh{t}")
        candidate = _binary(
            g, "ADD", _fc(d, g, frame, units, f"nx{t}"), _fc(d, g, reset, units, f"nh{t}"), f"n{t}"
        )
        n = _unary(g, "TANH", candidate, f"nt{t}")
        keep = g.add_tensor(f"k{t}", [batch, units])
        g.add_operator("SUB", [one, z], [keep])
        h = _binary(
            g,
            "ADD",
            _binary(g, "MUL", keep, n, f"kn{t}"),
            _binary(g, "MUL", z, h, f"zh{t}"),
            f"h{t + 1}",
        )
        states.append(h)
    if d.rng.random() < 0.5:
        packed = g.add_tensor("states", [batch, steps, units])
        g.add_operator("PACK", states, [packed], options={"values_count": steps, "axis": 1})
        return [x], [packed]
    return [x], [h]


def lstm(
    d: _Draw, g: SubgraphBuilder, *, always_hybrid: bool = False
) -> tuple[list[int], list[int]]:
    batch, steps = d.rng.choice((1, 2, 3)), d.rng.randint(2, 6)
    width, cell = d.rng.choice((5, 8, 13, 16)), d.rng.choice((6, 9, 16, 24))
    hybrid, cifg = d.rng.random() < 0.4, d.rng.random() < 0.4
    hybrid = hybrid or always_hybrid
    x = g.add_tensor("x", [batch, steps, width])

    def weights(rows: int, columns: int) -> int:
        if hybrid:
            return g.add_constant(
                "w", d.int8(rows, columns), "INT8", quantization=quantization(0.02)
            )
        return g.add_constant("w", d.floats(rows, columns))

    tensors = [x]
    tensors += [-1 if cifg and gate == 0 else weights(cell, width) for gate in range(4)]
    tensors += [-1 if cifg and gate == 0 else weights(cell, cell) for gate in range(4)]
    tensors += [-1, -1, -1]
    tensors += [
        -1 if cifg and gate == 0 else g.add_constant("b", d.floats(cell)) for gate in range(4)
    ]
    tensors += [-1, -1]
    tensors.append(g.add_tensor("output_state", [batch, cell], is_variable=True))
    tensors.append(g.add_tensor("cell_state", [batch, cell], is_variable=True))
    y = g.add_tensor("y", [batch, steps, cell])
    options = {
        "fused_activation_function": "TANH",
        "time_major": False,
        "asymmetric_quantize_inputs": d.rng.random() < 0.5,
    }
    g.add_operator("UNIDIRECTIONAL_SEQUENCE_LSTM", tensors, [y], options=options)
    if d.rng.random() < 0.5:
        y = _fc(d, g, y, d.rng.choice((3, 10)), "head")
    return [x], [y]


def _quantized_conv(
    d: _Draw,
    g: SubgraphBuilder,
    x: int,
    opcode: str,
    geometry: tuple[int, int, int],
    *,
    name: str,
    int16: bool = False,
    multiplier: int = 1,
) -> int:
    """An int8 (or 16x8) convolution of (channels, kernel, stride): per-channel int8 filter,
    int32 (int64) bias."""
    channels, kernel, stride = geometry
    shape = g.shape(x)
    padding = d.rng.choice(("SAME", "VALID")) if min(shape[1:3]) > kernel else "SAME"
    depthwise = opcode == "DEPTHWISE_CONV_2D"
    outs = shape[3] * multiplier if depthwise else channels
    filter_shape = (1, kernel, kernel, outs) if depthwise else (outs, kernel, kernel, shape[3])
    scales = d.np.uniform(0.005, 0.02, outs)
    w = g.add_constant(
        "w" + name,
        d.int8(*filter_shape),
        "INT8",
        quantization=quantization(scales, 0, axis=3 if depthwise else 0),
    )
    in_scale = 0.05 if not int16 else 0.001
    bias_type = np.int64 if int16 else np.int32
    bias = g.add_constant(
        "b" + name,
        d.np.integers(-200, 200, outs).astype(bias_type),
        quantization=quantization(scales * in_scale, 0),
    )

    def size(n: int) -> int:
        return -(-n // stride) if padding == "SAME" else (n - kernel) // stride + 1

    dtype = "INT16" if int16 else "INT8"
    spec = quantization(0.001 if int16 else 0.05, 0 if int16 else -3)
    out = g.add_tensor(name, [1, size(shape[1]), size(shape[2]), outs], dtype, quantization=spec)
    options: dict[str, object] = {
        "padding": padding,
        "stride_w": stride,
        "stride_h": stride,
        "fused_activation_function": d.rng.choice(["NONE", "RELU6"]),
    }
    if depthwise:
        options["depth_multiplier"] = multiplier
    g.add_operator(opcode, [x, w, bias], [out], options=options)
    return out


def depthwise(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    side = d.rng.choice((13, 19, 27, 33, 45, 57))
    channels = d.rng.choice((3, 5, 7, 12))
    int8 = d.rng.random() < 0.6
    spec = quantization(0.05, -3) if int8 else None
    x = g.add_tensor(
        "x",
        [1, side, side + d.rng.choice((0, 2, 6)), channels],
        "INT8" if int8 else "FLOAT32",
        quantization=spec,
    )
    current = x
    for block in range(d.rng.randint(2, 5)):
        stride = d.rng.choice((1, 1, 2)) if min(g.shape(current)[1:3]) > 4 else 1
        kernel = d.rng.choice((3, 3, 5))
        multiplier = d.rng.choice((1, 1, 2))
        if int8:
            current = _quantized_conv(
                d,
                g,
                current,
                "DEPTHWISE_CONV_2D",
                (0, kernel, stride),
                name=f"dw{block}",
                multiplier=multiplier,
            )
            if d.rng.random() < 0.6:
                current = _quantized_conv(
                    d,
                    g,
                    current,
                    "CONV_2D",
                    (d.rng.choice((9, 16, 22, 36)), 1, 1),
                    name=f"pw{block}",
                )
            continue
        shape = g.shape(current)
        w = g.add_constant(f"w{block}", d.floats(1, kernel, kernel, shape[3] * multiplier))
        b = g.add_constant(f"b{block}", d.floats(shape[3] * multiplier))
        out_shape = [1, -(-shape[1] // stride), -(-shape[2] // stride), shape[3] * multiplier]
        out = g.add_tensor(f"dw{block}", out_shape)
        g.add_operator(
            "DEPTHWISE_CONV_2D",
            [current, w, b],
            [out],
            options={
                "padding": "SAME",
                "stride_w": stride,
                "stride_h": stride,
                "depth_multiplier": multiplier,
                "fused_activation_function": "RELU6",
            },
        )
        current = out
        if d.rng.random() < 0.6:
            filters = d.rng.choice((9, 16, 22, 36))
            pw = g.add_constant(f"pw{block}", d.floats(filters, 1, 1, out_shape[3]))
            pb = g.add_constant(f"pb{block}", d.floats(filters))
            out = g.add_tensor(f"pwo{block}", [*out_shape[:3], filters])
            g.add_operator(
                "CONV_2D",
                [current, pw, pb],
                [out],
                options={"padding": "SAME", "stride_w": 1, "stride_h": 1},
            )
            current = out
    shape = g.shape(current)
    axes = g.add_constant("axes", np.array([1, 2], dtype=np.int32))
    pooled = g.add_tensor(
        "pooled",
        [1, shape[3]],
        "INT8" if int8 else "FLOAT32",
        quantization=quantization(0.05, -3) if int8 else None,
    )
    g.add_operator("MEAN", [current, axes], [pooled], options={"keep_dims": False})
    return [x], [pooled]


def int16(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    spec = quantization(0.001, 0)
    side, channels = d.rng.choice((9, 15, 24)), d.rng.choice((3, 8))
    x = g.add_tensor("x", [1, side, side, channels], "INT16", quantization=spec)
    current = x
    for block in range(d.rng.randint(1, 3)):
        opcode = d.rng.choice(("CONV_2D", "DEPTHWISE_CONV_2D"))
        current = _quantized_conv(
            d,
            g,
            current,
            opcode,
            (d.rng.choice((8, 12, 16)), 3, d.rng.choice((1, 2))),
            name=f"c{block}",
            int16=True,
        )
        if d.rng.random() < 0.4:
            other = g.add_tensor(
                f"l{block}", g.shape(current), "INT16", quantization=quantization(1 / 32768, 0)
            )
            g.add_operator("LOGISTIC", [current], [other])
            added = g.add_tensor(f"a{block}", g.shape(current), "INT16", quantization=spec)
            g.add_operator("ADD", [current, other], [added])
            current = added
    if d.rng.random() < 0.5 and min(g.shape(current)[1:3]) >= 2:
        shape = g.shape(current)
        pooled = g.add_tensor(
            "pool", [1, shape[1] // 2, shape[2] // 2, shape[3]], "INT16", quantization=spec
        )
        g.add_operator(
            "MAX_POOL_2D",
            [current],
            [pooled],
            options={
                "padding": "VALID",
                "stride_w": 2,
                "stride_h": 2,
                "filter_width": 2,
                "filter_height": 2,
            },
        )
        current = pooled
    shape = g.shape(current)
    flat_size = int(np.prod(shape))
    flat_shape = g.add_constant("fs", np.array([1, flat_size], dtype=np.int32))
    flat = g.add_tensor("flat", [1, flat_size], "INT16", quantization=spec)
    g.add_operator("RESHAPE", [current, flat_shape], [flat])
    units = d.rng.choice((4, 10))
    scales = np.full(units, 0.01)
    w = g.add_constant("fw", d.int8(units, flat_size), "INT8", quantization=quantization(scales))
    b = g.add_constant(
        "fb", np.zeros(units, dtype=np.int64), quantization=quantization(scales * 0.001, 0)
    )
    logits = g.add_tensor("logits", [1, units], "INT16", quantization=spec)
    g.add_operator("FULLY_CONNECTED", [flat, w, b], [logits])
    if d.rng.random() < 0.6:
        probabilities = g.add_tensor(
            "probs", [1, units], "INT16", quantization=quantization(1 / 32768, 0)
        )
        g.add_operator("SOFTMAX", [logits], [probabilities], options={"beta": 1.0})
        logits = probabilities
    return [x], [logits]


def int4(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    rows, depth = d.rng.choice((1, 2, 4)), d.rng.choice((64, 96, 128, 256))
    x = g.add_tensor("x", [rows, depth])
    current = x
    for layer in range(d.rng.choice((1, 2))):
        channels = d.rng.choice((16, 40, 64, 100, 128))
        nibbles = d.np.integers(-8, 8, (channels, depth)).astype(np.int8)
        packed = ((nibbles[:, 1::2] & 0x0F) << 4 | (nibbles[:, 0::2] & 0x0F)).astype(np.uint8)
        blocks = [b for b in (32, 64) if depth % b == 0]
        if blocks and d.rng.random() < 0.5:
            block = d.rng.choice(blocks)
            scale_values = d.np.uniform(0.01, 0.05, (channels, depth // block))
            scales = g.add_constant(f"scales{layer}", scale_values.astype(np.float16))
            spec = blockwise_quantization(scales, -1, block)
        else:
            spec = quantization(d.np.uniform(0.01, 0.05, channels), 0)
        w = g.add_tensor(
            f"w{layer}", [channels, depth], "INT4", data=packed.tobytes(), quantization=spec
        )
        inputs = [current, w]
        if d.rng.random() < 0.5:
            inputs.append(g.add_constant(f"b{layer}", d.floats(channels)))
        out = g.add_tensor(f"y{layer}", [rows, channels])
        options = {
            "asymmetric_quantize_inputs": d.rng.random() < 0.7,
            "fused_activation_function": d.rng.choice(("NONE", "RELU")),
        }
        g.add_operator("FULLY_CONNECTED", inputs, [out], options=options, version=6)
        current, depth = out, channels
    return [x], [current]


def hybrid(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    side, channels = d.rng.choice((7, 11, 16)), d.rng.choice((3, 8))
    x = g.add_tensor("x", [1, side, side, channels])
    current = x
    for block in range(d.rng.randint(1, 3)):
        shape = g.shape(current)
        opcode = d.rng.choice(("CONV_2D", "DEPTHWISE_CONV_2D"))
        depthwise = opcode == "DEPTHWISE_CONV_2D"
        outs = shape[3] if depthwise else d.rng.choice((8, 12, 16))
        # A hybrid depthwise filter needs a scale per channel (depthwise_conv.cc Prepare).
        per_channel = depthwise or d.rng.random() < 0.5
        scales = d.np.uniform(0.01, 0.03, outs) if per_channel else 0.02
        filter_shape = (1, 3, 3, outs) if depthwise else (outs, 3, 3, shape[3])
        w = g.add_constant(
            f"w{block}",
            d.int8(*filter_shape),
            "INT8",
            quantization=quantization(scales, 0, axis=3 if depthwise else 0),
        )
        b = g.add_constant(f"b{block}", d.floats(outs))
        out = g.add_tensor(f"c{block}", [*shape[:3], outs])
        options: dict[str, object] = {
            "padding": "SAME",
            "stride_w": 1,
            "stride_h": 1,
            "fused_activation_function": "RELU",
        }
        if depthwise:
            options["depth_multiplier"] = 1
        g.add_operator(opcode, [current, w, b], [out], options=options)
        current = out
    shape = g.shape(current)
    flat_shape = g.add_constant("fs", np.array([1, shape[1] * shape[2], shape[3]], dtype=np.int32))
    flat = g.add_tensor("flat", [1, shape[1] * shape[2], shape[3]])
    g.add_operator("RESHAPE", [current, flat_shape], [flat])
    units = d.rng.choice((6, 16, 32))
    w = g.add_constant(
        "fw",
        d.int8(units, shape[3]),
        "INT8",
        quantization=quantization(d.np.uniform(0.01, 0.03, units), 0),
    )
    y = g.add_tensor("fc", [1, shape[1] * shape[2], units])
    g.add_operator(
        "FULLY_CONNECTED",
        [flat, w, -1],
        [y],
        options={"keep_num_dims": True, "asymmetric_quantize_inputs": d.rng.random() < 0.5},
    )
    if d.rng.random() < 0.5:
        b_weights = g.add_constant(
            "bm", d.int8(units, 8), "INT8", quantization=quantization(0.02, 0)
        )
        z = g.add_tensor("bmm", [1, shape[1] * shape[2], 8])
        g.add_operator(
            "BATCH_MATMUL",
            [y, b_weights],
            [z],
            options={"asymmetric_quantize_inputs": d.rng.random() < 0.5},
        )
        y = z
    return [x], [y]


def slices(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    shape = [1, d.rng.choice((9, 16, 21)), d.rng.choice((8, 12, 30)), d.rng.choice((4, 6))]
    int8 = d.rng.random() < 0.4
    dtype, spec = ("INT8", quantization(0.05, 1)) if int8 else ("FLOAT32", None)

    def tensor(name: str, dims: list[int]) -> int:
        return g.add_tensor(name, dims, dtype, quantization=spec)

    def ints(name: str, values: list[int]) -> int:
        return g.add_constant(name, np.array(values, dtype=np.int32))

    x = tensor("x", shape)
    parts = []
    stride = d.rng.choice((1, 2, 3))
    begin = d.rng.randint(0, 2)
    rows = len(range(begin, shape[1], stride))
    sliced = tensor("ss", [1, rows, shape[2], shape[3]])
    g.add_operator(
        "STRIDED_SLICE",
        [
            x,
            ints("sb", [0, begin, 0, 0]),
            ints("se", [1, shape[1], shape[2], shape[3]]),
            ints("st", [1, stride, 1, 1]),
        ],
        [sliced],
        options={"begin_mask": 13, "end_mask": 15},
    )
    parts.append(sliced)
    cut = shape[2] // 2
    left = tensor("sl", [1, shape[1], cut, shape[3]])
    g.add_operator(
        "SLICE", [x, ints("lb", [0, 0, 0, 0]), ints("ls", [1, shape[1], cut, shape[3]])], [left]
    )
    parts.append(left)
    picks = sorted(d.rng.sample(range(shape[1]), k=min(shape[1], d.rng.choice((2, 3, 5)))))
    gathered = tensor("ga", [1, len(picks), shape[2], shape[3]])
    g.add_operator("GATHER", [x, ints("gi", picks)], [gathered], options={"axis": 1})
    parts.append(gathered)
    if d.rng.random() < 0.5:
        points = [[0, p, 0] for p in picks[:2]]
        nd = tensor("gnd", [len(points), shape[3]])
        g.add_operator(
            "GATHER_ND", [x, g.add_constant("gp", np.array(points, dtype=np.int32))], [nd]
        )
        parts.append(nd)
    if d.rng.random() < 0.5:
        sizes = [cut, shape[2] - cut]
        halves = [tensor(f"sv{i}", [1, shape[1], n, shape[3]]) for i, n in enumerate(sizes)]
        g.add_operator(
            "SPLIT_V", [x, ints("svs", sizes), ints("sva", [2])], halves, options={"num_splits": 2}
        )
        swapped = tensor("sw", shape)
        g.add_operator("CONCATENATION", halves[::-1], [swapped], options={"axis": 2})
        padded = tensor("pad", [1, shape[1] + 2, shape[2], shape[3]])
        g.add_operator(
            "PAD",
            [
                swapped,
                g.add_constant("pp", np.array([[0, 0], [1, 1], [0, 0], [0, 0]], dtype=np.int32)),
            ],
            [padded],
        )
        parts.append(padded)
    same_width = [
        p for p in parts if list(g.shape(p)[2:]) == [shape[2], shape[3]] and len(g.shape(p)) == 4
    ]
    if len(same_width) >= 2:
        rows = sum(g.shape(p)[1] for p in same_width)
        joined = tensor("cat", [1, rows, shape[2], shape[3]])
        g.add_operator("CONCATENATION", same_width, [joined], options={"axis": 1})
        parts = [joined, *(p for p in parts if p not in same_width)]
    return [x], parts


_BODIES: dict[str, Callable[[_Draw, SubgraphBuilder], tuple[list[int], list[int]]]] = {
    "transformer": transformer,
    "gru": gru,
    "lstm": lstm,
    "depthwise": depthwise,
    "int16": int16,
    "int4": int4,
    "hybrid": hybrid,
    "slices": slices,
}


def signatures(seed: int) -> bytes:
    d = _Draw(seed)
    model = ModelBuilder(description="arenalens: held15 signatures")
    kinds = ("transformer", "gru", "depthwise", "hybrid", "slices")
    for index in range(d.rng.choice((3, 4))):
        g = model.add_subgraph(f"signature{index}")
        inputs, outputs = _BODIES[d.rng.choice(kinds)](d, g)
        g.set_inputs(inputs)
        g.set_outputs(outputs)
        model.add_signature(f"run{index}", g)
    return model.build()


def held15_case(family: str, n: int) -> bytes:
    """A held15 model's bytes: family and its number n (1-based), seed SEED_BASE + 100 x the
    family's place + n; `hybrid_lstm` (held15b_*: drawn after the hybrid sequence LSTM's
    Prepare and Eval were replayed from held15_lstm_1-4), the lstm family's draws at seeds
    SEED_BASE + 5000 + n with 8-bit weights always."""
    if family == "hybrid_lstm":
        d = _Draw(SEED_BASE + 5000 + n)
        model = ModelBuilder(description="arenalens: held15b hybrid lstm")
        g = model.add_subgraph("main")
        inputs, outputs = lstm(d, g, always_hybrid=True)
        g.set_inputs(inputs)
        g.set_outputs(outputs)
        return model.build()
    seed = SEED_BASE + 100 * FAMILIES.index(family) + n
    if family == "signatures":
        return signatures(seed)
    d = _Draw(seed)
    model = ModelBuilder(description=f"arenalens: held15 {family}")
    g = model.add_subgraph("main")
    inputs, outputs = _BODIES[family](d, g)
    g.set_inputs(inputs)
    g.set_outputs(outputs)
    return model.build()


NAMES = tuple(
    (f"held15_{family}_{n}", family, n) for family in FAMILIES for n in range(1, PER_FAMILY + 1)
)
# Drawn after the hybrid sequence LSTM was replayed (heap_kernels, heap_invoke).
HYBRID_LSTM_NAMES = tuple((f"held15b_lstm_{n}", "hybrid_lstm", n) for n in range(1, 9))
