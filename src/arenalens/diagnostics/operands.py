"""Operand counts of builtins: how many inputs / outputs a kernel requires, which may be -1.

A TFLM kernel's operands are on its rule (`KernelRule.operands`, in its family module under
runtimes/tflm/kernels/, from the kernel's Prepare checks; where LiteRT's kernel accepts more the
looser count is kept). The builtins no TFLM kernel takes are listed here, from LiteRT's kernels
(*tflite/kernels/*), so that a finding means the runtimes that have a kernel reject (or misread)
the operator. Operators in neither (other custom ops, rarely used builtins) are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

from arenalens.analysis.operands import Operands, operands
from arenalens.runtimes.door import tflm_runtime


def _tflm_operands(opcode: str) -> Operands:
    """The operands of a TFLM kernel's rule."""
    rule = tflm_runtime().kernel_rule(opcode)
    assert rule is not None, opcode
    return rule.operands


_UNARY = operands("input")
_BINARY = operands("input1", "input2")

_UNARY_NAMES = (
    "GELU", "LOCAL_RESPONSE_NORMALIZATION", "ONES_LIKE", "RANK", "RELU_0_TO_1", "RELU_N1_TO_1",
)  # fmt: skip

# Builtins only LiteRT has a kernel for.
LITERT_ONLY: Mapping[str, Operands] = MappingProxyType(
    {
        **dict.fromkeys(_UNARY_NAMES, _UNARY),
        **dict.fromkeys(("POW", "REDUCE_ANY", "REDUCE_PROD", "TILE"), _BINARY),
        "CONV_3D": operands("input", "filter", "bias?"),
        "CONV_3D_TRANSPOSE": operands("output_shape", "filter", "input", "bias?"),
        # lstm.cc: the full LSTM takes the 24 inputs of UNIDIRECTIONAL_SEQUENCE_LSTM and has up
        # to 4 outputs (output, and the basic kernel's scratch, state and activation outputs).
        "LSTM": replace(_tflm_operands("UNIDIRECTIONAL_SEQUENCE_LSTM"), max_outputs=4),
        "RANGE": operands("start", "limit", "delta"),
        "SELECT": operands("condition", "x", "y"),
    }
)


def operands_of(opcode: str) -> Operands | None:
    """The operands the kernel for this operator takes; None where arenalens does not know."""
    rule = tflm_runtime().kernel_rule(opcode)
    return rule.operands if rule is not None else LITERT_ONLY.get(opcode)
