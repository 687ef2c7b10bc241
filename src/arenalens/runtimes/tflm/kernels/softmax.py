"""Softmax kernels: SOFTMAX → its setup allocations (softmax.cc, softmax_common.cc)."""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import (
    Events,
    Fixed,
    KernelContext,
    KernelRule,
    Persistent,
    temps,
)
from arenalens.runtimes.tflm.kernels.common import op_data


def _softmax(context: KernelContext) -> Events:
    found = temps(context, ("in", 0), ("out", 0))
    if context.input_type(0) == "INT16":
        # Two int16 lookup tables of kInt16LUTArraySize (513) entries.
        found += [Persistent(2 * 513, "exp LUT"), Persistent(2 * 513, "1/(1+x) LUT")]
    return found


RULES = (
    KernelRule(
        "SOFTMAX",
        "softmax.cc, softmax_common.cc",
        Fixed(4, 4),
        op_data(80),
        _softmax,
        derived=False,
    ),
)
