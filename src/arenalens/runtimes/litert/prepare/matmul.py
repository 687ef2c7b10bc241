"""LiteRT matrix kernels: node → temporaries (fully connected, batch matmul)."""

from __future__ import annotations

from arenalens.runtimes.litert.prepare.state import Allocation, NodeContext, is_hybrid


def fully_connected(ctx: NodeContext) -> None:
    """*fully_connected.cc — Prepare, PrepareImpl*: six tensors are always added (typeless and
    unused unless hybrid); hybrid uses five: quantized input, scaling factors, accumulator,
    input offsets and row sums (persistent)."""
    first = ctx.reserve("scratch", 6)
    if not is_hybrid(ctx, 0, 1):
        return
    filter_shape = ctx.dims(1)
    input_shape = ctx.dims(0)
    if len(filter_shape) != 2 or filter_shape[1] == 0:
        return
    tensor = ctx.input(1)
    if tensor is not None and (tensor.has_sparsity or tensor.dtype == "INT4"):
        ctx.graph.note(
            f"node {ctx.position} FULLY_CONNECTED: sparse / 4-bit hybrid temporaries "
            f"are modelled as the dense kernel's"
        )
    elements = 1
    for dim in input_shape:
        elements *= dim
    batch = elements // filter_shape[1]
    units = filter_shape[0]
    roles = (
        ("input_quantized", "INT8", input_shape, Allocation.ARENA_RW),
        ("scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("accumulator", "INT32", (units, batch), Allocation.ARENA_RW),
        ("input_offsets", "INT32", (batch,), Allocation.ARENA_RW),
        ("row_sums", "INT32", (units,), Allocation.ARENA_RW_PERSISTENT),
    )
    for slot, (role, dtype, shape, allocation) in enumerate(roles):
        ctx.set_temporary(
            slot, first + slot, dtype=dtype, shape=shape, allocation=allocation, role=role
        )


def batch_matmul(ctx: NodeContext) -> None:
    """*batch_matmul.cc — Prepare, InitializeTemporaries*: transposed LHS (arena) and RHS
    (persistent when constant) scratch; hybrid (float × int8) adds five."""
    first = ctx.reserve("scratch", 7)
    lhs, rhs = ctx.dims(0), ctx.dims(1)
    if len(lhs) < 2 or len(rhs) < 2:
        return
    adj_x = bool(ctx.options.get("adj_x", False))
    adj_y = bool(ctx.options.get("adj_y", False))
    lhs_t = (*lhs[:-2], lhs[-1], lhs[-2])
    rhs_t = (*rhs[:-2], rhs[-1], rhs[-2])
    ctx.set_temporary(
        0,
        first,
        dtype=ctx.dtype(0),
        shape=lhs_t,
        allocation=Allocation.ARENA_RW,
        role="lhs_transposed",
    )
    rhs_allocation = Allocation.ARENA_RW_PERSISTENT if ctx.is_constant(1) else Allocation.ARENA_RW
    ctx.set_temporary(
        1,
        first + 1,
        dtype=ctx.dtype(1),
        shape=rhs_t,
        allocation=rhs_allocation,
        role="rhs_transposed",
    )
    if not (ctx.dtype(0) == "FLOAT32" and ctx.dtype(1) == "INT8"):
        return
    batch_size = lhs[-1] if adj_x else lhs[-2]
    units = rhs[-2] if adj_y else rhs[-1]
    batches = 1
    for dim in lhs[:-2]:
        batches *= dim
    matrices = 1
    for dim in rhs[:-2]:
        matrices *= dim
    roles = (
        ("input_quantized", ctx.dtype(1), lhs, Allocation.ARENA_RW),
        ("scaling_factors", "FLOAT32", (batches * batch_size,), Allocation.ARENA_RW),
        ("accumulator", "INT32", (units, batch_size), Allocation.ARENA_RW),
        ("input_offsets", "INT32", (batches * batch_size,), Allocation.ARENA_RW),
        ("row_sums", "INT32", (matrices * units,), Allocation.ARENA_RW_PERSISTENT),
    )
    for slot, (role, dtype, shape, allocation) in enumerate(roles, start=2):
        ctx.set_temporary(
            slot, first + slot, dtype=dtype, shape=shape, allocation=allocation, role=role
        )
