"""CMSIS-NN kernel rules: scratch sizes per code path checked by hand against CMSIS-NN's
`*_get_buffer_size` sources (GCC build), struct sizes against arm-none-eabi-g++, and the rules as
the registry serves them to CMSIS-NN builds (conformance measurements: tests/conformance)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arenalens.builds.abi import ILP32
from arenalens.builds.build import CMSIS_NN, ISA_DSP, ISA_MVE, ISA_NONE, device_build
from arenalens.runtimes.tflm.kernels import conv as reference_conv
from arenalens.runtimes.tflm.kernels import fully_connected as reference_fully_connected
from arenalens.runtimes.tflm.kernels import recurrent as reference_recurrent
from arenalens.runtimes.tflm.kernels.base import (
    INVOKE,
    Estimate,
    Event,
    OverTemps,
    Persistent,
    Refusal,
    Scratch,
    ScratchNumberAtLeast,
)
from arenalens.runtimes.tflm.kernels.cmsis_nn import buffers, conv, fully_connected, recurrent
from arenalens.runtimes.tflm.kernels.cmsis_nn import softmax as cmsis_softmax
from arenalens.runtimes.tflm.kernels.cmsis_nn.buffers import ConvParams, Dims
from arenalens.runtimes.tflm.kernels.registry import REFERENCE_KERNELS, rule_for
from arenalens.runtimes.tflm.kernels.setups import operator_setups
from arenalens.runtimes.tflm.support import support
from arenalens.tflite.reader import parse_model
from tests.conformance.cases import cmsis_nn as cases

PATHS = (ISA_NONE, ISA_DSP, ISA_MVE)
BUILDS = {
    ISA_NONE: device_build("cortex-m3", CMSIS_NN),
    ISA_DSP: device_build("cortex-m7", CMSIS_NN),
    ISA_MVE: device_build("cortex-m55", CMSIS_NN),
}


def _same(pad: int = 0) -> ConvParams:
    return ConvParams(1, 1, pad, pad, 1, 1)


def _row(pad: int) -> ConvParams:
    """A one-row convolution's parameters: stride 1, padded `pad` left and right only."""
    return ConvParams(1, 1, pad, 0, 1, 1)


STRIDE_2 = ConvParams(2, 2, 0, 0, 1, 1)


@pytest.mark.parametrize(
    ("source", "kernel", "output", "params", "expected"),
    [
        # 3x3 SAME, C=4: im2col of 36 columns (int16, x2) vs four 16-lane columns of 48.
        (Dims(1, 8, 8, 4), Dims(1, 3, 3, 4), Dims(1, 8, 8, 8), _same(1), (144, 144, 192)),
        # C·k = 27 rounds up to 28 off MVE.
        (Dims(1, 8, 8, 3), Dims(1, 3, 3, 3), Dims(1, 8, 8, 8), _same(1), (112, 112, 128)),
        # 1x1 unpadded: no buffer under GCC, stride 1 or 2.
        (Dims(1, 8, 8, 4), Dims(1, 1, 1, 4), Dims(1, 8, 8, 8), _same(), (0, 0, 0)),
        (Dims(1, 8, 8, 4), Dims(1, 1, 1, 4), Dims(1, 4, 4, 8), STRIDE_2, (0, 0, 0)),
        # 1xN, SAME (pad 1) and VALID: MVE sizes the padded edge columns only.
        (Dims(1, 1, 16, 4), Dims(1, 1, 3, 4), Dims(1, 1, 16, 8), _row(1), (48, 48, 16)),
        (Dims(1, 1, 16, 4), Dims(1, 1, 3, 4), Dims(1, 1, 14, 8), _same(), (48, 48, 12)),
        # 1xN whose padding leaves no middle: MVE falls back to the generic size.
        (Dims(1, 1, 2, 4), Dims(1, 1, 7, 4), Dims(1, 1, 2, 8), _row(3), (112, 112, 128)),
        # stride·C not a multiple of 4: not 1xN.
        (Dims(1, 1, 16, 3), Dims(1, 1, 3, 3), Dims(1, 1, 16, 8), _row(1), (48, 48, 64)),
    ],
)  # fmt: skip
def test_convolution_buffer_per_path(
    source: Dims, kernel: Dims, output: Dims, params: ConvParams, expected: tuple[int, int, int]
) -> None:
    sizes = tuple(buffers.convolve_wrapper_s8(isa, params, source, kernel, output) for isa in PATHS)
    assert sizes == expected


def test_int16_convolution_buffer_per_path() -> None:
    source, kernel = Dims(1, 8, 8, 4), Dims(1, 3, 3, 4)
    assert [buffers.convolve_wrapper_s16(isa, source, kernel) for isa in PATHS] == [144, 144, 320]


@pytest.mark.parametrize(
    ("source", "kernel", "output", "pad", "expected"),
    [
        (Dims(1, 8, 8, 4), Dims(1, 3, 3, 4), Dims(1, 8, 8, 4), 1, (0, 0, 4464)),
        (Dims(1, 8, 8, 6), Dims(1, 5, 5, 6), Dims(1, 8, 8, 6), 2, (0, 300, 12400)),
        (Dims(1, 8, 8, 4), Dims(1, 3, 5, 4), Dims(1, 8, 8, 4), 1, (0, 120, 7440)),
        # Depth multiplier 2, or a batch of 2: the plain kernel, no buffer.
        (Dims(1, 8, 8, 4), Dims(1, 3, 3, 8), Dims(1, 8, 8, 8), 1, (0, 0, 0)),
        (Dims(2, 8, 8, 4), Dims(1, 3, 3, 4), Dims(2, 8, 8, 4), 1, (0, 0, 0)),
        # One input channel, eight outputs: MVE runs it as a convolution (64 + 8·9 filter copy).
        (Dims(1, 8, 8, 1), Dims(1, 3, 3, 8), Dims(1, 8, 8, 8), 1, (0, 0, 136)),
    ],
)
def test_depthwise_buffer_per_path(
    source: Dims, kernel: Dims, output: Dims, pad: int, expected: tuple[int, int, int]
) -> None:
    params = ConvParams(None, None, pad, pad, 1, 1)
    sizes = tuple(
        buffers.depthwise_wrapper_s8(isa, params, source, kernel, output) for isa in PATHS
    )
    assert sizes == expected


def test_int4_depthwise_uses_the_dsp_size_even_without_dsp() -> None:
    params = ConvParams(None, None, 1, 1, 1, 1)
    source, kernel, output = Dims(1, 8, 8, 4), Dims(1, 3, 3, 4), Dims(1, 8, 8, 4)
    found = [buffers.depthwise_wrapper_s4(isa, params, source, kernel, output) for isa in PATHS]
    assert found == [72, 72, 4464]


def test_transpose_convolution_buffers() -> None:
    # 4 channels: accumulators for max(3, 2) rows of ((4-1)·2 + 3)·8 int32 = 864, no reversal.
    small = Dims(1, 4, 4, 4)
    assert (
        buffers.transpose_conv_s8(ISA_MVE, (2, 2), small, Dims(8, 3, 3, 4), Dims(1, 8, 8, 8)) == 864
    )
    assert buffers.transpose_conv_s8_reverse(2, 2, small, Dims(8, 3, 3, 4)) == 0
    # 20 channels, stride 2: reversed into a convolution; its buffer and the reversed filter.
    wide, kernel = Dims(1, 4, 4, 20), Dims(8, 3, 3, 20)
    found = [
        buffers.transpose_conv_s8(isa, (2, 2), wide, kernel, Dims(1, 8, 8, 8)) for isa in PATHS
    ]
    assert found == [720, 720, 768]
    assert buffers.transpose_conv_s8_reverse(2, 2, wide, kernel) == 1440
    # Stride 3 never reverses.
    assert buffers.transpose_conv_s8(ISA_NONE, (3, 3), wide, kernel, Dims(1, 12, 12, 8)) == 1152


def test_path_only_buffers() -> None:
    assert [buffers.fully_connected_s8(isa, Dims(32, 1, 1, 16)) for isa in PATHS] == [0, 0, 64]
    assert [buffers.svdf_s8(isa, Dims(20, 16, 0, 0)) for isa in PATHS] == [0, 0, 80]
    assert [buffers.avgpool(isa, 20) for isa in PATHS] == [0, 80, 0]


def test_struct_sizes_match_the_probes_compiler() -> None:
    # arm-none-eabi-g++ 12.2 -mcpu=cortex-m7 (short enums), sizeof of each struct.
    expected = {
        reference_conv.CONV_PARAMS: 28,
        reference_conv.TRANSPOSE_CONV_PARAMS: 16,
        conv.CMSIS_OP_DATA_CONV: 60,
        conv.CMSIS_OP_DATA_TRANSPOSE_CONV: 76,
        reference_fully_connected.FULLY_CONNECTED_PARAMS: 5,
        fully_connected.CMSIS_OP_DATA_FULLY_CONNECTED: 72,
        fully_connected.CMSIS_OP_DATA_BATCH_MATMUL: 36,
        reference_recurrent.SVDF_PARAMS: 8,
        recurrent.CMSIS_OP_DATA_SVDF: 40,
        reference_recurrent.OP_DATA_LSTM: 688,
        recurrent.CMSIS_OP_DATA_LSTM: 912,
        cmsis_softmax.CMSIS_SOFTMAX_OP_DATA: 64,
    }
    assert {s.name: s.size(ILP32) for s in expected} == {s.name: n for s, n in expected.items()}


def _setup(build_case: Callable[[], bytes], isa: str) -> tuple[Event, ...]:
    model = parse_model(build_case(), "case")
    (setup,) = operator_setups(model, BUILDS[isa])
    return setup.init + setup.prepare


def _kernel_sums(events: tuple[Event, ...]) -> list[Event]:
    return [e for e in events if isinstance(e, Persistent | Scratch) and "sums" in repr(e)]


def test_cmsis_builds_use_cmsis_rules_and_reference_ones_for_the_rest() -> None:
    build = BUILDS[ISA_DSP]
    cmsis_conv = rule_for("CONV_2D", build)
    assert cmsis_conv is not None and cmsis_conv.source.startswith("cmsis_nn/")
    mul = rule_for("MUL", build)
    assert mul is not None and mul.source.startswith("cmsis_nn/mul.cc")
    assert mul.prepare is REFERENCE_KERNELS["MUL"].prepare
    assert mul.reference is REFERENCE_KERNELS["MUL"] and cmsis_conv.reference is not None
    assert rule_for("CONV_2D", device_build("cortex-m7")) is REFERENCE_KERNELS["CONV_2D"]


def test_fully_connected_kernel_sums_are_persistent_on_mve_when_constant() -> None:
    constant = _setup(cases.fully_connected(), ISA_MVE)
    assert Persistent(64, "CMSIS-NN kernel sums", written=OverTemps()) in constant
    variable = _setup(cases.fully_connected(constant_weights=False), ISA_MVE)
    assert Scratch(64, "CMSIS-NN kernel sums") in variable
    assert not _kernel_sums(_setup(cases.fully_connected(), ISA_DSP))


def test_conv_1x1_fully_connected_needs_four_earlier_scratch_requests() -> None:
    alone = _setup(cases.fully_connected(batch=3, rank=3), ISA_DSP)
    assert any(getattr(e, "phase", None) == INVOKE for e in alone)
    model = parse_model(cases.convs_then_fully_connected(), "chain")
    last = operator_setups(model, BUILDS[ISA_DSP])[-1]
    assert not last.refusals


def test_a_decided_scratch_number_check_is_held_as_its_refusal() -> None:
    """The one pass that checks an operator's events notes the types they hold after the
    scratch-number check is decided: its Refusal, not the check (the stages skip operators whose
    held types have no refusal), so support still reports it."""
    model = parse_model(cases.fully_connected(batch=3, rank=3)(), "case")
    (setup,) = operator_setups(model, BUILDS[ISA_DSP])
    assert setup.holds is not None
    assert Refusal in setup.holds and ScratchNumberAtLeast not in setup.holds
    assert [obstacle.phase for obstacle in support(model, BUILDS[ISA_DSP]).obstacles] == [INVOKE]


def test_mve_one_channel_1xn_depthwise_is_flagged_as_undefined() -> None:
    events = _setup(cases.depthwise(1, 16, channels=1, multiplier=4, kernel=(1, 3)), ISA_MVE)
    assert any(isinstance(e, Estimate) for e in events)
    assert not any(isinstance(e, Estimate) for e in _setup(cases.depthwise(), ISA_MVE))


def test_cmsis_add_refuses_in_prepare_what_the_reference_kernel_refuses_later() -> None:
    int64 = parse_model(cases.binary("ADD", "INT64")(), "add")
    (cmsis,) = operator_setups(int64, BUILDS[ISA_DSP])
    assert [r.phase for r in cmsis.refusals] == ["setup"]
    (reference,) = operator_setups(int64, device_build("cortex-m7"))
    assert all(r.phase == INVOKE for r in reference.refusals)
