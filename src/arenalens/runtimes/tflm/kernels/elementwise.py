"""Elementwise kernels: unary math, logical ops, comparisons, rounding, MAXIMUM / MINIMUM,
SELECT_V2, ZEROS_LIKE and FILL → their setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): elementwise.cc, comparisons.cc, logical.cc,
maximum_minimum.cc, ceil.cc, round.cc, exp.cc, floor.cc, neg.cc, select.cc, zeros_like.cc, fill.cc.
None of them parses builtin options. Broadcasting never changes what they allocate (it only sets a
flag in OpData, or is decided at Eval).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arenalens.builds.tflm import CONST_TENSOR_CHECKS
from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.access_order import broadcast, same_index
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import (
    BINARY,
    IN_PLACE_UNARY,
    UNARY,
    constant_ints,
    elements,
    is_quantized,
    op_data,
    scale_of,
    setup_refused,
    shape,
    zero_point_of,
)
from arenalens.runtimes.tflm.kernels.quantization import (
    QUANTIZE_EVERY_TENSOR,
    g,
    smaller_than_one,
)
from arenalens.runtimes.tflm.kernels.refusals import (
    TFLITE_TYPES,
    arity_refusals,
    not_equal,
    numbered,
    only_currently_supports,
    source_path,
)

# ---------------------------------------------------------------------------------------------
# elementwise.cc: ABS, RSQRT (with OpData), SIN, COS, LOG, SQRT, SQUARE, LOGICAL_NOT (without).
#
# Both Prepare templates declare the type whitelist as an *unnamed* template parameter, so
# `IsSupportedType(input->type)` is a functional cast of the type to the function-pointer type:
# non-null for every real type, the check never fires. Every type passes Prepare; Eval refuses.

_ABS_RSQRT_OP_DATA = struct(
    "OpDataAbsRsqrt",
    ("multiplier", "int32"),
    ("shift", "int"),
    ("input_offset", "int"),
    ("output_offset", "int"),
    ("needs_rescale", "bool"),
    ("input_quantization_type", "enum32"),  # TfLiteQuantizationType is `enum : int`
    ("input_type", "enum"),
)
_ELEMENTWISE = "elementwise.cc"


def _unary_types(context: base.KernelContext, file: str) -> list[base.Event]:
    """Arity and `input->type == output->type`, as every unary Prepare here checks them."""
    found = arity_refusals(context, file, 1, 1)
    input_type, output_type = context.input_type(0), context.output_type(0)
    if input_type != output_type:
        found.append(not_equal(file, "input->type", "output->type", input_type, output_type))
    return found


def _abs_rsqrt(context: base.KernelContext) -> base.Events:
    # PrepareAbsRsqrt: input, output; int8 (and int16 carrying quantization) takes the quantized
    # path, which needs affine quantization on both and, for int16, zero points 0.
    found = base.temps(context, ("in", 0), ("out", 0)) + _unary_types(context, _ELEMENTWISE)
    source, result = context.input(0), context.output(0)
    dtype = context.input_type(0)
    if dtype == "INT8" or (dtype == "INT16" and is_quantized(source)):
        for name, tensor in (("input", source), ("output", result)):
            if not is_quantized(tensor):
                found.append(
                    not_equal(
                        _ELEMENTWISE,
                        f"{name}->quantization.type",
                        "kTfLiteAffineQuantization",
                        0,
                        1,
                    )
                )
                return found
        if dtype == "INT16":
            for name, tensor in (("input", source), ("output", result)):
                if zero_point_of(tensor) != 0:
                    offset = zero_point_of(tensor)
                    found.append(not_equal(_ELEMENTWISE, f"op_data->{name}_offset", "0", offset, 0))
                    break
    if dtype not in ("FLOAT32", "INT8", "INT16"):
        found.append(base.Refusal(f"Current data type {dtype} is not supported.", base.INVOKE))
    return found


def _generic_unary(expected: str) -> base.RuleFunction:
    """GenericPrepare: input, output, equal types; Eval accepts `expected` only."""

    def prepare(context: base.KernelContext) -> base.Events:
        found = base.temps(context, ("in", 0), ("out", 0)) + _unary_types(context, _ELEMENTWISE)
        dtype = context.input_type(0)
        if dtype != expected and not setup_refused(found):
            found.append(
                not_equal(
                    _ELEMENTWISE, "input->type", "expected_type", dtype, expected, phase=base.INVOKE
                )
            )
        return found

    return prepare


# ---------------------------------------------------------------------------------------------
# ceil.cc, round.cc, exp.cc: float32 only, checked in Prepare with the output's size and shape.


def _float_only(file: str) -> base.RuleFunction:
    """CeilPrepare / RoundPrepare / ExpPrepare: input, output, then float32 and equal shapes."""

    def prepare(context: base.KernelContext) -> base.Events:
        found = base.temps(context, ("in", 0), ("out", 0)) + arity_refusals(context, file, 1, 1)
        source, result = context.input(0), context.output(0)
        input_type, output_type = context.input_type(0), context.output_type(0)
        if input_type != "FLOAT32":
            found.append(not_equal(file, "input->type", "kTfLiteFloat32", input_type, "FLOAT32"))
        elif output_type != input_type:
            found.append(not_equal(file, "output->type", "input->type", output_type, input_type))
        elif elements(result) != elements(source):
            have, want = 4 * elements(result), 4 * elements(source)
            found.append(not_equal(file, "output->bytes", "input->bytes", have, want))
        elif shape(source) != shape(result):
            found.append(
                not_equal(
                    file, "output->dims", "input->dims", list(shape(result)), list(shape(source))
                )
            )
        return found

    return prepare


def _eval_float_only(refusal: Callable[[str], base.Refusal]) -> base.RuleFunction:
    """FLOOR and NEG: no Init, no Prepare; Eval refuses anything but float32 (`refusal`: the
    kernel's words for the input type it refuses)."""

    def prepare(context: base.KernelContext) -> base.Events:
        dtype = context.input_type(0)
        if dtype == "FLOAT32":
            return []
        return [refusal(dtype)]

    return prepare


def _floor_refusal(dtype: str) -> base.Refusal:
    return not_equal(
        "floor.cc", "input->type", "kTfLiteFloat32", dtype, "FLOAT32", phase=base.INVOKE
    )


def _neg_refusal(dtype: str) -> base.Refusal:
    return base.Refusal(f"Type {numbered(dtype)} not supported.", base.INVOKE)


# ---------------------------------------------------------------------------------------------
# comparisons.cc: the output is never fetched; int8 inputs turn their raw scales into multipliers
# with QuantizeMultiplierSmallerThanOneExp, which aborts (TFLITE_CHECK) unless 0 < scale < 1.

_COMPARISON_OP_DATA = struct(
    "ComparisonParams",
    ("left_shift", "int"),
    ("input1_offset", "int32"),
    ("input1_multiplier", "int32"),
    ("input1_shift", "int"),
    ("input2_offset", "int32"),
    ("input2_multiplier", "int32"),
    ("input2_shift", "int"),
    ("is_broadcast", "bool"),
)
_COMPARISON_SCALE_FIX = (
    "TFLM's int8 comparisons need each input's scale below 1 (a range narrower than 256): "
    "compare in float32 or int32 (keep this comparison out of the quantized part), or rescale "
    "the operand so its quantized range fits"
)
_ORDERED = frozenset({"FLOAT32", "INT32", "INT64", "INT8"})
_COMPARISON_TYPES = {
    "EQUAL": _ORDERED | {"BOOL"},
    "NOT_EQUAL": _ORDERED | {"BOOL"},
    "GREATER": _ORDERED | {"INT16"},
    "GREATER_EQUAL": _ORDERED,
    "LESS": _ORDERED,
    "LESS_EQUAL": _ORDERED,
}


def _comparison(context: base.KernelContext) -> base.Events:
    found = base.temps(context, ("in", 0), ("in", 1))
    dtype = context.input_type(0)
    if dtype == "INT8":
        for position in (0, 1):
            scale = scale_of(context.input(position))
            refused = smaller_than_one(
                scale,
                f"comparisons.cc passes int8 input {position + 1}'s scale {g(scale)} as the "
                "multiplier",
                _COMPARISON_SCALE_FIX if scale > 0.0 else QUANTIZE_EVERY_TENSOR,
            )
            if refused:
                found.append(refused)
                break
    if dtype not in _COMPARISON_TYPES[context.opcode]:
        found.append(base.Refusal(f"Type {numbered(dtype)} not supported.", base.INVOKE))
    return found


# ---------------------------------------------------------------------------------------------
# maximum_minimum.cc: Init and Prepare are nullptr: nothing allocated, nothing checked before Eval.


def _maximum_minimum(context: base.KernelContext) -> base.Events:
    dtype = context.output_type(0)
    if dtype in ("FLOAT32", "INT8", "INT16", "INT32", "INT64"):
        return []
    return [
        base.Refusal(f"Type {numbered(dtype)} is not supported by Maximum/Minimum.", base.INVOKE)
    ]


# ---------------------------------------------------------------------------------------------
# select.cc: OpData {bool requires_broadcast}; Prepare fetches all four operands before checking.

_SELECT_OP_DATA = struct("OpData", ("requires_broadcast", "bool"))


def _select_v2(context: base.KernelContext) -> base.Events:
    file = "select.cc"
    found = arity_refusals(context, file, 3, 1)
    found += base.temps(context, ("in", 0), ("in", 1), ("in", 2), ("out", 0))
    condition, x_type, y_type = (context.input_type(i) for i in range(3))
    if condition != "BOOL":
        found.append(not_equal(file, "input_condition->type", "kTfLiteBool", condition, "BOOL"))
    elif x_type != y_type:
        found.append(not_equal(file, "input_x->type", "input_y->type", x_type, y_type))
    else:
        problem = _select_broadcast_problem(context, file)
        if problem:
            found.append(problem)
    if not setup_refused(found) and x_type not in (
        "FLOAT32",
        "INT8",
        "INT16",
    ):
        found.append(
            base.Refusal(
                f"Does not support type other than int8|int16|float32, but got {x_type}",
                base.INVOKE,
            )
        )
    return found


def _select_broadcast_problem(context: base.KernelContext, file: str) -> base.Refusal | None:
    """CheckBroadcastShape, run when the three inputs' shapes differ (unless all four operands
    hold one element): None when the shapes broadcast to the output's."""
    shapes = [shape(context.input(i)) for i in range(3)]
    output = shape(context.output(0))
    if shapes[0] == shapes[1] == shapes[2]:
        return None
    if all(elements(context.input(i)) == 1 for i in range(3)) and elements(context.output(0)) == 1:
        return None
    rank = max(len(s) for s in shapes)
    if rank != len(output):
        return not_equal(file, "out_dims", "output_shape->size", rank, len(output))
    for back in range(rank):
        dims = [s[len(s) - back - 1] if back < len(s) else 1 for s in shapes]
        largest = 0 if min(dims) == 0 else max(dims)
        if any(d not in (1, largest) for d in dims):
            return base.Refusal(f"{source_path(file)} Given shapes are not broadcastable.")
        if output[rank - back - 1] != largest:
            return not_equal(
                file,
                f"output_shape->data[{rank - back - 1}]",
                "max_value",
                output[rank - back - 1],
                largest,
            )
    return None


# ---------------------------------------------------------------------------------------------
# zeros_like.cc and fill.cc: no Init.


def _zeros_like(context: base.KernelContext) -> base.Events:
    found = arity_refusals(context, "zeros_like.cc", 1, 1)
    found += base.temps(context, ("in", 0), ("out", 0))
    dtype = context.input_type(0)
    if dtype not in ("INT64", "INT32", "INT8", "FLOAT32"):
        found.append(only_currently_supports("ZerosLike", "int64, int32, and float32", dtype))
    return found


def _fill(context: base.KernelContext) -> base.Events:
    # FillPrepare: dims, value, output; then the checks, in this order.
    file = "fill.cc"
    found = base.temps(context, ("in", 0), ("in", 1), ("out", 0))
    dims, value, result = context.input(0), context.input(1), context.output(0)
    problem: base.Refusal | None = None
    if len(shape(value)) != 0:
        problem = not_equal(file, "NumDimensions(value)", "0", len(shape(value)), 0)
    elif context.input_type(1) != context.output_type(0):
        problem = not_equal(
            file, "value->type", "output->type", context.input_type(1), context.output_type(0)
        )
    elif dims is None or (not dims.is_constant and context.build.has(CONST_TENSOR_CHECKS)):
        problem = base.Refusal(f"{source_path(file)} Non-constant >dims< tensor is not supported")
    elif not dims.is_constant:
        return found  # before const-tensor-checks: FILL left runtime dims to Eval
    elif len(shape(dims)) != 1:
        problem = not_equal(file, "NumDimensions(tensor)", "1", len(shape(dims)), 1)
    elif shape(dims)[0] != len(shape(result)):
        problem = not_equal(file, "array->size", "tensor_len", len(shape(result)), shape(dims)[0])
    else:
        problem = _fill_dims_problem(context, file, dims, result)
    if problem:
        found.append(problem)
    elif context.input_type(1) not in ("FLOAT32", "INT32", "INT8"):
        found.append(base.Refusal("Fill only currently supports float32 for input 1", base.INVOKE))
    return found


def _fill_dims_problem(
    context: base.KernelContext, file: str, dims: Tensor, result: Tensor | None
) -> base.Refusal | None:
    """fill.cc's EnsureEq: the constant dims, element by element, against the output's shape."""
    values = constant_ints(context, dims)
    if values is None:
        number = TFLITE_TYPES.get(context.input_type(0), "?")
        return base.Refusal(
            f"{source_path(file)} cannot compare int array to tensor of type {number}."
        )
    for have, want in zip(shape(result), values, strict=False):
        if have != want:
            return not_equal(file, "array->data[i]", "GetTensorData<T>(tensor)[i]", have, want)
    return None


_UNARY_FLOAT = ("SIN", "COS", "LOG", "SQRT", "SQUARE")
_COMPARISONS = tuple(_COMPARISON_TYPES)


def _unary(
    opcode: str,
    source: str,
    init: base.RuleFunction,
    prepare: base.RuleFunction,
    traced_in: str,
    **facts: Any,
) -> base.KernelRule:
    """A unary kernel of this module: no builtin options (see above), one input and one output,
    output[i] computed from input[i] alone (its loop, in `traced_in`)."""
    return base.KernelRule(
        opcode, source, None, init, prepare, access=same_index(traced_in), operands=UNARY, **facts
    )


def _binary(
    opcode: str, source: str, init: base.RuleFunction, prepare: base.RuleFunction, traced_in: str
) -> base.KernelRule:
    """A binary kernel of this module: no builtin options (see above), two inputs broadcast
    against each other into one output (its loop, in `traced_in`)."""
    return base.KernelRule(
        opcode, source, None, init, prepare, access=broadcast(traced_in), operands=BINARY
    )


_LOGICAL = "logical.cc, logical_common.cc"
_LOGICAL_LOOP = "logical.cc, reference/binary_function.h"
_MAXIMUM_MINIMUM_LOOP = "maximum_minimum.cc, reference/maximum_minimum.h"
_ABS_RSQRT_INIT = op_data(_ABS_RSQRT_OP_DATA)

RULES = (
    _unary("ABS", _ELEMENTWISE, _ABS_RSQRT_INIT, _abs_rsqrt, _ELEMENTWISE, inplace=IN_PLACE_UNARY),
    _unary("RSQRT", _ELEMENTWISE, _ABS_RSQRT_INIT, _abs_rsqrt, _ELEMENTWISE),
    *(
        _unary(opcode, _ELEMENTWISE, base.no_events, _generic_unary("FLOAT32"), _ELEMENTWISE)
        for opcode in _UNARY_FLOAT
    ),
    _unary(
        "LOGICAL_NOT",
        _ELEMENTWISE,
        base.no_events,
        _generic_unary("BOOL"),
        "logical.cc, elementwise.cc",
    ),
    _unary("CEIL", "ceil.cc", base.no_events, _float_only("ceil.cc"), "ceil.cc, reference/ceil.h"),
    _unary(
        "ROUND", "round.cc", base.no_events, _float_only("round.cc"), "round.cc, reference/round.h"
    ),
    _unary("EXP", "exp.cc", base.no_events, _float_only("exp.cc"), "exp.cc, reference/exp.h"),
    _unary(
        "FLOOR",
        "floor.cc",
        base.no_events,
        _eval_float_only(_floor_refusal),
        "floor.cc, reference/floor.h",
    ),
    _unary(
        "NEG",
        "neg.cc",
        base.no_events,
        _eval_float_only(_neg_refusal),
        "neg.cc, reference/neg.h",
        inplace=IN_PLACE_UNARY,
    ),
    # logical.cc: Init and Prepare are nullptr, and Eval reads any type as bool.
    _binary("LOGICAL_AND", _LOGICAL, base.no_events, base.no_events, _LOGICAL_LOOP),
    _binary("LOGICAL_OR", _LOGICAL, base.no_events, base.no_events, _LOGICAL_LOOP),
    _binary(
        "MAXIMUM", "maximum_minimum.cc", base.no_events, _maximum_minimum, _MAXIMUM_MINIMUM_LOOP
    ),
    _binary(
        "MINIMUM", "maximum_minimum.cc", base.no_events, _maximum_minimum, _MAXIMUM_MINIMUM_LOOP
    ),
    *(
        _binary(
            opcode,
            "comparisons.cc",
            op_data(_COMPARISON_OP_DATA),
            _comparison,
            "comparisons.cc, reference/comparisons.h",
        )
        for opcode in _COMPARISONS
    ),
    # SelectInit writes the flag at once (a failed allocation crashes there).
    base.KernelRule(
        "SELECT_V2",
        "select.cc",
        None,
        op_data(_SELECT_OP_DATA),
        _select_v2,
        access=base.NoOverlap("not analysed"),
        operands=base.operands("condition", "x", "y"),
        resolver="AddSelectV2",
    ),
    base.stateless(
        "ZEROS_LIKE", "zeros_like.cc", _zeros_like, base.NoOverlap("reads no data input"), UNARY
    ),
    base.stateless(
        "FILL",
        "fill.cc",
        _fill,
        base.NoOverlap("reads no data input"),
        base.operands("dims", "value"),
    ),
)
