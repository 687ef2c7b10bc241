"""TFLM tensor sizes: the element sizes TFLM knows, and a tensor's bytes.

Rules: docs/runtime-rules.md §T2.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from arenalens.ir import Tensor

# Element sizes TFLM knows (memory_helpers.cc — TfLiteTypeSizeOf); INT4 is not packed.
_ELEMENT_BYTES = {
    "INT8": 1, "UINT8": 1, "BOOL": 1, "INT4": 1,
    "INT16": 2, "UINT16": 2, "FLOAT16": 2, "BFLOAT16": 2,
    "FLOAT32": 4, "INT32": 4, "UINT32": 4, "RESOURCE": 4,
    "INT64": 8, "UINT64": 8, "FLOAT64": 8, "COMPLEX64": 8,
    "COMPLEX128": 16,
}  # fmt: skip
TFLM_ELEMENT_BYTES: Mapping[str, int] = MappingProxyType(_ELEMENT_BYTES)


def tflm_tensor_bytes(tensor: Tensor, shape: tuple[int, ...] | None = None) -> int:
    """Bytes TFLM gives a tensor: product of `shape` × TfLiteTypeSizeOf (0 for unknown types).

    `shape` replaces the flatbuffer's, for outputs whose dims a kernel rewrote in Prepare; a
    negative dim gives 0 bytes."""
    # (The plain dict and one loop over the dims that multiplies as it checks, not the read-only
    # view, min() and prod(): builtin calls cost as much as the rest here, once per planned
    # tensor of every check.)
    element = _ELEMENT_BYTES.get(tensor.dtype.name)
    if element is None:
        return 0
    nbytes = element
    for dim in tensor.shape if shape is None else shape:
        if dim < 0:
            return 0
        nbytes *= dim
    return nbytes
