"""Helpers kernel rules share: shapes, per-channel arrays, OpData (refusals: `refusals`)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from struct import unpack_from
from typing import TypeVar

from arenalens.analysis.inplace import InPlace
from arenalens.ir import Tensor
from arenalens.memo import forgettable
from arenalens.runtimes.tflm.abi import Field, Struct, struct
from arenalens.runtimes.tflm.kernels import base

# The kernels that may write their output over their input (`optimize --inplace`): one loop over
# the elements, each read before the same element is written; binary ones only without broadcast.
IN_PLACE_UNARY = InPlace("one loop output[i] = f(input[i]): each element read before it is written")
IN_PLACE_BINARY = InPlace(
    "ElementWise loop without broadcast: output[i] = f(input1[i], input2[i]), each element read "
    "before the same element is written",
    inputs=(0, 1),
    same_shape=True,
)
# The operands of most kernels: one data input, or two (broadcast against each other).
UNARY = base.operands("input")
BINARY = base.operands("input1", "input2")


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


def padding(in_size: int, kernel: int, stride: int, dilation: int, *, same: bool) -> int:
    """ComputePaddingHeightWidth (padding.h) for one axis: half the total SAME padding, rounded
    down; 0 for VALID and whenever TFLM's checked arithmetic rejects the arguments."""
    if stride <= 0 or dilation <= 0 or kernel <= 0 or in_size < 0:
        return 0
    effective = (kernel - 1) * dilation + 1
    out = (in_size + stride - 1) // stride if same else (in_size + stride - effective) // stride
    if out < 0:
        return 0
    total = (out - 1) * stride + effective - in_size
    return total // 2 if total > 0 else 0  # max(0, total) // 2, without a call: every conv


def per_channel_count(tensor: Tensor | None) -> int:
    """Number of quantization scales (0 when unquantized)."""
    if tensor is None or tensor.quantization is None:
        return 0
    return tensor.quantization.channel_count


def per_channel_arrays(
    count: int, *, written: base.OverTemps | None = None
) -> tuple[base.Event, ...]:
    """The int32 multiplier and shift arrays a quantized kernel keeps per output channel
    (`written`: filled before the kernel's temp tensors are released, and what Prepare reads of
    them afterwards)."""
    if written is None:
        arrays = _ARRAYS.get(count)
        if arrays is not None:
            return arrays
    arrays = (
        base.new_persistent((4 * count, "per-channel multipliers", written)),
        base.new_persistent((4 * count, "per-channel shifts", written)),
    )
    if written is None and len(_ARRAYS) < _ARRAYS_KEPT:
        _ARRAYS[count] = arrays
    return arrays


# Every convolution's two arrays, by channel count: immutable values of the count alone (no
# model's), made once per process; a model has a handful of channel counts.
_ARRAYS: dict[int, tuple[base.Event, ...]] = {}
_ARRAYS_KEPT = 4096


Facts = TypeVar("Facts")


class ScaleFree(dict[Hashable, Facts]):
    """A kernel's scale-free facts by value: what its Prepare computes from its operands'
    shapes and types, its options and the build alone (shape checks, scratch sizes), as a
    function of one hashable key holding exactly those. Operators with the same key (a
    repeated block of a model, a search stream's candidates, which share layer configurations
    but not scales) get the facts computed once; the quantization checks, which read scales,
    still run per operator. Bounded (the oldest entries go first), and forgotten by
    `clear_caches` with the other caches of models' values."""

    __slots__ = ("capacity",)

    def __init__(self, capacity: int = 1024) -> None:
        super().__init__()
        self.capacity = capacity
        forgettable(self.clear)

    def of(self, key: Hashable, compute: Callable[[Hashable], Facts]) -> Facts:
        """`compute(key)`, remembered."""
        try:
            facts = self.get(key)
        except TypeError:  # a key that does not hash (an odd option value): computed each time
            return compute(key)
        if facts is None:
            facts = self[key] = compute(key)
            if len(self) > self.capacity:
                del self[next(iter(self))]
        return facts


def op_data(layout: Struct | int, what: str = "OpData") -> base.RuleFunction:
    """An Init that allocates one persistent struct (a Struct, or bytes measured on the wheel)."""

    def init(context: base.KernelContext) -> base.Events:
        nbytes = layout if isinstance(layout, int) else context.sizeof(layout)
        return [base.Persistent(nbytes, what)]

    base.BUILD_ONLY_INITS.add(init)
    return init


def type_of(tensor: Tensor | None) -> str:
    """The tensor's type name ('' when absent)."""
    return "" if tensor is None else tensor.dtype.name


def is_constant(tensor: Tensor | None) -> bool:
    """IsConstantTensor: the tensor's data lives in the model (kTfLiteMmapRo)."""
    return tensor is not None and tensor.has_data


def is_quantized(tensor: Tensor | None) -> bool:
    """TFLM's kTfLiteAffineQuantization: the tensor has a scale *and* a zero point (otherwise
    its TfLiteTensor says kTfLiteNoQuantization, with scale 0 and zero point 0)."""
    return (
        tensor is not None
        and tensor.quantization is not None
        and tensor.quantization.zero_point is not None
    )


# The three below read `is_quantized` inline: kernels ask them for every operand.


def scale_of(tensor: Tensor | None) -> float:
    """TfLiteTensor.params.scale: the first scale of a quantized tensor, else 0."""
    quantization = None if tensor is None else tensor.quantization
    if quantization is None or quantization.zero_point is None:
        return 0.0
    return quantization.scale or 0.0


def scale_count(tensor: Tensor | None) -> int:
    """affine_quantization->scale->size: 0 when the tensor is not quantized (`is_quantized`)."""
    quantization = None if tensor is None else tensor.quantization
    if quantization is None or quantization.zero_point is None:
        return 0
    return quantization.channel_count


def zero_point_of(tensor: Tensor | None) -> int:
    """TfLiteTensor.params.zero_point: the first zero point of a quantized tensor, else 0."""
    quantization = None if tensor is None else tensor.quantization
    if quantization is None or quantization.zero_point is None:
        return 0
    return quantization.zero_point


def constant_ints(context: base.KernelContext, tensor: Tensor | None) -> tuple[int, ...] | None:
    """The values of a constant integer tensor (little-endian, as TFLM reads them), or None when
    the tensor is absent, not constant, or not of an integer type."""
    widths = {"INT8": 1, "INT16": 2, "INT32": 4, "INT64": 8}
    width = widths.get(tensor.dtype.name, 0) if tensor is not None else 0
    if tensor is None or not tensor.has_data or not width:
        return None
    data = context.model.buffer_bytes(tensor.buffer)
    count = min(tensor.element_count, len(data) // width)
    return tuple(
        int.from_bytes(data[i * width : (i + 1) * width], "little", signed=True)
        for i in range(count)
    )


def setup_refused(events: base.Events) -> bool:
    """True when the events already make the kernel refuse the operator at setup."""
    return any(isinstance(e, base.Refusal) and e.phase == base.SETUP for e in events)


def rank(tensor: Tensor | None) -> int:
    """NumDimensions: the flatbuffer rank (0 when absent)."""
    return 0 if tensor is None else len(tensor.shape)


def rewritten_dims(
    context: base.KernelContext, position: int, dims: tuple[int, ...]
) -> list[base.Event]:
    """`CreateWritableTensorDimsWithCopy` then new dims for an output: a persistent
    TfLiteIntArray of the output's *flatbuffer* rank, and the dims TFLM plans it with."""
    return [
        base.Persistent(4 + 4 * rank(context.output(position)), "output dims copy"),
        base.OutputShape(position, dims),
    ]


def int32_values(
    context: base.KernelContext, tensor: Tensor | None, *, elements: int = -1
) -> tuple[int, ...]:
    """A constant tensor's data read as little-endian int32 whatever its type, as kernels that
    call `GetTensorData<int32_t>` on paddings, permutations or strides do (() when absent;
    `elements`: the tensor's element count, when the caller has it)."""
    if tensor is None or not tensor.has_data:
        return ()
    data = context.model.buffer_bytes(tensor.buffer)
    count = tensor.element_count if elements < 0 else elements
    if count > len(data) // 4:  # noqa: PLR1730 - `min`, without its call
        count = len(data) // 4
    return unpack_from(f"<{count}i", data)  # every value in one C call


# types.h ArithmeticParams: int64 bounds (8-aligned on Arm EABI too) and int broadcast_shape[5].
ARITHMETIC_PARAMS = struct(
    "ArithmeticParams",
    ("broadcast_category", "uint8"),  # enum class BroadcastableOpCategory : uint8_t
    ("input1_offset", "int32"),
    ("input2_offset", "int32"),
    ("output_offset", "int32"),
    ("output_multiplier", "int32"),
    ("output_shift", "int"),
    ("left_shift", "int"),
    ("input1_multiplier", "int32"),
    ("input1_shift", "int"),
    ("input2_multiplier", "int32"),
    ("input2_shift", "int"),
    ("quantized_activation_min", "int32"),
    ("quantized_activation_max", "int32"),
    ("float_activation_min", "float"),
    ("float_activation_max", "float"),
    ("int64_activation_min", "int64"),
    ("int64_activation_max", "int64"),
    ("int16_activation_min", "int16"),
    ("int16_activation_max", "int16"),
    Field("broadcast_shape", "int", 5),
)
