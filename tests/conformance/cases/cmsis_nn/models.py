"""The CMSIS-NN family's models: one builder per kernel, with the options and shapes that pick
CMSIS-NN's code path and buffers (the cases in `__init__` call them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arenalens.tflite.builder import QuantizationSpec, quantization
from tests.conformance.models import OMITTED, Const, In, Op, Out, Var, chain, single_op

Q8 = quantization(0.1, 0)
Q16 = quantization(1 / 32768, 0)
_NUMPY = {
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "FLOAT32": np.float32,
}


def _scales(count: int, axis: int = 0, base: float = 0.05) -> QuantizationSpec:
    return quantization([base + 0.001 * i for i in range(count)], 0, axis=axis)


def _activation_q(dtype: str) -> QuantizationSpec | None:
    return {"INT8": Q8, "INT16": Q16}.get(dtype)


def _out_size(size: int, kernel: int, stride: int, padding: str, dilation: int = 1) -> int:
    if padding == "SAME":
        return -(-size // stride)
    return (size - (kernel - 1) * dilation - 1) // stride + 1


def _filter(
    shape: Sequence[int], weights: str, *, channels: int, axis: int, per_channel: bool
) -> Const:
    """Constant weights: float, int8 or packed int4, per-channel or per-tensor quantized."""
    if weights == "FLOAT32":
        return Const(np.full(shape, 0.1, np.float32), "FLOAT32")
    q = _scales(channels, axis) if per_channel else quantization(0.05, 0)
    if weights == "INT4":
        count = int(np.prod(shape))
        return Const(bytes((count + 1) // 2), "INT4", q, shape=tuple(shape))
    return Const(np.ones(shape, np.int8), "INT8", q)


def _bias(count: int, dtype: str, bias_type: str | None, per_channel: bool) -> Const | None:
    if bias_type == "none":
        return None
    if dtype == "FLOAT32":
        return Const(np.zeros(count, np.float32), "FLOAT32")
    chosen = bias_type or ("INT32" if dtype == "INT8" else "INT64")
    q = _scales(count, base=0.005) if per_channel else quantization(0.005, 0)
    return Const(np.zeros(count, _NUMPY[chosen]), chosen, q)


def conv(
    height: int = 8,
    width: int = 8,
    *,
    channels: int = 4,
    outputs: int = 8,
    kernel: tuple[int, int] = (3, 3),
    stride: tuple[int, int] = (1, 1),
    padding: str = "SAME",
    dilation: int = 1,
    dtype: str = "INT8",
    weights: str | None = None,
    bias: str | None = None,
    per_channel: bool = True,
    batch: int = 1,
    filter_channels: int | None = None,
    zero_point: int = 0,
) -> Callable[[], bytes]:
    """CONV_2D on a [batch, height, width, channels] input; stride is (h, w)."""

    def build() -> bytes:
        kernel_h, kernel_w = kernel
        stride_h, stride_w = stride
        depth = channels if filter_channels is None else filter_channels
        out_h = _out_size(height, kernel_h, stride_h, padding, dilation)
        out_w = _out_size(width, kernel_w, stride_w, padding, dilation)
        weight_type = weights or ("FLOAT32" if dtype == "FLOAT32" else "INT8")
        q = _activation_q(dtype)
        if zero_point and q is not None:
            q = quantization(q.scales[0], zero_point)
        filt = _filter(
            (outputs, kernel_h, kernel_w, depth),
            weight_type,
            channels=outputs,
            axis=0,
            per_channel=per_channel,
        )
        operands: list[Any] = [In((batch, height, width, channels), dtype, q), filt]
        bias_tensor = _bias(outputs, dtype, bias, per_channel)
        if bias_tensor is not None:
            operands.append(bias_tensor)
        options = {
            "padding": padding,
            "stride_w": stride_w,
            "stride_h": stride_h,
            "dilation_wfactor": dilation,
            "dilation_hfactor": dilation,
        }
        out = Out((batch, out_h, out_w, outputs), dtype, q)
        return single_op(Op("CONV_2D", operands, [out], options))

    return build


def depthwise(
    height: int = 8,
    width: int = 8,
    *,
    channels: int = 4,
    multiplier: int = 1,
    kernel: tuple[int, int] = (3, 3),
    stride: int = 1,
    padding: str = "SAME",
    dilation: int = 1,
    dtype: str = "INT8",
    weights: str | None = None,
    per_channel: bool = True,
    batch: int = 1,
    zero_point: int = 0,
) -> Callable[[], bytes]:
    """DEPTHWISE_CONV_2D on a [batch, height, width, channels] input."""

    def build() -> bytes:
        kernel_h, kernel_w = kernel
        outputs = channels * multiplier
        out_h = _out_size(height, kernel_h, stride, padding, dilation)
        out_w = _out_size(width, kernel_w, stride, padding, dilation)
        weight_type = weights or ("FLOAT32" if dtype == "FLOAT32" else "INT8")
        q = _activation_q(dtype)
        if zero_point and q is not None:
            q = quantization(q.scales[0], zero_point)
        filt = _filter(
            (1, kernel_h, kernel_w, outputs),
            weight_type,
            channels=outputs,
            axis=3,
            per_channel=per_channel,
        )
        bias_tensor = _bias(outputs, dtype, None, per_channel)
        options = {
            "padding": padding,
            "stride_w": stride,
            "stride_h": stride,
            "dilation_wfactor": dilation,
            "dilation_hfactor": dilation,
            "depth_multiplier": multiplier,
        }
        out = Out((batch, out_h, out_w, outputs), dtype, q)
        operands = [In((batch, height, width, channels), dtype, q), filt, bias_tensor]
        return single_op(Op("DEPTHWISE_CONV_2D", operands, [out], options))

    return build


def fully_connected(
    *,
    batch: int = 1,
    depth: int = 32,
    units: int = 16,
    dtype: str = "INT8",
    weights: str | None = None,
    per_channel: bool = False,
    bias: bool = True,
    constant_weights: bool = True,
    constant_bias: bool = True,
    rank: int = 2,
    zero_point: int = 0,
) -> Callable[[], bytes]:
    """FULLY_CONNECTED: [batch, depth] x [units, depth] → [batch, units] (rank 3 / 4 outputs put
    the batch in the second-to-last axis and keep_num_dims)."""

    def build() -> bytes:
        leading = (1,) * (rank - 2)
        q = _activation_q(dtype)
        if zero_point and q is not None:
            q = quantization(q.scales[0], zero_point)
        weight_type = weights or ("FLOAT32" if dtype == "FLOAT32" else "INT8")
        operands: list[Any] = [In((*leading, batch, depth), dtype, q)]
        if dtype == "FLOAT32":
            w_q = None
        else:
            # Per-tensor: bias scale = input x weight scale (GetQuantizedConvolutionMultipler).
            w_q = (
                _scales(units) if per_channel else quantization(0.1 if dtype == "INT8" else 0.05, 0)
            )
        if not constant_weights:
            operands.append(In((units, depth), weight_type, w_q))
        elif weight_type == "INT4":
            operands.append(
                Const(bytes((units * depth + 1) // 2), "INT4", w_q, shape=(units, depth))
            )
        else:
            operands.append(Const(np.ones((units, depth), _NUMPY[weight_type]), weight_type, w_q))
        if not bias:
            operands.append(OMITTED)
        else:
            bias_type = {"FLOAT32": "FLOAT32", "INT8": "INT32", "INT16": "INT64"}[dtype]
            scale = (q.scales[0] if q is not None else 1.0) * (w_q.scales[0] if w_q else 1.0)
            b_q = None if dtype == "FLOAT32" else quantization(scale, 0)
            if constant_bias:
                operands.append(Const(np.zeros(units, _NUMPY[bias_type]), bias_type, b_q))
            else:
                operands.append(In((units,), bias_type, b_q))
        out = Out((*leading, batch, units), dtype, q)
        return single_op(Op("FULLY_CONNECTED", operands, [out], {"keep_num_dims": rank > 2}))

    return build


def batch_matmul(
    lhs: Sequence[int],
    rhs: Sequence[int],
    *,
    dtype: str = "INT8",
    adj_x: bool = False,
    adj_y: bool = False,
    constant_rhs: bool = False,
    zero_point: int = 0,
) -> Callable[[], bytes]:
    """BATCH_MATMUL lhs x rhs with broadcast batch dimensions."""

    def build() -> bytes:
        rank = max(len(lhs), len(rhs))
        left = [1] * (rank - len(lhs)) + list(lhs)
        right = [1] * (rank - len(rhs)) + list(rhs)
        batches = [max(a, b) for a, b in zip(left[:-2], right[:-2], strict=True)]
        rows = left[-1] if adj_x else left[-2]
        columns = right[-2] if adj_y else right[-1]
        q = _activation_q(dtype)
        if zero_point and q is not None:
            q = quantization(q.scales[0], zero_point)
        second: Any = (
            Const(np.ones(rhs, _NUMPY[dtype]), dtype, q)
            if constant_rhs
            else In(tuple(rhs), dtype, q)
        )
        out = Out((*batches, rows, columns), dtype, q)
        options = {"adj_x": adj_x, "adj_y": adj_y}
        return single_op(Op("BATCH_MATMUL", [In(tuple(lhs), dtype, q), second], [out], options))

    return build


def pool(
    opcode: str, channels: int = 20, dtype: str = "INT8", output_q: QuantizationSpec | None = None
) -> Callable[[], bytes]:
    """A 3x3 stride-1 SAME pool on an 8x8 input."""

    def build() -> bytes:
        q = _activation_q(dtype)
        options = {"padding": "SAME", "filter_width": 3, "filter_height": 3}
        out = Out((1, 8, 8, channels), dtype, output_q or q)
        return single_op(Op(opcode, [In((1, 8, 8, channels), dtype, q)], [out], options))

    return build


def softmax(
    shape: Sequence[int] = (2, 40),
    dtype: str = "INT8",
    output: str | None = None,
    zero_point: int | None = None,
) -> Callable[[], bytes]:
    """SOFTMAX with the output quantization TFLM demands (int8 → -128, 1/256; int16 → 0, 1/32768;
    int8 → int16: -32768, 1/65536), or an explicit output zero point."""

    def build() -> bytes:
        out_type = output or dtype
        in_q = {"INT8": quantization(0.1, 0), "INT16": quantization(1 / 4096, 0)}.get(dtype)
        out_q = {
            ("INT8", "INT8"): quantization(1 / 256, -128),
            ("INT16", "INT16"): quantization(1 / 32768, 0),
            ("INT8", "INT16"): quantization(1 / 65536, -32768),
        }.get((dtype, out_type))
        if zero_point is not None and out_q is not None:
            out_q = quantization(out_q.scales[0], zero_point)
        op = Op("SOFTMAX", [In(tuple(shape), dtype, in_q)], [Out(tuple(shape), out_type, out_q)])
        return single_op(op)

    return build


def svdf(
    *,
    batch: int = 1,
    inputs: int = 16,
    filters: int = 8,
    memory: int = 4,
    rank: int = 1,
    dtype: str = "INT8",
    time_type: str = "INT16",
    bias: bool = True,
    constant_features: bool = True,
) -> Callable[[], bytes]:
    """SVDF with its variable activation state; int8 scales satisfy TFLM's bias-scale check."""

    def build() -> bytes:
        units = filters // rank
        if dtype == "FLOAT32":
            features: Any = Const(np.full((filters, inputs), 0.1, np.float32), "FLOAT32")
            time = Const(np.full((filters, memory), 0.1, np.float32), "FLOAT32")
            bias_tensor = Const(np.zeros(units, np.float32), "FLOAT32") if bias else OMITTED
            state = Var((batch, memory * filters), "FLOAT32")
            operands = [In((batch, inputs), "FLOAT32"), features, time, bias_tensor, state]
            out = Out((batch, units), "FLOAT32")
            return single_op(Op("SVDF", operands, [out], {"rank": rank}))
        feature_q = quantization(0.1, 0)
        state_q = quantization(0.05, 0)
        time_q = quantization(0.2, 0)
        if constant_features:
            features = Const(np.ones((filters, inputs), np.int8), "INT8", feature_q)
        else:
            features = In((filters, inputs), "INT8", feature_q)
        time = Const(np.ones((filters, memory), _NUMPY[time_type]), time_type, time_q)
        bias_tensor = (
            Const(np.zeros(units, np.int32), "INT32", quantization(0.01, 0)) if bias else OMITTED
        )
        state = Var((batch, memory * filters), time_type, state_q)
        operands = [In((batch, inputs), "INT8", Q8), features, time, bias_tensor, state]
        return single_op(Op("SVDF", operands, [Out((batch, units), "INT8", Q8)], {"rank": rank}))

    return build


def lstm(
    *,
    batch: int = 2,
    steps: int = 3,
    inputs: int = 5,
    hidden: int = 6,
    dtype: str = "INT8",
    cell: str | None = None,
    time_major: bool = False,
    constant_weights: bool = True,
) -> Callable[[], bytes]:
    """UNIDIRECTIONAL_SEQUENCE_LSTM without peephole, projection or layer norm (15 inputs)."""

    def build() -> bytes:
        sequence = (steps, batch, inputs) if time_major else (batch, steps, inputs)
        outputs = (steps, batch, hidden) if time_major else (batch, steps, hidden)
        if dtype == "FLOAT32":
            cell_type = cell or "FLOAT32"

            def weight(rows: int, cols: int) -> Any:
                return Const(np.full((rows, cols), 0.1, np.float32), "FLOAT32")

            def bias_of() -> Any:
                return Const(np.zeros(hidden, np.float32), "FLOAT32")

            act_q: QuantizationSpec | None = None
            cell_q: QuantizationSpec | None = None
        else:
            cell_type = cell or "INT16"
            act_q = quantization(1 / 128, 0) if dtype == "INT8" else quantization(1 / 32768, 0)
            cell_q = quantization(2**-11, 0) if cell_type == "INT16" else quantization(1 / 128, 0)
            w_q = quantization(0.01, 0)
            bias_type = "INT32" if dtype == "INT8" else "INT64"

            def weight(rows: int, cols: int) -> Any:
                if constant_weights:
                    return Const(np.ones((rows, cols), np.int8), "INT8", w_q)
                return In((rows, cols), "INT8", w_q)

            def bias_of() -> Any:
                return Const(
                    np.zeros(hidden, _NUMPY[bias_type]), bias_type, quantization(0.0001, 0)
                )

        operands: list[Any] = [In(sequence, dtype, act_q)]
        operands += [weight(hidden, inputs) for _ in range(4)]
        operands += [weight(hidden, hidden) for _ in range(4)]
        operands += [OMITTED] * 3
        operands += [bias_of() for _ in range(4)]
        operands += [OMITTED] * 2
        operands += [Var((batch, hidden), dtype, act_q), Var((batch, hidden), cell_type, cell_q)]
        operands += [OMITTED] * 4
        options = {
            "fused_activation_function": "TANH",
            "time_major": time_major,
            "cell_clip": 0.0,
            "proj_clip": 0.0,
        }
        out = Out(outputs, dtype, act_q)
        return single_op(Op("UNIDIRECTIONAL_SEQUENCE_LSTM", operands, [out], options))

    return build


def transpose_conv(
    *,
    height: int = 4,
    width: int = 4,
    channels: int = 4,
    outputs: int = 8,
    kernel: int = 3,
    stride: int = 2,
    padding: str = "SAME",
    dtype: str = "INT8",
    bias: str | None = None,
    per_channel: bool = True,
) -> Callable[[], bytes]:
    """TRANSPOSE_CONV (inputs: output shape, filter, input, bias)."""

    def build() -> bytes:
        if padding == "SAME":
            out_h, out_w = height * stride, width * stride
        else:
            out_h, out_w = (height - 1) * stride + kernel, (width - 1) * stride + kernel
        q = _activation_q(dtype)
        weight_type = "FLOAT32" if dtype == "FLOAT32" else "INT8"
        filt = _filter(
            (outputs, kernel, kernel, channels),
            weight_type,
            channels=outputs,
            axis=0,
            per_channel=per_channel,
        )
        operands: list[Any] = [
            Const(np.array([1, out_h, out_w, outputs], np.int32), "INT32"),
            filt,
            In((1, height, width, channels), dtype, q),
        ]
        bias_tensor = _bias(outputs, dtype, bias, per_channel)
        if bias_tensor is not None:
            operands.append(bias_tensor)
        options = {"padding": padding, "stride_w": stride, "stride_h": stride}
        out = Out((1, out_h, out_w, outputs), dtype, q)
        return single_op(Op("TRANSPOSE_CONV", operands, [out], options))

    return build


def binary(
    opcode: str,
    dtype: str,
    second: Sequence[int] = (1, 8, 8, 3),
    second_type: str | None = None,
    zero_point: int = 0,
) -> Callable[[], bytes]:
    """ADD / MUL / MAXIMUM / MINIMUM on a [1, 8, 8, 3] input and a second input."""

    def build() -> bytes:
        q = _activation_q(dtype)
        if zero_point and q is not None:
            q = quantization(q.scales[0], zero_point)
        other = second_type or dtype
        operands = [In((1, 8, 8, 3), dtype, q), In(tuple(second), other, _activation_q(other))]
        return single_op(Op(opcode, operands, [Out((1, 8, 8, 3), dtype, q)]))

    return build


def pad(opcode: str, dtype: str) -> Callable[[], bytes]:
    """PAD / PADV2 of one pixel around an 8x8x3 image."""

    def build() -> bytes:
        q = _activation_q(dtype)
        paddings = Const(np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32), "INT32")
        operands: list[Any] = [In((1, 8, 8, 3), dtype, q), paddings]
        if opcode == "PADV2":
            operands.append(Const(np.zeros((1,), _NUMPY[dtype]), dtype, q))
        return single_op(Op(opcode, operands, [Out((1, 10, 10, 3), dtype, q)]))

    return build


def transpose(dtype: str, shape: Sequence[int] = (1, 4, 6, 8)) -> Callable[[], bytes]:
    """TRANSPOSE reversing the axes."""

    def build() -> bytes:
        q = _activation_q(dtype)
        perm = Const(np.arange(len(shape))[::-1].astype(np.int32), "INT32")
        out = Out(tuple(reversed(shape)), dtype, q)
        return single_op(Op("TRANSPOSE", [In(tuple(shape), dtype, q), perm], [out]))

    return build


def convs_then_fully_connected() -> bytes:
    """Four convolutions that request scratch, then a conv-1x1-path FULLY_CONNECTED: its scratch
    index is 4, which the CMSIS-NN kernel's Eval needs (fewer requests before it: Invoke aborts)."""
    ops: list[Op] = []
    for number in range(4):
        source: Any = In((1, 4, 4, 4), "INT8", Q8) if number == 0 else number - 1
        filt = Const(np.ones((4, 3, 3, 4), np.int8), "INT8", _scales(4))
        bias = Const(np.zeros(4, np.int32), "INT32", _scales(4, base=0.005))
        options = {"padding": "SAME", "stride_w": 1, "stride_h": 1}
        ops.append(Op("CONV_2D", [source, filt, bias], [Out((1, 4, 4, 4), "INT8", Q8)], options))
    weights = Const(np.ones((8, 4), np.int8), "INT8", quantization(0.1, 0))
    bias = Const(np.zeros(8, np.int32), "INT32", quantization(0.01, 0))
    fc = Op(
        "FULLY_CONNECTED",
        [3, weights, bias],
        [Out((1, 4, 4, 8), "INT8", Q8)],
        {"keep_num_dims": True},
    )
    return chain([*ops, fc])
