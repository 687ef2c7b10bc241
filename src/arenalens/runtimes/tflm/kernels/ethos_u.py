"""The Ethos-U NPU custom operator (kernels/ethos_u/ethosu.cc) → its setup allocations.

Only Ethos-U firmware registers this kernel (elsewhere `Register_ETHOSU()` returns null), so the
wheel and plain Cortex-M builds cannot run such a model; the rule still says what an Ethos-U
build would plan, so the head of a Vela-compiled model can be shown.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.abi import struct
from arenalens.runtimes.tflm.kernels.base import (
    Events,
    KernelContext,
    KernelRule,
    NoOverlap,
    Scratch,
    operands,
    temps,
)
from arenalens.runtimes.tflm.kernels.common import op_data

_OP_DATA = struct(
    "OpData", ("cms_data_size", "int"), ("base_addr_idx", "int"), ("base_addr_size_idx", "int")
)


def _prepare(context: KernelContext) -> Events:
    # One base address (uint64) and one size (size_t) per input and output, then the command
    # stream's size read through a temp view of input 0.
    count = len(context.operator.inputs) + len(context.operator.outputs)
    return [
        Scratch(8 * count, "base addresses"),
        Scratch(context.build.pointer_bytes * count, "base address sizes"),
        *temps(context, ("in", 0)),
    ]


RULES = (
    KernelRule(
        "CUSTOM:ethos-u",
        "ethos_u/ethosu.cc",
        None,
        op_data(_OP_DATA),
        _prepare,
        access=NoOverlap("runs on the NPU"),
        unregistered="only Ethos-U NPU firmware registers it",
        operands=operands("command_stream", "tensor*", outputs=(0, None)),
    ),
)
