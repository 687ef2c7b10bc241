"""Arithmetic kernels: ADD, SUB, MUL, DIV, ADD_N, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE →
their setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): add.cc, add_common.cc, sub.cc,
sub_common.cc, mul.cc, mul_common.cc, div.cc, add_n.cc, floor_div.cc, floor_mod.cc,
squared_difference.cc; options parsed by flatbuffer_conversions.cc (ParseAdd, ParseSub, ParseMul,
ParseDiv). Broadcasting only sets a flag in OpData: the same allocations either way.

The int8 and int16 paths of ADD, SUB, ADD_N and SQUARED_DIFFERENCE rescale their inputs to a
common scale and back with QuantizeMultiplierSmallerThanOneExp, whose TFLITE_CHECKs *abort* the
process (no message, no clean failure) unless every multiplier lies in (0, 1): a tensor without
quantization (scale 0), or an output scale too small for the inputs' (below 2·max(input scale) /
2^left_shift), aborts setup. ADD, SUB, MUL and DIV then quantize their fused activation's bounds
with the output scale (`quantization.activation_range`). The arithmetic follows each source: ADD
computes its multipliers in double, SUB in float.
"""

from __future__ import annotations

from typing import Any

from arenalens.builds.tflm import ADD_SUB_QUANTIZATION_CHECK, SUB_INT32
from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import Struct, struct
from arenalens.runtimes.tflm.access_order import broadcast
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.base import operands
from arenalens.runtimes.tflm.kernels.common import (
    ARITHMETIC_PARAMS,
    BINARY,
    IN_PLACE_BINARY,
    is_quantized,
    op_data,
    scale_of,
    setup_refused,
    shape,
    zero_point_of,
)
from arenalens.runtimes.tflm.kernels.quantization import (
    QUANTIZE_EVERY_TENSOR,
    activation_range,
    divide,
    f32,
    g,
    multiplier_check,
    rescaled_sum,
    smaller_than_one,
)
from arenalens.runtimes.tflm.kernels.refusals import (
    TFLITE_TYPES,
    aborts,
    arity_refusals,
    not_equal,
    not_true,
    numbered,
)

# builtin_op_data.h: TfLiteFusedActivation is a plain enum (one byte with short enums).
_ADD_PARAMS = struct("TfLiteAddParams", ("activation", "enum"), ("pot_scale_int16", "bool"))
_SUB_PARAMS = struct("TfLiteSubParams", ("activation", "enum"), ("pot_scale_int16", "bool"))
_MUL_PARAMS = struct("TfLiteMulParams", ("activation", "enum"))
_DIV_PARAMS = struct("TfLiteDivParams", ("activation", "enum"))

_SUB_FIELDS = (
    ("requires_broadcast", "bool"),
    ("input1_shift", "int"),
    ("input2_shift", "int"),
    ("output_activation_min", "int32"),
    ("output_activation_max", "int32"),
    ("input1_multiplier", "int32"),
    ("input2_multiplier", "int32"),
    ("output_multiplier", "int32"),
    ("output_shift", "int"),
    ("left_shift", "int"),
    ("input1_offset", "int32"),
    ("input2_offset", "int32"),
    ("output_offset", "int32"),
)
_SUB_OP_DATA = struct("OpDataSub", *_SUB_FIELDS)
_ADD_OP_DATA = struct(
    "OpDataAdd",
    *_SUB_FIELDS,
    ("output_activation_min_f32", "float"),
    ("output_activation_max_f32", "float"),
)
_MUL_OP_DATA = struct(
    "OpDataMul",
    ("input1_zero_point", "int32"),
    ("input2_zero_point", "int32"),
    ("output_activation_min", "int32"),
    ("output_activation_max", "int32"),
    ("output_zero_point", "int32"),
    ("output_multiplier", "int32"),
    ("output_shift", "int"),
    ("output_activation_min_f32", "float"),
    ("output_activation_max_f32", "float"),
)
_DIV_OP_DATA = struct(
    "OpDataDiv",
    ("input1_zero_point", "int32"),
    ("input2_zero_point", "int32"),
    ("output_zero_point", "int32"),
    ("output_activation_min", "int32"),
    ("output_activation_max", "int32"),
    ("output_multiplier", "int32"),
    ("output_shift", "int"),
)
_ADD_N_OP_DATA = struct(
    "OpData",
    ("output_activation_min", "int32"),
    ("output_activation_max", "int32"),
    ("input_offset", "int32"),
    ("output_offset", "int32"),
    ("input_multiplier", "int32"),
    ("output_multiplier", "int32"),
    ("input_shift", "int"),
    ("output_shift", "int"),
    ("left_shift", "int"),
    ("scratch_index", "int"),
)
_SQUARED_DIFFERENCE_OP_DATA = struct(
    "OpData", ("requires_broadcast", "bool"), ("arithmetic_params", ARITHMETIC_PARAMS)
)


def _binary_temps(context: base.KernelContext) -> list[base.Event]:
    return base.temps(context, ("in", 0), ("in", 1), ("out", 0))


def _named_operands(context: base.KernelContext) -> tuple[tuple[str, Tensor | None], ...]:
    """input1, input2, output: as the kernels name them in their checks."""
    return (
        ("input1", context.input(0)),
        ("input2", context.input(1)),
        ("output", context.output(0)),
    )


def _types_differ(context: base.KernelContext, file: str) -> base.Refusal | None:
    """`TF_LITE_ENSURE_TYPES_EQ` of input1 and input2, then of input1 and the output: the first
    that fails."""
    first, second, output_type = (
        context.input_type(0),
        context.input_type(1),
        context.output_type(0),
    )
    if first != second:
        return not_equal(file, "input1->type", "input2->type", first, second)
    if first != output_type:
        return not_equal(file, "input1->type", "output->type", first, output_type)
    return None


def _abort(what: str, file: str) -> base.Refusal:
    """The probes' TFLITE_CHECK_NE(output->quantization.type, kTfLiteNoQuantization)."""
    return aborts(file, "TFLITE_CHECK_NE(output->quantization.type, kTfLiteNoQuantization)", what)


def _binary_rescaling(
    context: base.KernelContext, left_shift: int, *, in_float: bool = False
) -> list[base.Event]:
    """ADD / SUB: both inputs' and the output's scales through `_rescaling`, then the fused
    activation's bounds through CalculateActivationRangeQuantized."""
    return _rescaled(
        context,
        left_shift,
        (context.input(0), context.input(1), context.output(0)),
        in_float=in_float,
    )


def _rescaled(
    context: base.KernelContext,
    left_shift: int,
    tensors: tuple[Tensor | None, Tensor | None, Tensor | None],
    *,
    in_float: bool = False,
) -> list[base.Event]:
    """`_binary_rescaling` of input1, input2 and the output already fetched (`tensors`)."""
    first, second, output = tensors
    refused = rescaled_sum(
        left_shift, (scale_of(first), scale_of(second), scale_of(output)), in_float=in_float
    )
    if refused:
        return [refused]
    refused = activation_range(context.build, context.option("fused_activation_function"), output)
    return [refused] if refused else []


def _activation(context: base.KernelContext) -> list[base.Event]:
    refused = activation_range(
        context.build, context.option("fused_activation_function"), context.output(0)
    )
    return [refused] if refused else []


def _mul_multiplier(context: base.KernelContext) -> list[base.Event]:
    """CalculateOpDataMul's QuantizeMultiplier(input1 scale · input2 scale / output scale), in
    double (`multiplier_check`)."""
    first, second, output = context.input(0), context.input(1), context.output(0)
    real = divide(scale_of(first) * scale_of(second), scale_of(output))
    refused = multiplier_check(context.build, real, "input1 scale × input2 scale / output scale")
    return [refused] if refused else []


def _div_multiplier(context: base.KernelContext) -> list[base.Event]:
    """div.cc CalculateOpData's QuantizeMultiplier(input1 scale / (input2 scale · output scale)),
    in float32 (`multiplier_check`)."""
    first, second, output = context.input(0), context.input(1), context.output(0)
    real = divide(scale_of(first), f32(scale_of(second) * scale_of(output)))
    refused = multiplier_check(context.build, f32(real), "input1 scale / (input2 × output scale)")
    return [refused] if refused else []


def _add(context: base.KernelContext) -> base.Events:
    # AddPrepare: input1, input2, output; CalculateOpDataAdd fills OpData only.
    return add_prepare(context, (context.input(0), context.input(1), context.output(0)))


def add_prepare(
    context: base.KernelContext, tensors: tuple[Tensor | None, Tensor | None, Tensor | None]
) -> base.Events:
    """AddPrepare's events with input1, input2 and the output already fetched (`tensors`: each
    None where the operator omits it), as CMSIS-NN's PrepareAdd calls it after its own checks."""
    file = "add_common.cc"
    found = base.temp_tensors(*tensors)  # `_binary_temps`
    output = tensors[2]
    output_type = "" if output is None else output.dtype.name
    if output_type in ("INT8", "INT16"):
        if not is_quantized(output):
            # TFLM checks this cleanly from add-sub-quantization-check (2026-10) on; before,
            # TFLITE_CHECK_NE(output->quantization.type, kTfLiteNoQuantization): an abort.
            found.append(
                not_true(file, "output->quantization.type != kTfLiteNoQuantization")
                if context.build.has(ADD_SUB_QUANTIZATION_CHECK)
                else _abort(f"{output_type} output without quantization", file)
            )
        else:
            found += _rescaled(context, 15 if output_type == "INT16" else 20, tensors)
    elif output_type == "INT32":
        found += _int32_unquantized(context, file, ("input1", "input2"))
    if output_type not in ("FLOAT32", "INT32", "INT8", "INT16"):
        found.append(base.Refusal(f"Type {numbered(output_type)} not supported.", base.INVOKE))
    return found


def _int32_unquantized(
    context: base.KernelContext, file: str, names: tuple[str, ...]
) -> list[base.Event]:
    """int32 outputs: `TF_LITE_ENSURE_EQ(x->quantization.type, kTfLiteNoQuantization)`."""
    tensors = {"input1": context.input(0), "input2": context.input(1), "output": context.output(0)}
    for name in names:
        if is_quantized(tensors[name]):
            return [not_equal(file, f"{name}->quantization.type", "kTfLiteNoQuantization", 1, 0)]
    return []


def _sub(context: base.KernelContext) -> base.Events:
    # SubPrepare: input1, input2, output; CalculateOpDataSub fills OpData only.
    file = "sub_common.cc"
    found = _binary_temps(context)
    output_type = context.output_type(0)
    if output_type in ("INT8", "INT16"):
        left_shift = 15 if output_type == "INT16" else 20
        found += _binary_rescaling(context, left_shift, in_float=True)
    elif output_type == "INT32" and not context.build.has(SUB_INT32):
        found.append(base.Refusal(f"Type {numbered(output_type)} not supported.", base.INVOKE))
    elif output_type == "INT32":
        found += _int32_unquantized(context, file, ("input1", "input2", "output"))
    if output_type not in ("FLOAT32", "INT32", "INT8", "INT16"):
        found.append(base.Refusal(f"Type {numbered(output_type)} not supported.", base.INVOKE))
    return found


def _mul(context: base.KernelContext) -> base.Events:
    # CalculateOpDataMul fetches input1, input2, output before its arity checks.
    file = "mul_common.cc"
    found = _binary_temps(context) + arity_refusals(context, file, 2, 1)
    first, second = context.input_type(0), context.input_type(1)
    if first != second:
        found.append(not_equal(file, "input1->type", "input2->type", first, second))
    elif context.output_type(0) in ("INT8", "INT16") and (
        refused := _activation(context) or _mul_multiplier(context)
    ):
        # CalculateOpDataMul: the activation range, then QuantizeMultiplier.
        found += refused
    elif context.output_type(0) in ("INT8", "INT16") and first == "INT16":
        for name, tensor in _named_operands(context):
            if zero_point_of(tensor) != 0:
                found.append(
                    not_equal(file, f"data->{name}_zero_point", "0", zero_point_of(tensor), 0)
                )
                break
    if first not in ("INT8", "INT16", "INT32", "FLOAT32"):
        found.append(base.Refusal(f"Type {numbered(first)} not supported.", base.INVOKE))
    return found


def _div(context: base.KernelContext) -> base.Events:
    # DivPrepare: input1, input2, output; OpData is written for int8 outputs only.
    file = "div.cc"
    found = _binary_temps(context)
    output_type = context.output_type(0)
    refused = _types_differ(context, file)
    if refused is not None:
        found.append(refused)
    elif output_type == "INT8":
        # The activation range, then QuantizeMultiplier.
        found += _activation(context) or _div_multiplier(context)
    elif output_type == "INT32":
        found += _int32_unquantized(context, file, ("input1", "input2"))
    if output_type not in ("FLOAT32", "INT32", "INT8"):
        found.append(
            base.Refusal(
                "DIV only supports FLOAT32, INT32, quantized INT8 now, got type "
                f"{numbered(output_type)}.",
                base.INVOKE,
            )
        )
    return found


def _floor_div_mod(file: str, name: str) -> base.RuleFunction:
    """FloorDiv / FloorMod: Init returns nullptr; Prepare fetches both inputs and the output."""

    def prepare(context: base.KernelContext) -> base.Events:
        found = arity_refusals(context, file, 2, 1) + _binary_temps(context)
        first = context.input_type(0)
        refused = _types_differ(context, file)
        if refused is not None:
            found.append(refused)
        elif first != "FLOAT32":
            found.append(base.Refusal(f"Type '{first}' is not supported by {name}.", base.INVOKE))
        return found

    return prepare


def _squared_difference(context: base.KernelContext) -> base.Events:
    # SquaredDifferencePrepare writes OpData first, then fetches input1, input2, output.
    file = "squared_difference.cc"
    found = arity_refusals(context, file, 2, 1) + _binary_temps(context)
    first, second = context.input_type(0), context.input_type(1)
    if first != second:
        found.append(not_equal(file, "input1->type", "input2->type", first, second))
    elif first == "INT8":
        for name, tensor in _named_operands(context):
            if not -128 <= zero_point_of(tensor) <= 127:
                found.append(
                    not_true(file, f"{name}_quantization_params.zero_point >= integer_type_min")
                )
                break
    elif first == "INT16":
        for name, tensor in _named_operands(context):
            if zero_point_of(tensor) != 0:
                found.append(not_true(file, f"{name}_quantization_params.zero_point == 0"))
                break
    if first in ("INT8", "INT16") and not setup_refused(found):
        found += _squared_difference_multipliers(context)
    output_type = context.output_type(0)
    if output_type not in ("FLOAT32", "INT32", "INT8", "INT16"):
        found.append(
            base.Refusal(
                "SquaredDifference only supports FLOAT32, INT32 , INT16 and INT8 now, got "
                f"{TFLITE_TYPES.get(output_type, '?')}.",
                base.INVOKE,
            )
        )
    return found


def _squared_difference_multipliers(context: base.KernelContext) -> list[base.Event]:
    """PrepareQuantized: each input multiplier s_i / (2·max s) through
    QuantizeMultiplierSmallerThanOneExp (the output's through QuantizeMultiplier, which cannot
    fail)."""
    first, second = scale_of(context.input(0)), scale_of(context.input(1))
    twice = 2.0 * max(first, second)
    for name, scale in (("input 1", first), ("input 2", second)):
        refused = smaller_than_one(
            divide(scale, twice),
            f"the {name} multiplier, its scale {g(scale)} / (2 × {g(max(first, second))}),",
            QUANTIZE_EVERY_TENSOR,
        )
        if refused:
            return [refused]
    return []


def _add_n(context: base.KernelContext) -> base.Events:
    # CalculateOpData: input 0, output, then inputs 1..n-1 (each a new temp copy, all fetched);
    # float32 requests a scratch array of n data pointers and keeps its index in user_data (no
    # Init, no OpData); int8 allocates its OpData here, in Prepare, then the same scratch.
    file = "add_n.cc"
    count = len(context.operator.inputs)
    found: list[base.Event] = []
    if count < 2:
        found.append(not_true(file, "num_inputs >= 2"))
    found += base.temps(context, ("in", 0), ("out", 0))
    found += base.temps(context, *(("in", position) for position in range(1, count)))
    first = context.input(0)
    output_type = context.output_type(0)
    if output_type != context.input_type(0):
        found.append(
            not_equal(
                file,
                "output->type",
                "input_tensor_first->type",
                output_type,
                context.input_type(0),
            )
        )
    for position in range(1, count):
        other = context.input(position)
        problem = _add_n_mismatch(file, first, other)
        if problem:
            found.append(problem)
            break
    pointers = context.build.pointer_bytes * count
    if output_type == "FLOAT32":
        found.append(base.Scratch(pointers, "add_n input pointers"))
    elif output_type == "INT8":
        found.append(base.Persistent(context.sizeof(_ADD_N_OP_DATA), "OpData"))
        found.append(base.Scratch(pointers, "add_n input pointers"))
        # The input multiplier is 1/2 (NaN without quantization), the output one
        # 2·s_in / (2^20 · s_out); the activation is kTfLiteActNone.
        scales = (scale_of(first), scale_of(context.output(0)))
        refused = rescaled_sum(20, scales)
        found += [refused] if refused else []
    else:
        found.append(base.Refusal(f"ADD_N only supports FLOAT32 and INT8, got {output_type}."))
    return found


def _add_n_mismatch(file: str, first: Tensor | None, other: Tensor | None) -> base.Refusal | None:
    if first is None or other is None:
        return None
    if shape(first) != shape(other):
        return not_true(file, "HaveSameShapes(input_tensor_first, input)")
    if first.dtype.name != other.dtype.name:
        return not_equal(
            file, "input_tensor_first->type", "input->type", first.dtype.name, other.dtype.name
        )
    if first.dtype.name == "INT8":
        if zero_point_of(first) != zero_point_of(other):
            return not_true(
                file, "input_tensor_first->params.zero_point == input->params.zero_point"
            )
        if scale_of(first) != scale_of(other):
            return not_true(file, "input_tensor_first->params.scale == input->params.scale")
    return None


def _binary(
    opcode: str,
    source: str,
    params: Struct | None,
    init: base.RuleFunction,
    prepare: base.RuleFunction,
    *,
    traced_in: str,
    **facts: Any,
) -> base.KernelRule:
    """A binary arithmetic kernel: two inputs broadcast against each other into one output, its
    loop in `traced_in`."""
    return base.KernelRule(
        opcode, source, params, init, prepare, access=broadcast(traced_in), operands=BINARY, **facts
    )


def _fused_binary(
    opcode: str,
    source: str,
    params: Struct,
    init: base.RuleFunction,
    prepare: base.RuleFunction,
    *,
    traced_in: str,
) -> base.KernelRule:
    """ADD, SUB, MUL: their options carry a fused activation that Prepare turns into an output
    range (CalculateActivationRange*), and without broadcast Eval writes output[i] right after
    it reads element i of each input, so the output may lie on an input only it reads."""
    return _binary(
        opcode,
        source,
        params,
        init,
        prepare,
        traced_in=traced_in,
        inplace=IN_PLACE_BINARY,
        applies_fused_activation=True,
    )


RULES = (
    _fused_binary(
        "ADD",
        "add.cc, add_common.cc",
        _ADD_PARAMS,
        op_data(_ADD_OP_DATA),
        _add,
        traced_in="add.cc, reference/add.h, integer_ops/add.h",
    ),
    _fused_binary(
        "SUB",
        "sub.cc, sub_common.cc",
        _SUB_PARAMS,
        op_data(_SUB_OP_DATA),
        _sub,
        traced_in="sub.cc, reference/sub.h",
    ),
    _fused_binary(
        "MUL",
        "mul.cc, mul_common.cc",
        _MUL_PARAMS,
        op_data(_MUL_OP_DATA),
        _mul,
        traced_in="mul_common.cc, reference/mul.h, integer_ops/mul.h",
    ),
    _binary(
        "DIV",
        "div.cc",
        _DIV_PARAMS,
        op_data(_DIV_OP_DATA),
        _div,
        traced_in="div.cc, reference/div.h",
    ),
    base.stateless(
        "ADD_N",
        "add_n.cc",
        _add_n,
        base.NoOverlap("not analysed"),
        operands("input+"),
        resolver="AddAddN",
    ),
    *(
        _binary(
            opcode,
            file,
            None,
            base.no_events,
            _floor_div_mod(file, opcode),
            traced_in=f"{file}, reference/binary_function.h",
        )
        for opcode, file in (("FLOOR_DIV", "floor_div.cc"), ("FLOOR_MOD", "floor_mod.cc"))
    ),
    _binary(
        "SQUARED_DIFFERENCE",
        "squared_difference.cc",
        None,
        op_data(_SQUARED_DIFFERENCE_OP_DATA),
        _squared_difference,
        traced_in="squared_difference.cc",
    ),
)
