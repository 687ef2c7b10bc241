"""Values of the integer tensors LiteRT folds in Prepare: a node whose output became PersistentRo
→ the integers its kernel computed there, so a later Prepare reading them sizes as the runtime.

Converters leave shape arithmetic in graphs (`SHAPE → STRIDED_SLICE → CONCATENATION`, a constant
`RESHAPE`d into an fft_length). LiteRT's kernels evaluate it in Prepare when every input is a
constant or itself folded (*kernel_util.h — IsConstantOrPersistentTensor*; the kernels' Prepare
ends with `SetTensorToPersistentRo` and an Eval call). A consumer that sizes its outputs or
temporaries from such a tensor then reads real values: RFFT2D's fft_length
(*rfft2d.cc — ResizeOutputandTemporaryTensors*), TRANSPOSE_CONV's output_shape, DILATE's
dilations. Each function below computes what the named kernel's Eval writes, for the integer
(INT32 / INT64) cases converters emit; anything else stays unknown (None) and the consumer keeps
its own fallback.
"""

from __future__ import annotations

from collections.abc import Callable

from arenalens.runtimes.litert.prepare.state import Allocation, NodeContext

Values = tuple[int, ...]


def folded_values(ctx: NodeContext) -> Values | None:
    """The integers output 0 holds after this node's Prepare folded it, or None if unknown."""
    output = ctx.output()
    if output is None or output.allocation != Allocation.PERSISTENT_RO:
        return None
    if output.dtype not in ("INT32", "INT64"):
        return None
    evaluate = _EVALUATORS.get(ctx.operator.opcode)
    return None if evaluate is None else evaluate(ctx)


def _shape(ctx: NodeContext) -> Values | None:
    """*shape.cc*: the input's dims."""
    source = ctx.input(0)
    return None if source is None or source.shape is None else tuple(source.shape)


def _rank(ctx: NodeContext) -> Values | None:
    """*rank.cc*: the input's number of dims, a 0-d output."""
    source = ctx.input(0)
    return None if source is None or source.shape is None else (len(source.shape),)


def _reshape(ctx: NodeContext) -> Values | None:
    """*reshape.cc*: the input's values, unchanged."""
    return ctx.constant_ints(0)


def _concatenation(ctx: NodeContext) -> Values | None:
    """*concatenation.cc*: 1-D inputs joined in order (the only axis a 1-D tensor has)."""
    joined: list[int] = []
    for slot in range(len(ctx.inputs)):
        if len(ctx.dims(slot)) != 1:
            return None
        values = ctx.constant_ints(slot)
        if values is None:
            return None
        joined.extend(values)
    return tuple(joined)


def _gather(ctx: NodeContext) -> Values | None:
    """*gather.cc*: 1-D params, axis 0: params[i] for each index (negative indices refused by
    the kernel, so they stay unknown here)."""
    if len(ctx.dims(0)) != 1 or int(ctx.options.get("axis", 0)) not in (0, -1):
        return None
    params, indices = ctx.constant_ints(0), ctx.constant_ints(1)
    if params is None or indices is None or any(not 0 <= i < len(params) for i in indices):
        return None
    return tuple(params[i] for i in indices)


def _strided_slice(ctx: NodeContext) -> Values | None:
    """*strided_slice.cc*: a 1-D input sliced by begin/end/strides with begin, end and shrink
    masks (the ellipsis, new-axis and offset forms stay unknown)."""
    source = ctx.constant_ints(0)
    begin, end, strides = ctx.constant_ints(1), ctx.constant_ints(2), ctx.constant_ints(3)
    if source is None or begin is None or end is None or strides is None:
        return None
    options = ctx.options
    if len(ctx.dims(0)) != 1 or (len(begin), len(end), len(strides)) != (1, 1, 1):
        return None
    if options.get("ellipsis_mask", 0) or options.get("new_axis_mask", 0):
        return None
    if options.get("offset", False) or strides[0] == 0:
        return None
    count = len(source)
    if options.get("shrink_axis_mask", 0) & 1:
        index = begin[0] + count if begin[0] < 0 else begin[0]
        return (source[index],) if 0 <= index < count else None
    start = None if options.get("begin_mask", 0) & 1 else begin[0]
    stop = None if options.get("end_mask", 0) & 1 else end[0]
    # Python's slice clamps begin and end to the dims exactly as the kernel's
    # StartForAxis / StopForAxis do, for either sign of the stride.
    return tuple(source[slice(start, stop, strides[0])])


def _mul(ctx: NodeContext) -> Values | None:
    """*mul.cc*: element by element, one side of one element broadcast."""
    first, second = ctx.constant_ints(0), ctx.constant_ints(1)
    if first is None or second is None:
        return None
    if ctx.options.get("fused_activation_function", "NONE") not in ("NONE", 0):
        return None
    if len(first) == 1:
        return tuple(first[0] * value for value in second)
    if len(second) == 1:
        return tuple(value * second[0] for value in first)
    if len(first) != len(second) or ctx.dims(0) != ctx.dims(1):
        return None
    return tuple(a * b for a, b in zip(first, second, strict=True))


def _range(ctx: NodeContext) -> Values | None:
    """*range.cc*: start, limit, delta scalars."""
    start, limit, delta = ctx.constant_ints(0), ctx.constant_ints(1), ctx.constant_ints(2)
    if start is None or limit is None or delta is None:
        return None
    if len(start) != 1 or len(limit) != 1 or len(delta) != 1 or delta[0] == 0:
        return None
    return tuple(range(start[0], limit[0], delta[0]))


def _tile(ctx: NodeContext) -> Values | None:
    """*tile.cc*: a 1-D input repeated `multiples[0]` times."""
    source, multiples = ctx.constant_ints(0), ctx.constant_ints(1)
    if source is None or multiples is None or len(ctx.dims(0)) != 1 or len(multiples) != 1:
        return None
    return source * max(multiples[0], 0)


def _broadcast_args(ctx: NodeContext) -> Values | None:
    """*broadcast_args.cc*: the broadcast shape of two shapes, aligned at the right."""
    first, second = ctx.constant_ints(0), ctx.constant_ints(1)
    if first is None or second is None:
        return None
    length = max(len(first), len(second))
    first = (1,) * (length - len(first)) + first
    second = (1,) * (length - len(second)) + second
    result = []
    for a, b in zip(first, second, strict=True):
        if a != b and 1 not in (a, b):
            return None
        result.append(b if a == 1 else a)
    return tuple(result)


def _reduce_prod(ctx: NodeContext) -> Values | None:
    """*reduce.cc — PrepareProd* (noop): the product of a 1-D input over its one axis."""
    source, axes = ctx.constant_ints(0), ctx.constant_ints(1)
    if source is None or axes is None or len(ctx.dims(0)) != 1 or set(axes) - {0, -1}:
        return None
    if not axes:
        return source
    product = 1
    for value in source:
        product *= value
    return (product,)


_EVALUATORS: dict[str, Callable[[NodeContext], Values | None]] = {
    "SHAPE": _shape,
    "RANK": _rank,
    "RESHAPE": _reshape,
    "CONCATENATION": _concatenation,
    "GATHER": _gather,
    "STRIDED_SLICE": _strided_slice,
    "MUL": _mul,
    "RANGE": _range,
    "TILE": _tile,
    "BROADCAST_ARGS": _broadcast_args,
    "REDUCE_PROD": _reduce_prod,
}
