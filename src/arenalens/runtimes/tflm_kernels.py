"""TFLM kernel memory: operator → the tail and temp allocations its parser, Init and Prepare make.

One row per kernel of the `tflite_micro` pip package (reference kernels, 64-bit host, built with
`USE_TFLM_COMPRESSION`), naming its source under tflite-micro `tensorflow/lite/micro/kernels/`:

* `builtin_data`: the parsed options struct (`TfLite*Params`), placed in the tail by
  *MicroBuiltinDataAllocator* with the struct's own alignment (*flatbuffer_conversions.cc*).
* `init_bytes`: the OpData the kernel's Init takes with `AllocatePersistentBuffer` (16-aligned,
  counted as "Persistent buffer data").
* `prepare`: what Prepare does, in order: temp TfLiteTensor structs (with their quantization
  copies) for the tensors it inspects, and further persistent buffers (per-channel multipliers and
  shifts, lookup tables, copied dims).

The sizes were read from the kernel sources and confirmed against the real interpreter: every
model of ../shared/models reproduces its printed tail and categories (tests/test_tflm_reference.py).
Kernels without a row get `DEFAULT_KERNEL`, an estimate, and the budget says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.ir import Tensor
from arenalens.runtimes.tflm_scratch import OperatorView


@dataclass(frozen=True, slots=True)
class PersistentBytes:
    """A kernel's `AllocatePersistentBuffer(nbytes)` (tail, 16-aligned)."""

    nbytes: int
    what: str


@dataclass(frozen=True, slots=True)
class TempTensor:
    """A kernel's `AllocateTempInputTensor` / `AllocateTempOutputTensor` (temp, freed per op)."""

    tensor: Tensor


@dataclass(frozen=True, slots=True)
class TempBytes:
    """A kernel's `AllocateTempBuffer(nbytes, alignment)`."""

    nbytes: int
    alignment: int


KernelAllocation = PersistentBytes | TempTensor | TempBytes
PrepareFunction = Callable[[OperatorView], Sequence[KernelAllocation]]


@dataclass(frozen=True, slots=True)
class KernelMemoryUse:
    """What one operator allocates during setup."""

    builtin_data: tuple[int, int] | None  # (bytes, alignment) of its parsed options
    init: tuple[KernelAllocation, ...]
    prepare: tuple[KernelAllocation, ...]
    known: bool  # False when the kernel has no row and the default estimate was used


@dataclass(frozen=True, slots=True)
class KernelMemory:
    """One kernel's setup allocations (64-bit host)."""

    opcode: str
    kernel_file: str
    builtin_data: tuple[int, int] | None
    init_bytes: int | None
    prepare: PrepareFunction
    init_extra: Callable[[OperatorView], Sequence[int]] | None = None


def _inputs_then_outputs(view: OperatorView) -> list[KernelAllocation]:
    """The common Prepare: a temp tensor for every present input, then every output."""
    found: list[KernelAllocation] = []
    for position in range(len(view.operator.inputs)):
        tensor = view.input(position)
        if tensor is not None:
            found.append(TempTensor(tensor))
    for position in range(len(view.operator.outputs)):
        tensor = view.output(position)
        if tensor is not None:
            found.append(TempTensor(tensor))
    return found


def _temps(view: OperatorView, *slots: tuple[str, int]) -> list[KernelAllocation]:
    """Temp tensors for ("in" | "out", position) slots, skipping omitted ones."""
    found: list[KernelAllocation] = []
    for role, position in slots:
        tensor = view.input(position) if role == "in" else view.output(position)
        if tensor is not None:
            found.append(TempTensor(tensor))
    return found


def _channels(tensor: Tensor | None, axis: int) -> int:
    if tensor is None or not tensor.shape:
        return 0
    return tensor.shape[axis] if -len(tensor.shape) <= axis < len(tensor.shape) else 0


def _is_per_channel(tensor: Tensor | None) -> bool:
    return (
        tensor is not None
        and tensor.quantization is not None
        and tensor.quantization.channel_count > 1
    )


def _per_channel_arrays(channels: int) -> list[KernelAllocation]:
    return [
        PersistentBytes(4 * channels, "per-channel multipliers"),
        PersistentBytes(4 * channels, "per-channel shifts"),
    ]


def _fully_connected(view: OperatorView) -> list[KernelAllocation]:
    steps = _temps(view, ("in", 0), ("in", 1), ("in", 2), ("out", 0))
    weights = view.input(1)
    # CalculateOpDataFullyConnected: per-channel arrays only for per-channel quantized weights.
    input_type = view.input(0).dtype.name if view.input(0) is not None else ""
    if input_type != "FLOAT32" and _is_per_channel(weights) and weights is not None:
        steps.extend(_per_channel_arrays(weights.quantization.channel_count))  # type: ignore[union-attr]
    return steps


def _convolution(view: OperatorView) -> list[KernelAllocation]:
    # ConvPrepare: output, input, filter; per-channel arrays sized by the filter's dim 0 (conv)
    # or dim 3 (depthwise), whatever the types; then CalculateOpData fetches all four again.
    axis = 3 if view.operator.opcode == "DEPTHWISE_CONV_2D" else 0
    steps = _temps(view, ("out", 0), ("in", 0), ("in", 1))
    steps.extend(_per_channel_arrays(_channels(view.input(1), axis)))
    steps.extend(_temps(view, ("in", 0), ("in", 1), ("in", 2), ("out", 0)))
    return steps


def _transpose_conv(view: OperatorView) -> list[KernelAllocation]:
    # TransposeConvPrepare: output, input (#2), filter (#1); per-channel arrays (filter dim 0);
    # CalculateOpData fetches input, filter, bias, output again for non-float types.
    steps = _temps(view, ("out", 0), ("in", 2), ("in", 1))
    steps.extend(_per_channel_arrays(_channels(view.input(1), 0)))
    input_type = view.input(2).dtype.name if view.input(2) is not None else ""
    if input_type != "FLOAT32":
        steps.extend(_temps(view, ("in", 2), ("in", 1), ("in", 3), ("out", 0)))
    return steps


def _softmax(view: OperatorView) -> list[KernelAllocation]:
    steps = _temps(view, ("in", 0), ("out", 0))
    input_type = view.input(0).dtype.name if view.input(0) is not None else ""
    if input_type == "INT16":
        # Two int16 lookup tables of kInt16LUTArraySize (513) entries.
        steps.extend([PersistentBytes(2 * 513, "exp LUT"), PersistentBytes(2 * 513, "1/(1+x) LUT")])
    return steps


def _row(
    opcode: str,
    kernel_file: str,
    builtin_data: tuple[int, int] | None,
    init_bytes: int | None,
    prepare: PrepareFunction = _inputs_then_outputs,
) -> KernelMemory:
    return KernelMemory(opcode, kernel_file, builtin_data, init_bytes, prepare)


KERNELS: Mapping[str, KernelMemory] = MappingProxyType(
    {
        row.opcode: row
        for row in (
            _row("FULLY_CONNECTED", "fully_connected.cc", (32, 4), 72, _fully_connected),
            _row("CONV_2D", "conv.cc, conv_common.cc", (28, 4), 80, _convolution),
            _row("DEPTHWISE_CONV_2D", "depthwise_conv.cc", (28, 4), 80, _convolution),
            _row("TRANSPOSE_CONV", "transpose_conv.cc", (20, 4), 80, _transpose_conv),
            _row("SOFTMAX", "softmax.cc, softmax_common.cc", (4, 4), 48, _softmax),
        )
    }
)

DEFAULT_KERNEL = KernelMemory("*", "(no row: estimate)", (32, 4), 64, _inputs_then_outputs)


def kernel_memory(view: OperatorView) -> KernelMemoryUse:
    """One operator → its builtin options, Init and Prepare allocations."""
    row = KERNELS.get(view.operator.opcode)
    known = row is not None
    kernel = row if row is not None else DEFAULT_KERNEL
    init: list[KernelAllocation] = []
    if kernel.init_bytes is not None:
        init.append(PersistentBytes(kernel.init_bytes, "OpData"))
    if kernel.init_extra is not None:
        init.extend(PersistentBytes(n, "Init state") for n in kernel.init_extra(view))
    builtin = None if view.operator.is_custom else kernel.builtin_data
    return KernelMemoryUse(builtin, tuple(init), tuple(kernel.prepare(view)), known)
