"""Generated models for the XNNPACK rules issue 32 left unmodelled, one rule each, built with
arenalens.tflite.builder: depthwise convolutions wider than XNNPACK's largest unipass tile (25
taps), which XNNPACK runs as a grouped IGEMM. Their parts and heap figures are measured with
the wheel by `python -m tests.litert_xnnpack_parts --only xcase_` (tests/data/
litert_xnnpack_parts.json) and checked by tests/runtimes/litert/test_litert_xnnpack.py."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization


def _random(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _model(build: Callable[[SubgraphBuilder], tuple[list[int], list[int]]]) -> bytes:
    model = ModelBuilder()
    graph = model.add_subgraph("main")
    inputs, outputs = build(graph)
    graph.set_inputs(inputs)
    graph.set_outputs(outputs)
    return model.build()


def _depthwise(
    *,
    size: int,
    channels: int,
    kernel: tuple[int, int],
    multiplier: int = 1,
    stride: int = 1,
    padding: str = "SAME",
    int8: bool = False,
    seed: int = 0,
) -> bytes:
    """One depthwise convolution (and a RELU after it, fused by XNNPACK into its clamp)."""
    random = _random(seed)
    height, width = kernel
    out_channels = channels * multiplier
    out = -(-size // stride) if padding == "SAME" else (size - height) // stride + 1
    out_w = -(-size // stride) if padding == "SAME" else (size - width) // stride + 1

    def build(g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        options = {
            "padding": padding,
            "stride_w": stride,
            "stride_h": stride,
            "depth_multiplier": multiplier,
        }
        if int8:
            q_in, q_out = quantization(0.05, 3), quantization(0.1, -2)
            scales = np.linspace(0.01, 0.03, out_channels)
            weights = g.add_constant(
                "w",
                random.integers(-127, 128, (1, height, width, out_channels)).astype(np.int8),
                "INT8",
                quantization=quantization(scales, 0, axis=3),
            )
            bias = g.add_constant(
                "b",
                random.integers(-500, 500, out_channels).astype(np.int32),
                "INT32",
                quantization=quantization(scales * 0.05, 0),
            )
            x = g.add_tensor("x", [1, size, size, channels], "INT8", quantization=q_in)
            y = g.add_tensor("y", [1, out, out_w, out_channels], "INT8", quantization=q_out)
            z = g.add_tensor("z", [1, out, out_w, out_channels], "INT8", quantization=q_out)
        else:
            weights = g.add_constant(
                "w", random.standard_normal((1, height, width, out_channels)).astype(np.float32)
            )
            bias = g.add_constant("b", random.standard_normal(out_channels).astype(np.float32))
            x = g.add_tensor("x", [1, size, size, channels])
            y = g.add_tensor("y", [1, out, out_w, out_channels])
            z = g.add_tensor("z", [1, out, out_w, out_channels])
        g.add_operator("DEPTHWISE_CONV_2D", [x, weights, bias], [y], options=options)
        g.add_operator("RELU", [y], [z])
        return [x], [z]

    return _model(build)


CASES: dict[str, Callable[[], bytes]] = {
    "depthwise_7x7_float": lambda: _depthwise(size=14, channels=24, kernel=(7, 7)),
    "depthwise_7x7_int8": lambda: _depthwise(size=14, channels=40, kernel=(7, 7), int8=True),
    "depthwise_5x7_float_stride2_valid": lambda: _depthwise(
        size=17, channels=6, kernel=(5, 7), stride=2, padding="VALID", multiplier=2, seed=1
    ),
    "depthwise_9x9_int8_valid": lambda: _depthwise(
        size=20, channels=8, kernel=(9, 9), padding="VALID", int8=True, seed=2
    ),
}
