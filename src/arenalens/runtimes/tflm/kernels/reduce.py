"""Reductions: MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_ALL, ARG_MAX, ARG_MIN → their setup
allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): reduce.cc, reduce_common.cc, reduce.h,
arg_min_max.cc; options parsed by flatbuffer_conversions.cc (ParseReducer, ParseArgMax,
ParseArgMin), allocated even when the operator has no options table. Which axes are reduced and
keep_dims change nothing but the scratch sizes below.
"""

from __future__ import annotations

from typing import Any

from arenalens.builds.tflm import REDUCE_ALL, REDUCE_MIN, REDUCE_SCRATCH
from arenalens.runtimes.tflm.abi import Field, Struct, struct
from arenalens.runtimes.tflm.access_order import REREADS_INPUT
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import elements, op_data, scale_of, shape, zero_point_of
from arenalens.runtimes.tflm.kernels.refusals import not_equal, source_path

_REDUCER_PARAMS = struct("TfLiteReducerParams", ("keep_dims", "bool"))
_ARG_MAX_PARAMS = struct("TfLiteArgMaxParams", ("output_type", "enum"))  # TfLiteType
_ARG_MIN_PARAMS = struct("TfLiteArgMinParams", ("output_type", "enum"))
_REDUCE_OP_DATA = struct(
    "OpDataReduce",
    ("multiplier", "int32"),
    ("shift", "int"),
    ("scratch_accumulator_idx", "int"),
    ("scratch_resolved_axis_idx", "int"),
    # reduce-scratch (0efdd51, 2026-01-16): the third index; before, temp_buffer_idx and
    # resolved_axis_idx.
    Field("scratch_input_iter_idx", "int", only_with=REDUCE_SCRATCH),
    ("input_zp", "int"),
    ("input_scale", "float"),
    ("output_zp", "int"),
    ("output_scale", "float"),
    ("num_output_elements", "int"),
    ("num_axis", "int"),
)
_FILE = "reduce_common.cc"


def _prepare_simple(context: base.KernelContext) -> list[base.Event]:
    """PrepareSimple: input, (arity), axis, axis type; the output only for int8 input."""
    found = base.temps(context, ("in", 0))
    for what, have, want in (
        ("inputs", len(context.operator.inputs), 2),
        ("outputs", len(context.operator.outputs), 1),
    ):
        if have != want:
            found.append(not_equal(_FILE, f"node->{what}->size", str(want), have, want))
    found += base.temps(context, ("in", 1))
    axis_type = context.input_type(1)
    if axis_type != "INT32":
        found.append(not_equal(_FILE, "axis->type", "kTfLiteInt32", axis_type, "INT32"))
    if context.input_type(0) == "INT8":
        found += base.temps(context, ("out", 0))
    return found


def _index_scratch(context: base.KernelContext) -> list[base.Event]:
    """The input iterator (one int per input dimension) and the resolved axes (one int per axis
    element); zero-byte requests are still requests."""
    return [
        base.Scratch(4 * len(shape(context.input(0))), "reduce input iterator"),
        base.Scratch(4 * elements(context.input(1)), "reduce resolved axes"),
    ]


def _mean_or_sum(context: base.KernelContext) -> base.Events:
    # PrepareMeanOrSumHelper: input, output, axis; int8/int16 request int32 accumulators (one per
    # output element); the two index arrays; then PrepareSimple fetches input and axis again.
    found = base.temps(context, ("in", 0), ("out", 0), ("in", 1))
    dtype = context.input_type(0)
    if dtype in ("INT8", "INT16"):
        found.append(base.Scratch(4 * elements(context.output(0)), "reduce accumulators"))
    if context.build.has(REDUCE_SCRATCH):
        # Before reduce-scratch, MEAN and SUM kept the index arrays on Eval's stack.
        found += _index_scratch(context)
    found += _prepare_simple(context)
    if context.opcode == "MEAN" and dtype not in ("FLOAT32", "INT8", "INT16"):
        found.append(
            base.Refusal(
                f"{_FILE} Currently, only float32, int8 or int16 input type is supported.",
                base.INVOKE,
            )
        )
    elif context.opcode == "SUM":
        found += _same_type_at_eval(context)
        if dtype not in ("FLOAT32", "INT8", "INT16"):
            found.append(
                base.Refusal("Only float32, int8, and int16 types are supported.", base.INVOKE)
            )
    return found


def _same_type_at_eval(context: base.KernelContext) -> list[base.Event]:
    input_type, output_type = context.input_type(0), context.output_type(0)
    if input_type == output_type:
        return []
    refusal = not_equal(_FILE, "input->type", "output->type", input_type, output_type)
    return [base.Refusal(refusal.reason, base.INVOKE)]


def _min_max(context: base.KernelContext) -> base.Events:
    # PrepareMinMaxHelper: PrepareSimple, then input, output, axis again; the index arrays. No
    # accumulators for any type.
    found = _prepare_simple(context) + base.temps(context, ("in", 0), ("out", 0), ("in", 1))
    found += _index_scratch(context) + _same_type_at_eval(context)
    dtype = context.input_type(0)
    if dtype not in ("FLOAT32", "INT8"):
        found.append(base.Refusal("Only float32 and int8 types are supported.", base.INVOKE))
    elif dtype == "INT8":
        source, result = context.input(0), context.output(0)
        if scale_of(source) != scale_of(result):
            found.append(
                base.Refusal(
                    f"{source_path(_FILE)} static_cast<double>(op_data->input_scale) != "
                    "static_cast<double>(op_data->output_scale)",
                    base.INVOKE,
                )
            )
        elif zero_point_of(source) != zero_point_of(result):
            found.append(
                base.Refusal(
                    f"{source_path(_FILE)} op_data->input_zp != op_data->output_zp", base.INVOKE
                )
            )
    return found


def _all(context: base.KernelContext) -> base.Events:
    # PrepareAllHelper: input, output, axis; bool input; PrepareSimple; the index arrays.
    found = base.temps(context, ("in", 0), ("out", 0), ("in", 1))
    dtype = context.input_type(0)
    if dtype != "BOOL":
        found.append(not_equal(_FILE, "input->type", "kTfLiteBool", dtype, "BOOL"))
    found += _prepare_simple(context) + _index_scratch(context) + _same_type_at_eval(context)
    return found


def _arg_min_max(context: base.KernelContext) -> base.Events:
    # arg_min_max.cc registers no Init and no Prepare: only its options are allocated; Eval
    # checks the axis, output and input types in that order.
    axis_type, output_type, input_type = (
        context.input_type(1),
        context.output_type(0),
        context.input_type(0),
    )
    if axis_type != "INT32":
        return [
            base.Refusal(f"Only int32_t are supported currently, got {axis_type}.", base.INVOKE)
        ]
    if output_type != "INT32":
        return [
            base.Refusal(f"Only int32_t are supported currently, got {output_type}.", base.INVOKE)
        ]
    if input_type not in ("FLOAT32", "INT8"):
        return [
            base.Refusal(
                f"Only float32, uint8_t and int8_t are supported currently, got {input_type}.",
                base.INVOKE,
            )
        ]
    return []


_REDUCE = "reduce.cc, reduce_common.cc"
_INIT = op_data(_REDUCE_OP_DATA)

_REDUCTION = base.NoOverlap(
    "reductions write the output before reading the input (reduce_common.cc)"
)
_AXIS = base.operands("input", "axis")


def _arg_min_max_rule(opcode: str, params: Struct) -> base.KernelRule:
    """ARG_MAX and ARG_MIN: one kernel file (arg_min_max.cc, see `_arg_min_max`), the same
    operands and loop; only their options' struct differs."""
    return base.KernelRule(
        opcode,
        "arg_min_max.cc",
        params,
        base.no_events,
        _arg_min_max,
        access=base.NoOverlap(REREADS_INPUT + " along the axis (not analysed further)"),
        operands=_AXIS,
    )


def _reduction(
    opcode: str, prepare: base.RuleFunction, access: base.Access = _REDUCTION, **facts: Any
) -> base.KernelRule:
    """A reduce.cc kernel: TfLiteReducerParams, `InitReduce` allocates OpDataReduce, and input
    and axis operands for all of them."""
    return base.KernelRule(
        opcode,
        _REDUCE,
        _REDUCER_PARAMS,
        _INIT,
        prepare,
        access=access,
        operands=_AXIS,
        **facts,
    )


RULES = (
    _arg_min_max_rule("ARG_MAX", _ARG_MAX_PARAMS),
    _arg_min_max_rule("ARG_MIN", _ARG_MIN_PARAMS),
    _reduction(
        "MEAN",
        _mean_or_sum,
        base.NoOverlap(
            "sums over the reduced axes into a temporary, reading the whole input first"
        ),
    ),
    _reduction("SUM", _mean_or_sum),
    _reduction("REDUCE_ALL", _all, registered_from=REDUCE_ALL),
    _reduction("REDUCE_MAX", _min_max),
    _reduction("REDUCE_MIN", _min_max, registered_from=REDUCE_MIN),
)
