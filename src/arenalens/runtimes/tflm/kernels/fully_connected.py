"""FULLY_CONNECTED → its setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): fully_connected.cc (`FullyConnectedInit`,
`FullyConnectedPrepare`, `FullyConnectedEval`), fully_connected_common.cc
(`CalculateOpDataFullyConnected`), fully_connected.h (`OpDataFullyConnected`); the parser
`ParseFullyConnected` (core/api/flatbuffer_conversions.cc) and `TfLiteFullyConnectedParams`
(core/c/builtin_op_data.h).

Per-channel weights (more than one scale) get two int32 arrays of one entry per scale, allocated
and filled while the kernel's four temp tensors are live: they may land on those temps, and setup
then fails only when the filled bytes hit what Prepare reads afterwards (`temp_overlap`).
"""

from __future__ import annotations

from arenalens.builds.build import COMPRESSION
from arenalens.builds.tflm import FULLY_CONNECTED_INT16_PER_CHANNEL, FULLY_CONNECTED_PARAMS_GROW
from arenalens.runtimes.tflm.abi import Field, struct
from arenalens.runtimes.tflm.access_order import REREADS_INPUT
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import (
    op_data,
    per_channel_arrays,
    per_channel_count,
)
from arenalens.runtimes.tflm.kernels.quantization import (
    activation_range,
    bias_scale,
    convolution_multiplier,
    symmetric_weights,
)
from arenalens.runtimes.tflm.kernels.refusals import (
    not_equal,
    not_true,
    numbered,
    unsupported_at_invoke,
)

# TfLiteFullyConnectedParams. The wheel's sources are newer: its struct ends with a pointer and an
# int read from a FullyConnectedOptions field the probes' sources lack (32 bytes, 8-aligned, seen
# in the wheel's ParseFullyConnected and its tail): a documented exception tied to the host build.
FULLY_CONNECTED_PARAMS = struct(
    "TfLiteFullyConnectedParams",
    ("activation", "enum"),
    ("weights_format", "enum"),
    ("keep_num_dims", "bool"),
    ("asymmetric_quantize_inputs", "bool"),
    ("quantized_bias_type", "enum"),
    Field("wheel_pointer", "pointer", only_with=FULLY_CONNECTED_PARAMS_GROW),
    Field("wheel_int", "int", only_with=FULLY_CONNECTED_PARAMS_GROW),
)
OP_DATA_FULLY_CONNECTED = struct(
    "OpDataFullyConnected",
    ("output_multiplier", "int32"),
    ("output_shift", "int"),
    ("output_activation_min", "int32"),
    ("output_activation_max", "int32"),
    ("input_quantized_index", "int"),
    ("input_zero_point", "int32"),
    ("filter_zero_point", "int32"),
    ("output_zero_point", "int32"),
    ("filter_buffer_index", "int"),
    ("per_channel_output_multiplier", "pointer"),
    ("per_channel_output_shift", "pointer"),
    ("is_per_channel", "bool"),
    Field("weights_scratch_index", "int", only_with=COMPRESSION),
    Field("bias_scratch_index", "int", only_with=COMPRESSION),
)

_FILE = "fully_connected.cc"
_COMMON_FILE = "fully_connected_common.cc"
# ParseFullyConnected accepts kTfLiteFullyConnectedWeightsFormatDefault and ...Shuffled4x16Int8.
_WEIGHTS_FORMATS = (0, 1)


def quantized_parameters(context: base.KernelContext, *, per_channel: bool) -> list[base.Event]:
    """CalculateOpDataFullyConnected after any per-channel arrays: the output multipliers (per
    channel, or per tensor through GetQuantizedConvolutionMultipler and its bias-scale check;
    QuantizeMultiplier fails only on a non-finite one, on some targets: `multiplier_check`),
    `TFLITE_DCHECK(filter->params.zero_point == 0)`,
    then the fused activation's range. The reference and CMSIS-NN kernels both run it."""
    source, weights = context.input(0), context.input(1)
    bias, output = context.input(2), context.output(0)
    if not per_channel:
        refused = bias_scale(context.build, (source, weights, bias, output))
        if refused:
            return [refused]
    refused = (
        convolution_multiplier(context.build, source, weights, output)
        or symmetric_weights(_COMMON_FILE, weights, context.build)
        or activation_range(context.build, context.option("fused_activation_function"), output)
    )
    return [refused] if refused else []


def _prepare(context: base.KernelContext) -> base.Events:
    # FullyConnectedPrepare: input, filter, bias (when present), output; then the type checks.
    refused = weights_format_refusal(context)
    if refused:
        return refused
    found = base.temps(context, ("in", 0), ("in", 1), ("in", 2), ("out", 0))
    kind, weights, out = context.input_type(0), context.input_type(1), context.output_type(0)
    if kind != out:
        return [*found, not_equal(_FILE, "input->type", "output->type", kind, out)]
    if (
        (kind == "FLOAT32" and weights != "FLOAT32")
        or (kind == "INT8" and weights not in ("INT8", "INT4"))
        or (kind == "INT16" and weights != "INT8")
    ):
        return [
            *found,
            base.Refusal(f"Input type: {kind} with filter type: {weights} not supported."),
        ]
    filter_tensor = context.input(1)
    if weights == "INT4" and filter_tensor is not None:
        found.append(base.Scratch(filter_tensor.element_count, "unpacked int4 filter"))
    found += _calculate_op_data(context, kind, weights)
    if kind not in ("FLOAT32", "INT8", "INT16"):
        found.append(unsupported_at_invoke(f"Input type {numbered(kind)} not supported."))
    # USE_TFLM_COMPRESSION: decompression scratch only for weights compressed by the older
    # metadata scheme, which arenalens does not read (the DECODE operator replaced it).
    return found


def _calculate_op_data(context: base.KernelContext, kind: str, weights: str) -> list[base.Event]:
    """CalculateOpDataFullyConnected: nothing for float; per-channel arrays, or the per-tensor
    multiplier's bias-scale check."""
    if kind == "FLOAT32":
        return []
    count = per_channel_count(context.input(1))
    if count <= 1:
        return quantized_parameters(context, per_channel=False)
    if not context.build.has(FULLY_CONNECTED_INT16_PER_CHANNEL) and (
        weights == "INT4" or kind != "INT8"
    ):
        return [not_true(_COMMON_FILE, "input->type == kTfLiteInt8 && filter->type != kTfLiteInt4")]
    if weights == "INT4" or kind not in ("INT8", "INT16"):
        return [
            not_true(
                _COMMON_FILE,
                "(input->type == kTfLiteInt8 && filter->type != kTfLiteInt4) || "
                "(input->type == kTfLiteInt16 && filter->type != kTfLiteInt4)",
            )
        ]
    filter_tensor = context.input(1)
    quantization = None if filter_tensor is None else filter_tensor.quantization
    axis = 0 if quantization is None else quantization.axis
    dimension = filter_tensor.shape[axis] if filter_tensor is not None else 0
    if dimension != count:
        return [
            not_equal(
                _COMMON_FILE,
                "per_channel_quantization_size",
                "filter->dims->data[affine_quantization->quantized_dimension]",
                count,
                dimension,
            )
        ]
    arrays = per_channel_arrays(count, written=base.OverTemps(keep=per_channel_reads(context)))
    return [*arrays, *quantized_parameters(context, per_channel=True)]


def per_channel_reads(context: base.KernelContext) -> tuple[base.TempField, ...]:
    """What CalculateOpDataFullyConnected reads of its temps (input, filter, bias, output in
    fetch order) after allocating the per-channel arrays: the loop filling both reads the input
    and output scales; then the zero points of input, filter and output, and
    CalculateActivationRangeQuantized the output's type. (The loop also follows the filter's
    affine scale pointer, but an overwritten one only yields other multipliers: measured, setup
    still succeeds, e.g. case CUSTOM:TFLM_DECODE.INT8.prune_per_channel_output.)"""
    output_temp = 3 if context.input(2) is not None else 2
    return (
        base.TempField("params", 0),
        base.TempField("params", 1),
        base.TempField("params", output_temp),
        base.TempField("type", output_temp),
    )


def weights_format_refusal(context: base.KernelContext) -> list[base.Event]:
    """ParseFullyConnected (flatbuffer_conversions.cc) rejects a weights format it does not know:
    the builtin data parser fails before any kernel runs, reference or CMSIS-NN."""
    if context.option("weights_format") in _WEIGHTS_FORMATS:
        return []
    return [base.Refusal("Unhandled fully-connected weights format.")]


RULES = (
    base.KernelRule(
        "FULLY_CONNECTED",
        "fully_connected.cc, fully_connected_common.cc",
        FULLY_CONNECTED_PARAMS,
        op_data(OP_DATA_FULLY_CONNECTED),
        _prepare,
        access=base.NoOverlap(REREADS_INPUT + " (fully_connected.cc)"),
        operands=base.operands("input", "filter", "bias?", outputs=(1, 2)),
        applies_fused_activation=True,
    ),
)
