"""Session 18's held-out campaign over the whole LiteRT heap (`held18_<family>_<n>`): families
neither held15 nor held17 drew, built as real models build them, from seeds (SEED_BASE 18_000)
by a helper that wrote none of the heap's rules. `python -m tests.litert_heap_measure --cache
tests/data/litert_heap_held18.json --only held18_` measures them (1 thread, the AMD EPYC),
`python -m tests.litert_held18` prints the per-family table (docs/litert-heap.md).

Families: `se_block` (MobileNetV3 / EfficientNet-lite blocks: 1x1 expand, HARD_SWISH,
depthwise, squeeze-excite MEAN keep_dims -> 1x1 -> 1x1 -> LOGISTIC / HARD_SWISH -> broadcast
MUL, projection, residual ADD), `detection` (an SSD / FPN head: RESIZE_NEAREST_NEIGHBOR
top-down, per-level box and class convolutions RESHAPEd and CONCATENATEd, anchors decoded
through SPLIT, MUL, ADD, EXP), `unet` (encoder MAX_POOL_2D, decoder TRANSPOSE_CONV or
RESIZE_BILINEAR with skip CONCATENATION), `fp16` (float16 constants DEQUANTIZEd into CONV_2D,
DEPTHWISE_CONV_2D and FULLY_CONNECTED weights and biases), `embedding` (GATHER or
EMBEDDING_LOOKUP, an int8 table now and then, MEAN over the sequence, L2_NORMALIZATION),
`svdf` (SVDF stacks, float or hybrid, rank 1-2, a batch), `conv3d` (CONV_3D on clips),
`pooling` (MAX / AVERAGE / L2 pools at SAME and VALID, strides 1-3, fused activations,
REDUCE_MAX / SUM / MEAN heads), `uint8` (legacy uint8 quantized CNNs: CONV_2D,
DEPTHWISE_CONV_2D, pools, ADD, FULLY_CONNECTED, SOFTMAX), `batched` (batches of 3-16 through
dense or conv stacks to ARG_MAX / ARG_MIN), `retrieval` (L2_NORMALIZATION, UNPACK,
SQUARED_DIFFERENCE against centroids, SUM, PACK, TOPK_V2) and `upsample` (RESIZE_BILINEAR with
align_corners / half_pixel_centers, RESIZE_NEAREST_NEIGHBOR, DEPTH_TO_SPACE pixel shuffles)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from tests.litert_held15_cases import _Draw

SEED_BASE = 18_000
PER_FAMILY = 5
Q8 = quantization(0.05, -3)
QU8 = quantization(0.05, 128)


def _ints(g: SubgraphBuilder, name: str, values: list[int]) -> int:
    return g.add_constant(name, np.array(values, dtype=np.int32))


_KINDS = {"float": ("FLOAT32", None), "int8": ("INT8", Q8), "uint8": ("UINT8", QU8)}


def _like(g: SubgraphBuilder, name: str, shape: list[int], kind: str) -> int:
    dtype, spec = _KINDS[kind]
    return g.add_tensor(name, shape, dtype, quantization=spec)


def _kind(g: SubgraphBuilder, x: int) -> str:
    from arenalens.tflite.builder import _type_code

    code = g.tensors[x].type_code
    return next(k for k, (dtype, _) in _KINDS.items() if _type_code(dtype) == code)


def _weights(
    d: _Draw, g: SubgraphBuilder, name: str, shape: tuple[int, ...], *, axis: int, kind: str
) -> tuple[int, int]:
    """A convolution's filter and bias for an input of `kind` (int8: per channel on `axis`,
    uint8: per tensor around 128; biases at input x filter scale)."""
    outs = shape[axis]
    if kind == "float":
        return g.add_constant("w" + name, d.floats(*shape)), g.add_constant(
            "b" + name, d.floats(outs)
        )
    if kind == "uint8":
        scale = float(d.np.uniform(0.005, 0.02))
        data = d.np.integers(0, 256, size=shape).astype(np.uint8)
        zero = d.rng.choice((120, 128, 133))
        w = g.add_constant("w" + name, data, "UINT8", quantization=quantization(scale, zero))
        bias = d.np.integers(-300, 300, outs).astype(np.int32)
        return w, g.add_constant("b" + name, bias, quantization=quantization(scale * 0.05, 0))
    scales = d.np.uniform(0.005, 0.02, outs)
    w = g.add_constant(
        "w" + name, d.int8(*shape), "INT8", quantization=quantization(scales, 0, axis=axis)
    )
    bias = d.np.integers(-300, 300, outs).astype(np.int32)
    return w, g.add_constant("b" + name, bias, quantization=quantization(scales * 0.05, 0))


def _conv(
    d: _Draw,
    g: SubgraphBuilder,
    x: int,
    geometry: tuple[int, int, int],
    name: str,
    *,
    depthwise: bool = False,
    padding: str = "",
    activation: str = "",
) -> int:
    """A CONV_2D (or DEPTHWISE_CONV_2D) of (filters, kernel, stride) on x of any kind."""
    filters, kernel, stride = geometry
    batch, height, width, channels = g.shape(x)
    kind = _kind(g, x)
    if not padding:
        padding = d.rng.choice(("SAME", "VALID")) if min(height, width) > kernel else "SAME"
    outs = channels if depthwise else filters
    shape = (1, kernel, kernel, outs) if depthwise else (outs, kernel, kernel, channels)
    w, b = _weights(d, g, name, shape, axis=3 if depthwise else 0, kind=kind)

    def size(n: int) -> int:
        return -(-n // stride) if padding == "SAME" else (n - kernel) // stride + 1

    out = _like(g, name, [batch, size(height), size(width), outs], kind)
    options: dict[str, object] = {
        "padding": padding,
        "stride_w": stride,
        "stride_h": stride,
        "fused_activation_function": activation or d.rng.choice(("NONE", "RELU", "RELU6")),
    }
    if depthwise:
        options["depth_multiplier"] = 1
    g.add_operator(
        "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [x, w, b], [out], options=options
    )
    return out


def _dense(
    d: _Draw, g: SubgraphBuilder, x: int, units: int, name: str, *, act: str = "NONE"
) -> int:
    """A FULLY_CONNECTED of x (float, int8 or uint8, per-tensor filter) to [rows, units]."""
    shape = g.shape(x)
    depth, rows = shape[-1], int(np.prod(shape[:-1]))
    kind = _kind(g, x)
    if kind == "float":
        w = g.add_constant("w" + name, d.floats(units, depth, scale=1 / np.sqrt(depth)))
        b = g.add_constant("b" + name, d.floats(units)) if d.rng.random() < 0.8 else -1
    elif kind == "uint8":
        w, b = _weights(d, g, name, (units, depth), axis=0, kind=kind)
    else:  # int8, per tensor: one scale for the bias-scale check (kernel_util.cc)
        scale = float(d.np.uniform(0.005, 0.02))
        w = g.add_constant(
            "w" + name, d.int8(units, depth), "INT8", quantization=quantization(scale)
        )
        bias = d.np.integers(-100, 100, units).astype(np.int32)
        b = g.add_constant("b" + name, bias, quantization=quantization(scale * 0.05, 0))
    out = _like(g, name, [rows, units], kind)
    options = {"fused_activation_function": act}
    g.add_operator("FULLY_CONNECTED", [x, w, b], [out], options=options)
    return out


def _unary(g: SubgraphBuilder, opcode: str, x: int, name: str) -> int:
    """A shape-keeping unary op; an integer LOGISTIC's output at 1/256 as its kernel asks."""
    kind = _kind(g, x)
    if opcode == "LOGISTIC" and kind != "float":
        zero = -128 if kind == "int8" else 0
        dtype = _KINDS[kind][0]
        out = g.add_tensor(name, g.shape(x), dtype, quantization=quantization(1 / 256, zero))
    else:
        out = _like(g, name, list(g.shape(x)), kind)
    g.add_operator(opcode, [x], [out])
    return out


def _binary(g: SubgraphBuilder, opcode: str, a: int, b: int, name: str) -> int:
    shape = np.broadcast_shapes(g.shape(a), g.shape(b))
    out = _like(g, name, list(shape), _kind(g, a))
    g.add_operator(opcode, [a, b], [out])
    return out


def _reduce(
    g: SubgraphBuilder, opcode: str, x: int, axes: list[int], name: str, *, keep: bool = False
) -> int:
    shape = g.shape(x)
    kept = [1 if i in axes else n for i, n in enumerate(shape)] if keep else None
    dims = kept or [n for i, n in enumerate(shape) if i not in axes]
    out = _like(g, name, dims, _kind(g, x))
    g.add_operator(opcode, [x, _ints(g, name + "ax", axes)], [out], options={"keep_dims": keep})
    return out


def _reshape(g: SubgraphBuilder, x: int, dims: list[int], name: str) -> int:
    out = _like(g, name, dims, _kind(g, x))
    g.add_operator("RESHAPE", [x, _ints(g, name + "s", dims)], [out])
    return out


def _softmax(g: SubgraphBuilder, x: int, name: str) -> int:
    kind = _kind(g, x)
    if kind == "float":
        out = g.add_tensor(name, g.shape(x))
    else:
        zero = -128 if kind == "int8" else 0
        out = g.add_tensor(
            name, g.shape(x), _KINDS[kind][0], quantization=quantization(1 / 256, zero)
        )
    g.add_operator("SOFTMAX", [x], [out], options={"beta": 1.0})
    return out


def _pool(
    d: _Draw,
    g: SubgraphBuilder,
    x: int,
    name: str,
    *,
    opcode: str = "",
    size: int = 0,
    stride: int = 0,
) -> int:
    batch, height, width, channels = g.shape(x)
    opcode = opcode or d.rng.choice(("MAX_POOL_2D", "AVERAGE_POOL_2D"))
    size = size or d.rng.choice((2, 3, 5))
    stride = stride or (d.rng.choice((1, 2, 3)) if size > 1 else 1)
    padding = d.rng.choice(("SAME", "VALID")) if min(height, width) >= size else "SAME"

    def out(n: int) -> int:
        return (n - size) // stride + 1 if padding == "VALID" else -(-n // stride)

    pooled = _like(g, name, [batch, out(height), out(width), channels], _kind(g, x))
    options = {
        "padding": padding,
        "stride_w": stride,
        "stride_h": stride,
        "filter_width": size,
        "filter_height": size,
        "fused_activation_function": d.rng.choice(("NONE", "NONE", "RELU", "RELU6")),
    }
    g.add_operator(opcode, [x], [pooled], options=options)
    return pooled


def _input(d: _Draw, g: SubgraphBuilder, shape: list[int], kind: str) -> tuple[int, int]:
    """The model input (float) and what the graph computes on (QUANTIZEd for int8 now and
    then, as the converter leaves a float interface)."""
    if kind == "int8" and d.rng.random() < 0.4:
        x = g.add_tensor("x", shape)
        q = _like(g, "xq", shape, "int8")
        g.add_operator("QUANTIZE", [x], [q])
        return x, q
    x = _like(g, "x", shape, kind)
    return x, x


def se_block(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    kind = "int8" if d.rng.random() < 0.5 else "float"
    side = d.rng.choice((24, 32, 40, 56))
    x, current = _input(d, g, [1, side, side, 3], kind)
    current = _conv(d, g, current, (d.rng.choice((8, 16)), 3, 2), "stem", padding="SAME")
    current = _unary(g, "HARD_SWISH", current, "stem_hs")
    for block in range(d.rng.randint(1, 3)):
        chans = g.shape(current)[3]
        wide = chans * d.rng.choice((3, 4, 6))
        tag = f"b{block}"
        e = _conv(d, g, current, (wide, 1, 1), tag + "e", activation="NONE")
        e = _unary(g, d.rng.choice(("HARD_SWISH", "RELU6", "RELU")), e, tag + "ea")
        geometry = (0, d.rng.choice((3, 5)), d.rng.choice((1, 2)))
        dw = _conv(d, g, e, geometry, tag + "d", depthwise=True, padding="SAME")
        if d.rng.random() < 0.8:
            squeezed = _reduce(g, "MEAN", dw, [1, 2], tag + "sq", keep=True)
            reduced = _conv(
                d, g, squeezed, (max(2, wide // 4), 1, 1), tag + "sr", activation="RELU"
            )
            expanded = _conv(d, g, reduced, (wide, 1, 1), tag + "sx", activation="NONE")
            gate = _unary(g, d.rng.choice(("LOGISTIC", "HARD_SWISH")), expanded, tag + "sg")
            dw = _binary(g, "MUL", dw, gate, tag + "sm")
        outs = chans if d.rng.random() < 0.6 else d.rng.choice((12, 24))
        projected = _conv(d, g, dw, (outs, 1, 1), tag + "p", activation="NONE")
        if g.shape(projected) == g.shape(current):
            projected = _binary(g, "ADD", current, projected, tag + "r")
        current = projected
    pooled = _reduce(g, "MEAN", current, [1, 2], "gap")
    logits = _dense(d, g, pooled, d.rng.choice((5, 10, 21)), "head")
    return [x], [_softmax(g, logits, "probs") if d.rng.random() < 0.6 else logits]


def detection(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    kind = "int8" if d.rng.random() < 0.5 else "float"
    side = d.rng.choice((32, 40, 48, 64))
    x, current = _input(d, g, [1, side, side, 3], kind)
    levels = []
    for n, filters in enumerate((8, 16, d.rng.choice((24, 32)))):
        current = _conv(d, g, current, (filters, 3, 2), f"f{n}", padding="SAME")
        levels.append(current)
    features = d.rng.choice((8, 16))
    top = _conv(d, g, levels[2], (features, 1, 1), "lat2", activation="NONE")
    pyramid = [top]
    if d.rng.random() < 0.7:
        lateral = _conv(d, g, levels[1], (features, 1, 1), "lat1", activation="NONE")
        up = _like(g, "up", list(g.shape(lateral)), kind)
        size = _ints(g, "upsize", list(g.shape(lateral)[1:3]))
        options = {"align_corners": False, "half_pixel_centers": d.rng.random() < 0.5}
        g.add_operator("RESIZE_NEAREST_NEIGHBOR", [top, size], [up], options=options)
        pyramid.insert(0, _binary(g, "ADD", lateral, up, "p1"))
    anchors, classes = d.rng.choice((2, 3, 6)), d.rng.choice((3, 5, 91))
    boxes, scores = [], []
    for n, level in enumerate(pyramid):
        _, h, w, _ = g.shape(level)
        count = h * w * anchors
        box = _conv(d, g, level, (anchors * 4, 3, 1), f"box{n}", padding="SAME", activation="NONE")
        cls = _conv(
            d, g, level, (anchors * classes, 3, 1), f"cls{n}", padding="SAME", activation="NONE"
        )
        boxes.append(_reshape(g, box, [1, count, 4], f"boxr{n}"))
        scores.append(_reshape(g, cls, [1, count, classes], f"clsr{n}"))
    total = sum(g.shape(b)[1] for b in boxes)
    joined = []
    for name, parts, width in (("boxes", boxes, 4), ("scores", scores, classes)):
        out = _like(g, name, [1, total, width], kind)
        if len(parts) > 1:
            g.add_operator("CONCATENATION", parts, [out], options={"axis": 1})
        else:
            out = parts[0]
        if kind != "float":
            real = g.add_tensor(name + "f", [1, total, width])
            g.add_operator("DEQUANTIZE", [out], [real])
            out = real
        joined.append(out)
    box, score = joined
    score = _unary(g, "LOGISTIC", score, "sig")
    if d.rng.random() < 0.7:
        centre, extent = g.add_tensor("xy", [1, total, 2]), g.add_tensor("wh", [1, total, 2])
        g.add_operator(
            "SPLIT", [_ints(g, "axis", [2]), box], [centre, extent], options={"num_splits": 2}
        )
        priors = g.add_constant("anchors_wh", d.np.uniform(0.05, 0.5, (total, 2)).astype("f4"))
        origins = g.add_constant("anchors_xy", d.np.uniform(0, 1, (total, 2)).astype("f4"))
        centre = _binary(g, "ADD", _binary(g, "MUL", centre, priors, "xys"), origins, "xyo")
        extent = _binary(g, "MUL", _unary(g, "EXP", extent, "whe"), priors, "whs")
        box = g.add_tensor("decoded", [1, total, 4])
        g.add_operator("CONCATENATION", [centre, extent], [box], options={"axis": 2})
    return [x], [box, score]


def unet(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    kind = "int8" if d.rng.random() < 0.5 else "float"
    side, base = d.rng.choice((16, 24, 32, 40)), d.rng.choice((4, 6, 8, 12))
    x, current = _input(d, g, [1, side, side, d.rng.choice((1, 3))], kind)
    skips = []
    depth = d.rng.choice((1, 2))
    for level in range(depth):
        current = _conv(d, g, current, (base << level, 3, 1), f"e{level}", padding="SAME")
        skips.append(current)
        current = _pool(d, g, current, f"down{level}", opcode="MAX_POOL_2D", size=2, stride=2)
    current = _conv(d, g, current, (base << depth, 3, 1), "mid", padding="SAME")
    for level in reversed(range(depth)):
        skip = skips[level]
        filters = base << level
        shape = [1, *g.shape(skip)[1:3], filters]
        if d.rng.random() < 0.6:
            kernel = d.rng.choice((2, 3))
            chans = g.shape(current)[3]
            w, b = _weights(d, g, f"t{level}", (filters, kernel, kernel, chans), axis=0, kind=kind)
            up = _like(g, f"up{level}", shape, kind)
            inputs = [_ints(g, f"ts{level}", shape), w, current]
            options = {"padding": "SAME", "stride_w": 2, "stride_h": 2}
            g.add_operator("TRANSPOSE_CONV", [*inputs, b] if d.rng.random() < 0.5 else inputs,
                           [up], options=options)  # fmt: skip
        else:
            resized = _like(g, f"rs{level}", [1, *shape[1:3], g.shape(current)[3]], kind)
            corners = d.rng.random() < 0.5
            options = {"align_corners": corners, "half_pixel_centers": not corners}
            g.add_operator(
                "RESIZE_BILINEAR",
                [current, _ints(g, f"rz{level}", shape[1:3])],
                [resized],
                options=options,
            )
            up = _conv(d, g, resized, (filters, 1, 1), f"upc{level}")
        joined = _like(g, f"cat{level}", [*shape[:3], 2 * filters], kind)
        g.add_operator("CONCATENATION", [up, skip], [joined], options={"axis": 3})
        current = _conv(d, g, joined, (filters, 3, 1), f"d{level}", padding="SAME")
    classes = d.rng.choice((1, 2, 4))
    logits = _conv(d, g, current, (classes, 1, 1), "out", activation="NONE")
    return [x], [
        _unary(g, "LOGISTIC", logits, "mask") if classes == 1 else _softmax(g, logits, "p")
    ]


def _fp16(g: SubgraphBuilder, name: str, values: np.ndarray) -> int:
    """A float16 constant DEQUANTIZEd to float32 (the converter's float16 quantization)."""
    half = g.add_constant(name + "16", values.astype(np.float16))
    out = g.add_tensor(name, list(values.shape))
    g.add_operator("DEQUANTIZE", [half], [out])
    return out


def fp16(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    if d.rng.random() < 0.5:
        width = d.rng.choice((40, 96, 200))
        x = g.add_tensor("x", [d.rng.choice((1, 2)), width])
        current = x
    else:
        side = d.rng.choice((12, 20, 28))
        x = g.add_tensor("x", [1, side, side, d.rng.choice((1, 3))])
        current = x
        for n in range(d.rng.randint(1, 3)):
            depthwise = n > 0 and d.rng.random() < 0.5
            chans, kernel = g.shape(current)[3], d.rng.choice((1, 3))
            outs = chans if depthwise else d.rng.choice((8, 16, 24))
            shape = (1, kernel, kernel, outs) if depthwise else (outs, kernel, kernel, chans)
            w = _fp16(g, f"w{n}", d.floats(*shape))
            b = _fp16(g, f"b{n}", d.floats(outs)) if d.rng.random() < 0.6 else -1
            stride = d.rng.choice((1, 2))
            h, wd = (-(-n // stride) for n in g.shape(current)[1:3])
            out = g.add_tensor(f"c{n}", [1, h, wd, outs])
            options: dict[str, object] = {
                "padding": "SAME",
                "stride_w": stride,
                "stride_h": stride,
                "fused_activation_function": "RELU6",
            }
            if depthwise:
                options["depth_multiplier"] = 1
            opcode = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
            g.add_operator(opcode, [current, w, b], [out], options=options)
            current = out
        current = _reduce(g, "MEAN", current, [1, 2], "gap")
    for n in range(d.rng.randint(1, 3)):
        units, depth = d.rng.choice((10, 32, 64)), g.shape(current)[1]
        w = _fp16(g, f"fw{n}", d.floats(units, depth, scale=1 / np.sqrt(depth)))
        b = _fp16(g, f"fb{n}", d.floats(units)) if d.rng.random() < 0.7 else -1
        out = g.add_tensor(f"fc{n}", [g.shape(current)[0], units])
        g.add_operator(
            "FULLY_CONNECTED", [current, w, b], [out], options={"fused_activation_function": "RELU"}
        )
        current = out
    return [x], [current]


def embedding(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    batch, steps = d.rng.choice((1, 2, 4)), d.rng.choice((4, 9, 16, 32))
    vocab, dim = d.rng.choice((50, 300, 1000)), d.rng.choice((8, 24, 64))
    if d.rng.random() < 0.5:
        ids = g.add_tensor("ids", [batch, steps], "INT32")
        table = g.add_constant("table", d.floats(vocab, dim))
        rows = g.add_tensor("rows", [batch, steps, dim])
        g.add_operator("GATHER", [table, ids], [rows], options={"axis": 0})
    else:
        ids = g.add_tensor("ids", [batch * steps], "INT32")
        if d.rng.random() < 0.4:  # an int8 table: EmbeddingLookup's hybrid Eval
            table = g.add_constant(
                "table", d.int8(vocab, dim), "INT8", quantization=quantization(0.02, 0)
            )
        else:
            table = g.add_constant("table", d.floats(vocab, dim))
        flat = g.add_tensor("flat", [batch * steps, dim])
        g.add_operator("EMBEDDING_LOOKUP", [ids, table], [flat])
        rows = _reshape(g, flat, [batch, steps, dim], "rows3")
    if d.rng.random() < 0.6:
        current = _reduce(g, "MEAN", rows, [1], "avg")
    else:
        current = _reshape(g, rows, [batch, steps * dim], "concat")
    current = _dense(d, g, current, d.rng.choice((16, 32, 48)), "h", act="RELU")
    current = _dense(d, g, current, d.rng.choice((4, 16)), "out")
    if d.rng.random() < 0.5:
        normal = g.add_tensor("normal", g.shape(current))
        g.add_operator("L2_NORMALIZATION", [current], [normal])
        return [ids], [normal]
    return [ids], [_softmax(g, current, "probs")]


def svdf(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    batch, features = d.rng.choice((1, 1, 2, 3)), d.rng.choice((16, 40, 64))
    hybrid = d.rng.random() < 0.5
    x = g.add_tensor("x", [batch, features])
    current = x
    for n in range(d.rng.randint(1, 3)):
        rank, units = d.rng.choice((1, 2)), d.rng.choice((8, 16, 32))
        memory, depth = d.rng.choice((4, 8, 12)), g.shape(current)[1]
        filters = units * rank
        if hybrid:
            feature = g.add_constant(
                f"wf{n}", d.int8(filters, depth), "INT8", quantization=quantization(0.02, 0)
            )
            time = g.add_constant(
                f"wt{n}", d.int8(filters, memory), "INT8", quantization=quantization(0.02, 0)
            )
        else:
            feature = g.add_constant(f"wf{n}", d.floats(filters, depth))
            time = g.add_constant(f"wt{n}", d.floats(filters, memory))
        bias = g.add_constant(f"b{n}", d.floats(units)) if d.rng.random() < 0.7 else -1
        state = g.add_tensor(f"state{n}", [batch, memory * filters], is_variable=True)
        out = g.add_tensor(f"s{n}", [batch, units])
        options = {
            "rank": rank,
            "fused_activation_function": d.rng.choice(("NONE", "RELU")),
            "asymmetric_quantize_inputs": d.rng.random() < 0.5,
        }
        g.add_operator("SVDF", [current, feature, time, bias, state], [out], options=options)
        current = out
    logits = _dense(d, g, current, d.rng.choice((4, 12)), "head")
    return [x], [_softmax(g, logits, "probs")]


def conv3d(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    shape = [1, d.rng.choice((4, 6, 8)), d.rng.choice((8, 12, 16)), 0, d.rng.choice((1, 3))]
    shape[3] = shape[2]
    x = g.add_tensor("x", shape)
    current = x
    for n in range(d.rng.randint(1, 2)):
        _, depth, height, width, chans = g.shape(current)
        kernel, stride = d.rng.choice((1, 2, 3)), d.rng.choice((1, 1, 2))
        padding = d.rng.choice(("SAME", "VALID")) if depth > kernel else "SAME"
        outs = d.rng.choice((4, 8, 16))

        def size(m: int, kernel: int = kernel, stride: int = stride, padding: str = padding) -> int:
            return -(-m // stride) if padding == "SAME" else (m - kernel) // stride + 1

        w = g.add_constant(f"w{n}", d.floats(kernel, kernel, kernel, chans, outs))
        inputs = [current, w]
        if d.rng.random() < 0.6:
            inputs.append(g.add_constant(f"b{n}", d.floats(outs)))
        out = g.add_tensor(f"c{n}", [1, size(depth), size(height), size(width), outs])
        options = {
            "padding": padding,
            "stride_d": stride,
            "stride_w": stride,
            "stride_h": stride,
            "dilation_dfactor": 1,
            "dilation_wfactor": 1,
            "dilation_hfactor": 1,
            "fused_activation_function": d.rng.choice(("NONE", "RELU")),
        }
        g.add_operator("CONV_3D", inputs, [out], options=options)
        current = out
    pooled = _reduce(g, "MEAN", current, [1, 2, 3], "gap")
    return [x], [_dense(d, g, pooled, d.rng.choice((3, 10)), "head")]


def pooling(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    kind = "int8" if d.rng.random() < 0.5 else "float"
    batch, side = d.rng.choice((1, 1, 2)), d.rng.choice((15, 24, 33, 48))
    x, current = _input(d, g, [batch, side, side, d.rng.choice((3, 8, 16))], kind)
    if d.rng.random() < 0.5:
        current = _conv(d, g, current, (d.rng.choice((8, 12)), 3, 1), "c0")
    for n in range(d.rng.randint(2, 4)):
        if min(g.shape(current)[1:3]) < 2:
            break
        opcodes = ("MAX_POOL_2D", "AVERAGE_POOL_2D") + (("L2_POOL_2D",) if kind == "float" else ())
        size = min(d.rng.choice((2, 3, 5)), *g.shape(current)[1:3])
        current = _pool(d, g, current, f"p{n}", opcode=d.rng.choice(opcodes), size=size)
    opcode = d.rng.choice(("REDUCE_MAX", "SUM", "MEAN"))
    return [x], [_reduce(g, opcode, current, [1, 2], "head", keep=d.rng.random() < 0.3)]


def uint8(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    side = d.rng.choice((16, 24, 33, 48))
    x = g.add_tensor("x", [1, side, side, 3], "UINT8", quantization=QU8)
    current = _conv(d, g, x, (d.rng.choice((8, 16)), 3, 2), "stem")
    for n in range(d.rng.randint(1, 3)):
        dw = _conv(d, g, current, (0, 3, d.rng.choice((1, 2))), f"d{n}", depthwise=True)
        pw = _conv(d, g, dw, (d.rng.choice((16, 24, 32)), 1, 1), f"p{n}")
        if g.shape(pw) == g.shape(current) and d.rng.random() < 0.7:
            pw = _binary(g, "ADD", current, pw, f"r{n}")
        current = pw
    if min(g.shape(current)[1:3]) >= 2 and d.rng.random() < 0.5:
        current = _pool(d, g, current, "pool", size=2)
    _, h, w, c = g.shape(current)
    pooled = _like(g, "gap", [1, 1, 1, c], "uint8")
    options = {"padding": "VALID", "stride_w": 1, "stride_h": 1, "filter_width": w}
    options["filter_height"] = h
    g.add_operator("AVERAGE_POOL_2D", [current], [pooled], options=options)
    flat = _reshape(g, pooled, [1, c], "flat")
    logits = _dense(d, g, flat, d.rng.choice((5, 10, 32)), "head")
    probs = _softmax(g, logits, "probs")
    if d.rng.random() < 0.4:
        real = g.add_tensor("y", g.shape(probs))
        g.add_operator("DEQUANTIZE", [probs], [real])
        probs = real
    return [x], [probs]


def batched(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    kind = "int8" if d.rng.random() < 0.5 else "float"
    batch = d.rng.choice((3, 4, 8, 16))
    if d.rng.random() < 0.5:
        x, current = _input(d, g, [batch, d.rng.choice((32, 100, 256))], kind)
        for n in range(d.rng.randint(1, 3)):
            current = _dense(d, g, current, d.rng.choice((16, 40, 64)), f"fc{n}", act="RELU")
    else:
        side = d.rng.choice((8, 12, 20))
        x, current = _input(d, g, [batch, side, side, d.rng.choice((1, 3))], kind)
        for n in range(d.rng.randint(1, 2)):
            current = _conv(
                d, g, current, (d.rng.choice((8, 16)), 3, d.rng.choice((1, 2))), f"c{n}"
            )
        current = _reduce(g, "MEAN", current, [1, 2], "gap")
    logits = _dense(d, g, current, d.rng.choice((2, 10, 100)), "head")
    arg = d.rng.choice(("ARG_MAX", "ARG_MIN"))
    wide = d.rng.random() < 0.5
    index = g.add_tensor("class", [batch], "INT64" if wide else "INT32")
    g.add_operator(
        arg, [logits, _ints(g, "axis", [1])], [index], options={"output_type": 4 if wide else 2}
    )
    return [x], [index, logits] if d.rng.random() < 0.5 else [index]


def retrieval(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    batch, width = d.rng.choice((1, 2, 4)), d.rng.choice((16, 40, 64))
    dim, centroids = d.rng.choice((8, 16, 32)), d.rng.choice((10, 50, 200))
    x = g.add_tensor("x", [batch, width])
    embedded = _dense(d, g, x, dim, "proj")
    normal = g.add_tensor("normal", [batch, dim])
    g.add_operator("L2_NORMALIZATION", [embedded], [normal])
    rows = [g.add_tensor(f"row{n}", [dim]) for n in range(batch)]
    g.add_operator("UNPACK", [normal], rows, options={"num": batch, "axis": 0})
    bank = g.add_constant("bank", d.floats(centroids, dim))
    distances = []
    for n, row in enumerate(rows):
        squared = g.add_tensor(f"sq{n}", [centroids, dim])
        g.add_operator("SQUARED_DIFFERENCE", [bank, row], [squared])
        distances.append(_reduce(g, "SUM", squared, [1], f"dist{n}"))
    packed = g.add_tensor("distances", [batch, centroids])
    g.add_operator("PACK", distances, [packed], options={"values_count": batch, "axis": 0})
    if d.rng.random() < 0.3:
        index = g.add_tensor("nearest", [batch], "INT32")
        g.add_operator(
            "ARG_MIN", [packed, _ints(g, "axis", [1])], [index], options={"output_type": 2}
        )
        return [x], [index]
    negated = _unary(g, "NEG", packed, "neg")
    k = d.rng.choice((1, 3, 5))
    values = g.add_tensor("top", [batch, k])
    indices = g.add_tensor("topi", [batch, k], "INT32")
    g.add_operator("TOPK_V2", [negated, _ints(g, "k", [k])], [values, indices])
    return [x], [values, indices]


def upsample(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    kind = "int8" if d.rng.random() < 0.5 else "float"
    side, chans = d.rng.choice((8, 12, 17, 24)), d.rng.choice((1, 3))
    x, current = _input(d, g, [1, side, side, chans], kind)
    current = _conv(d, g, current, (d.rng.choice((8, 16)), 3, 1), "feat", padding="SAME")
    for n in range(d.rng.randint(1, 2)):
        step = d.rng.choice(("bilinear", "nearest", "shuffle"))
        _, h, w, c = g.shape(current)
        if step == "shuffle":
            block = 2
            wide = _conv(d, g, current, (c * block * block, 3, 1), f"s{n}", padding="SAME")
            current = _like(g, f"d2s{n}", [1, h * block, w * block, c], kind)
            g.add_operator("DEPTH_TO_SPACE", [wide], [current], options={"block_size": block})
            continue
        factor = d.rng.choice((2, 3)) if step == "nearest" else d.rng.choice((2, 1.5))
        size = [int(h * factor), int(w * factor)]
        resized = _like(g, f"r{n}", [1, *size, c], kind)
        corners = d.rng.random() < 0.4
        options = {
            "align_corners": corners,
            "half_pixel_centers": not corners and d.rng.random() < 0.7,
        }
        opcode = "RESIZE_BILINEAR" if step == "bilinear" else "RESIZE_NEAREST_NEIGHBOR"
        g.add_operator(opcode, [current, _ints(g, f"rs{n}", size)], [resized], options=options)
        current = _conv(d, g, resized, (c, 3, 1), f"c{n}", padding="SAME")
    return [x], [_conv(d, g, current, (chans, 3, 1), "out", padding="SAME", activation="NONE")]


_BODIES: dict[str, Callable[[_Draw, SubgraphBuilder], tuple[list[int], list[int]]]] = {
    "se_block": se_block,
    "detection": detection,
    "unet": unet,
    "fp16": fp16,
    "embedding": embedding,
    "svdf": svdf,
    "conv3d": conv3d,
    "pooling": pooling,
    "uint8": uint8,
    "batched": batched,
    "retrieval": retrieval,
    "upsample": upsample,
}
FAMILIES = tuple(_BODIES)


def held18_case(family: str, n: int) -> bytes:
    """A held18 model's bytes: family and its number n (1-based), seed SEED_BASE + 100 x the
    family's place + n."""
    d = _Draw(SEED_BASE + 100 * FAMILIES.index(family) + n)
    model = ModelBuilder(description=f"arenalens: held18 {family}")
    g = model.add_subgraph("main")
    inputs, outputs = _BODIES[family](d, g)
    g.set_inputs(inputs)
    g.set_outputs(outputs)
    return model.build()


NAMES = tuple(
    (f"held18_{family}_{n}", family, n) for family in FAMILIES for n in range(1, PER_FAMILY + 1)
)
