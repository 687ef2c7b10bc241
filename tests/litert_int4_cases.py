"""Held-out int4 per-channel FULLY_CONNECTEDs on float input (`int4pc16_<n>`), drawn after
XNNPACK's qd8/qdu8-f32-qc4w path was replayed (runtimes/litert/xnnpack_qc4w.py), none fitted:
input depth and output channels (odd counts among them), rows and a batch of rows, a bias or
not, the fused activations the delegate folds (NONE, RELU, RELU6, RELU_N1_TO_1),
keep_num_dims on a rank-3 input or a flattening one, one scale for all channels or one per
channel, one to three layers with an ADD or a LOGISTIC between them, and now and then an odd
depth (the delegate leaves that one to the builtin kernel). Measured on the wheel with
`python -m tests.litert_heap_measure --cache tests/data/litert_heap_avx2.json --only
int4pc16_` (the AMD EPYC: AVX2, first Zen)."""

from __future__ import annotations

import random

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization

SEED_BASE = 16_400
COUNT = 24
NAMES = tuple(f"int4pc16_{n}" for n in range(1, COUNT + 1))
_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


def _int4_filter(
    g: SubgraphBuilder,
    rng: random.Random,
    draw: np.random.Generator,
    name: str,
    shape: tuple[int, int],
    *,
    one_scale: float,
) -> int:
    """An int4 [channels, depth] FULLY_CONNECTED filter of random nibbles (an odd depth padded
    by one nibble per row), packed two to a byte, low nibble first; one scale with chance
    `one_scale`, else one per channel; zero points 0."""
    channels, depth = shape
    nibbles = draw.integers(-8, 8, (channels, depth)).astype(np.int8)
    padded = np.pad(nibbles, ((0, 0), (0, depth % 2)))
    packed = ((padded[:, 1::2] & 0x0F) << 4 | (padded[:, 0::2] & 0x0F)).astype(np.uint8)
    if rng.random() < one_scale:
        spec = quantization(float(draw.uniform(0.01, 0.05)), 0)
    else:
        spec = quantization(draw.uniform(0.01, 0.05, channels), 0)
    return g.add_tensor(name, [channels, depth], "INT4", data=packed.tobytes(), quantization=spec)


def int4_case(n: int) -> bytes:
    """The n-th held-out model's bytes (the same for the same n)."""
    rng = random.Random(SEED_BASE + n)
    draw = np.random.default_rng(SEED_BASE + n)
    builder = ModelBuilder(description="arenalens: int4pc16")
    g = builder.add_subgraph("main")
    depth = rng.choice((8, 24, 48, 64, 96, 130, 200, 256, 384))
    if rng.random() < 0.12:
        depth += 1  # an odd depth: the builtin kernel runs that one
    rank3 = rng.random() < 0.35
    rows = rng.choice((1, 1, 2, 3, 5, 8, 16))
    shape = [rng.choice((2, 3)), rows, depth] if rank3 else [rows, depth]
    x = g.add_tensor("x", shape)
    current = x
    for layer in range(rng.choice((1, 1, 2, 3))):
        current_shape = g.shape(current)
        depth = current_shape[-1]
        channels = rng.choice((1, 3, 7, 16, 17, 33, 40, 64, 65, 100, 129, 256))
        w = _int4_filter(g, rng, draw, f"w{layer}", (channels, depth), one_scale=0.25)
        inputs = [current, w]
        if rng.random() < 0.5:
            bias = (draw.standard_normal(channels) * 0.1).astype(np.float32)
            inputs.append(g.add_constant(f"b{layer}", bias))
        keep = len(current_shape) > 2 and rng.random() < 0.6
        if keep:
            out_shape = [*current_shape[:-1], channels]
        else:
            batch = int(np.prod(current_shape[:-1]))
            out_shape = [batch, channels]
        out = g.add_tensor(f"y{layer}", out_shape)
        options = {
            "keep_num_dims": keep,
            "asymmetric_quantize_inputs": rng.random() < 0.5,
            "fused_activation_function": rng.choice(_ACTIVATIONS),
        }
        g.add_operator("FULLY_CONNECTED", inputs, [out], options=options, version=6)
        current = out
        follow = rng.random()
        if follow < 0.25:
            summed = g.add_tensor(f"s{layer}", out_shape)
            g.add_operator("ADD", [current, current], [summed])
            current = summed
        elif follow < 0.4:
            squashed = g.add_tensor(f"l{layer}", out_shape)
            g.add_operator("LOGISTIC", [current], [squashed])
            current = squashed
    g.set_inputs([x])
    g.set_outputs([current])
    return builder.build()


# Session 17 (litert-int4-17): FULLY_CONNECTEDs whose int4 filter EvalHybridDense unpacks only for
# an input that is not all zeros (odd depths, depths and units around the 4-bit kernel's limits:
# 32 columns, 4 units), drawn after heap_ways replayed the all-zero-inputs way (zero_values):
# batches, keep_num_dims, a bias or not (zeros, negative under a RELU, mixed), one scale or one
# per channel, one to three layers with an ADD, a MUL by a constant, a RELU or a LOGISTIC
# between them. Measured on the wheel with zero inputs (tests/litert_heap_measure.py, `--only
# int4z17_`) and with non-zero ones (tests/litert_heap_inputs.py).
ZERO_SEED_BASE = 17_400
ZERO_NAMES = tuple(f"int4z17_{n}" for n in range(1, 25))
_ZERO_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1", "TANH")


def int4_zero_case(n: int) -> bytes:
    """The n-th int4z17 model's bytes (the same for the same n)."""
    rng = random.Random(ZERO_SEED_BASE + n)
    draw = np.random.default_rng(ZERO_SEED_BASE + n)
    builder = ModelBuilder(description="arenalens: int4z17")
    g = builder.add_subgraph("main")
    depth = rng.choice((7, 30, 31, 32, 33, 34, 63, 64, 65, 129))
    rank3 = rng.random() < 0.35
    rows = rng.choice((1, 1, 2, 3, 4, 5))
    shape = [rng.choice((2, 3)), rows, depth] if rank3 else [rows, depth]
    current = x = g.add_tensor("x", shape)
    for layer in range(rng.choice((1, 2, 2, 3))):
        current_shape = g.shape(current)
        depth = current_shape[-1]
        channels = rng.choice((1, 3, 4, 5, 8, 17, 31, 33, 64))
        w = _int4_filter(g, rng, draw, f"w{layer}", (channels, depth), one_scale=0.3)
        inputs = [current, w]
        bias_kind = rng.choice(("none", "none", "random", "zeros", "negative"))
        if bias_kind != "none":
            bias = (draw.standard_normal(channels) * 0.1).astype(np.float32)
            if bias_kind == "zeros":
                bias[:] = 0
            elif bias_kind == "negative":
                bias = (-np.abs(bias) - 0.01).astype(np.float32)
            inputs.append(g.add_constant(f"b{layer}", bias.astype(np.float32)))
        keep = len(current_shape) > 2 and rng.random() < 0.6
        batch = int(np.prod(current_shape[:-1]))
        out_shape = [*current_shape[:-1], channels] if keep else [batch, channels]
        out = g.add_tensor(f"y{layer}", out_shape)
        activation = "RELU" if bias_kind == "negative" else rng.choice(_ZERO_ACTIVATIONS)
        options = {
            "keep_num_dims": keep,
            "asymmetric_quantize_inputs": rng.random() < 0.5,
            "fused_activation_function": activation,
        }
        g.add_operator("FULLY_CONNECTED", inputs, [out], options=options, version=6)
        current = out
        follow = rng.choice(("none", "none", "add", "mul", "relu", "logistic"))
        if follow == "add":
            summed = g.add_tensor(f"s{layer}", out_shape)
            g.add_operator("ADD", [current, current], [summed])
            current = summed
        elif follow == "mul":
            factor = g.add_constant(f"k{layer}", np.full([channels], 1.5, np.float32))
            scaled = g.add_tensor(f"m{layer}", out_shape)
            g.add_operator("MUL", [current, factor], [scaled])
            current = scaled
        elif follow in ("relu", "logistic"):
            after = g.add_tensor(f"a{layer}", out_shape)
            g.add_operator(follow.upper(), [current], [after])
            current = after
    g.set_inputs([x])
    g.set_outputs([current])
    return builder.build()


# Session 17 (litert-int4-17): int4 FULLY_CONNECTED filters with zero points other than 0 (one
# for the tensor, or one per channel: all 8, 0 and 8 mixed, one channel's 1), float input, an
# even depth the delegate's qc4w path and the 4-bit kernel take or an odd one; measured on the
# wheel (`--only int4zp17_`) for what the builtin kernel and XNNPACK do with them.
ZERO_POINT_CASES: tuple[tuple[str, object, int], ...] = (
    ("int4zp17_1", 1, 64), ("int4zp17_2", 7, 64), ("int4zp17_3", -1, 64),
    ("int4zp17_4", -8, 64), ("int4zp17_5", 8, 64), ("int4zp17_6", "all 8", 64),
    ("int4zp17_7", "0 and 8", 64), ("int4zp17_8", "one 1", 64), ("int4zp17_9", 1, 33),
    ("int4zp17_10", "all 8", 33), ("int4zp17_11", 0, 64), ("int4zp17_12", "all 0", 33),
)  # fmt: skip
ZERO_POINT_NAMES = tuple(name for name, _, _ in ZERO_POINT_CASES)


def int4_zero_point_case(n: int) -> bytes:
    """The n-th int4zp17 model: x [2, depth] → FULLY_CONNECTED (16 units, int4 filter, the
    case's zero points, a bias) → RELU."""
    _, zero_points, depth = ZERO_POINT_CASES[n - 1]
    draw = np.random.default_rng(ZERO_SEED_BASE + 100 + n)
    builder = ModelBuilder(description="arenalens: int4zp17")
    g = builder.add_subgraph("main")
    channels = 16
    x = g.add_tensor("x", [2, depth])
    nibbles = draw.integers(-8, 8, (channels, depth)).astype(np.int8)
    padded = np.pad(nibbles, ((0, 0), (0, depth % 2)))
    packed = ((padded[:, 1::2] & 0x0F) << 4 | (padded[:, 0::2] & 0x0F)).astype(np.uint8)
    scales = draw.uniform(0.01, 0.05, channels)
    if isinstance(zero_points, int):
        spec = quantization(float(scales[0]), zero_points)
    else:
        points = {"all 8": [8] * channels, "all 0": [0] * channels}.get(str(zero_points))
        if zero_points == "0 and 8":
            points = [8 * (c % 2) for c in range(channels)]
        elif zero_points == "one 1":
            points = [1 if c == 5 else 0 for c in range(channels)]
        spec = quantization(scales, points or [0] * channels)
    w = g.add_tensor("w", [channels, depth], "INT4", data=packed.tobytes(), quantization=spec)
    bias = g.add_constant("b", (draw.standard_normal(channels) * 0.1).astype(np.float32))
    y = g.add_tensor("y", [2, channels])
    g.add_operator(
        "FULLY_CONNECTED", [x, w, bias], [y],
        options={"fused_activation_function": "RELU"}, version=6,
    )  # fmt: skip
    g.set_inputs([x])
    g.set_outputs([y])
    return builder.build()
