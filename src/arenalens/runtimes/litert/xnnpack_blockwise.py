"""A FULLY_CONNECTED with int4 weights in blockwise quantization and a float input under XNNPACK,
from LiteRT's and XNNPACK's sources (*tflite/delegates/xnnpack/xnnpack_delegate.cc*:
VisitFullyConnectedNode, GetXNNPackDatatype, CheckFp16Scale; XNNPACK
*src/operators/fully-connected-nc.c*: create_fully_connected_nc, the qb4w variants).

* **Taken** as a dynamically quantized operator (its input quantized at run time, as a hybrid
  int8 one): int4 weights of rank 2 with an even depth, fp16 scales (one per block of each
  output channel: elements / scales = the block size), defined as a qbint4 value.
* **Scales** converted from fp16 to bf16 while the weights are packed
  (`xnn_create_fully_connected_nc_qd8_f32_qb4w_f16_scales`: one malloc'd block of two bytes per
  scale, freed once the operator exists): part of the build moment (heap_build).
* **Packed** (qd8_f32_qb4w, one 64-aligned block): per output channel, to the GEMM's nr, the
  depth to kr × sr × planes in nibbles (half a byte each), a float bias, a float of extra
  bytes and one bf16 scale per block.

Modelled for blocks of 32, XNNPACK's smallest (XNN_MIN_BLOCKSIZE), with whole GEMM tiles: the
packing is then the same on every tile XNNPACK selects (nr up to 64, kr × sr × planes up to
32). Other block sizes, and int4 weights of one scale per channel, stay bounds (the partition
is not modelled for them).
"""

from __future__ import annotations

from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.runtimes.litert import blockwise

MODELLED_BLOCK = 32  # XNN_MIN_BLOCKSIZE
_WIDEST_CHANNEL_TILE = 64  # the largest nr of XNNPACK's qb4w GEMMs
_BIAS_BYTES = 4  # a float bias per output channel
_EXTRA_BYTES = 4  # the qx8_f32_qb4w variant's extra_weights_bytes: sizeof(float)
_SCALE_BYTES = 2  # one bf16 scale per block


def int4_weights(subgraph: Subgraph, operator: Operator) -> Tensor | None:
    """The constant int4 weights of a FULLY_CONNECTED with a float input, else None."""
    if operator.opcode != "FULLY_CONNECTED" or len(operator.inputs) < 2:
        return None
    if min(operator.inputs[:2]) < 0:
        return None
    data, weights = (subgraph.tensors[index] for index in operator.inputs[:2])
    if data.dtype.name != "FLOAT32" or weights.dtype.name != "INT4" or not weights.has_data:
        return None
    return weights


def takes(model: Model, subgraph: Subgraph, operator: Operator) -> bool | None:
    """Whether the delegate takes an int4 FULLY_CONNECTED of float input: True where it does
    and the packing is modelled, None where it may and is not (see the module docstring),
    False where it refuses (an odd depth, scales that are not fp16 or do not divide the
    weights into blocks)."""
    weights = int4_weights(subgraph, operator)
    if weights is None or len(weights.shape) != 2:
        return None
    details = blockwise.blockwise(model, subgraph.index, weights.index)
    if details is None:
        return None  # one scale per channel (qcint4): not modelled
    if not 0 <= details.scales < len(subgraph.tensors):
        return False
    scales = subgraph.tensors[details.scales]
    output_channels, depth = weights.shape
    if depth % 2 or scales.dtype.name != "FLOAT16" or not scales.element_count:
        return False
    if weights.element_count // scales.element_count != details.block_size:
        return False
    if details.block_size != MODELLED_BLOCK or depth % MODELLED_BLOCK:
        return None
    return output_channels % _WIDEST_CHANNEL_TILE == 0 or None


def packed_request(subgraph: Subgraph, operator: Operator) -> int | None:
    """Bytes XNNPACK asks for to pack an int4 blockwise FULLY_CONNECTED's weights, for blocks
    of 32 (None: not an int4 one)."""
    weights = int4_weights(subgraph, operator)
    if weights is None or len(weights.shape) != 2:
        return None
    output_channels, depth = weights.shape
    per_channel = depth // 2 + _BIAS_BYTES + _EXTRA_BYTES
    per_channel += (depth // MODELLED_BLOCK) * _SCALE_BYTES
    columns = -(-output_channels // _WIDEST_CHANNEL_TILE) * _WIDEST_CHANNEL_TILE
    return -(-columns * per_channel // 64) * 64


def bf16_scales_request(subgraph: Subgraph, operator: Operator) -> int:
    """The bf16 copy of the scales made while the weights are packed (0: not an int4 one)."""
    weights = int4_weights(subgraph, operator)
    if weights is None or len(weights.shape) != 2:
        return 0
    output_channels, depth = weights.shape
    return _SCALE_BYTES * output_channels * (depth // MODELLED_BLOCK)
