"""Elementwise kernels: arithmetic, comparisons and unary math → their setup allocations."""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import (
    Events,
    Fixed,
    KernelContext,
    KernelRule,
    Persistent,
    Scratch,
    inputs_then_outputs,
    temps,
)
from arenalens.runtimes.tflm.kernels.common import op_data


def _add_n(context: KernelContext) -> Events:
    # The float kernel keeps a scratch index in user_data; the int8 one takes its OpData here,
    # in Prepare, not in Init (add_n.cc).
    found = list(inputs_then_outputs(context))
    if context.output_type(0) == "INT8":
        found.append(Persistent(40, "OpData"))
    if context.output_type(0) in ("FLOAT32", "INT8"):
        pointers = context.build.pointer_bytes * len(context.operator.inputs)
        found.append(Scratch(pointers, "add_n input pointers"))
    return found


def _comparison(context: KernelContext) -> Events:
    # comparisons.cc ComparisonsPrepare fetches both inputs, never the output.
    return temps(context, ("in", 0), ("in", 1))


# comparisons.cc: no options; OpData is ComparisonParams (seven ints and a bool).
_COMPARISONS = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")

RULES = (
    KernelRule("ADD", "add.cc, add_common.cc", Fixed(8, 4), op_data(60), derived=False),
    KernelRule("ADD_N", "add_n.cc", None, prepare=_add_n, derived=False),
    KernelRule("DIV", "div.cc", Fixed(4, 4), op_data(28), derived=False),
    KernelRule("EXP", "exp.cc", derived=False),
    KernelRule("MAXIMUM", "maximum_minimum.cc", derived=False),
    KernelRule("MINIMUM", "maximum_minimum.cc", derived=False),
    KernelRule("MUL", "mul.cc, mul_common.cc", Fixed(4, 4), op_data(36), derived=False),
    KernelRule("SUB", "sub.cc, sub_common.cc", Fixed(8, 4), op_data(52), derived=False),
    *(
        KernelRule(opcode, "comparisons.cc", None, op_data(32), _comparison, derived=False)
        for opcode in _COMPARISONS
    ),
)
