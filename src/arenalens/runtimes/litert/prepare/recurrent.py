"""LiteRT recurrent kernels: node → temporaries (LSTM variants, SVDF, RNN variants)."""

from __future__ import annotations

from arenalens.runtimes.litert.prepare.state import Allocation, NodeContext, is_hybrid

_ARENA = Allocation.ARENA_RW


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
    weights = ctx.input(4)
    if weights is not None and weights.has_sparsity:
        ctx.graph.note(
            f"node {ctx.position} {ctx.operator.opcode}: sparse hybrid weights; their ledgers "
            f"(persistent) are not modelled"
        )
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


def _rnn_hybrid(ctx: NodeContext, weights_slot: int) -> bool:
    """*IsHybridOp* as the RNN kernels use it: float input, uint8 or int8 weights."""
    return ctx.dtype(0) == "FLOAT32" and ctx.dtype(weights_slot) in ("INT8", "UINT8")


def _rnn_temporaries(
    ctx: NodeContext,
    roles: tuple[tuple[str, str, tuple[int, ...], Allocation], ...],
) -> None:
    """Temporaries i = the i-th tensor added in Init, in the order the kernel lists them."""
    first = ctx.op_data["scratch"]
    for slot, (role, dtype, shape, allocation) in enumerate(roles):
        ctx.set_temporary(
            slot, first + slot, dtype=dtype, shape=shape, allocation=allocation, role=role
        )


def _rnn_hybrid_roles(
    ctx: NodeContext, *, batch: int, units: int, hidden: tuple[tuple[str, int], ...]
) -> tuple[tuple[str, str, tuple[int, ...], Allocation], ...]:
    """The hybrid temporaries every RNN kernel starts with: quantized input, one quantized copy
    per hidden state (role, input slot), scaling factors, accumulator and zero points."""
    weights_type = ctx.dtype(1)
    return (
        ("input_quantized", weights_type, ctx.dims(0), Allocation.ARENA_RW),
        *((role, weights_type, ctx.dims(slot), Allocation.ARENA_RW) for role, slot in hidden),
        ("scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("accumulator", "INT32", (units, batch), Allocation.ARENA_RW),
        ("zero_points", "INT32", (batch,), Allocation.ARENA_RW),
    )


def _rnn_hybrid_temporaries(ctx: NodeContext, *, batch: int, units: int) -> None:
    """RNN's and UNIDIRECTIONAL_SEQUENCE_RNN's six hybrid temporaries (none unless hybrid)."""
    if not _rnn_hybrid(ctx, 1):
        return
    roles = _rnn_hybrid_roles(
        ctx, batch=batch, units=units, hidden=(("hidden_state_quantized", 4),)
    )
    _rnn_temporaries(
        ctx, (*roles, ("row_sums", "INT32", (2, units), Allocation.ARENA_RW_PERSISTENT))
    )


def rnn(ctx: NodeContext) -> None:
    """*basic_rnn.cc — Prepare*: output `[B, units]`; hybrid (int8 / uint8 weights) uses the
    six Init tensors: quantized input and hidden state (weights type), scaling factors `[B]`,
    int32 accumulator `[units, B]`, zero points `[B]`, row sums `[2, units]` (persistent)."""
    batch, units = ctx.dims(0)[0], ctx.dims(1)[0]
    ctx.resize_output(0, (batch, units))
    _rnn_hybrid_temporaries(ctx, batch=batch, units=units)


def unidirectional_sequence_rnn(ctx: NodeContext) -> None:
    """*unidirectional_sequence_rnn.cc — Prepare*: output `[T, B, units]` (time major) or
    `[B, T, units]`; hybrid: the same six temporaries as RNN."""
    input_shape = ctx.dims(0)
    if len(input_shape) != 3:
        raise ValueError("UNIDIRECTIONAL_SEQUENCE_RNN needs a 3-D input")
    time_major = bool(ctx.options.get("time_major", False))
    batch, steps = (input_shape[1], input_shape[0]) if time_major else input_shape[:2]
    units = ctx.dims(1)[0]
    ctx.resize_output(0, (steps, batch, units) if time_major else (batch, steps, units))
    _rnn_hybrid_temporaries(ctx, batch=batch, units=units)


def bidirectional_sequence_rnn(ctx: NodeContext) -> None:
    """*bidirectional_sequence_rnn.cc — Prepare*: forward (and, unless merge_outputs, backward)
    outputs resized; hybrid uses eight of the nine Init tensors (nine with auxiliary weights):
    quantized input, forward and backward hidden states, scaling factors `[B]`, accumulator
    `[max(fw, bw units), B]`, zero points `[B]`, forward and backward row sums `[2|3, units]`
    (persistent), quantized auxiliary input."""
    input_shape = ctx.dims(0)
    if len(input_shape) != 3 or len(ctx.inputs) != 12:
        raise ValueError("BIDIRECTIONAL_SEQUENCE_RNN needs a 3-D input and 12 inputs")
    time_major = bool(ctx.options.get("time_major", False))
    merge = bool(ctx.options.get("merge_outputs", False))
    batch, steps = (input_shape[1], input_shape[0]) if time_major else input_shape[:2]
    forward_units, backward_units = ctx.dims(1)[0], ctx.dims(5)[0]

    def sequence(units: int) -> tuple[int, int, int]:
        return (steps, batch, units) if time_major else (batch, steps, units)

    if _rnn_hybrid(ctx, 1):
        has_aux = ctx.input(10) is not None
        rows = 3 if has_aux else 2
        roles = _rnn_hybrid_roles(
            ctx,
            batch=batch,
            units=max(forward_units, backward_units),
            hidden=(("forward_hidden_state_quantized", 4), ("backward_hidden_state_quantized", 8)),
        )
        row_sums = (
            ("forward_row_sums", "INT32", (rows, forward_units), Allocation.ARENA_RW_PERSISTENT),
            ("backward_row_sums", "INT32", (rows, backward_units), Allocation.ARENA_RW_PERSISTENT),
        )
        aux = (
            (("aux_input_quantized", ctx.dtype(1), ctx.dims(9), Allocation.ARENA_RW),)
            if has_aux
            else ()
        )
        _rnn_temporaries(ctx, (*roles, *row_sums, *aux))
    ctx.resize_output(0, sequence(forward_units + backward_units if merge else forward_units))
    if not merge:
        ctx.resize_output(1, sequence(backward_units))


# BIDIRECTIONAL_SEQUENCE_LSTM input slots (bidirectional_sequence_lstm.cc); backward = +17.
_BILSTM_BACKWARD = 17
_BILSTM_INPUT_TO_INPUT = 1
_BILSTM_INPUT_TO_OUTPUT = 4
_BILSTM_RECURRENT_TO_OUTPUT = 8
_BILSTM_PROJECTION = 16
_BILSTM_STATES = (35, 36, 37, 38)  # forward activation, forward cell, backward ...
_BILSTM_AUX_INPUT = 39
_BILSTM_AUX_FORGET = (41, 45)  # forward, backward aux-input-to-forget weights
_BILSTM_AUX_OUTPUT = (43, 47)


def bidirectional_sequence_lstm(ctx: NodeContext) -> None:
    """*bidirectional_sequence_lstm.cc — Prepare*: outputs resized; float uses two of the 19
    Init tensors, scratch `[B, 4|5·fw_cell + 16]` and `[B, 4|5·bw_cell]` (only the forward one
    gets the +16); hybrid (int8 / uint8 weights) uses 18, or 19 with auxiliary weights —
    quantized input and states, scaling factors and zero points `[B]`, recovered cell weights
    `[fw_cell]`, accumulator `[max cell, B]`, row sums per direction (persistent)."""
    input_shape = ctx.dims(0)
    if len(input_shape) != 3 or len(ctx.inputs) != 48:
        raise ValueError("BIDIRECTIONAL_SEQUENCE_LSTM needs a 3-D input and 48 inputs")
    time_major = bool(ctx.options.get("time_major", False))
    merge = bool(ctx.options.get("merge_outputs", False))
    steps, batch = (
        (input_shape[0], input_shape[1]) if time_major else (input_shape[1], input_shape[0])
    )
    directions = (0, _BILSTM_BACKWARD)
    cells = [ctx.dims(_BILSTM_INPUT_TO_OUTPUT + d)[0] for d in directions]
    outputs = [ctx.dims(_BILSTM_RECURRENT_TO_OUTPUT + d)[1] for d in directions]
    cifg = [ctx.input(_BILSTM_INPUT_TO_INPUT + d) is None for d in directions]
    has_aux = ctx.input(_BILSTM_AUX_FORGET[0]) is not None

    def sequence(units: int) -> tuple[int, int, int]:
        return (steps, batch, units) if time_major else (batch, steps, units)

    ctx.resize_output(0, sequence(outputs[0] + outputs[1] if merge else outputs[0]))
    if not merge:
        ctx.resize_output(1, sequence(outputs[1]))
    first = ctx.op_data["scratch"]
    roles: list[tuple[str, str, tuple[int, ...], Allocation]] = [
        ("forward_scratch", "FLOAT32", (batch, cells[0] * (4 if cifg[0] else 5) + 16), _ARENA),
        ("backward_scratch", "FLOAT32", (batch, cells[1] * (4 if cifg[1] else 5)), _ARENA),
    ]
    weights_type = ctx.dtype(_BILSTM_INPUT_TO_OUTPUT)
    if ctx.dtype(0) == "FLOAT32" and weights_type in ("INT8", "UINT8"):
        widest = max(cells)
        if has_aux:
            widest = max(widest, *(ctx.dims(slot)[0] for slot in _BILSTM_AUX_OUTPUT))
        states = [ctx.dims(slot) for slot in _BILSTM_STATES]
        roles += [
            ("input_quantized", weights_type, input_shape, _ARENA),
            ("forward_activation_state_quantized", weights_type, states[0], _ARENA),
            ("backward_activation_state_quantized", weights_type, states[2], _ARENA),
            ("forward_cell_state_quantized", weights_type, states[1], _ARENA),
            ("backward_cell_state_quantized", weights_type, states[3], _ARENA),
            ("input_scaling_factors", "FLOAT32", (batch,), _ARENA),
            ("aux_input_scaling_factors", "FLOAT32", (batch,), _ARENA),
            ("output_state_scaling_factors", "FLOAT32", (batch,), _ARENA),
            ("product_scaling_factors", "FLOAT32", (batch,), _ARENA),
            ("recovered_cell_weights", "FLOAT32", (cells[0],), _ARENA),
            ("accumulator", "INT32", (widest, batch), _ARENA),
            ("input_zero_points", "FLOAT32", (batch,), _ARENA),
            ("aux_input_zero_points", "FLOAT32", (batch,), _ARENA),
            ("output_state_zero_points", "FLOAT32", (batch,), _ARENA),
        ]
        for name, direction, index in (("forward", 0, 0), ("backward", _BILSTM_BACKWARD, 1)):
            rows = 6 if cifg[index] else 8
            if has_aux:
                rows += 3 if cifg[index] else 4
            if ctx.input(_BILSTM_PROJECTION + direction) is not None:
                rows += -(-outputs[index] // cells[index])  # ceil(output / cell)
            roles.append(
                (f"{name}_row_sums", "INT32", (rows, cells[index]), Allocation.ARENA_RW_PERSISTENT)
            )
        if has_aux:
            roles.append(("aux_input_quantized", weights_type, ctx.dims(_BILSTM_AUX_INPUT), _ARENA))
    for slot, (role, dtype, shape, allocation) in enumerate(roles):
        ctx.set_temporary(
            slot, first + slot, dtype=dtype, shape=shape, allocation=allocation, role=role
        )
