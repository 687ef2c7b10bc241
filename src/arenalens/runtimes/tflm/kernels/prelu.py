"""PRELU → its setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): prelu.cc (`PreluInit`, `PreluEval`),
prelu_common.cc (`PreluPrepare`, `CalculatePreluParams`), `PreluParams` in
kernels/internal/types.h. The parser allocates no options struct.
"""

from __future__ import annotations

from arenalens.builds.tflm import PRELU_INT16
from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.access_order import broadcast
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import op_data
from arenalens.runtimes.tflm.kernels.refusals import TFLITE_TYPES, not_true, unsupported_at_invoke

PRELU_PARAMS = struct(
    "PreluParams",
    ("input_offset", "int32"),
    ("alpha_offset", "int32"),
    ("output_offset", "int32"),
    ("output_multiplier_1", "int32"),
    ("output_shift_1", "int"),
    ("output_multiplier_2", "int32"),
    ("output_shift_2", "int"),
)


def _prepare(context: base.KernelContext) -> base.Events:
    # PreluPrepare: input, alpha, output; int16 output needs int8 alpha. The type is checked
    # only at Invoke.
    found: list[base.Event] = base.temps(context, ("in", 0), ("in", 1), ("out", 0))
    kind = context.input_type(0)
    if not context.build.has(PRELU_INT16):
        # Before prelu-int16: no Prepare check; Eval takes float32 and int8 only.
        if kind not in ("FLOAT32", "INT8"):
            found.append(
                unsupported_at_invoke(
                    "Only float32 and uint8_t are supported currently, got "
                    f"{TFLITE_TYPES.get(kind, 0)}."
                )
            )
        return found
    if context.output_type(0) == "INT16" and context.input_type(1) != "INT8":
        return [*found, not_true("prelu_common.cc", "alpha->type == kTfLiteInt8")]
    if kind not in ("FLOAT32", "INT8", "INT16"):
        found.append(unsupported_at_invoke(f"Input type '{kind}' is not supported."))
    return found


RULES = (
    base.KernelRule(
        "PRELU",
        "prelu.cc, prelu_common.cc",
        None,
        op_data(PRELU_PARAMS, "PreluParams"),
        _prepare,
        access=broadcast("prelu.cc, reference/prelu.h"),
        operands=base.operands("input", "alpha"),
    ),
)
