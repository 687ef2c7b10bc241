"""LiteRT matrix kernels: node → temporaries (fully connected, batch matmul)."""

from __future__ import annotations

from arenalens.runtimes.litert.prepare.state import Allocation, NodeContext, is_hybrid

# The optimized 4-bit hybrid kernel (fully_connected_4bit.h): 4×32 filter blocks; the x86-64
# wheel is built with its SSE variant, which packs up to 4 input rows (measured on 2.3.0:
# batch 3 → 4 rows, batch 5 → 8; the reference variant packs 1, aarch64 NEON 4).
_FOUR_BIT_FILTER_WIDTH = 4
_FOUR_BIT_FILTER_DEPTH = 32
_FOUR_BIT_MAX_ROWS = 4


def fully_connected(ctx: NodeContext) -> None:
    """*fully_connected.cc — Prepare, PrepareImpl*: six tensors are always added (typeless and
    unused unless hybrid); hybrid uses five: quantized input, scaling factors, accumulator,
    input offsets and row sums (persistent). Constant int4 weights with even columns ≥ 32 and
    ≥ 4 units take the optimized 4-bit kernel (*PrepareImpl4Bit*) instead: the same first
    four, sized for its packed layout, and no row sums."""
    first = ctx.reserve("scratch", 6)
    if not is_hybrid(ctx, 0, 1):
        return
    filter_shape = ctx.dims(1)
    input_shape = ctx.dims(0)
    if len(filter_shape) != 2 or filter_shape[1] == 0:
        return
    tensor = ctx.input(1)
    if tensor is not None and tensor.has_sparsity:
        ctx.graph.note(
            f"node {ctx.position} FULLY_CONNECTED: sparse hybrid weights; the ledger "
            f"(persistent) is not modelled"
        )
    elements = 1
    for dim in input_shape:
        elements *= dim
    columns = filter_shape[1]
    batch = elements // columns
    units = filter_shape[0]
    if _takes_four_bit_kernel(ctx, batch=batch, columns=columns, units=units):
        _four_bit_temporaries(ctx, first, batch=batch, columns=columns, units=units)
        return
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


def _takes_four_bit_kernel(ctx: NodeContext, *, batch: int, columns: int, units: int) -> bool:
    return (
        ctx.dtype(1) == "INT4"
        and ctx.is_constant(1)
        and batch > 0
        and columns % 2 == 0
        and units >= _FOUR_BIT_FILTER_WIDTH
        and columns >= _FOUR_BIT_FILTER_DEPTH
    )


def _four_bit_temporaries(
    ctx: NodeContext, first: int, *, batch: int, columns: int, units: int
) -> None:
    """*PrepareImpl4Bit*: input rows rounded up to the packed row count (the largest power of
    two ≤ 4 that the batch reaches), columns to 32, units to 4; the fifth temporary is left
    untyped."""
    packed_rows = _FOUR_BIT_MAX_ROWS
    while packed_rows > 1 and batch < packed_rows:
        packed_rows //= 2
    rows = _round_up(batch, packed_rows)
    depth = _round_up(columns, _FOUR_BIT_FILTER_DEPTH)
    roles = (
        ("input_quantized", "INT8", (rows, depth)),
        ("scaling_factors", "FLOAT32", (rows,)),
        ("accumulator", "INT32", (rows, _round_up(units, _FOUR_BIT_FILTER_WIDTH))),
        ("input_offsets", "INT32", (rows,)),
    )
    for slot, (role, dtype, shape) in enumerate(roles):
        ctx.set_temporary(
            slot, first + slot, dtype=dtype, shape=shape, allocation=Allocation.ARENA_RW, role=role
        )
    ctx.set_temporary(
        4, first + 4, dtype="NOTYPE", shape=None, allocation=Allocation.MEM_NONE, role="unused"
    )


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


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
