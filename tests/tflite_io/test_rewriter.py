"""Rewriter: new operator order and offline plan in front of the untouched original bytes."""

from __future__ import annotations

import struct
from pathlib import Path

import flatbuffers
import numpy as np
import pytest
import tflite as schema

from arenalens import ModelError, load_model
from arenalens.examples import EXAMPLES, example_bytes
from arenalens.ir import Model, OfflinePlan
from arenalens.reorder.schedule import predecessors
from arenalens.tflite.plan_record import PLAN_RECORD_METADATA
from arenalens.tflite.reader import OFFLINE_PLAN_METADATA
from arenalens.tflite.rewriter import rewrite_model
from tests.conftest import SHARED_MODELS, shared_params


def _all_online(model: Model) -> OfflinePlan:
    return OfflinePlan(0, len(model.subgraphs), tuple(range(model.tensor_count)))


def _reversed_independent_order(model: Model) -> dict[int, list[int]]:
    """A valid order of subgraph 0 that runs the highest-numbered ready operator first."""
    preceding = predecessors(model, 0)
    done: set[int] = set()
    order: list[int] = []
    while len(order) < len(preceding):
        ready = [op for op in range(len(preceding)) if op not in done and preceding[op] <= done]
        order.append(max(ready))
        done.add(order[-1])
    return {0: order}


def _check_rewrite(original: bytes, rewritten: bytes, plan: OfflinePlan | None) -> Model:
    before, after = load_model(original), load_model(rewritten)
    shift = len(rewritten) - len(original)
    assert rewritten[shift:] == original, "the original bytes follow the prefix unchanged"
    assert shift % 64 == 0
    # A replaced plan's buffers are the one thing that may change: the rewriter drops them (when
    # nothing else reads them) and appends the new plan's, so optimizing twice leaves no orphan.
    replaced = (
        {
            entry.buffer
            for entry in before.metadata
            if entry.name in (OFFLINE_PLAN_METADATA, PLAN_RECORD_METADATA)
        }
        if plan is not None
        else set()
    )
    assert len(after.buffers) >= len(before.buffers) - len(replaced)
    for index, ref in enumerate(before.buffers):
        if index in replaced:
            continue
        assert after.buffer_bytes(index) == before.buffer_bytes(index)
        if ref.nbytes:
            assert after.buffers[index].file_offset % 16 == ref.file_offset % 16
    for old, new in zip(before.subgraphs, after.subgraphs, strict=True):
        assert old.tensors == new.tensors
        assert old.inputs == new.inputs and old.outputs == new.outputs
    assert after.signature_defs == before.signature_defs
    if plan is not None:
        assert after.offline_plan == plan
        names = [entry.name for entry in after.metadata]
        assert names.count(OFFLINE_PLAN_METADATA) == 1
        kept = [n for n in (e.name for e in before.metadata) if n != OFFLINE_PLAN_METADATA]
        assert [n for n in names if n != OFFLINE_PLAN_METADATA] == kept
    return after


@pytest.mark.parametrize("name", shared_params())
def test_shared_models_round_trip(name: str | None) -> None:
    assert name is not None
    original = (SHARED_MODELS / name).read_bytes()
    model = load_model(original)
    plan = _all_online(model)
    order = _reversed_independent_order(model)
    after = _check_rewrite(original, rewrite_model(original, offline_plan=plan), plan)
    assert after.subgraphs[0].operators == model.subgraphs[0].operators
    moved = _check_rewrite(original, rewrite_model(original, operator_orders=order), None)
    ops = model.subgraphs[0].operators
    assert [op.opcode for op in moved.subgraphs[0].operators] == [ops[i].opcode for i in order[0]]
    assert [op.inputs for op in moved.subgraphs[0].operators] == [ops[i].inputs for i in order[0]]
    assert moved.offline_plan == model.offline_plan


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_round_trip_with_both_changes(name: str) -> None:
    original = example_bytes(name)
    model = load_model(original)
    plan = _all_online(model)
    rewritten = rewrite_model(
        original, offline_plan=plan, operator_orders=_reversed_independent_order(model)
    )
    _check_rewrite(original, rewritten, plan)


def test_existing_offline_plan_is_replaced(shared_path: Path) -> None:
    original = (shared_path / "tflite_micro__person_detect_vela.tflite").read_bytes()
    model = load_model(original)
    assert model.offline_plan is not None
    plan = OfflinePlan(7, 1, tuple(-1 for _ in range(model.tensor_count)))
    after = _check_rewrite(original, rewrite_model(original, offline_plan=plan), plan)
    assert after.offline_plan == plan
    assert [m.name for m in after.metadata] == ["vela_version", OFFLINE_PLAN_METADATA]


def test_rejects_bad_orders_and_alignment() -> None:
    original = example_bytes("fc_autoencoder")
    with pytest.raises(ValueError, match="permutation"):
        rewrite_model(original, operator_orders={0: [0, 0, 1]})
    with pytest.raises(ValueError, match="subgraph 3"):
        rewrite_model(original, operator_orders={3: [0]})
    with pytest.raises(ValueError, match="alignment"):
        rewrite_model(original, offline_plan=_all_online(load_model(original)), alignment=8)


def _external_buffer_model(*, large_custom_options: bool = False) -> bytes:
    """A model whose constant lives after the FlatBuffer (Buffer.offset/size, > 2 GB style)."""
    payload = np.arange(4, dtype=np.float32).tobytes()

    def build(offset: int) -> bytes:
        builder = flatbuffers.Builder(256)
        name = builder.CreateString("weights")
        schema.TensorStartShapeVector(builder, 1)
        builder.PrependInt32(4)
        shape = builder.EndVector()
        schema.TensorStart(builder)
        schema.TensorAddShape(builder, shape)
        schema.TensorAddType(builder, 0)
        schema.TensorAddBuffer(builder, 1)
        schema.TensorAddName(builder, name)
        tensor = schema.TensorEnd(builder)
        out_name = builder.CreateString("out")
        schema.TensorStartShapeVector(builder, 1)
        builder.PrependInt32(4)
        out_shape = builder.EndVector()
        schema.TensorStart(builder)
        schema.TensorAddShape(builder, out_shape)
        schema.TensorAddType(builder, 0)
        schema.TensorAddName(builder, out_name)
        out_tensor = schema.TensorEnd(builder)
        schema.SubGraphStartTensorsVector(builder, 2)
        builder.PrependUOffsetTRelative(out_tensor)
        builder.PrependUOffsetTRelative(tensor)
        tensors = builder.EndVector()
        schema.SubGraphStartInputsVector(builder, 1)
        builder.PrependInt32(0)
        inputs = builder.EndVector()
        schema.SubGraphStartOutputsVector(builder, 1)
        builder.PrependInt32(1)
        outputs = builder.EndVector()
        schema.OperatorStartInputsVector(builder, 1)
        builder.PrependInt32(0)
        op_inputs = builder.EndVector()
        schema.OperatorStartOutputsVector(builder, 1)
        builder.PrependInt32(1)
        op_outputs = builder.EndVector()
        schema.OperatorStart(builder)
        schema.OperatorAddOpcodeIndex(builder, 0)
        schema.OperatorAddInputs(builder, op_inputs)
        schema.OperatorAddOutputs(builder, op_outputs)
        if large_custom_options:
            schema.OperatorAddLargeCustomOptionsOffset(builder, offset)
            schema.OperatorAddLargeCustomOptionsSize(builder, 4)
        operator = schema.OperatorEnd(builder)
        schema.SubGraphStartOperatorsVector(builder, 1)
        builder.PrependUOffsetTRelative(operator)
        operators = builder.EndVector()
        schema.SubGraphStart(builder)
        schema.SubGraphAddTensors(builder, tensors)
        schema.SubGraphAddInputs(builder, inputs)
        schema.SubGraphAddOutputs(builder, outputs)
        schema.SubGraphAddOperators(builder, operators)
        subgraph = schema.SubGraphEnd(builder)
        schema.OperatorCodeStart(builder)
        schema.OperatorCodeAddBuiltinCode(builder, 19)  # RELU
        schema.OperatorCodeAddDeprecatedBuiltinCode(builder, 19)
        schema.OperatorCodeAddVersion(builder, 1)
        code = schema.OperatorCodeEnd(builder)
        schema.BufferStart(builder)
        empty = schema.BufferEnd(builder)
        schema.BufferStart(builder)
        schema.BufferAddOffset(builder, offset)
        schema.BufferAddSize(builder, len(payload))
        external = schema.BufferEnd(builder)
        schema.ModelStartBuffersVector(builder, 2)
        builder.PrependUOffsetTRelative(external)
        builder.PrependUOffsetTRelative(empty)
        buffers = builder.EndVector()
        schema.ModelStartSubgraphsVector(builder, 1)
        builder.PrependUOffsetTRelative(subgraph)
        subgraphs = builder.EndVector()
        schema.ModelStartOperatorCodesVector(builder, 1)
        builder.PrependUOffsetTRelative(code)
        codes = builder.EndVector()
        schema.ModelStart(builder)
        schema.ModelAddVersion(builder, 3)
        schema.ModelAddOperatorCodes(builder, codes)
        schema.ModelAddSubgraphs(builder, subgraphs)
        schema.ModelAddBuffers(builder, buffers)
        model = schema.ModelEnd(builder)
        builder.Finish(model, file_identifier=b"TFL3")
        return bytes(builder.Output())

    probe = build(2)
    start = -(-len(probe) // 16) * 16
    data = build(start)
    assert len(data) == len(probe)
    return data + b"\0" * (start - len(data)) + payload


def test_external_buffers_move_with_the_file() -> None:
    original = _external_buffer_model()
    model = load_model(original)
    assert model.buffers[1].external
    plan = _all_online(model)
    rewritten = rewrite_model(original, offline_plan=plan)
    after = load_model(rewritten)
    shift = len(rewritten) - len(original)
    assert after.buffers[1].external
    assert after.buffers[1].file_offset == model.buffers[1].file_offset + shift
    assert after.buffer_bytes(1) == model.buffer_bytes(1)
    assert after.offline_plan == plan


def test_refuses_large_custom_options() -> None:
    original = _external_buffer_model(large_custom_options=True)
    with pytest.raises(ModelError, match="absolute file offset"):
        rewrite_model(original, offline_plan=_all_online(load_model(original)))


def test_root_offset_points_at_the_new_model_table() -> None:
    original = example_bytes("fc_autoencoder")
    rewritten = rewrite_model(original, offline_plan=_all_online(load_model(original)))
    root = struct.unpack_from("<I", rewritten, 0)[0]
    assert rewritten[4:8] == b"TFL3"
    assert root < len(rewritten) - len(original), "the root table lives in the prefix"


@pytest.mark.runtime
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_litert_verifier_and_tflm_accept_rewritten_models(name: str) -> None:
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    runtime = pytest.importorskip("tflite_micro").runtime
    original = example_bytes(name)
    model = load_model(original)
    plan = OfflinePlan(0, len(model.subgraphs), tuple(-1 for _ in range(model.tensor_count)))
    rewritten = rewrite_model(original, offline_plan=plan)
    # LiteRT runs the FlatBuffers verifier on model_content: a stale or misaligned offset fails.
    interpreter = litert.Interpreter(model_content=rewritten)
    interpreter.allocate_tensors()
    runtime.Interpreter.from_bytes(rewritten, arena_size=1 << 20)
