"""LiteRT kernels with one-off rules: ADD_N, DEQUANTIZE, DENSIFY, RESHAPE."""

from __future__ import annotations

from arenalens.runtimes.litert.prepare.state import Allocation, NodeContext, PrepareStatus


def add_n(ctx: NodeContext) -> None:
    """*add_n.cc — Prepare*: scratch `[threads · elements]` of the input type (one thread)."""
    first = ctx.op_data["scratch"]
    elements = 1
    for dim in ctx.dims(0):
        elements *= dim
    ctx.set_temporary(
        0,
        first,
        dtype=ctx.dtype(0),
        shape=(elements,),
        allocation=Allocation.ARENA_RW,
        role="scratch",
    )


def dequantize(ctx: NodeContext) -> None:
    """*dequantize.cc — Prepare*: a constant input is dequantized once into a persistent output."""
    output = ctx.output()
    if output is not None and ctx.is_constant(0):
        output.allocation = Allocation.ARENA_RW_PERSISTENT


def densify(ctx: NodeContext) -> None:
    """*densify.cc — Prepare*: the output always lives in the persistent arena."""
    output = ctx.output()
    if output is not None:
        output.allocation = Allocation.ARENA_RW_PERSISTENT


def reshape(ctx: NodeContext) -> PrepareStatus:
    """*reshape.cc — Prepare*: constant input → PersistentRo output; a non-constant shape
    tensor → kTfLiteOutputShapeNotKnown (the chunk ends; the output keeps the input's bytes)."""
    output = ctx.output()
    source = ctx.input(0)
    if output is None or source is None or output.dtype == "STRING":
        return PrepareStatus.OK
    shape_tensor = ctx.input(1)
    shape_is_vector = (
        shape_tensor is not None
        and shape_tensor.shape is not None
        and len(shape_tensor.shape) == 1
        and shape_tensor.dtype == "INT32"
    )
    if len(ctx.inputs) == 2 and shape_is_vector and not ctx.is_constant_or_persistent(1):
        if output.allocation == Allocation.ARENA_RW:
            output.nbytes_override = source.nbytes
        return PrepareStatus.OUTPUT_SHAPE_NOT_KNOWN
    if ctx.is_constant_or_persistent(0):
        ctx.set_persistent_ro_output()
    return PrepareStatus.OK
