"""Lowering: a split plan → the split model's bytes (and its IR, read back and checked).

Every new tensor gets an index: first the slots of original tensors nothing reads or writes any
more (the activations inside split regions, weights only they used), then new indices at the end.
An unused slot left as it was would be planned by TFLM with no lifetime; reusing it keeps the
tensor count, and so the tail's per-tensor structs, as low as possible.
"""

from __future__ import annotations

from arenalens.errors import PlanError
from arenalens.ir import Model
from arenalens.split.parts import Part, PartOperator, TensorRef
from arenalens.split.schedule import SplitPlan
from arenalens.tflite.graph_edit import (
    NewOperator,
    NewTensor,
    QuantizationOf,
    SubgraphEdit,
    edit_model,
)
from arenalens.tflite.reader import load_model
from arenalens.tflite.rewriter import model_bytes


def split_edit(model: Model, plan: SplitPlan) -> SubgraphEdit:
    """A plan → the subgraph edit that writes it."""
    subgraph = model.subgraphs[plan.subgraph]
    entries = plan.entries(model)
    used: set[int] = set(subgraph.inputs) | set(subgraph.outputs)
    parts: list[Part] = []
    seen: set[Part] = set()
    for entry in entries:
        if isinstance(entry, int):
            operator = subgraph.operators[entry]
            used.update(t for t in (*operator.inputs, *operator.outputs) if t >= 0)
            used.update(t for t in operator.intermediates if t >= 0)
            continue
        for tensor in (*entry.inputs, *entry.outputs):
            if isinstance(tensor, Part):
                if tensor not in seen:
                    seen.add(tensor)
                    parts.append(tensor)
            elif tensor >= 0:
                used.add(tensor)
    free = [t.index for t in subgraph.tensors if t.index not in used and not t.is_variable]
    indices: dict[Part, int] = {}
    buffers: list[bytes] = []
    buffer_of: dict[bytes, int] = {}
    tensors: dict[int, NewTensor] = {}
    next_index = len(subgraph.tensors)
    for part in parts:
        if free:
            index = free.pop(0)
        else:
            index, next_index = next_index, next_index + 1
        indices[part] = index
        data: int | None = None
        if part.data is not None:
            data = buffer_of.get(part.data)
            if data is None:
                data = buffer_of[part.data] = len(buffers)
                buffers.append(part.data)
        quantization = part.quantization
        tensors[index] = NewTensor(
            part.name,
            part.shape,
            part.dtype,
            data,
            quantization if quantization is not None else _quantization_of(part),
        )
    operators: list[int | NewOperator] = []
    for entry in entries:
        if isinstance(entry, int):
            operators.append(entry)
        else:
            operators.append(_operator(entry, indices))
    return SubgraphEdit(plan.subgraph, tuple(operators), tensors, tuple(buffers))


def _quantization_of(part: Part) -> QuantizationOf | None:
    return QuantizationOf(part.like) if part.like is not None else None


def _operator(entry: PartOperator, indices: dict[Part, int]) -> NewOperator:
    def index(tensor: TensorRef) -> int:
        return indices[tensor] if isinstance(tensor, Part) else tensor

    return NewOperator(
        entry.opcode,
        tuple(index(t) for t in entry.inputs),
        tuple(index(t) for t in entry.outputs),
        entry.options,
        entry.version,
    )


def write_split(model: Model, plan: SplitPlan) -> tuple[bytes, Model]:
    """A plan → the split model's bytes and its IR (read back: a file arenalens cannot read is
    a bug here, never the user's). The edit starts from the model as it is in memory: at an
    --input-shape, its file still stores the old shapes of the tensors the split keeps."""
    data = edit_model(model_bytes(model), split_edit(model, plan), label=model.source)
    try:
        written = load_model(data)
    except Exception as error:  # pragma: no cover - a writer bug
        raise PlanError(f"{model.source}: the split model does not read back: {error}") from error
    return data, written
