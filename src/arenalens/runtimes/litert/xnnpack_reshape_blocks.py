"""The blocks xnn_reshape_runtime mallocs for some operators (their reshape-time indirection
buffers, zero buffers and interpolation weights), made in a delegate kernel's Prepare after
every kernel's Init: xnnpack_objects.reshape_bytes sums them per subset, `_node_bytes` counts
them with the operators that make them."""

from __future__ import annotations

from arenalens.ir import Model, Operator, Subgraph
from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.heap_xnnpack import int_values
from arenalens.runtimes.litert.xnnpack_packing import POINTER_BYTES, XNN_EXTRA_BYTES, aligned_block


def average_pooling_reshape(subgraph: Subgraph, operator: Operator) -> int:
    """reshape_average_pooling2d: its zero buffer (a pixel of channels + XNN_EXTRA_BYTES) and
    its compressed indirection buffer (the top and bottom padded rows and one more)."""
    data, output = subgraph.tensors[operator.inputs[0]], subgraph.tensors[operator.outputs[0]]
    if len(data.shape) != 4 or len(output.shape) != 4:
        return 0
    element = data.dtype.element_bytes or 4
    options = operator.options
    height = int(options.get("filter_height", 1) or 1)
    width = int(options.get("filter_width", 1) or 1)
    stride_h = int(options.get("stride_h", 1) or 1)
    stride_w = int(options.get("stride_w", 1) or 1)
    padded = max((output.shape[1] - 1) * stride_h + height - data.shape[1], 0)
    if options.get("padding") in (1, "VALID"):
        padded = 0
    top, bottom = padded // 2, padded - padded // 2
    rows = -(-top // stride_h) + -(-bottom // stride_h) + 1
    step = height * width + (output.shape[2] - 1) * min(stride_w, width) * height
    pointers = height * width - 1 + rows * step
    return aligned_block(XNN_EXTRA_BYTES + data.shape[3] * element) + glibc.usable(
        POINTER_BYTES * pointers
    )


def reduce_reshape(model: Model, subgraph: Subgraph, operator: Operator) -> int:
    """xnn_reshape_reduce_nd over outer axes: a zero buffer of the trailing kept dimensions."""
    data = subgraph.tensors[operator.inputs[0]]
    axes = int_values(model, subgraph, operator.inputs[1]) if len(operator.inputs) > 1 else None
    if axes is None or not data.shape:
        return 0
    rank = len(data.shape)
    reduced = sorted({axis % rank for axis in axes})
    if not reduced or reduced[-1] == rank - 1:
        return 0
    trailing = 1
    for dim in data.shape[reduced[-1] + 1 :]:
        trailing *= dim
    return aligned_block(XNN_EXTRA_BYTES + trailing * (data.dtype.element_bytes or 4))


def argmax_pooling_reshape(subgraph: Subgraph, operator: Operator) -> int:
    """The indirection buffer of a MediaPipe pooling's reshape (malloc'd, one pointer each):
    xnn_reshape_argmax_pooling2d_nhwc_f32, per output row, one pooling window and then a
    pooling's width of rows per further output column (output rows × (pooling + (output
    columns - 1) × pooling width × pooling height)); xnn_reshape_unpooling2d_nhwc_x32, one per
    input pixel and pooling tap of every image. The window is the output's stride over the
    input (the delegate takes only filter = stride)."""
    pooled = operator.outputs[0] if "Argmax" in operator.opcode else operator.inputs[0]
    full = operator.inputs[0] if "Argmax" in operator.opcode else operator.outputs[0]
    pooled_shape, full_shape = subgraph.tensors[pooled].shape, subgraph.tensors[full].shape
    if len(pooled_shape) != 4 or len(full_shape) != 4 or min(pooled_shape) <= 0:
        return 0
    window_h = -(-full_shape[1] // pooled_shape[1])
    window_w = -(-full_shape[2] // pooled_shape[2])
    window = window_h * window_w
    batch, rows, columns = pooled_shape[:3]
    if "Argmax" in operator.opcode:
        pointers = rows * (window + (columns - 1) * window_w * window_h)
    else:
        pointers = batch * rows * columns * window
    return glibc.usable(POINTER_BYTES * pointers)


def resize_reshape(subgraph: Subgraph, operator: Operator) -> int:
    """xnn_reshape_resize_bilinear2d_nhwc: an indirection buffer of four pointers per output
    pixel (malloc'd) and the interpolation weights, two per output pixel (float; int16 for
    8-bit data), one aligned block."""
    output = subgraph.tensors[operator.outputs[0]] if operator.outputs else None
    if output is None or len(output.shape) != 4:
        return 0
    pixels = output.shape[1] * output.shape[2]
    weight = 4 if output.dtype.name == "FLOAT32" else 2
    return glibc.usable(4 * POINTER_BYTES * pixels) + aligned_block(2 * weight * pixels)
