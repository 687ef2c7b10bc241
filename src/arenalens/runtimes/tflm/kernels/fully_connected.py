"""Matrix kernels: FULLY_CONNECTED → its setup allocations (fully_connected.cc)."""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import (
    Events,
    Fixed,
    KernelContext,
    KernelRule,
    Scratch,
    TempBytes,
    temps,
)
from arenalens.runtimes.tflm.kernels.common import (
    hybrid_refusal,
    op_data,
    per_channel_arrays,
    per_channel_count,
)


def _fully_connected(context: KernelContext) -> Events:
    found = hybrid_refusal(context, 0, 1)
    found += temps(context, ("in", 0), ("in", 1), ("in", 2), ("out", 0))
    # CalculateOpDataFullyConnected: per-channel arrays only for per-channel quantized weights.
    count = per_channel_count(context.input(1))
    if context.input_type(0) != "FLOAT32" and count > 1:
        # The wheel (newer than the sources read) needs more temp memory here: measured against
        # the interpreter for 2..64 channels, 8 bytes per channel beyond the first two.
        found.append(TempBytes(8 * (count - 2), 4))
        found += per_channel_arrays(count)
    weights = context.input(1)
    if weights is not None and weights.dtype.name == "INT4":
        found.append(Scratch(weights.element_count, "unpacked int4 filter"))
    return found


RULES = (
    KernelRule(
        "FULLY_CONNECTED",
        "fully_connected.cc",
        Fixed(32, 8),
        op_data(72),
        _fully_connected,
        derived=False,
    ),
)
