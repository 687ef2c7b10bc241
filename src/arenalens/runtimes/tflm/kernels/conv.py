"""Convolution kernels: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV → their setup allocations.

Sources: conv.cc, conv_common.cc, depthwise_conv.cc, depthwise_conv_common.cc, transpose_conv.cc.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import (
    Event,
    Events,
    Fixed,
    KernelContext,
    KernelRule,
    Scratch,
    temps,
)
from arenalens.runtimes.tflm.kernels.common import (
    channels,
    elements,
    hybrid_refusal,
    op_data,
    per_channel_arrays,
)


def _int4_filter(context: KernelContext) -> list[Event]:
    weights = context.input(1)
    if weights is None or weights.dtype.name != "INT4":
        return []
    return [Scratch(weights.element_count, "unpacked int4 filter")]


def _convolution(context: KernelContext) -> Events:
    # ConvPrepare: output, input, filter; per-channel arrays sized by the filter's dim 0 (conv)
    # or dim 3 (depthwise), whatever the types; then CalculateOpData fetches all four again.
    axis = 3 if context.opcode == "DEPTHWISE_CONV_2D" else 0
    found = hybrid_refusal(context, 0, 1)
    found += temps(context, ("out", 0), ("in", 0), ("in", 1))
    found += per_channel_arrays(channels(context.input(1), axis))
    found += temps(context, ("in", 0), ("in", 1), ("in", 2), ("out", 0))
    found += _int4_filter(context)
    return found


def _transpose_conv(context: KernelContext) -> Events:
    # TransposeConvPrepare: output, input (#2), filter (#1); per-channel arrays (filter dim 0);
    # CalculateOpData fetches input, filter, bias, output again for non-float types.
    found = hybrid_refusal(context, 2, 1)
    found += temps(context, ("out", 0), ("in", 2), ("in", 1))
    found += per_channel_arrays(channels(context.input(1), 0))
    if context.input_type(2) != "FLOAT32":
        found += temps(context, ("in", 2), ("in", 1), ("in", 3), ("out", 0))
    input_type = context.input_type(2)
    output_elements = elements(context.output(0))
    if input_type == "INT8":
        found.append(Scratch(output_elements * 4, "transpose_conv accumulators"))
    elif input_type == "INT16":
        found.append(Scratch(output_elements * 8, "transpose_conv accumulators"))
        bias = context.input(3)
        if bias is not None and bias.dtype.name == "INT16":
            found.append(Scratch(bias.element_count * 8, "transpose_conv converted bias"))
    return found


RULES = (
    KernelRule(
        "CONV_2D", "conv.cc, conv_common.cc", Fixed(28, 4), op_data(80), _convolution, derived=False
    ),
    KernelRule(
        "DEPTHWISE_CONV_2D",
        "depthwise_conv.cc, depthwise_conv_common.cc",
        Fixed(28, 4),
        op_data(80),
        _convolution,
        derived=False,
    ),
    KernelRule(
        "TRANSPOSE_CONV",
        "transpose_conv.cc",
        Fixed(20, 4),
        op_data(88),
        _transpose_conv,
        derived=False,
    ),
)
