"""Blockwise-quantized weights (schema QuantizationDetails BlockwiseQuantization: a scales
tensor, a zero-points tensor and a block size), as LiteRT's builtin FULLY_CONNECTED runs them.

An int4 filter with blockwise quantization under a float input takes fully_connected.cc's
EvalBlockwise4Bit, which holds four std::vectors for the call (freed when it returns): the
scales dequantized to float (one float per scale), the input quantized to int8 (one byte per
input element), and one float scale and one int32 zero point per batch row. The upstream
litert/test/testdata/qwen_fc_blockwise_quantized.tflite (1024 x 1024 int4, 32 blocks per row)
holds 132 KB more at its peak than after its invoke for them; without them its builtin peak was
0.48x the wheel's. Its 128 KiB of scales is a block glibc's mmap threshold decides (counted
mmapped: 1.0197x, labelled); the held-out blockwise ones below it are exact.

The arenalens reader keeps a summary of each tensor's quantization without its details union;
this module reads that union from the file for the few tensors it is asked about."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from arenalens.ir import Model
from arenalens.runtimes.litert import glibc

_BLOCKWISE_DETAILS = 2  # QuantizationDetails.BlockwiseQuantization


@dataclass(frozen=True, slots=True)
class Blockwise:
    """One tensor's blockwise quantization: its scales and zero-points tensors and block size."""

    scales: int
    zero_points: int
    block_size: int


def blockwise(model: Model, subgraph: int, tensor: int) -> Blockwise | None:
    """A tensor's blockwise quantization, None when it has none (or the file is malformed
    there: the reader checked the rest)."""
    data = model.data
    try:
        root = int(struct.unpack_from("<I", data, 0)[0])
        subgraph_table = _vector_table(data, _field(data, root, 2), subgraph)
        tensor_table = _vector_table(data, _field(data, subgraph_table, 0), tensor)
        quantization_field = _field(data, tensor_table, 4)
        if quantization_field is None:
            return None
        quantization = quantization_field + struct.unpack_from("<I", data, quantization_field)[0]
        kind = _field(data, quantization, 4)
        if kind is None or data[kind] != _BLOCKWISE_DETAILS:
            return None
        details_field = _field(data, quantization, 5)
        if details_field is None:
            return None
        details = details_field + struct.unpack_from("<I", data, details_field)[0]
        values = [_int_field(data, details, slot) for slot in range(3)]
    except (struct.error, IndexError, TypeError):
        return None
    return Blockwise(*values)


def eval_blocks(model: Model, subgraph: int, inputs: Sequence[int]) -> tuple[int, ...]:
    """The usable bytes of each block EvalBlockwise4Bit holds during its call for a
    FULLY_CONNECTED with these inputs, all live at once (none unless its filter is int4 with
    blockwise quantization and its input float). Each is one request of a size the model
    fixes, so each is exact but where glibc's mmap threshold decides it (a block of 128 KiB
    or more: the caller's LiveHeap counts those as such)."""
    if len(inputs) < 2 or min(inputs[:2]) < 0:
        return ()
    tensors = model.subgraphs[subgraph].tensors
    data, weights = tensors[inputs[0]], tensors[inputs[1]]
    if data.dtype.name != "FLOAT32" or weights.dtype.name != "INT4" or len(weights.shape) != 2:
        return ()
    details = blockwise(model, subgraph, inputs[1])
    if details is None or not 0 <= details.scales < len(tensors):
        return ()
    scales = tensors[details.scales].element_count
    elements = data.element_count
    batches = elements // weights.shape[1] if weights.shape[1] else 0
    # dequantized_scale, quant_data, input_scales, input_zero_points, in that order.
    requests = (4 * scales, elements, 4 * batches, 4 * batches)
    return tuple(glibc.usable(request) for request in requests if request)


def _field(data: bytes, table: int, slot: int) -> int | None:
    """The position of a table's field `slot`, None when absent."""
    vtable = table - struct.unpack_from("<i", data, table)[0]
    vtable_bytes = struct.unpack_from("<H", data, vtable)[0]
    entry = 4 + 2 * slot
    if entry + 2 > vtable_bytes:
        return None
    offset: int = struct.unpack_from("<H", data, vtable + entry)[0]
    return table + offset if offset else None


def _vector_table(data: bytes, field: int | None, index: int) -> int:
    """The `index`th table of the vector of tables at `field`."""
    if field is None:
        raise IndexError(index)
    vector: int = field + struct.unpack_from("<I", data, field)[0]
    if not 0 <= index < struct.unpack_from("<I", data, vector)[0]:
        raise IndexError(index)
    element = vector + 4 + 4 * index
    table: int = element + struct.unpack_from("<I", data, element)[0]
    return table


def _int_field(data: bytes, table: int, slot: int) -> int:
    field = _field(data, table, slot)
    return 0 if field is None else int(struct.unpack_from("<i", data, field)[0])
