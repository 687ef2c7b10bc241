"""What the CMSIS-NN kernels' Prepare functions check: tensors → TFLM's refusal, worded as TFLM
prints it (`TF_LITE_ENSURE*` in tensorflow/lite/micro/micro_log / core/c/common.h: "file:line
cond was not true.", "file:line a != b (x != y)"; line numbers left out, they vary by commit)."""

from __future__ import annotations

from arenalens.ir import Tensor
from arenalens.runtimes.tflm.kernels.base import Refusal

# TfLiteType (tensorflow/lite/core/c/c_api_types.h): the numbers TFLM prints for types.
TYPE_NUMBERS = {
    "FLOAT32": 1, "INT32": 2, "UINT8": 3, "INT64": 4, "STRING": 5, "BOOL": 6, "INT16": 7,
    "COMPLEX64": 8, "INT8": 9, "FLOAT16": 10, "FLOAT64": 11, "COMPLEX128": 12, "UINT64": 13,
    "RESOURCE": 14, "VARIANT": 15, "UINT32": 16, "UINT16": 17, "INT4": 18, "BFLOAT16": 19,
}  # fmt: skip

HYBRID = "Hybrid models are not supported on TFLite Micro."
UNSUPPORTED_INPUT = "Input data type not supported"
# The (input, filter) type pairs CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED accept.
WEIGHT_TYPES = {"FLOAT32": ("FLOAT32",), "INT16": ("INT8",), "INT8": ("INT8", "INT4")}


def type_of(tensor: Tensor | None) -> str:
    """The tensor's type name ('' when absent)."""
    return "" if tensor is None else tensor.dtype.name


def type_number(tensor: Tensor | None) -> int:
    """TfLiteType value of a tensor (kTfLiteNoType 0 when absent)."""
    return TYPE_NUMBERS.get(type_of(tensor), 0)


def ensure(file: str, condition: str) -> Refusal:
    """TF_LITE_ENSURE(condition) failing in Prepare."""
    return Refusal(f"{file} {condition} was not true.")


def ensure_eq(file: str, left: str, right: str, left_value: object, right_value: object) -> Refusal:
    """TF_LITE_ENSURE_EQ(left, right) failing in Prepare."""
    return Refusal(f"{file} {left} != {right} ({left_value} != {right_value})")


def is_quantized(tensor: Tensor | None) -> bool:
    """kTfLiteAffineQuantization: TFLM copies quantization only when the tensor has both scales
    and zero points."""
    return (
        tensor is not None
        and tensor.quantization is not None
        and tensor.quantization.zero_point is not None
    )


def scale_count(tensor: Tensor | None) -> int:
    """affine_quantization->scale->size (0 when not quantized)."""
    if tensor is None or not is_quantized(tensor) or tensor.quantization is None:
        return 0
    return tensor.quantization.channel_count


def scale_of(tensor: Tensor | None) -> float:
    """TfLiteTensor.params.scale: the first scale of a quantized tensor, else 0."""
    if tensor is None or tensor.quantization is None or not is_quantized(tensor):
        return 0.0
    return tensor.quantization.scale or 0.0


def zero_point_of(tensor: Tensor | None) -> int:
    """TfLiteTensor.params.zero_point: the first zero point of a quantized tensor, else 0."""
    if tensor is None or tensor.quantization is None or not is_quantized(tensor):
        return 0
    return tensor.quantization.zero_point or 0


def is_constant(tensor: Tensor | None) -> bool:
    """IsConstantTensor: the tensor's data lives in the model (kTfLiteMmapRo)."""
    return tensor is not None and tensor.has_data


def types_and_hybrid(
    file: str, source: Tensor | None, weights: Tensor | None, output: Tensor | None
) -> list[Refusal]:
    """The checks CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED start with: input type ==
    output type, a supported input type, and weights of the matching type."""
    if type_of(source) != type_of(output):
        return [
            ensure_eq(file, "input->type", "output->type", type_number(source), type_number(output))
        ]
    if type_of(source) not in WEIGHT_TYPES:
        return [Refusal(UNSUPPORTED_INPUT)]
    if type_of(weights) not in WEIGHT_TYPES[type_of(source)]:
        return [Refusal(HYBRID)]
    return []


def int16_zero_points(file: str, *tensors: tuple[str, Tensor | None]) -> list[Refusal]:
    """`TF_LITE_ENSURE_EQ(x->params.zero_point, 0)` for int16 kernels, first failing one."""
    for name, tensor in tensors:
        zero_point = zero_point_of(tensor)
        if zero_point != 0:
            return [ensure_eq(file, f"{name}->params.zero_point", "0", zero_point, 0)]
    return []
