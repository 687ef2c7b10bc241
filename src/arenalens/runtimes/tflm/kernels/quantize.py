"""Type conversions: QUANTIZE, DEQUANTIZE, CAST → their setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): quantize.cc, quantize_common.cc,
quantize.h, dequantize.cc, dequantize_common.cc, dequantize.h, cast.cc; CAST's options parsed by
flatbuffer_conversions.cc (ParseCast, allocated even without a CastOptions table).
"""

from __future__ import annotations

from arenalens.analysis.inplace import InPlace, NotInPlace
from arenalens.builds.tflm import CAST_TO_BOOL
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.access_order import same_index
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import (
    IN_PLACE_UNARY,
    UNARY,
    is_quantized,
    op_data,
    per_channel_count,
)
from arenalens.runtimes.tflm.kernels.refusals import (
    arity_refusals,
    not_equal,
    not_true,
    numbered,
)

_CAST_PARAMS = struct("TfLiteCastParams", ("in_data_type", "enum"), ("out_data_type", "enum"))
# types.h QuantizationParams {int32 zero_point; double scale}: 8-aligned on both ABIs.
_QUANTIZATION_PARAMS = struct("QuantizationParams", ("zero_point", "int32"), ("scale", "double"))
_DEQUANTIZATION_PARAMS = struct(
    "DequantizationParams", ("scale", "double"), ("zero_point", "int32")
)
_QUANTIZE_OP_DATA = struct(
    "OpDataQuantizeReference",
    ("quantization_params", _QUANTIZATION_PARAMS),
    ("requantize_output_multiplier", "int32"),
    ("requantize_output_shift", "int"),
    ("input_zero_point", "int32"),
)
_DEQUANTIZE_OP_DATA = struct(
    "DequantizeOpData",
    ("quantization_params", _DEQUANTIZATION_PARAMS),
    ("output_multiplier", "int32"),
    ("output_shift", "int"),
    ("output_zero_point", "int32"),
)

# EvalQuantizeReference: input type → the output types it converts to.
_QUANTIZE_PAIRS = {
    "FLOAT32": ("INT8", "INT16"),
    "INT32": ("INT8", "INT16"),
    "INT16": ("INT8", "INT16", "INT32"),
    "INT8": ("INT8", "UINT8", "INT16", "INT32"),
    "UINT8": ("INT8",),
}


def _quantize(context: base.KernelContext) -> base.Events:
    # PrepareQuantizeReference: input, output; the output must carry one scale.
    file = "quantize_common.cc"
    found = arity_refusals(context, file, 1, 1) + base.temps(context, ("in", 0), ("out", 0))
    input_type, output_type = context.input_type(0), context.output_type(0)
    result = context.output(0)
    problem: base.Refusal | None = None
    if not is_quantized(result):
        problem = not_equal(file, "output->quantization.type", "kTfLiteAffineQuantization", 0, 1)
    elif per_channel_count(result) != 1:
        problem = not_true(file, "affine_quantization->scale->size == 1")
    elif input_type not in _QUANTIZE_PAIRS:
        problem = not_true(
            file,
            "input->type == kTfLiteFloat32 || input->type == kTfLiteInt32 || input->type == "
            "kTfLiteInt16 || input->type == kTfLiteInt8 || input->type == kTfLiteUInt8",
        )
    elif output_type not in ("INT8", "INT16", "INT32", "UINT8"):
        problem = not_true(
            file,
            "output->type == kTfLiteInt8 || output->type == kTfLiteInt16 || output->type == "
            "kTfLiteInt32 || output->type == kTfLiteUInt8",
        )
    if problem:
        found.append(problem)
    elif output_type not in _QUANTIZE_PAIRS[input_type]:
        found.append(
            base.Refusal(f"Input {input_type}, output {output_type} not supported.", base.INVOKE)
        )
    return found


def _dequantize(context: base.KernelContext) -> base.Events:
    # DequantizePrepare: input, output; an integer input (not float16: fp16 weights are refused)
    # and a float32 output. Input quantization is not required.
    file = "dequantize_common.cc"
    found = arity_refusals(context, file, 1, 1) + base.temps(context, ("in", 0), ("out", 0))
    if context.input_type(0) not in ("INT8", "INT16", "UINT8"):
        found.append(
            not_true(
                file,
                "input->type == kTfLiteInt8 || input->type == kTfLiteInt16 || "
                "input->type == kTfLiteUInt8",
            )
        )
    elif context.output_type(0) != "FLOAT32":
        found.append(not_true(file, "output->type == kTfLiteFloat32"))
    return found


_CAST_FROM = ("INT8", "INT16", "INT32", "UINT32", "FLOAT32", "BOOL")
_CAST_TO = ("INT8", "INT16", "INT32", "UINT32", "FLOAT32")


def _cast(context: base.KernelContext) -> base.Events:
    # CastPrepare: input, output; no type checks before Eval.
    found: list[base.Event] = arity_refusals(context, "cast.cc", 1, 1)
    found += base.temps(context, ("in", 0), ("out", 0))
    input_type, output_type = context.input_type(0), context.output_type(0)
    # From cast-to-bool (2026-10) on, CAST also writes bool outputs (measured on the wheels).
    targets = (*_CAST_TO, "BOOL") if context.build.has(CAST_TO_BOOL) else _CAST_TO
    if input_type not in _CAST_FROM:
        found.append(base.Refusal(f"Input type {numbered(input_type)} not supported.", base.INVOKE))
    elif output_type not in targets:
        found.append(
            base.Refusal(f"Output type {numbered(output_type)} not supported.", base.INVOKE)
        )
    return found


RULES = (
    base.KernelRule(
        "CAST",
        "cast.cc",
        _CAST_PARAMS,
        base.no_events,
        _cast,
        access=same_index("cast.cc copyCast"),
        operands=UNARY,
    ),
    base.KernelRule(
        "DEQUANTIZE",
        "dequantize.cc, dequantize_common.cc",
        None,
        op_data(_DEQUANTIZE_OP_DATA),
        _dequantize,
        access=same_index("dequantize.cc, reference/dequantize.h"),
        operands=UNARY,
        inplace=NotInPlace("output elements are wider than input elements"),
    ),
    base.KernelRule(
        "QUANTIZE",
        "quantize.cc, quantize_common.cc",
        None,
        op_data(_QUANTIZE_OP_DATA),
        _quantize,
        access=same_index("quantize_common.cc, reference/quantize.h, requantize.h"),
        operands=UNARY,
        inplace=InPlace(IN_PLACE_UNARY.reason + " (requantize with equal byte sizes only)"),
    ),
)
