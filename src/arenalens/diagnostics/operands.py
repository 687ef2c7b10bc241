"""Operand counts of builtins: how many inputs / outputs a kernel requires, which may be -1.

Taken from the kernels' Prepare checks (`NumInputs`, `GetOptionalInputTensor`) in LiteRT
*tflite/kernels/* and TFLM *tensorflow/lite/micro/kernels/*; where the two differ the looser count
is kept, so a finding means both runtimes reject (or misread) the operator. Operators not listed
here (custom ops, rarely used builtins) are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class OperandSpec:
    """Input and output counts one builtin accepts; `optional` lists input slots that may be -1."""

    min_inputs: int
    max_inputs: int | None  # None: any number (CONCATENATION, PACK, ADD_N)
    optional: frozenset[int] = frozenset()
    min_outputs: int = 1
    max_outputs: int | None = 1


def _spec(
    min_inputs: int,
    max_inputs: int | None = -1,
    optional: tuple[int, ...] = (),
    outputs: tuple[int, int | None] = (1, 1),
) -> OperandSpec:
    maximum = min_inputs if max_inputs == -1 else max_inputs
    return OperandSpec(min_inputs, maximum, frozenset(optional), outputs[0], outputs[1])


def _names(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_UNARY = _spec(1)
_BINARY = _spec(2)
# LSTM inputs (lstm_shared.h): 0 input; 1-4 input→gate weights (1 optional: CIFG); 5-8 recurrent
# weights (5 optional); 9-11 peephole (optional); 12-15 gate biases (12 optional); 16-17
# projection (optional); 18-19 output / cell state; 20-23 layer-norm coefficients (optional).
_LSTM_OPTIONAL = (1, 5, 9, 10, 11, 12, 16, 17, 20, 21, 22, 23)

OPERAND_SPECS: Mapping[str, OperandSpec] = MappingProxyType(
    {
        **dict.fromkeys(
            _names(
                """
                ABS CAST CEIL COS DEPTH_TO_SPACE DEQUANTIZE ELU EXP FLOOR GELU HARD_SWISH
                L2_NORMALIZATION L2_POOL_2D LEAKY_RELU LOCAL_RESPONSE_NORMALIZATION LOG LOG_SOFTMAX
                LOGICAL_NOT LOGISTIC NEG ONES_LIKE QUANTIZE RANK READ_VARIABLE RELU RELU6
                RELU_0_TO_1 RELU_N1_TO_1 ROUND RSQRT SHAPE SIN SOFTMAX SPACE_TO_DEPTH SQRT SQUARE
                SQUEEZE TANH ZEROS_LIKE AVERAGE_POOL_2D MAX_POOL_2D
                """
            ),
            _UNARY,
        ),
        **dict.fromkeys(
            _names(
                """
                ADD ARG_MAX ARG_MIN BATCH_MATMUL BROADCAST_TO CUMSUM DIV EMBEDDING_LOOKUP EQUAL
                EXPAND_DIMS FILL FLOOR_DIV FLOOR_MOD GATHER GATHER_ND GREATER GREATER_EQUAL LESS
                LESS_EQUAL LOGICAL_AND LOGICAL_OR MAXIMUM MINIMUM MIRROR_PAD MUL NOT_EQUAL PAD POW
                PRELU RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR REVERSE_V2 SQUARED_DIFFERENCE SUB
                TILE TRANSPOSE MEAN SUM REDUCE_MAX REDUCE_MIN REDUCE_PROD REDUCE_ANY REDUCE_ALL
                """
            ),
            _BINARY,
        ),
        "ADD_N": _spec(1, None),
        "ASSIGN_VARIABLE": _spec(2, outputs=(0, 0)),
        "BATCH_TO_SPACE_ND": _spec(3),
        "CONCATENATION": _spec(1, None),
        "CONV_2D": _spec(2, 3, optional=(2,)),
        "CONV_3D": _spec(2, 3, optional=(2,)),
        "DEPTHWISE_CONV_2D": _spec(2, 3, optional=(2,)),
        "FULLY_CONNECTED": _spec(2, 3, optional=(2,), outputs=(1, 2)),
        "PACK": _spec(1, None),
        "PADV2": _spec(3),
        "RANGE": _spec(3),
        "RESHAPE": _spec(1, 2, optional=(1,)),
        "SELECT": _spec(3),
        "SELECT_V2": _spec(3),
        "SLICE": _spec(3),
        "SPACE_TO_BATCH_ND": _spec(3),
        "SPLIT": _spec(2, outputs=(1, None)),
        "SPLIT_V": _spec(3, outputs=(1, None)),
        "STRIDED_SLICE": _spec(4),
        "SVDF": _spec(5, optional=(3,)),
        "TRANSPOSE_CONV": _spec(3, 4, optional=(3,)),
        "UNPACK": _spec(1, outputs=(1, None)),
        "UNIDIRECTIONAL_SEQUENCE_LSTM": _spec(20, 24, optional=_LSTM_OPTIONAL),
        "LSTM": _spec(20, 24, optional=_LSTM_OPTIONAL, outputs=(1, 4)),
        "VAR_HANDLE": _spec(0, outputs=(1, 1)),
    }
)
