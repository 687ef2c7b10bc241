"""CUMSUM → its setup allocations and refusals.

Source (tflite-micro tensorflow/lite/micro/kernels/): cumsum.cc (`OpData`, `CalculateOpData`).
There is no Init: an int8 CUMSUM allocates its OpData in Prepare, with its three temps live, and
fills it while still reading the input's and the output's quantization.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import scale_of
from arenalens.runtimes.tflm.kernels.quantization import rescaled_sum
from arenalens.runtimes.tflm.kernels.refusals import TFLITE_TYPES, not_equal, not_true

CUMSUM_PARAMS = struct("TfLiteCumsumParams", ("exclusive", "bool"), ("reverse", "bool"))
OP_DATA_CUMSUM = struct(
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
)
_FILE = "cumsum.cc"
_INTEGER_SHIFT = 20  # kCumSumIntegerShift


def _prepare(context: base.KernelContext) -> base.Events:
    # CalculateOpData: input, axis; type, axis and rank checks; output; same type and shape;
    # int8: the OpData (offsets, multipliers from both scales, the output's activation range).
    found: list[base.Event] = base.temps(context, ("in", 0), ("in", 1))
    kind = context.input_type(0)
    if kind not in ("FLOAT32", "INT8"):
        return [
            *found,
            not_true(_FILE, "input->type == kTfLiteFloat32 || input->type == kTfLiteInt8"),
        ]
    axis = context.input(1)
    axis_type = context.input_type(1)
    if axis_type != "INT32":
        number = TFLITE_TYPES.get(axis_type, 0)
        return [*found, not_equal(_FILE, "axis->type", "kTfLiteInt32", number, 2)]
    if axis is None or axis.element_count != 1:
        count = 0 if axis is None else axis.element_count
        return [*found, not_equal(_FILE, "NumElements(axis)", "1", count, 1)]
    source, output = context.input(0), context.output(0)
    if source is None or not source.shape:
        return [*found, not_true(_FILE, "NumDimensions(input) >= 1")]
    found += base.temps(context, ("out", 0))
    out = context.output_type(0)
    if kind != out:
        return [*found, not_equal(_FILE, "input->type", "output->type", kind, out)]
    if output is None or output.shape != source.shape:
        return [*found, not_true(_FILE, "HaveSameShapes(input, output)")]
    if kind == "INT8":
        keep = (base.TempField("params", 0), base.TempField("params", 2), base.TempField("type", 2))
        found.append(
            base.Persistent(
                context.sizeof(OP_DATA_CUMSUM), "OpData", written=base.OverTemps(keep=keep)
            )
        )
        # The ADD_N rescaling: kCumSumIntegerShift 20, the activation kTfLiteActNone.
        scales = (scale_of(source), scale_of(output))
        refused = rescaled_sum(_INTEGER_SHIFT, scales)
        if refused:
            found.append(refused)
    return found


RULES = (
    base.KernelRule(
        "CUMSUM",
        "cumsum.cc",
        CUMSUM_PARAMS,
        prepare=_prepare,
        access=base.NoOverlap("not analysed"),
        operands=base.operands("input", "axis"),
        resolver="AddCumSum",
    ),
)
