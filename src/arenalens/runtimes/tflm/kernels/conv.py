"""Convolution kernels: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV → setup allocations, refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): conv.cc, conv_common.cc, conv.h
(`OpDataConv`), depthwise_conv.cc, depthwise_conv_common.cc, transpose_conv.cc (its `OpData`
around `ConvParams` from kernels/internal/types.h); PopulateConvolutionQuantizationParams and
GetQuantizedConvolutionMultipler in tensorflow/lite/kernels/kernel_util.cc.

All three allocate two int32 arrays of one entry per output channel (the filter's quantized
dimension) for every type, float too, while the first three temp tensors are live, and fill them
only after fetching the operands again; the second fetch must then fit below the tail, which puts
the arrays above every live temp (measured: no window where they overlap).
"""

from __future__ import annotations

from arenalens.analysis.inplace import NotInPlace
from arenalens.builds.build import COMPRESSION
from arenalens.builds.tflm import TRANSPOSE_CONV_ACTIVATION
from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import Field, struct
from arenalens.runtimes.tflm.access_order import (
    checked,
    window_all_channels_trace,
    window_of,
    window_per_channel_trace,
    windowed_operands,
)
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.base import operands
from arenalens.runtimes.tflm.kernels.common import (
    channels,
    elements,
    is_quantized,
    op_data,
    per_channel_arrays,
    type_of,
)
from arenalens.runtimes.tflm.kernels.quantization import (
    QUANTIZE_EVERY_TENSOR,
    convolution_parameters,
)
from arenalens.runtimes.tflm.kernels.refusals import (
    HYBRID,
    crash,
    not_equal,
    not_true,
    numbered,
    unsupported_at_invoke,
)

PADDING_VALUES = struct(
    "TfLitePaddingValues",
    ("width", "int"),
    ("height", "int"),
    ("width_offset", "int"),
    ("height_offset", "int"),
)
CONV_PARAMS = struct(
    "TfLiteConvParams",
    ("padding", "enum"),
    ("stride_width", "int"),
    ("stride_height", "int"),
    ("activation", "enum"),
    ("dilation_width_factor", "int"),
    ("dilation_height_factor", "int"),
    ("quantized_bias_type", "enum"),
)
DEPTHWISE_CONV_PARAMS = struct(
    "TfLiteDepthwiseConvParams",
    ("padding", "enum"),
    ("stride_width", "int"),
    ("stride_height", "int"),
    ("depth_multiplier", "int"),
    ("activation", "enum"),
    ("dilation_width_factor", "int"),
    ("dilation_height_factor", "int"),
)
TRANSPOSE_CONV_PARAMS = struct(
    "TfLiteTransposeConvParams",
    ("padding", "enum"),
    ("stride_width", "int"),
    ("stride_height", "int"),
    ("activation", "enum"),
    ("quantized_bias_type", "enum"),
)
OP_DATA_CONV = struct(
    "OpDataConv",
    ("padding", PADDING_VALUES),
    ("input_zero_point", "int32"),
    ("filter_zero_point", "int32"),
    ("output_zero_point", "int32"),
    ("output_multiplier", "int32"),
    ("output_shift", "int"),
    ("per_channel_output_multiplier", "pointer"),
    ("per_channel_output_shift", "pointer"),
    ("output_activation_min", "int32"),
    ("output_activation_max", "int32"),
    ("filter_buffer_index", "int"),
    Field("weights_scratch_index", "int", only_with=COMPRESSION),
    Field("bias_scratch_index", "int", only_with=COMPRESSION),
)
# kernels/internal/types.h: PaddingType is a uint8_t enum class, PaddingValues four int16.
CONV_RUNTIME_PARAMS = struct(
    "ConvParams",
    ("padding_type", "uint8"),
    Field("padding_values", "int16", 4),
    ("stride_width", "int16"),
    ("stride_height", "int16"),
    ("dilation_width_factor", "int16"),
    ("dilation_height_factor", "int16"),
    ("input_offset", "int32"),
    ("weights_offset", "int32"),
    ("output_offset", "int32"),
    ("output_multiplier", "int32"),
    ("output_shift", "int"),
    ("quantized_activation_min", "int32"),
    ("quantized_activation_max", "int32"),
    ("float_activation_min", "float"),
    ("float_activation_max", "float"),
)
OP_DATA_TRANSPOSE_CONV = struct(
    "OpData",
    ("params", CONV_RUNTIME_PARAMS),
    ("scratch_buffer_index", "int"),
    Field("filter_scratch_index", "int", only_with=COMPRESSION),
    Field("bias_scratch_index", "int", only_with=COMPRESSION),
    ("bias_converted_buffer_index", "int"),
    ("per_channel_output_multiplier", "pointer"),
    ("per_channel_output_shift", "pointer"),
)

# (input, filter) types ConvPrepare accepts.
_CONV_TYPES = (("FLOAT32", "FLOAT32"), ("INT16", "INT8"), ("INT8", "INT4"), ("INT8", "INT8"))


def _int4_filter(weights: Tensor | None) -> list[base.Event]:
    if weights is None or weights.dtype.name != "INT4":
        return []
    return [base.Scratch(weights.element_count, "unpacked int4 filter")]


def _scale_checks(
    weights: Tensor | None, file: str, axis: int, kernel: str = "Conv"
) -> list[base.Event]:
    """The filter's affine quantization: one scale or one per output channel (`kernel` names
    the constant k<kernel>QuantizedDimension the source compares with)."""
    if not is_quantized(weights) or weights is None or weights.quantization is None:
        return [
            # kTfLiteNoQuantization (0) where kTfLiteAffineQuantization (1) is required.
            not_equal(
                file,
                "filter->quantization.type",
                "kTfLiteAffineQuantization",
                0,
                1,
                fix=QUANTIZE_EVERY_TENSOR,
            )
        ]
    count = weights.quantization.channel_count
    if count not in (1, channels(weights, axis)):
        return [
            not_true(
                file,
                "affine_quantization->scale->size == 1 || affine_quantization->scale->size == "
                f"filter->dims->data[k{kernel}QuantizedDimension]",
                fix="the filter needs one scale, or one per output channel: re-convert it",
            )
        ]
    return []


ConvOperands = tuple[Tensor | None, Tensor | None, Tensor | None, Tensor | None]


def convolution_operands(context: base.KernelContext) -> ConvOperands:
    """Input, filter, bias (None when omitted or absent) and output: what CalculateOpData
    fetches, and what a Prepare that fetched them first passes on (`calculate_op_data`)."""
    # `KernelContext.input` / `output` inlined: every convolution's Prepare asks for them.
    inputs, outputs = context.operator.inputs, context.operator.outputs
    tensors, count = context.subgraph.tensors, len(inputs)
    return (
        tensors[inputs[0]] if count > 0 and inputs[0] >= 0 else None,
        tensors[inputs[1]] if count > 1 and inputs[1] >= 0 else None,
        tensors[inputs[2]] if count > 2 and inputs[2] >= 0 else None,
        tensors[outputs[0]] if outputs and outputs[0] >= 0 else None,
    )


def calculate_op_data(
    context: base.KernelContext, file: str, axis: int, operands: ConvOperands | None = None
) -> tuple[list[base.Event], bool]:
    """CalculateOpDataConv (conv_common.cc; the output channels are filter axis 0) and
    CalculateOpDataDepthwiseConv (depthwise_conv_common.cc; axis 3), which the reference and the
    CMSIS-NN Prepares alike call: two or three inputs, input, filter, bias and output fetched
    again as temps, then for a quantized input PopulateConvolutionQuantizationParams. → its
    events, and True when it refuses (the Prepare returns there). `operands`: the Prepare's own
    `convolution_operands`, when it has them."""
    if len(context.operator.inputs) not in (2, 3):
        return [not_true(file, "has_bias || node->inputs->size == 2")], True
    # Input, filter, bias, output: the temps fetched again, and what the parameters read.
    if operands is None:
        operands = convolution_operands(context)
    found = base.temp_tensors(*operands)
    source = operands[0]
    if source is None or source.dtype.name != "FLOAT32":
        # PopulateConvolutionQuantizationParams for CONV_2D (filter dimension 0 is the output
        # channels) and DEPTHWISE_CONV_2D (dimension 3). (`KernelContext.option` and `channels`
        # inline: every quantized convolution.)
        activation = context.operator.options.get("fused_activation_function", 0)
        weights = operands[1]
        shape = () if weights is None else weights.shape
        refused = convolution_parameters(
            context.build,
            int(activation) if isinstance(activation, int) else 0,
            operands,
            shape[axis] if shape and -len(shape) <= axis < len(shape) else 0,
        )
        if refused:
            found.append(refused)
            return found, True
    return found, False


def _conv(context: base.KernelContext) -> base.Events:
    # ConvPrepare: output, input, filter; type checks; the per-channel arrays (filter dim 0,
    # every type); CalculateOpDataConv fetches input, filter, bias, output again and fills them.
    file = "conv_common.cc"
    operands = convolution_operands(context)
    source, weights, bias, output = operands
    found = base.temp_tensors(output, source, weights)
    kind, weights_kind, out = type_of(source), type_of(weights), type_of(output)
    if kind != out:
        return [*found, not_equal(file, "input->type", "output->type", kind, out)]
    if (kind, weights_kind) not in _CONV_TYPES:
        return [*found, base.Refusal(f"tensorflow/lite/micro/kernels/{file} {HYBRID}")]
    found += per_channel_arrays(channels(weights, 0))
    if kind in ("INT8", "INT16"):
        refused = _scale_checks(weights, file, 0)
        if refused:
            return found + refused
    op_data_events, stops = calculate_op_data(context, file, 0, operands)
    found += op_data_events
    if stops:
        return found
    found += _int4_filter(weights)
    bias_kind = type_of(bias)
    if kind == "INT16" and bias_kind not in ("", "INT32", "INT64"):
        found.append(unsupported_at_invoke(f"Bias type {numbered(bias_kind)} not supported."))
    return found


def _depthwise(context: base.KernelContext) -> base.Events:
    # DepthwiseConvPrepare: output, input, filter; the arrays (filter dim 3 = in_channels x
    # multiplier); int8 scale checks; the hybrid check; the int4 scratch; then
    # CalculateOpDataDepthwiseConv fetches input, filter, bias, output again.
    file = "depthwise_conv_common.cc"
    operands = convolution_operands(context)
    source, weights, _, output = operands
    found = base.temp_tensors(output, source, weights)
    found += per_channel_arrays(channels(weights, 3))
    kind, weights_kind = type_of(source), type_of(weights)
    if kind == "INT8":
        refused = _scale_checks(weights, file, 3, "DepthwiseConv")
        if refused:
            return found + refused
    if not (
        kind == weights_kind
        or (kind == "INT8" and weights_kind in ("INT4", "INT8"))
        or (kind == "INT16" and weights_kind == "INT8")
    ):
        return [*found, base.Refusal(f"tensorflow/lite/micro/kernels/{file} {HYBRID}")]
    found += _int4_filter(weights)
    op_data_events, stops = calculate_op_data(context, file, 3, operands)
    found += op_data_events
    if stops:
        return found
    if len(context.operator.inputs) == 3 and operands[2] is None:
        # has_bias is inputs->size == 3, so an omitted (-1) bias is released as a null tensor.
        return [*found, crash("DEPTHWISE_CONV_2D with an omitted (-1) bias releases a null temp")]
    found += _depthwise_invoke_refusals(kind, weights_kind)
    return found


def _depthwise_invoke_refusals(kind: str, weights: str) -> list[base.Event]:
    """DepthwiseConvEval's switch: float, int8 (int8/int4 weights), int16 (int8 weights)."""
    if kind == "FLOAT32":
        return []
    if kind == "INT8" and weights in ("INT8", "INT4"):
        return []
    if kind == "INT16" and weights == "INT8":
        return []
    if kind in ("INT8", "INT16"):
        return [
            unsupported_at_invoke(
                f"Filter type {numbered(weights)} for input type {kind} not supported."
            )
        ]
    return [unsupported_at_invoke(f"Input type {numbered(kind)} not supported.")]


def _transpose_conv(context: base.KernelContext) -> base.Events:
    # TransposeConvPrepare: output, input (#2), filter (#1); the hybrid check; the arrays
    # (filter dim 0); the accumulator scratch; CalculateOpData fetches input, filter, bias,
    # output again for quantized types only.
    file = "transpose_conv.cc"
    found = base.temps(context, ("out", 0), ("in", 2), ("in", 1))
    kind, weights = context.input_type(2), context.input_type(1)
    if not (kind == weights or (kind == "INT16" and weights == "INT8")):
        return [*found, base.Refusal(f"tensorflow/lite/micro/kernels/{file} {HYBRID}")]
    found += per_channel_arrays(channels(context.input(1), 0))
    output_elements = elements(context.output(0))
    if kind == "INT8":
        found.append(base.Scratch(output_elements * 4, "transpose_conv accumulators"))
    elif kind == "INT16":
        found.append(base.Scratch(output_elements * 8, "transpose_conv accumulators"))
    if kind in ("INT8", "INT16"):
        refused = _scale_checks(context.input(1), file, 0, "TransposeConv")
        if refused:
            return found + refused
    inputs = len(context.operator.inputs)
    if inputs not in (3, 4):
        return [*found, not_true(file, "has_bias || node->inputs->size == 3")]
    if kind != "FLOAT32":
        found += base.temps(context, ("in", 2), ("in", 1), ("in", 3), ("out", 0))
        operands = (context.input(2), context.input(1), context.input(3), context.output(0))
        # Before 5b93e5b the reference kernel passed kTfLiteActNone: no activation range, so
        # none of its checks.
        activation = (
            context.option("fused_activation_function")
            if context.build.has(TRANSPOSE_CONV_ACTIVATION)
            else 0
        )
        problem = convolution_parameters(
            context.build,
            activation,
            operands,
            channels(context.input(1), 0),
        )
        if problem:
            return [*found, problem]
        bias = context.input(3)
        if kind == "INT16" and bias is not None and bias.dtype.name == "INT16":
            found.append(base.Scratch(bias.element_count * 8, "transpose_conv converted bias"))
    if kind not in ("FLOAT32", "INT8", "INT16"):
        found.append(unsupported_at_invoke(f"Type {numbered(kind)} not supported."))
    return found


def _conv_distance(view: base.KernelContext, slots: frozenset[int], output: int) -> int | None:
    tensors = windowed_operands(view, output)
    if tensors is None:
        return None
    source, weights, target = tensors
    _, filter_h, filter_w, filter_depth = weights.shape
    trace = window_all_channels_trace(
        source, target, window_of(view, filter_h, filter_w), filter_input_depth=filter_depth
    )
    return checked(trace, source.nbytes)


def _depthwise_distance(view: base.KernelContext, slots: frozenset[int], output: int) -> int | None:
    tensors = windowed_operands(view, output)
    if tensors is None:
        return None
    source, weights, target = tensors
    if len(source.shape) != 4 or not source.shape[3]:
        return None
    _, filter_h, filter_w, _ = weights.shape
    multiplier = target.shape[3] // source.shape[3] if len(target.shape) == 4 else 0
    trace = window_per_channel_trace(
        source, target, window_of(view, filter_h, filter_w), depth_multiplier=multiplier
    )
    return checked(trace, source.nbytes)


# Batch, out_y, out_x, out_channel; each output element reads the window's rows, columns and (its
# group's) input channels: the lowest byte it reads is the window's first valid row and column.
CONV_2D_ACCESS = base.AccessOrder(
    "window, all channels",
    "conv.cc, reference/conv.h, integer_ops/conv.h (ConvPerChannel)",
    (0,),
    _conv_distance,
)
# Batch, out_y, out_x, in_channel, multiplier; each output element reads only its own input
# channel of the window.
DEPTHWISE_CONV_2D_ACCESS = base.AccessOrder(
    "window, per channel",
    "depthwise_conv.cc, reference/depthwiseconv_float.h, integer_ops/depthwise_conv.h",
    (0,),
    _depthwise_distance,
)
# ConvPrepare, DepthwiseConvPrepare: input, filter, an optional bias (node->inputs->size 2 or 3).
_WINDOW_READS = NotInPlace("every output element reads a window of input elements")
_WEIGHTED = operands("input", "filter", "bias?")

RULES = (
    base.KernelRule(
        "CONV_2D",
        "conv.cc, conv_common.cc",
        CONV_PARAMS,
        op_data(OP_DATA_CONV),
        _conv,
        access=CONV_2D_ACCESS,
        operands=_WEIGHTED,
        inplace=_WINDOW_READS,
        applies_fused_activation=True,
    ),
    base.KernelRule(
        "DEPTHWISE_CONV_2D",
        "depthwise_conv.cc, depthwise_conv_common.cc",
        DEPTHWISE_CONV_PARAMS,
        op_data(OP_DATA_CONV),
        _depthwise,
        access=DEPTHWISE_CONV_2D_ACCESS,
        operands=_WEIGHTED,
        inplace=_WINDOW_READS,
        applies_fused_activation=True,
    ),
    base.KernelRule(
        "TRANSPOSE_CONV",
        "transpose_conv.cc",
        TRANSPOSE_CONV_PARAMS,
        op_data(OP_DATA_TRANSPOSE_CONV),
        _transpose_conv,
        access=base.NoOverlap("scatters each input element over a window of outputs"),
        operands=operands("output_shape", "filter", "input", "bias?"),
    ),
)
