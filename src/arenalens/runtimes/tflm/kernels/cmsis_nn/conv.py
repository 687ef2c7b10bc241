"""CMSIS-NN convolution kernels: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV → their setup
allocations and refusals on each CMSIS-NN code path.

Sources (tflite-micro tensorflow/lite/micro/kernels/): cmsis_nn/conv.cc, cmsis_nn/depthwise_conv.cc,
cmsis_nn/transpose_conv.cc, with the reference helpers they call (conv_common.cc
`CalculateOpDataConv`, depthwise_conv_common.cc `CalculateOpDataDepthwiseConv`,
tensorflow/lite/kernels/kernel_util.cc `PopulateConvolutionQuantizationParams`, padding.h); the
scratch sizes are CMSIS-NN's (`buffers`).

Against the reference kernels: OpData is 4 bytes larger (a scratch index), float convolutions
keep no per-channel arrays, int4 filters get CMSIS-NN's buffer instead of an unpacked copy, int16
convolutions request a scratch buffer, the temp tensors come in another order, and CONV_2D refuses
shapes and int16 zero points the reference kernel accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from operator import itemgetter
from typing import Any, NamedTuple

from arenalens.builds.build import ISA_MVE
from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels import conv as reference_conv
from arenalens.runtimes.tflm.kernels.cmsis_nn import buffers, traces
from arenalens.runtimes.tflm.kernels.cmsis_nn.access import (
    NOT_ANALYSED,
    int8_paths,
    not_analysed,
)
from arenalens.runtimes.tflm.kernels.cmsis_nn.buffers import (
    ConvParams,
    Dims,
    conv_params_of,
    dims_of,
)
from arenalens.runtimes.tflm.kernels.cmsis_nn.variants import cmsis_nn_kernel
from arenalens.runtimes.tflm.kernels.common import (
    ScaleFree,
    elements,
    is_quantized,
    padding,
    per_channel_arrays,
    scale_count,
    type_of,
)
from arenalens.runtimes.tflm.kernels.conv import CONV_RUNTIME_PARAMS, OP_DATA_CONV
from arenalens.runtimes.tflm.kernels.quantization import (
    ACTIVATION_NONE,
    QUANTIZE_EVERY_TENSOR,
    convolution_parameters,
)
from arenalens.runtimes.tflm.kernels.refusals import (
    HYBRID,
    TFLITE_TYPES,
    UNSUPPORTED_INPUT,
    int16_zero_points,
    kinds_and_hybrid,
    not_equal,
    not_true,
    type_number,
    types_and_hybrid,
)

# cmsis_nn/conv.cc and depthwise_conv.cc: OpData, around the reference kernels' (conv.h).
CMSIS_OP_DATA_CONV = struct("OpData", ("reference_op_data", OP_DATA_CONV), ("buffer_idx", "int"))
# cmsis_nn/transpose_conv.cc: OpData.
CMSIS_OP_DATA_TRANSPOSE_CONV = struct(
    "OpData",
    ("params", CONV_RUNTIME_PARAMS),
    ("scratch_buffer_index", "int"),
    ("scratch_buffer_output_index", "int"),
    ("bias_converted_buffer_index", "int"),
    ("per_channel_output_multiplier", "pointer"),
    ("per_channel_output_shift", "pointer"),
)

_CONV_FILE = "tensorflow/lite/micro/kernels/cmsis_nn/conv.cc"
_DEPTHWISE_FILE = "tensorflow/lite/micro/kernels/cmsis_nn/depthwise_conv.cc"
_TRANSPOSE_CONV_FILE = "tensorflow/lite/micro/kernels/cmsis_nn/transpose_conv.cc"
_CONV_COMMON_FILE = "tensorflow/lite/micro/kernels/conv_common.cc"
_DEPTHWISE_COMMON_FILE = "tensorflow/lite/micro/kernels/depthwise_conv_common.cc"
_SAME = 0  # schema Padding: SAME 0, VALID 1
_CONV_OPTIONS = itemgetter(
    "stride_w", "stride_h", "dilation_wfactor", "dilation_hfactor", "padding"
)


def _dim(tensor: Tensor | None, axis: int) -> int:
    if tensor is None or not -len(tensor.shape) <= axis < len(tensor.shape):
        return 0
    return tensor.shape[axis]


def _dims(shape: tuple[int, ...]) -> Dims:
    """cmsis_nn_dims of a tensor's dims (0 for each axis it lacks; an absent tensor has none)."""
    if len(shape) == 4:  # the usual case: no axis to check
        return dims_of(shape)
    if len(shape) > 4:
        return dims_of(shape[:4])
    rank = len(shape)
    return Dims(*(shape[axis] if axis < rank else 0 for axis in range(4)))


# (stride_w, stride_h, dilation_w, dilation_h, padding) as the options give them.
_ConvOptions = tuple[Any, Any, Any, Any, Any]


def _conv_options(options: Mapping[str, Any]) -> _ConvOptions:
    """The five options cmsis_nn_conv_params is made of (`KernelContext.option`'s defaults where
    the model leaves one out), read from the mapping in one C call: the reader writes every field
    of the options table."""
    try:
        return _CONV_OPTIONS(options)  # type: ignore[no-any-return]
    except KeyError:
        found = options.get
        return (
            found("stride_w", 1),
            found("stride_h", 1),
            found("dilation_wfactor", 1),
            found("dilation_hfactor", 1),
            found("padding", _SAME),
        )


def _dilated(options: _ConvOptions) -> bool:
    """Whether either dilation `_conv_params` puts in cmsis_nn_conv_params is not 1 (a value
    that is not an integer reads as 1, as there)."""
    _, _, dilation_w, dilation_h, _ = options
    if type(dilation_w) is int and type(dilation_h) is int:  # the usual: no value to convert
        return dilation_w != 1 or dilation_h != 1
    return (int(dilation_w) if isinstance(dilation_w, int) else 1) != 1 or (
        int(dilation_h) if isinstance(dilation_h, int) else 1
    ) != 1


def _conv_params(
    options: _ConvOptions,
    source: tuple[int, ...],
    filter_h: int,
    filter_w: int,
    *,
    strided: bool,
) -> ConvParams:
    """The padding, dilations (and strides when `strided`) TFLM puts in cmsis_nn_conv_params
    (`source`: the input's shape)."""
    stride_w, stride_h, dilation_w, dilation_h, kind = options
    if not type(stride_w) is type(stride_h) is type(dilation_w) is type(dilation_h) is int:
        stride_w = int(stride_w) if isinstance(stride_w, int) else 1
        stride_h = int(stride_h) if isinstance(stride_h, int) else 1
        dilation_w = int(dilation_w) if isinstance(dilation_w, int) else 1
        dilation_h = int(dilation_h) if isinstance(dilation_h, int) else 1
    pad_w = pad_h = 0
    # ComputePaddingHeightWidth pads only SAME filters wider than 1: its total is never positive
    # for VALID (out · stride <= in + stride - effective) nor for a filter of 1 ((out - 1) ·
    # stride < in), so most convolutions (1x1) skip it.
    if (not isinstance(kind, int) or kind == _SAME) and (filter_w != 1 or filter_h != 1):
        width = source[2] if len(source) >= 3 else 0
        height = source[1] if len(source) >= 2 else 0
        pad_w = padding(width, filter_w, stride_w, dilation_w, same=True)
        # A square input, filter, stride and dilation (most) pads both axes alike.
        pad_h = (
            pad_w
            if (height, filter_h, stride_h, dilation_h) == (width, filter_w, stride_w, dilation_w)
            else padding(height, filter_h, stride_h, dilation_h, same=True)
        )
    return conv_params_of(
        (
            stride_w if strided else None,
            stride_h if strided else None,
            pad_w,
            pad_h,
            dilation_w,
            dilation_h,
        )
    )


def _transpose_quantization_params(
    context: base.KernelContext, weights: Tensor | None, channels: int
) -> list[base.Event]:
    """PopulateConvolutionQuantizationParams (non-float only) as CMSIS-NN's transpose_conv.cc
    calls it: with kTfLiteActNone whatever the fused activation (so, unlike the reference kernel,
    no activation bound can overflow there: measured, case
    TRANSPOSE_CONV.INT8.relu6_output_scale_below_limit sets up on CMSIS-NN). CONV_2D and
    DEPTHWISE_CONV_2D call it as the reference kernels do (`conv.calculate_op_data`)."""
    refused = convolution_parameters(
        context.build,
        ACTIVATION_NONE,
        (context.input(2), weights, context.input(3), context.output(0)),
        channels,
    )
    return [refused] if refused else []


def _conv(context: base.KernelContext) -> base.Events:
    # Prepare: input, filter, output (the kernel's own "bias" fetch asks for output #2 and gets
    # nothing); checks; int8/int16 per-channel arrays; CalculateOpDataConv (input, filter, bias,
    # output again); the CMSIS-NN buffer for int8 (int4 filters too) and int16. What the
    # shapes, types and options decide is remembered by value (`_conv_facts`); the temps and
    # the checks that read scales and zero points are the operator's own.
    operands = reference_conv.convolution_operands(context)
    source, weights, bias, output = operands
    found = base.temp_tensors(source, weights, output)
    facts = _CONV_FACTS.of(
        (
            context.build.isa,
            _conv_options(context.operator.options),
            _ABSENT if source is None else (source.dtype.name, source.shape),
            _ABSENT if weights is None else (weights.dtype.name, weights.shape),
            _ABSENT if output is None else (output.dtype.name, output.shape),
            "" if bias is None else bias.dtype.name,
        ),
        _conv_facts,
    )
    if facts.refused:
        return found + facts.refused
    found += facts.arrays
    op_data_events, stops = reference_conv.calculate_op_data(
        context, _CONV_COMMON_FILE, 0, operands
    )
    found += op_data_events
    if stops:
        return found
    if facts.int16:
        refused = int16_zero_points(_CONV_FILE, ("input", source), ("output", output))
        if refused:
            return found + refused
    found += facts.after
    return found


# An absent operand in a convolution's key: no type, no dims.
_ABSENT: tuple[str, tuple[int, ...]] = ("", ())


class _ConvFacts(NamedTuple):
    """What CMSIS-NN's CONV_2D Prepare decides from its key alone (`_conv_facts`)."""

    refused: list[base.Event]  # the type and shape checks' refusal: Prepare stops there
    arrays: tuple[base.Event, ...]  # the per-channel arrays
    int16: bool  # the int16 zero-point checks follow CalculateOpDataConv
    after: list[base.Event]  # then the CMSIS-NN buffer and the bias type's refusal


_new_conv_facts = partial(tuple.__new__, _ConvFacts)  # from all four fields, in one C call


# By (isa, the five options, (type, dims) of input, filter and output, the bias's type).
_CONV_FACTS: ScaleFree[_ConvFacts] = ScaleFree()


def _conv_facts(key: Any) -> _ConvFacts:
    isa, options, (dtype, source), (weights_type, weights), (output_type, output), bias = key
    refused: list[base.Event] = [*kinds_and_hybrid(_CONV_FILE, dtype, weights_type, output_type)]
    refused = refused or _conv_shapes(source, weights, output)
    if refused:
        return _new_conv_facts((refused, (), False, []))
    # The shape checks passed: three shapes of rank 4.
    arrays = per_channel_arrays(weights[0]) if dtype in ("INT8", "INT16") else ()
    _, filter_h, filter_w, filter_c = weights
    nbytes = 0  # float: no buffer (nor the parameters only the int8 size reads)
    if dtype == "INT8" and isa != ISA_MVE:
        # Off MVE neither the padding nor the strides decide: no parameters, no dims.
        nbytes = buffers.convolve_wrapper_s8_off_mve(
            isa, source[3], filter_h, filter_w, filter_c, dilated=_dilated(options)
        )
    elif dtype == "INT8":
        params = _conv_params(options, source, filter_h, filter_w, strided=True)
        filter_dims = dims_of((1, filter_h, filter_w, filter_c))
        nbytes = buffers.convolve_wrapper_s8(
            isa, params, dims_of(source), filter_dims, dims_of(output)
        )
    elif dtype == "INT16":
        filter_dims = dims_of((1, filter_h, filter_w, filter_c))
        nbytes = buffers.convolve_wrapper_s16(isa, dims_of(source), filter_dims)
    after: list[base.Event] = []
    if nbytes > 0:
        after.append(base.new_scratch((nbytes, "CMSIS-NN convolution buffer")))
    if dtype == "INT16" and bias and bias not in ("INT32", "INT64"):
        after.append(
            base.Refusal(
                f"Bias type {bias} ({TFLITE_TYPES.get(bias, 0)}) not supported.", base.INVOKE
            )
        )
    return _new_conv_facts((refused, arrays, dtype == "INT16", after))


def _conv_shapes(
    source: tuple[int, ...], weights: tuple[int, ...], output: tuple[int, ...]
) -> list[base.Event]:
    """CMSIS-NN-only checks: ranks, batch, and input channels a multiple of the filter's (the
    dims of input, filter and output; an absent one has none)."""
    if not len(source) == len(weights) == len(output) == 4:
        return _conv_ranks(source, weights, output)
    (batch, _, _, depth), filter_channels = source, weights[3]
    if batch != output[0]:
        return [
            not_equal(
                _CONV_FILE,
                "input->dims->data[0]",
                "output->dims->data[0]",
                batch,
                output[0],
            )
        ]
    if filter_channels <= 0:
        return [not_true(_CONV_FILE, "filter->dims->data[3] > 0")]
    if depth % filter_channels:
        return [
            not_equal(
                _CONV_FILE,
                "input->dims->data[3] % filter->dims->data[3]",
                "0",
                depth % filter_channels,
                0,
            )
        ]
    groups = depth // filter_channels
    if output[3] % groups:
        return [
            base.Refusal(
                "output channels not a multiple of the groups: a TFLITE_DCHECK in "
                "cmsis_nn/conv.cc aborts TFLM (setup crashes)"
            )
        ]
    return []


def _conv_ranks(
    source: tuple[int, ...], weights: tuple[int, ...], output: tuple[int, ...]
) -> list[base.Event]:
    """The first of input, filter and output whose rank is not 4 (an absent one: rank 0)."""
    for name, dims in (("input", source), ("filter", weights), ("output", output)):
        if len(dims) != 4:
            return [not_equal(_CONV_FILE, f"{name}->dims->size", "4", len(dims), 4)]
    return []


def _depthwise(context: base.KernelContext) -> base.Events:
    # Prepare: input, filter, output; checks; int8/int16 filter quantization checks and
    # per-channel arrays (O = filter dim 3); CalculateOpDataDepthwiseConv (input, filter, bias,
    # output again); the CMSIS-NN buffer for int8 input (s8 or s4 filters).
    operands = reference_conv.convolution_operands(context)
    source, weights, _, output = operands
    found = base.temp_tensors(source, weights, output)
    type_refusals = types_and_hybrid(_DEPTHWISE_FILE, source, weights, output)
    if type_refusals:
        return [*found, *type_refusals]
    assert source is not None  # its type passed
    dtype = source.dtype.name
    channels = _dim(weights, 3)
    if dtype in ("INT8", "INT16"):
        refused = _depthwise_filter_checks(source, weights, output, channels)
        if refused:
            return found + refused
        found += per_channel_arrays(channels)
    op_data_events, stops = reference_conv.calculate_op_data(
        context, _DEPTHWISE_COMMON_FILE, 3, operands
    )
    found += op_data_events
    if stops:
        return found
    inputs = context.operator.inputs
    if len(inputs) == 3 and inputs[2] < 0:
        # has_bias, but the bias is omitted: DeallocateTempTfLiteTensor(nullptr) hits a DCHECK.
        return [
            *found,
            base.Refusal(
                "bias omitted (-1) with three inputs: a TFLITE_DCHECK in "
                "depthwise_conv_common.cc aborts TFLM (setup crashes)"
            ),
        ]
    if dtype == "INT8":
        # What the shapes, the filter type and the options decide, remembered by value.
        found += _BUFFERS.of(
            (
                context.build.isa,
                _conv_options(context.operator.options),
                "" if weights is None else weights.dtype.name,
                source.shape,
                () if weights is None else weights.shape,
                () if output is None else output.shape,
            ),
            _depthwise_buffer,
        )
    return found


# By (isa, the five options, the filter's type, the dims of input, filter and output).
_BUFFERS: ScaleFree[list[base.Event]] = ScaleFree()


def _depthwise_filter_checks(
    source: Tensor | None, weights: Tensor | None, output: Tensor | None, channels: int
) -> list[base.Event]:
    # `is_quantized`, `type_of` and `scale_count` read inline: every quantized depthwise.
    quantization = None if weights is None else weights.quantization
    if quantization is None or quantization.zero_point is None:
        return [
            not_equal(
                _DEPTHWISE_FILE,
                "filter->quantization.type",
                "kTfLiteAffineQuantization",
                0,
                1,
                fix=QUANTIZE_EVERY_TENSOR,
            )
        ]
    if source is not None and source.dtype.name == "INT16":
        refused = int16_zero_points(_DEPTHWISE_FILE, ("input", source), ("output", output))
        if refused:
            return list(refused)
    count = quantization.channel_count
    if count not in (1, channels):
        return [
            not_true(
                _DEPTHWISE_FILE,
                "affine_quantization->scale->size == 1 || affine_quantization->scale->size == "
                "filter->dims->data[kDepthwiseConvQuantizedDimension]",
            )
        ]
    return []


def _depthwise_buffer(key: Any) -> list[base.Event]:
    """arm_depthwise_conv_wrapper_s8 / _s4_get_buffer_size with TFLM's dims: the filter as
    {1, h, w, output channels}; the strides are never set (TFLM fills padding and dilation only).
    `key`: (isa, the options, the filter's type, the dims of input, filter and output)."""
    isa, options, weights_type, source, weights, output = key
    # `_dims` of the three, its usual rank 4 inline (the filter's and the output's as they are).
    source_dims, (_, filter_h, filter_w, _), (_, height, width, depth) = (
        dims_of(source) if len(source) == 4 else _dims(source),
        weights if len(weights) == 4 else _dims(weights),
        output if len(output) == 4 else _dims(output),
    )
    if isa != ISA_MVE and weights_type != "INT4":
        # Off MVE the padding is never read, nor the stride (`_uninitialised_stride`: MVE's).
        nbytes = buffers.depthwise_wrapper_s8_off_mve(
            isa, source_dims, filter_h, filter_w, depth, dilated=_dilated(options)
        )
        return [base.new_scratch((nbytes, "CMSIS-NN depthwise buffer"))] if nbytes > 0 else []
    filter_dims = dims_of((1, filter_h, filter_w, depth))
    output_dims = dims_of((source_dims.n, height, width, depth))
    params = _conv_params(options, source, filter_h, filter_w, strided=False)
    if weights_type == "INT4":
        nbytes = buffers.depthwise_wrapper_s4(isa, params, source_dims, filter_dims, output_dims)
        estimates: list[base.Event] = []
    else:
        nbytes = buffers.depthwise_wrapper_s8(isa, params, source_dims, filter_dims, output_dims)
        estimates = _uninitialised_stride(isa, params, source_dims, filter_dims, output_dims)
    if nbytes > 0:
        return [base.new_scratch((nbytes, "CMSIS-NN depthwise buffer")), *estimates]
    return estimates


def _uninitialised_stride(
    isa: str, params: ConvParams, source: Dims, kernel: Dims, output: Dims
) -> list[base.Event]:
    """MVE runs a one-input-channel depthwise as a convolution whose 1xN test and size read the
    stride TFLM never sets. The GCC probes took the generic size (predicted here, the larger
    one); another binary may take the 1xN size instead."""
    if not buffers.converts_one_input_channel(isa, source, output):
        return []
    as_conv = Dims(kernel.c, kernel.h, kernel.w, kernel.n)
    if buffers.is_convolve_1x1(params, source, as_conv):
        return []
    if source.h != 1 or params.dilation_w != 1 or kernel.h != 1:
        return []
    generic = buffers.convolve_s8_mve(source, as_conv)
    return [
        base.Estimate(
            "CMSIS-NN's MVE depthwise reads an uninitialised stride for this one-channel 1xN "
            "depthwise: the scratch size assumes the generic path (what GCC builds took); "
            "another build may request less",
            margin_bytes=generic,
        )
    ]


def _transpose_conv(context: base.KernelContext) -> base.Events:
    # Prepare: output, input (#2), filter (#1); checks; per-channel arrays (O = filter dim 0,
    # every type); int8: the CMSIS-NN buffer and the reversed-filter buffer (always requested,
    # possibly 0 bytes); int16: int64 accumulators; CalculateOpData (input, filter, bias, output
    # again for non-float; int16 with an int16 bias: an int64 copy of it).
    source, weights, output = context.input(2), context.input(1), context.output(0)
    found: list[base.Event] = base.temps(context, ("out", 0), ("in", 2), ("in", 1))
    dtype = type_of(source)
    if dtype != type_of(output):
        return [
            *found,
            not_equal(
                _TRANSPOSE_CONV_FILE,
                "input->type",
                "output->type",
                type_number(source),
                type_number(output),
            ),
        ]
    if dtype not in ("FLOAT32", "INT16", "INT8"):
        return [*found, base.Refusal(UNSUPPORTED_INPUT)]
    if type_of(weights) != ("FLOAT32" if dtype == "FLOAT32" else "INT8"):
        return [*found, base.Refusal(HYBRID)]
    channels = _dim(weights, 0)
    found += per_channel_arrays(channels)
    isa = context.build.isa
    if dtype == "INT8":
        stride_w, stride_h = context.option("stride_w", 1), context.option("stride_h", 1)
        source_dims = Dims(_dim(source, 0), _dim(source, 1), _dim(source, 2), _dim(source, 3))
        filter_dims = Dims(channels, _dim(weights, 1), _dim(weights, 2), _dim(source, 3))
        output_dims = Dims(_dim(source, 0), _dim(output, 1), _dim(output, 2), channels)
        found.append(
            base.Scratch(
                buffers.transpose_conv_s8(
                    isa, (stride_w, stride_h), source_dims, filter_dims, output_dims
                ),
                "CMSIS-NN transpose_conv buffer",
            )
        )
        found.append(
            base.Scratch(
                buffers.transpose_conv_s8_reverse(stride_w, stride_h, source_dims, filter_dims),
                "CMSIS-NN transpose_conv reversed filter",
            )
        )
    elif dtype == "INT16":
        found.append(base.Scratch(elements(output) * 8, "transpose_conv int64 accumulators"))
    if dtype in ("INT8", "INT16"):
        refused = _transpose_conv_filter_checks(weights, channels)
        if refused:
            return found + refused
    return found + _transpose_conv_op_data(context, dtype, weights, channels)


def _transpose_conv_filter_checks(weights: Tensor | None, channels: int) -> list[base.Event]:
    if not is_quantized(weights):
        return [
            not_equal(
                _TRANSPOSE_CONV_FILE,
                "filter->quantization.type",
                "kTfLiteAffineQuantization",
                0,
                1,
                fix=QUANTIZE_EVERY_TENSOR,
            )
        ]
    if scale_count(weights) not in (1, channels):
        return [
            not_true(
                _TRANSPOSE_CONV_FILE,
                "affine_quantization->scale->size == 1 || affine_quantization->scale->size == "
                "filter->dims->data[kConvQuantizedDimension]",
            )
        ]
    return []


def _transpose_conv_op_data(
    context: base.KernelContext, dtype: str, weights: Tensor | None, channels: int
) -> list[base.Event]:
    """CalculateOpData: inputs 3 or 4; non-float fetches input, filter, bias and output again."""
    if len(context.operator.inputs) not in (3, 4):
        return [not_true(_TRANSPOSE_CONV_FILE, "has_bias || node->inputs->size == 3")]
    if dtype == "FLOAT32":
        return []
    found: list[base.Event] = base.temps(context, ("in", 2), ("in", 1), ("in", 3), ("out", 0))
    refused = _transpose_quantization_params(context, weights, channels)
    if refused:
        return found + refused
    bias = context.input(3)
    if dtype == "INT16":
        if bias is None:
            # `bias->type` through a null pointer (the reference kernel tests `bias != nullptr`
            # first; CMSIS-NN's does not): undefined behaviour, and on all three CMSIS-NN probes
            # AllocateTensors never returns (measured: TRANSPOSE_CONV.INT16.no_bias halts).
            return [
                *found,
                base.Refusal(
                    "int16 TRANSPOSE_CONV without a bias: CMSIS-NN's Prepare reads the missing "
                    "bias's type through a null pointer (setup crashes)"
                ),
            ]
        if type_of(bias) == "INT16":
            found.append(base.Scratch(elements(bias) * 8, "transpose_conv int64 bias copy"))
    return found


# The int8 orders, per code path (`traces`): arm_convolve_wrapper_s8 picks 1x1 (the matrix product
# walks output-channel pairs outermost on C and DSP, 4 pixels at a time on MVE), 1xN on MVE, or
# the im2col of 2 (C, DSP) / 4 (MVE) pixels (a grouped convolution walks the image per group);
# arm_depthwise_conv_wrapper_s8 the 3x3 kernel (4 channels at a time), the DSP window im2col, the
# MVE walk per 124-channel block, the multiplier-4 or the generic kernel, or on MVE a convolution
# for one input channel.
_CONV_INT8 = base.AccessOrder(
    "CMSIS-NN: per code path (1x1 matrix product, 1xN, im2col of 2 or 4 pixels)",
    "arm_convolve_wrapper_s8.c, arm_convolve_1x1_s8(_fast).c, arm_convolve_1_x_n_s8.c, "
    "arm_convolve_s8.c, arm_nn_mat_mult_nt_t_s8.c",
    (0,),
    traces.conv_distance,
)
_DEPTHWISE_INT8 = base.AccessOrder(
    "CMSIS-NN: per code path (3x3 by 4 channels, window im2col, 124-channel blocks, generic)",
    "arm_depthwise_conv_wrapper_s8.c, arm_depthwise_conv_3x3_s8.c, arm_depthwise_conv_s8_opt.c, "
    "arm_depthwise_conv_s8.c",
    (0,),
    traces.depthwise_distance,
)


def _conv_int8(view: base.KernelContext) -> base.AccessOrder | base.NoOverlap:
    weights = view.input(1)
    if weights is None or weights.dtype.name != "INT8":
        return not_analysed("int4 weights not analysed")
    return _CONV_INT8


def _depthwise_int8(view: base.KernelContext) -> base.AccessOrder | base.NoOverlap:
    weights = view.input(1)
    if weights is None or weights.dtype.name != "INT8":
        return not_analysed("int4 weights not analysed")
    return _DEPTHWISE_INT8


_REFERENCE = base.rule_table(*reference_conv.RULES)

RULES = (
    cmsis_nn_kernel(
        _REFERENCE["CONV_2D"],
        "cmsis_nn/conv.cc, conv_common.cc",
        int8_paths(_conv_int8),
        CMSIS_OP_DATA_CONV,
        _conv,
    ),
    cmsis_nn_kernel(
        _REFERENCE["DEPTHWISE_CONV_2D"],
        "cmsis_nn/depthwise_conv.cc, depthwise_conv_common.cc",
        int8_paths(_depthwise_int8),
        CMSIS_OP_DATA_CONV,
        _depthwise,
    ),
    cmsis_nn_kernel(
        _REFERENCE["TRANSPOSE_CONV"],
        "cmsis_nn/transpose_conv.cc",
        NOT_ANALYSED,
        CMSIS_OP_DATA_TRANSPOSE_CONV,
        _transpose_conv,
    ),
)
