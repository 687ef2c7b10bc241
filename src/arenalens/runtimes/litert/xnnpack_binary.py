"""Which 8-bit ADD, SUB and MUL the XNNPACK delegate takes (xnnpack_delegate.cc
VisitBinaryNode): every tensor per-tensor affine quantized (CheckTensorFloatOrQUInt8Type: one
scale, quantized dimension 0; an unsigned tensor a zero point too), the three of one type, and
the scales in the delegate's ranges, compared in float32 (CheckTensorsInputOutputScale: each
input's scale / the output's in [1/1024, 256) for ADD and SUB;
CheckTensorsInputProductOutputScale: the inputs' product / the output's in [1/65536, 256) for
MUL). A node that fails any of them stays with the builtin kernel, whose own Prepare then runs
(prepare_refusals: an 8-bit ADD without scales aborts there, as the upstream
litert/test/testdata/blockwise_quantized.tflite does under both delegates)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arenalens.ir import Operator, Subgraph, Tensor

_EIGHT_BIT = frozenset({"INT8", "UINT8"})
_RATIO_RANGES = {
    "ADD": (np.float32(1.0 / 1024.0), np.float32(256.0)),
    "SUB": (np.float32(1.0 / 1024.0), np.float32(256.0)),
    "MUL": (np.float32(1.0 / 65536.0), np.float32(256.0)),
}


def takes_binary(subgraph: Subgraph, operator: Operator) -> bool:
    """The delegate's type, quantization and scale checks on an ADD, SUB or MUL (float ones
    pass them all)."""
    indices = (*operator.inputs[:2], *operator.outputs[:1])
    if len(indices) != 3 or min(indices) < 0:
        return False
    first, second, output = (subgraph.tensors[i] for i in indices)
    if not any(t.dtype.name in _EIGHT_BIT for t in (first, second, output)):
        return True
    if not all(_per_tensor(t) for t in (first, second, output)):
        return False
    if not first.dtype.name == second.dtype.name == output.dtype.name:
        return False
    low, high = _RATIO_RANGES[operator.opcode]
    out = _scale(output)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if operator.opcode == "MUL":
            ratios = [np.float32(_scale(first) * _scale(second)) / out]
        else:
            ratios = [_scale(first) / out, _scale(second) / out]
        return all(low <= np.float32(ratio) < high for ratio in ratios)


def _per_tensor(tensor: Tensor) -> bool:
    """An 8-bit tensor with one affine scale on dimension 0 (and a zero point if unsigned)."""
    if tensor.dtype.name not in _EIGHT_BIT:
        return False
    quantization = tensor.quantization
    if quantization is None or quantization.scale is None or quantization.channel_count != 1:
        return False
    if quantization.axis != 0:
        return False
    return tensor.dtype.name == "INT8" or quantization.zero_point is not None


def _scale(tensor: Tensor) -> np.float32:
    quantization = tensor.quantization
    assert quantization is not None and quantization.scale is not None
    return np.float32(quantization.scale)


CHECKS: dict[str, Callable[[Subgraph, Operator], bool]] = {
    opcode: takes_binary for opcode in _RATIO_RANGES
}
