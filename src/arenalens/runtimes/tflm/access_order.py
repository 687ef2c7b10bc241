"""Kernel access order: a trace of a kernel's writes and reads → the minimal output-input distance.

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
The shapes of trace the kernels need (sliding windows, broadcast elementwise, padding, transposes
and copies) are built here, with the distances of the patterns many kernels share (`same_index`,
`broadcast`); which kernel walks which way is its rule's `access` (`kernels.base.AccessOrder`),
in its family module (`kernels/conv.py`, ...), and a library's own order on its variant rule
(`kernels/cmsis_nn/`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from arenalens.ir import Tensor
from arenalens.records import record
from arenalens.runtimes.tflm.kernels.base import AccessOrder, KernelContext
from arenalens.runtimes.tflm.kernels.common import padding

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Int64Array = npt.NDArray[np.int64]

# numpy is imported by the functions that build traces, not here: every kernel family module
# imports this one for its access orders, and `check` / `plan` never build a trace.
# A sentinel above every byte offset: "reads nothing of this input" (int64 max // 4).
NO_READ = (2**63 - 1) // 4
# Traces longer than this are not built (a hostile shape); the operator then gets no overlap. The
# largest real tensor of the corpus has 1.2 million elements (MobileNet v2 at 224x224).
MAX_TRACE_EVENTS = 4_000_000


@record(slots=True)
class Trace:
    """One kernel run seen from one (input, output) pair: events in time order.

    `last_written_byte[e]` is the highest output byte event e writes (-1: none of this output);
    `lowest_read_byte[e]` the lowest input byte it reads (NO_READ: none). With
    `reads_may_follow_write` an event's own reads may come after its writes (a memcpy chunk).
    """

    last_written_byte: Int64Array
    lowest_read_byte: Int64Array
    reads_may_follow_write: bool = False


def distance_of(trace: Trace, input_nbytes: int) -> int:
    """Trace → the minimal offset(input) - offset(output) that keeps every later read intact.

    Never below -input_nbytes: from there on every placement is safe anyway.
    """
    import numpy as np  # noqa: PLC0415 - see NO_READ

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
        later[-1] = NO_READ
    mask = (writes >= 0) & (later < NO_READ)
    if not mask.any():
        return -input_nbytes
    worst = int(np.max(writes[mask] - later[mask] + 1))
    return max(worst, -input_nbytes)


# ---------------------------------------------------------------------------------------------
# Traces of the access patterns


@record(slots=True)
class Window:
    """A sliding window over an NHWC input, as TFLM's reference kernels compute it."""

    filter_height: int
    filter_width: int
    stride_height: int
    stride_width: int
    dilation_height: int
    dilation_width: int
    same_padding: bool

    def paddings(self, in_h: int, in_w: int) -> tuple[int, int]:
        """(leading padding of the height, of the width) over an in_h × in_w input, as TFLM
        computes them (ComputePaddingHeightWidth)."""
        return (
            padding(
                in_h,
                self.filter_height,
                self.stride_height,
                self.dilation_height,
                same=self.same_padding,
            ),
            padding(
                in_w,
                self.filter_width,
                self.stride_width,
                self.dilation_width,
                same=self.same_padding,
            ),
        )


def _first_valid(origins: Int64Array, size: int, taps: int, dilation: int) -> Int64Array:
    """Per window origin, the first input index the window reads inside [0, size), or -1."""
    import numpy as np  # noqa: PLC0415 - see NO_READ

    first_tap = np.where(origins >= 0, 0, (-origins + dilation - 1) // dilation)
    index = origins + dilation * first_tap
    valid = (first_tap < taps) & (index < size)
    return np.where(valid, index, -1)


def window_lowest_reads(
    input_shape: tuple[int, ...], output_shape: tuple[int, ...], window: Window, element_bytes: int
) -> Int64Array:
    """Per output pixel (batch, out_y, out_x): lowest input byte (channel 0) its window reads."""
    import numpy as np  # noqa: PLC0415 - see NO_READ

    batches, in_h, in_w, channels = input_shape
    _, out_h, out_w, _ = output_shape
    pad_h, pad_w = window.paddings(in_h, in_w)
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
    lowest = np.where(valid, offsets * element_bytes, NO_READ)
    return np.broadcast_to(lowest, (batches, out_h, out_w)).reshape(-1)


def _output_bytes(count: int, element_bytes: int) -> Int64Array:
    """Last byte of each of `count` consecutive output elements."""
    import numpy as np  # noqa: PLC0415 - see NO_READ

    return (np.arange(count, dtype=np.int64) + 1) * element_bytes - 1


def window_all_channels_trace(
    input_tensor: Tensor, output_tensor: Tensor, window: Window, *, filter_input_depth: int
) -> Trace | None:
    """CONV_2D: per pixel, every output channel reads its group's channels of the window."""
    import numpy as np  # noqa: PLC0415 - see NO_READ

    if len(input_tensor.shape) != 4 or len(output_tensor.shape) != 4:
        return None
    element_in, element_out = element_bytes(input_tensor), element_bytes(output_tensor)
    out_channels = output_tensor.shape[3]
    in_channels = input_tensor.shape[3]
    if filter_input_depth <= 0 or in_channels % filter_input_depth or not out_channels:
        return None
    groups = in_channels // filter_input_depth
    if out_channels % groups:
        return None
    pixels = window_lowest_reads(input_tensor.shape, output_tensor.shape, window, element_in)
    per_group = out_channels // groups
    channel_start = (np.arange(out_channels, dtype=np.int64) // per_group) * filter_input_depth
    reads = pixels[:, None] + np.where(pixels[:, None] < NO_READ, channel_start * element_in, 0)
    reads = np.minimum(reads, NO_READ).reshape(-1)
    return Trace(_output_bytes(len(reads), element_out), reads)


def window_per_channel_trace(
    input_tensor: Tensor, output_tensor: Tensor, window: Window, *, depth_multiplier: int
) -> Trace | None:
    """DEPTHWISE_CONV_2D and pools: output channel c·M + m reads input channel c of the window."""
    import numpy as np  # noqa: PLC0415 - see NO_READ

    if len(input_tensor.shape) != 4 or len(output_tensor.shape) != 4 or depth_multiplier < 1:
        return None
    element_in, element_out = element_bytes(input_tensor), element_bytes(output_tensor)
    in_channels = input_tensor.shape[3]
    if output_tensor.shape[3] != in_channels * depth_multiplier:
        return None
    pixels = window_lowest_reads(input_tensor.shape, output_tensor.shape, window, element_in)
    channel = np.repeat(np.arange(in_channels, dtype=np.int64), depth_multiplier)
    reads = pixels[:, None] + np.where(pixels[:, None] < NO_READ, channel * element_in, 0)
    reads = np.minimum(reads, NO_READ).reshape(-1)
    return Trace(_output_bytes(len(reads), element_out), reads)


def broadcast_trace(
    input_shapes: Sequence[tuple[int, ...]],
    element_in: int,
    output_shape: tuple[int, ...],
    element_out: int,
) -> Trace | None:
    """Output elements in order, each reading every given input (the same tensor in several
    slots) at its broadcast index."""
    import numpy as np  # noqa: PLC0415 - see NO_READ

    count = math.prod(output_shape)
    reads = np.full(count, NO_READ, dtype=np.int64)
    for shape in input_shapes:
        index = _broadcast_index(shape, output_shape)
        if index is None:
            return None
        reads = np.minimum(reads, index * element_in)
    return Trace(_output_bytes(count, element_out), reads)


def _broadcast_index(shape: tuple[int, ...], output_shape: tuple[int, ...]) -> Int64Array | None:
    """Flat input index read for each output element under NumPy / TFLite broadcasting."""
    import numpy as np  # noqa: PLC0415 - see NO_READ

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
    import numpy as np  # noqa: PLC0415 - see NO_READ

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
    element_in, element_out = element_bytes(input_tensor), element_bytes(output_tensor)
    source = np.cumsum(flat, dtype=np.int64) - 1
    reads = np.where(flat, source * element_in, NO_READ)
    return Trace(_output_bytes(len(flat), element_out), reads)


def transpose_trace(
    input_tensor: Tensor, output_tensor: Tensor, perm: Sequence[int]
) -> Trace | None:
    """TRANSPOSE: output elements in order, each copying the input element it comes from."""
    import numpy as np  # noqa: PLC0415 - see NO_READ

    shape = input_tensor.shape
    if sorted(perm) != list(range(len(shape))):
        return None
    if tuple(shape[p] for p in perm) != output_tensor.shape:
        return None
    source = np.arange(input_tensor.element_count, dtype=np.int64).reshape(shape).transpose(perm)
    element = element_bytes(input_tensor)
    return Trace(_output_bytes(source.size, element), source.reshape(-1) * element)


@record(slots=True)
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
    import numpy as np  # noqa: PLC0415 - see NO_READ

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
                c.source * element_bytes if c.source_slot in input_slots and c.count else NO_READ
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
            parts_r.append(np.full(c.count, NO_READ, dtype=np.int64))
    empty = np.zeros(0, dtype=np.int64)
    return Trace(
        np.concatenate(parts_w) if parts_w else empty,
        np.concatenate(parts_r) if parts_r else empty,
    )


def element_bytes(tensor: Tensor) -> int:
    return tensor.dtype.element_bytes or 1


# ---------------------------------------------------------------------------------------------
# From an operator to its trace: what every kernel's distance function starts with


def options_of(view: KernelContext) -> Mapping[str, Any]:
    """The operator's builtin options."""
    return view.operator.options


def window_of(view: KernelContext, filter_height: int, filter_width: int) -> Window:
    """The operator's window: strides, dilations and padding from its options."""
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
    """A trace (None: the shapes do not fit it) → its distance."""
    return None if trace is None else distance_of(trace, input_nbytes)


def too_large(*tensors: Tensor | None) -> bool:
    """True when a tensor is absent or too large to trace."""
    return any(t is None or t.element_count > MAX_TRACE_EVENTS for t in tensors)


def windowed_operands(view: KernelContext, output: int) -> tuple[Tensor, Tensor, Tensor] | None:
    """(input, filter, output) of a convolution whose loops can be traced: shapes known, a 4-D
    filter, not too large; None otherwise."""
    source, weights, target = view.input(0), view.input(1), view.output(output)
    if source is None or weights is None or target is None or too_large(source, target):
        return None
    if len(weights.shape) != 4:
        return None
    return source, weights, target


def int_constants(view: KernelContext, slot: int) -> tuple[int, ...] | None:
    """Values of a constant INT32 / INT64 input (shape, axis, paddings), or None."""
    import numpy as np  # noqa: PLC0415 - see NO_READ

    tensor = view.input(slot)
    if tensor is None or not tensor.has_data or tensor.dtype.name not in ("INT32", "INT64"):
        return None
    raw = view.model.buffer_bytes(tensor.buffer)
    dtype = "<i4" if tensor.dtype.name == "INT32" else "<i8"
    if len(raw) != tensor.nbytes:
        return None
    return tuple(int(v) for v in np.frombuffer(raw, dtype=dtype))


def broadcast_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """Output elements in order, each reading its inputs at its broadcast index."""
    target = view.output(output)
    sources = [view.input(slot) for slot in sorted(slots)]
    if target is None or any(s is None for s in sources) or too_large(target, *sources):
        return None
    first = sources[0]
    assert first is not None
    shapes = [s.shape for s in sources if s is not None]
    trace = broadcast_trace(shapes, element_bytes(first), target.shape, element_bytes(target))
    return checked(trace, first.nbytes)


def same_index_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """out[i] = f(in[i]) over as many elements in as out."""
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


SAME_INDEX = "same index: out[i] = f(in[i])"
BROADCAST = "same index, with broadcast"
_BROADCAST_LOOPS = "reference/broadcast_loop.h BroadcastBinaryOpSimple; flat ElementWise loops"
SOFTMAX_ROWS = "softmax rows: a row read whole, then out[i] = f(in[i])"
SOFTMAX_LOOPS = "reference/softmax.h, log_softmax.h"


def same_index(source: str) -> AccessOrder:
    """A unary kernel's order (activations, quantize, cast, math functions): one flat loop over
    input and output together, reading each element before writing it."""
    return AccessOrder(SAME_INDEX, source, (0,), same_index_distance)


def broadcast(source: str) -> AccessOrder:
    """A binary kernel's order (arithmetic, comparisons, logical, MAXIMUM / MINIMUM, PRELU):
    output elements in order, each reading both inputs at its broadcast index
    (BroadcastBinaryOpSimple; a broadcast scalar is read once before the loop, earlier than the
    trace says)."""
    return AccessOrder(BROADCAST, f"{source}; {_BROADCAST_LOOPS}", (0, 1), broadcast_distance)


# Why kernels that go back to their input (matrix products, reductions, norms) never overlap it.
REREADS_INPUT = "re-reads the whole input for every output element or row"
