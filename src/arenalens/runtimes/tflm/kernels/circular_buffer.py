"""CIRCULAR_BUFFER (custom) → its setup allocations and refusals.

Sources (tflite-micro tensorflow/lite/micro/kernels/): circular_buffer.cc
(`CircularBufferInit`: OpData, cycles_max from the flexbuffer options),
circular_buffer_common.cc (`CircularBufferPrepare`). Eval returns kTfLiteAbort on the cycles it
skips, by design.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import dim, op_data
from arenalens.runtimes.tflm.kernels.refusals import not_equal

OP_DATA_CIRCULAR_BUFFER = struct(
    "OpDataCircularBuffer", ("cycles_until_run", "int"), ("cycles_max", "int")
)
_FILE = "circular_buffer_common.cc"


def _prepare(context: base.KernelContext) -> base.Events:
    # CircularBufferPrepare: input, output; 4-D shape checks; int8 only.
    found: list[base.Event] = base.temps(context, ("in", 0), ("out", 0))
    source, output = context.input(0), context.output(0)
    checks = (
        ("input->dims->data[0]", "output->dims->data[0]", dim(source, 0), dim(output, 0)),
        ("1", "input->dims->data[1]", 1, dim(source, 1)),
        ("input->dims->data[2]", "output->dims->data[2]", dim(source, 2), dim(output, 2)),
        ("output->dims->data[3]", "input->dims->data[3]", dim(output, 3), dim(source, 3)),
    )
    for left, right, a, b in checks:
        if a != b:
            return [*found, not_equal(_FILE, left, right, a, b)]
    kind, out = context.input_type(0), context.output_type(0)
    if kind != out:
        return [*found, not_equal(_FILE, "input->type", "output->type", kind, out)]
    if kind != "INT8":
        return [*found, not_equal(_FILE, "input->type", "kTfLiteInt8", kind, "INT8")]
    return found


RULES = (
    base.KernelRule(
        "CUSTOM:CIRCULAR_BUFFER",
        "circular_buffer.cc, circular_buffer_common.cc",
        None,
        op_data(OP_DATA_CIRCULAR_BUFFER, "OpDataCircularBuffer"),
        _prepare,
        access=base.NoOverlap("keeps state"),
        operands=base.operands("input"),
    ),
)
