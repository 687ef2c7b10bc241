"""Analysis → CSV, one row per tensor (and per kernel scratch / temporary buffer) with its offset.

Tensors that live in another tensor's bytes (LiteRT in-place aliases) get their own row with the
same offset and `alias_of` naming the tensor that owns the bytes.
"""

from __future__ import annotations

import csv
import io

from arenalens.ir import Model
from arenalens.pipeline import Analysis

CSV_COLUMNS = (
    "model",
    "arena",
    "buffer",
    "kind",
    "subgraph",
    "tensor",
    "operator",
    "name",
    "dtype",
    "shape",
    "nbytes",
    "size",
    "offset",
    "end",
    "first",
    "last",
    "fixed",
    "alias_of",
)


def plan_csv(analysis: Analysis) -> str:
    """Analysis → CSV text with a header row (RFC 4180 quoting, '\\n' line ends)."""
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    model = analysis.model
    for result in analysis.arenas:
        arena, plan = result.arena, result.plan
        for buffer in sorted(arena.problem.buffers, key=lambda b: b.id):
            planned = arena.buffers[buffer.id]
            offset = plan.offsets[buffer.id]
            common = [buffer.size, offset, offset + buffer.size, buffer.start, buffer.end]
            fixed = "yes" if buffer.fixed_offset is not None else "no"
            dtype, shape = _tensor_facts(model, planned.subgraph, planned.tensor)
            writer.writerow(
                [model.name, arena.name, buffer.id, planned.kind.value, planned.subgraph,
                 _blank(planned.tensor), _blank(planned.operator), planned.name, dtype, shape,
                 planned.nbytes, *common, fixed, ""]
            )  # fmt: skip
            for alias in planned.aliases:
                alias_dtype, alias_shape = _tensor_facts(model, planned.subgraph, alias)
                alias_name = model.subgraphs[planned.subgraph].tensors[alias].name
                alias_bytes = model.subgraphs[planned.subgraph].tensors[alias].packed_nbytes
                writer.writerow(
                    [model.name, arena.name, buffer.id, "alias", planned.subgraph, alias, "",
                     alias_name, alias_dtype, alias_shape, alias_bytes, *common, fixed,
                     _blank(planned.tensor)]
                )  # fmt: skip
    return stream.getvalue()


def _blank(value: int | None) -> str | int:
    return "" if value is None else value


def _tensor_facts(model: Model, subgraph: int, tensor: int | None) -> tuple[str, str]:
    """dtype name and 'AxBxC' shape of a model tensor ('' for runtime-added buffers)."""
    if tensor is None or subgraph >= len(model.subgraphs):
        return "", ""
    tensors = model.subgraphs[subgraph].tensors
    if not 0 <= tensor < len(tensors):
        return "", ""
    found = tensors[tensor]
    return found.dtype.name, "x".join(str(d) for d in found.shape)
