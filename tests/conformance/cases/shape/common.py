"""The shape family's shared pieces: the quantization each type's data operands get, and case
and operand shorthands."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arenalens.tflite.builder import QuantizationSpec
from tests.conformance.cases import Case
from tests.conformance.models import INT16_Q, Const, In, Op, Out, per_channel, single_op

PC = per_channel(32)
PC_ODD = per_channel(33)
Q = QuantizationSpec | str | None

# The quantization each type's data operands get: int8 per channel, int16 symmetric.
_DATA_Q: dict[str, Q] = {"INT8": PC, "INT16": INT16_Q, "UINT8": "default"}


def data_quantization(dtype: str) -> Q:
    return _DATA_Q.get(dtype)


def i32(*values: int) -> np.ndarray:
    return np.array(values, np.int32)


def i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def one_operator(
    opcode: str,
    inputs: Sequence[In | Const | None],
    outputs: Sequence[Out],
    options: dict[str, Any] | None = None,
    options_type: str | None = None,
) -> Callable[[], bytes]:
    op = Op(opcode, inputs, outputs, options=options or {}, options_type=options_type)
    return lambda: single_op(op)


def shape_case(
    opcode: str, dtype: str, variant: str, build: Callable[[], bytes], note: str = ""
) -> Case:
    return Case(f"{opcode}.{dtype}.{variant}", opcode, dtype, build, note)


def data_input(shape: Sequence[int], dtype: str) -> In:
    return In(shape, dtype, data_quantization(dtype))


def data_output(shape: Sequence[int], dtype: str) -> Out:
    return Out(shape, dtype, data_quantization(dtype))
