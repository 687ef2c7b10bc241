"""Reductions: MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_ALL, ARG_MAX → their setup allocations.

Sources: reduce.cc, reduce_common.cc, arg_min_max.cc.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import (
    Event,
    Events,
    Fixed,
    KernelContext,
    KernelRule,
    Scratch,
    temps,
)
from arenalens.runtimes.tflm.kernels.common import elements, op_data, shape


def _prepare_simple(context: KernelContext) -> list[Event]:
    # reduce_common.cc PrepareSimple: input, axis, and the output only for int8 input.
    found = temps(context, ("in", 0), ("in", 1))
    if context.input_type(0) == "INT8":
        found += temps(context, ("out", 0))
    return found


def _index_scratch(context: KernelContext) -> list[Event]:
    return [
        Scratch(4 * len(shape(context.input(0))), "reduce input iterator"),
        Scratch(4 * elements(context.input(1)), "reduce resolved axes"),
    ]


def _mean_or_sum(context: KernelContext) -> Events:
    # PrepareMeanOrSumHelper: input, output, axis; then PrepareSimple.
    found = temps(context, ("in", 0), ("out", 0), ("in", 1)) + _prepare_simple(context)
    if context.input_type(0) in ("INT8", "INT16"):
        found.append(Scratch(elements(context.output(0)) * 4, "reduce accumulators"))
    return found + _index_scratch(context)


def _min_max_all(context: KernelContext) -> Events:
    # PrepareMinMaxHelper / PrepareAllHelper: PrepareSimple; then input, output, axis.
    found = _prepare_simple(context) + temps(context, ("in", 0), ("out", 0), ("in", 1))
    return found + _index_scratch(context)


_REDUCE = "reduce.cc, reduce_common.cc"

RULES = (
    KernelRule("ARG_MAX", "arg_min_max.cc", Fixed(4, 4), derived=False),
    KernelRule("MEAN", _REDUCE, Fixed(1, 1), op_data(44), _mean_or_sum, derived=False),
    KernelRule("SUM", _REDUCE, Fixed(1, 1), op_data(44), _mean_or_sum, derived=False),
    KernelRule("REDUCE_ALL", _REDUCE, Fixed(1, 1), op_data(44), _min_max_all, derived=False),
    KernelRule("REDUCE_MAX", _REDUCE, Fixed(1, 1), op_data(44), _min_max_all, derived=False),
    KernelRule("REDUCE_MIN", _REDUCE, Fixed(1, 1), op_data(44), _min_max_all, derived=False),
)
