"""TFLM reference kernels' access order: operator + a dying input → how far below it the output
may start, one rule per kernel of the `tflite_micro` wheel (or an explicit none).

The traces (`access_order`) follow the loops of the reference kernels (tflite-micro
*tensorflow/lite/micro/kernels/* and *tensorflow/lite/kernels/internal/reference/*):

* **window, all channels** (CONV_2D; *reference/conv.h, integer_ops/conv.h*): batch, out_y,
  out_x, out_channel; each output element reads the window's rows, columns and (its group's)
  input channels. The lowest byte it reads is the window's first valid row and column.
* **window, per channel** (DEPTHWISE_CONV_2D, pools; *depthwiseconv_float.h,
  integer_ops/depthwise_conv.h, pooling.h, integer_ops/pooling.h*): batch, out_y, out_x,
  in_channel, multiplier; each output element reads only its own input channel of the window.
* **same index, with broadcast** (activations, quantize, cast, binary arithmetic and
  comparisons; *BroadcastBinaryOpSimple* in *broadcast_loop.h*, flat loops elsewhere): output
  elements in order, each reading the input element(s) at its (broadcast) index; a broadcast
  scalar is read once before the loop, which only reads earlier than the trace says.
* **softmax rows** (*softmax.h, log_softmax.h*): a row is read whole before any of its outputs is
  written, then each output reads its own element: the same trace as "same index".
* **copies** in output order: PAD (*pad.h PadImpl*, one element at a time), SPLIT, SPLIT_V,
  UNPACK, PACK (element copy loops), TRANSPOSE (*transpose.h TransposeImpl*), CONCATENATION
  (`memcpy` per input slice), STRIDED_SLICE (a bound: with positive strides every output element
  comes from a later input element, `memcpy` runs at most a row long).

Every other kernel gets no overlap, with its reason in `NO_OVERLAP`: it re-reads its whole input
(FULLY_CONNECTED, reductions, MEAN, BATCH_MATMUL), writes its output before reading (reductions
initialise it), copies with `memcpy` over the whole tensor (RESHAPE, SQUEEZE, EXPAND_DIMS: use
in-place aliasing instead), keeps state, or was not analysed. Only data inputs (not shape, axis
or padding tensors) may be overlapped (`OverlapRule.data_inputs`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.access_order import (
    MAX_TRACE_EVENTS,
    Copy,
    Trace,
    Window,
    broadcast_trace,
    copies_trace,
    distance_of,
    element_bytes,
    pad_trace,
    transpose_trace,
    window_all_channels_trace,
    window_per_channel_trace,
)
from arenalens.runtimes.tflm.kernels.base import KernelContext

DistanceFunction = Callable[[KernelContext, frozenset[int], int], "int | None"]


@dataclass(frozen=True, slots=True)
class OverlapRule:
    """How one kernel lets its output slide over a data input, and where that was read."""

    opcode: str
    pattern: str  # the access pattern, as named in the module docstring
    source: str  # kernel source files the trace follows
    data_inputs: tuple[int, ...] | None  # input slots that may be overlapped (None: all)
    distance: DistanceFunction  # (view, slots holding the input, output position) → D or None


def options_of(view: KernelContext) -> Mapping[str, Any]:
    return view.operator.options


def window_of(view: KernelContext, filter_height: int, filter_width: int) -> Window:
    options = options_of(view)
    return Window(
        filter_height=filter_height,
        filter_width=filter_width,
        stride_height=int(options.get("stride_h", 1) or 1),
        stride_width=int(options.get("stride_w", 1) or 1),
        dilation_height=int(options.get("dilation_hfactor", 1) or 1),
        dilation_width=int(options.get("dilation_wfactor", 1) or 1),
        same_padding=int(options.get("padding", 0)) == 0,  # Padding.SAME = 0, VALID = 1
    )


def checked(trace: Trace | None, input_nbytes: int) -> int | None:
    return None if trace is None else distance_of(trace, input_nbytes)


def too_large(*tensors: Tensor | None) -> bool:
    return any(t is None or t.element_count > MAX_TRACE_EVENTS for t in tensors)


def _conv_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    source, weights, target = view.input(0), view.input(1), view.output(output)
    if source is None or weights is None or target is None or too_large(source, target):
        return None
    if len(weights.shape) != 4:
        return None
    _, filter_h, filter_w, filter_depth = weights.shape
    trace = window_all_channels_trace(
        source, target, window_of(view, filter_h, filter_w), filter_input_depth=filter_depth
    )
    return checked(trace, source.nbytes)


def _depthwise_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    source, weights, target = view.input(0), view.input(1), view.output(output)
    if source is None or weights is None or target is None or too_large(source, target):
        return None
    if len(weights.shape) != 4 or len(source.shape) != 4 or not source.shape[3]:
        return None
    _, filter_h, filter_w, _ = weights.shape
    multiplier = target.shape[3] // source.shape[3] if len(target.shape) == 4 else 0
    trace = window_per_channel_trace(
        source, target, window_of(view, filter_h, filter_w), depth_multiplier=multiplier
    )
    return checked(trace, source.nbytes)


def _pool_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    source, target = view.input(0), view.output(output)
    if source is None or target is None or too_large(source, target):
        return None
    options = options_of(view)
    window = window_of(
        view, int(options.get("filter_height", 1) or 1), int(options.get("filter_width", 1) or 1)
    )
    trace = window_per_channel_trace(source, target, window, depth_multiplier=1)
    return checked(trace, source.nbytes)


def _broadcast_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    target = view.output(output)
    sources = [view.input(slot) for slot in sorted(slots)]
    if target is None or any(s is None for s in sources) or too_large(target, *sources):
        return None
    first = sources[0]
    assert first is not None
    shapes = [s.shape for s in sources if s is not None]
    trace = broadcast_trace(shapes, element_bytes(first), target.shape, element_bytes(target))
    return checked(trace, first.nbytes)


def _same_index_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    source, target = view.input(min(slots)), view.output(output)
    if source is None or target is None or too_large(source, target):
        return None
    if source.element_count != target.element_count:
        return None
    trace = broadcast_trace(
        [(source.element_count,)],
        element_bytes(source),
        (target.element_count,),
        element_bytes(target),
    )
    return checked(trace, source.nbytes)


def _pad_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    source, target = view.input(0), view.output(output)
    paddings = constant_ints(view, 1)
    if source is None or target is None or paddings is None or too_large(source, target):
        return None
    rank = len(source.shape)
    if len(paddings) != 2 * rank:
        return None
    return checked(pad_trace(source, target, paddings[0::2]), source.nbytes)


def _transpose_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    source, target = view.input(0), view.output(output)
    perm = constant_ints(view, 1)
    if source is None or target is None or perm is None or too_large(source, target):
        return None
    return checked(transpose_trace(source, target, perm), source.nbytes)


def _concatenation_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    target = view.output(output)
    parts = [view.input(slot) for slot in range(len(view.operator.inputs))]
    if target is None or any(p is None for p in parts) or too_large(target):
        return None
    rank = len(target.shape)
    axis = int(options_of(view).get("axis", 0))
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank or any(p is not None and len(p.shape) != rank for p in parts):
        return None
    outer = math.prod(target.shape[:axis])
    inner = math.prod(target.shape[axis + 1 :])
    copies: list[Copy] = []
    cursor = 0
    for k in range(outer):
        for slot, part in enumerate(parts):
            assert part is not None
            size = part.shape[axis] * inner
            copies.append(Copy(0, cursor, slot, k * size, size))
            cursor += size
    if len(copies) > MAX_TRACE_EVENTS:
        return None
    first = parts[min(slots)]
    assert first is not None
    trace = copies_trace(
        copies, output=0, input_slots=slots, element_bytes=element_bytes(target), chunked=True
    )
    return checked(trace, first.nbytes)


def _split_copies(
    source: Tensor, sizes: Sequence[int], axis: int, data_slot: int
) -> list[Copy] | None:
    """SPLIT / SPLIT_V: for each outer index, each output copies its slice in turn."""
    rank = len(source.shape)
    if not 0 <= axis < rank or sum(sizes) != source.shape[axis]:
        return None
    outer = math.prod(source.shape[:axis])
    inner = math.prod(source.shape[axis + 1 :])
    copies: list[Copy] = []
    cursor = 0
    for k in range(outer):
        for position, size in enumerate(sizes):
            count = size * inner
            copies.append(Copy(position, k * count, data_slot, cursor, count))
            cursor += count
    return copies


def _split_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    opcode = view.operator.opcode
    data_slot = 1 if opcode == "SPLIT" else 0
    source = view.input(data_slot)
    target = view.output(output)
    if source is None or target is None or too_large(source) or slots != {data_slot}:
        return None
    rank = len(source.shape)
    if opcode == "UNPACK":
        axis = int(options_of(view).get("axis", 0))
        axis = axis + rank if axis < 0 else axis
        if not 0 <= axis < rank:
            return None
        copies: list[Copy] | None = _unpack_copies(source, axis, data_slot)
    else:
        axis_values = constant_ints(view, 0 if opcode == "SPLIT" else 2)
        if not axis_values:
            return None
        axis = axis_values[0] + rank if axis_values[0] < 0 else axis_values[0]
        sizes = [
            view.output(p).shape[axis] if view.output(p) is not None else -1  # type: ignore[union-attr]
            for p in range(len(view.operator.outputs))
        ]
        if any(size < 0 for size in sizes) or not 0 <= axis < rank:
            return None
        copies = _split_copies(source, sizes, axis, data_slot)
    if copies is None:
        return None
    trace = copies_trace(
        copies,
        output=output,
        input_slots=slots,
        element_bytes=element_bytes(source),
        chunked=False,
    )
    return checked(trace, source.nbytes)


def _unpack_copies(source: Tensor, axis: int, data_slot: int) -> list[Copy]:
    """UNPACK (*unpack.cc*): for each output i, for each outer index, copy its slice."""
    outer = math.prod(source.shape[:axis])
    inner = math.prod(source.shape[axis + 1 :])
    count = source.shape[axis]
    return [
        Copy(i, k * inner, data_slot, (k * count + i) * inner, inner)
        for i in range(count)
        for k in range(outer)
    ]


def _pack_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """PACK (*pack.cc*): for each input i, for each outer index, copy its slice into place."""
    target = view.output(output)
    parts = [view.input(slot) for slot in range(len(view.operator.inputs))]
    if target is None or not parts or any(p is None for p in parts) or too_large(target):
        return None
    first = parts[0]
    assert first is not None
    rank = len(target.shape)
    axis = int(options_of(view).get("axis", 0))
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        return None
    outer = math.prod(target.shape[:axis])
    inner = math.prod(target.shape[axis + 1 :])
    count = len(parts)
    copies = [
        Copy(0, (k * count + i) * inner, i, k * inner, inner)
        for i in range(count)
        for k in range(outer)
    ]
    trace = copies_trace(
        copies, output=0, input_slots=slots, element_bytes=element_bytes(target), chunked=False
    )
    return checked(trace, first.nbytes)


def _strided_slice_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """A bound: with every stride positive, output element k comes from input element >= k; a
    memcpy (unit inner stride) covers at most one input row, so D <= row bytes (else D <= 0)."""
    source, target = view.input(0), view.output(output)
    strides = constant_ints(view, 3)
    options = options_of(view)
    if source is None or target is None or strides is None or not source.shape:
        return None
    if any(s <= 0 for s in strides) or options.get("ellipsis_mask") or options.get("new_axis_mask"):
        return None
    if source.dtype.name != target.dtype.name or len(strides) > len(source.shape):
        return None
    element = element_bytes(source)
    if strides[-1] == 1 and len(strides) == len(source.shape):
        return min(source.shape[-1] * element, target.nbytes)
    if strides[-1] == 1:
        return None  # the last axis is not sliced by the strides given: stay out
    return 0


def constant_ints(view: KernelContext, slot: int) -> tuple[int, ...] | None:
    """Values of a constant INT32 / INT64 input (shape, axis, paddings), or None."""
    tensor = view.input(slot)
    if tensor is None or not tensor.has_data or tensor.dtype.name not in ("INT32", "INT64"):
        return None
    raw = view.model.buffer_bytes(tensor.buffer)
    dtype = "<i4" if tensor.dtype.name == "INT32" else "<i8"
    if len(raw) != tensor.nbytes:
        return None
    return tuple(int(v) for v in np.frombuffer(raw, dtype=dtype))


_UNARY = (
    "same index: out[i] = f(in[i])",
    "flat loops over input and output together",
)
_BINARY = (
    "same index, with broadcast",
    "reference/broadcast_loop.h BroadcastBinaryOpSimple; flat ElementWise loops",
)
_SOFTMAX = (
    "softmax rows: a row read whole, then out[i] = f(in[i])",
    "reference/softmax.h, log_softmax.h",
)


def _rule(
    opcode: str,
    pattern: str,
    source: str,
    function: DistanceFunction,
    data_inputs: tuple[int, ...] | None = (0,),
) -> OverlapRule:
    return OverlapRule(opcode, pattern, source, data_inputs, function)


_UNARY_OPS = {
    "ABS": "elementwise.cc",
    "CAST": "cast.cc copyCast",
    "CEIL": "ceil.cc, reference/ceil.h",
    "COS": "elementwise.cc",
    "DEQUANTIZE": "dequantize.cc, reference/dequantize.h",
    "ELU": "elu.cc",
    "EXP": "exp.cc, reference/exp.h",
    "FLOOR": "floor.cc, reference/floor.h",
    "HARD_SWISH": "hard_swish.cc, reference/hard_swish.h",
    "LEAKY_RELU": "leaky_relu.cc, reference/leaky_relu.h",
    "LOG": "elementwise.cc",
    "LOGICAL_NOT": "logical.cc, elementwise.cc",
    "LOGISTIC": "logistic.cc, reference/logistic.h, integer_ops/logistic.h",
    "NEG": "neg.cc, reference/neg.h",
    "QUANTIZE": "quantize_common.cc, reference/quantize.h, requantize.h",
    "RELU": "activations_common.cc",
    "RELU6": "activations_common.cc",
    "ROUND": "round.cc, reference/round.h",
    "RSQRT": "elementwise.cc",
    "SIN": "elementwise.cc",
    "SQRT": "elementwise.cc",
    "SQUARE": "elementwise.cc",
    "TANH": "tanh.cc, reference/tanh.h, integer_ops/tanh.h",
}
_BINARY_OPS = {
    "ADD": "add.cc, reference/add.h, integer_ops/add.h",
    "DIV": "div.cc, reference/div.h",
    "EQUAL": "comparisons.cc, reference/comparisons.h",
    "FLOOR_DIV": "floor_div.cc, reference/binary_function.h",
    "FLOOR_MOD": "floor_mod.cc, reference/binary_function.h",
    "GREATER": "comparisons.cc, reference/comparisons.h",
    "GREATER_EQUAL": "comparisons.cc, reference/comparisons.h",
    "LESS": "comparisons.cc, reference/comparisons.h",
    "LESS_EQUAL": "comparisons.cc, reference/comparisons.h",
    "LOGICAL_AND": "logical.cc, reference/binary_function.h",
    "LOGICAL_OR": "logical.cc, reference/binary_function.h",
    "MAXIMUM": "maximum_minimum.cc, reference/maximum_minimum.h",
    "MINIMUM": "maximum_minimum.cc, reference/maximum_minimum.h",
    "MUL": "mul_common.cc, reference/mul.h, integer_ops/mul.h",
    "NOT_EQUAL": "comparisons.cc, reference/comparisons.h",
    "PRELU": "prelu.cc, reference/prelu.h",
    "SQUARED_DIFFERENCE": "squared_difference.cc",
    "SUB": "sub.cc, reference/sub.h",
}

RULES: Mapping[str, OverlapRule] = MappingProxyType(
    {
        "CONV_2D": _rule(
            "CONV_2D",
            "window, all channels",
            "conv.cc, reference/conv.h, integer_ops/conv.h (ConvPerChannel)",
            _conv_distance,
        ),
        "DEPTHWISE_CONV_2D": _rule(
            "DEPTHWISE_CONV_2D",
            "window, per channel",
            "depthwise_conv.cc, reference/depthwiseconv_float.h, integer_ops/depthwise_conv.h",
            _depthwise_distance,
        ),
        "AVERAGE_POOL_2D": _rule(
            "AVERAGE_POOL_2D",
            "window, per channel",
            "pooling_common.cc, reference/pooling.h, integer_ops/pooling.h",
            _pool_distance,
        ),
        "MAX_POOL_2D": _rule(
            "MAX_POOL_2D",
            "window, per channel",
            "pooling_common.cc, reference/pooling.h, integer_ops/pooling.h",
            _pool_distance,
        ),
        "L2_POOL_2D": _rule(
            "L2_POOL_2D",
            "window, per channel",
            "l2_pool_2d.cc, reference/pooling.h",
            _pool_distance,
        ),
        **{
            opcode: _rule(opcode, _UNARY[0], source, _same_index_distance)
            for opcode, source in _UNARY_OPS.items()
        },
        **{
            opcode: _rule(
                opcode, _BINARY[0], f"{source}; {_BINARY[1]}", _broadcast_distance, (0, 1)
            )
            for opcode, source in _BINARY_OPS.items()
        },
        "SOFTMAX": _rule(
            "SOFTMAX", _SOFTMAX[0], "softmax.cc, " + _SOFTMAX[1], _same_index_distance
        ),
        "LOG_SOFTMAX": _rule(
            "LOG_SOFTMAX", _SOFTMAX[0], "log_softmax.cc, " + _SOFTMAX[1], _same_index_distance
        ),
        "PAD": _rule(
            "PAD", "copy in output order", "pad.cc, reference/pad.h PadImpl", _pad_distance
        ),
        "PADV2": _rule(
            "PADV2", "copy in output order", "pad.cc, reference/pad.h PadImpl", _pad_distance
        ),
        "TRANSPOSE": _rule(
            "TRANSPOSE",
            "copy in output order",
            "transpose.cc, reference/transpose.h TransposeImpl",
            _transpose_distance,
        ),
        "CONCATENATION": _rule(
            "CONCATENATION",
            "memcpy per input slice",
            "concatenation.cc, reference/concatenation.h",
            _concatenation_distance,
            None,
        ),
        "SPLIT": _rule("SPLIT", "element copy loops", "split.cc", _split_distance, (1,)),
        "SPLIT_V": _rule("SPLIT_V", "element copy loops", "split_v.cc", _split_distance),
        "UNPACK": _rule("UNPACK", "element copy loops", "unpack.cc", _split_distance),
        "PACK": _rule("PACK", "element copy loops", "pack.cc", _pack_distance, None),
        "STRIDED_SLICE": _rule(
            "STRIDED_SLICE",
            "forward copy (bound)",
            "strided_slice.cc, reference/strided_slice.h, portable_tensor.h SequentialTensorWriter",
            _strided_slice_distance,
        ),
    }
)

_WHOLE_INPUT = "re-reads the whole input for every output element or row"
_SIGNAL_KERNELS = (
    "Window",
    "FftAutoScale",
    "Rfft",
    "Irfft",
    "Energy",
    "FilterBank",
    "FilterBankSquareRoot",
    "FilterBankSpectralSubtraction",
    "FilterBankLog",
    "PCAN",
    "Framer",
    "OverlapAdd",
    "Stacker",
    "Delay",
)
NO_OVERLAP: Mapping[str, str] = MappingProxyType(
    {
        **{
            f"CUSTOM:Signal{name}": "signal-library kernel: custom layouts, some keep state"
            for name in _SIGNAL_KERNELS
        },
        "FULLY_CONNECTED": _WHOLE_INPUT + " (fully_connected.cc)",
        "BATCH_MATMUL": _WHOLE_INPUT + " (batch_matmul.cc)",
        "SVDF": "keeps state and re-reads its input (svdf.cc)",
        "UNIDIRECTIONAL_SEQUENCE_LSTM": "re-reads inputs every time step (lstm_eval.cc)",
        "TRANSPOSE_CONV": "scatters each input element over a window of outputs",
        "MEAN": "sums over the reduced axes into a temporary, reading the whole input first",
        "SUM": "reductions write the output before reading the input (reduce_common.cc)",
        "REDUCE_MAX": "reductions write the output before reading the input (reduce_common.cc)",
        "REDUCE_MIN": "reductions write the output before reading the input (reduce_common.cc)",
        "REDUCE_ALL": "reductions write the output before reading the input (reduce_common.cc)",
        "ARG_MAX": _WHOLE_INPUT + " along the axis (not analysed further)",
        "ARG_MIN": _WHOLE_INPUT + " along the axis (not analysed further)",
        "RESHAPE": "one memcpy of the whole tensor (use --inplace to alias it)",
        "SQUEEZE": "one memcpy of the whole tensor",
        "EXPAND_DIMS": "copies the whole tensor (use --inplace to alias it)",
        "GATHER": "reads rows in index order, which is data",
        "GATHER_ND": "reads in index order, which is data",
        "EMBEDDING_LOOKUP": "reads rows in index order, which is data",
        "L2_NORMALIZATION": _WHOLE_INPUT + " (norm first)",
        "CUMSUM": "not analysed",
        "ADD_N": "not analysed",
        "MIRROR_PAD": "reads mirrored positions (not analysed)",
        "RESIZE_NEAREST_NEIGHBOR": "not analysed",
        "RESIZE_BILINEAR": "not analysed",
        "SLICE": "not analysed",
        "SELECT_V2": "not analysed",
        "REVERSE_V2": "reads the input backwards",
        "DEPTH_TO_SPACE": "not analysed",
        "SPACE_TO_DEPTH": "not analysed",
        "BATCH_TO_SPACE_ND": "not analysed",
        "SPACE_TO_BATCH_ND": "not analysed",
        "BROADCAST_TO": "not analysed",
        "BROADCAST_ARGS": "shape computation",
        "SHAPE": "shape computation",
        "FILL": "reads no data input",
        "ZEROS_LIKE": "reads no data input",
        "DYNAMIC_UPDATE_SLICE": "copies the input into the output first",
        "CIRCULAR_BUFFER": "keeps state",
        "DELAY": "keeps state",
        "DETECTION_POSTPROCESS": "not analysed",
        "VAR_HANDLE": "resource variables",
        "READ_VARIABLE": "resource variables",
        "ASSIGN_VARIABLE": "resource variables",
        "CALL_ONCE": "control flow",
        "IF": "control flow: the subgraphs read the inputs",
        "WHILE": "control flow: the subgraphs read the inputs",
        "DECODE": "not analysed",
        "CUSTOM:ethos-u": "runs on the NPU",
        "CUSTOM:TFLite_Detection_PostProcess": "not analysed",
    }
)
NOT_ANALYSED = "no access-order rule for this kernel"
