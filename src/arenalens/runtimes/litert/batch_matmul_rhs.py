"""What LiteRT's builtin BATCH_MATMUL keeps from its first Eval for its transposed RHS
(batch_matmul.cc GetTempRhs, called by Eval whenever `adj_y` is false): the temporary takes
the RHS's dims (a copy replacing the block it had: no growth) and, for an 8- or 16-bit RHS with
affine quantization, a TfLiteAffineQuantization of its own (24 B) with copies of the RHS's
zero points and scales (TfLiteIntArrayCopy / TfLiteFloatArrayCopy: 4 + 4 n bytes each for n
scales). Hybrid (float x int8) and integer (int8 x int8, int16 x int8) matmuls alike; the
upstream static_w8_a16_quantized_*_einsum.tflite (int16 x int8, 128 scales) was 0.9993x after
its first invoke while only the hybrid one was counted."""

from __future__ import annotations

from collections.abc import Iterator

from arenalens.ir import Model
from arenalens.runtimes.litert import glibc

_QUANTIZED_RHS = frozenset({"INT8", "INT16"})
AFFINE_QUANTIZATION_BYTES = 24  # sizeof(TfLiteAffineQuantization)


def rhs_copy_blocks(model: Model, subgraph: int, operator: int, opcode: str) -> Iterator[int]:
    """Usable bytes of the blocks a node's first Eval keeps for its transposed RHS (the node of
    `operator` in `subgraph`, running `opcode`)."""
    if opcode != "BATCH_MATMUL":
        return
    graph = model.subgraphs[subgraph]
    node = graph.operators[operator]
    if node.options.get("adj_y") or len(node.inputs) < 2 or node.inputs[1] < 0:
        return
    rhs = graph.tensors[node.inputs[1]]
    quantization = rhs.quantization
    if rhs.dtype.name not in _QUANTIZED_RHS or quantization is None:
        return
    scales = max(quantization.channel_count, 1)
    for request in (AFFINE_QUANTIZATION_BYTES, 4 + 4 * scales, 4 + 4 * scales):
        yield glibc.usable(request)
