"""What LiteRT's InterpreterBuilder refuses in a tensor's quantization before any kernel runs
(interpreter_builder.cc ParseQuantization): `Interpreter(...)` raises under any delegate. For
a tensor with scales: a zero-point vector must be there with as many entries (the reader gives
no zero point for an absent or empty vector), the quantized dimension must lie in [0, rank)
for a tensor of rank 1 or more, and more than one scale must be one per entry of that
dimension. The upstream tflite-micro models/person_detect.tflite has int32 biases of rank 1
quantized along dimension 3 ('quantized_dimension must be in range [0, 1). Was 3.')."""

from __future__ import annotations

from arenalens.ir import Model
from arenalens.runtimes import Obstacle

_FIX = "convert the model again: per-channel quantization along a dimension the tensor has"


def quantization_refusals(model: Model) -> tuple[Obstacle, ...]:
    """One obstacle per subgraph with a tensor the builder refuses (its first such tensor)."""
    found = []
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            quantization = tensor.quantization
            if quantization is None or not quantization.channel_count:
                continue
            rank, axis, scales = len(tensor.shape), quantization.axis, quantization.channel_count
            if quantization.zero_point is None:
                reason = "it has scales but no zero points"
            elif axis < 0 or (rank and axis >= rank):
                reason = f"quantized_dimension must be in range [0, {rank}). Was {axis}."
            elif scales != 1 and rank and scales != tensor.shape[axis]:
                reason = (
                    f"num_scales must be 1 for per-layer quantization, or {tensor.shape[axis]} "
                    f"for per-axis quantization, but got {scales}."
                )
            else:
                continue
            found.append(
                Obstacle(
                    f"tensor {tensor.index} ('{tensor.name}') has quantization the interpreter "
                    f"refuses when it is built (Interpreter(...) raises: {reason})",
                    subgraph=subgraph.index,
                    fix=_FIX,
                )
            )
            break
    return tuple(found)
