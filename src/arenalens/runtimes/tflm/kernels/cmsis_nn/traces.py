"""CMSIS-NN's access orders, per code path: an int8 operator on a CMSIS-NN build → the trace of
the loops that build runs for it (`access_order.Trace`), hence how far below its input its output
may start (the distance functions the CMSIS-NN variant rules' access orders use).

Read from ARM-software/CMSIS-NN 4ab83cc3 (the commit the Cortex-M probes build) and TFLM's
*kernels/cmsis_nn/* at 90b983c2b3f1, which picks the CMSIS-NN function per operator. CMSIS-NN
chooses its loops by the instruction set (`build.isa`: pure C, the DSP extension, MVE), so each
function below takes the code path. The traces are the loops' order of reads and writes:

* **convolution** (`arm_convolve_wrapper_s8`): a 1x1 convolution without padding runs
  `arm_nn_mat_mult_nt_t_s8` over all pixels at once (stride 1, `arm_convolve_1x1_s8_fast`) or row
  by output row (`arm_convolve_1x1_s8`). On C and DSP that matrix product walks output channels in
  pairs *outermost*, re-reading every input row for every pair; on MVE it takes 4 input rows at a
  time and writes their outputs channel by channel. A 1xN convolution on MVE runs the product over
  the input rows in place (`arm_convolve_1_x_n_s8`). Every other convolution (`arm_convolve_s8`)
  copies the windows of 2 (C, DSP) or 4 (MVE) output pixels into a buffer before writing their
  outputs; a grouped one walks the image once per group.
* **depthwise convolution** (`arm_depthwise_conv_wrapper_s8`): on MVE one input channel with
  several outputs becomes the convolution above (`arm_depthwise_conv_to_conv_s8`); multiplier 1,
  batch 1, no dilation runs `arm_depthwise_conv_3x3_s8` (C, DSP; 3x3, padding <= 1: 4 channels at
  a time) or `arm_depthwise_conv_s8_opt` (DSP: a pixel's whole window, then all its channels; MVE:
  the image walked once per block of CH_IN_BLOCK_MVE channels, 4 pixels at a time; C: the generic
  kernel); the rest `arm_depthwise_conv_s8` (multiplier a multiple of 4: 4 outputs of one input
  channel at a time; else the reference order).
* **pools**: `arm_avgpool_s8` reads a pixel's window for 16 channels (MVE), all channels (DSP) or
  one (C) before writing them; `arm_max_pool_s8` copies the window's first pixel into the output
  pixel (a memcpy), then compares the rest of the window into it.
* **softmax** (`arm_softmax_s8`): a row read whole, then each output from its own input element;
  **add, mul** without broadcast (`arm_elementwise_*_s8`): 1, 4 or 4 elements read before they are
  written; with broadcast TFLM runs the reference loops.
* **pad** (`arm_pad_s8`): in output order, input rows by `memcpy` (chunks); **transpose**
  (`arm_transpose_s8`): in *input* order, each element copied to its place (2-D, and 4-D keeping
  the first two axes on MVE: 8 elements of a column gathered, then stored).

Other CMSIS-NN kernels and types (int16 and int4 paths, MAXIMUM / MINIMUM, fully connected, ...)
are not traced here: no overlap on a CMSIS-NN path. Loops are GCC's, as the probes and TFLM's
makefile build them; where armclang takes another loop (the buffered 1x1 convolution on DSP, which
reads no later than GCC's; the depthwise-to-convolution threshold on MVE) the distance is the
larger of both. Every distance here was run on the output probes (M3: pure C, M7: DSP, M55: MVE)
at that distance and one element closer: tests/overlap_proofs.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arenalens.builds.build import ISA_DSP, ISA_MVE, ISA_NONE
from arenalens.ir import Tensor
from arenalens.runtimes.tflm.access_order import (
    MAX_TRACE_EVENTS,
    NO_READ,
    Trace,
    Window,
    distance_of,
    element_bytes,
    int_constants,
    options_of,
    too_large,
    window_lowest_reads,
    window_of,
    windowed_operands,
)
from arenalens.runtimes.tflm.kernels.base import KernelContext

if TYPE_CHECKING:
    from arenalens.runtimes.tflm.access_order import Int64Array

CH_IN_BLOCK_MVE = 124  # Include/arm_nnsupportfunctions.h
# arm_depthwise_conv_wrapper_s8 on MVE: one input channel with more output channels than this
# becomes a convolution (GCC: 1, armclang: 8).
DW_TO_CONV_THRESHOLD_GCC = 1
DW_TO_CONV_THRESHOLD_ARMCLANG = 8


@dataclass(frozen=True, slots=True)
class Geometry:
    """An NHWC input and output, the window between them, and their element sizes."""

    input_shape: tuple[int, int, int, int]
    output_shape: tuple[int, int, int, int]
    window: Window
    element_in: int = 1
    element_out: int = 1

    @property
    def pixels(self) -> int:
        """Output pixels (batches included)."""
        batches, height, width, _ = self.output_shape
        return batches * height * width

    def paddings(self) -> tuple[int, int]:
        """(leading padding of the height, of the width), as TFLM computes them."""
        _, in_h, in_w, _ = self.input_shape
        return self.window.paddings(in_h, in_w)


def geometry(source: Tensor, target: Tensor, window: Window) -> Geometry | None:
    """Tensors of 4 dimensions → their geometry (None otherwise)."""
    if len(source.shape) != 4 or len(target.shape) != 4:
        return None
    return Geometry(
        tuple(source.shape),  # type: ignore[arg-type]
        tuple(target.shape),  # type: ignore[arg-type]
        window,
        element_bytes(source),
        element_bytes(target),
    )


def _too_many(*counts: int) -> bool:
    return math.prod(counts) > MAX_TRACE_EVENTS


# ---------------------------------------------------------------------------------------------
# Window kernels: output pixels in groups, output channels in blocks


def blocked_window_trace(
    shape: Geometry,
    *,
    read_channel: Int64Array,
    blocks: Sequence[tuple[int, int]],
    pixel_group: int = 1,
    blocks_outer: bool = False,
) -> Trace | None:
    """Output pixels in groups of `pixel_group` (raster order, batches included), output
    channels in `blocks` [start, end): each (group, block) reads the group's windows for the
    block's channels, then writes them. `read_channel[c]` is the lowest input channel output
    channel c reads. `blocks_outer`: the image is walked once per block."""
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    pixels = shape.pixels
    groups = -(-pixels // pixel_group)
    if _too_many(groups, len(blocks)) or not blocks:
        return None
    lowest = window_lowest_reads(
        shape.input_shape, shape.output_shape, shape.window, shape.element_in
    )
    starts = np.arange(0, pixels, pixel_group, dtype=np.int64)
    group_low = np.minimum.reduceat(lowest, starts)
    group_last = np.minimum(starts + pixel_group, pixels) - 1
    channels = shape.output_shape[3]
    first = np.array([start for start, _ in blocks], dtype=np.int64)
    last = np.array([end - 1 for _, end in blocks], dtype=np.int64)
    read_offset = read_channel[first] * shape.element_in
    reads = np.where(
        group_low[:, None] < NO_READ, group_low[:, None] + read_offset[None, :], NO_READ
    )
    writes = ((group_last[:, None] * channels + last[None, :]) + 1) * shape.element_out - 1
    if blocks_outer:
        reads, writes = reads.T, writes.T
    return Trace(writes.reshape(-1), np.minimum(reads, NO_READ).reshape(-1))


def channel_blocks(
    channels: int, size: int, *, singles_after: bool = False
) -> list[tuple[int, int]]:
    """[0, size), [size, 2 size), ...; the rest in one block, or one channel at a time."""
    whole = channels - channels % size if singles_after else channels
    found = [(start, min(start + size, whole)) for start in range(0, whole, size)]
    found += [(c, c + 1) for c in range(whole, channels)]
    return found


# ---------------------------------------------------------------------------------------------
# arm_nn_mat_mult_nt_t_s8: lhs rows (pixels of input) x rhs rows (output channels)


def mat_mult_events(
    row_low: Int64Array, out_row: Int64Array, channels: int, isa: str
) -> tuple[Int64Array, Int64Array]:
    """arm_nn_mat_mult_nt_t_s8 → (last written byte, lowest read byte) per event, in order.

    `row_low[r]` is the first input byte of lhs row r, `out_row[r]` the first output byte of its
    output row (1-byte elements)."""
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    rows = len(row_low)
    if isa == ISA_MVE:
        return _mat_mult_mve(row_low, out_row, channels)
    # C and DSP: output channels in pairs outermost; input rows in pairs inside.
    pairs = channels // 2
    row_pairs = rows // 2
    parts_w: list[Int64Array] = []
    parts_r: list[Int64Array] = []
    if pairs and rows:
        channel = np.arange(pairs, dtype=np.int64) * 2
        if row_pairs:
            first = np.arange(row_pairs, dtype=np.int64) * 2
            low = np.minimum(row_low[first], row_low[first + 1])
            high = out_row[first + 1]
            inner_w = high[None, :] + channel[:, None] + 1
            inner_r = np.broadcast_to(low[None, :], inner_w.shape)
        else:
            inner_w = np.zeros((pairs, 0), dtype=np.int64)
            inner_r = inner_w
        if rows % 2:
            tail_w = (out_row[-1] + channel + 1)[:, None]
            tail_r = np.full((pairs, 1), row_low[-1], dtype=np.int64)
            inner_w = np.concatenate([inner_w, tail_w], axis=1)
            inner_r = np.concatenate([inner_r, tail_r], axis=1)
        parts_w.append(inner_w.reshape(-1))
        parts_r.append(np.ascontiguousarray(inner_r).reshape(-1))
    if channels % 2 and rows:
        parts_w.append(out_row + channels - 1)
        parts_r.append(row_low.copy())
    return _joined(parts_w, parts_r)


def _mat_mult_mve(
    row_low: Int64Array, out_row: Int64Array, channels: int
) -> tuple[Int64Array, Int64Array]:
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    rows = len(row_low)
    blocks = rows // 4
    parts_w: list[Int64Array] = []
    parts_r: list[Int64Array] = []
    if blocks and channels:
        first = np.arange(blocks, dtype=np.int64) * 4
        low = np.minimum.reduce([row_low[first + k] for k in range(4)])
        high = out_row[first + 3]
        channel = np.arange(channels, dtype=np.int64)
        parts_w.append((high[:, None] + channel[None, :]).reshape(-1))
        parts_r.append(np.broadcast_to(low[:, None], (blocks, channels)).reshape(-1))
    for row in range(blocks * 4, rows):
        # One row at a time: outputs stored 4 channels at a time, the remainder at the end.
        channel = np.arange(channels, dtype=np.int64)
        writes = np.where(channel % 4 == 3, out_row[row] + channel, -1)
        reads = np.full(channels, row_low[row], dtype=np.int64)
        tail = channels % 4
        if tail:
            writes = np.concatenate([writes, [out_row[row] + channels - 1]])
            reads = np.concatenate([reads, [NO_READ]])
        parts_w.append(writes)
        parts_r.append(reads)
    return _joined(parts_w, parts_r)


def _joined(writes: list[Int64Array], reads: list[Int64Array]) -> tuple[Int64Array, Int64Array]:
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    if not writes:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(writes), np.concatenate(reads)


def conv_1x1_trace(shape: Geometry, isa: str) -> Trace | None:
    """arm_convolve_1x1_s8_fast (stride 1: every pixel one lhs row) or arm_convolve_1x1_s8 (one
    matrix product per output row, rows `stride` pixels apart)."""
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    batches, in_h, in_w, in_c = shape.input_shape
    _, out_h, out_w, out_c = shape.output_shape
    window = shape.window
    if _too_many(shape.pixels, out_c):
        return None
    if (window.stride_height, window.stride_width) == (1, 1):
        pixel = np.arange(batches * in_h * in_w, dtype=np.int64)
        writes, reads = mat_mult_events(pixel * in_c, pixel * out_c, out_c, isa)
        return Trace(writes, reads)
    parts_w: list[Int64Array] = []
    parts_r: list[Int64Array] = []
    x = np.arange(out_w, dtype=np.int64)
    for batch in range(batches):
        for row in range(out_h):
            input_row = (batch * in_h + row * window.stride_height) * in_w * in_c
            output_row = (batch * out_h + row) * out_w * out_c
            writes, reads = mat_mult_events(
                input_row + x * window.stride_width * in_c, output_row + x * out_c, out_c, isa
            )
            parts_w.append(writes)
            parts_r.append(reads)
    writes, reads = _joined(parts_w, parts_r)
    return Trace(writes, reads)


def conv_1xn_mve_trace(shape: Geometry) -> Trace | None:
    """arm_convolve_1_x_n_s8 on MVE: the padded ends through a buffer (read before written), the
    rest by the matrix product over the input in place."""
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    batches, _, in_w, in_c = shape.input_shape
    _, _, out_w, out_c = shape.output_shape
    window = shape.window
    stride, kernel = window.stride_width, window.filter_width
    _, pad = shape.paddings()
    total = (out_w - 1) * stride + kernel - in_w
    asym = total % 2
    if pad * 2 + asym != total:
        return None  # CMSIS-NN returns an error: TFLM's Eval fails
    right = max(1, (pad + asym + stride - 1) // stride) if pad + asym else 0
    left = max(1, (pad + stride - 1) // stride) if pad else 0
    middle = max(out_w - (right + left), 0)
    if right + middle + left != out_w:
        return None  # arm_convolve_s8 instead: the caller traces that
    parts_w: list[Int64Array] = []
    parts_r: list[Int64Array] = []
    for batch in range(batches):
        base_in = batch * in_w * in_c
        base_out = batch * out_w * out_c
        if left:
            # memcpy of the first kernel-width of input into the buffer, then the product.
            rows = np.arange(left, dtype=np.int64)
            writes, _ = mat_mult_events(
                np.zeros(left, np.int64), base_out + rows * out_c, out_c, ISA_MVE
            )
            parts_w.append(np.concatenate([[-1], writes]))
            parts_r.append(np.concatenate([[base_in], np.full(len(writes), NO_READ, np.int64)]))
        start = (stride * left - pad) * in_c
        rows = np.arange(middle, dtype=np.int64)
        writes, reads = mat_mult_events(
            base_in + start + rows * stride * in_c,
            base_out + (left + rows) * out_c,
            out_c,
            ISA_MVE,
        )
        parts_w.append(writes)
        parts_r.append(reads)
        count = out_w - left - middle
        if count:
            start = (stride * (left + middle) - pad) * in_c
            rows = np.arange(count, dtype=np.int64)
            writes, _ = mat_mult_events(
                np.zeros(count, np.int64), base_out + (left + middle + rows) * out_c, out_c, ISA_MVE
            )
            parts_w.append(np.concatenate([[-1], writes]))
            parts_r.append(
                np.concatenate([[base_in + start], np.full(len(writes), NO_READ, np.int64)])
            )
    writes, reads = _joined(parts_w, parts_r)
    return Trace(writes, reads)


def conv_trace(shape: Geometry, filter_depth: int, isa: str) -> Trace | None:
    """arm_convolve_wrapper_s8 on one code path."""
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    _, in_h, _, in_c = shape.input_shape
    out_c = shape.output_shape[3]
    window = shape.window
    pad_h, pad_w = shape.paddings()
    undilated = (window.dilation_height, window.dilation_width) == (1, 1)
    one_by_one = (window.filter_height, window.filter_width) == (1, 1)
    if (pad_h, pad_w) == (0, 0) and one_by_one and undilated and in_c == filter_depth:
        return conv_1x1_trace(shape, isa)
    one_by_n = (
        in_h == 1
        and window.dilation_width == 1
        and window.filter_height == 1
        and (window.stride_width * in_c) % 4 == 0
        and in_c == filter_depth
    )
    if one_by_n and isa == ISA_MVE:
        trace = conv_1xn_mve_trace(shape)
        if trace is not None:
            return trace
    if filter_depth <= 0 or in_c % filter_depth:
        return None
    groups = in_c // filter_depth
    if out_c % groups:
        return None
    per_group = out_c // groups
    read_channel = (np.arange(out_c, dtype=np.int64) // per_group) * filter_depth
    blocks = [(g * per_group, (g + 1) * per_group) for g in range(groups)]
    return blocked_window_trace(
        shape,
        read_channel=read_channel,
        blocks=blocks,
        pixel_group=4 if isa == ISA_MVE else 2,
        blocks_outer=True,
    )


def depthwise_traces(
    shape: Geometry, multiplier: int, batches: int, isa: str
) -> list[Trace | None]:
    """arm_depthwise_conv_wrapper_s8 on one code path: every loop it may take (one per compiler
    where they differ)."""
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    in_c = shape.input_shape[3]
    out_c = shape.output_shape[3]
    window = shape.window
    pad_h, pad_w = shape.paddings()
    undilated = (window.dilation_height, window.dilation_width) == (1, 1)
    found: list[Trace | None] = []
    if isa == ISA_MVE and in_c == 1 and out_c > DW_TO_CONV_THRESHOLD_GCC:
        found.append(conv_trace(shape, 1, isa))
        if out_c > DW_TO_CONV_THRESHOLD_ARMCLANG:
            return found
    read_channel = np.arange(out_c, dtype=np.int64) // multiplier
    if multiplier == 1 and batches == 1 and undilated:
        three = (window.filter_height, window.filter_width) == (3, 3) and pad_h <= 1 and pad_w <= 1
        if isa != ISA_MVE and three:
            blocks = channel_blocks(out_c, 4, singles_after=True)
            found.append(blocked_window_trace(shape, read_channel=read_channel, blocks=blocks))
        elif isa == ISA_DSP:
            blocks = [(0, out_c)]
            found.append(blocked_window_trace(shape, read_channel=read_channel, blocks=blocks))
        elif isa == ISA_MVE:
            blocks = channel_blocks(out_c, CH_IN_BLOCK_MVE)
            found.append(
                blocked_window_trace(
                    shape,
                    read_channel=read_channel,
                    blocks=blocks,
                    pixel_group=4,
                    blocks_outer=True,
                )
            )
        else:
            found.append(_depthwise_generic(shape, read_channel, multiplier, batches))
        return found
    found.append(_depthwise_generic(shape, read_channel, multiplier, batches))
    return found


def _depthwise_generic(
    shape: Geometry, read_channel: Int64Array, multiplier: int, batches: int
) -> Trace | None:
    """arm_depthwise_conv_s8: 4 outputs of one input channel at a time (multiplier a multiple of
    4, batch 1, no dilation), else one output at a time (the reference order)."""
    out_c = shape.output_shape[3]
    undilated = (shape.window.dilation_height, shape.window.dilation_width) == (1, 1)
    size = 4 if multiplier % 4 == 0 and batches == 1 and undilated else 1
    return blocked_window_trace(
        shape, read_channel=read_channel, blocks=channel_blocks(out_c, size)
    )


def avgpool_trace(shape: Geometry, isa: str) -> Trace | None:
    """arm_avgpool_s8: a pixel's window for 16 channels (MVE), all (DSP) or one (C)."""
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    channels = shape.output_shape[3]
    size = {ISA_MVE: 16, ISA_DSP: max(channels, 1), ISA_NONE: 1}[isa]
    return blocked_window_trace(
        shape,
        read_channel=np.arange(channels, dtype=np.int64),
        blocks=channel_blocks(channels, size),
    )


def maxpool_trace(shape: Geometry) -> Trace | None:
    """arm_max_pool_s8, per output pixel: the window's first pixel copied into the output pixel
    (a memcpy: its reads and writes in any order), then every other window pixel compared into
    it (its bytes already written: only its reads count)."""
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    if _too_many(shape.pixels, 2):
        return None
    first = window_lowest_reads(shape.input_shape, shape.output_shape, shape.window, 1)
    batches, in_h, in_w, channels = shape.input_shape
    _, out_h, out_w, out_c = shape.output_shape
    pad_h, pad_w = shape.paddings()
    window = shape.window

    def valid_taps(count: int, stride: int, pad: int, taps: int, size: int) -> Int64Array:
        base = np.arange(count, dtype=np.int64) * stride - pad
        return np.minimum(taps, size - base) - np.maximum(0, -base)

    columns = valid_taps(out_w, window.stride_width, pad_w, window.filter_width, in_w)
    rows = valid_taps(out_h, window.stride_height, pad_h, window.filter_height, in_h)
    step = np.where(columns[None, None, :] >= 2, channels, in_w * channels)
    more = (columns[None, None, :] >= 2) | (rows[None, :, None] >= 2)
    second = np.where(more & (first.reshape(batches, out_h, out_w) < NO_READ), step, NO_READ)
    second_read = np.minimum(first.reshape(batches, out_h, out_w) + second, NO_READ).reshape(-1)
    copy_writes = (np.arange(len(first), dtype=np.int64) + 1) * out_c - 1
    writes = np.stack([copy_writes, np.full(len(first), -1, np.int64)], axis=1).reshape(-1)
    reads = np.stack([first, second_read], axis=1).reshape(-1)
    return Trace(writes, reads, reads_may_follow_write=True)


# ---------------------------------------------------------------------------------------------
# Copies


def pad_rows_trace(
    input_shape: Sequence[int], before: Sequence[int], after: Sequence[int]
) -> Trace | None:
    """arm_pad_s8 (4-D, 1-byte elements), in output order: each memset of pad values one event
    that reads nothing, each memcpy of an input row (of a pixel's channels, when the channels are
    padded) one chunk."""
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    n, h, w, c = input_shape
    out_h = before[1] + h + after[1]
    out_w = before[2] + w + after[2]
    out_c = before[3] + c + after[3]
    if _too_many(n * h, 3 * w if out_c != c else 3):
        return None
    writes: list[int] = []
    reads: list[int] = []
    cursor = 0  # next output byte
    source = 0  # next input byte

    def fill(count: int) -> None:
        nonlocal cursor
        if count > 0:
            cursor += count
            writes.append(cursor - 1)
            reads.append(NO_READ)

    def copy(count: int) -> None:
        nonlocal cursor, source
        if count > 0:
            cursor += count
            writes.append(cursor - 1)
            reads.append(source)
            source += count

    fill(out_h * out_w * out_c * before[0])
    for _ in range(n):
        fill(out_w * out_c * before[1])
        for _ in range(h):
            fill(out_c * before[2])
            if out_c == c:
                copy(w * c)
            else:
                for _ in range(w):
                    fill(before[3])
                    copy(c)
                    fill(after[3])
            fill(out_c * after[2])
        fill(out_w * out_c * after[1])
    fill(out_h * out_w * out_c * after[0])
    return Trace(np.array(writes, np.int64), np.array(reads, np.int64), reads_may_follow_write=True)


def transpose_trace(shape: Sequence[int], perm: Sequence[int], isa: str) -> Trace | None:
    """arm_transpose_s8 (1-byte elements): 2-D (and 4-D keeping the first two axes, on MVE) by
    columns; the rest element by element in *input* order, each to its place."""
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    count = math.prod(shape)
    if count > MAX_TRACE_EVENTS or sorted(perm) != list(range(len(shape))):
        return None
    destination = np.arange(count, dtype=np.int64).reshape(tuple(shape[p] for p in perm))
    # destination[j] is output index j; invert: output index of each input element.
    to = np.empty(count, dtype=np.int64)
    to[np.arange(count, dtype=np.int64).reshape(tuple(shape)).transpose(perm).reshape(-1)] = (
        destination.reshape(-1)
    )
    rank = len(shape)
    by_columns = rank == 2 or (isa == ISA_MVE and rank == 4 and tuple(perm[:2]) == (0, 1))
    if not by_columns or isa != ISA_MVE:
        # Element by element in input order (the C and DSP column loops are that order too).
        return Trace(to, np.arange(count, dtype=np.int64))
    rows, columns = shape[-2], shape[-1]
    outer = count // (rows * columns)
    writes: list[Int64Array] = []
    reads: list[Int64Array] = []
    for block in range(outer):
        base = block * rows * columns
        for column in range(columns):
            for first in range(0, rows, 8):
                taken = np.arange(first, min(first + 8, rows), dtype=np.int64)
                sources = base + taken * columns + column
                writes.append(np.array([to[sources].max()]))
                reads.append(np.array([sources.min()]))
    joined_w, joined_r = _joined(writes, reads)
    return Trace(joined_w, joined_r)


def distance(trace: Trace | None, input_nbytes: int) -> int | None:
    """A trace (None: not traced) → its distance (None: no overlap)."""
    return None if trace is None else distance_of(trace, input_nbytes)


def worst(distances: Sequence[int | None]) -> int | None:
    """The largest of several loops' distances; None when any of them has none."""
    if not distances or any(d is None for d in distances):
        return None
    return max(d for d in distances if d is not None)


# ---------------------------------------------------------------------------------------------
# Distance functions (`AccessOrder.distance`): the view's build is the code path asked about


def conv_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """arm_convolve_wrapper_s8 (int8 weights) on the view's code path."""
    tensors = windowed_operands(view, output)
    if tensors is None:
        return None
    source, weights, target = tensors
    _, filter_h, filter_w, filter_depth = weights.shape
    shape = geometry(source, target, window_of(view, filter_h, filter_w))
    if shape is None:
        return None
    return distance(conv_trace(shape, filter_depth, view.build.isa), source.nbytes)


def depthwise_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """arm_depthwise_conv_wrapper_s8 (int8 weights) on the view's code path."""
    tensors = windowed_operands(view, output)
    if tensors is None:
        return None
    source, weights, target = tensors
    shape = geometry(source, target, window_of(view, weights.shape[1], weights.shape[2]))
    if shape is None or not source.shape[3] or target.shape[3] % source.shape[3]:
        return None
    multiplier = target.shape[3] // source.shape[3]
    traces = depthwise_traces(shape, multiplier, source.shape[0], view.build.isa)
    return worst([distance(trace, source.nbytes) for trace in traces])


def avgpool_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """arm_avgpool_s8 on the view's code path."""
    pooled = _pool_geometry(view, output)
    if pooled is None:
        return None
    shape, source_bytes = pooled
    return distance(avgpool_trace(shape, view.build.isa), source_bytes)


def maxpool_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """arm_max_pool_s8 (the same loops on every code path)."""
    pooled = _pool_geometry(view, output)
    if pooled is None:
        return None
    shape, source_bytes = pooled
    return distance(maxpool_trace(shape), source_bytes)


def _pool_geometry(view: KernelContext, output: int) -> tuple[Geometry, int] | None:
    """A pooling operator's geometry and its input's bytes; None when its loops are not
    traced (no shapes, too large, no valid window)."""
    source, target = view.input(0), view.output(output)
    if source is None or target is None or too_large(source, target):
        return None
    options = options_of(view)
    window = window_of(
        view, int(options.get("filter_height", 1) or 1), int(options.get("filter_width", 1) or 1)
    )
    shape = geometry(source, target, window)
    return None if shape is None else (shape, source.nbytes)


def pad_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """arm_pad_s8: TFLM passes the shape and paddings as 4-D, leading axes of 1 and 0."""
    source, target = view.input(0), view.output(output)
    paddings = int_constants(view, 1)
    if source is None or target is None or paddings is None or too_large(source, target):
        return None
    rank = len(source.shape)
    if rank > 4 or len(paddings) != 2 * rank:
        return None
    fill = 4 - rank
    shape = (1,) * fill + tuple(source.shape)
    before = (0,) * fill + tuple(paddings[0::2])
    after = (0,) * fill + tuple(paddings[1::2])
    return distance(pad_rows_trace(shape, before, after), source.nbytes)


def transpose_distance(view: KernelContext, slots: frozenset[int], output: int) -> int | None:
    """arm_transpose_s8 on the view's code path."""
    import numpy as np  # noqa: PLC0415 - see access_order.NO_READ

    source, target = view.input(0), view.output(output)
    perm = int_constants(view, 1)
    if source is None or target is None or perm is None or too_large(source, target):
        return None
    if len(source.shape) == 1:
        count = source.element_count
        whole = Trace(np.array([count - 1]), np.array([0]), reads_may_follow_write=True)
        return distance(whole, source.nbytes)  # one memcpy
    if not 2 <= len(source.shape) <= 4:
        return None
    return distance(transpose_trace(source.shape, perm, view.build.isa), source.nbytes)
