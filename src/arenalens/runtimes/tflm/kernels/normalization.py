"""L2_NORMALIZATION → its setup allocations and refusals.

Source (tflite-micro tensorflow/lite/micro/kernels/): l2norm.cc (`L2NormInit`, `L2NormPrepare`),
`L2NormalizationParams` in kernels/internal/types.h.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.access_order import REREADS_INPUT
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import UNARY, op_data
from arenalens.runtimes.tflm.kernels.refusals import not_equal, not_true

L2_NORM_PARAMS = struct("TfLiteL2NormParams", ("activation", "enum"))
L2_NORMALIZATION_PARAMS = struct("L2NormalizationParams", ("input_zero_point", "int32"))
_FILE = "l2norm.cc"


def _prepare(context: base.KernelContext) -> base.Events:
    # L2NormPrepare: input, output (rank <= 4), float or int8, same types, no fused activation;
    # nothing allocated beyond Init's struct.
    found: list[base.Event] = base.temps(context, ("in", 0), ("out", 0))
    source = context.input(0)
    if source is not None and len(source.shape) > 4:
        return [*found, not_true(_FILE, "NumDimensions(input) <= 4")]
    kind, out = context.input_type(0), context.output_type(0)
    if out not in ("FLOAT32", "INT8"):
        return [
            *found,
            not_true(_FILE, "output->type == kTfLiteFloat32 || output->type == kTfLiteInt8"),
        ]
    if kind != out:
        return [*found, not_equal(_FILE, "input->type", "output->type", kind, out)]
    activation = context.option("fused_activation_function")
    if activation:
        return [*found, not_equal(_FILE, "params->activation", "kTfLiteActNone", activation, 0)]
    return found


RULES = (
    base.KernelRule(
        "L2_NORMALIZATION",
        "l2norm.cc",
        L2_NORM_PARAMS,
        op_data(L2_NORMALIZATION_PARAMS, "L2NormalizationParams"),
        _prepare,
        access=base.NoOverlap(REREADS_INPUT + " (norm first)"),
        operands=UNARY,
    ),
)
