"""Recurrent kernels: UNIDIRECTIONAL_SEQUENCE_LSTM, SVDF → their setup allocations.

Sources: unidirectional_sequence_lstm.cc, svdf.cc, svdf_common.cc.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import (
    Events,
    Fixed,
    KernelContext,
    KernelRule,
    Scratch,
    inputs_then_outputs,
)
from arenalens.runtimes.tflm.kernels.common import dim, hybrid_refusal, op_data


def _lstm(context: KernelContext) -> Events:
    # CreateLstmSizeInfo: batch from the input (dim 1 when time-major), state size from the
    # output-state input #18; element size from the cell-state input #19.
    found = hybrid_refusal(context, 0, 2)
    found += inputs_then_outputs(context)
    source = context.input(0)
    batch = dim(source, 1) if context.option("time_major") else dim(source, 0)
    state_dimension = dim(context.input(18), 1)
    size = batch * state_dimension * context.input_element_bytes(19, 2)
    found += [Scratch(size, f"lstm buffer {i}") for i in range(4)]
    return found


def _svdf(context: KernelContext) -> Events:
    found = hybrid_refusal(context, 0, 1)
    found += inputs_then_outputs(context)
    batch = dim(context.input(0), 0)
    num_filters = dim(context.input(1), 0)
    rank = max(1, context.option("rank", 1))
    found.append(Scratch(batch * num_filters * 4, "svdf scratch"))
    if context.input_type(0) == "INT8":
        found.append(Scratch(batch * (num_filters // rank) * 4, "svdf output scratch"))
    return found


RULES = (
    KernelRule(
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        "unidirectional_sequence_lstm.cc",
        Fixed(16, 4),
        op_data(688),
        _lstm,
        derived=False,
    ),
    KernelRule("SVDF", "svdf.cc, svdf_common.cc", Fixed(12, 4), op_data(36), _svdf, derived=False),
)
