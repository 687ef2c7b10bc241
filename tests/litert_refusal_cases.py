"""Generated models for the LiteRT builtin kernels' own checks that the upstream test models
hit (runtimes/litert/prepare_refusals.py, xnnpack_binary.py): one operator each, with the
verdict the 2.3.0 wheel gives under both delegates (`WHEEL`, measured by
`python -m tests.litert_refusal_cases`: each model in a child process, so an abort is an
outcome). An outcome is 'runs' (allocate_tensors() and one invoke() on ones succeed), 'invoke'
(allocate_tensors() succeeds, invoke() fails), 'setup' (allocate_tensors() fails), 'abort'
(the process dies in allocate_tensors()) or 'crash' (the process dies in invoke())."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from flatbuffers import flexbuffers

from arenalens.tflite.builder import (
    ModelBuilder,
    SubgraphBuilder,
    blockwise_quantization,
    quantization,
)
from tests.litert_cases import _single


def squeeze(shape: tuple[int, ...], dims: tuple[int, ...]) -> bytes:
    """SQUEEZE of a float input of `shape` with squeeze_dims `dims`."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", list(shape))
        kept = [d for i, d in enumerate(shape) if not (i in dims or i - len(shape) in dims)]
        y = g.add_tensor("y", kept)
        g.add_operator("SQUEEZE", [x], [y], options={"squeeze_dims": list(dims)})
        return [x], [y]

    return _single(build)


def reshape(shape: tuple[int, ...], new_shape: tuple[int, ...], *, tensor: bool) -> bytes:
    """RESHAPE of a float input to `new_shape`, given as a constant shape tensor or as the
    options' new_shape; the output tensor's shape is the new shape with -1 read as 1."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", list(shape))
        y = g.add_tensor("y", [abs(d) for d in new_shape])
        if tensor:
            target = g.add_constant("shape", np.array(new_shape, np.int32))
            g.add_operator("RESHAPE", [x, target], [y])
        else:
            g.add_operator("RESHAPE", [x], [y], options={"new_shape": list(new_shape)})
        return [x], [y]

    return _single(build)


def expand_dims(rank: int, axis: int, *, output_scale: float = 0.5) -> bytes:
    """int8 EXPAND_DIMS of a [2, 3, ...] input (scale 0.5) at a constant `axis`; the output's
    scale `output_scale`."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        shape = [2, 3, 4, 5][:rank]
        x = g.add_tensor("x", shape, "INT8", quantization=quantization(0.5, 0))
        a = g.add_constant("axis", np.array([axis], np.int32))
        place = axis + rank + 1 if axis < 0 else axis
        out_shape = [*shape[:place], 1, *shape[place:]] if 0 <= place <= rank else [*shape, 1]
        y = g.add_tensor("y", out_shape, "INT8", quantization=quantization(output_scale, 0))
        g.add_operator("EXPAND_DIMS", [x, a], [y])
        return [x], [y]

    return _single(build)


def gather(indices: tuple[int, ...], *, axis: int = 0, constant_input: bool = False) -> bytes:
    """GATHER of a float [4, 3] input (a graph input or a constant) with constant int32
    `indices` along `axis`."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        if constant_input:
            x = g.add_constant("x", np.arange(12, dtype=np.float32).reshape(4, 3))
        else:
            x = g.add_tensor("x", [4, 3])
        i = g.add_constant("i", np.array(indices, np.int32))
        shape = [len(indices), 3] if axis == 0 else [4, len(indices)]
        y = g.add_tensor("y", shape)
        g.add_operator("GATHER", [x, i], [y], options={"axis": axis})
        if constant_input:
            z = g.add_tensor("z", shape)
            w = g.add_tensor("w", shape)
            g.add_operator("ADD", [y, w], [z])
            return [w], [z]
        return [x], [y]

    return _single(build)


Scale = float | None  # None: the tensor has no quantization


def integer_svdf(time_dtype: str, state_dtype: str) -> bytes:
    """An int8 SVDF (rank 1, 64 filters of memory 8 over 96 inputs, RELU) with int8 feature
    weights and the given time-weights and state types (LiteRT's kernel wants int16 for both;
    TFLM also runs int8 ones)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        filters, memory, width = 64, 8, 96
        x = g.add_tensor("x", [1, width], "INT8", quantization=quantization(0.05, -128))
        feature = g.add_constant(
            "feature", np.ones((filters, width), np.int8), quantization=quantization(0.01, 0)
        )
        time_values = np.ones((filters, memory), np.dtype(time_dtype.lower()))
        time = g.add_constant("time", time_values, quantization=quantization(0.01, 0))
        bias = g.add_constant(
            "bias", np.zeros(filters, np.int32), quantization=quantization(0.0005, 0)
        )
        state = g.add_tensor(
            "state", [1, memory * filters], state_dtype, quantization=quantization(0.8, 0),
            is_variable=True,
        )  # fmt: skip
        y = g.add_tensor("y", [1, filters], "INT8", quantization=quantization(0.2, -128))
        g.add_operator(
            "SVDF",
            [x, feature, time, bias, state],
            [y],
            options={"rank": 1, "fused_activation_function": "RELU"},
        )
        return [x], [y]

    return _single(build)


def binary(opcode: str, scales: tuple[Scale, Scale, Scale], dtype: str = "INT8") -> bytes:
    """An 8-bit ADD, SUB or MUL of two [1, 8] inputs; each tensor's scale (zero point 0)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        def tensor(name: str, scale: Scale) -> int:
            spec = None if scale is None else quantization(scale, 0)
            return g.add_tensor(name, [1, 8], dtype, quantization=spec)

        a, b, y = (tensor(n, s) for n, s in zip("aby", scales, strict=True))
        g.add_operator(opcode, [a, b], [y])
        return [a, b], [y]

    return _single(build)


def convolution(opcode: str, bias: str, dtype: str = "FLOAT32") -> bytes:
    """CONV_2D or DEPTHWISE_CONV_2D of a [1, 5, 5, 4] input, 3x3 SAME, with a bias tensor
    ('tensor'), an omitted optional bias (-1, three inputs: 'omitted') or two inputs ('none');
    `dtype` FLOAT32 or INT8 (per-tensor scales, int32 bias)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        eight_bit = dtype == "INT8"
        spec = quantization(0.5, 0) if eight_bit else None
        x = g.add_tensor("x", [1, 5, 5, 4], dtype, quantization=spec)
        shape = (4, 3, 3, 4) if opcode == "CONV_2D" else (1, 3, 3, 4)
        values = np.arange(np.prod(shape)).reshape(shape) % 5 - 2
        weights = (
            g.add_constant("w", values.astype(np.int8), "INT8", quantization=quantization(0.25, 0))
            if eight_bit
            else g.add_constant("w", values.astype(np.float32))
        )
        inputs = [x, weights]
        if bias == "tensor":
            inputs.append(
                g.add_constant(
                    "b", np.zeros(4, np.int32), "INT32", quantization=quantization(0.125, 0)
                )
                if eight_bit
                else g.add_constant("b", np.zeros(4, np.float32))
            )
        elif bias == "omitted":
            inputs.append(-1)
        y = g.add_tensor(
            "y", [1, 5, 5, 4], dtype, quantization=quantization(1.0, 0) if eight_bit else None
        )
        options: dict[str, object] = {"padding": "SAME"}
        if opcode == "DEPTHWISE_CONV_2D":
            options["depth_multiplier"] = 1
        g.add_operator(opcode, inputs, [y], options=options)
        return [x], [y]

    return _single(build)


def _weighted_layout(
    opcode: str,
) -> tuple[list[int], tuple[int, ...], int, np.ndarray, list[int]]:
    """The weighted operator both filter generators build (CONV_2D, DEPTHWISE_CONV_2D,
    TRANSPOSE_CONV: a [1, 5, 5, 4] input, 3x3 SAME; FULLY_CONNECTED: a [2, 8] input, 4 units):
    its input shape, its filter's shape, quantized axis and int8 values (-2 to 2), its output
    shape."""
    dense = opcode == "FULLY_CONNECTED"
    shape = {"FULLY_CONNECTED": (4, 8), "DEPTHWISE_CONV_2D": (1, 3, 3, 4)}.get(opcode, (4, 3, 3, 4))
    axis = 3 if opcode == "DEPTHWISE_CONV_2D" else 0
    values = (np.arange(np.prod(shape)).reshape(shape) % 5 - 2).astype(np.int8)
    return [2, 8] if dense else [1, 5, 5, 4], shape, axis, values, [2, 4] if dense else [1, 5, 5, 4]


def _weighted_operator(
    g: SubgraphBuilder, opcode: str, operands: tuple[int, int, int], y: int
) -> None:
    """The operator on its (input, filter, bias) into y: SAME padding (depth multiplier 1 for
    a depthwise one); a TRANSPOSE_CONV takes a constant output shape first and its input third."""
    x, w, b = operands
    options: dict[str, object] = {} if opcode == "FULLY_CONNECTED" else {"padding": "SAME"}
    inputs = [x, w, b]
    if opcode == "DEPTHWISE_CONV_2D":
        options["depth_multiplier"] = 1
    if opcode == "TRANSPOSE_CONV":
        inputs = [g.add_constant("shape", np.array([1, 5, 5, 4], np.int32)), w, x, b]
        options.update(stride_h=1, stride_w=1)
    g.add_operator(opcode, inputs, [y], options=options)


def filter_zero_points(
    opcode: str, dtype: str, points: int | tuple[int, ...], filter_dtype: str = ""
) -> bytes:
    """CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV (a [1, 5, 5, 4] input, 3x3 SAME) or
    FULLY_CONNECTED (a [2, 8] input, 4 units) of a `dtype` input whose constant filter
    (`filter_dtype`, the input's by default; INT8 under INT16 or FLOAT32 input; INT4 packed)
    has zero point `points`: one int per tensor, a tuple one per output channel."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        weights_type = filter_dtype or ("INT8" if dtype in ("INT16", "FLOAT32") else dtype)
        io = None if dtype == "FLOAT32" else quantization(0.5, 0 if dtype != "UINT8" else 128)
        x_shape, shape, axis, values, y_shape = _weighted_layout(opcode)
        x = g.add_tensor("x", x_shape, dtype, quantization=io)
        scales = (0.25, 0.125, 0.25, 0.5) if isinstance(points, tuple) else 0.25
        spec = quantization(scales, points, axis=axis)
        if weights_type == "INT4":
            flat = values.reshape(-1)
            packed = ((flat[1::2] & 0x0F) << 4 | (flat[0::2] & 0x0F)).astype(np.uint8)
            w = g.add_tensor("w", list(shape), "INT4", data=packed.tobytes(), quantization=spec)
        else:
            stored = (
                (values.astype(np.int16) + 128).astype(np.uint8)
                if weights_type == "UINT8"
                else values
            )
            w = g.add_constant("w", stored, weights_type, quantization=spec)
        # The bias's scales are the input's times the filter's, as XNNPACK requires.
        bias_spec = quantization(np.multiply(0.5, scales))
        if dtype == "FLOAT32":
            b = g.add_constant("b", np.zeros(4, np.float32))
        elif dtype == "INT16":
            b = g.add_constant("b", np.zeros(4, np.int64), "INT64", quantization=bias_spec)
        else:
            b = g.add_constant("b", np.zeros(4, np.int32), "INT32", quantization=bias_spec)
        y = g.add_tensor("y", y_shape, dtype, quantization=io)
        _weighted_operator(g, opcode, (x, w, b), y)
        return [x], [y]

    return _single(build)


def bias_scale(
    opcode: str, dtype: str, bias: float, filter_scale: float | tuple[float, ...] = 0.25
) -> bytes:
    """CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV (a [1, 5, 5, 4] input, 3x3 SAME) or
    FULLY_CONNECTED (a [2, 8] input, 4 units) of a `dtype` input (scale 0.5) and output (scale
    1.0) whose filter (the input's type; INT8 under INT16) has scale `filter_scale` (a tuple:
    one per output channel) and whose bias has scale `bias` (input x filter is 0.125 per
    tensor)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        point = 128 if dtype == "UINT8" else 0
        x_shape, _, axis, values, y_shape = _weighted_layout(opcode)
        x = g.add_tensor("x", x_shape, dtype, quantization=quantization(0.5, point))
        if dtype == "UINT8":
            w = g.add_constant("w", (values.astype(np.int16) + 128).astype(np.uint8), "UINT8",
                               quantization=quantization(filter_scale, 128))  # fmt: skip
        else:
            spec = quantization(filter_scale, 0, axis=axis)
            w = g.add_constant("w", values, "INT8", quantization=spec)
        wide = dtype == "INT16"
        kind = ("INT64", np.int64) if wide else ("INT32", np.int32)
        b = g.add_constant("b", np.zeros(4, kind[1]), kind[0], quantization=quantization(bias))
        y = g.add_tensor("y", y_shape, dtype, quantization=quantization(1.0, point))
        _weighted_operator(g, opcode, (x, w, b), y)
        return [x], [y]

    return _single(build)


def int4_blockwise(
    channels: int, depth: int, scales_per_channel: int, block: int, scale_dtype: str = "FLOAT16"
) -> bytes:
    """FULLY_CONNECTED of a [1, depth] float input with int4 [channels, depth] weights in
    blockwise quantization of `block`, `scales_per_channel` scales of `scale_dtype` per output
    channel (one per block is what XNNPACK's value type takes)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        rng = np.random.default_rng(1)
        x = g.add_tensor("x", [1, depth])
        nibbles = rng.integers(-8, 8, (channels, depth)).astype(np.int8)
        packed = ((nibbles[:, 1::2] & 0x0F) << 4 | (nibbles[:, 0::2] & 0x0F)).astype(np.uint8)
        values = rng.uniform(0.01, 0.05, (channels, scales_per_channel))
        kind = np.float16 if scale_dtype == "FLOAT16" else np.float32
        scales = g.add_constant("s", values.astype(kind))
        weights = g.add_tensor(
            "w",
            [channels, depth],
            "INT4",
            data=packed.tobytes(),
            quantization=blockwise_quantization(scales, -1, block),
        )
        y = g.add_tensor("y", [1, channels])
        options = {"keep_num_dims": False, "asymmetric_quantize_inputs": True}
        g.add_operator("FULLY_CONNECTED", [x, weights], [y], options=options, version=6)
        return [x], [y]

    return _single(build)


def attention_heads(heads: int, key_heads: int) -> bytes:
    """The odml attention as the custom operator: a [1, 4, heads, 8] query over [1, 5,
    key_heads, 8] keys and values (XNNPACK's delegate takes it; the builtin kernels cannot)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        query = g.add_tensor("q", [1, 4, heads, 8])
        key, value = (g.add_tensor(name, [1, 5, key_heads, 8]) for name in ("k", "v"))
        out = g.add_tensor("attention", [1, 4, heads, 8])
        g.add_operator(
            "CUSTOM:odml.scaled_dot_product_attention",
            [query, key, value],
            [out],
            custom_options=bytes(flexbuffers.Dumps({"is_causal": False})),
        )
        return [query, key, value], [out]

    return _single(build)


# Filters with a zero point other than 0 (conv.cc's Prepare check and its absence elsewhere),
# with their zero-point-0 twins: (opcode, input type, zero points, filter type).
ZERO_POINTS: dict[str, tuple[Any, ...]] = {
    "conv_int8_ok": ("CONV_2D", "INT8", (0, 0, 0, 0)),
    "conv_int8_tensor_ok": ("CONV_2D", "INT8", 0),
    "conv_int8_tensor": ("CONV_2D", "INT8", 3),
    "conv_int8_channel": ("CONV_2D", "INT8", (0, 0, 1, 0)),
    "conv_int16_ok": ("CONV_2D", "INT16", 0),
    "conv_int16": ("CONV_2D", "INT16", (0, -2, 0, 0)),
    "conv_int4_ok": ("CONV_2D", "INT8", 0, "INT4"),
    "conv_int4": ("CONV_2D", "INT8", 1, "INT4"),
    "conv_uint8": ("CONV_2D", "UINT8", 100),
    "depthwise_int16": ("DEPTHWISE_CONV_2D", "INT16", 2),
    "dense_int8": ("FULLY_CONNECTED", "INT8", 3),
    "transpose_int8": ("TRANSPOSE_CONV", "INT8", 3),
}
# int8 filters with a zero point other than 0 in operators the builtin kernels run and XNNPACK
# may take (runtimes/litert/xnnpack_zero_points.py): per channel with one in a later channel
# (GetXNNPackDatatype refuses it after the delegate took it: 'unsupported zero-point value (Z) in
# channel C of INT8 tensor T'), in the first channel (the Visit*Node's check leaves a CONV_2D,
# DEPTHWISE_CONV_2D, TRANSPOSE_CONV to the builtin kernel), per tensor (XNNPACK's define refuses
# a qint8 filter's in a depthwise or dynamically quantized FULLY_CONNECTED).
XNNPACK_ZERO_POINTS: dict[str, tuple[Any, ...]] = {
    "conv_hybrid": ("CONV_2D", "FLOAT32", (0, 3, 0, 0)),
    "depthwise_int8": ("DEPTHWISE_CONV_2D", "INT8", (0, 1, 0, 0)),
    "dense_int8_channel": ("FULLY_CONNECTED", "INT8", (0, 1, 0, 0)),
    "transpose_int8_channel": ("TRANSPOSE_CONV", "INT8", (0, 0, 1, 0)),
    "dense_hybrid_channel": ("FULLY_CONNECTED", "FLOAT32", (0, 1, 0, 0)),
    "transpose_hybrid_channel": ("TRANSPOSE_CONV", "FLOAT32", (0, 1, 0, 0)),
    "conv_hybrid_first": ("CONV_2D", "FLOAT32", (2, 0, 0, 0)),
    "depthwise_int8_first": ("DEPTHWISE_CONV_2D", "INT8", (2, 0, 0, 0)),
    "dense_int8_first": ("FULLY_CONNECTED", "INT8", (2, 0, 0, 0)),
    "transpose_int8_first": ("TRANSPOSE_CONV", "INT8", (2, 0, 0, 0)),
    "conv_hybrid_tensor": ("CONV_2D", "FLOAT32", 3),
    "depthwise_int8_tensor": ("DEPTHWISE_CONV_2D", "INT8", 3),
    "dense_hybrid_tensor": ("FULLY_CONNECTED", "FLOAT32", 3),
    "transpose_hybrid_tensor": ("TRANSPOSE_CONV", "FLOAT32", 3),
}

# A bias scale off input scale x filter scale (0.125) by more than 2% of the output scale (1.0)
# where GetQuantizedConvolutionMultipler checks it, and its twins: (opcode, input type, bias
# scale, filter scale).
BIAS_SCALES: dict[str, tuple[Any, ...]] = {
    "dense_int8_ok": ("FULLY_CONNECTED", "INT8", 0.125),
    "dense_int8_near": ("FULLY_CONNECTED", "INT8", 0.14),
    "dense_int8": ("FULLY_CONNECTED", "INT8", 0.1),
    "dense_int8_high": ("FULLY_CONNECTED", "INT8", 0.25),
    "dense_uint8_ok": ("FULLY_CONNECTED", "UINT8", 0.125),
    "dense_uint8": ("FULLY_CONNECTED", "UINT8", 0.1),
    "dense_int16_ok": ("FULLY_CONNECTED", "INT16", 0.125),
    "dense_int16": ("FULLY_CONNECTED", "INT16", 0.1),
    "dense_int8_channel": ("FULLY_CONNECTED", "INT8", 0.1, (0.25, 0.25, 0.25, 0.25)),
    "conv_int8": ("CONV_2D", "INT8", 0.1),
    "conv_uint8_ok": ("CONV_2D", "UINT8", 0.125),
    "conv_uint8": ("CONV_2D", "UINT8", 0.1),
    "depthwise_int8": ("DEPTHWISE_CONV_2D", "INT8", 0.1),
    "depthwise_uint8_ok": ("DEPTHWISE_CONV_2D", "UINT8", 0.125),
    "depthwise_uint8": ("DEPTHWISE_CONV_2D", "UINT8", 0.1),
    "transpose_int8": ("TRANSPOSE_CONV", "INT8", 0.1),
    "transpose_uint8_ok": ("TRANSPOSE_CONV", "UINT8", 0.125),
    "transpose_uint8": ("TRANSPOSE_CONV", "UINT8", 0.1),
}


CASES: dict[str, Callable[[], bytes]] = {
    "squeeze_ok": lambda: squeeze((1, 3, 1), (0, 2)),
    "squeeze_negative_ok": lambda: squeeze((2, 1), (-1,)),
    "squeeze_not_one": lambda: squeeze((1, 3), (1,)),
    "squeeze_out_of_rank": lambda: squeeze((1, 3), (2,)),
    "squeeze_scalar": lambda: squeeze((), (1,)),
    "reshape_ok_tensor": lambda: reshape((2, 6), (3, -1), tensor=True),
    "reshape_ok_options": lambda: reshape((2, 6), (4, 3), tensor=False),
    "reshape_count_tensor": lambda: reshape((2, 6), (5, 2), tensor=True),
    "reshape_count_options": lambda: reshape((2, 6), (5, 2), tensor=False),
    "reshape_two_stretch": lambda: reshape((2, 6), (-1, -1), tensor=True),
    "reshape_negative": lambda: reshape((2, 6), (-2, 6), tensor=True),
    "reshape_stretch_uneven": lambda: reshape((2, 6), (5, -1), tensor=True),
    "expand_ok": lambda: expand_dims(2, -1),
    "expand_axis_high": lambda: expand_dims(2, 3),
    "expand_axis_low": lambda: expand_dims(2, -4),
    "expand_scale_differs": lambda: expand_dims(2, 0, output_scale=0.25),
    "gather_ok": lambda: gather((0, 3)),
    "gather_high": lambda: gather((0, 4)),
    "gather_negative": lambda: gather((-1,)),
    "gather_axis1_high": lambda: gather((3,), axis=1),
    "gather_constant_high": lambda: gather((0, 4), constant_input=True),
    "gather_constant_ok": lambda: gather((1, 2), constant_input=True),
    "add_ok": lambda: binary("ADD", (0.5, 0.25, 1.0)),
    "add_unquantized": lambda: binary("ADD", (None, None, None)),
    "add_one_unquantized": lambda: binary("ADD", (0.5, None, 0.5)),
    "add_tiny_output": lambda: binary("ADD", (1.0, 1.0, 1e-7)),
    "add_ratio_low": lambda: binary("ADD", (1e-4, 1e-4, 1.0)),
    "add_uint8_unquantized": lambda: binary("ADD", (None, None, None), "UINT8"),
    "sub_ok": lambda: binary("SUB", (0.5, 0.25, 1.0)),
    "sub_unquantized": lambda: binary("SUB", (None, None, None)),
    "sub_tiny_output": lambda: binary("SUB", (1.0, 1.0, 1e-7)),
    "mul_unquantized": lambda: binary("MUL", (None, None, None)),
    "mul_ok": lambda: binary("MUL", (0.5, 0.25, 1.0)),
    "svdf_int16_state": lambda: integer_svdf("INT16", "INT16"),
    "svdf_int8_state": lambda: integer_svdf("INT16", "INT8"),
    "svdf_int8_time_weights": lambda: integer_svdf("INT8", "INT16"),
    "conv_bias": lambda: convolution("CONV_2D", "tensor"),
    "conv_bias_omitted": lambda: convolution("CONV_2D", "omitted"),
    "conv_two_inputs": lambda: convolution("CONV_2D", "none"),
    "conv_int8_bias_omitted": lambda: convolution("CONV_2D", "omitted", "INT8"),
    "depthwise_bias": lambda: convolution("DEPTHWISE_CONV_2D", "tensor"),
    "depthwise_bias_omitted": lambda: convolution("DEPTHWISE_CONV_2D", "omitted"),
    "depthwise_two_inputs": lambda: convolution("DEPTHWISE_CONV_2D", "none"),
    "depthwise_int8_two_inputs": lambda: convolution("DEPTHWISE_CONV_2D", "none", "INT8"),
    "int4_blockwise_ok": lambda: int4_blockwise(64, 64, 2, 32),
    "int4_blockwise_scales_too_many": lambda: int4_blockwise(64, 64, 4, 32),
    "int4_blockwise_scales_too_few": lambda: int4_blockwise(64, 128, 2, 32),
    "int4_blockwise_block_16": lambda: int4_blockwise(64, 64, 4, 16),
    "int4_blockwise_block_48": lambda: int4_blockwise(64, 96, 2, 48),
    "int4_blockwise_float32_scales": lambda: int4_blockwise(64, 64, 2, 32, "FLOAT32"),
    "attention_heads_4_over_2": lambda: attention_heads(4, 2),
    "attention_heads_3_over_2": lambda: attention_heads(3, 2),
    "attention_heads_4_over_3": lambda: attention_heads(4, 3),
    "attention_heads_6_over_4": lambda: attention_heads(6, 4),
    **{
        f"zp_{name}": (lambda spec=spec: filter_zero_points(*spec))
        for name, spec in ZERO_POINTS.items()
    },  # type: ignore[misc]
    **{f"bias_{name}": (lambda spec=spec: bias_scale(*spec)) for name, spec in BIAS_SCALES.items()},  # type: ignore[misc]
}

_CHILD = """
import sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
kind = getattr(OpResolverType, sys.argv[1])
interpreter = Interpreter(model_content=sys.stdin.buffer.read(), experimental_op_resolver_type=kind)
try:
    interpreter.allocate_tensors()
except Exception as error:
    print("setup", str(error).splitlines()[0][:160], flush=True)
    sys.exit(0)
print("allocated", flush=True)
for detail in interpreter.get_input_details():
    interpreter.set_tensor(detail["index"], np.ones(detail["shape"], detail["dtype"]))
try:
    interpreter.invoke()
except Exception as error:
    print("invoke", str(error).splitlines()[0][:160], flush=True)
    sys.exit(0)
print("runs", flush=True)
"""
RESOLVERS = {"none": "BUILTIN_WITHOUT_DEFAULT_DELEGATES", "xnnpack": "AUTO"}


def wheel_outcome(data: bytes, delegate: str) -> str:
    """One model's outcome on the installed wheel under `delegate` ('none' or 'xnnpack')."""
    completed = subprocess.run(
        [sys.executable, "-c", _CHILD, RESOLVERS[delegate]],
        input=data,
        capture_output=True,
        timeout=120,
        check=False,
    )
    words = completed.stdout.decode().split()
    if completed.returncode != 0:
        return "crash" if words[:1] == ["allocated"] else "abort"
    return words[1] if words[:1] == ["allocated"] else words[0]


# Cases the builtin kernels refuse as an unresolved custom operator, not by a kernel's check
# (prepare_refusals has nothing to say about them).
UNRESOLVED = frozenset(name for name in CASES if name.startswith("attention_heads_"))
# Measured on ai-edge-litert 2.3.0, x86-64 (python -m tests.litert_refusal_cases): (builtin,
# XNNPACK) outcome per case.
WHEEL: dict[str, tuple[str, str]] = {
    "squeeze_ok": ("runs", "runs"),
    "squeeze_negative_ok": ("runs", "runs"),
    "squeeze_not_one": ("setup", "setup"),
    "squeeze_out_of_rank": ("setup", "setup"),
    "squeeze_scalar": ("setup", "setup"),
    "reshape_ok_tensor": ("runs", "runs"),
    "reshape_ok_options": ("runs", "runs"),
    "reshape_count_tensor": ("setup", "setup"),
    "reshape_count_options": ("setup", "setup"),
    "reshape_two_stretch": ("setup", "setup"),
    "reshape_negative": ("setup", "setup"),
    "reshape_stretch_uneven": ("setup", "setup"),
    "expand_ok": ("runs", "runs"),
    "expand_axis_high": ("setup", "setup"),
    "expand_axis_low": ("setup", "setup"),
    "expand_scale_differs": ("setup", "setup"),
    "gather_ok": ("runs", "runs"),
    "gather_high": ("invoke", "invoke"),
    "gather_negative": ("invoke", "invoke"),
    "gather_axis1_high": ("invoke", "invoke"),
    "gather_constant_high": ("setup", "setup"),
    "gather_constant_ok": ("runs", "runs"),
    "add_ok": ("runs", "runs"),
    "add_unquantized": ("abort", "abort"),
    "add_one_unquantized": ("abort", "abort"),
    "add_tiny_output": ("abort", "abort"),
    "add_ratio_low": ("runs", "runs"),
    "add_uint8_unquantized": ("abort", "abort"),
    "sub_ok": ("runs", "runs"),
    "sub_unquantized": ("abort", "abort"),
    "sub_tiny_output": ("runs", "runs"),
    "mul_unquantized": ("runs", "runs"),
    "mul_ok": ("runs", "runs"),
    "svdf_int16_state": ("runs", "runs"),
    "svdf_int8_state": ("crash", "crash"),
    "svdf_int8_time_weights": ("runs", "runs"),
    "conv_bias": ("runs", "runs"),
    "conv_bias_omitted": ("setup", "setup"),
    "conv_two_inputs": ("setup", "setup"),
    "conv_int8_bias_omitted": ("setup", "setup"),
    "depthwise_bias": ("runs", "runs"),
    "depthwise_bias_omitted": ("setup", "setup"),
    "depthwise_two_inputs": ("crash", "crash"),
    "depthwise_int8_two_inputs": ("crash", "crash"),
    "int4_blockwise_ok": ("runs", "runs"),
    "int4_blockwise_scales_too_many": ("runs", "setup"),
    "int4_blockwise_scales_too_few": ("runs", "setup"),
    "int4_blockwise_block_16": ("runs", "runs"),
    "int4_blockwise_block_48": ("runs", "runs"),
    "int4_blockwise_float32_scales": ("runs", "setup"),
    "attention_heads_4_over_2": ("setup", "runs"),
    "attention_heads_3_over_2": ("setup", "setup"),
    "attention_heads_4_over_3": ("setup", "setup"),
    "attention_heads_6_over_4": ("setup", "setup"),
    "zp_conv_int8_ok": ("runs", "runs"),
    "zp_conv_int8_tensor_ok": ("runs", "runs"),
    "zp_conv_int8_tensor": ("setup", "setup"),
    "zp_conv_int8_channel": ("setup", "setup"),
    "zp_conv_int16_ok": ("runs", "runs"),
    "zp_conv_int16": ("setup", "setup"),
    "zp_conv_int4_ok": ("runs", "runs"),
    "zp_conv_int4": ("setup", "setup"),
    "zp_conv_uint8": ("runs", "runs"),
    "zp_depthwise_int16": ("runs", "runs"),
    "zp_dense_int8": ("runs", "runs"),
    "zp_transpose_int8": ("runs", "runs"),
    "bias_dense_int8_ok": ("runs", "runs"),
    "bias_dense_int8_near": ("runs", "runs"),
    "bias_dense_int8": ("setup", "runs"),
    "bias_dense_int8_high": ("setup", "runs"),
    "bias_dense_uint8_ok": ("runs", "runs"),
    "bias_dense_uint8": ("setup", "runs"),
    "bias_dense_int16_ok": ("runs", "runs"),
    "bias_dense_int16": ("setup", "setup"),
    "bias_dense_int8_channel": ("runs", "runs"),
    "bias_conv_int8": ("runs", "runs"),
    "bias_conv_uint8_ok": ("runs", "runs"),
    "bias_conv_uint8": ("setup", "runs"),
    "bias_depthwise_int8": ("runs", "runs"),
    "bias_depthwise_uint8_ok": ("runs", "runs"),
    "bias_depthwise_uint8": ("setup", "runs"),
    "bias_transpose_int8": ("runs", "runs"),
    "bias_transpose_uint8_ok": ("runs", "runs"),
    "bias_transpose_uint8": ("setup", "runs"),
}
# The same wheel on XNNPACK_ZERO_POINTS (builtin, XNNPACK): the builtin kernels run every one
# (test_litert_filter_zero_points.py's runtime test remeasures them).
_XNNPACK_RUNS = frozenset(
    {
        "conv_hybrid_first",
        "depthwise_int8_first",
        "transpose_int8_first",
        "conv_hybrid_tensor",
        "transpose_hybrid_tensor",
    }
)
XNNPACK_ZERO_POINT_WHEEL = {
    name: ("runs", "runs" if name in _XNNPACK_RUNS else "setup") for name in XNNPACK_ZERO_POINTS
}


if __name__ == "__main__":
    measured = {
        name: tuple(wheel_outcome(make(), delegate) for delegate in RESOLVERS)
        for name, make in CASES.items()
    }
    print(json.dumps(measured, indent=1))
