"""LiteRT reductions: node → temporaries and folding (mean, sum, max, min, prod, any, all,
stablehlo.reduce_window)."""

from __future__ import annotations

from arenalens.runtimes.litert.prepare.state import Allocation, NodeContext


def _reduce(ctx: NodeContext, *, mean_or_sum: bool) -> None:
    """*reduce.cc — PrepareSimple (+ PrepareMeanOrSum)*: index `[rank]`, resolved axes
    `[num_axes]`, accumulator `[output elements]` (MEAN/SUM only; Dynamic otherwise) and
    normalized dims (Dynamic unless the input is constant)."""
    first = ctx.reserve("scratch", 4)
    input_shape = ctx.dims(0)
    axis_shape = ctx.dims(1)
    axis_count = 1
    for dim in axis_shape:
        axis_count *= dim
    ctx.set_temporary(
        0,
        first,
        dtype="INT32",
        shape=(len(input_shape),),
        allocation=Allocation.ARENA_RW,
        role="index",
    )
    constant_axis = ctx.is_constant_or_persistent(1)
    ctx.set_temporary(
        1,
        first + 1,
        dtype="INT32",
        shape=(axis_count,) if constant_axis else None,
        allocation=Allocation.ARENA_RW if constant_axis else Allocation.DYNAMIC,
        role="resolved_axis",
    )
    accumulator_type = {
        "FLOAT32": "FLOAT32",
        "INT32": "INT64",
        "INT64": "INT64",
        "UINT8": "INT32",
        "INT8": "INT32",
        "INT16": "INT32",
        "BOOL": "BOOL",
    }.get(ctx.dtype(0), "INT32")
    output = ctx.output()
    output_elements = 1
    for dim in (output.shape or ()) if output is not None else ():
        output_elements *= dim
    sized_accumulator = mean_or_sum and constant_axis
    ctx.set_temporary(
        2,
        first + 2,
        dtype=accumulator_type,
        shape=(output_elements,) if sized_accumulator else None,
        allocation=Allocation.ARENA_RW if sized_accumulator else Allocation.MEM_NONE,
        role="accumulator",
    )
    constant_input = ctx.is_constant_or_persistent(0)
    ctx.set_temporary(
        3,
        first + 3,
        dtype="INT32",
        shape=(len(input_shape),) if constant_input else None,
        allocation=Allocation.ARENA_RW if constant_input else Allocation.DYNAMIC,
        role="normalized_dims",
    )
    if not constant_axis:
        ctx.set_dynamic_output()


def reduce_simple(ctx: NodeContext) -> None:
    _reduce(ctx, mean_or_sum=False)


def reduce_mean_or_sum(ctx: NodeContext) -> None:
    _reduce(ctx, mean_or_sum=True)


def reduce_prod(ctx: NodeContext) -> None:
    """*reduce.cc — PrepareProd*: as the simple reductions; folds constants of ≤ 8 outputs."""
    _reduce(ctx, mean_or_sum=False)
    output = ctx.output()
    if output is None:
        return
    if ctx.is_constant_or_persistent(0) and ctx.is_constant_or_persistent(1):
        elements = 1
        for dim in output.shape or ():
            elements *= dim
        if elements <= 8:
            # data->noop: the product is computed in Prepare; the output is PersistentRo and
            # the resolved axes, accumulator and normalized dims become Dynamic (heap), never
            # planned.
            ctx.set_persistent_ro_output()
            for slot in (1, 2, 3):
                ctx.graph.tensors[ctx.temporaries[slot]].allocation = Allocation.DYNAMIC
            # ResizeTempAccum: one accumulator element per output element.
            ctx.graph.tensors[ctx.temporaries[2]].shape = (elements,)


def stablehlo_reduce_window(ctx: NodeContext) -> None:
    """*stablehlo_reduce_window.cc — StablehloInit, Setup*: the two tensors added in Init are
    the dilated input `(d − 1)·base_dilation + 1` and the padded one (`+ low + high` padding
    per dimension), both arena tensors of the input type; the output is resized to the
    window count per dimension, `(padded − dilated window) / stride + 1` (0 if the window does
    not fit)."""
    input_shape = ctx.dims(0)
    rank = len(input_shape)
    options = ctx.options

    def attribute(name: str, fill: int, size: int) -> tuple[int, ...]:
        values = tuple(int(v) for v in options.get(name) or ())
        if not values:
            return (fill,) * size
        if len(values) != size:
            raise ValueError(f"stablehlo.reduce_window '{name}' has {len(values)} values")
        return values

    window = attribute("window_dimensions", 1, rank)
    strides = attribute("window_strides", 1, rank)
    base_dilations = attribute("base_dilations", 1, rank)
    window_dilations = attribute("window_dilations", 1, rank)
    padding = attribute("padding", 0, 2 * rank)
    dilated = tuple((d - 1) * b + 1 for d, b in zip(input_shape, base_dilations, strict=True))
    padded = tuple(d + padding[2 * i] + padding[2 * i + 1] for i, d in enumerate(dilated))
    output = []
    for size, extent, stride, dilation in zip(
        padded, window, strides, window_dilations, strict=True
    ):
        dilated_window = (extent - 1) * dilation + 1
        output.append(0 if size < dilated_window else (size - dilated_window) // stride + 1)
    first = ctx.op_data["scratch"]
    for slot, (role, shape) in enumerate((("dilated_input", dilated), ("padded_input", padded))):
        ctx.set_temporary(
            slot,
            first + slot,
            dtype=ctx.dtype(0),
            shape=shape,
            allocation=Allocation.ARENA_RW,
            role=role,
        )
    ctx.resize_output(0, output)
