"""CMSIS-NN elementwise kernels: ADD → the reference rule behind CMSIS-NN's own Prepare checks.

Sources (tflite-micro tensorflow/lite/micro/kernels/cmsis_nn/): add.cc (its own Init and
Prepare, the reference `OpDataAdd` layout, the same three temp tensors), mul.cc, pad.cc,
maximum_minimum.cc, transpose.cc. CMSIS-NN's MUL, PAD, PADV2 and TRANSPOSE reuse the reference
kernels' Init and Prepare (`MulInit`/`MulPrepare`, `PadInit`/`PadPrepare`, `TransposePrepare`) and
MAXIMUM / MINIMUM have none: their memory is the reference rule's on every path, so they have no
rule here (the registry falls back to the reference one). What ADD adds: it refuses in Prepare
what the reference kernel refuses only at Invoke or not at all.
"""

from __future__ import annotations

from dataclasses import replace

from arenalens.runtimes.tflm.kernels import elementwise as reference
from arenalens.runtimes.tflm.kernels.base import (
    Event,
    Events,
    KernelContext,
    Refusal,
    temps,
)
from arenalens.runtimes.tflm.kernels.cmsis_nn.checks import (
    HYBRID,
    UNSUPPORTED_INPUT,
    ensure_eq,
    int16_zero_points,
    type_number,
    type_of,
)

# Operators whose CMSIS-NN kernel allocates and refuses exactly like the reference kernel.
SAME_AS_REFERENCE = ("MUL", "PAD", "PADV2", "MAXIMUM", "MINIMUM", "TRANSPOSE")

_FILE = "tensorflow/lite/micro/kernels/cmsis_nn/add.cc"
_REFERENCE_ADD = next(rule for rule in reference.RULES if rule.opcode == "ADD")


def _add(context: KernelContext) -> Events:
    # PrepareAdd: input1, input2, output; type checks; int16 zero points; then what the
    # reference AddPrepare does (CalculateOpData fills OpData only).
    first, second, output = context.input(0), context.input(1), context.output(0)
    refused: list[Event] = []
    if type_of(first) != type_of(output):
        refused = [
            ensure_eq(
                _FILE, "input1->type", "output->type", type_number(first), type_number(output)
            )
        ]
    elif type_of(first) not in ("FLOAT32", "INT32", "INT16", "INT8"):
        refused = [Refusal(UNSUPPORTED_INPUT)]
    elif type_of(first) != type_of(second):
        refused = [Refusal(HYBRID)]
    elif type_of(first) == "INT16":
        refused = list(
            int16_zero_points(_FILE, ("input1", first), ("input2", second), ("output", output))
        )
    if refused:
        return temps(context, ("in", 0), ("in", 1), ("out", 0)) + refused
    return _REFERENCE_ADD.prepare(context)


RULES = (replace(_REFERENCE_ADD, source="cmsis_nn/add.cc, add_common.cc", prepare=_add),)
