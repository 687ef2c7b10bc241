"""TFLM kernel access order: operator + a dying input → how far below it the output may start.

A kernel writes its output in a fixed order and reads its input in a fixed order. Place the output
at offset `o` and the input at `i` in the same arena: writing output byte `k` (address `o + k`)
destroys input byte `k - (i - o)`, which is harmless if the kernel never reads that input byte
again. So the output may share the input's bytes when

    i - o >= D,   D = max over output bytes k of (k - R(k) + 1)

where R(k) is the lowest input byte the kernel reads *after* writing output byte k (an input it
never reads again puts no limit). D is what `planning.Overlap.min_offset_distance` holds. It is
computed here from a *trace*: the kernel's work as events in time order, each writing some output
bytes and reading some input bytes before the write (one output element per event), or in any
order during the event (a `memcpy` chunk, whose own source and destination must then not meet).

The traces follow the loops of the reference kernels the `tflite_micro` pip package runs (tflite-
micro *tensorflow/lite/micro/kernels/* and *tensorflow/lite/kernels/internal/reference/*):

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
in-place aliasing instead), keeps state, or was not analysed. Two more limits apply to every rule:
only data inputs (not shape, axis or padding tensors) may be overlapped, and input and output
types must be allowed to alias in C++ (the same type, or one of them a byte type): otherwise the
compiler may reorder loads after stores and the trace would not hold.

`KernelLibrary.CMSIS_NN` is for TFLM built with `OPTIMIZED_KERNEL_DIR=cmsis_nn`, whose int8 and
int16 kernels walk differently (`CMSIS_NN_RULES`, read from ARM-software/CMSIS-NN); there a rule
gives the larger of both libraries' distances, so the plan is safe on either build.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.scratch import OperatorView

Int64Array = npt.NDArray[np.int64]
# A sentinel above every byte offset: "reads nothing of this input".
_NO_READ = np.iinfo(np.int64).max // 4
# Traces longer than this are not built (a hostile shape); the operator then gets no overlap. The
# largest real tensor of the corpus has 1.2 million elements (MobileNet v2 at 224x224).
MAX_TRACE_EVENTS = 4_000_000
# Character types alias every type in C++ (GCC treats int8_t, a signed char, the same way).
_BYTE_TYPES = frozenset({"INT8", "UINT8"})


class KernelLibrary(enum.StrEnum):
    """Which kernel implementations the rules describe."""

    REFERENCE = "reference"  # the tflite_micro pip package, TFLM's default kernels
    CMSIS_NN = "cmsis-nn"  # TFLM with OPTIMIZED_KERNEL_DIR=cmsis_nn (Cortex-M)


@dataclass(frozen=True, slots=True)
class Trace:
    """One kernel run seen from one (input, output) pair: events in time order.

    `last_written_byte[e]` is the highest output byte event e writes (-1: none of this output);
    `lowest_read_byte[e]` the lowest input byte it reads (_NO_READ: none). With
    `reads_may_follow_write` an event's own reads may come after its writes (a memcpy chunk).
    """

    last_written_byte: Int64Array
    lowest_read_byte: Int64Array
    reads_may_follow_write: bool = False


def distance_of(trace: Trace, input_nbytes: int) -> int:
    """Trace → the minimal offset(input) - offset(output) that keeps every later read intact.

    Never below -input_nbytes: from there on every placement is safe anyway.
    """
    reads = trace.lowest_read_byte
    writes = trace.last_written_byte
    if not len(writes):
        return -input_nbytes
    # later[e]: lowest input byte read by events after e (or during e, for memcpy chunks).
    suffix = np.minimum.accumulate(reads[::-1])[::-1]
    if trace.reads_may_follow_write:
        later = suffix
    else:
        later = np.empty_like(suffix)
        later[:-1] = suffix[1:]
        later[-1] = _NO_READ
    mask = (writes >= 0) & (later < _NO_READ)
    if not mask.any():
        return -input_nbytes
    worst = int(np.max(writes[mask] - later[mask] + 1))
    return max(worst, -input_nbytes)


# ---------------------------------------------------------------------------------------------
# Traces of the access patterns


@dataclass(frozen=True, slots=True)
class Window:
    """A sliding window over an NHWC input, as TFLM's reference kernels compute it."""

    filter_height: int
    filter_width: int
    stride_height: int
    stride_width: int
    dilation_height: int
    dilation_width: int
    same_padding: bool


def _padding(in_size: int, filter_size: int, stride: int, dilation: int, same: bool) -> int:
    """TFLM's ComputePaddingHeightWidth for one axis: the leading padding."""
    effective = (filter_size - 1) * dilation + 1
    if same:
        out_size = (in_size + stride - 1) // stride
    else:
        out_size = (in_size + stride - effective) // stride
    total = (out_size - 1) * stride + effective - in_size
    return max(total, 0) // 2


def _first_valid(origins: Int64Array, size: int, taps: int, dilation: int) -> Int64Array:
    """Per window origin, the first input index the window reads inside [0, size), or -1."""
    first_tap = np.where(origins >= 0, 0, (-origins + dilation - 1) // dilation)
    index = origins + dilation * first_tap
    valid = (first_tap < taps) & (index < size)
    return np.where(valid, index, -1)


def _window_lowest_reads(
    input_shape: tuple[int, ...], output_shape: tuple[int, ...], window: Window, element_bytes: int
) -> Int64Array:
    """Per output pixel (batch, out_y, out_x): lowest input byte (channel 0) its window reads."""
    batches, in_h, in_w, channels = input_shape
    _, out_h, out_w, _ = output_shape
    pad_h = _padding(
        in_h,
        window.filter_height,
        window.stride_height,
        window.dilation_height,
        window.same_padding,
    )
    pad_w = _padding(
        in_w, window.filter_width, window.stride_width, window.dilation_width, window.same_padding
    )
    rows = _first_valid(
        np.arange(out_h, dtype=np.int64) * window.stride_height - pad_h,
        in_h,
        window.filter_height,
        window.dilation_height,
    )
    cols = _first_valid(
        np.arange(out_w, dtype=np.int64) * window.stride_width - pad_w,
        in_w,
        window.filter_width,
        window.dilation_width,
    )
    batch = np.arange(batches, dtype=np.int64)[:, None, None]
    offsets = ((batch * in_h + rows[None, :, None]) * in_w + cols[None, None, :]) * channels
    valid = (rows[None, :, None] >= 0) & (cols[None, None, :] >= 0)
    lowest = np.where(valid, offsets * element_bytes, _NO_READ)
    return np.broadcast_to(lowest, (batches, out_h, out_w)).reshape(-1)


def _output_bytes(count: int, element_bytes: int) -> Int64Array:
    """Last byte of each of `count` consecutive output elements."""
    return (np.arange(count, dtype=np.int64) + 1) * element_bytes - 1


def window_all_channels_trace(
    input_tensor: Tensor, output_tensor: Tensor, window: Window, *, filter_input_depth: int
) -> Trace | None:
    """CONV_2D: per pixel, every output channel reads its group's channels of the window."""
    if len(input_tensor.shape) != 4 or len(output_tensor.shape) != 4:
        return None
    element_in, element_out = _element_bytes(input_tensor), _element_bytes(output_tensor)
    out_channels = output_tensor.shape[3]
    in_channels = input_tensor.shape[3]
    if filter_input_depth <= 0 or in_channels % filter_input_depth or not out_channels:
        return None
    groups = in_channels // filter_input_depth
    if out_channels % groups:
        return None
    pixels = _window_lowest_reads(input_tensor.shape, output_tensor.shape, window, element_in)
    per_group = out_channels // groups
    channel_start = (np.arange(out_channels, dtype=np.int64) // per_group) * filter_input_depth
    reads = pixels[:, None] + np.where(pixels[:, None] < _NO_READ, channel_start * element_in, 0)
    reads = np.minimum(reads, _NO_READ).reshape(-1)
    return Trace(_output_bytes(len(reads), element_out), reads)


def window_per_channel_trace(
    input_tensor: Tensor, output_tensor: Tensor, window: Window, *, depth_multiplier: int
) -> Trace | None:
    """DEPTHWISE_CONV_2D and pools: output channel c·M + m reads input channel c of the window."""
    if len(input_tensor.shape) != 4 or len(output_tensor.shape) != 4 or depth_multiplier < 1:
        return None
    element_in, element_out = _element_bytes(input_tensor), _element_bytes(output_tensor)
    in_channels = input_tensor.shape[3]
    if output_tensor.shape[3] != in_channels * depth_multiplier:
        return None
    pixels = _window_lowest_reads(input_tensor.shape, output_tensor.shape, window, element_in)
    channel = np.repeat(np.arange(in_channels, dtype=np.int64), depth_multiplier)
    reads = pixels[:, None] + np.where(pixels[:, None] < _NO_READ, channel * element_in, 0)
    reads = np.minimum(reads, _NO_READ).reshape(-1)
    return Trace(_output_bytes(len(reads), element_out), reads)


def broadcast_trace(
    input_shapes: Sequence[tuple[int, ...]],
    element_in: int,
    output_shape: tuple[int, ...],
    element_out: int,
) -> Trace | None:
    """Output elements in order, each reading every given input (the same tensor in several
    slots) at its broadcast index."""
    count = math.prod(output_shape)
    reads = np.full(count, _NO_READ, dtype=np.int64)
    for shape in input_shapes:
        index = _broadcast_index(shape, output_shape)
        if index is None:
            return None
        reads = np.minimum(reads, index * element_in)
    return Trace(_output_bytes(count, element_out), reads)


def _broadcast_index(shape: tuple[int, ...], output_shape: tuple[int, ...]) -> Int64Array | None:
    """Flat input index read for each output element under NumPy / TFLite broadcasting."""
    rank = max(len(shape), len(output_shape))
    padded = (1,) * (rank - len(shape)) + tuple(shape)
    out = (1,) * (rank - len(output_shape)) + tuple(output_shape)
    if any(d not in (1, o) for d, o in zip(padded, out, strict=True)):
        return None
    flat = np.arange(math.prod(padded), dtype=np.int64).reshape(padded)
    return np.broadcast_to(flat, out).reshape(-1)


def pad_trace(input_tensor: Tensor, output_tensor: Tensor, before: Sequence[int]) -> Trace | None:
    """PAD: output elements in order; interior ones copy the next input element, the others
    write the pad value and read nothing."""
    shape_in, shape_out = input_tensor.shape, output_tensor.shape
    if len(shape_in) != len(shape_out) or len(before) != len(shape_in):
        return None
    inside = np.ones(shape_out, dtype=bool)
    for axis, (low, size) in enumerate(zip(before, shape_in, strict=True)):
        positions = np.arange(shape_out[axis])
        along = (positions >= low) & (positions < low + size)
        view = [1] * len(shape_out)
        view[axis] = shape_out[axis]
        inside &= along.reshape(view)
    flat = inside.reshape(-1)
    if int(flat.sum()) != input_tensor.element_count:
        return None
    element_in, element_out = _element_bytes(input_tensor), _element_bytes(output_tensor)
    source = np.cumsum(flat, dtype=np.int64) - 1
    reads = np.where(flat, source * element_in, _NO_READ)
    return Trace(_output_bytes(len(flat), element_out), reads)


def transpose_trace(
    input_tensor: Tensor, output_tensor: Tensor, perm: Sequence[int]
) -> Trace | None:
    """TRANSPOSE: output elements in order, each copying the input element it comes from."""
    shape = input_tensor.shape
    if sorted(perm) != list(range(len(shape))):
        return None
    if tuple(shape[p] for p in perm) != output_tensor.shape:
        return None
    source = np.arange(input_tensor.element_count, dtype=np.int64).reshape(shape).transpose(perm)
    element = _element_bytes(input_tensor)
    return Trace(_output_bytes(source.size, element), source.reshape(-1) * element)


@dataclass(frozen=True, slots=True)
class Copy:
    """One copy the kernel makes, in time order: `count` elements from `source` slot offset to
    `target` output offset (elements), or from nowhere (source -1)."""

    output: int  # output position
    target: int
    source_slot: int
    source: int
    count: int


def copies_trace(
    copies: Sequence[Copy],
    *,
    output: int,
    input_slots: frozenset[int],
    element_bytes: int,
    chunked: bool,
) -> Trace:
    """A sequence of copies → the trace for one output and the input in `input_slots`.

    Element copy loops (`chunked` False) become one event per element; memcpy calls one event
    per call, whose own reads may follow its writes.
    """
    if chunked:
        writes = np.array(
            [
                (c.target + c.count) * element_bytes - 1 if c.output == output and c.count else -1
                for c in copies
            ],
            dtype=np.int64,
        )
        reads = np.array(
            [
                c.source * element_bytes if c.source_slot in input_slots and c.count else _NO_READ
                for c in copies
            ],
            dtype=np.int64,
        )
        return Trace(writes, reads, reads_may_follow_write=True)
    parts_w: list[Int64Array] = []
    parts_r: list[Int64Array] = []
    for c in copies:
        steps = np.arange(c.count, dtype=np.int64)
        if c.output == output:
            parts_w.append((c.target + steps + 1) * element_bytes - 1)
        else:
            parts_w.append(np.full(c.count, -1, dtype=np.int64))
        if c.source_slot in input_slots:
            parts_r.append((c.source + steps) * element_bytes)
        else:
            parts_r.append(np.full(c.count, _NO_READ, dtype=np.int64))
    empty = np.zeros(0, dtype=np.int64)
    return Trace(
        np.concatenate(parts_w) if parts_w else empty,
        np.concatenate(parts_r) if parts_r else empty,
    )


def _element_bytes(tensor: Tensor) -> int:
    return tensor.dtype.element_bytes or 1


# ---------------------------------------------------------------------------------------------
# Rules: one per kernel


DistanceFunction = Callable[[OperatorView, frozenset[int], int], "int | None"]


@dataclass(frozen=True, slots=True)
class OverlapRule:
    """How one kernel lets its output slide over a data input, and where that was read."""

    opcode: str
    pattern: str  # the access pattern, as named in the module docstring
    source: str  # kernel source files the trace follows
    data_inputs: tuple[int, ...] | None  # input slots that may be overlapped (None: all)
    distance: DistanceFunction  # (view, slots holding the input, output position) → D or None


@dataclass(frozen=True, slots=True)
class OverlapDistance:
    """The answer for one (operator, input tensor, output tensor)."""

    distance: int | None  # None: never overlap
    opcode: str
    pattern: str
    reason: str  # why not, when distance is None


def overlap_distance(
    view: OperatorView,
    input_tensor: int,
    output_tensor: int,
    library: KernelLibrary = KernelLibrary.REFERENCE,
) -> OverlapDistance:
    """Operator + one input and one output tensor index → minimal offset distance, or None."""
    opcode = view.operator.opcode
    slots = frozenset(
        position for position, index in enumerate(view.operator.inputs) if index == input_tensor
    )
    outputs = [p for p, index in enumerate(view.operator.outputs) if index == output_tensor]
    reference = RULES.get(opcode)
    if reference is None:
        return OverlapDistance(None, opcode, "", NO_OVERLAP.get(opcode, _NOT_ANALYSED))
    if not slots or len(outputs) != 1:
        return OverlapDistance(None, opcode, reference.pattern, "not an input and output of it")
    if reference.data_inputs is not None and not slots <= set(reference.data_inputs):
        return OverlapDistance(
            None, opcode, reference.pattern, "not a data input (shape, axis or parameters)"
        )
    source = view.subgraph.tensors[input_tensor]
    target = view.subgraph.tensors[output_tensor]
    if not _may_alias(source, target):
        return OverlapDistance(
            None,
            opcode,
            reference.pattern,
            f"{source.dtype.name} input and {target.dtype.name} output may not alias in C++: "
            "the compiler may reorder their loads and stores",
        )
    distances = [(reference, reference.distance(view, slots, outputs[0]))]
    if library is KernelLibrary.CMSIS_NN:
        cmsis = cmsis_nn_rule(view)
        if cmsis is not None:
            distances.append((cmsis, cmsis.distance(view, slots, outputs[0])))
    for rule, distance in distances:
        if distance is None:
            return OverlapDistance(None, opcode, rule.pattern, f"{rule.pattern}: {rule.source}")
    worst = max(d for _, d in distances if d is not None)
    pattern = " / ".join(rule.pattern for rule, _ in distances)
    return OverlapDistance(worst, opcode, pattern, "")


def _may_alias(source: Tensor, target: Tensor) -> bool:
    """C++ strict aliasing: same element type, or one side a byte type (char aliases all)."""
    names = (source.dtype.name, target.dtype.name)
    return names[0] == names[1] or bool(_BYTE_TYPES & set(names))


def _options(view: OperatorView) -> Mapping[str, Any]:
    return view.operator.options


def _window(view: OperatorView, filter_height: int, filter_width: int) -> Window:
    options = _options(view)
    return Window(
        filter_height=filter_height,
        filter_width=filter_width,
        stride_height=int(options.get("stride_h", 1) or 1),
        stride_width=int(options.get("stride_w", 1) or 1),
        dilation_height=int(options.get("dilation_hfactor", 1) or 1),
        dilation_width=int(options.get("dilation_wfactor", 1) or 1),
        same_padding=int(options.get("padding", 0)) == 0,  # Padding.SAME = 0, VALID = 1
    )


def _checked(trace: Trace | None, input_nbytes: int) -> int | None:
    return None if trace is None else distance_of(trace, input_nbytes)


def _too_large(*tensors: Tensor | None) -> bool:
    return any(t is None or t.element_count > MAX_TRACE_EVENTS for t in tensors)


def _conv_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    source, weights, target = view.input(0), view.input(1), view.output(output)
    if source is None or weights is None or target is None or _too_large(source, target):
        return None
    if len(weights.shape) != 4:
        return None
    _, filter_h, filter_w, filter_depth = weights.shape
    trace = window_all_channels_trace(
        source, target, _window(view, filter_h, filter_w), filter_input_depth=filter_depth
    )
    return _checked(trace, source.nbytes)


def _depthwise_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    source, weights, target = view.input(0), view.input(1), view.output(output)
    if source is None or weights is None or target is None or _too_large(source, target):
        return None
    if len(weights.shape) != 4 or len(source.shape) != 4 or not source.shape[3]:
        return None
    _, filter_h, filter_w, _ = weights.shape
    multiplier = target.shape[3] // source.shape[3] if len(target.shape) == 4 else 0
    trace = window_per_channel_trace(
        source, target, _window(view, filter_h, filter_w), depth_multiplier=multiplier
    )
    return _checked(trace, source.nbytes)


def _pool_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    source, target = view.input(0), view.output(output)
    if source is None or target is None or _too_large(source, target):
        return None
    options = _options(view)
    window = _window(
        view, int(options.get("filter_height", 1) or 1), int(options.get("filter_width", 1) or 1)
    )
    trace = window_per_channel_trace(source, target, window, depth_multiplier=1)
    return _checked(trace, source.nbytes)


def _broadcast_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    target = view.output(output)
    sources = [view.input(slot) for slot in sorted(slots)]
    if target is None or any(s is None for s in sources) or _too_large(target, *sources):
        return None
    first = sources[0]
    assert first is not None
    shapes = [s.shape for s in sources if s is not None]
    trace = broadcast_trace(shapes, _element_bytes(first), target.shape, _element_bytes(target))
    return _checked(trace, first.nbytes)


def _same_index_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    source, target = view.input(min(slots)), view.output(output)
    if source is None or target is None or _too_large(source, target):
        return None
    if source.element_count != target.element_count:
        return None
    trace = broadcast_trace(
        [(source.element_count,)],
        _element_bytes(source),
        (target.element_count,),
        _element_bytes(target),
    )
    return _checked(trace, source.nbytes)


def _pad_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    source, target = view.input(0), view.output(output)
    paddings = constant_ints(view, 1)
    if source is None or target is None or paddings is None or _too_large(source, target):
        return None
    rank = len(source.shape)
    if len(paddings) != 2 * rank:
        return None
    return _checked(pad_trace(source, target, paddings[0::2]), source.nbytes)


def _transpose_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    source, target = view.input(0), view.output(output)
    perm = constant_ints(view, 1)
    if source is None or target is None or perm is None or _too_large(source, target):
        return None
    return _checked(transpose_trace(source, target, perm), source.nbytes)


def _concatenation_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    target = view.output(output)
    parts = [view.input(slot) for slot in range(len(view.operator.inputs))]
    if target is None or any(p is None for p in parts) or _too_large(target):
        return None
    rank = len(target.shape)
    axis = int(_options(view).get("axis", 0))
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
        copies, output=0, input_slots=slots, element_bytes=_element_bytes(target), chunked=True
    )
    return _checked(trace, first.nbytes)


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


def _split_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    opcode = view.operator.opcode
    data_slot = 1 if opcode == "SPLIT" else 0
    source = view.input(data_slot)
    target = view.output(output)
    if source is None or target is None or _too_large(source) or slots != {data_slot}:
        return None
    rank = len(source.shape)
    if opcode == "UNPACK":
        axis = int(_options(view).get("axis", 0))
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
        element_bytes=_element_bytes(source),
        chunked=False,
    )
    return _checked(trace, source.nbytes)


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


def _pack_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    """PACK (*pack.cc*): for each input i, for each outer index, copy its slice into place."""
    target = view.output(output)
    parts = [view.input(slot) for slot in range(len(view.operator.inputs))]
    if target is None or not parts or any(p is None for p in parts) or _too_large(target):
        return None
    first = parts[0]
    assert first is not None
    rank = len(target.shape)
    axis = int(_options(view).get("axis", 0))
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
        copies, output=0, input_slots=slots, element_bytes=_element_bytes(target), chunked=False
    )
    return _checked(trace, first.nbytes)


def _strided_slice_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    """A bound: with every stride positive, output element k comes from input element >= k; a
    memcpy (unit inner stride) covers at most one input row, so D <= row bytes (else D <= 0)."""
    source, target = view.input(0), view.output(output)
    strides = constant_ints(view, 3)
    options = _options(view)
    if source is None or target is None or strides is None or not source.shape:
        return None
    if any(s <= 0 for s in strides) or options.get("ellipsis_mask") or options.get("new_axis_mask"):
        return None
    if source.dtype.name != target.dtype.name or len(strides) > len(source.shape):
        return None
    element = _element_bytes(source)
    if strides[-1] == 1 and len(strides) == len(source.shape):
        return min(source.shape[-1] * element, target.nbytes)
    if strides[-1] == 1:
        return None  # the last axis is not sliced by the strides given: stay out
    return 0


def constant_ints(view: OperatorView, slot: int) -> tuple[int, ...] | None:
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
_NOT_ANALYSED = "no access-order rule for this kernel"


# ---------------------------------------------------------------------------------------------
# CMSIS-NN (TFLM kernels/cmsis_nn/, ARM-software/CMSIS-NN Source/), int8 paths. One build of TFLM
# serves Cortex-M0/M3 (plain C), M4/M7/M33 (DSP) and M55/M85 (MVE), and CMSIS-NN picks its loops
# by the instruction set, so a rule must hold on all three.
#
# * CONV_2D, general case (arm_convolve_s8): im2col copies the windows of 2 (C, DSP) or 4 (MVE)
#   output pixels, all channels, before any of their outputs is written: every read comes at
#   least as early as in the reference loops, so the reference distance holds. Three paths
#   re-read the input after writing: 1x1 without padding (arm_nn_mat_mult_nt_t_s8 loops over
#   output-channel pairs outermost on C and DSP: the whole input again per pair), 1xN on MVE
#   (4 pixels per channel), grouped convolutions (one pass over the image per group).
# * DEPTHWISE_CONV_2D (arm_depthwise_conv_wrapper_s8): the 3x3 kernel (4 channels at a time),
#   the generic and multiplier-4 kernels (reference order) and the DSP im2col kernel read no
#   later than the reference loops. On MVE, arm_depthwise_conv_s8_opt walks the image once per
#   block of CH_IN_BLOCK_MVE (124) channels, and one input channel with several outputs becomes
#   a convolution: both re-read the input.
# * MAX_POOL_2D (arm_max_pool_s8): copies the window's first pixel into the output, then compares
#   the rest: the output pixel is written before its window is read (a chunk).
# * AVERAGE_POOL_2D (arm_avgpool_s8), SOFTMAX (arm_softmax_s8, arm_nn_softmax_common_s8), ADD and
#   MUL without broadcast (arm_elementwise_add_s8, arm_elementwise_mul_s8): a pixel's window, a
#   row, or 4 / 16 elements are read before they are written: the reference distance holds.
# * Every other CMSIS-NN kernel (int16 paths, int4 weights, MAXIMUM / MINIMUM, PAD, TRANSPOSE,
#   FULLY_CONNECTED, ...) was not analysed: no overlap under this library.

CMSIS_NN_KERNELS = frozenset(
    {
        "ADD",
        "BATCH_MATMUL",
        "CONV_2D",
        "DEPTHWISE_CONV_2D",
        "FULLY_CONNECTED",
        "MAXIMUM",
        "MINIMUM",
        "MUL",
        "PAD",
        "AVERAGE_POOL_2D",
        "MAX_POOL_2D",
        "SOFTMAX",
        "SVDF",
        "TRANSPOSE",
        "TRANSPOSE_CONV",
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
    }
)
CH_IN_BLOCK_MVE = 124  # CMSIS-NN Include/arm_nnsupportfunctions.h


def _never(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    return None


def _cmsis_none(opcode: str, why: str) -> OverlapRule:
    return OverlapRule(opcode, f"CMSIS-NN: {why}", "ARM-software/CMSIS-NN", None, _never)


def _cmsis_same_as_reference(opcode: str, source: str) -> OverlapRule:
    reference = RULES[opcode]
    return OverlapRule(opcode, "CMSIS-NN: reads no later", source, None, reference.distance)


def _cmsis_max_pool_distance(view: OperatorView, slots: frozenset[int], output: int) -> int | None:
    """arm_max_pool_s8: per output pixel a chunk (written, then its window compared into it)."""
    source, target = view.input(0), view.output(output)
    if source is None or target is None or _too_large(source, target):
        return None
    if len(source.shape) != 4 or len(target.shape) != 4:
        return None
    options = _options(view)
    window = _window(
        view, int(options.get("filter_height", 1) or 1), int(options.get("filter_width", 1) or 1)
    )
    pixels = _window_lowest_reads(source.shape, target.shape, window, 1)
    channels = target.shape[3]
    writes = (np.arange(len(pixels), dtype=np.int64) + 1) * channels - 1
    return _checked(Trace(writes, pixels, reads_may_follow_write=True), source.nbytes)


def cmsis_nn_rule(view: OperatorView) -> OverlapRule | None:
    """The CMSIS-NN kernel's rule for this operator, or None where TFLM runs the reference one."""
    opcode = view.operator.opcode
    if opcode not in CMSIS_NN_KERNELS:
        return None
    source, weights, target = view.input(0), view.input(1), view.output(0)
    data_type = source.dtype.name if source is not None else ""
    if data_type == "FLOAT32":
        return None  # TFLM's cmsis_nn kernels call the reference float kernels
    if data_type != "INT8" or source is None or target is None:
        return _cmsis_none(opcode, f"{data_type or 'this'} path not analysed")
    if opcode == "CONV_2D":
        return _cmsis_conv_rule(view, source, weights)
    if opcode == "DEPTHWISE_CONV_2D":
        return _cmsis_depthwise_rule(view, source, weights, target)
    if opcode == "MAX_POOL_2D":
        return OverlapRule(
            opcode,
            "CMSIS-NN: pixel written, then its window compared in",
            "arm_max_pool_s8.c",
            (0,),
            _cmsis_max_pool_distance,
        )
    if opcode == "AVERAGE_POOL_2D":
        return _cmsis_same_as_reference(opcode, "arm_avgpool_s8.c")
    if opcode == "SOFTMAX":
        return _cmsis_same_as_reference(opcode, "arm_softmax_s8.c, arm_nn_softmax_common_s8.c")
    if opcode in ("ADD", "MUL"):
        return _cmsis_same_as_reference(
            opcode, "arm_elementwise_add_s8.c, arm_elementwise_mul_s8.c (broadcast: reference)"
        )
    return _cmsis_none(opcode, "kernel not analysed")


def _cmsis_conv_rule(view: OperatorView, source: Tensor, weights: Tensor | None) -> OverlapRule:
    opcode = "CONV_2D"
    if weights is None or weights.dtype.name != "INT8":
        return _cmsis_none(opcode, "int4 weights not analysed")
    if len(weights.shape) != 4 or len(source.shape) != 4:
        return _cmsis_none(opcode, "not a 4-D convolution")
    _, filter_h, filter_w, filter_depth = weights.shape
    window = _window(view, filter_h, filter_w)
    in_h, in_w, channels = source.shape[1], source.shape[2], source.shape[3]
    pad_h = _padding(
        in_h, filter_h, window.stride_height, window.dilation_height, window.same_padding
    )
    pad_w = _padding(
        in_w, filter_w, window.stride_width, window.dilation_width, window.same_padding
    )
    dilated = (window.dilation_height, window.dilation_width) != (1, 1)
    if channels != filter_depth:
        return _cmsis_none(opcode, "grouped convolution: one pass over the image per group")
    if (filter_h, filter_w) == (1, 1) and (pad_h, pad_w) == (0, 0) and not dilated:
        return _cmsis_none(opcode, "1x1: output channels outermost, the input re-read per pair")
    one_by_n = (
        in_h == 1
        and window.dilation_width == 1
        and filter_h == 1
        and (window.stride_width * channels) % 4 == 0
    )
    if one_by_n:
        return _cmsis_none(opcode, "1xN on MVE: 4 pixels per output channel, re-read")
    return _cmsis_same_as_reference(opcode, "arm_convolve_s8.c (im2col before writing)")


def _cmsis_depthwise_rule(
    view: OperatorView, source: Tensor, weights: Tensor | None, target: Tensor
) -> OverlapRule:
    opcode = "DEPTHWISE_CONV_2D"
    if weights is None or weights.dtype.name != "INT8":
        return _cmsis_none(opcode, "int4 weights not analysed")
    in_channels = source.shape[-1] if source.shape else 0
    out_channels = target.shape[-1] if target.shape else 0
    multiplier = out_channels // in_channels if in_channels else 0
    options = _options(view)
    dilations = (options.get("dilation_hfactor", 1), options.get("dilation_wfactor", 1))
    batches = source.shape[0] if source.shape else 1
    if in_channels == 1 and out_channels > 1:
        return _cmsis_none(opcode, "one input channel runs as a convolution on MVE")
    if multiplier == 1 and batches == 1 and dilations == (1, 1) and in_channels > CH_IN_BLOCK_MVE:
        return _cmsis_none(opcode, "MVE walks the image once per 124-channel block")
    return _cmsis_same_as_reference(opcode, "arm_depthwise_conv_wrapper_s8 and its kernels")
