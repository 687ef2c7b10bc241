"""TFLM's quantization helpers as a kernel's Prepare runs them: tensor scales → fixed-point
multipliers and activation ranges, with every check they make → the `Refusal` a failed one is.

Sources (tflite-micro): tensorflow/lite/kernels/internal/quantization_util.cc
(`QuantizeMultiplier`, `QuantizeMultiplierSmallerThanOneExp`, `QuantizeMultiplierGreaterThanOne`,
`PreprocessSoftmaxScaling`, `CheckedLog2`), tensorflow/lite/kernels/kernel_util.cc
(`PopulateConvolutionQuantizationParams`, `GetQuantizedConvolutionMultipler`,
`CalculateActivationRangeQuantized`), compatibility.h and op_macros.h (`TFLITE_CHECK`,
`TFLITE_DCHECK`).

The arithmetic is the C++'s, step by step: `float` operations are rounded to float32 (a float32
product or quotient computed in double and rounded once is the correctly rounded float32 result),
`double` ones stay doubles, `TfLiteRound` rounds half away from zero. A failed `TF_LITE_ENSURE`
makes setup fail with its message; a failed `TFLITE_CHECK` calls abort() (the wheel's process
dies with SIGABRT; a Cortex-M build prints "HALTED" and spins), so setup never completes either.
A failed `TFLITE_DCHECK` aborts only where DCHECKs are compiled in (`Build.dchecks`: TFLM's
Makefile default build type, which device builds use); the wheel is built with NDEBUG and goes on.

A multiplier from a division by a zero scale (an integer tensor without quantization) is infinite
or NaN: plain `QuantizeMultiplier` lets it through where the int64 conversion of a non-finite
double gives INT64_MIN (the wheel on x86-64, Arm; the kernel then computes garbage, but sets up)
and aborts where it saturates (the ESP toolchains, `Abi.saturating_conversions`:
`multiplier_check`); `QuantizeMultiplierSmallerThanOneExp` and `QuantizeMultiplierGreaterThanOne`
abort on it everywhere, as on any multiplier out of their range.

Every refusal carries a `fix`: what to change when converting the model so that the check holds.
"""

from __future__ import annotations

import math
import struct

from arenalens.builds.build import Build
from arenalens.builds.tflm import TFLM_CORTEX_M_PROBES
from arenalens.ir import Tensor
from arenalens.records import record
from arenalens.runtimes.tflm.kernels.base import Refusal
from arenalens.runtimes.tflm.kernels.common import (
    scale_of,
    zero_point_of,
)
from arenalens.runtimes.tflm.kernels.refusals import aborts, dcheck_aborts, not_equal, not_true

QUANTIZATION_UTIL = "tensorflow/lite/kernels/internal/quantization_util.cc"
KERNEL_UTIL = "tensorflow/lite/kernels/kernel_util.cc"
MICRO_KERNEL_UTIL = "tensorflow/lite/micro/kernels/kernel_util.cc"

# TfLiteFusedActivation (builtin_op_data.h), as ParseOpData copies the schema's enum.
ACTIVATION_NONE = 0
ACTIVATION_RELU = 1
ACTIVATION_RELU_N1_TO_1 = 2
ACTIVATION_RELU6 = 3
# The float bounds CalculateActivationRangeQuantizedImpl quantizes for each fused activation.
_ACTIVATION_BOUNDS = {
    ACTIVATION_RELU: (0.0,),
    ACTIVATION_RELU6: (0.0, 6.0),
    ACTIVATION_RELU_N1_TO_1: (-1.0, 1.0),
}
_ACTIVATION_NAMES = {
    ACTIVATION_RELU: "RELU",
    ACTIVATION_RELU6: "RELU6",
    ACTIVATION_RELU_N1_TO_1: "RELU_N1_TO_1",
}
_INT32_LIMIT = 2.0**31  # static_cast<float>(INT32_MAX) and -static_cast<float>(INT32_MIN)
_INFINITY = math.inf
# Each fused activation's scale above which no bound can overflow (`overflowing_activation_bound`).
_SAFE_SCALE = {
    activation: max(max(abs(bound) for bound in bounds) / 2.0**30, 2.0**-126)
    for activation, bounds in _ACTIVATION_BOUNDS.items()
}

# What to change in the conversion, by cause.
CALIBRATE = (
    "re-convert with a representative dataset of real inputs that exercises this layer: a "
    "tensor calibrated to an almost empty range (an uncalibrated or folded BatchNorm, a "
    "dataset of zeros) gets a scale this extreme"
)
QUANTIZE_EVERY_TENSOR = (
    "convert with full-integer quantization (a representative dataset), so that every int8 and "
    "int16 tensor gets a scale and a zero point"
)


def kernel_util(build: Build) -> str:
    """The file that holds PopulateConvolutionQuantizationParams, GetQuantizedConvolutionMultipler
    and CalculateActivationRangeQuantized in the build's TFLM sources, as its messages name it:
    tensorflow/lite/kernels/ up to the probes' commit; the wheel's later sources moved them into
    micro's own kernel_util.cc (measured: its messages say so; the commit that moved them, past
    the probes', is not in builds/tflm.py's history)."""
    return MICRO_KERNEL_UTIL if build.tflm.time > TFLM_CORTEX_M_PROBES.time else KERNEL_UTIL


_FLOAT32 = struct.Struct("<f")
_pack_float32, _unpack_float32 = _FLOAT32.pack, _FLOAT32.unpack


def f32(value: float) -> float:
    """A double rounded to float32, as a C++ `float` holds it (±inf beyond its range)."""
    try:
        return float(_unpack_float32(_pack_float32(value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def tflite_round(value: float) -> float:
    """TfLiteRound (std::round): half away from zero; inf and NaN stay as they are."""
    if not math.isfinite(value):
        return value
    return math.copysign(math.floor(abs(value) + 0.5), value)


def divide(numerator: float, denominator: float) -> float:
    """numerator / denominator with IEEE semantics: ±inf for a nonzero over zero, NaN for 0/0."""
    if denominator != 0.0:
        return numerator / denominator
    if numerator == 0.0 or math.isnan(numerator):
        return math.nan
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


def g(value: float) -> str:
    """A scale or multiplier in messages: six significant digits."""
    return f"{value:.6g}"


# The smallest multiplier QuantizeMultiplier rounds up to 1 (`smaller_than_one_holds`).
_ROUNDS_TO_ONE = 1.0 - 2.0**-32


@record(slots=True)
class Multiplier:
    """QuantizeMultiplier's result: the int32 significand and the shift (a power of two)."""

    significand: int
    shift: int


def quantize_multiplier(real: float) -> Multiplier:
    """QuantizeMultiplier(double): frexp, round to 31 bits, renormalise a rounded-up 2^31, flush
    shifts below -31 to zero. Its TFLITE_CHECKs never fail for a finite multiplier; for an
    infinite or NaN one (a division by a zero scale) they pass on x86-64 and on Arm (measured: a
    MUL with an unquantized int8 output sets up on the wheel and on the Cortex-M3, M7 and M55
    probes; cases MUL.INT8.*_unquantized) and fail on the ESP toolchains (`multiplier_check`).
    Such a multiplier comes out as 0 here; the kernel computes garbage with it."""
    if real == 0.0 or not math.isfinite(real):
        return Multiplier(0, 0)
    fraction, shift = math.frexp(real)
    fixed = int(tflite_round(fraction * 2.0**31))
    if fixed == 1 << 31:
        fixed //= 2
        shift += 1
    if shift < -31:
        return Multiplier(0, 0)
    return Multiplier(fixed, shift)


def multiplier_check(build: Build, real: float, what: str) -> Refusal | None:
    """QuantizeMultiplier's `TFLITE_CHECK(q_fixed <= (1LL << 31))` on a non-finite multiplier:
    frexp keeps ±inf and NaN, and their conversion to int64 is the target's. Where it saturates
    (`Abi.saturating_conversions`: +inf and NaN → INT64_MAX) the check aborts; -inf (INT64_MIN)
    and every other target pass it."""
    if math.isfinite(real) or real < 0.0 or not build.abi.saturating_conversions:
        return None
    return aborts(
        QUANTIZATION_UTIL,
        "TFLITE_CHECK(q_fixed <= (1LL << 31))",
        f"{what} is {g(real)}, which {build.abi.title} converts to INT64_MAX",
        QUANTIZE_EVERY_TENSOR,
    )


def convolution_multiplier(
    build: Build, source: Tensor | None, weights: Tensor | None, output: Tensor | None
) -> Refusal | None:
    """GetQuantizedConvolutionMultipler's multiplier (input scale · filter scale in float32,
    over the output scale in double; the first channel's filter scale, for a per-channel one)
    through QuantizeMultiplier (`multiplier_check`)."""
    real = divide(f32(scale_of(source) * scale_of(weights)), scale_of(output))
    return multiplier_check(build, real, "input scale × filter scale / output scale")


def smaller_than_one_holds(real: float) -> bool:
    """True when QuantizeMultiplierSmallerThanOneExp takes this multiplier (`smaller_than_one`
    says why not): callers skip composing its messages for the multipliers that pass."""
    # QuantizeMultiplier's shift for 0 < m < 1 is frexp's exponent (<= 0) unless m's fraction,
    # 31 bits rounded, becomes 2^31: only with exponent 0 (m = fraction) and m · 2^31 >= 2^31
    # - 1/2 (m · 2^31 and + 1/2 are exact in double below 2^31), i.e. m >= 1 - 2^-32.
    return 0.0 < real < _ROUNDS_TO_ONE


def smaller_than_one(real: float, what: str, fix: str) -> Refusal | None:
    """QuantizeMultiplierSmallerThanOneExp: TFLITE_CHECK_LT(m, 1.), TFLITE_CHECK_GT(m, 0.), and
    the shift QuantizeMultiplier gives <= 0 (a multiplier within 2^-32 of 1 rounds up to 1)."""
    if not real < 1.0:
        return aborts(
            QUANTIZATION_UTIL, "TFLITE_CHECK_LT(double_multiplier, 1.)", f"{what} is {g(real)}", fix
        )
    if not real > 0.0:
        return aborts(
            QUANTIZATION_UTIL, "TFLITE_CHECK_GT(double_multiplier, 0.)", f"{what} is {g(real)}", fix
        )
    if quantize_multiplier(real).shift > 0:
        return aborts(
            QUANTIZATION_UTIL,
            "TFLITE_CHECK_LE(shift, 0)",
            f"{what} is {real!r}, which rounds to 1 in 31 bits",
            fix,
        )
    return None


def greater_than_one(real: float, what: str, fix: str) -> Refusal | None:
    """QuantizeMultiplierGreaterThanOne: TFLITE_CHECK_GT(m, 1.) (its TFLITE_CHECK_GE(shift, 0)
    then holds)."""
    if not real > 1.0:
        return aborts(
            QUANTIZATION_UTIL, "TFLITE_CHECK_GT(double_multiplier, 1.)", f"{what} is {g(real)}", fix
        )
    return None


def rescaled_sum(
    left_shift: int,
    scales: tuple[float, ...],
    *,
    in_float: bool = False,
) -> Refusal | None:
    """The rescaling of ADD, SUB, ADD_N and CUMSUM: with twice = 2·max(input scales), each input
    multiplier s_i / twice and the output multiplier twice / (2^left_shift · s_out) go through
    QuantizeMultiplierSmallerThanOneExp in that order (`scales`: the inputs', then the output's;
    `in_float`: SUB computes them in float32, the others in double)."""
    # `divide` (its nonzero case) and `smaller_than_one_holds` inline: every quantized ADD and
    # SUB of a model comes here; doubles need no rounding, float32 (`in_float`) does.
    *inputs, output_scale = scales
    largest = max(inputs)
    twice = f32(2.0 * largest) if in_float else 2.0 * largest
    for position, scale in enumerate(inputs):
        real = scale / twice if twice != 0.0 else divide(scale, twice)
        if in_float:
            real = f32(real)
        if 0.0 < real < _ROUNDS_TO_ONE:
            continue
        name = f"input {position + 1}" if len(inputs) > 1 else "input"
        refused = smaller_than_one(
            real,
            f"the {name} multiplier, its scale {g(scale)} / (2 × {g(largest)}),",
            QUANTIZE_EVERY_TENSOR,
        )
        if refused:
            return refused
    denominator = (1 << left_shift) * output_scale
    if in_float:
        denominator = f32(denominator)
    real = twice / denominator if denominator != 0.0 else divide(twice, denominator)
    if in_float:
        real = f32(real)
    if 0.0 < real < _ROUNDS_TO_ONE:
        return None
    limit = twice / (1 << left_shift)
    refused = smaller_than_one(
        real,
        f"the output multiplier, 2 × {g(largest)} / (2^{left_shift} × output scale "
        f"{g(output_scale)}),",
        QUANTIZE_EVERY_TENSOR
        if output_scale == 0.0
        else (
            f"the output scale {g(output_scale)} must exceed 2 × the largest input scale / "
            f"2^{left_shift} = {g(limit)} (the output's range is calibrated over "
            f"2^{left_shift - 1} times narrower than its inputs'): {CALIBRATE}"
        ),
    )
    return refused


def softmax_scaling(beta: float, input_scale: float, integer_bits: int) -> float:
    """PreprocessSoftmaxScaling's real multiplier: beta · input scale · 2^(31 - integer bits),
    capped at 2^31 - 1 (doubles; TFLITE_SINGLE_ROUNDING and TFLITE_EMULATE_FLOAT unset)."""
    scaled = beta * input_scale * float(1 << (31 - integer_bits))
    return min(scaled, float((1 << 31) - 1)) if not math.isnan(scaled) else scaled


def activation_range(build: Build, activation: int, output: Tensor | None) -> Refusal | None:
    """CalculateActivationRangeQuantized: the output type must be uint8, int8 or int16, and each
    bound of the fused activation, quantized with the output's scale (float32: round(bound /
    scale)), must fit in int32 (`no_integer_overflow_from_quantization`; a zero scale gives NaN
    for the bound 0, which fails too)."""
    if output is None or output.dtype.name not in ("UINT8", "INT8", "INT16"):  # type_of inline
        return not_true(kernel_util(build), "false")
    safe_scale = _SAFE_SCALE.get(activation)
    if safe_scale is None:
        return None  # no bound to quantize (no fused activation, or one without a range)
    quantization = output.quantization  # `scale_of`, inline: every quantized convolution
    scale = (
        0.0
        if quantization is None or quantization.zero_point is None
        else quantization.scale or 0.0
    )
    if scale > safe_scale:
        # Decided before rounding the scale to float32: every safe scale is a float32 value
        # and the rounding is monotonic, so a larger double rounds to at least it; the safe
        # scale itself passes too (each bound / it is at most 2^30 in magnitude).
        return None
    scale = f32(scale)
    bound = overflowing_activation_bound(activation, scale)
    if bound is None:
        return None
    name = _ACTIVATION_NAMES[activation]
    fix = (
        f"the output scale {g(scale)} is too small for the fused {name}: its bound "
        f"{bound:g} / scale overflows int32 (the scale must be at least "
        f"{g(abs(bound) / _INT32_LIMIT)}): "
        + (QUANTIZE_EVERY_TENSOR if scale == 0.0 else CALIBRATE)
    )
    return not_true(kernel_util(build), "no_integer_overflow_from_quantization", fix=fix)


def overflowing_activation_bound(activation: int, scale: float) -> float | None:
    """kernel_util.cc's Quantize, shared by TFLM and LiteRT: the first bound of the fused
    activation whose float32 round(bound / scale) does not fit in int32, else None."""
    # One comparison decides every bound of the usual scales: above max|bound| / 2^30 and the
    # smallest normal float32 (2^-126), the scale's float32 rounding is a normal number within
    # a relative 2^-24 of it, so |bound| / scale stays below 2^30 (1 + 2^-23), which rounds (to
    # float32, then to an integer) far inside int32. NaN, zero, negative and smaller scales
    # fail the comparison and take the exact path.
    if scale > _SAFE_SCALE.get(activation, math.inf):
        return None
    for bound in _ACTIVATION_BOUNDS.get(activation, ()):
        rounded = tflite_round(f32(divide(bound, f32(scale))))
        if not -_INT32_LIMIT <= rounded <= _INT32_LIMIT:
            return bound
    return None


def convolution_parameters(
    build: Build,
    activation: int,
    operands: tuple[Tensor | None, Tensor | None, Tensor | None, Tensor | None],
    channels: int,
) -> Refusal | None:
    """PopulateConvolutionQuantizationParams (kernel_util.cc) for CONV_2D, DEPTHWISE_CONV_2D,
    TRANSPOSE_CONV and their CMSIS-NN kernels, non-float paths: input and filter affine; a
    per-channel filter with int8/int16 input, int8/int4 weights and one scale per output
    channel (`channels`, the filter dimension the kernel passes) along its quantized dimension;
    each channel's multiplier input scale · filter scale / output scale; uint8 inputs check the
    bias scale; int8, uint8 and int16 inputs quantize the fused activation's bounds. `operands`:
    input, filter, bias, output."""
    source, weights, bias, output = operands
    # `is_quantized` of the input, then the filter, read directly, and the filter's four
    # fields in one unpack: this runs for every convolution.
    source_quantization = None if source is None else source.quantization
    if source_quantization is None or source_quantization.zero_point is None:
        return _not_affine(build, "input")
    weights_quantization = None if weights is None else weights.quantization
    if weights_quantization is None:
        return _not_affine(build, "filter")
    weights_scale, weights_zero_point, count, axis = weights_quantization
    if weights_zero_point is None:
        return _not_affine(build, "filter")
    assert source is not None and weights is not None
    kind = source.dtype.name
    if count > 1:
        # `_per_channel` spells out the first check that fails; its checks all pass for a
        # well-formed per-channel filter, decided here without the call.
        shape = weights.shape
        if not (
            count == channels
            and kind in ("INT8", "INT16")
            and weights.dtype.name in ("INT8", "INT4")
            and -len(shape) <= axis < len(shape)
            and shape[axis] == channels
        ):
            refused = _per_channel(build, source, weights, count, channels)
            if refused:
                return refused
    # Each channel's QuantizeMultiplier(input scale · filter scale / output scale), in double
    # (`divide` where the output scale is 0; `scale_of(output)` inline: every convolution).
    product = (source_quantization.scale or 0.0) * (weights_scale or 0.0)
    output_quantization = None if output is None else output.quantization
    output_scale = (
        0.0
        if output_quantization is None or output_quantization.zero_point is None
        else output_quantization.scale or 0.0
    )
    real = product / output_scale if output_scale != 0.0 else divide(product, output_scale)
    if not -_INFINITY < real < _INFINITY:  # not finite (NaN fails both comparisons)
        refused = multiplier_check(build, real, "input scale × filter scale / output scale")
        if refused:
            return refused
    if kind == "UINT8":
        refused = bias_scale(build, (source, weights, bias, output)) or convolution_multiplier(
            build, source, weights, output
        )
        if refused:
            return refused
    if kind in ("INT8", "UINT8", "INT16"):
        # `activation_range`, whose scale is `output_scale`: its usual outcome (an integer
        # output whose scale no bound of the activation can overflow) decided inline.
        safe_scale = _SAFE_SCALE.get(activation)
        if (
            (safe_scale is None or output_scale > safe_scale)
            and output is not None
            and output.dtype.name in ("UINT8", "INT8", "INT16")
        ):
            return None
        return activation_range(build, activation, output)
    return None


def _not_affine(build: Build, name: str) -> Refusal:
    """TF_LITE_ENSURE_EQ(<name>->quantization.type, kTfLiteAffineQuantization)."""
    return not_equal(
        kernel_util(build),
        f"{name}->quantization.type",
        "kTfLiteAffineQuantization",
        0,
        1,
        fix=QUANTIZE_EVERY_TENSOR,
    )


def _per_channel(
    build: Build, source: Tensor, weights: Tensor, count: int, channels: int
) -> Refusal | None:
    if source.dtype.name not in ("INT8", "INT16"):
        return not_true(
            kernel_util(build), "input->type == kTfLiteInt8 || input->type == kTfLiteInt16"
        )
    if weights.dtype.name not in ("INT8", "INT4"):
        return not_true(
            kernel_util(build), "filter->type == kTfLiteInt8 || filter->type == kTfLiteInt4"
        )
    if count != channels:
        return not_equal(
            kernel_util(build), "affine_quantization->scale->size", "num_channels", count, channels
        )
    quantization = weights.quantization
    # `dim(weights, axis, 0)`, inline: every per-channel convolution.
    axis, shape = (quantization.axis if quantization is not None else 0), weights.shape
    dimension = shape[axis] if -len(shape) <= axis < len(shape) else 0
    if channels != dimension:
        return not_equal(
            kernel_util(build),
            "num_channels",
            "filter->dims->data[affine_quantization->quantized_dimension]",
            channels,
            dimension,
        )
    return None


def bias_scale(
    build: Build,
    operands: tuple[Tensor | None, Tensor | None, Tensor | None, Tensor | None],
) -> Refusal | None:
    """GetQuantizedConvolutionMultipler with a bias: |input scale · filter scale - bias scale| /
    output scale <= 0.02 (doubles; an unquantized bias has scale 0), then the float32 product
    input scale · filter scale >= 0. `operands`: input, filter, bias, output."""
    source, weights, bias, output = operands
    product = scale_of(source) * scale_of(weights)
    if bias is not None:
        difference = abs(product - scale_of(bias))
        if not divide(difference, scale_of(output)) <= 0.02:
            return not_true(
                kernel_util(build),
                "scale_diff / output_scale <= 0.02",
                fix=(
                    f"the bias scale must be input scale × filter scale ({g(product)}), within "
                    f"2% of the output scale; it is {g(scale_of(bias))}: re-convert with a "
                    "converter that derives the bias scale (or " + QUANTIZE_EVERY_TENSOR + ")"
                ),
            )
    return input_product_scale(build, source, weights)


def input_product_scale(
    build: Build, source: Tensor | None, weights: Tensor | None
) -> Refusal | None:
    """GetQuantizedConvolutionMultipler: TF_LITE_ENSURE(input_product_scale >= 0), the product
    taken in float32."""
    if f32(scale_of(source) * scale_of(weights)) >= 0.0:
        return None
    return not_true(
        kernel_util(build),
        "input_product_scale >= 0",
        fix="quantization scales must be positive: re-convert the model",
    )


def checked_log2(value: float) -> tuple[bool, int]:
    """CheckedLog2(float): (|log2(x) - round(log2(x))| < 1e-3, the rounded log2), computed as
    the C++ does, log(x) · (1 / log(2)) in float32 (NaN for x <= 0: not a power of two)."""
    if not value > 0.0:
        return False, 0
    log2 = f32(f32(math.log(f32(value))) * f32(1.0 / f32(math.log(2.0))))
    rounded = tflite_round(log2)
    return abs(f32(log2 - rounded)) < f32(1e-3), int(rounded)


def symmetric_weights(file: str, weights: Tensor | None, build: Build) -> Refusal | None:
    """`TFLITE_DCHECK(filter->params.zero_point == 0)` (fully_connected_common.cc): an abort on
    builds with DCHECKs; the wheel goes on."""
    zero_point = zero_point_of(weights)
    if zero_point == 0 or not build.dchecks:
        return None
    return dcheck_aborts(
        file,
        "TFLITE_DCHECK(filter->params.zero_point == 0)",
        f"the filter's zero point is {zero_point}",
        fix=(
            "TFLM expects symmetric int8 weights (zero point 0): convert with the converter's "
            "default symmetric weight quantization"
        ),
    )
