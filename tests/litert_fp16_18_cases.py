"""Float16 weights under XNNPACK, drawn after its skipped DEQUANTIZEs were replayed
(`fp16x_<n>`, seeds from 18,600; runtimes/litert/xnnpack_float16.py): float16 filters and biases
DEQUANTIZEd into CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (the DEQUANTIZEs the delegate
skips), a float32 bias next to a float16 filter, one float16 weight DEQUANTIZEd once and read by
two FULLY_CONNECTEDs, larger FULLY_CONNECTED weights (the f32_f16 creation's float32 copies,
8-96 KB), and a float16 constant that an ADD reads too (not skipped: the delegate keeps a float32
copy). `python -m tests.litert_heap_measure --cache tests/data/litert_heap_held18.json --only
fp16x_` measures them on the wheel (the EPYC)."""

from __future__ import annotations

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder
from tests.litert_held15_cases import _Draw
from tests.litert_held18_cases import _fp16, _ints

SEED_BASE = 18_600
COUNT = 6
NAMES = tuple((f"fp16x_{n}", "fp16x", n) for n in range(1, COUNT + 1))


def _bias(d: _Draw, g: SubgraphBuilder, name: str, outs: int) -> int:
    """A float16 bias DEQUANTIZEd, or a float32 one (the delegate takes both with a float16
    filter: CheckFilterAndBiasTypes)."""
    if d.rng.random() < 0.6:
        return _fp16(g, name, d.floats(outs))
    return g.add_constant(name, d.floats(outs))


def _convolutions(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    side = d.rng.choice((10, 16, 24))
    x = g.add_tensor("x", [1, side, side, d.rng.choice((2, 3, 4))])
    current = x
    for n in range(d.rng.randint(2, 4)):
        chans = g.shape(current)[3]
        depthwise = n > 0 and d.rng.random() < 0.4
        kernel = d.rng.choice((1, 3, 5))
        outs = chans if depthwise else d.rng.choice((8, 16, 32, 48))
        shape = (1, kernel, kernel, outs) if depthwise else (outs, kernel, kernel, chans)
        w = _fp16(g, f"w{n}", d.floats(*shape))
        b = _bias(d, g, f"b{n}", outs)
        stride = d.rng.choice((1, 2))
        h, wd = (-(-size // stride) for size in g.shape(current)[1:3])
        out = g.add_tensor(f"c{n}", [1, h, wd, outs])
        options: dict[str, object] = {
            "padding": "SAME",
            "stride_w": stride,
            "stride_h": stride,
            "fused_activation_function": d.rng.choice(("RELU", "RELU6", "NONE")),
        }
        if depthwise:
            options["depth_multiplier"] = 1
        opcode = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
        g.add_operator(opcode, [current, w, b], [out], options=options)
        current = out
    pooled = g.add_tensor("gap", [1, g.shape(current)[3]])
    g.add_operator(
        "MEAN", [current, _ints(g, "ax", [1, 2])], [pooled], options={"keep_dims": False}
    )
    return [x], [pooled]


def _dense(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    batch, depth = d.rng.choice((1, 2, 4)), d.rng.choice((64, 128, 192))
    x = g.add_tensor("x", [batch, depth])
    current = x
    for n in range(d.rng.randint(2, 3)):
        units = d.rng.choice((32, 96, 128))
        w = _fp16(g, f"fw{n}", d.floats(units, g.shape(current)[1], scale=0.05))
        b = _bias(d, g, f"fb{n}", units) if d.rng.random() < 0.8 else -1
        out = g.add_tensor(f"fc{n}", [batch, units])
        g.add_operator(
            "FULLY_CONNECTED", [current, w, b], [out], options={"fused_activation_function": "RELU"}
        )
        current = out
    return [x], [current]


def _shared(d: _Draw, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
    """One float16 weight DEQUANTIZEd once, read by two FULLY_CONNECTEDs; and, now and then, a
    float16 constant an ADD reads too (a DEQUANTIZE the delegate does not skip)."""
    depth, units = d.rng.choice((32, 48, 80)), d.rng.choice((16, 40))
    a, c = g.add_tensor("a", [1, depth]), g.add_tensor("c", [1, depth])
    w = _fp16(g, "w", d.floats(units, depth, scale=0.1))
    b = _fp16(g, "b", d.floats(units))
    ya, yc = g.add_tensor("ya", [1, units]), g.add_tensor("yc", [1, units])
    for x, y in ((a, ya), (c, yc)):
        g.add_operator(
            "FULLY_CONNECTED", [x, w, b], [y], options={"fused_activation_function": "NONE"}
        )
    out = g.add_tensor("sum", [1, units])
    g.add_operator("ADD", [ya, yc], [out], options={"fused_activation_function": "NONE"})
    if d.rng.random() < 0.5:
        shift = _fp16(g, "shift", d.floats(1, units))
        shifted = g.add_tensor("shifted", [1, units])
        g.add_operator(
            "ADD", [out, shift], [shifted], options={"fused_activation_function": "NONE"}
        )
        out = shifted
    return [a, c], [out]


_BODIES = (_convolutions, _dense, _shared, _convolutions, _dense, _shared)


def fp16x_case(n: int) -> bytes:
    """The n-th model (1-based), seed SEED_BASE + n."""
    d = _Draw(SEED_BASE + n)
    model = ModelBuilder(description="arenalens: fp16x")
    g = model.add_subgraph("main")
    inputs, outputs = _BODIES[n - 1](d, g)
    g.set_inputs(inputs)
    g.set_outputs(outputs)
    return model.build()
