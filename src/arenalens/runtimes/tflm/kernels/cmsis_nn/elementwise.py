"""CMSIS-NN elementwise kernels: ADD, MUL, PAD, PADV2, MAXIMUM, MINIMUM, TRANSPOSE → the reference
kernels' rules, with CMSIS-NN's own Prepare checks for ADD.

Sources (tflite-micro tensorflow/lite/micro/kernels/cmsis_nn/): add.cc (its own Init and Prepare:
the reference `OpDataAdd` layout, the same three temp tensors), mul.cc, pad.cc,
maximum_minimum.cc, transpose.cc. CMSIS-NN's MUL, PAD, PADV2 and TRANSPOSE register the reference
kernels' Init and Prepare (`MulInit`/`MulPrepare`, `PadInit`/`PadPrepare`, `TransposePrepare`) and
MAXIMUM / MINIMUM have none: on every code path they allocate and refuse exactly as the reference
kernels do, so their rules are the reference ones. ADD refuses in Prepare what the reference
kernel refuses only at Invoke (int64) or not at all (mixed input types, int16 zero points).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from arenalens.runtimes.tflm.kernels.base import (
    Event,
    Events,
    KernelContext,
    KernelRule,
    Refusal,
    RuleFunction,
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

# Operator → the CMSIS-NN source whose kernel uses the reference kernel's Init and Prepare.
SAME_AS_REFERENCE: Mapping[str, str] = {
    "MUL": "cmsis_nn/mul.cc, mul_common.cc",
    "PAD": "cmsis_nn/pad.cc, pad_common.cc",
    "PADV2": "cmsis_nn/pad.cc, pad_common.cc",
    "MAXIMUM": "cmsis_nn/maximum_minimum.cc",
    "MINIMUM": "cmsis_nn/maximum_minimum.cc",
    "TRANSPOSE": "cmsis_nn/transpose.cc, transpose_common.cc",
}

_FILE = "tensorflow/lite/micro/kernels/cmsis_nn/add.cc"


def _add_refusals(context: KernelContext) -> list[Event]:
    """PrepareAdd's checks before CalculateOpData: types, then int16 zero points."""
    first, second, output = context.input(0), context.input(1), context.output(0)
    if type_of(first) != type_of(output):
        return [
            ensure_eq(
                _FILE, "input1->type", "output->type", type_number(first), type_number(output)
            )
        ]
    if type_of(first) not in ("FLOAT32", "INT32", "INT16", "INT8"):
        return [Refusal(UNSUPPORTED_INPUT)]
    if type_of(first) != type_of(second):
        return [Refusal(HYBRID)]
    if type_of(first) == "INT16":
        return list(
            int16_zero_points(_FILE, ("input1", first), ("input2", second), ("output", output))
        )
    return []


def _add(reference: RuleFunction) -> RuleFunction:
    def prepare(context: KernelContext) -> Events:
        # PrepareAdd: input1, input2, output; CMSIS-NN's checks; then what the reference
        # AddPrepare does (CalculateOpData fills OpData only).
        refused = _add_refusals(context)
        if refused:
            return temps(context, ("in", 0), ("in", 1), ("out", 0)) + refused
        return reference(context)

    return prepare


def rules_from_reference(reference: Mapping[str, KernelRule]) -> tuple[KernelRule, ...]:
    """The CMSIS-NN rules built on the reference kernels' rules (those arenalens has)."""
    found = [
        replace(reference[opcode], source=source)
        for opcode, source in SAME_AS_REFERENCE.items()
        if opcode in reference
    ]
    if "ADD" in reference:
        add = reference["ADD"]
        found.append(
            replace(add, source="cmsis_nn/add.cc, add_common.cc", prepare=_add(add.prepare))
        )
    return tuple(found)
