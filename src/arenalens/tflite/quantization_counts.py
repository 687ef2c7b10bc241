"""How many scales and zero points each tensor's quantization holds (the IR keeps the first of
each): LiteRT's loader compares the counts (runtimes/litert/loader.py). One pass over a subgraph's
tensor tables, through the reader's schema slots and bounds-checked table views, so a model the
reader accepted is read without another parse per tensor."""

from __future__ import annotations

import struct

from arenalens.ir import Model
from arenalens.tflite.reader import _ModelSlots, _QuantizationSlots, _SubgraphSlots, _TensorSlots
from arenalens.tflite.tables import TableView


def quantization_counts(model: Model, subgraph: int) -> tuple[tuple[int, int] | None, ...]:
    """Model + subgraph → per tensor, the lengths of its scale and zero point vectors (None
    without a QuantizationParameters table)."""
    data = model.data
    root = TableView(data, struct.unpack_from("<I", data, 0)[0], len(data))
    found: list[tuple[int, int] | None] = []
    for tensor in root.tables(_ModelSlots.SUBGRAPHS)[subgraph].tables(_SubgraphSlots.TENSORS):
        quantization = tensor.table(_TensorSlots.QUANTIZATION)
        if quantization is None:
            found.append(None)
            continue
        _, scales = quantization.vector(_QuantizationSlots.SCALE, 4)
        _, zero_points = quantization.vector(_QuantizationSlots.ZERO_POINT, 8)
        found.append((scales, zero_points))
    return tuple(found)
