"""nn cases: BATCH_MATMUL, SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arenalens.tflite.builder import quantization
from tests.conformance.cases import Case
from tests.conformance.cases.nn.common import (
    NUMPY_TYPES,
    Q8,
    SCAN,
    activation_quantization,
    scale_list,
)
from tests.conformance.models import OMITTED, Const, In, Op, Out, Var, single_op

# ---------------------------------------------------------------------------------------------
# BATCH_MATMUL


def batch_matmul(
    lhs: Sequence[int],
    rhs: Sequence[int],
    out: Sequence[int],
    dtype: str = "FLOAT32",
    *,
    adj_x: bool = False,
    adj_y: bool = False,
    constant: str = "",  # "lhs", "rhs" or ""
    rhs_dtype: str | None = None,
    zero_point: int = 0,
) -> Callable[[], bytes]:
    def operand(shape: Sequence[int], kind: str, is_constant: bool) -> In | Const:
        q = activation_quantization(kind)
        if zero_point and kind == "INT16":
            q = quantization(1 / 32768, zero_point)
        if is_constant:
            return Const(np.ones(tuple(shape), NUMPY_TYPES[kind]), kind, q)
        return In(tuple(shape), kind, q)

    def build() -> bytes:
        right = rhs_dtype or dtype
        operands = [
            operand(lhs, dtype, constant == "lhs"),
            operand(rhs, right, constant == "rhs"),
        ]
        result = Out(tuple(out), dtype)
        options = {"adj_x": adj_x, "adj_y": adj_y}
        return single_op(Op("BATCH_MATMUL", operands, [result], options=options))

    return build


def bmm_cases() -> list[Case]:
    bm = "BATCH_MATMUL"

    def case(name: str, dtype: str, build: Callable[[], bytes]) -> Case:
        return Case(f"{bm}.{dtype}.{name}", bm, dtype, build, scan_bytes=SCAN)

    left, right, result = (1, 4, 6), (1, 6, 5), (1, 4, 5)
    cases = [
        case("plain", "FLOAT32", batch_matmul(left, right, result)),
        case("adj_x", "FLOAT32", batch_matmul((1, 6, 4), right, result, adj_x=True)),
        case("adj_y", "FLOAT32", batch_matmul(left, (1, 5, 6), result, adj_y=True)),
        case(
            "adj_xy", "FLOAT32", batch_matmul((1, 6, 4), (1, 5, 6), result, adj_x=True, adj_y=True)
        ),
        case("const_rhs", "FLOAT32", batch_matmul(left, right, result, constant="rhs")),
        case(
            "const_rhs_adj_y",
            "FLOAT32",
            batch_matmul(left, (1, 5, 6), result, adj_y=True, constant="rhs"),
        ),
        case("rank2", "FLOAT32", batch_matmul((4, 6), (6, 5), (4, 5))),
        case("broadcast_rank4", "FLOAT32", batch_matmul((2, 3, 4, 6), (1, 3, 6, 5), (2, 3, 4, 5))),
        case("rank5", "FLOAT32", batch_matmul((2, 1, 2, 4, 6), (2, 2, 1, 6, 5), (2, 2, 2, 4, 5))),
        case("output_rank4", "FLOAT32", batch_matmul((4, 6), (6, 5), (1, 1, 4, 5))),
        case(
            "large_const_rhs",
            "FLOAT32",
            batch_matmul((1, 2, 64), (64, 128), (1, 2, 128), constant="rhs"),
        ),
        case("plain", "INT8", batch_matmul(left, right, result, "INT8")),
        case("const_lhs", "INT8", batch_matmul(left, right, result, "INT8", constant="lhs")),
        case(
            "const_rhs_adj_y",
            "INT8",
            batch_matmul(left, (1, 5, 6), result, "INT8", adj_y=True, constant="rhs"),
        ),
        case(
            "adj_xy",
            "INT8",
            batch_matmul((1, 6, 4), (1, 5, 6), result, "INT8", adj_x=True, adj_y=True),
        ),
        case("adj_x", "INT8", batch_matmul((2, 6, 4), (2, 6, 5), (2, 4, 5), "INT8", adj_x=True)),
        case("plain", "INT16", batch_matmul(left, right, result, "INT16")),
        case("adj_x", "INT16", batch_matmul((1, 6, 4), right, result, "INT16", adj_x=True)),
        case("int32_refused", "INT32", batch_matmul(left, right, result, "INT32")),
        case("mixed_refused", "FLOAT32", batch_matmul(left, right, result, rhs_dtype="INT8")),
        case("rank1_refused", "FLOAT32", batch_matmul((6,), (6, 5), (5,))),
        case(
            "zero_point_refused", "INT16", batch_matmul(left, right, result, "INT16", zero_point=3)
        ),
    ]
    return cases


# ---------------------------------------------------------------------------------------------
# SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM


def svdf(
    dtype: str = "FLOAT32",
    *,
    time_weights: str = "INT16",
    state: str = "INT16",
    batch: int = 1,
    rank: int = 1,
    filters: int = 8,
    memory: int = 4,
    inputs: int = 8,
    bias: str = "present",  # "present", "omitted" (-1), "dropped" (a 4-input node)
) -> Callable[[], bytes]:
    units = filters // rank if filters % rank == 0 else filters

    def build() -> bytes:
        operands: list[Any]
        if dtype == "FLOAT32":
            operands = [
                In((batch, inputs), "FLOAT32"),
                Const(np.ones((filters, inputs), np.float32), "FLOAT32"),
                Const(np.ones((filters, memory), np.float32), "FLOAT32"),
                Const(np.zeros(units, np.float32), "FLOAT32"),
                Var((batch, memory * filters), "FLOAT32", None),
            ]
            out = Out((batch, units), "FLOAT32")
        else:
            time_q = quantization(0.02, 0)
            state_q = quantization(0.05, 0)
            operands = [
                In((batch, inputs), dtype),
                Const(np.ones((filters, inputs), np.int8), "INT8", Q8),
                Const(np.ones((filters, memory), NUMPY_TYPES[time_weights]), time_weights, time_q),
                Const(np.zeros(units, np.int32), "INT32", quantization(0.05 * 0.02, 0)),
                Var((batch, memory * filters), state, state_q),
            ]
            out = Out((batch, units), dtype)
        if bias == "omitted":
            operands[3] = OMITTED
        elif bias == "dropped":
            del operands[3]
        return single_op(Op("SVDF", operands, [out], options={"rank": rank}))

    return build


def lstm(
    dtype: str = "FLOAT32",
    *,
    batch: int = 1,
    steps: int = 3,
    inputs: int = 4,
    state: int = 6,
    per_channel: bool = False,
    time_major: bool = False,
    cell: str | None = None,
    weights: str | None = None,
    peephole: bool = False,
    projection: bool = False,
    layer_norm: bool = False,
    state_variable: bool = True,
    drop_last_input: bool = False,
    weights_zero_point: int = 0,
) -> Callable[[], bytes]:
    is_float = dtype == "FLOAT32"
    weight_type = weights or ("FLOAT32" if is_float else "INT8")
    cell_type = cell or ("FLOAT32" if is_float else "INT16")
    bias_type = {"FLOAT32": "FLOAT32", "INT8": "INT32", "INT16": "INT64"}[dtype]
    if weight_type == "FLOAT32":
        bias_type = "FLOAT32"

    def matrix(rows: int, columns: int) -> Const:
        if weight_type == "FLOAT32":
            return Const(np.full((rows, columns), 0.1, np.float32), "FLOAT32")
        q = (
            quantization(scale_list(rows), weights_zero_point)
            if per_channel
            else quantization(0.01, weights_zero_point)
        )
        return Const(np.ones((rows, columns), np.int8), "INT8", q)

    def vector(kind: str) -> Const:
        q = None if kind == "FLOAT32" else quantization(0.0005, 0)
        return Const(np.zeros(state, NUMPY_TYPES[kind]), kind, q)

    def build() -> bytes:
        activation_q = None if is_float else quantization(0.05, 0)
        source = (steps, batch, inputs) if time_major else (batch, steps, inputs)
        result = (steps, batch, state) if time_major else (batch, steps, state)
        operands: list[Any] = [In(source, dtype, activation_q)]
        operands += [matrix(state, inputs) for _ in range(4)]
        operands += [matrix(state, state) for _ in range(4)]
        operands += [vector("FLOAT32") if peephole else OMITTED for _ in range(3)]
        operands += [vector(bias_type) for _ in range(4)]
        if projection:
            operands += [Const(np.full((state, state), 0.1, np.float32), "FLOAT32"), OMITTED]
        else:
            operands += [OMITTED, OMITTED]
        state_q = None if is_float else activation_q
        cell_q = None if cell_type == "FLOAT32" else quantization(2.0**-11, 0)
        if state_variable:
            operands.append(Var((batch, state), dtype, state_q))
        else:
            operands.append(In((batch, state), dtype, state_q))
        operands.append(Var((batch, state), cell_type, cell_q))
        operands += [vector("FLOAT32") if layer_norm else OMITTED for _ in range(4)]
        if drop_last_input:
            operands.pop()
        options = {"fused_activation_function": "TANH", "time_major": time_major}
        out = Out(result, dtype, activation_q)
        return single_op(Op("UNIDIRECTIONAL_SEQUENCE_LSTM", operands, [out], options=options))

    return build


def recurrent_cases() -> list[Case]:
    sv, ls = "SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM"
    cases = [
        Case(f"{sv}.FLOAT32.rank1", sv, "FLOAT32", svdf()),
        Case(f"{sv}.FLOAT32.rank2_batch2", sv, "FLOAT32", svdf(rank=2, batch=2)),
        Case(f"{sv}.INT8.time_int16_state_int16", sv, "INT8", svdf("INT8")),
        Case(
            f"{sv}.INT8.time_int8_state_int8",
            sv,
            "INT8",
            svdf("INT8", time_weights="INT8", state="INT8"),
        ),
        Case(f"{sv}.INT8.time_int16_state_int8", sv, "INT8", svdf("INT8", state="INT8")),
        Case(f"{sv}.INT8.rank4_batch3", sv, "INT8", svdf("INT8", rank=4, batch=3)),
        Case(f"{sv}.FLOAT32.bias_omitted_crash", sv, "FLOAT32", svdf(bias="omitted")),
        Case(f"{sv}.INT8.bias_omitted_crash", sv, "INT8", svdf("INT8", bias="omitted")),
        Case(f"{sv}.FLOAT32.four_inputs_refused", sv, "FLOAT32", svdf(bias="dropped")),
        Case(f"{sv}.FLOAT32.rank_refused", sv, "FLOAT32", svdf(rank=3)),
        Case(f"{sv}.INT16.refused", sv, "INT16", svdf("INT16")),
    ]
    per_channel = {"scan_bytes": SCAN}
    cases += [
        Case(f"{ls}.FLOAT32.batch1", ls, "FLOAT32", lstm()),
        Case(f"{ls}.FLOAT32.time_major_batch2", ls, "FLOAT32", lstm(batch=2, time_major=True)),
        Case(f"{ls}.INT8.per_tensor", ls, "INT8", lstm("INT8")),
        Case(f"{ls}.INT8.per_channel", ls, "INT8", lstm("INT8", per_channel=True), **per_channel),
        Case(
            f"{ls}.INT8.per_channel_time_major_batch2",
            ls,
            "INT8",
            lstm("INT8", per_channel=True, time_major=True, batch=2),
            **per_channel,
        ),
        Case(f"{ls}.INT16.per_tensor", ls, "INT16", lstm("INT16")),
        Case(
            f"{ls}.INT16.per_channel", ls, "INT16", lstm("INT16", per_channel=True), **per_channel
        ),
        Case(f"{ls}.INT8.float_cell", ls, "INT8", lstm("INT8", cell="FLOAT32")),
        Case(f"{ls}.FLOAT32.hybrid_int8_weights", ls, "FLOAT32", lstm(weights="INT8")),
        Case(f"{ls}.FLOAT32.peephole_refused", ls, "FLOAT32", lstm(peephole=True)),
        Case(f"{ls}.FLOAT32.projection_refused", ls, "FLOAT32", lstm(projection=True)),
        Case(f"{ls}.FLOAT32.layer_norm_refused", ls, "FLOAT32", lstm(layer_norm=True)),
        Case(f"{ls}.INT8.int8_cell_refused", ls, "INT8", lstm("INT8", cell="INT8")),
        Case(f"{ls}.FLOAT32.state_not_variable_refused", ls, "FLOAT32", lstm(state_variable=False)),
        Case(f"{ls}.FLOAT32.inputs23_refused", ls, "FLOAT32", lstm(drop_last_input=True)),
    ]
    return cases
