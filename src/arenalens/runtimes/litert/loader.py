"""What LiteRT's InterpreterBuilder refuses in a tensor when it loads a model: its quantization,
and its size.

`InterpreterBuilder::ParseTensors` parses every tensor's `QuantizationParameters`
(`ParseQuantization`, tflite/core/interpreter_builder.cc) before any kernel or delegate runs, so
a refusal here stops `Interpreter(...)` with or without XNNPACK. TFLM never makes these checks
(its own person_detect carries quantized_dimension 3 on rank-1 biases, written by TOCO): a model
TFLM runs can be one LiteRT will not load. An affine quantization with scales is checked, in
this order, and the first failure is the tensor's:

1. one zero point per scale (`QuantizationParam has Z zero_point values and S scale values`;
   an absent zero point vector is refused too, as `non-null scale but null zero_point`);
2. `quantized_dimension` in [0, rank), where a scalar's range is [0, inf) (`quantized_dimension
   must be in range [0, R). Was A.`);
3. one scale, or as many as the tensor's size along that axis (`num_scales must be 1 for
   per-layer quantization, or N for per-axis quantization, but got S.`).

A table without scales (or with an empty scale vector) is accepted as it is.

Then each tensor's size (`size_refusals`): `SetTensorParametersReadOnly` (a tensor whose buffer
holds bytes) and `SetTensorParametersReadWrite` (any other) count its bytes with `BytesRequired`
(all but string, resource and variant tensors; a sparse constant is not counted), which the
2.3.0 wheel's util.cc refuses for any negative dimension, a zero before it included ('BytesRequired
number of elements overflowed.'); a constant's buffer must then hold at least that many bytes,
sub-byte types packed (subgraph.cc's `TF_LITE_ENSURE(required_bytes <= bytes)`: more is
accepted). TFLM makes neither check.

Measured on the 2.3.0 wheel with generated models (tests/runtimes/litert/test_litert_loader.py),
each refusal under both delegates.
"""

from __future__ import annotations

from arenalens.ir import Model, Subgraph, Tensor
from arenalens.runtimes import Obstacle

# How many tensor numbers one reason lists before it counts the rest.
TENSORS_LISTED = 8
_FIX = (
    "write the quantization as LiteRT's loader reads it (a current converter does: one zero "
    "point per scale, quantized_dimension the axis the scales run along, 0 for a rank-1 bias)"
)


def quantization_refusals(model: Model) -> tuple[Obstacle, ...]:
    """What LiteRT's loader refuses, one obstacle per subgraph and message (a converter repeats
    its quirk on every bias: person_detect has 14), naming the tensors, in model order."""
    from arenalens.tflite.quantization_counts import quantization_counts  # noqa: PLC0415

    found: list[Obstacle] = []
    for subgraph in model.subgraphs:
        if not any(tensor.quantization is not None for tensor in subgraph.tensors):
            continue
        counts = quantization_counts(model, subgraph.index)
        refused: dict[str, list[Tensor]] = {}
        for tensor, count in zip(subgraph.tensors, counts, strict=True):
            reason = None if count is None else _refusal(tensor, *count)
            if reason is not None:
                refused.setdefault(reason, []).append(tensor)
        found.extend(
            _obstacle(subgraph, tensors, reason, "quantization")
            for reason, tensors in refused.items()
        )
    return tuple(found)


# Types BytesRequired never counts (their bytes are allocated as they are written).
_UNCOUNTED_TYPES = frozenset({"STRING", "RESOURCE", "VARIANT"})
_SIZE_FIX = (
    "write every dimension of a tensor's shape as a size (0 or more: a dynamic size belongs in "
    "shape_signature), and a constant's buffer with all its bytes"
)


def size_refusals(model: Model) -> tuple[Obstacle, ...]:
    """What LiteRT's loader refuses in tensors' sizes, one obstacle per subgraph and message,
    naming the tensors, in model order."""
    found: list[Obstacle] = []
    for subgraph in model.subgraphs:
        refused: dict[str, list[Tensor]] = {}
        for tensor in subgraph.tensors:
            reason = _size_refusal(model, tensor)
            if reason is not None:
                refused.setdefault(reason, []).append(tensor)
        found.extend(
            _obstacle(subgraph, tensors, reason, "a size") for reason, tensors in refused.items()
        )
    return tuple(found)


def _size_refusal(model: Model, tensor: Tensor) -> str | None:
    """LiteRT's BytesRequired message for the tensor's size, or None when it is accepted."""
    if tensor.dtype.name in _UNCOUNTED_TYPES or (tensor.has_data and tensor.has_sparsity):
        return None
    if any(dim < 0 for dim in tensor.shape):
        return "BytesRequired number of elements overflowed."
    if tensor.has_data and tensor.packed_nbytes > model.buffers[tensor.buffer].nbytes:
        return "TF_LITE_ENSURE(required_bytes <= bytes) in SetTensorParametersReadOnly"
    return None


def _refusal(tensor: Tensor, scales: int, zero_points: int) -> str | None:
    """LiteRT's message for the tensor's quantization, or None when the loader accepts it."""
    if not scales:
        return None
    if zero_points != scales:
        return (
            f"QuantizationParam has {zero_points} zero_point values and {scales} scale values. "
            "Must have same number."
        )
    axis = tensor.quantization.axis if tensor.quantization is not None else 0
    rank = len(tensor.shape)
    if axis < 0 or (rank and axis >= rank):
        return f"quantized_dimension must be in range [0, {rank}). Was {axis}."
    if scales != 1 and rank and scales != tensor.shape[axis]:
        return (
            f"num_scales must be 1 for per-layer quantization, or {tensor.shape[axis]} for "
            f"per-axis quantization, but got {scales}."
        )
    return None


def _obstacle(subgraph: Subgraph, tensors: list[Tensor], reason: str, what: str) -> Obstacle:
    """The tensors' obstacle: `what` of theirs LiteRT's loader refuses, with its two messages
    (the check's, then the loader's line for the first tensor)."""
    first = tensors[0]
    if len(tensors) == 1:
        which = f"tensor {first.index} ('{first.name}') has"
    else:
        numbers = ", ".join(str(tensor.index) for tensor in tensors[:TENSORS_LISTED])
        if len(tensors) > TENSORS_LISTED:
            numbers += f", ... and {len(tensors) - TENSORS_LISTED} more"
        which = f"{len(tensors)} tensors ({numbers}; the first '{first.name}') have"
    quantization = what == "quantization"
    loader_line = (
        f"Tensor {first.index} has invalid quantization parameters."
        if quantization
        else f"Tensor {first.index} is invalidly specified in schema."
    )
    return Obstacle(
        f"{which} {what} LiteRT's loader refuses when the interpreter is built "
        f"('{reason}' then '{loader_line}')",
        subgraph=subgraph.index,
        dtype=first.dtype.name,
        fix=_FIX if quantization else _SIZE_FIX,
    )
