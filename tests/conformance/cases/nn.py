"""Cases for the neural-network kernels: convolutions, fully connected, batch matmul, recurrent
layers, pooling, softmax, normalisation, embedding lookup, PRELU, CUMSUM, the custom detection,
circular-buffer, Ethos-U and DECODE operators.

Each case is one operator exercising one memory path of its kernel: the types the kernel accepts
(and one it refuses), per-tensor vs per-channel quantization (per-channel arrays in the tail), the
options that add buffers (transposed copies, lookup tables, scratch), and the shapes that size
them. `scan_bytes` marks the kernels whose Prepare writes tail buffers over their own live temp
tensors, where fitting is not monotone in the arena size (tests/conformance/measure.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arenalens.tflite.builder import ModelBuilder, QuantizationSpec, quantization
from tests.conformance.cases import Case
from tests.conformance.models import OMITTED, Const, In, Op, Out, Var, single_op

# Temp-overlap kernels: how far above its bisection result the measurement keeps looking.
SCAN = 96

Q8 = quantization(0.1, 0)
Q16 = quantization(1 / 32768, 0)
_NUMPY = {
    "FLOAT32": np.float32,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "UINT8": np.uint8,
}


def _activation_q(dtype: str) -> QuantizationSpec | None:
    return {"INT8": Q8, "INT16": Q16, "UINT8": quantization(0.1, 128)}.get(dtype)


def _scales(count: int) -> list[float]:
    return [0.05 + 0.001 * i for i in range(count)]


def _weights_q(dtype: str, channels: int, per_channel: int, axis: int) -> QuantizationSpec | None:
    """Per-tensor (0.1) or per-channel scales for integer weights; None for float."""
    if dtype == "FLOAT32":
        return None
    if per_channel:
        return quantization(_scales(per_channel), 0, axis=axis)
    return quantization(0.1, 0)


def _weights(shape: Sequence[int], dtype: str, q: QuantizationSpec | None) -> Const:
    if dtype == "INT4":
        count = int(np.prod(shape))
        return Const(bytes((count + 1) // 2), "INT4", q, tuple(shape))
    return Const(np.ones(tuple(shape), _NUMPY[dtype]), dtype, q)


def _bias(count: int, dtype: str, activation: str, weights_q: QuantizationSpec | None) -> Const:
    """A bias whose scale is input scale x weight scale (the kernels check it)."""
    if dtype == "FLOAT32":
        return Const(np.zeros(count, np.float32), "FLOAT32")
    input_q = _activation_q(activation)
    in_scale = input_q.scales[0] if input_q else 1.0
    w_scales = weights_q.scales if weights_q else (1.0,)
    q = quantization([in_scale * s for s in w_scales], 0)
    return Const(np.zeros(count, _NUMPY[dtype]), dtype, q)


def _default_bias(dtype: str) -> str:
    return {"FLOAT32": "FLOAT32", "INT8": "INT32", "INT16": "INT64", "UINT8": "INT32"}[dtype]


# ---------------------------------------------------------------------------------------------
# FULLY_CONNECTED


def fully_connected(
    dtype: str = "INT8",
    weights: str | None = None,
    *,
    units: int = 8,
    depth: int = 32,
    per_channel: int = 0,
    bias: str | None = "auto",  # a type, "auto", "omitted" (-1) or None (two inputs)
    input_shape: Sequence[int] | None = None,
    output_shape: Sequence[int] | None = None,
    options: dict[str, Any] | None = None,
    bias_scale: float | None = None,
) -> Callable[[], bytes]:
    weights = weights or ("FLOAT32" if dtype == "FLOAT32" else "INT8")

    def build() -> bytes:
        wq = _weights_q(weights, units, per_channel, 0)
        operands: list[Any] = [
            In(tuple(input_shape or (1, depth)), dtype),
            _weights((units, depth), weights, wq),
        ]
        if bias == "omitted":
            operands.append(OMITTED)
        elif bias is not None:
            kind = _default_bias(dtype) if bias == "auto" else bias
            found = _bias(units, kind, dtype, wq)
            if bias_scale is not None:
                found = Const(found.array, kind, quantization(bias_scale, 0))
            operands.append(found)
        out = Out(tuple(output_shape or (1, units)), dtype)
        return single_op(Op("FULLY_CONNECTED", operands, [out], options=options or {}))

    return build


def _fc_cases() -> list[Case]:
    fc = "FULLY_CONNECTED"
    cases = [
        Case(f"{fc}.FLOAT32.bias", fc, "FLOAT32", fully_connected("FLOAT32")),
        Case(f"{fc}.FLOAT32.two_inputs", fc, "FLOAT32", fully_connected("FLOAT32", bias=None)),
        Case(
            f"{fc}.FLOAT32.bias_omitted", fc, "FLOAT32", fully_connected("FLOAT32", bias="omitted")
        ),
        Case(
            f"{fc}.FLOAT32.keep_num_dims",
            fc,
            "FLOAT32",
            fully_connected(
                "FLOAT32",
                input_shape=(2, 3, 32),
                output_shape=(2, 3, 8),
                options={"keep_num_dims": True},
            ),
        ),
        Case(f"{fc}.INT8.per_tensor", fc, "INT8", fully_connected()),
        Case(f"{fc}.INT8.per_tensor_two_inputs", fc, "INT8", fully_connected(bias=None)),
        Case(f"{fc}.INT8.per_tensor_bias_omitted", fc, "INT8", fully_connected(bias="omitted")),
        Case(
            f"{fc}.INT8.batch3",
            fc,
            "INT8",
            fully_connected(input_shape=(3, 32), output_shape=(3, 8)),
        ),
        Case(
            f"{fc}.INT8.rank3_flattened",
            fc,
            "INT8",
            fully_connected(input_shape=(2, 3, 32), output_shape=(6, 8)),
        ),
        Case(f"{fc}.INT8.int4_weights", fc, "INT8", fully_connected(weights="INT4")),
        Case(f"{fc}.INT16.bias_int64", fc, "INT16", fully_connected("INT16")),
        Case(f"{fc}.INT16.bias_int32", fc, "INT16", fully_connected("INT16", bias="INT32")),
        Case(f"{fc}.INT16.bias_omitted", fc, "INT16", fully_connected("INT16", bias="omitted")),
        Case(
            f"{fc}.FLOAT32.hybrid_refused",
            fc,
            "FLOAT32",
            fully_connected("FLOAT32", weights="INT8", bias=None),
        ),
        Case(
            f"{fc}.INT8.int16_weights_refused",
            fc,
            "INT8",
            fully_connected(weights="INT16", bias=None),
        ),
        Case(
            f"{fc}.INT16.int16_weights_refused",
            fc,
            "INT16",
            fully_connected("INT16", weights="INT16"),
        ),
        Case(
            f"{fc}.INT8.int4_per_channel_refused",
            fc,
            "INT8",
            fully_connected(weights="INT4", per_channel=8),
        ),
        Case(f"{fc}.INT8.bias_scale_refused", fc, "INT8", fully_connected(bias_scale=0.5)),
        Case(
            f"{fc}.INT8.weights_format_refused",
            fc,
            "INT8",
            fully_connected(options={"weights_format": 2}),
        ),
        Case(f"{fc}.UINT8.invoke_refused", fc, "UINT8", fully_connected("UINT8", weights="UINT8")),
    ]
    # Per-channel: two int32 arrays of C entries written over the kernel's live temps.
    for channels in (2, 3, 4, 5, 16, 33):
        cases.append(
            Case(
                f"{fc}.INT8.channels{channels}",
                fc,
                "INT8",
                fully_connected(units=channels, per_channel=channels),
                scan_bytes=SCAN,
            )
        )
    cases += [
        Case(
            f"{fc}.INT8.per_channel16_bias_omitted",
            fc,
            "INT8",
            fully_connected(units=16, per_channel=16, bias="omitted"),
            scan_bytes=SCAN,
        ),
        Case(
            f"{fc}.INT8.per_channel8_batch3",
            fc,
            "INT8",
            fully_connected(per_channel=8, input_shape=(3, 32), output_shape=(3, 8)),
            scan_bytes=SCAN,
        ),
        Case(
            f"{fc}.INT8.per_channel8_keep_num_dims",
            fc,
            "INT8",
            fully_connected(
                per_channel=8,
                input_shape=(2, 3, 32),
                output_shape=(2, 3, 8),
                options={"keep_num_dims": True},
            ),
            scan_bytes=SCAN,
        ),
        Case(
            f"{fc}.INT16.per_channel2",
            fc,
            "INT16",
            fully_connected("INT16", units=2, per_channel=2),
            scan_bytes=SCAN,
        ),
        Case(
            f"{fc}.INT16.per_channel8",
            fc,
            "INT16",
            fully_connected("INT16", per_channel=8),
            scan_bytes=SCAN,
        ),
    ]
    return cases


# ---------------------------------------------------------------------------------------------
# CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV


def conv(
    dtype: str = "INT8",
    weights: str | None = None,
    *,
    channels: int = 8,
    in_channels: int = 4,
    per_channel: bool = True,
    scales: int | None = None,
    bias: str | None = "auto",
) -> Callable[[], bytes]:
    weights = weights or ("FLOAT32" if dtype == "FLOAT32" else "INT8")

    def build() -> bytes:
        count = scales if scales is not None else (channels if per_channel else 0)
        wq = _weights_q(weights, channels, count, 0)
        operands: list[Any] = [
            In((1, 6, 6, in_channels), dtype),
            _weights((channels, 3, 3, in_channels), weights, wq),
        ]
        if bias == "omitted":
            operands.append(OMITTED)
        elif bias is not None:
            kind = _default_bias(dtype) if bias == "auto" else bias
            operands.append(_bias(channels, kind, dtype, wq))
        out = Out((1, 4, 4, channels), dtype)
        return single_op(Op("CONV_2D", operands, [out], options={"padding": "VALID"}))

    return build


def depthwise(
    dtype: str = "INT8",
    weights: str | None = None,
    *,
    in_channels: int = 8,
    multiplier: int = 1,
    per_channel: bool = True,
    bias: str | None = "auto",
) -> Callable[[], bytes]:
    weights = weights or ("FLOAT32" if dtype == "FLOAT32" else "INT8")
    channels = in_channels * multiplier

    def build() -> bytes:
        wq = _weights_q(weights, channels, channels if per_channel else 0, 3)
        operands: list[Any] = [
            In((1, 6, 6, in_channels), dtype),
            _weights((1, 3, 3, channels), weights, wq),
        ]
        if bias == "omitted":
            operands.append(OMITTED)
        elif bias is not None:
            kind = _default_bias(dtype) if bias == "auto" else bias
            operands.append(_bias(channels, kind, dtype, wq))
        out = Out((1, 4, 4, channels), dtype)
        options = {"padding": "VALID", "depth_multiplier": multiplier}
        return single_op(Op("DEPTHWISE_CONV_2D", operands, [out], options=options))

    return build


def transpose_conv(
    dtype: str = "INT8",
    weights: str | None = None,
    *,
    channels: int = 8,
    in_channels: int = 4,
    size: int = 4,
    stride: int = 2,
    per_channel: bool = True,
    bias: str | None = "auto",
) -> Callable[[], bytes]:
    weights = weights or ("FLOAT32" if dtype == "FLOAT32" else "INT8")

    def build() -> bytes:
        out_size = size * stride
        wq = _weights_q(weights, channels, channels if per_channel else 0, 0)
        operands: list[Any] = [
            Const(np.array([1, out_size, out_size, channels], np.int32), "INT32"),
            _weights((channels, 3, 3, in_channels), weights, wq),
            In((1, size, size, in_channels), dtype),
        ]
        if bias is not None:
            kind = _default_bias(dtype) if bias == "auto" else bias
            operands.append(_bias(channels, kind, dtype, wq))
        out = Out((1, out_size, out_size, channels), dtype)
        options = {"padding": "SAME", "stride_w": stride, "stride_h": stride}
        return single_op(Op("TRANSPOSE_CONV", operands, [out], options=options))

    return build


def _conv_cases() -> list[Case]:
    cv, dw, tc = "CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"
    cases = [
        Case(f"{cv}.FLOAT32.bias", cv, "FLOAT32", conv("FLOAT32", channels=3)),
        Case(f"{cv}.FLOAT32.two_inputs", cv, "FLOAT32", conv("FLOAT32", bias=None)),
        Case(f"{cv}.FLOAT32.bias_omitted", cv, "FLOAT32", conv("FLOAT32", bias="omitted")),
        Case(f"{cv}.INT8.per_tensor", cv, "INT8", conv(per_channel=False)),
        Case(f"{cv}.INT8.per_tensor_two_inputs", cv, "INT8", conv(per_channel=False, bias=None)),
        Case(f"{cv}.INT8.per_channel8_bias_omitted", cv, "INT8", conv(bias="omitted")),
        Case(f"{cv}.INT8.int4_per_tensor", cv, "INT8", conv(weights="INT4", per_channel=False)),
        Case(f"{cv}.INT8.int4_per_channel", cv, "INT8", conv(weights="INT4")),
        Case(f"{cv}.INT8.in_channels13", cv, "INT8", conv(channels=5, in_channels=13)),
        Case(f"{cv}.INT16.bias_int64", cv, "INT16", conv("INT16")),
        Case(f"{cv}.INT16.bias_int32", cv, "INT16", conv("INT16", bias="INT32")),
        Case(f"{cv}.INT16.no_bias", cv, "INT16", conv("INT16", bias=None)),
        Case(f"{cv}.INT16.bias_int16_invoke_refused", cv, "INT16", conv("INT16", bias="INT16")),
        Case(f"{cv}.FLOAT32.hybrid_refused", cv, "FLOAT32", conv("FLOAT32", "INT8", bias=None)),
        Case(f"{cv}.UINT8.refused", cv, "UINT8", conv("UINT8", "UINT8", per_channel=False)),
        Case(f"{cv}.INT16.int16_weights_refused", cv, "INT16", conv("INT16", "INT16")),
        Case(f"{cv}.INT8.scale_count_refused", cv, "INT8", conv(scales=3)),
    ]
    for channels in (1, 2, 3, 5, 16):
        cases.append(Case(f"{cv}.INT8.per_channel{channels}", cv, "INT8", conv(channels=channels)))
    cases += [
        Case(f"{dw}.FLOAT32.bias", dw, "FLOAT32", depthwise("FLOAT32")),
        Case(f"{dw}.FLOAT32.two_inputs", dw, "FLOAT32", depthwise("FLOAT32", bias=None)),
        Case(f"{dw}.INT8.per_channel8", dw, "INT8", depthwise()),
        Case(f"{dw}.INT8.per_tensor", dw, "INT8", depthwise(per_channel=False)),
        Case(f"{dw}.INT8.multiplier2", dw, "INT8", depthwise(in_channels=5, multiplier=2)),
        Case(f"{dw}.INT8.two_inputs", dw, "INT8", depthwise(bias=None)),
        Case(f"{dw}.INT8.int4", dw, "INT8", depthwise(weights="INT4")),
        Case(f"{dw}.INT16.bias_int64", dw, "INT16", depthwise("INT16")),
        Case(f"{dw}.INT8.bias_omitted_crash", dw, "INT8", depthwise(bias="omitted")),
        Case(
            f"{dw}.FLOAT32.bias_omitted_crash", dw, "FLOAT32", depthwise("FLOAT32", bias="omitted")
        ),
        Case(
            f"{dw}.FLOAT32.hybrid_refused", dw, "FLOAT32", depthwise("FLOAT32", "INT8", bias=None)
        ),
        Case(
            f"{dw}.UINT8.invoke_refused",
            dw,
            "UINT8",
            depthwise("UINT8", "UINT8", per_channel=False),
        ),
        Case(
            f"{dw}.INT16.int16_weights_invoke_refused",
            dw,
            "INT16",
            depthwise("INT16", "INT16", per_channel=False),
        ),
    ]
    cases += [
        Case(f"{tc}.FLOAT32.bias", tc, "FLOAT32", transpose_conv("FLOAT32")),
        Case(
            f"{tc}.FLOAT32.no_bias_stride1",
            tc,
            "FLOAT32",
            transpose_conv("FLOAT32", stride=1, bias=None),
        ),
        Case(f"{tc}.INT8.per_channel", tc, "INT8", transpose_conv()),
        Case(f"{tc}.INT8.per_tensor", tc, "INT8", transpose_conv(per_channel=False)),
        Case(f"{tc}.INT8.no_bias", tc, "INT8", transpose_conv(bias=None)),
        Case(
            f"{tc}.INT8.stride1_large", tc, "INT8", transpose_conv(size=12, stride=1, channels=16)
        ),
        Case(f"{tc}.INT16.bias_int64", tc, "INT16", transpose_conv("INT16")),
        Case(f"{tc}.INT16.bias_int16", tc, "INT16", transpose_conv("INT16", bias="INT16")),
        Case(f"{tc}.INT16.no_bias", tc, "INT16", transpose_conv("INT16", bias=None)),
        Case(
            f"{tc}.FLOAT32.hybrid_refused",
            tc,
            "FLOAT32",
            transpose_conv("FLOAT32", "INT8", bias=None),
        ),
        Case(f"{tc}.INT8.int4_refused", tc, "INT8", transpose_conv(weights="INT4")),
        Case(
            f"{tc}.UINT8.invoke_refused",
            tc,
            "UINT8",
            transpose_conv("UINT8", "UINT8", per_channel=False),
        ),
    ]
    return cases


# ---------------------------------------------------------------------------------------------
# BATCH_MATMUL


def batch_matmul(
    lhs: Sequence[int],
    rhs: Sequence[int],
    out: Sequence[int],
    dtype: str = "FLOAT32",
    *,
    adj_x: bool = False,
    adj_y: bool = False,
    constant: str = "",  # "lhs", "rhs" or ""
    rhs_dtype: str | None = None,
    zero_point: int = 0,
) -> Callable[[], bytes]:
    def operand(shape: Sequence[int], kind: str, is_constant: bool) -> In | Const:
        q = _activation_q(kind)
        if zero_point and kind == "INT16":
            q = quantization(1 / 32768, zero_point)
        if is_constant:
            return Const(np.ones(tuple(shape), _NUMPY[kind]), kind, q)
        return In(tuple(shape), kind, q)

    def build() -> bytes:
        right = rhs_dtype or dtype
        operands = [
            operand(lhs, dtype, constant == "lhs"),
            operand(rhs, right, constant == "rhs"),
        ]
        result = Out(tuple(out), dtype)
        options = {"adj_x": adj_x, "adj_y": adj_y}
        return single_op(Op("BATCH_MATMUL", operands, [result], options=options))

    return build


def _bmm_cases() -> list[Case]:
    bm = "BATCH_MATMUL"

    def case(name: str, dtype: str, build: Callable[[], bytes]) -> Case:
        return Case(f"{bm}.{dtype}.{name}", bm, dtype, build, scan_bytes=SCAN)

    left, right, result = (1, 4, 6), (1, 6, 5), (1, 4, 5)
    cases = [
        case("plain", "FLOAT32", batch_matmul(left, right, result)),
        case("adj_x", "FLOAT32", batch_matmul((1, 6, 4), right, result, adj_x=True)),
        case("adj_y", "FLOAT32", batch_matmul(left, (1, 5, 6), result, adj_y=True)),
        case(
            "adj_xy", "FLOAT32", batch_matmul((1, 6, 4), (1, 5, 6), result, adj_x=True, adj_y=True)
        ),
        case("const_rhs", "FLOAT32", batch_matmul(left, right, result, constant="rhs")),
        case(
            "const_rhs_adj_y",
            "FLOAT32",
            batch_matmul(left, (1, 5, 6), result, adj_y=True, constant="rhs"),
        ),
        case("rank2", "FLOAT32", batch_matmul((4, 6), (6, 5), (4, 5))),
        case("broadcast_rank4", "FLOAT32", batch_matmul((2, 3, 4, 6), (1, 3, 6, 5), (2, 3, 4, 5))),
        case("rank5", "FLOAT32", batch_matmul((2, 1, 2, 4, 6), (2, 2, 1, 6, 5), (2, 2, 2, 4, 5))),
        case("output_rank4", "FLOAT32", batch_matmul((4, 6), (6, 5), (1, 1, 4, 5))),
        case(
            "large_const_rhs",
            "FLOAT32",
            batch_matmul((1, 2, 64), (64, 128), (1, 2, 128), constant="rhs"),
        ),
        case("plain", "INT8", batch_matmul(left, right, result, "INT8")),
        case("const_lhs", "INT8", batch_matmul(left, right, result, "INT8", constant="lhs")),
        case(
            "const_rhs_adj_y",
            "INT8",
            batch_matmul(left, (1, 5, 6), result, "INT8", adj_y=True, constant="rhs"),
        ),
        case(
            "adj_xy",
            "INT8",
            batch_matmul((1, 6, 4), (1, 5, 6), result, "INT8", adj_x=True, adj_y=True),
        ),
        case("adj_x", "INT8", batch_matmul((2, 6, 4), (2, 6, 5), (2, 4, 5), "INT8", adj_x=True)),
        case("plain", "INT16", batch_matmul(left, right, result, "INT16")),
        case("adj_x", "INT16", batch_matmul((1, 6, 4), right, result, "INT16", adj_x=True)),
        case("int32_refused", "INT32", batch_matmul(left, right, result, "INT32")),
        case("mixed_refused", "FLOAT32", batch_matmul(left, right, result, rhs_dtype="INT8")),
        case("rank1_refused", "FLOAT32", batch_matmul((6,), (6, 5), (5,))),
        case(
            "zero_point_refused", "INT16", batch_matmul(left, right, result, "INT16", zero_point=3)
        ),
    ]
    return cases


# ---------------------------------------------------------------------------------------------
# SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM


def svdf(
    dtype: str = "FLOAT32",
    *,
    time_weights: str = "INT16",
    state: str = "INT16",
    batch: int = 1,
    rank: int = 1,
    filters: int = 8,
    memory: int = 4,
    inputs: int = 8,
    bias: str = "present",  # "present", "omitted" (-1), "dropped" (a 4-input node)
) -> Callable[[], bytes]:
    units = filters // rank if filters % rank == 0 else filters

    def build() -> bytes:
        operands: list[Any]
        if dtype == "FLOAT32":
            operands = [
                In((batch, inputs), "FLOAT32"),
                Const(np.ones((filters, inputs), np.float32), "FLOAT32"),
                Const(np.ones((filters, memory), np.float32), "FLOAT32"),
                Const(np.zeros(units, np.float32), "FLOAT32"),
                Var((batch, memory * filters), "FLOAT32", None),
            ]
            out = Out((batch, units), "FLOAT32")
        else:
            time_q = quantization(0.02, 0)
            state_q = quantization(0.05, 0)
            operands = [
                In((batch, inputs), dtype),
                Const(np.ones((filters, inputs), np.int8), "INT8", Q8),
                Const(np.ones((filters, memory), _NUMPY[time_weights]), time_weights, time_q),
                Const(np.zeros(units, np.int32), "INT32", quantization(0.05 * 0.02, 0)),
                Var((batch, memory * filters), state, state_q),
            ]
            out = Out((batch, units), dtype)
        if bias == "omitted":
            operands[3] = OMITTED
        elif bias == "dropped":
            del operands[3]
        return single_op(Op("SVDF", operands, [out], options={"rank": rank}))

    return build


def lstm(
    dtype: str = "FLOAT32",
    *,
    batch: int = 1,
    steps: int = 3,
    inputs: int = 4,
    state: int = 6,
    per_channel: bool = False,
    time_major: bool = False,
    cell: str | None = None,
    weights: str | None = None,
    peephole: bool = False,
    projection: bool = False,
    layer_norm: bool = False,
    state_variable: bool = True,
    drop_last_input: bool = False,
) -> Callable[[], bytes]:
    is_float = dtype == "FLOAT32"
    weight_type = weights or ("FLOAT32" if is_float else "INT8")
    cell_type = cell or ("FLOAT32" if is_float else "INT16")
    bias_type = {"FLOAT32": "FLOAT32", "INT8": "INT32", "INT16": "INT64"}[dtype]
    if weight_type == "FLOAT32":
        bias_type = "FLOAT32"

    def matrix(rows: int, columns: int) -> Const:
        if weight_type == "FLOAT32":
            return Const(np.full((rows, columns), 0.1, np.float32), "FLOAT32")
        q = quantization(_scales(rows), 0) if per_channel else quantization(0.01, 0)
        return Const(np.ones((rows, columns), np.int8), "INT8", q)

    def vector(kind: str) -> Const:
        q = None if kind == "FLOAT32" else quantization(0.0005, 0)
        return Const(np.zeros(state, _NUMPY[kind]), kind, q)

    def build() -> bytes:
        activation_q = None if is_float else quantization(0.05, 0)
        source = (steps, batch, inputs) if time_major else (batch, steps, inputs)
        result = (steps, batch, state) if time_major else (batch, steps, state)
        operands: list[Any] = [In(source, dtype, activation_q)]
        operands += [matrix(state, inputs) for _ in range(4)]
        operands += [matrix(state, state) for _ in range(4)]
        operands += [vector("FLOAT32") if peephole else OMITTED for _ in range(3)]
        operands += [vector(bias_type) for _ in range(4)]
        if projection:
            operands += [Const(np.full((state, state), 0.1, np.float32), "FLOAT32"), OMITTED]
        else:
            operands += [OMITTED, OMITTED]
        state_q = None if is_float else activation_q
        cell_q = None if cell_type == "FLOAT32" else quantization(2.0**-11, 0)
        if state_variable:
            operands.append(Var((batch, state), dtype, state_q))
        else:
            operands.append(In((batch, state), dtype, state_q))
        operands.append(Var((batch, state), cell_type, cell_q))
        operands += [vector("FLOAT32") if layer_norm else OMITTED for _ in range(4)]
        if drop_last_input:
            operands.pop()
        options = {"fused_activation_function": "TANH", "time_major": time_major}
        out = Out(result, dtype, activation_q)
        return single_op(Op("UNIDIRECTIONAL_SEQUENCE_LSTM", operands, [out], options=options))

    return build


def _recurrent_cases() -> list[Case]:
    sv, ls = "SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM"
    cases = [
        Case(f"{sv}.FLOAT32.rank1", sv, "FLOAT32", svdf()),
        Case(f"{sv}.FLOAT32.rank2_batch2", sv, "FLOAT32", svdf(rank=2, batch=2)),
        Case(f"{sv}.INT8.time_int16_state_int16", sv, "INT8", svdf("INT8")),
        Case(
            f"{sv}.INT8.time_int8_state_int8",
            sv,
            "INT8",
            svdf("INT8", time_weights="INT8", state="INT8"),
        ),
        Case(f"{sv}.INT8.time_int16_state_int8", sv, "INT8", svdf("INT8", state="INT8")),
        Case(f"{sv}.INT8.rank4_batch3", sv, "INT8", svdf("INT8", rank=4, batch=3)),
        Case(f"{sv}.FLOAT32.bias_omitted_crash", sv, "FLOAT32", svdf(bias="omitted")),
        Case(f"{sv}.INT8.bias_omitted_crash", sv, "INT8", svdf("INT8", bias="omitted")),
        Case(f"{sv}.FLOAT32.four_inputs_refused", sv, "FLOAT32", svdf(bias="dropped")),
        Case(f"{sv}.FLOAT32.rank_refused", sv, "FLOAT32", svdf(rank=3)),
        Case(f"{sv}.INT16.refused", sv, "INT16", svdf("INT16")),
    ]
    per_channel = {"scan_bytes": SCAN}
    cases += [
        Case(f"{ls}.FLOAT32.batch1", ls, "FLOAT32", lstm()),
        Case(f"{ls}.FLOAT32.time_major_batch2", ls, "FLOAT32", lstm(batch=2, time_major=True)),
        Case(f"{ls}.INT8.per_tensor", ls, "INT8", lstm("INT8")),
        Case(f"{ls}.INT8.per_channel", ls, "INT8", lstm("INT8", per_channel=True), **per_channel),
        Case(
            f"{ls}.INT8.per_channel_time_major_batch2",
            ls,
            "INT8",
            lstm("INT8", per_channel=True, time_major=True, batch=2),
            **per_channel,
        ),
        Case(f"{ls}.INT16.per_tensor", ls, "INT16", lstm("INT16")),
        Case(
            f"{ls}.INT16.per_channel", ls, "INT16", lstm("INT16", per_channel=True), **per_channel
        ),
        Case(f"{ls}.INT8.float_cell", ls, "INT8", lstm("INT8", cell="FLOAT32")),
        Case(f"{ls}.FLOAT32.hybrid_int8_weights", ls, "FLOAT32", lstm(weights="INT8")),
        Case(f"{ls}.FLOAT32.peephole_refused", ls, "FLOAT32", lstm(peephole=True)),
        Case(f"{ls}.FLOAT32.projection_refused", ls, "FLOAT32", lstm(projection=True)),
        Case(f"{ls}.FLOAT32.layer_norm_refused", ls, "FLOAT32", lstm(layer_norm=True)),
        Case(f"{ls}.INT8.int8_cell_refused", ls, "INT8", lstm("INT8", cell="INT8")),
        Case(f"{ls}.FLOAT32.state_not_variable_refused", ls, "FLOAT32", lstm(state_variable=False)),
        Case(f"{ls}.FLOAT32.inputs23_refused", ls, "FLOAT32", lstm(drop_last_input=True)),
    ]
    return cases


# ---------------------------------------------------------------------------------------------
# Pooling, softmax, normalisation


def pool(
    opcode: str,
    dtype: str = "FLOAT32",
    *,
    padding: str = "VALID",
    stride: int = 2,
    activation: str = "NONE",
    output_q: QuantizationSpec | None = None,
) -> Callable[[], bytes]:
    def build() -> bytes:
        size = -(-6 // stride) if padding == "SAME" else (6 - 2) // stride + 1
        q = _activation_q(dtype)
        options = {
            "padding": padding,
            "stride_w": stride,
            "stride_h": stride,
            "filter_width": 2,
            "filter_height": 2,
            "fused_activation_function": activation,
        }
        out = Out((1, size, size, 4), dtype, output_q or q)
        return single_op(Op(opcode, [In((1, 6, 6, 4), dtype, q)], [out], options=options))

    return build


def softmax(
    dtype: str = "FLOAT32",
    output: str | None = None,
    *,
    shape: Sequence[int] = (1, 40),
    output_q: QuantizationSpec | None = None,
    input_q: QuantizationSpec | None = None,
) -> Callable[[], bytes]:
    output = output or dtype
    defaults = {
        ("INT8", "INT8"): quantization(1 / 256, -128),
        ("INT8", "INT16"): quantization(1 / 65536, -32768),
        ("INT16", "INT16"): quantization(1 / 32768, 0),
        ("UINT8", "UINT8"): quantization(1 / 256, 0),
    }

    def build() -> bytes:
        iq = input_q or (
            None if dtype == "FLOAT32" else quantization(0.1 if dtype != "INT16" else 0.001, 0)
        )
        oq = output_q or defaults.get((dtype, output))
        out = Out(tuple(shape), output, oq)
        return single_op(Op("SOFTMAX", [In(tuple(shape), dtype, iq)], [out], options={"beta": 1.0}))

    return build


def log_softmax(
    dtype: str = "FLOAT32", *, shape: Sequence[int] = (1, 40), output_scale: float = 16 / 256
) -> Callable[[], bytes]:
    def build() -> bytes:
        iq = None if dtype == "FLOAT32" else quantization(0.1, 0)
        oq = None if dtype == "FLOAT32" else quantization(output_scale, 127)
        out = Out(tuple(shape), dtype, oq)
        return single_op(Op("LOG_SOFTMAX", [In(tuple(shape), dtype, iq)], [out]))

    return build


def l2_normalization(
    dtype: str = "FLOAT32", *, shape: Sequence[int] = (1, 4, 4, 8), activation: str = "NONE"
) -> Callable[[], bytes]:
    def build() -> bytes:
        q = None if dtype == "FLOAT32" else quantization(1 / 128, 0)
        out = Out(tuple(shape), dtype, q)
        options = {"fused_activation_function": activation}
        return single_op(
            Op("L2_NORMALIZATION", [In(tuple(shape), dtype, q)], [out], options=options)
        )

    return build


def _pool_softmax_cases() -> list[Case]:
    cases: list[Case] = []
    for opcode in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        for dtype in ("FLOAT32", "INT8", "INT16"):
            cases.append(Case(f"{opcode}.{dtype}.valid", opcode, dtype, pool(opcode, dtype)))
        cases += [
            Case(
                f"{opcode}.INT8.same_relu6",
                opcode,
                "INT8",
                pool(opcode, "INT8", padding="SAME", stride=1, activation="RELU6"),
            ),
            Case(f"{opcode}.UINT8.refused", opcode, "UINT8", pool(opcode, "UINT8")),
            Case(
                f"{opcode}.INT8.scale_refused",
                opcode,
                "INT8",
                pool(opcode, "INT8", output_q=quantization(0.2, 0)),
            ),
        ]
    cases += [
        Case(
            "AVERAGE_POOL_2D.FLOAT32.same_stride1",
            "AVERAGE_POOL_2D",
            "FLOAT32",
            pool("AVERAGE_POOL_2D", padding="SAME", stride=1),
        ),
        Case(
            "MAX_POOL_2D.INT16.zero_point_refused",
            "MAX_POOL_2D",
            "INT16",
            pool("MAX_POOL_2D", "INT16", output_q=quantization(1 / 32768, 3)),
        ),
    ]
    l2 = "L2_POOL_2D"
    cases += [
        Case(f"{l2}.FLOAT32.valid_stride2", l2, "FLOAT32", pool(l2), scan_bytes=SCAN),
        Case(
            f"{l2}.FLOAT32.same_stride1",
            l2,
            "FLOAT32",
            pool(l2, padding="SAME", stride=1),
            scan_bytes=SCAN,
        ),
        Case(f"{l2}.INT8.refused", l2, "INT8", pool(l2, "INT8")),
    ]
    sm = "SOFTMAX"
    for rank, shape in (("rank2", (1, 40)), ("rank4", (1, 2, 3, 10))):
        cases += [
            Case(f"{sm}.FLOAT32.{rank}", sm, "FLOAT32", softmax(shape=shape)),
            Case(f"{sm}.INT8.{rank}", sm, "INT8", softmax("INT8", shape=shape)),
            Case(
                f"{sm}.INT8.int16_output_{rank}", sm, "INT8", softmax("INT8", "INT16", shape=shape)
            ),
            Case(f"{sm}.INT16.{rank}", sm, "INT16", softmax("INT16", shape=shape), scan_bytes=SCAN),
        ]
    cases += [
        Case(
            f"{sm}.INT8.output_zero_point_refused",
            sm,
            "INT8",
            softmax("INT8", output_q=quantization(1 / 256, 0)),
        ),
        Case(
            f"{sm}.INT16.zero_point_refused",
            sm,
            "INT16",
            softmax("INT16", input_q=quantization(0.001, 5)),
        ),
        Case(f"{sm}.UINT8.refused", sm, "UINT8", softmax("UINT8")),
    ]
    lsm = "LOG_SOFTMAX"
    cases += [
        Case(f"{lsm}.FLOAT32.rank2", lsm, "FLOAT32", log_softmax()),
        Case(f"{lsm}.INT8.rank2", lsm, "INT8", log_softmax("INT8"), scan_bytes=SCAN),
        Case(
            f"{lsm}.INT8.rank4",
            lsm,
            "INT8",
            log_softmax("INT8", shape=(1, 2, 3, 10)),
            scan_bytes=SCAN,
        ),
        Case(f"{lsm}.INT16.invoke_refused", lsm, "INT16", log_softmax("INT16")),
        Case(
            f"{lsm}.INT8.output_scale_refused", lsm, "INT8", log_softmax("INT8", output_scale=0.1)
        ),
    ]
    l2n = "L2_NORMALIZATION"
    cases += [
        Case(f"{l2n}.FLOAT32.rank4", l2n, "FLOAT32", l2_normalization()),
        Case(f"{l2n}.FLOAT32.rank2", l2n, "FLOAT32", l2_normalization(shape=(3, 16))),
        Case(f"{l2n}.INT8.rank4", l2n, "INT8", l2_normalization("INT8")),
        Case(f"{l2n}.INT8.rank2", l2n, "INT8", l2_normalization("INT8", shape=(3, 16))),
        Case(f"{l2n}.INT16.refused", l2n, "INT16", l2_normalization("INT16")),
        Case(f"{l2n}.FLOAT32.relu_refused", l2n, "FLOAT32", l2_normalization(activation="RELU")),
        Case(
            f"{l2n}.FLOAT32.rank5_refused", l2n, "FLOAT32", l2_normalization(shape=(1, 2, 2, 2, 8))
        ),
    ]
    return cases


# ---------------------------------------------------------------------------------------------
# EMBEDDING_LOOKUP, PRELU, CUMSUM


def embedding_lookup(
    value: str = "FLOAT32",
    output: str | None = None,
    *,
    rows: int = 10,
    columns: Sequence[int] = (8,),
    lookups: int = 3,
    lookup: str = "INT32",
    output_shape: Sequence[int] | None = None,
) -> Callable[[], bytes]:
    output = output or value

    def build() -> bytes:
        vq = None if value == "FLOAT32" else quantization(0.1, 0)
        oq = None if output == "FLOAT32" else quantization(0.1, 0)
        table = Const(np.ones((rows, *columns), _NUMPY[value]), value, vq)
        ids = In((lookups,), lookup, None)
        out = Out(tuple(output_shape or (lookups, *columns)), output, oq)
        return single_op(Op("EMBEDDING_LOOKUP", [ids, table], [out]))

    return build


def prelu(
    dtype: str = "FLOAT32",
    alpha: str | None = None,
    *,
    alpha_shape: Sequence[int] = (8,),
) -> Callable[[], bytes]:
    alpha = alpha or dtype

    def build() -> bytes:
        q = _activation_q(dtype)
        aq = None if alpha == "FLOAT32" else quantization(0.05, 0)
        slope = Const(np.ones(tuple(alpha_shape), _NUMPY[alpha]), alpha, aq)
        shape = (1, 4, 4, 8)
        return single_op(Op("PRELU", [In(shape, dtype, q), slope], [Out(shape, dtype, q)]))

    return build


def cumsum(
    dtype: str = "FLOAT32",
    *,
    shape: Sequence[int] = (2, 8),
    axis: int = 1,
    axis_type: str = "INT32",
    exclusive: bool = False,
    reverse: bool = False,
) -> Callable[[], bytes]:
    def build() -> bytes:
        q = _activation_q(dtype)
        axis_tensor = Const(np.array([axis], _NUMPY[axis_type]), axis_type)
        options = {"exclusive": exclusive, "reverse": reverse}
        out = Out(tuple(shape), dtype, q)
        return single_op(
            Op("CUMSUM", [In(tuple(shape), dtype, q), axis_tensor], [out], options=options)
        )

    return build


def _misc_cases() -> list[Case]:
    em, pr, cs = "EMBEDDING_LOOKUP", "PRELU", "CUMSUM"
    cases = [
        Case(f"{em}.FLOAT32.rank2", em, "FLOAT32", embedding_lookup(), scan_bytes=SCAN),
        Case(
            f"{em}.FLOAT32.rank3", em, "FLOAT32", embedding_lookup(columns=(2, 4)), scan_bytes=SCAN
        ),
        Case(f"{em}.INT8.rank2", em, "INT8", embedding_lookup("INT8"), scan_bytes=SCAN),
        Case(
            f"{em}.INT8.float_output",
            em,
            "INT8",
            embedding_lookup("INT8", "FLOAT32"),
            scan_bytes=SCAN,
        ),
        Case(
            f"{em}.INT8.float_output_rank3",
            em,
            "INT8",
            embedding_lookup("INT8", "FLOAT32", columns=(2, 4)),
            scan_bytes=SCAN,
        ),
        Case(
            f"{em}.FLOAT32.output_rank3",
            em,
            "FLOAT32",
            embedding_lookup(output_shape=(3, 8, 1)),
            scan_bytes=SCAN,
        ),
        Case(f"{em}.FLOAT32.int64_lookup_refused", em, "FLOAT32", embedding_lookup(lookup="INT64")),
        Case(f"{em}.INT16.refused", em, "INT16", embedding_lookup("INT16")),
        Case(
            f"{em}.FLOAT32.int8_output_refused", em, "FLOAT32", embedding_lookup("FLOAT32", "INT8")
        ),
    ]
    for dtype, alpha in (("FLOAT32", "FLOAT32"), ("INT8", "INT8"), ("INT16", "INT8")):
        cases += [
            Case(f"{pr}.{dtype}.alpha_channels", pr, dtype, prelu(dtype, alpha)),
            Case(
                f"{pr}.{dtype}.alpha_full", pr, dtype, prelu(dtype, alpha, alpha_shape=(1, 4, 4, 8))
            ),
        ]
    cases += [
        Case(f"{pr}.INT8.alpha_rank4", pr, "INT8", prelu("INT8", alpha_shape=(1, 1, 1, 8))),
        Case(f"{pr}.INT16.int16_alpha_refused", pr, "INT16", prelu("INT16", "INT16")),
        Case(f"{pr}.UINT8.invoke_refused", pr, "UINT8", prelu("UINT8")),
    ]
    cases += [
        Case(f"{cs}.FLOAT32.rank1", cs, "FLOAT32", cumsum(shape=(8,), axis=0)),
        Case(f"{cs}.FLOAT32.rank2", cs, "FLOAT32", cumsum()),
        Case(
            f"{cs}.FLOAT32.rank4_exclusive_reverse",
            cs,
            "FLOAT32",
            cumsum(shape=(1, 2, 3, 4), axis=2, exclusive=True, reverse=True),
        ),
        Case(f"{cs}.INT8.rank1", cs, "INT8", cumsum("INT8", shape=(8,), axis=0), scan_bytes=SCAN),
        Case(f"{cs}.INT8.rank2", cs, "INT8", cumsum("INT8"), scan_bytes=SCAN),
        Case(
            f"{cs}.INT8.rank4_reverse",
            cs,
            "INT8",
            cumsum("INT8", shape=(1, 2, 3, 4), axis=3, reverse=True),
            scan_bytes=SCAN,
        ),
        Case(f"{cs}.INT16.refused", cs, "INT16", cumsum("INT16")),
        Case(f"{cs}.FLOAT32.int64_axis_refused", cs, "FLOAT32", cumsum(axis_type="INT64")),
    ]
    return cases


# ---------------------------------------------------------------------------------------------
# Custom operators: TFLite_Detection_PostProcess, CIRCULAR_BUFFER, ethos-u


def detection(
    boxes: int = 20,
    classes: int = 3,
    detections: int = 5,
    *,
    regular: bool = False,
    background: bool = True,
    per_class: int | None = None,
    dtype: str = "FLOAT32",
) -> Callable[[], bytes]:
    def build() -> bytes:
        options: dict[str, Any] = {
            "max_detections": detections,
            "max_classes_per_detection": 1,
            "use_regular_nms": regular,
            "nms_score_threshold": 0.3,
            "nms_iou_threshold": 0.6,
            "num_classes": classes,
            "y_scale": 10.0,
            "x_scale": 10.0,
            "h_scale": 5.0,
            "w_scale": 5.0,
        }
        if per_class is not None:
            options["detections_per_class"] = per_class
        q = _activation_q(dtype)
        anchors = np.tile(np.array([0.5, 0.5, 0.2, 0.2], np.float32), (boxes, 1))
        operands = [
            In((1, boxes, 4), dtype, q),
            In((1, boxes, classes + (1 if background else 0)), dtype, q),
            Const(anchors, "FLOAT32"),
        ]
        outputs = [
            Out((1, detections, 4), "FLOAT32"),
            Out((1, detections), "FLOAT32"),
            Out((1, detections), "FLOAT32"),
            Out((1,), "FLOAT32"),
        ]
        return single_op(
            Op("CUSTOM:TFLite_Detection_PostProcess", operands, outputs, custom=options)
        )

    return build


def circular_buffer(
    slots: int = 5, depth: int = 8, *, cycles: int | None = None, dtype: str = "INT8"
) -> Callable[[], bytes]:
    def build() -> bytes:
        q = _activation_q(dtype)
        custom = None if cycles is None else {"cycles_max": cycles}
        operand = In((1, 1, 1, depth), dtype, q)
        out = Out((1, slots, 1, depth), dtype, q)
        return single_op(Op("CUSTOM:CIRCULAR_BUFFER", [operand], [out], custom=custom))

    return build


def ethos_u() -> bytes:
    """A Vela-style model: one ethos-u custom operator over a command stream and the weights."""
    stream = Const(np.zeros(64, np.uint8), "UINT8")
    weights = Const(np.zeros(128, np.uint8), "UINT8")
    source = In((1, 8, 8, 4), "INT8", Q8)
    op = Op("CUSTOM:ethos-u", [stream, weights, source], [Out((1, 8, 8, 4), "INT8", Q8)], custom={})
    return single_op(op)


def _custom_cases() -> list[Case]:
    dp, cb = "CUSTOM:TFLite_Detection_PostProcess", "CUSTOM:CIRCULAR_BUFFER"
    cases = [
        Case(f"{dp}.FLOAT32.fast_b20_c3_d5", dp, "FLOAT32", detection()),
        Case(
            f"{dp}.FLOAT32.regular_b20_c3_d5", dp, "FLOAT32", detection(regular=True, per_class=4)
        ),
        Case(f"{dp}.FLOAT32.fast_b100_c12_d4", dp, "FLOAT32", detection(100, 12, 4)),
        Case(
            f"{dp}.FLOAT32.regular_b100_c3_d20", dp, "FLOAT32", detection(100, 3, 20, regular=True)
        ),
        Case(
            f"{dp}.FLOAT32.no_background_b20_c12_d20",
            dp,
            "FLOAT32",
            detection(20, 12, 20, background=False),
        ),
        Case(f"{dp}.UINT8.invoke_refused", dp, "UINT8", detection(dtype="UINT8")),
    ]
    cases += [
        Case(f"{cb}.INT8.slots5", cb, "INT8", circular_buffer()),
        Case(f"{cb}.INT8.slots13_depth96", cb, "INT8", circular_buffer(13, 96)),
        Case(f"{cb}.INT8.cycles2", cb, "INT8", circular_buffer(cycles=2)),
        Case(f"{cb}.FLOAT32.refused", cb, "FLOAT32", circular_buffer(dtype="FLOAT32")),
    ]
    cases.append(Case("CUSTOM:ethos-u.INT8.not_registered", "CUSTOM:ethos-u", "INT8", ethos_u))
    return cases


# ---------------------------------------------------------------------------------------------
# TFLM_DECODE: compressed weights (tensorflow/lite/micro/compression) decoded before their consumer


def _decode_header(kind: int, *, version: int = 1, user: bytes = b"") -> bytes:
    """The 16-byte DECODE common metadata: type, DCM version, then type-specific bytes 4-15."""
    header = bytearray(16)
    header[0] = kind
    header[1] = version
    header[4 : 4 + len(user)] = user
    return bytes(header)


def _encoded(
    graph: Any,
    name: str,
    kind: int,
    original: np.ndarray,
    q: QuantizationSpec | None,
    *,
    version: int = 1,
) -> tuple[int, int]:
    """(encoded tensor, ancillary tensor) standing for `original` under one decode type: only
    the sizes and the header matter to setup (Prepare reads the header, Invoke the data)."""
    count = int(original.size)
    channels = len(q.scales) if q is not None else 1
    if kind == 0:  # LUT: 2-bit indices; byte 4 LUT version, 5 axis and bit width, 6 stride
        data = bytes((count * 2 + 7) // 8)
        axis = 0 if channels > 1 else 0xF
        user = bytes([1, (axis << 4) | 2, 4])
        tables = np.zeros(4 * channels, original.dtype).tobytes()
    elif kind == 2:  # pruning: a bitmap, then the kept values; byte 4 version
        data = bytes((count + 7) // 8)
        user, tables = bytes([1]), np.zeros(4, original.dtype).tobytes()
    elif kind == 1:  # Huffman: 32-bit codewords; byte 4 version, 5 table size (32-bit table)
        data = bytes(4 * ((count + 31) // 32))
        user, tables = bytes([1, 0x11]), bytes(8)
    else:
        data, user, tables = bytes(4), b"", b""
    ancillary = _decode_header(kind, version=version, user=user) + tables
    encoded = graph.add_tensor(f"{name}_encoded", [len(data)], "UINT8", data=data, quantization=q)
    side = graph.add_tensor(f"{name}_ancillary", [len(ancillary)], "UINT8", data=ancillary)
    return encoded, side


def decoded_fully_connected(
    kind: int = 0,
    *,
    units: int = 8,
    depth: int = 32,
    per_channel: bool = False,
    bias_too: bool = False,
    consumers: int = 1,
    version: int = 1,
) -> Callable[[], bytes]:
    """FULLY_CONNECTED layers whose weights (and bias) come out of DECODE operators, one DECODE
    before each consumer (as tensorflow/lite/micro/compression inserts them)."""

    def build() -> bytes:
        builder = ModelBuilder()
        graph = builder.add_subgraph("main")
        scales = _scales(units) if per_channel else [0.1]
        wq = quantization(scales, 0, axis=0)
        weights = np.ones((units, depth), np.int8)
        x = graph.add_tensor("x", [1, depth], "INT8", quantization=Q8)
        current = x
        # One compressed tensor, decoded again before each consumer.
        encoded, side = _encoded(graph, "w", kind, weights, wq, version=version)
        for layer in range(consumers):
            decoded = graph.add_tensor(f"w{layer}_decoded", [units, depth], "INT8", quantization=wq)
            decode_inputs = [encoded, side]
            decode_outputs = [decoded]
            bq = quantization([0.1 * s for s in scales], 0)
            bias_values = np.zeros(units, np.int32)
            if bias_too:
                b_encoded, b_side = _encoded(graph, f"b{layer}", 0, bias_values, None)
                bias = graph.add_tensor(f"b{layer}_decoded", [units], "INT32", quantization=bq)
                decode_inputs += [b_encoded, b_side]
                decode_outputs.append(bias)
            else:
                bias = graph.add_constant(f"b{layer}", bias_values, "INT32", quantization=bq)
            graph.add_operator("CUSTOM:TFLM_DECODE", decode_inputs, decode_outputs)
            y = graph.add_tensor(f"y{layer}", [1, units], "INT8", quantization=Q8)
            graph.add_operator("FULLY_CONNECTED", [current, decoded, bias], [y])
            current = y
        graph.set_inputs([x])
        graph.set_outputs([current])
        return builder.build()

    return build


def decoded_output(kind: int = 2, *, channels: int = 8, zero_point: int = 1) -> Callable[[], bytes]:
    """A DECODE whose output is the model's output: per-channel int8 weights with non-zero zero
    points (DecodeStatePrune copies them into the tail; FULLY_CONNECTED would refuse them)."""

    def build() -> bytes:
        builder = ModelBuilder()
        graph = builder.add_subgraph("main")
        wq = quantization(_scales(channels), zero_point, axis=0)
        encoded, side = _encoded(graph, "w", kind, np.ones((channels, 16), np.int8), wq)
        decoded = graph.add_tensor("w_decoded", [channels, 16], "INT8", quantization=wq)
        graph.add_operator("CUSTOM:TFLM_DECODE", [encoded, side], [decoded])
        graph.set_inputs([])
        graph.set_outputs([decoded])
        return builder.build()

    return build


def _decode_cases() -> list[Case]:
    dc = "CUSTOM:TFLM_DECODE"
    return [
        Case(f"{dc}.INT8.lut_per_tensor", dc, "INT8", decoded_fully_connected(), scan_bytes=SCAN),
        Case(
            f"{dc}.INT8.lut_per_channel16",
            dc,
            "INT8",
            decoded_fully_connected(units=16, per_channel=True),
            scan_bytes=SCAN,
        ),
        Case(
            f"{dc}.INT8.lut_weights_and_bias",
            dc,
            "INT8",
            decoded_fully_connected(bias_too=True),
            scan_bytes=SCAN,
        ),
        Case(
            f"{dc}.INT8.lut_two_consumers",
            dc,
            "INT8",
            decoded_fully_connected(units=32, consumers=2),
            scan_bytes=SCAN,
        ),
        Case(
            f"{dc}.INT8.prune_per_tensor", dc, "INT8", decoded_fully_connected(2), scan_bytes=SCAN
        ),
        Case(
            f"{dc}.INT8.prune_per_channel_zero_points",
            dc,
            "INT8",
            decoded_output(2),
            scan_bytes=SCAN,
        ),
        Case(f"{dc}.INT8.huffman", dc, "INT8", decoded_fully_connected(1), scan_bytes=SCAN),
        Case(
            f"{dc}.INT8.prune_per_channel_output",
            dc,
            "INT8",
            decoded_output(2, zero_point=0),
            scan_bytes=SCAN,
        ),
        Case(
            f"{dc}.INT8.lut_per_channel_output",
            dc,
            "INT8",
            decoded_output(0, zero_point=1),
            scan_bytes=SCAN,
        ),
        Case(f"{dc}.INT8.custom_type_refused", dc, "INT8", decoded_fully_connected(127)),
        Case(f"{dc}.INT8.version_refused", dc, "INT8", decoded_fully_connected(0, version=2)),
    ]


CASES = tuple(
    _fc_cases()
    + _conv_cases()
    + _bmm_cases()
    + _recurrent_cases()
    + _pool_softmax_cases()
    + _misc_cases()
    + _custom_cases()
    + _decode_cases()
)
