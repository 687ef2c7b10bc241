"""The nn family's shared pieces: the scan width of temp-overlap kernels, quantizations, and
weights and bias constants per type."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arenalens.tflite.builder import QuantizationSpec, quantization
from tests.conformance.models import Const

# Temp-overlap kernels: how far above its bisection result the measurement keeps looking.
SCAN = 96

Q8 = quantization(0.1, 0)
Q16 = quantization(1 / 32768, 0)
NUMPY_TYPES = {
    "FLOAT32": np.float32,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "UINT8": np.uint8,
}


def activation_quantization(dtype: str) -> QuantizationSpec | None:
    return {"INT8": Q8, "INT16": Q16, "UINT8": quantization(0.1, 128)}.get(dtype)


def scale_list(count: int) -> list[float]:
    return [0.05 + 0.001 * i for i in range(count)]


def weights_quantization(
    dtype: str, channels: int, per_channel: int, axis: int
) -> QuantizationSpec | None:
    """Per-tensor (0.1) or per-channel scales for integer weights; None for float."""
    if dtype == "FLOAT32":
        return None
    if per_channel:
        return quantization(scale_list(per_channel), 0, axis=axis)
    return quantization(0.1, 0)


def weights_const(shape: Sequence[int], dtype: str, q: QuantizationSpec | None) -> Const:
    if dtype == "INT4":
        count = int(np.prod(shape))
        return Const(bytes((count + 1) // 2), "INT4", q, tuple(shape))
    return Const(np.ones(tuple(shape), NUMPY_TYPES[dtype]), dtype, q)


def bias_const(
    count: int, dtype: str, activation: str, weights_q: QuantizationSpec | None
) -> Const:
    """A bias whose scale is input scale x weight scale (the kernels check it)."""
    if dtype == "FLOAT32":
        return Const(np.zeros(count, np.float32), "FLOAT32")
    input_q = activation_quantization(activation)
    in_scale = input_q.scales[0] if input_q else 1.0
    w_scales = weights_q.scales if weights_q else (1.0,)
    q = quantization([in_scale * s for s in w_scales], 0)
    return Const(np.zeros(count, NUMPY_TYPES[dtype]), dtype, q)


def default_bias_type(dtype: str) -> str:
    return {"FLOAT32": "FLOAT32", "INT8": "INT32", "INT16": "INT64", "UINT8": "INT32"}[dtype]
