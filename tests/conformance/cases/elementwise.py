"""Cases for the elementwise family: arithmetic, comparisons, logical and unary math, SELECT_V2,
CAST, ZEROS_LIKE, FILL, the reductions, ARG_MAX / ARG_MIN, the activations, QUANTIZE and
DEQUANTIZE (kernels/elementwise.py, arithmetic.py, activations.py, reduce.py, quantize.py).

Each kernel gets the types it accepts and one it refuses (at setup or at Invoke), and "bigq"
variants whose constant operands carry 300 per-channel scales: the temporary copies of their
quantization then dominate the minimal arena, so the number and order of the temp tensors a
Prepare takes is measured, not just their presence. Models on which TFLM aborts (TFLITE_CHECK on a
missing quantization) are left out: the probes would hang until their timeout.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arenalens.tflite.builder import QuantizationSpec, quantization
from tests.conformance.cases import Case
from tests.conformance.models import (
    Const,
    In,
    Op,
    Out,
    default_quantization,
    per_channel,
    single_op,
)

S = (1, 4, 4, 3)
ROW = (1, 1, 1, 3)  # broadcast against S
MANY = 300  # scales on a "bigq" operand
NUMPY = {
    "FLOAT32": np.float32, "FLOAT16": np.float16, "INT8": np.int8, "INT16": np.int16,
    "INT32": np.int32, "INT64": np.int64, "UINT8": np.uint8, "UINT32": np.uint32, "BOOL": np.bool_,
}  # fmt: skip
POWER_OF_TWO_OUT = quantization(1 / 32768, 0)  # int16 LOGISTIC / TANH outputs need 2^-15


def many_scales(shape: Sequence[int]) -> QuantizationSpec:
    """300 per-channel scales along the last axis (TFLM does not check them against the dims)."""
    return per_channel(MANY, axis=max(len(shape) - 1, 0))


def big(dtype: str, shape: Sequence[int] = S) -> Const:
    """A constant operand carrying 300 quantization scales."""
    return Const(np.ones(shape, NUMPY[dtype]), dtype, q=many_scales(shape))


def case(case_id: str, op: Op, note: str = "") -> Case:
    """One single-operator case; the id's first two fields are the opcode and the input type."""
    opcode, dtype = case_id.split(".")[:2]
    return Case(case_id, opcode, dtype, lambda: single_op(op), note)


def unary(
    opcode: str,
    dtype: str,
    variant: str = "plain",
    *,
    output: str | None = None,
    input_q: Any = "default",
    output_q: Any = "default",
    options: dict[str, Any] | None = None,
    options_type: str | None = None,
    shape: Sequence[int] = S,
    output_shape: Sequence[int] | None = None,
) -> Case:
    """One input, one output of the same shape (bigq: a constant input with 300 scales)."""
    source: In | Const = big(dtype, shape) if variant == "bigq" else In(shape, dtype, input_q)
    result = Out(output_shape or shape, output or dtype, output_q)
    op = Op(opcode, [source], [result], options or {}, options_type=options_type)
    return case(f"{opcode}.{dtype}.{variant}", op)


def binary(
    opcode: str,
    dtype: str,
    variant: str = "plain",
    *,
    output: str | None = None,
    second: str | None = None,
    options: dict[str, Any] | None = None,
    constant_second: bool = False,
    q: Any = "default",
) -> Case:
    """Two inputs and an output: plain (same shapes), broadcast (second is 1x1x1x3), bigq (both
    constant with 300 scales)."""
    other = second or dtype
    first_shape, second_shape = S, (ROW if variant == "broadcast" else S)
    left: In | Const
    right: In | Const
    if variant == "bigq":
        left, right = big(dtype), big(other)
    else:
        left = In(first_shape, dtype, q)
        right = (
            Const(np.ones(second_shape, NUMPY[other]), other, q=_quantization(other, q))
            if constant_second
            else In(second_shape, other, q)
        )
    op = Op(opcode, [left, right], [Out(S, output or dtype, q)], options or {})
    return case(f"{opcode}.{dtype}.{variant}", op)


def _quantization(dtype: str, q: Any) -> QuantizationSpec | None:
    """What In / Out make of `q` ("default": the type's usual per-tensor quantization)."""
    return default_quantization(dtype) if q == "default" else q  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# elementwise.cc

ELEMENTWISE = (
    unary("ABS", "FLOAT32"),
    unary("ABS", "INT8", "bigq"),
    unary("ABS", "INT16"),
    unary("ABS", "INT16", "no_quantization", input_q=None, output_q=None),
    unary("ABS", "INT16", "zero_point", input_q=quantization(1 / 32768, 3)),
    unary("ABS", "INT32"),
    unary("ABS", "INT8", "to_int16", output="INT16"),
    unary("RSQRT", "FLOAT32"),
    unary("RSQRT", "INT8"),
    unary("RSQRT", "INT8", "bigq"),
    unary("RSQRT", "INT16"),
    unary("RSQRT", "INT32"),
    *(unary(opcode, "FLOAT32") for opcode in ("SIN", "COS", "LOG", "SQRT", "SQUARE")),
    *(unary(opcode, "INT8") for opcode in ("SIN", "SQUARE")),
    unary("SIN", "FLOAT32", "bigq"),
    unary("SIN", "FLOAT32", "to_int8", output="INT8"),
    unary("LOGICAL_NOT", "BOOL"),
    unary("LOGICAL_NOT", "BOOL", "bigq"),
    unary("LOGICAL_NOT", "FLOAT32"),
)

# ceil.cc, round.cc, exp.cc (float32 only, checked in Prepare); floor.cc, neg.cc (no Prepare).
ROUNDING = (
    *(unary(opcode, "FLOAT32") for opcode in ("CEIL", "ROUND", "EXP", "FLOOR", "NEG")),
    *(unary(opcode, "INT32") for opcode in ("CEIL", "ROUND", "EXP", "FLOOR", "NEG")),
    *(unary(opcode, "FLOAT32", "bigq") for opcode in ("CEIL", "EXP", "FLOOR")),
    unary("CEIL", "FLOAT32", "other_shape", output_shape=(1, 4, 4, 1)),
)

# ---------------------------------------------------------------------------------------------
# Arithmetic

ARITHMETIC = (
    binary("ADD", "FLOAT32"),
    binary("ADD", "FLOAT32", "broadcast"),
    binary("ADD", "INT8"),
    binary("ADD", "INT8", "bigq"),
    binary("ADD", "INT8", "relu6", options={"fused_activation_function": "RELU6"}),
    # Without quantization the wheel refuses this cleanly; the probes' source aborts (a halt).
    binary("ADD", "INT8", "no_quantization", q=None),
    binary("ADD", "INT16"),
    binary("ADD", "INT32"),
    binary("ADD", "INT32", "quantized", q=quantization(1.0, 0)),
    binary("ADD", "INT64"),
    binary("SUB", "FLOAT32"),
    binary("SUB", "INT8"),
    binary("SUB", "INT8", "bigq"),
    binary("SUB", "INT16"),
    binary("SUB", "INT32"),
    binary("SUB", "INT32", "quantized", q=quantization(1.0, 0)),
    binary("SUB", "INT64"),
    binary("MUL", "FLOAT32"),
    binary("MUL", "INT8"),
    binary("MUL", "INT8", "bigq"),
    binary("MUL", "INT16"),
    binary("MUL", "INT16", "zero_point", q=quantization(1 / 32768, 5)),
    binary("MUL", "INT32"),
    binary("MUL", "INT64"),
    binary("MUL", "INT8", "with_int16", second="INT16"),
    binary("DIV", "FLOAT32", constant_second=True),
    binary("DIV", "INT8", "bigq"),
    binary("DIV", "INT32", constant_second=True),
    binary("DIV", "INT32", "quantized", q=quantization(1.0, 0)),
    binary("DIV", "INT16", constant_second=True),
    binary("DIV", "FLOAT32", "int32_output", output="INT32"),
    *(
        binary(opcode, "FLOAT32", variant, constant_second=variant != "bigq")
        for opcode in ("FLOOR_DIV", "FLOOR_MOD")
        for variant in ("plain", "broadcast", "bigq")
    ),
    binary("FLOOR_DIV", "INT32", constant_second=True),
    binary("FLOOR_DIV", "FLOAT32", "with_int32", second="INT32"),
    binary("SQUARED_DIFFERENCE", "FLOAT32"),
    binary("SQUARED_DIFFERENCE", "FLOAT32", "broadcast"),
    binary("SQUARED_DIFFERENCE", "INT8"),
    binary("SQUARED_DIFFERENCE", "INT8", "bigq"),
    binary("SQUARED_DIFFERENCE", "INT16"),
    binary("SQUARED_DIFFERENCE", "INT64"),
)


def add_n(dtype: str, count: int, variant: str = "") -> Case:
    """ADD_N over `count` inputs (bigq: constant inputs with 300 scales each)."""
    inputs: list[In | Const] = [
        big(dtype) if variant == "bigq" else In(S, dtype) for _ in range(count)
    ]
    op = Op("ADD_N", inputs, [Out(S, dtype)])
    return case(f"ADD_N.{dtype}.{variant or 'inputs'}{count}", op)


ADD_N = (
    *(add_n(dtype, count) for dtype in ("FLOAT32", "INT8") for count in (2, 13)),
    add_n("FLOAT32", 3, "bigq"),
    add_n("INT8", 3, "bigq"),
    add_n("INT32", 3),
    case(
        "ADD_N.FLOAT32.shape_mismatch",
        Op("ADD_N", [In(S), In((1, 4, 4, 1))], [Out(S)]),
    ),
    case(
        "ADD_N.INT8.scale_mismatch",
        Op("ADD_N", [In(S, "INT8"), In(S, "INT8", quantization(0.2, 0))], [Out(S, "INT8")]),
    ),
)

# maximum_minimum.cc: no Init, no Prepare (bigq proves no temps).
MAXIMUM_MINIMUM = tuple(
    binary(opcode, dtype, variant)
    for opcode in ("MAXIMUM", "MINIMUM")
    for dtype, variant in (
        ("FLOAT32", "plain"),
        ("FLOAT32", "broadcast"),
        ("INT8", "bigq"),
        ("INT64", "plain"),
        ("BOOL", "plain"),
    )
)

# ---------------------------------------------------------------------------------------------
# comparisons.cc (the output is never fetched), logical.cc (nothing at all)


def compare(opcode: str, dtype: str, variant: str = "plain", *, output_q: Any = None) -> Case:
    """A comparison with a bool output (bigq: both inputs constant with 300 scales)."""
    shapes = (S, ROW if variant == "broadcast" else S)
    inputs: list[In | Const] = (
        [big(dtype), big(dtype)] if variant == "bigq" else [In(s, dtype) for s in shapes]
    )
    op = Op(opcode, inputs, [Out(S, "BOOL", output_q)])
    return case(f"{opcode}.{dtype}.{variant}", op)


COMPARISONS = (
    compare("EQUAL", "FLOAT32"),
    compare("EQUAL", "FLOAT32", "broadcast"),
    compare("EQUAL", "INT8"),
    compare("EQUAL", "INT8", "bigq"),
    compare("EQUAL", "INT8", "many_output_scales", output_q=many_scales(S)),
    compare("EQUAL", "BOOL"),
    compare("EQUAL", "UINT8"),
    compare("NOT_EQUAL", "BOOL"),
    compare("NOT_EQUAL", "INT16"),
    compare("GREATER", "INT16"),
    compare("GREATER", "BOOL"),
    *(
        compare(opcode, dtype)
        for opcode in ("GREATER_EQUAL", "LESS", "LESS_EQUAL")
        for dtype in ("FLOAT32", "INT8", "INT16")
    ),
)

LOGICAL = tuple(
    binary(opcode, dtype, variant, q=None)
    for opcode in ("LOGICAL_AND", "LOGICAL_OR")
    for dtype, variant in (
        ("BOOL", "plain"),
        ("BOOL", "broadcast"),
        ("BOOL", "bigq"),
        ("FLOAT32", "plain"),
    )
)

# ---------------------------------------------------------------------------------------------
# select.cc, zeros_like.cc, fill.cc, cast.cc


def select(dtype: str, variant: str, operands: tuple[Any, Any, Any], out_shape: Any = S) -> Case:
    """SELECT_V2(condition, x, y)."""
    return case(
        f"SELECT_V2.{dtype}.{variant}", Op("SELECT_V2", list(operands), [Out(out_shape, dtype)])
    )


SELECT = (
    *(select(t, "plain", (In(S, "BOOL"), In(S, t), In(S, t))) for t in ("FLOAT32", "INT8")),
    select("INT32", "plain", (In(S, "BOOL"), In(S, "INT32"), In(S, "INT32"))),
    select("FLOAT32", "broadcast", (In(ROW, "BOOL"), In(S), In((1, 4, 1, 1)))),
    select("FLOAT32", "scalars", (In((1,), "BOOL"), In((1, 1)), In((1,))), out_shape=(1,)),
    select("FLOAT32", "bigq", (big("BOOL"), big("FLOAT32"), big("FLOAT32"))),
    select("FLOAT32", "int8_condition", (In(S, "INT8"), In(S), In(S))),
    select("FLOAT32", "not_broadcastable", (In((1, 1, 1, 2), "BOOL"), In(S), In(S))),
)

ZEROS_LIKE = (
    *(unary("ZEROS_LIKE", t) for t in ("FLOAT32", "INT32", "INT16", "BOOL")),
    unary("ZEROS_LIKE", "FLOAT32", "bigq"),
)


def fill(dtype: str, variant: str, dims: Any, value: Any, out_shape: Any = S) -> Case:
    return case(f"FILL.{dtype}.{variant}", Op("FILL", [dims, value], [Out(out_shape, dtype)]))


def dims_of(dtype: str, values: Sequence[int] = S) -> Const:
    return Const(np.asarray(values, NUMPY[dtype]), dtype)


FILL = (
    *(
        fill("FLOAT32", f"dims_{t.lower()}", dims_of(t), In((), "FLOAT32"))
        for t in ("INT32", "INT64")
    ),
    *(fill(t, "plain", dims_of("INT32"), In((), t)) for t in ("INT8", "BOOL")),
    fill(
        "FLOAT32",
        "bigq",
        dims_of("INT32"),
        Const(np.ones((), np.float32), "FLOAT32", q=many_scales(())),
    ),
    fill("FLOAT32", "dims_variable", In((4,), "INT32"), In((), "FLOAT32")),
    fill("FLOAT32", "dims_float32", dims_of("FLOAT32"), In((), "FLOAT32")),
    fill("FLOAT32", "value_rank1", dims_of("INT32"), In((1,), "FLOAT32")),
    fill("FLOAT32", "dims_mismatch", dims_of("INT32", (1, 4, 4, 2)), In((), "FLOAT32")),
)


def cast(source: str, target: str, variant: str = "", *, options: bool = True) -> Case:
    name = variant or f"to_{target.lower()}"
    op = Op(
        "CAST",
        [big(source) if variant == "bigq" else In(S, source, None)],
        [Out(S, target, None)],
        {"in_data_type": source, "out_data_type": target} if options else {},
        options_type=None if options else "NONE",
    )
    return case(f"CAST.{source}.{name}", op)


CAST = (
    cast("FLOAT32", "INT8"),
    cast("UINT32", "FLOAT32"),
    cast("BOOL", "FLOAT32"),
    cast("FLOAT32", "BOOL"),
    cast("INT64", "INT32"),
    cast("UINT8", "INT32"),
    cast("FLOAT32", "INT8", "bigq"),
    cast("FLOAT32", "INT8", "no_options", options=False),
)

# ---------------------------------------------------------------------------------------------
# reduce.cc, arg_min_max.cc


def reduce(
    opcode: str,
    dtype: str,
    shape: Sequence[int],
    axes: Sequence[int],
    variant: str = "",
    *,
    keep: bool,
    axis_type: str = "INT32",
    output_q: Any = "default",
) -> Case:
    """A reduction over `axes` (bigq: a constant input with 300 scales; many_output_scales: an
    output with 300 scales, which int8 fetches twice)."""
    rank = len(shape)
    reduced = {a % rank for a in axes} if rank else set()
    out_shape = tuple(
        (1 if i in reduced else d) for i, d in enumerate(shape) if keep or i not in reduced
    )
    if variant == "many_output_scales":
        output_q = many_scales(out_shape)
    source: In | Const = big(dtype, shape) if variant == "bigq" else In(shape, dtype)
    axis = Const(np.asarray(axes, NUMPY[axis_type]).reshape((len(axes),)), axis_type)
    name = f"r{rank}_axes{len(axes)}{'_keep' if keep else ''}{'_' + variant if variant else ''}"
    op = Op(
        opcode,
        [source, axis],
        [Out(out_shape, dtype, output_q)],
        {"keep_dims": keep},
        options_type="ReducerOptions" if opcode == "REDUCE_ALL" else None,
    )
    return case(f"{opcode}.{dtype}.{name}", op)


R4 = (1, 6, 6, 4)
REDUCTIONS = (
    reduce("MEAN", "FLOAT32", R4, (1, 2), keep=True),
    reduce("MEAN", "FLOAT32", (12,), (0,), keep=True),
    reduce("MEAN", "FLOAT32", (3, 8), (), keep=True),
    reduce("MEAN", "FLOAT32", R4, (1, 2), "bigq", keep=True),
    reduce("MEAN", "INT8", R4, (1, 2), keep=True),
    reduce("MEAN", "INT8", (2, 3, 4, 5, 6), (1, 3), keep=True),
    reduce("MEAN", "INT8", R4, (1, 2), "bigq", keep=True),
    reduce("MEAN", "INT8", (1, 6, 6, 40), (1, 2), "many_output_scales", keep=True),
    reduce("MEAN", "INT8", R4, (-3, 2, 2), "negative_duplicate", keep=True),
    reduce("MEAN", "INT16", (1, 6, 6, 40), (1, 2), "many_output_scales", keep=True),
    reduce("MEAN", "INT32", R4, (1, 2), keep=True),
    reduce("MEAN", "FLOAT32", R4, (1, 2), "axis_int64", keep=True, axis_type="INT64"),
    reduce("SUM", "FLOAT32", R4, (1, 2), keep=True),
    reduce("SUM", "FLOAT32", (2, 5, 7), (2,), keep=False),
    reduce("SUM", "INT8", R4, (1, 2), keep=True),
    reduce("SUM", "INT8", (1, 6, 6, 40), (1, 2), "many_output_scales", keep=True),
    reduce("SUM", "INT16", (3, 8), (0, 1), keep=False),
    reduce("SUM", "INT32", R4, (1, 2), keep=True),
    reduce("REDUCE_MAX", "FLOAT32", R4, (1, 2), keep=True),
    reduce("REDUCE_MAX", "FLOAT32", (), (), keep=False),
    reduce("REDUCE_MAX", "INT8", R4, (1, 2), keep=True),
    reduce("REDUCE_MAX", "INT8", R4, (1, 2), "bigq", keep=True),
    reduce("REDUCE_MAX", "INT8", (1, 6, 6, 40), (1, 2), "many_output_scales", keep=True),
    reduce("REDUCE_MAX", "INT16", R4, (1, 2), keep=True),
    reduce("REDUCE_MIN", "FLOAT32", R4, (1, 2), keep=True),
    reduce("REDUCE_MIN", "INT8", (2, 5, 7), (2,), keep=False),
    reduce("REDUCE_MIN", "INT32", R4, (1, 2), keep=True),
    reduce("REDUCE_ALL", "BOOL", R4, (1, 2), keep=True),
    reduce("REDUCE_ALL", "BOOL", (2, 5, 7), (0, 2), keep=False),
    reduce("REDUCE_ALL", "BOOL", R4, (1, 2), "bigq", keep=True),
    reduce("REDUCE_ALL", "FLOAT32", R4, (1, 2), keep=True),
)


def arg(
    opcode: str,
    dtype: str,
    variant: str = "plain",
    *,
    output: str = "INT32",
    axis_type: str = "INT32",
) -> Case:
    source: In | Const = big(dtype) if variant == "bigq" else In(S, dtype)
    axis = Const(np.asarray([3], NUMPY[axis_type]), axis_type)
    op = Op(opcode, [source, axis], [Out((1, 4, 4), output, None)], {"output_type": output})
    return case(f"{opcode}.{dtype}.{variant}", op)


ARG = (
    arg("ARG_MAX", "FLOAT32"),
    arg("ARG_MAX", "INT8"),
    arg("ARG_MAX", "UINT8"),
    arg("ARG_MAX", "FLOAT32", "int64_output", output="INT64"),
    arg("ARG_MAX", "FLOAT32", "int64_axis", axis_type="INT64"),
    arg("ARG_MAX", "FLOAT32", "bigq"),
    arg("ARG_MIN", "FLOAT32"),
    arg("ARG_MIN", "INT8"),
    arg("ARG_MIN", "INT32"),
)

# ---------------------------------------------------------------------------------------------
# Activations

_LOGISTIC_OUT = {"INT8": quantization(1 / 256, -128), "INT16": POWER_OF_TWO_OUT}
_TANH_OUT = {"INT8": quantization(1 / 128, 0), "INT16": POWER_OF_TWO_OUT}
_ALPHA = {"alpha": 0.2}

ACTIVATIONS = (
    *(
        unary("LOGISTIC", t, output_q=_LOGISTIC_OUT.get(t, "default"))
        for t in ("FLOAT32", "INT8", "INT16", "INT32")
    ),
    unary("LOGISTIC", "INT8", "bigq", output_q=_LOGISTIC_OUT["INT8"]),
    unary("LOGISTIC", "INT8", "output_zero_point", output_q=quantization(1 / 256, 0)),
    unary("LOGISTIC", "INT16", "output_scale", output_q=quantization(1 / 1000, 0)),
    *(
        unary("TANH", t, output_q=_TANH_OUT.get(t, "default"))
        for t in ("FLOAT32", "INT8", "INT16", "INT32")
    ),
    unary("TANH", "INT8", "bigq", output_q=_TANH_OUT["INT8"]),
    unary("TANH", "INT16", "output_scale", output_q=quantization(1 / 1000, 0)),
    *(unary("HARD_SWISH", t) for t in ("FLOAT32", "INT8", "INT16")),
    unary("HARD_SWISH", "INT8", "bigq"),
    unary("HARD_SWISH", "INT8", "output_scale", output_q=quantization(0.0001, 0)),
    *(unary("ELU", t) for t in ("FLOAT32", "INT8", "INT16")),
    unary("ELU", "INT8", "bigq"),
    unary("ELU", "INT8", "to_int16", output="INT16"),
    *(unary("LEAKY_RELU", t, options=_ALPHA) for t in ("FLOAT32", "INT16", "INT32")),
    unary("LEAKY_RELU", "INT16", "bigq", options=_ALPHA),
    unary("LEAKY_RELU", "FLOAT32", "no_options", options_type="NONE"),
    *(unary("RELU", t) for t in ("FLOAT32", "INT8", "INT16", "INT32")),
    unary("RELU", "INT8", "bigq"),
    unary("RELU", "INT16", "zero_point", input_q=quantization(1 / 32768, 4)),
    *(unary("RELU6", t) for t in ("FLOAT32", "INT8", "INT32")),
    unary("RELU6", "INT8", "bigq"),
    unary("RELU6", "INT8", "many_output_scales", output_q=many_scales(S)),
)

# ---------------------------------------------------------------------------------------------
# quantize.cc, dequantize.cc

_Q = {
    "INT8": quantization(0.1, 3),
    "INT16": quantization(0.001, 0),
    "INT32": quantization(0.5, 0),
    "UINT8": quantization(0.1, 128),
    "FLOAT32": None,
    "FLOAT16": None,
}


def quantize(source: str, target: str, variant: str = "", *, output_q: Any = "pair") -> Case:
    name = variant or f"to_{target.lower()}"
    q = _Q[target] if output_q == "pair" else output_q
    operand: In | Const = big(source) if variant == "bigq" else In(S, source, _Q[source])
    return case(f"QUANTIZE.{source}.{name}", Op("QUANTIZE", [operand], [Out(S, target, q)]))


def dequantize(source: str, variant: str = "", *, output: str = "FLOAT32") -> Case:
    name = variant or "plain"
    operand: In | Const
    if variant == "bigq":
        operand = big(source)
    elif variant == "constant":
        operand = Const(np.ones(S, NUMPY[source]), source)
    else:
        operand = In(S, source, _Q.get(source, quantization(0.1, 0)))
    op = Op("DEQUANTIZE", [operand], [Out(S, output, _Q.get(output))])
    return case(f"DEQUANTIZE.{source}.{name}", op)


CONVERSIONS = (
    quantize("FLOAT32", "INT8"),
    quantize("FLOAT32", "UINT8"),
    quantize("INT16", "INT8"),
    quantize("UINT8", "INT8"),
    quantize("INT32", "INT16"),
    quantize("INT8", "INT8", "bigq"),
    quantize("FLOAT32", "INT8", "per_channel_output", output_q=many_scales(S)),
    quantize("FLOAT32", "INT8", "unquantized_output", output_q=None),
    quantize("FLOAT32", "FLOAT32", "float_output", output_q=quantization(0.1, 0)),
    dequantize("INT8"),
    dequantize("INT16"),
    dequantize("UINT8"),
    dequantize("INT8", "bigq"),
    dequantize("FLOAT16", "constant"),
    dequantize("INT32"),
    dequantize("INT8", "int16_output", output="INT16"),
)

CASES = (
    *ELEMENTWISE,
    *ROUNDING,
    *ARITHMETIC,
    *ADD_N,
    *MAXIMUM_MINIMUM,
    *COMPARISONS,
    *LOGICAL,
    *SELECT,
    *ZEROS_LIKE,
    *FILL,
    *CAST,
    *REDUCTIONS,
    *ARG,
    *ACTIVATIONS,
    *CONVERSIONS,
)
