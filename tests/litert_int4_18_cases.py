"""Held-out models for session 18's int4 leftovers (issue 32), drawn from seeds after the rules:

* `bwq18_<n>`: a FULLY_CONNECTED whose filter is blockwise-quantized (an int4 one mostly, int8
  now and then) under a quantized input (int8, int16, uint8) or, as a control, a float one:
  what the 2.3.0 wheel does with it under both delegates (runtimes/litert/refusals.py
  blockwise_integer_refusals, xnnpack_blockwise.takes_integer). Measured here, each model in a
  child process, its outcome and the first line LiteRT says, into
  tests/data/litert_int4_18.json:

      python -m tests.litert_int4_18_cases

* `act18_*`: a FULLY_CONNECTED's fused activation outside the clipping ones (TANH, SIGN_BIT)
  under float, int8 and hybrid kinds (refusals.dense_activation_refusals), in the same file.

* `ruy18_<n>`: int8-input int4 FULLY_CONNECTEDs whose int8 copy and ruy GEMM blocks reach 128
  KiB (the builtin kernel's EvalQuantized: four_bit.integer_unpacked_bytes, ruy_heap), of
  several rows (one row takes the custom GEMV), measured through ../shared/tools/litert-heap:

      python -m tests.litert_heap_measure --cache tests/data/litert_heap_avx2.json --only ruy18_
"""

from __future__ import annotations

import importlib
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from arenalens.tflite.builder import ModelBuilder, blockwise_quantization, quantization
from tests.litert_qs8qc4w17_cases import _int4_filter

BWQ18_SEED, BWQ18_COUNT = 18_300, 24
RUY18_SEED, RUY18_COUNT = 18_400, 12
BWQ18_NAMES = tuple(f"bwq18_{n}" for n in range(1, BWQ18_COUNT + 1))
# The bwq18 models the wheel's builtin kernels run (tests/data/litert_int4_18.json: float
# inputs), measured through ../shared/tools/litert-heap too (`--only bwq18_`).
BWQ18_RUNS = tuple((f"bwq18_{n}", "bwq18", n) for n in (2, 5, 9, 23))
RUY18_NAMES = tuple((f"ruy18_{n}", "ruy18", n) for n in range(1, RUY18_COUNT + 1))
OUTCOMES = Path(__file__).resolve().parents[1] / "tests/data/litert_int4_18.json"
COMMAND = "python -m tests.litert_int4_18_cases"
# Zero points and bias types a quantized FULLY_CONNECTED of each input type takes.
_ZERO_POINTS = {"INT8": 0, "INT16": 0, "UINT8": 128}
_BIAS = {"INT8": np.int32, "INT16": np.int64, "UINT8": np.int32}


def bwq18_case(n: int) -> bytes:
    """`bwq18_<n>`'s model: QUANTIZE (unless the input is float), one FULLY_CONNECTED of a
    blockwise filter, DEQUANTIZE."""
    seed = BWQ18_SEED + n
    draw, rng = random.Random(seed), np.random.default_rng(seed)
    kind = draw.choice(("INT8",) * 5 + ("INT16", "UINT8", "FLOAT32", "FLOAT32"))
    weights_kind = "INT8" if draw.random() < 0.15 else "INT4"
    block = draw.choice((16, 32, 32, 48, 64, 128))
    depth = block * draw.choice((1, 2, 3, 4)) + (1 if draw.random() < 0.15 else 0)
    channels = draw.choice((3, 8, 16, 37, 64, 100))
    rows = draw.choice((1, 1, 2, 4))
    fp16 = draw.random() < 0.8
    per_block = draw.random() < 0.85
    model = ModelBuilder(description="arenalens: bwq18 blockwise filter under a quantized input")
    g = model.add_subgraph("main")
    x = g.add_tensor("x", [rows, depth])
    current = x
    if kind != "FLOAT32":
        current = g.add_tensor(
            "xq", [rows, depth], kind, quantization=quantization(0.05, _ZERO_POINTS[kind])
        )
        g.add_operator("QUANTIZE", [x], [current])
    if weights_kind == "INT4":
        data = _int4_filter(rng, channels, depth)
    else:
        data = rng.integers(-127, 128, (channels, depth)).astype(np.int8).tobytes()
    count = max(depth // block, 1) if per_block else max(depth // block, 1) + 1
    values = rng.uniform(0.01, 0.05, (channels, count))
    scales = g.add_constant("s", values.astype(np.float16 if fp16 else np.float32))
    w = g.add_tensor(
        "w",
        [channels, depth],
        weights_kind,
        data=data,
        quantization=blockwise_quantization(scales, -1, block),
    )
    inputs = [current, w]
    if draw.random() < 0.6:
        if kind == "FLOAT32":
            inputs.append(g.add_constant("b", rng.uniform(-1, 1, channels).astype(np.float32)))
        else:
            bias = rng.integers(-50, 50, channels).astype(_BIAS[kind])
            inputs.append(g.add_constant("b", bias, quantization=quantization(0.05 * 0.03, 0)))
    output = g.add_tensor(
        "yq",
        [rows, channels],
        kind,
        quantization=None if kind == "FLOAT32" else quantization(0.1, _ZERO_POINTS[kind]),
    )
    options = {
        "fused_activation_function": draw.choice(("NONE", "NONE", "RELU", "TANH")),
        "keep_num_dims": False,
        "asymmetric_quantize_inputs": kind == "FLOAT32",
    }
    g.add_operator("FULLY_CONNECTED", inputs, [output], options=options, version=13)
    y = output
    if kind != "FLOAT32":
        y = g.add_tensor("y", [rows, channels])
        g.add_operator("DEQUANTIZE", [output], [y])
    g.set_inputs([x])
    g.set_outputs([y])
    return model.build()


def ruy18_case(n: int) -> bytes:
    """`ruy18_<n>`'s model: QUANTIZE, one or two int8-input int4 FULLY_CONNECTEDs (one scale
    per channel or one), the first with 128-240 K weights (its int8 copy and ruy's packed
    weights between 128 and 256 KiB: glibc's mmap threshold decides those blocks), DEQUANTIZE."""
    seed = RUY18_SEED + n
    draw, rng = random.Random(seed), np.random.default_rng(seed)
    model = ModelBuilder(description="arenalens: ruy18 int8-input int4 FULLY_CONNECTED, ruy")
    g = model.add_subgraph("main")
    rows = draw.choice((2, 3, 4, 7, 8, 16))
    depth = draw.choice((250, 255, 256, 300, 384, 400, 511, 512))
    x = g.add_tensor("x", [rows, depth])
    current = g.add_tensor("xq", [rows, depth], "INT8", quantization=quantization(0.05, 0))
    g.add_operator("QUANTIZE", [x], [current])
    in_scale = 0.05
    for layer in range(draw.choice((1, 2))):
        if layer == 0:
            low, high = -(-131_072 // depth), 240_000 // depth
            channels = draw.randrange(low, high + 1)
        else:
            channels = draw.choice((3, 17, 64, 129))
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
        out = g.add_tensor(f"y{layer}", [rows, channels], "INT8", quantization=quantization(0.1, 0))
        activation = draw.choice(("NONE", "RELU"))
        options = {"fused_activation_function": activation, "keep_num_dims": False}
        g.add_operator("FULLY_CONNECTED", inputs, [out], options=options, version=13)
        current, depth, in_scale = out, channels, 0.1
    y = g.add_tensor("y", [rows, depth])
    g.add_operator("DEQUANTIZE", [current], [y])
    g.set_inputs([x])
    g.set_outputs([y])
    return model.build()


# (input type, filter type, fused activation) of each act18_ case.
ACT18 = {
    "act18_float_tanh": ("FLOAT32", "FLOAT32", "TANH"),
    "act18_float_sign_bit": ("FLOAT32", "FLOAT32", "SIGN_BIT"),
    "act18_float_relu6": ("FLOAT32", "FLOAT32", "RELU6"),
    "act18_hybrid_tanh": ("FLOAT32", "INT8", "TANH"),
    "act18_int8_tanh": ("INT8", "INT8", "TANH"),
    "act18_int8_relu_n1": ("INT8", "INT8", "RELU_N1_TO_1"),
}


def act18_case(name: str) -> bytes:
    """`act18_*`: [2, 16] through one FULLY_CONNECTED of 8 units with a fused activation."""
    kind, weights_kind, activation = ACT18[name]
    model = ModelBuilder(description="arenalens: act18 FULLY_CONNECTED fused activation")
    g = model.add_subgraph("main")
    x = g.add_tensor("x", [2, 16])
    current = x
    if kind != "FLOAT32":
        current = g.add_tensor("xq", [2, 16], kind, quantization=quantization(0.05, 0))
        g.add_operator("QUANTIZE", [x], [current])
    if weights_kind == "FLOAT32":
        w = g.add_constant("w", np.full((8, 16), 0.5, np.float32))
    else:
        w = g.add_constant("w", np.ones((8, 16), np.int8), quantization=quantization(0.02, 0))
    scale = None if kind == "FLOAT32" else quantization(0.1, 0)
    y = g.add_tensor("yq", [2, 8], kind, quantization=scale)
    options = {"fused_activation_function": activation}
    g.add_operator("FULLY_CONNECTED", [current, w], [y], options=options, version=13)
    out = y
    if kind != "FLOAT32":
        out = g.add_tensor("y", [2, 8])
        g.add_operator("DEQUANTIZE", [y], [out])
    g.set_inputs([x])
    g.set_outputs([out])
    return model.build()


def wheel_says(data: bytes, delegate: str) -> list[str]:
    """[outcome, the first line LiteRT says] of one model on the installed wheel
    (tests/litert_refusal_cases's child: 'runs', 'invoke', 'setup', 'abort' or 'crash')."""
    # Imported by name: a static import makes mypy order that module's lambdas otherwise.
    refusal_cases = importlib.import_module("tests.litert_refusal_cases")
    completed = subprocess.run(
        [sys.executable, "-c", refusal_cases._CHILD, refusal_cases.RESOLVERS[delegate]],
        input=data,
        capture_output=True,
        timeout=120,
        check=False,
    )
    lines = completed.stdout.decode().splitlines()
    if completed.returncode != 0:
        return ["crash" if lines[:1] == ["allocated"] else "abort", ""]
    last = lines[-1] if lines else ""
    outcome, _, words = last.partition(" ")
    return [outcome, words]


def main() -> int:
    import ai_edge_litert

    version = getattr(ai_edge_litert, "__version__", "2.3.0")
    models = {name: bwq18_case(n) for n, name in enumerate(BWQ18_NAMES, 1)}
    models.update({name: act18_case(name) for name in ACT18})
    cases: dict[str, Any] = {
        name: {delegate: wheel_says(data, delegate) for delegate in ("none", "xnnpack")}
        for name, data in models.items()
    }
    OUTCOMES.write_text(
        json.dumps({"command": COMMAND, "wheel": f"ai-edge-litert {version}", "cases": cases},
                   indent=1) + "\n"
    )  # fmt: skip
    print(json.dumps(cases, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
