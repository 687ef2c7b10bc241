"""LiteRT reductions: node → temporaries and folding (mean, sum, max, min, prod, any, all)."""

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
            ctx.set_persistent_ro_output()
