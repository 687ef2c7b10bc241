"""Activation kernels: RELU, RELU6, LOGISTIC, TANH, HARD_SWISH, ELU, LEAKY_RELU → their
setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): activations.cc, activations_common.cc,
logistic.cc, logistic_common.cc, tanh.cc, hard_swish.cc, hard_swish_common.cc, elu.cc,
leaky_relu.cc, leaky_relu_common.cc. Only LEAKY_RELU parses options. None keeps a lookup table
beyond ELU's: the reference LOGISTIC and TANH compute in fixed point. (L2_NORMALIZATION is in
normalization.py, with the nn family.)
"""

from __future__ import annotations

import math
from typing import Any

from arenalens.analysis.inplace import InPlace
from arenalens.builds.tflm import RELU_INT16
from arenalens.runtimes.tflm.abi import Field, Struct, struct
from arenalens.runtimes.tflm.access_order import same_index
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import (
    IN_PLACE_UNARY,
    UNARY,
    op_data,
    scale_of,
    zero_point_of,
)
from arenalens.runtimes.tflm.kernels.quantization import (
    CALIBRATE,
    QUANTIZE_EVERY_TENSOR,
    checked_log2,
    divide,
    f32,
    g,
    quantize_multiplier,
)
from arenalens.runtimes.tflm.kernels.refusals import (
    arity_refusals,
    dcheck_aborts,
    not_equal,
    not_true,
)

_RELU_OP_DATA = struct(
    "ReluOpData",  # { ReluParams params }: ActivationParams + offsets and multiplier
    ("activation_type", "uint8"),  # enum class FusedActivationFunctionType : uint8_t
    ("quantized_activation_min", "int32"),
    ("quantized_activation_max", "int32"),
    ("input_offset", "int32"),
    ("output_offset", "int32"),
    ("output_multiplier", "int32"),
    ("output_shift", "int"),
)
_RELU6_OP_DATA = struct("Relu6OpData", ("six", "int32"), ("zero", "int32"))
_LOGISTIC_OP_DATA = struct(
    "OpDataLogistic",  # tanh.cc's OpData has the same four fields
    ("input_zero_point", "int32"),
    ("input_range_radius", "int32"),
    ("input_multiplier", "int32"),
    ("input_left_shift", "int"),
)
_HARD_SWISH_PARAMS = struct(
    "HardSwishParams",
    ("input_zero_point", "int16"),
    ("output_zero_point", "int16"),
    ("reluish_multiplier_fixedpoint_int16", "int16"),
    ("reluish_multiplier_exponent", "int"),
    ("output_multiplier_fixedpoint_int16", "int16"),
    ("output_multiplier_exponent", "int"),
)
_ELU_OP_DATA = struct("OpData", Field("table", "int8", 256))  # the int8 lookup table
_LEAKY_RELU_OP_DATA = struct(
    "LeakyReluOpData",
    ("output_multiplier_alpha", "int32"),
    ("output_shift_alpha", "int32"),
    ("output_multiplier_identity", "int32"),
    ("output_shift_identity", "int32"),
    ("input_zero_point", "int32"),
    ("output_zero_point", "int32"),
)
_LEAKY_RELU_PARAMS = struct("TfLiteLeakyReluParams", ("alpha", "float"))
# int16 LOGISTIC and TANH compute in fixed point with power-of-two scales.
_INT16_FIX = (
    "convert with the int16x8 quantization, which gives this operator's output the fixed "
    "scale 1/32768 and zero point 0"
)


def _same_types(context: base.KernelContext, file: str) -> list[base.Event]:
    input_type, output_type = context.input_type(0), context.output_type(0)
    if input_type == output_type:
        return []
    return [not_equal(file, "input->type", "output->type", input_type, output_type)]


def _int16_zero_points(
    context: base.KernelContext, file: str, *, output: bool = True
) -> list[base.Event]:
    """`TF_LITE_ENSURE_EQ(input->params.zero_point, 0)` (and the output's)."""
    checked = [("input", context.input(0))] + ([("output", context.output(0))] if output else [])
    for name, tensor in checked:
        if zero_point_of(tensor) != 0:
            return [not_equal(file, f"{name}->params.zero_point", "0", zero_point_of(tensor), 0)]
    return []


def _output_scale_is_two_to_minus_15(context: base.KernelContext, file: str) -> list[base.Event]:
    """int16 LOGISTIC / TANH: CheckedLog2(output scale) must hold and round to -15."""
    power_of_two, rounded = checked_log2(scale_of(context.output(0)))
    fix = f"the int16 {context.opcode} output's scale must be 2^-15 (1/32768): {_INT16_FIX}"
    if not power_of_two:
        return [
            not_true(file, "CheckedLog2(output->params.scale, &output_scale_log2_rounded)", fix=fix)
        ]
    if rounded != -15:
        return [
            not_equal(
                file, "output_scale_log2_rounded", "-kOutputFractionalBits", rounded, -15, fix=fix
            )
        ]
    return []


def _int16_input_multiplier(
    context: base.KernelContext, file: str, shifts: tuple[int, ...]
) -> list[base.Event]:
    """int16 LOGISTIC / TANH: a power-of-two input scale with (15 - 3) + log2(scale) in `shifts`
    needs no multiplier; otherwise scale · 3 · 4096 is doubled until it exceeds 32767 / 2 (at
    most 31 times), and `TFLITE_DCHECK_LE(data->input_multiplier, 32767)` fails when it started
    above 32767 (an input scale above 32767 / 12288 = 2.67): an abort on builds with DCHECKs."""
    scale = scale_of(context.input(0))
    power_of_two, rounded = checked_log2(scale)
    if power_of_two and 12 + rounded in shifts:
        return []
    multiplier, shift = scale * 4096.0 * 3.0, 0
    while multiplier <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        multiplier *= 2.0
    if multiplier < 32768.0 or not context.build.dchecks:
        return []
    return [
        dcheck_aborts(
            file,
            "TFLITE_DCHECK_LE(data->input_multiplier, 32767)",
            f"the input multiplier, input scale {g(scale)} × 3 × 4096, is {g(multiplier)}",
            fix=(
                f"the int16 {context.opcode} input's scale must be at most 32767 / 12288 = 2.67 "
                f"(it is {g(scale)}): {CALIBRATE}"
            ),
        )
    ]


def _relu_eval(context: base.KernelContext) -> list[base.Event]:
    """RELU and RELU6 Eval accept float32, int8 and (from relu-int16 on) int16 inputs."""
    dtype = context.input_type(0)
    if dtype in ("FLOAT32", "INT8") or (dtype == "INT16" and context.build.has(RELU_INT16)):
        return []
    if not context.build.has(RELU_INT16):
        return [base.Refusal(f"Only float32 is supported currently, got {dtype}", base.INVOKE)]
    return [
        base.Refusal(f"Only float32/int8/int16 is supported currently, got {dtype}", base.INVOKE)
    ]


def _relu(context: base.KernelContext) -> base.Events:
    # ReluPrepare: input, output; int16 needs zero points 0. No type check before Eval.
    found = base.temps(context, ("in", 0), ("out", 0))
    if context.input_type(0) == "INT16" and context.build.has(RELU_INT16):
        found += _int16_zero_points(context, "activations_common.cc")
    return found + _relu_eval(context)


def _relu6(context: base.KernelContext) -> base.Events:
    # Relu6Prepare fetches the input only (the output is never fetched). Its range checks on
    # `six` cannot fail: FloatToQuantizedType clamps to the type's range.
    return base.temps(context, ("in", 0)) + _relu_eval(context)


def _logistic(context: base.KernelContext) -> base.Events:
    # CalculateArithmeticOpDataLogistic: input, output.
    file = "logistic_common.cc"
    found = base.temps(context, ("in", 0), ("out", 0))
    refusals = _same_types(context, file)
    dtype = context.input_type(0)
    if refusals:
        pass
    elif dtype == "INT8" and zero_point_of(context.output(0)) != -128:
        refusals = [
            not_equal(
                file,
                "output->params.zero_point",
                "std::numeric_limits<int8_t>::min()",
                zero_point_of(context.output(0)),
                -128,
            )
        ]
    elif dtype == "INT16":
        refusals = (
            _int16_zero_points(context, file)
            or _int16_input_multiplier(context, file, (0,))
            or _output_scale_is_two_to_minus_15(context, file)
        )
    elif dtype not in ("FLOAT32", "INT8"):
        refusals = [base.Refusal(f"Input {dtype}, output {dtype} not supported.", base.INVOKE)]
    return found + refusals


def _tanh(context: base.KernelContext) -> base.Events:
    # TanhPrepare fetches the input, then CalculateArithmeticOpData fetches input and output
    # again: three temp copies, the input twice.
    file = "tanh.cc"
    found = base.temps(context, ("in", 0))
    found += arity_refusals(context, file, 1, 1)
    found += base.temps(context, ("in", 0), ("out", 0))
    refusals = _same_types(context, file)
    dtype = context.input_type(0)
    if not refusals and dtype == "INT16":
        refusals = (
            _int16_zero_points(context, file)
            or _int16_input_multiplier(context, file, (0, 1))
            or _output_scale_is_two_to_minus_15(context, file)
        )
    if not refusals and dtype not in ("FLOAT32", "INT8", "INT16"):
        refusals = [base.Refusal(f"Input {dtype}, output {dtype} not supported.", base.INVOKE)]
    return found + refusals


def _hard_swish(context: base.KernelContext) -> base.Events:
    # HardSwishPrepare: input, output; no type check. int8 needs an output multiplier below one.
    file = "hard_swish_common.cc"
    found = arity_refusals(context, file, 1, 1) + base.temps(context, ("in", 0), ("out", 0))
    dtype = context.input_type(0)
    if dtype == "INT8":
        found += _hard_swish_multipliers(context, file)
    if dtype not in ("FLOAT32", "INT8"):
        found.append(base.Refusal(f"Unsupported type {dtype}", base.INVOKE))
    return found


def _hard_swish_multipliers(context: base.KernelContext, file: str) -> list[base.Event]:
    """HardSwishPrepare, int8: the output multiplier (input scale / 128) / output scale in
    float32, through QuantizeMultiplier and DownScaleInt32ToInt16Multiplier
    (`TFLITE_DCHECK_GE(multiplier, 0)`), then `TF_LITE_ENSURE(exponent <= 0)`: the output scale
    must be at least input scale / 128. A zero output scale makes the multiplier infinite, which
    the wheel turns into 0 and a Cortex-M build into a negative significand (measured: the probes
    halt, case HARD_SWISH.INT8.output_unquantized)."""
    input_scale, output_scale = scale_of(context.input(0)), scale_of(context.output(0))
    hires = f32(f32(1.0 / 128.0) * input_scale)
    real = f32(divide(hires, output_scale))
    if not math.isfinite(real) and not context.build.is_host and context.build.dchecks:
        return [
            dcheck_aborts(
                "tensorflow/lite/kernels/internal/common.h",
                "TFLITE_DCHECK_GE(multiplier_int32_t, 0)",
                f"the output multiplier (input scale / 128) / output scale is {g(real)}, which "
                "Arm's double-to-int64 conversion makes negative",
                fix=QUANTIZE_EVERY_TENSOR,
            )
        ]
    if quantize_multiplier(real).shift <= 0:
        return []
    return [
        not_true(
            file,
            "params->output_multiplier_exponent <= 0",
            fix=(
                f"the HARD_SWISH output's scale must be at least its input's / 128 = "
                f"{g(hires)} (it is {g(output_scale)}): {CALIBRATE}"
            ),
        )
    ]


def _elu(context: base.KernelContext) -> base.Events:
    # EluInit allocates the int8 lookup table for every type; int8 fills it in Prepare.
    file = "elu.cc"
    found = arity_refusals(context, file, 1, 1) + base.temps(context, ("in", 0), ("out", 0))
    refusals = _same_types(context, file)
    dtype = context.input_type(0)
    if not refusals and dtype not in ("FLOAT32", "INT8"):
        refusals = [
            base.Refusal(f"ELU only supports float32 and int8 currently, got {dtype}.", base.INVOKE)
        ]
    return found + refusals


def _leaky_relu(context: base.KernelContext) -> base.Events:
    # CalculateOpDataLeakyRelu: input, output.
    file = "leaky_relu_common.cc"
    found = arity_refusals(context, file, 1, 1) + base.temps(context, ("in", 0), ("out", 0))
    refusals = _same_types(context, file)
    dtype = context.input_type(0)
    if not refusals and dtype not in ("FLOAT32", "INT8", "INT16"):
        refusals = [
            base.Refusal(
                f"Only float32, int8 are supported by LEAKY_RELU, got {dtype}.", base.INVOKE
            )
        ]
    return found + refusals


def _unary_activation(
    opcode: str,
    source: str,
    op_data_struct: Struct,
    prepare: base.RuleFunction,
    traced_in: str,
    *,
    params: Struct | None = None,
    what: str = "OpData",
    inplace: InPlace | None = IN_PLACE_UNARY,
    **facts: Any,
) -> base.KernelRule:
    """An activation kernel: Init allocates its OpData (`op_data_struct`, named `what`), one
    input and one output, output[i] = f(input[i]) (its loop in `traced_in`), so by default the
    output may lie on an input only it reads."""
    return base.KernelRule(
        opcode,
        source,
        params,
        op_data(op_data_struct, what),
        prepare,
        access=same_index(traced_in),
        operands=UNARY,
        inplace=inplace,
        **facts,
    )


_ACTIVATIONS = "activations.cc, activations_common.cc"

RULES = (
    _unary_activation(
        "HARD_SWISH",
        "hard_swish.cc, hard_swish_common.cc",
        _HARD_SWISH_PARAMS,
        _hard_swish,
        "hard_swish.cc, reference/hard_swish.h",
    ),
    _unary_activation(
        "ELU",
        "elu.cc",
        _ELU_OP_DATA,
        _elu,
        "elu.cc",
        what="OpData (int8 lookup table)",
        inplace=None,
    ),
    _unary_activation(
        "LEAKY_RELU",
        "leaky_relu.cc, leaky_relu_common.cc",
        _LEAKY_RELU_OP_DATA,
        _leaky_relu,
        "leaky_relu.cc, reference/leaky_relu.h",
        params=_LEAKY_RELU_PARAMS,
    ),
    _unary_activation(
        "LOGISTIC",
        "logistic.cc, logistic_common.cc",
        _LOGISTIC_OP_DATA,
        _logistic,
        "logistic.cc, reference/logistic.h, integer_ops/logistic.h",
    ),
    _unary_activation(
        "RELU",
        _ACTIVATIONS,
        _RELU_OP_DATA,
        _relu,
        "activations_common.cc",
        as_fused_activation=1,  # ActivationFunctionType.RELU
    ),
    _unary_activation(
        "RELU6",
        _ACTIVATIONS,
        _RELU6_OP_DATA,
        _relu6,
        "activations_common.cc",
        as_fused_activation=3,  # ActivationFunctionType.RELU6
    ),
    _unary_activation(
        "TANH",
        "tanh.cc",
        _LOGISTIC_OP_DATA,
        _tanh,
        "tanh.cc, reference/tanh.h, integer_ops/tanh.h",
    ),
)
