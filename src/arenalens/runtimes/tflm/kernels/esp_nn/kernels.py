"""ESP-NN kernel rules (esp-tflite-micro's tensorflow/lite/micro/kernels/esp_nn/): every rule a
variant of the reference kernel's (`base.variant`).

Sources: espressif/esp-tflite-micro v1.3.8 (d6465fd5) kernels/esp_nn/{add,conv,depthwise_conv,
fully_connected,mul,pooling,softmax}.cc; the scratch sizes are esp-nn's (`buffers`), on the chip
path and esp-nn release of the build. docs/esp-nn.md has the details.

* ADD, MUL, AVERAGE_POOL_2D, MAX_POOL_2D, FULLY_CONNECTED: Init and Prepare are the reference
  kernels' (esp-tflite-micro changes only Eval, and builds without compression).
* CONV_2D, DEPTHWISE_CONV_2D: `NodeData { OpDataConv op_data; int buffer_idx; }`; Prepare adds
  shape checks before the reference steps and, for an int8 input, requests esp-nn's scratch
  after them (after the int4 unpack buffer) when its size is positive.
* SOFTMAX: `NodeData { SoftmaxParams op_data; int buffer_idx; }`; int8 → int8 requests esp-nn's
  scratch for a row of `dims->data[1]` (the input's second axis, whatever its rank).

Where these kernels call esp-nn (int8) their loops are not traced: no overlap there; float and
int16 run the reference kernels' code.
"""

from __future__ import annotations

from collections.abc import Callable

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.access_order import padding as window_padding
from arenalens.runtimes.tflm.kernels import arithmetic as reference_arithmetic
from arenalens.runtimes.tflm.kernels import conv as reference_conv
from arenalens.runtimes.tflm.kernels import fully_connected as reference_fully_connected
from arenalens.runtimes.tflm.kernels import pooling as reference_pooling
from arenalens.runtimes.tflm.kernels import softmax as reference_softmax
from arenalens.runtimes.tflm.kernels.base import (
    INVOKE,
    AccessByPath,
    AccessOrder,
    Event,
    Events,
    KernelContext,
    KernelRule,
    NoOverlap,
    Refusal,
    Scratch,
    rule_table,
    temps,
    variant,
)
from arenalens.runtimes.tflm.kernels.common import op_data
from arenalens.runtimes.tflm.kernels.esp_nn import buffers
from arenalens.runtimes.tflm.kernels.refusals import not_equal, not_true

ESP_NN = "esp-nn"
RELEASE_OVERRIDE = "1.2.3"
_SOURCES = "espressif/esp-tflite-micro v1.3.8 kernels/esp_nn/"
_CONV_FILE = "tensorflow/lite/micro/kernels/esp_nn/conv.cc"
_DEPTHWISE_FILE = "tensorflow/lite/micro/kernels/esp_nn/depthwise_conv.cc"
_SAME = 0  # schema Padding: SAME 0, VALID 1

_REFERENCE = rule_table(
    *reference_conv.RULES,
    *reference_arithmetic.RULES,
    *reference_fully_connected.RULES,
    *reference_pooling.RULES,
    *reference_softmax.RULES,
)

NODE_DATA_CONV = struct("NodeData", ("op_data", reference_conv.OP_DATA_CONV), ("buffer_idx", "int"))
NODE_DATA_SOFTMAX = struct(
    "NodeData", ("op_data", reference_softmax.SOFTMAX_OP_DATA), ("buffer_idx", "int")
)


def library_of(context: KernelContext) -> buffers.EspNn:
    """The esp-nn the build links: its chip path (`Build.isa`) and release."""
    build = context.build
    return buffers.EspNn(
        build.isa, buffers.release_named(getattr(build, "kernels_release", "") or "1.2.3")
    )


def _with_scratch(found: Events, size: Callable[[], int], what: str) -> list[Event]:
    """The reference steps, then the ESP-NN scratch request where Prepare makes it: after every
    setup step, before what only Invoke refuses, when esp-nn's size is positive; none when setup
    fails first (the size is only computed then: the shapes passed the reference checks)."""
    events = list(found)
    if any(isinstance(event, Refusal) and event.phase != INVOKE for event in events):
        return events
    nbytes = size()
    if nbytes <= 0:
        return events
    at = next(
        (i for i, e in enumerate(events) if isinstance(e, Refusal) and e.phase == INVOKE),
        len(events),
    )
    return [*events[:at], Scratch(nbytes, what), *events[at:]]


def _dim(tensor: Tensor | None, axis: int) -> int:
    if tensor is None or not 0 <= axis < len(tensor.shape):
        return 0
    return tensor.shape[axis]


def _nhwc(tensor: Tensor | None) -> buffers.Dims:
    """data_dims_t as esp-tflite-micro fills it: width dims[2], height dims[1], channels dims[3]."""
    return buffers.Dims(_dim(tensor, 2), _dim(tensor, 1), _dim(tensor, 3))


def _window(context: KernelContext, multiplier: int = 1) -> buffers.Window:
    """TFLM's computed padding (OpDataConv.padding) and the strides."""
    source, weights = context.input(0), context.input(1)
    stride_w, stride_h = context.option("stride_w", 1), context.option("stride_h", 1)
    same = context.option("padding", _SAME) == _SAME
    return buffers.Window(
        window_padding(
            _dim(source, 2),
            _dim(weights, 2),
            stride_w,
            context.option("dilation_wfactor", 1),
            same=same,
        ),
        window_padding(
            _dim(source, 1),
            _dim(weights, 1),
            stride_h,
            context.option("dilation_hfactor", 1),
            same=same,
        ),
        stride_w,
        stride_h,
        multiplier,
    )


def _conv(context: KernelContext) -> Events:
    # Prepare: output, input, filter; the filter's input channels (> 0, dividing the input's);
    # then ConvPrepare's steps; for int8 the esp-nn scratch.
    found = temps(context, ("out", 0), ("in", 0), ("in", 1))
    source, weights = context.input(0), context.input(1)
    filter_channels, input_channels = _dim(weights, 3), _dim(source, 3)
    if filter_channels <= 0:
        return [*found, not_true(_CONV_FILE, "filter_input_channels > 0")]
    if input_channels % filter_channels:
        return [
            *found,
            not_equal(
                _CONV_FILE,
                "input_channels % filter_input_channels",
                "0",
                input_channels % filter_channels,
                0,
            ),
        ]
    steps = _REFERENCE["CONV_2D"].prepare(context)
    if context.input_type(0) != "INT8":
        return steps
    return _with_scratch(
        steps,
        lambda: buffers.conv_scratch_bytes(
            library_of(context),
            _nhwc(source),
            _nhwc(weights),
            _nhwc(context.output(0)),
            _window(context),
        ),
        "esp-nn conv scratch",
    )


def _depthwise(context: KernelContext) -> Events:
    # Prepare: output, input, filter; rank-4 operands, dilations, a [1, h, w, c] filter whose
    # channels are a multiple of the input's; then DepthwiseConvPrepare's steps; for int8 the
    # esp-nn scratch.
    found = temps(context, ("out", 0), ("in", 0), ("in", 1))
    refused = _depthwise_checks(context)
    if refused:
        return found + refused
    steps = _REFERENCE["DEPTHWISE_CONV_2D"].prepare(context)
    if context.input_type(0) != "INT8":
        return steps
    return _with_scratch(
        steps,
        lambda: buffers.depthwise_scratch_bytes(
            library_of(context),
            _nhwc(context.input(0)),
            _nhwc(context.input(1)),
            _nhwc(context.output(0)),
            _window(context, context.option("depth_multiplier", 1)),
        ),
        "esp-nn depthwise scratch",
    )


def _depthwise_checks(context: KernelContext) -> list[Event]:
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
    if _dim(weights, 3) % input_channels:
        remainder = _dim(weights, 3) % input_channels
        return [
            not_equal(
                _DEPTHWISE_FILE, "num_filter_channels % num_input_channels", "0", remainder, 0
            )
        ]
    return []


def _softmax(context: KernelContext) -> Events:
    # SoftmaxPrepare's steps; then, for int8 in and out, esp-nn's scratch for a row of
    # `input->dims->data[1]` (requested whatever CalculateSoftmaxParams returned).
    steps = _REFERENCE["SOFTMAX"].prepare(context)
    if context.input_type(0) != "INT8" or context.output_type(0) != "INT8":
        return steps
    width = _dim(context.input(0), 1)
    return _with_scratch(
        steps,
        lambda: buffers.softmax_scratch_bytes(library_of(context), width),
        "esp-nn softmax row",
    )


def _int8_not_traced(context: KernelContext) -> AccessOrder | NoOverlap | None:
    """esp-nn's int8 loops are not traced (no overlap); other types run the reference code."""
    if context.input_type(0) == "INT8":
        return NoOverlap(f"ESP-NN: esp-nn's int8 loops not analysed ({_SOURCES})")
    return None


_NOT_TRACED = AccessByPath(_int8_not_traced)


def _same_setup(opcode: str, file: str) -> KernelRule:
    """An ESP-NN kernel whose Init and Prepare are the reference kernel's."""
    return variant(_REFERENCE[opcode], library=ESP_NN, source=f"esp_nn/{file}", access=_NOT_TRACED)


def _own(
    opcode: str,
    file: str,
    init: Callable[[KernelContext], Events],
    prepare: Callable[[KernelContext], Events],
) -> KernelRule:
    return variant(
        _REFERENCE[opcode],
        library=ESP_NN,
        source=f"esp_nn/{file}",
        init=init,
        prepare=prepare,
        access=_NOT_TRACED,
    )


RULES = (
    _same_setup("ADD", "add.cc"),
    _same_setup("MUL", "mul.cc"),
    _same_setup("AVERAGE_POOL_2D", "pooling.cc"),
    _same_setup("MAX_POOL_2D", "pooling.cc"),
    _same_setup("FULLY_CONNECTED", "fully_connected.cc"),
    _own("CONV_2D", "conv.cc", op_data(NODE_DATA_CONV, "NodeData"), _conv),
    _own("DEPTHWISE_CONV_2D", "depthwise_conv.cc", op_data(NODE_DATA_CONV, "NodeData"), _depthwise),
    _own("SOFTMAX", "softmax.cc", op_data(NODE_DATA_SOFTMAX, "NodeData"), _softmax),
)
