"""LiteRT recurrent kernels: node → temporaries (LSTM variants, SVDF)."""

from __future__ import annotations

from arenalens.runtimes.litert.prepare.state import Allocation, NodeContext, is_hybrid


def unidirectional_sequence_lstm(ctx: NodeContext) -> None:
    """*unidirectional_sequence_lstm.cc — Prepare*: float: scratch `[B, 4·cell + 16]` (CIFG)
    or `[B, 5·cell + 16]`; integer (8x8→16): six `[B, cell]` scratches (int16 ×4, int8,
    int32); hybrid: twelve (persistent row sums)."""
    _lstm_like(ctx, sequence=True)


def lstm(ctx: NodeContext) -> None:
    """*lstm.cc — Prepare* (full kernel): as the sequence LSTM, without the +16, and with an
    8-scratch variant for 8x8→8 integer models."""
    if len(ctx.inputs) <= 5:  # the basic (4-input) kernel: no temporaries
        return
    _lstm_like(ctx, sequence=False)


def _lstm_like(ctx: NodeContext, *, sequence: bool) -> None:
    first = ctx.op_data["scratch"]
    input_shape = ctx.dims(0)
    input_type = ctx.dtype(0)
    if len(input_shape) < 2:
        return
    if sequence:
        time_major = bool(ctx.options.get("time_major", False))
        batch = input_shape[1] if time_major else input_shape[0]
    else:
        batch = input_shape[0]
    cell = ctx.dims(4)[0] if ctx.dims(4) else 0  # input_to_output_weights: [cell, input]
    recurrent = ctx.dims(8)  # recurrent_to_output_weights: [cell, output] or diagonal [cell]
    output_size = recurrent[0] if len(recurrent) == 1 else (recurrent[1] if recurrent else 0)
    cifg = len(ctx.inputs) <= 1 or ctx.input(1) is None
    integer = input_type == "INT8"
    hybrid = is_hybrid(ctx, 0, 4)
    extra = 16 if sequence else 0
    if integer:
        eight_bit = len(ctx.operator.intermediates) != 5 and not sequence
        if eight_bit:
            types: tuple[str, ...] = (
                "INT8",
                "INT8",
                "INT16",
                "INT16",
                "INT16",
                "INT16",
                "INT16",
                "INT16",
            )
        else:
            types = ("INT16", "INT16", "INT16", "INT16", "INT8", "INT32")
        for slot, dtype in enumerate(types):
            ctx.set_temporary(
                slot,
                first + slot,
                dtype=dtype,
                shape=(batch, cell),
                allocation=Allocation.ARENA_RW,
                role=f"scratch{slot}",
            )
        return
    width = cell * (4 if cifg else 5) + extra
    ctx.set_temporary(
        0,
        first,
        dtype=input_type,
        shape=(batch, width),
        allocation=Allocation.ARENA_RW,
        role="scratch",
    )
    if not hybrid:
        return
    weights_type = ctx.dtype(4)
    output_state = ctx.dims(18)
    cell_state = ctx.dims(19)
    row_sum_rows = 6 if cifg else 8
    if ctx.input(16) is not None and cell:  # projection weights
        row_sum_rows += -(-output_size // cell)
    roles: tuple[tuple[str, str, tuple[int, ...], Allocation], ...] = (
        ("input_quantized", weights_type, input_shape, Allocation.ARENA_RW),
        ("output_state_quantized", weights_type, output_state, Allocation.ARENA_RW),
        ("cell_state_quantized", weights_type, cell_state, Allocation.ARENA_RW),
        ("input_scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("output_state_scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("product_scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("recovered_cell_weights", "FLOAT32", (cell,), Allocation.ARENA_RW),
        ("accumulator", "INT32", (cell, batch), Allocation.ARENA_RW),
        ("input_zero_points", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("output_state_zero_points", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("row_sums", "INT32", (row_sum_rows, cell), Allocation.ARENA_RW_PERSISTENT),
    )
    for offset, (role, dtype, shape, allocation) in enumerate(roles, start=1):
        ctx.set_temporary(
            offset, first + offset, dtype=dtype, shape=shape, allocation=allocation, role=role
        )


def svdf(ctx: NodeContext) -> None:
    """*svdf.cc — Prepare*: scratch `[B, filters]` (int32 if full-integer, else float);
    full-integer adds output_temp `[units, B]` int32; hybrid adds five more."""
    first = ctx.op_data["scratch"]
    input_shape = ctx.dims(0)
    feature_shape = ctx.dims(1)
    time_shape = ctx.dims(2)
    if not input_shape or not feature_shape:
        return
    batch, filters = input_shape[0], feature_shape[0]
    rank = int(ctx.options.get("rank", 1) or 1)
    units = filters // rank
    full_integer = ctx.dtype(0) == "INT8"
    hybrid = is_hybrid(ctx, 0, 1)
    ctx.set_temporary(
        0,
        first,
        dtype="INT32" if full_integer else "FLOAT32",
        shape=(batch, filters),
        allocation=Allocation.ARENA_RW,
        role="scratch",
    )
    if hybrid:
        roles = (
            ("input_quantized", ctx.dtype(1), input_shape, Allocation.ARENA_RW),
            ("scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
            ("float_weights_time", "FLOAT32", time_shape, Allocation.ARENA_RW_PERSISTENT),
            ("zero_points", "FLOAT32", (batch,), Allocation.ARENA_RW),
            ("row_sums", "FLOAT32", (filters,), Allocation.ARENA_RW_PERSISTENT),
        )
        for slot, (role, dtype, shape, allocation) in enumerate(roles, start=1):
            ctx.set_temporary(
                slot, first + slot, dtype=dtype, shape=shape, allocation=allocation, role=role
            )
    if full_integer:
        ctx.set_temporary(
            1,
            first + 1,
            dtype="INT32",
            shape=(units, batch),
            allocation=Allocation.ARENA_RW,
            role="output_temp",
        )
