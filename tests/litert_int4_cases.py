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

from arenalens.tflite.builder import ModelBuilder, quantization

SEED_BASE = 16_400
COUNT = 24
NAMES = tuple(f"int4pc16_{n}" for n in range(1, COUNT + 1))
_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


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
        nibbles = draw.integers(-8, 8, (channels, depth)).astype(np.int8)
        padded = np.pad(nibbles, ((0, 0), (0, depth % 2)))
        packed = ((padded[:, 1::2] & 0x0F) << 4 | (padded[:, 0::2] & 0x0F)).astype(np.uint8)
        if rng.random() < 0.25:
            spec = quantization(float(draw.uniform(0.01, 0.05)), 0)
        else:
            spec = quantization(draw.uniform(0.01, 0.05, channels), 0)
        w = g.add_tensor(
            f"w{layer}", [channels, depth], "INT4", data=packed.tobytes(), quantization=spec
        )
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
