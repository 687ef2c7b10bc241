"""ESP-NN convolutions: CONV_2D, DEPTHWISE_CONV_2D → their setup allocations and refusals on each
esp-nn chip path and release.

Sources: espressif/esp-tflite-micro v1.3.8 tensorflow/lite/micro/kernels/esp_nn/conv.cc and
depthwise_conv.cc. Against the reference kernels (conv_common.cc `ConvPrepare`,
depthwise_conv_common.cc `DepthwiseConvPrepare`, whose steps they copy):

* OpData is `NodeData { OpDataConv op_data; int buffer_idx; }`;
* Prepare adds checks after fetching output, input and filter: CONV_2D refuses filter input
  channels ≤ 0 and input channels not a multiple of them; DEPTHWISE_CONV_2D refuses operands
  that are not 4-D, dilations ≤ 0, filter dims[0] ≠ 1, 0 input channels and filter channels not a
  multiple of the input's;
* after the reference steps (the int4 unpack request included), an int8 input requests esp-nn's
  scratch (`buffers.conv_scratch_bytes`, `buffers.depthwise_scratch_bytes`) when it is positive.
"""

from __future__ import annotations

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels import conv as reference_conv
from arenalens.runtimes.tflm.kernels.common import padding
from arenalens.runtimes.tflm.kernels.esp_nn import buffers
from arenalens.runtimes.tflm.kernels.esp_nn.scratch import with_scratch
from arenalens.runtimes.tflm.kernels.esp_nn.variants import esp_nn_kernel
from arenalens.runtimes.tflm.kernels.refusals import not_equal, not_true

# conv.cc and depthwise_conv.cc: the reference OpData and the esp-nn scratch index.
NODE_DATA_CONV = struct("NodeData", ("op_data", reference_conv.OP_DATA_CONV), ("buffer_idx", "int"))

_CONV_FILE = "tensorflow/lite/micro/kernels/esp_nn/conv.cc"
_DEPTHWISE_FILE = "tensorflow/lite/micro/kernels/esp_nn/depthwise_conv.cc"
_SAME = 0  # schema Padding: SAME 0, VALID 1
_REFERENCE = base.rule_table(*reference_conv.RULES)


def _dim(tensor: Tensor | None, axis: int) -> int:
    if tensor is None or not 0 <= axis < len(tensor.shape):
        return 0
    return tensor.shape[axis]


def _nhwc(tensor: Tensor | None) -> buffers.Dims:
    """data_dims_t as esp-tflite-micro fills it: width dims[2], height dims[1], channels dims[3]."""
    return buffers.Dims(_dim(tensor, 2), _dim(tensor, 1), _dim(tensor, 3))


def _window(context: base.KernelContext, multiplier: int = 1) -> buffers.Window:
    """The conv_params_t fields esp-nn reads: TFLM's computed padding (OpDataConv.padding,
    ComputePaddingHeightWidth), the strides and the depth multiplier."""
    source, weights = context.input(0), context.input(1)
    stride_w, stride_h = context.option("stride_w", 1), context.option("stride_h", 1)
    same = context.option("padding", _SAME) == _SAME

    def axis_padding(axis: int, stride: int, dilation: str) -> int:
        # ComputePaddingHeightWidth for one NHWC axis (1: the height, 2: the width).
        return padding(
            _dim(source, axis), _dim(weights, axis), stride, context.option(dilation, 1), same=same
        )

    pad_w = axis_padding(2, stride_w, "dilation_wfactor")
    pad_h = axis_padding(1, stride_h, "dilation_hfactor")
    return buffers.Window(pad_w, pad_h, stride_w, stride_h, multiplier)


def _conv(context: base.KernelContext) -> base.Events:
    # Prepare: output, input, filter; the filter's input channels (> 0, dividing the input's);
    # then ConvPrepare's steps; for int8 the esp-nn scratch.
    found = base.temps(context, ("out", 0), ("in", 0), ("in", 1))
    source, weights = context.input(0), context.input(1)
    filter_channels, input_channels = _dim(weights, 3), _dim(source, 3)
    if filter_channels <= 0:
        return [*found, not_true(_CONV_FILE, "filter_input_channels > 0")]
    if input_channels % filter_channels:
        remainder = input_channels % filter_channels
        expression = "input_channels % filter_input_channels"
        return [*found, not_equal(_CONV_FILE, expression, "0", remainder, 0)]
    steps = _REFERENCE["CONV_2D"].prepare(context)
    if context.input_type(0) != "INT8":
        return steps
    library = buffers.esp_nn_of(context.build)
    return with_scratch(
        steps,
        lambda: buffers.conv_scratch_bytes(
            library, _nhwc(source), _nhwc(weights), _nhwc(context.output(0)), _window(context)
        ),
        "esp-nn conv scratch",
    )


def _depthwise(context: base.KernelContext) -> base.Events:
    # Prepare: output, input, filter; rank-4 operands, dilations, a [1, h, w, c] filter whose
    # channels are a multiple of the input's; then DepthwiseConvPrepare's steps; for int8 the
    # esp-nn scratch.
    found = base.temps(context, ("out", 0), ("in", 0), ("in", 1))
    refused = _depthwise_checks(context)
    if refused:
        return found + refused
    steps = _REFERENCE["DEPTHWISE_CONV_2D"].prepare(context)
    if context.input_type(0) != "INT8":
        return steps
    library = buffers.esp_nn_of(context.build)
    window = _window(context, context.option("depth_multiplier", 1))
    return with_scratch(
        steps,
        lambda: buffers.depthwise_scratch_bytes(
            library,
            _nhwc(context.input(0)),
            _nhwc(context.input(1)),
            _nhwc(context.output(0)),
            window,
        ),
        "esp-nn depthwise scratch",
    )


def _depthwise_checks(context: base.KernelContext) -> list[base.Event]:
    """depthwise_conv.cc's checks before the reference steps, in its order."""
    source, weights, result = context.input(0), context.input(1), context.output(0)
    for name, tensor in (("input", source), ("filter", weights), ("output", result)):
        rank = 0 if tensor is None else len(tensor.shape)
        if rank != 4:
            return [not_equal(_DEPTHWISE_FILE, f"{name}->dims->size", "4", rank, 4)]
    for axis in ("height", "width"):
        if context.option(f"dilation_{axis[0]}factor", 1) <= 0:
            return [not_true(_DEPTHWISE_FILE, f"params.dilation_{axis}_factor > 0")]
    if _dim(weights, 0) != 1:
        return [not_equal(_DEPTHWISE_FILE, "filter->dims->data[0]", "1", _dim(weights, 0), 1)]
    input_channels = _dim(source, 3)
    if input_channels == 0:
        return [not_true(_DEPTHWISE_FILE, "num_input_channels != 0")]
    remainder = _dim(weights, 3) % input_channels
    if remainder:
        expression = "num_filter_channels % num_input_channels"
        return [not_equal(_DEPTHWISE_FILE, expression, "0", remainder, 0)]
    return []


RULES = (
    esp_nn_kernel(_REFERENCE["CONV_2D"], "conv.cc", NODE_DATA_CONV, _conv),
    esp_nn_kernel(_REFERENCE["DEPTHWISE_CONV_2D"], "depthwise_conv.cc", NODE_DATA_CONV, _depthwise),
)
