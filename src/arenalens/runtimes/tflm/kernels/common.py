"""Helpers kernel rules share: shapes, per-channel arrays, OpData."""

from __future__ import annotations

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.abi import Struct
from arenalens.runtimes.tflm.kernels.base import (
    Event,
    Events,
    KernelContext,
    OverTemps,
    Persistent,
    RuleFunction,
)


def dim(tensor: Tensor | None, axis: int, default: int = 1) -> int:
    """One dimension (negative axes count from the end), or default when absent."""
    if tensor is None or not -len(tensor.shape) <= axis < len(tensor.shape):
        return default
    return tensor.shape[axis]


def channels(tensor: Tensor | None, axis: int) -> int:
    """The size of one axis, 0 when the tensor or axis is absent."""
    if tensor is None or not tensor.shape:
        return 0
    return tensor.shape[axis] if -len(tensor.shape) <= axis < len(tensor.shape) else 0


def elements(tensor: Tensor | None) -> int:
    """Element count, 0 when absent."""
    return 0 if tensor is None else tensor.element_count


def shape(tensor: Tensor | None) -> tuple[int, ...]:
    """The shape, () when absent."""
    return () if tensor is None else tensor.shape


def per_channel_count(tensor: Tensor | None) -> int:
    """Number of quantization scales (0 when unquantized)."""
    if tensor is None or tensor.quantization is None:
        return 0
    return tensor.quantization.channel_count


def per_channel_arrays(count: int, *, written: OverTemps | None = None) -> list[Event]:
    """The int32 multiplier and shift arrays a quantized kernel keeps per output channel
    (`written`: filled before the kernel's temp tensors are released, and what Prepare reads of
    them afterwards)."""
    return [
        Persistent(4 * count, "per-channel multipliers", written),
        Persistent(4 * count, "per-channel shifts", written),
    ]


def op_data(layout: Struct | int, what: str = "OpData") -> RuleFunction:
    """An Init that allocates one persistent struct (a Struct, or bytes measured on the wheel)."""

    def init(context: KernelContext) -> Events:
        nbytes = layout if isinstance(layout, int) else context.sizeof(layout)
        return [Persistent(nbytes, what)]

    return init
