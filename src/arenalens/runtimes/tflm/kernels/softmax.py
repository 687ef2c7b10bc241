"""Softmax kernels: SOFTMAX, LOG_SOFTMAX → setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): softmax.cc (`SoftmaxInit`),
softmax_common.cc (`SoftmaxPrepare`, `CalculateSoftmaxParams`, `InitializeLutForInt16`),
`SoftmaxParams` in kernels/internal/types.h; log_softmax.cc (`LogSoftmaxOpData`,
`CalculateOpData`).
"""

from __future__ import annotations

from arenalens.analysis.inplace import NotInPlace
from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.access_order import SOFTMAX_LOOPS, SOFTMAX_ROWS, same_index_distance
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import UNARY, op_data, scale_of
from arenalens.runtimes.tflm.kernels.quantization import (
    CALIBRATE,
    g,
    greater_than_one,
    quantize_multiplier,
    smaller_than_one,
    softmax_scaling,
)
from arenalens.runtimes.tflm.kernels.refusals import (
    not_equal,
    not_true,
    unsupported_at_invoke,
)

SOFTMAX_PARAMS = struct("TfLiteSoftmaxParams", ("beta", "float"))
SOFTMAX_OP_DATA = struct(
    "SoftmaxParams",
    ("beta", "double"),
    ("input_multiplier", "int32"),
    ("input_left_shift", "int32"),
    ("reverse_scaling_divisor", "int32"),
    ("reverse_scaling_right_shift", "int32"),
    ("diff_min", "int"),
    ("zero_point", "int32"),
    ("scale", "float"),
    ("table", "pointer"),
    ("exp_lut", "pointer"),
    ("one_over_one_plus_x_lut", "pointer"),
    ("uint8_table1", "pointer"),
    ("uint8_table2", "pointer"),
)
LOG_SOFTMAX_OP_DATA = struct(
    "LogSoftmaxOpData",
    ("input_multiplier", "int32"),
    ("input_left_shift", "int32"),
    ("reverse_scaling_divisor", "int32"),
    ("reverse_scaling_right_shift", "int32"),
    ("diff_min", "int"),
    ("outer_size", "size_t"),
    ("depth", "size_t"),
)
# kInt16LUTArraySize = LUTSize<int16_t>() (kernels/internal/common.h): 513 entries.
INT16_LUT_ENTRIES = 513
# kScaledDiffIntegerBits: the integer bits of the scaled input differences (softmax_common.cc,
# log_softmax.cc).
SOFTMAX_DIFF_INTEGER_BITS = 5
_FILE = "softmax_common.cc"


def _quantization(tensor: Tensor | None) -> tuple[float, int]:
    quantization = None if tensor is None else tensor.quantization
    if quantization is None:
        return 0.0, 0
    return quantization.scale or 0.0, quantization.zero_point or 0


def _softmax(context: base.KernelContext) -> base.Events:
    # SoftmaxPrepare: input (rank >= 1), output; InitializeLutForInt16 allocates both int16
    # tables before any type check and fills them over the live temps, then the type, zero-point
    # and scale checks read both temps' types and quantization params.
    found: list[base.Event] = base.temps(context, ("in", 0))
    source = context.input(0)
    if source is None or not source.shape:
        return [*found, not_true(_FILE, "NumDimensions(input) >= 1")]
    found += base.temps(context, ("out", 0))
    kind, out = context.input_type(0), context.output_type(0)
    if kind == "INT16":
        keep = tuple(base.TempField(name, temp) for temp in (0, 1) for name in ("params", "type"))
        tables = base.OverTemps(keep=keep)
        for what in ("exp LUT", "1/(1+x) LUT"):
            found.append(base.Persistent(2 * INT16_LUT_ENTRIES, what, written=tables))
    refused = _softmax_checks(context, kind, out)
    return found + refused


def _softmax_checks(context: base.KernelContext, kind: str, out: str) -> list[base.Event]:
    if out == "INT16" and kind not in ("INT8", "INT16"):
        return [not_true(_FILE, "input->type == kTfLiteInt8 || input->type == kTfLiteInt16")]
    if out not in ("INT16", kind):
        return [not_equal(_FILE, "input->type", "output->type", kind, out)]
    in_zero = _quantization(context.input(0))[1]
    out_scale, out_zero = _quantization(context.output(0))
    if kind == "INT16":
        if out_zero != 0:
            return [not_equal(_FILE, "output->params.zero_point", "0", out_zero, 0)]
        if in_zero != 0:
            return [not_equal(_FILE, "input->params.zero_point", "0", in_zero, 0)]
        if abs(out_scale - 1 / 32768) > 0.001 / 32768:
            return [base.Refusal(f"{_FILE} output->params.scale not near 1/32768")]
    elif kind == "INT8" and out == "INT16":
        if out_zero != -32768:
            return [not_equal(_FILE, "output->params.zero_point", "-32768", out_zero, -32768)]
        if abs(out_scale - 1 / 65536) > 0.001 / 65536:
            return [base.Refusal(f"{_FILE} output->params.scale not near 1/65536")]
    elif kind == "INT8":
        if out_zero != -128:
            return [not_equal(_FILE, "output->params.zero_point", "-128", out_zero, -128)]
        if out_scale != float.fromhex("0x1p-8"):
            return [not_true(_FILE, "output->params.scale == 1.f / 256")]
    elif kind != "FLOAT32":
        return [not_equal(_FILE, "input->type", "kTfLiteFloat32", kind, "FLOAT32")]
    if kind == "INT8":
        refused = int8_input_multiplier(context, SOFTMAX_DIFF_INTEGER_BITS)
        return [refused] if refused else []
    return []


def int8_input_multiplier(
    context: base.KernelContext, integer_bits: int, beta: float | None = None
) -> base.Refusal | None:
    """int8: PreprocessSoftmaxScaling(beta, input scale, integer bits) turns beta · input scale
    · 2^(31 - integer bits) into a multiplier with QuantizeMultiplierGreaterThanOne, which aborts
    unless it exceeds 1: an input scale below 2^-26 / beta (1.49e-8 for beta 1) aborts."""
    if beta is None:
        beta = float(context.operator.options.get("beta", 0.0))
    input_scale = scale_of(context.input(0))
    real = softmax_scaling(beta, input_scale, integer_bits)
    if real > 1.0:  # greater_than_one holds: no message to compose (this runs for every model)
        return None
    floor = 2.0 ** (integer_bits - 31)
    limit = f"2^{integer_bits - 31} / beta = {g(floor / beta)}" if beta > 0 else "beta > 0"
    return greater_than_one(
        real,
        f"{context.opcode}'s input multiplier, beta {g(beta)} × input scale "
        f"{g(input_scale)} × 2^{31 - integer_bits},",
        f"the {context.opcode} input's scale {g(input_scale)} must exceed {limit}: {CALIBRATE}"
        if beta > 0
        else f"{context.opcode}'s beta is {g(beta)}: convert with a positive beta",
    )


def _log_softmax(context: base.KernelContext) -> base.Events:
    # CalculateOpData: input, output, same type and shape; int8 allocates its OpData here (after
    # the temps), checks the output quantization, fills it, then reads the input's dims.
    file = "log_softmax.cc"
    found: list[base.Event] = base.temps(context, ("in", 0), ("out", 0))
    kind, out = context.input_type(0), context.output_type(0)
    if kind != out:
        return [*found, not_equal(file, "input->type", "output->type", kind, out)]
    source, output = context.input(0), context.output(0)
    if source is None or output is None or source.shape != output.shape:
        return [*found, not_true(file, "HaveSameShapes(input, output)")]
    if kind == "INT8":
        abi, features = context.build.abi, context.build.features
        spans = [
            LOG_SOFTMAX_OP_DATA.member(name, abi, features)
            for name in ("input_multiplier", "diff_min", "outer_size", "depth")
        ]
        # The int32 fields, then the two size_t ones (LP64 leaves padding in between unwritten).
        written = ((0, spans[1][0] + spans[1][1]), (spans[2][0], spans[3][0] + spans[3][1]))
        found.append(
            base.Persistent(
                context.sizeof(LOG_SOFTMAX_OP_DATA),
                "OpData",
                written=base.OverTemps(ranges=written, keep=(base.TempField("dims", 0),)),
            )
        )
        scale, zero = _quantization(output)
        if scale != 16 / 256:
            return [*found, not_true(file, "output->params.scale == kOutputScale")]
        if zero != 127:
            return [*found, not_true(file, "output->params.zero_point == kOutputZeroPoint")]
        refused = _log_softmax_multipliers(context)
        if refused:
            return [*found, refused]
    elif kind != "FLOAT32":
        found.append(unsupported_at_invoke(f"LOG_SOFTMAX only supports float32, int8, got {kind}."))
    return found


def _log_softmax_multipliers(context: base.KernelContext) -> base.Refusal | None:
    """PreprocessLogSoftmaxScalingExp(kBeta 1, input scale, 5): the SOFTMAX input multiplier
    (QuantizeMultiplierGreaterThanOne), then its inverse 2^(31 - shift) / significand through
    QuantizeMultiplierSmallerThanOneExp."""
    refused = int8_input_multiplier(context, SOFTMAX_DIFF_INTEGER_BITS, beta=1.0)
    if refused:
        return refused
    real = softmax_scaling(1.0, scale_of(context.input(0)), SOFTMAX_DIFF_INTEGER_BITS)
    multiplier = quantize_multiplier(real)
    reverse = float(1 << (31 - multiplier.shift)) / multiplier.significand
    return smaller_than_one(
        reverse,
        f"LOG_SOFTMAX's reverse scaling divisor 2^{31 - multiplier.shift} / "
        f"{multiplier.significand}",
        CALIBRATE,
    )


# A row is read whole (its maximum, its sum) before any of its outputs is written, then each
# output reads its own element: the trace of "same index".
SOFTMAX_ACCESS = base.AccessOrder(
    SOFTMAX_ROWS, "softmax.cc, " + SOFTMAX_LOOPS, (0,), same_index_distance
)

RULES = (
    base.KernelRule(
        "SOFTMAX",
        "softmax.cc, softmax_common.cc",
        SOFTMAX_PARAMS,
        op_data(SOFTMAX_OP_DATA),
        _softmax,
        access=SOFTMAX_ACCESS,
        operands=UNARY,
        inplace=NotInPlace("reads the whole row (max, sum) while the loop writes it"),
    ),
    base.stateless(
        "LOG_SOFTMAX",
        "log_softmax.cc",
        _log_softmax,
        base.AccessOrder(
            SOFTMAX_ROWS, "log_softmax.cc, " + SOFTMAX_LOOPS, (0,), same_index_distance
        ),
        UNARY,
    ),
)
