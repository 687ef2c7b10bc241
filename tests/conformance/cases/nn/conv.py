"""nn cases: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tests.conformance.cases import Case
from tests.conformance.cases.nn.common import (
    bias_const,
    default_bias_type,
    weights_const,
    weights_quantization,
)
from tests.conformance.models import OMITTED, Const, In, Op, Out, single_op

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
        wq = weights_quantization(weights, channels, count, 0)
        operands: list[Any] = [
            In((1, 6, 6, in_channels), dtype),
            weights_const((channels, 3, 3, in_channels), weights, wq),
        ]
        if bias == "omitted":
            operands.append(OMITTED)
        elif bias is not None:
            kind = default_bias_type(dtype) if bias == "auto" else bias
            operands.append(bias_const(channels, kind, dtype, wq))
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
        wq = weights_quantization(weights, channels, channels if per_channel else 0, 3)
        operands: list[Any] = [
            In((1, 6, 6, in_channels), dtype),
            weights_const((1, 3, 3, channels), weights, wq),
        ]
        if bias == "omitted":
            operands.append(OMITTED)
        elif bias is not None:
            kind = default_bias_type(dtype) if bias == "auto" else bias
            operands.append(bias_const(channels, kind, dtype, wq))
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
        wq = weights_quantization(weights, channels, channels if per_channel else 0, 0)
        operands: list[Any] = [
            Const(np.array([1, out_size, out_size, channels], np.int32), "INT32"),
            weights_const((channels, 3, 3, in_channels), weights, wq),
            In((1, size, size, in_channels), dtype),
        ]
        if bias is not None:
            kind = default_bias_type(dtype) if bias == "auto" else bias
            operands.append(bias_const(channels, kind, dtype, wq))
        out = Out((1, out_size, out_size, channels), dtype)
        options = {"padding": "SAME", "stride_w": stride, "stride_h": stride}
        return single_op(Op("TRANSPOSE_CONV", operands, [out], options=options))

    return build


def conv_cases() -> list[Case]:
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
