"""Graph edit: new operators, tensors and buffers in a prefix, the original bytes after it."""

from __future__ import annotations

import pytest

from arenalens import load_model
from arenalens.ir import OfflinePlan
from arenalens.tflite.builder import QuantizationSpec
from arenalens.tflite.graph_edit import (
    NewOperator,
    NewTensor,
    QuantizationOf,
    SubgraphEdit,
    edit_model,
)
from arenalens.tflite.reader import read_quantization_scales, read_quantization_zero_points
from arenalens.tflite.rewriter import rewrite_model
from tests.split import models


def _original() -> bytes:
    return models.stem_model()


def test_an_empty_edit_keeps_every_operator_and_appends_the_original() -> None:
    data = _original()
    model = load_model(data)
    count = len(model.subgraphs[0].operators)
    edited = edit_model(data, SubgraphEdit(0, tuple(range(count)), {}))
    assert edited.endswith(data) and len(edited) % 64 == len(data) % 64
    again = load_model(edited)
    assert [o.opcode for o in again.subgraphs[0].operators] == [
        o.opcode for o in model.subgraphs[0].operators
    ]
    assert len(again.subgraphs[0].tensors) == len(model.subgraphs[0].tensors)


def test_new_operators_tensors_buffers_and_opcodes_read_back() -> None:
    data = _original()
    model = load_model(data)
    subgraph = model.subgraphs[0]
    source = subgraph.operators[0].outputs[0]
    count = len(subgraph.tensors)
    tensors = {
        count: NewTensor("band", (1, 6, 10, 8), "INT8", quantization=QuantizationOf(source)),
        count + 1: NewTensor("begin", (4,), "INT32", data=0),
        count + 2: NewTensor("end", (4,), "INT32", data=1),
        count + 3: NewTensor("strides", (4,), "INT32", data=2),
        count + 4: NewTensor(
            "scaled", (2,), "INT8", data=3, quantization=QuantizationSpec((0.5, 0.25), (1, 2), 0)
        ),
    }
    slice_op = NewOperator(
        "STRIDED_SLICE",
        (source, count + 1, count + 2, count + 3),
        (count,),
        (("begin_mask", 0),),
        version=2,
    )
    edit = SubgraphEdit(
        0,
        (0, slice_op, 1, 2, 3),
        tensors,
        (
            bytes(16),
            bytes.fromhex("01000000060000000a00000008000000"),
            bytes.fromhex("01000000" * 4),
            b"\x01\x02",
        ),
    )
    edited = load_model(edit_model(data, edit))
    edited_subgraph = edited.subgraphs[0]
    operator = edited_subgraph.operators[1]
    assert operator.opcode == "STRIDED_SLICE" and operator.version == 2
    assert operator.inputs == (source, count + 1, count + 2, count + 3)
    assert dict(operator.options)["begin_mask"] == 0
    band = edited_subgraph.tensors[count]
    assert band.shape == (1, 6, 10, 8) and not band.is_constant
    assert band.quantization == subgraph.tensors[source].quantization
    end = edited_subgraph.tensors[count + 2]
    assert edited.buffer_bytes(end.buffer) == bytes.fromhex("01000000060000000a00000008000000")
    assert edited.buffers[end.buffer].file_offset % 16 == 0
    assert read_quantization_scales(edited, 0, count + 4) == (0.5, 0.25)
    assert read_quantization_zero_points(edited, 0, count + 4) == (1, 2)


def test_a_tensor_still_in_use_is_not_replaced() -> None:
    data = _original()
    model = load_model(data)
    used = model.subgraphs[0].operators[1].inputs[0]
    edit = SubgraphEdit(0, (0, 1, 2, 3), {used: NewTensor("x", (1,), "INT8")})
    with pytest.raises(ValueError, match="still in use"):
        edit_model(data, edit)


def test_new_tensors_are_appended_without_gaps() -> None:
    data = _original()
    count = len(load_model(data).subgraphs[0].tensors)
    edit = SubgraphEdit(0, (0, 1, 2, 3), {count + 1: NewTensor("x", (1,), "INT8")})
    with pytest.raises(ValueError, match="consecutive"):
        edit_model(data, edit)


def test_an_offline_plan_is_dropped() -> None:
    data = _original()
    model = load_model(data)
    planned = rewrite_model(data, offline_plan=OfflinePlan(0, 1, (-1,) * model.tensor_count))
    assert load_model(planned).offline_plan is not None
    edited = edit_model(planned, SubgraphEdit(0, (0, 1, 2, 3), {}))
    assert load_model(edited).offline_plan is None
