"""Kernel rules of the shape and signal families, checked by hand against the TFLM sources: struct
sizes on both ABIs, the temp tensors Prepare takes, outputs whose dims Prepare rewrites (planned
with the rewritten dims), and what the kernels refuse."""

from __future__ import annotations

import numpy as np

from arenalens.builds.abi import ILP32, LP64
from arenalens.builds.build import HOST, Build, device_build
from arenalens.runtimes.tflm.arena import arenas
from arenalens.runtimes.tflm.kernels import (
    layout,
    signal_library,
    signal_streams,
    slicing,
    variables,
)
from arenalens.runtimes.tflm.kernels.base import OutputShape, Persistent, fetched_temps
from arenalens.runtimes.tflm.kernels.setups import OperatorSetup, operator_setups, prepared_shapes
from arenalens.runtimes.tflm.support import support
from arenalens.tflite.reader import parse_model
from tests.conformance.models import INT8_Q, Const, In, Op, Out, single_op

DEVICE = device_build("cortex-m7")


def test_struct_sizes_follow_each_abi() -> None:
    concatenation = slicing._CONCATENATION_OP_DATA
    # The wheel's compression build adds scratch_indices[10]; Cortex-M builds have none.
    assert concatenation.size(LP64, HOST.features) == 80
    assert concatenation.size(LP64) == 40
    assert concatenation.size(ILP32) == 24
    assert (
        slicing._STRIDED_SLICE_OP_DATA.size(LP64)
        == slicing._STRIDED_SLICE_OP_DATA.size(ILP32)
        == 84
    )
    assert layout._PAD_OP_DATA.size(LP64) == 56
    # Short enums: TfLiteMirrorPaddingParams is one byte on Cortex-M.
    assert layout._MIRROR_PAD_PARAMS.layout(LP64) == (4, 4)
    assert layout._MIRROR_PAD_PARAMS.layout(ILP32) == (1, 1)
    assert variables._VAR_HANDLE_PARAMS.layout(ILP32) == (8, 4)
    expected = {  # (LP64, ILP32), signal/micro/kernels/*.cc
        signal_streams._DELAY_PARAMS: (32, 20),
        signal_library._FILTER_BANK_PARAMS: (64, 36),
        signal_library._SPECTRAL_SUBTRACTION_PARAMS: (56, 44),
        signal_streams._FRAMER_PARAMS: (40, 28),
        signal_library._IRFFT_PARAMS: (32, 24),
        signal_library._RFFT_PARAMS: (48, 32),
        signal_streams._OVERLAP_ADD_PARAMS: (32, 24),
        signal_streams._STACKER_PARAMS: (56, 36),
        signal_streams._CIRCULAR_BUFFER: (40, 24),
    }
    for layout_struct, sizes in expected.items():
        assert (layout_struct.size(LP64), layout_struct.size(ILP32)) == sizes, layout_struct.name


def test_kiss_fftr_state_bytes() -> None:
    # int16, n = 512: three pointers, nfft/inverse/factors[64], 256 twiddles, 384 super twiddles.
    assert signal_library.kiss_fftr_state_bytes(512, 4, 8) == 24 + 264 + 4 * 256 + 4 * 384
    assert signal_library.kiss_fftr_state_bytes(64, 8, 4) == 12 + 264 + 8 * 32 + 8 * 48
    assert signal_library.kiss_fftr_state_bytes(63, 8, 8) == 0  # odd: kiss_fftr_alloc sets no size


def _setup(data: bytes, build: Build = HOST) -> OperatorSetup:
    (found,) = operator_setups(parse_model(data, "case"), build)
    return found


def test_concatenation_fetches_its_first_input_twice() -> None:
    inputs = [In((1, 2), "INT8", INT8_Q) for _ in range(3)]
    model = single_op(Op("CONCATENATION", inputs, [Out((3, 2), "INT8", INT8_Q)], {"axis": 0}))
    found = _setup(model)
    fetched = [tensor.index for tensor in fetched_temps(found.prepare)]
    assert fetched == [0, 3, 0, 1, 2]  # input 0, output, then every input again
    assert [e.nbytes for e in found.init if isinstance(e, Persistent)] == [80]
    assert [e.nbytes for e in _setup(model, DEVICE).init if isinstance(e, Persistent)] == [24]


def test_split_and_pack_fetch_only_what_their_prepare_reads() -> None:
    split = single_op(
        Op(
            "SPLIT",
            [Const(np.array(0, np.int32), "INT32"), In((2, 8))],
            [Out((1, 8)), Out((1, 8))],
            {"num_splits": 2},
        )
    )
    assert [tensor.index for tensor in fetched_temps(_setup(split).prepare)] == [0]
    pack = single_op(Op("PACK", [In((4,)), In((4,))], [Out((2, 4))], {"values_count": 2}))
    assert _setup(pack).prepare == ()


def test_a_stretched_reshape_is_planned_with_its_resolved_dims() -> None:
    data = single_op(
        Op(
            "RESHAPE",
            [In((1, 64)), Const(np.array([2, -1, 4], np.int32), "INT32")],
            [Out((2, -1, 4))],
        )
    )
    model = parse_model(data, "reshape")
    found = _setup(data)
    assert Persistent(16, "output dims copy") in found.prepare  # TfLiteIntArray of rank 3
    assert OutputShape(0, (2, 8, 4)) in found.prepare
    assert prepared_shapes(model) == {(0, 2): (2, 8, 4)}
    (head,) = arenas(model)
    assert sorted(buffer.nbytes for buffer in head.buffers.values()) == [256, 256]
    assert support(model).sets_up


def test_gather_plans_its_output_with_the_dims_it_computes() -> None:
    # The flatbuffer says (1, 16); GATHER writes input[:0] + positions + input[1:] = (3, 16).
    data = single_op(
        Op("GATHER", [In((8, 16)), Const(np.array([1, 3, 5], np.int32), "INT32")], [Out((1, 16))])
    )
    model = parse_model(data, "gather")
    assert prepared_shapes(model) == {(0, 2): (3, 16)}
    sizes = {buffer.tensor: buffer.nbytes for buffer in arenas(model)[0].buffers.values()}
    assert sizes == {0: 512, 2: 192}


def test_legacy_scalar_reshape_cannot_run() -> None:
    data = single_op(Op("RESHAPE", [In((1,))], [Out((0,))], {"new_shape": []}))
    found = support(parse_model(data, "legacy"))
    assert not found.sets_up
    assert "legacy scalar RESHAPE" in found.obstacles[0].reason


def test_refusals_by_phase() -> None:
    # EXPAND_DIMS int32 sets up and fails at Invoke; a runtime axis fails setup.
    invoke = single_op(
        Op(
            "EXPAND_DIMS",
            [In((4,), "INT32"), Const(np.array(0, np.int32), "INT32")],
            [Out((1, 4), "INT32")],
        )
    )
    found = support(parse_model(invoke, "invoke"))
    assert found.sets_up and not found.runs
    setup = single_op(Op("EXPAND_DIMS", [In((4,)), In((1,), "INT32")], [Out((1, 4))]))
    assert not support(parse_model(setup, "setup")).sets_up
    # An RFFT whose T names no variant: Init returns null and Prepare dereferences it.
    rfft = single_op(
        Op(
            "CUSTOM:SignalRfft",
            [In((32,), "INT8")],
            [Out((66,), "INT8")],
            custom={"T": 9, "fft_length": 64},
        )
    )
    assert not support(parse_model(rfft, "rfft")).sets_up


def test_assign_variable_has_an_init_only_with_compression() -> None:
    from tests import tflm_synthetic as synthetic

    model = parse_model(synthetic.resource_variable_shared_handles(), "variables")
    for build, expected in ((HOST, [4, 4]), (DEVICE, [])):
        sizes = [
            event.nbytes
            for setup in operator_setups(model, build)
            if setup.context.opcode == "ASSIGN_VARIABLE"
            for event in setup.init
            if isinstance(event, Persistent)
        ]
        assert sizes == expected
