"""Spatial bands: the geometry of each band, and outputs byte for byte on the real TFLM wheel."""

from __future__ import annotations

import pytest

from arenalens import load_model
from arenalens.split.bands import band_bounds
from arenalens.split.parts import Part, Role, SplitKind
from arenalens.split.schedule import SplitPlan, live_profile
from tests.split import models
from tests.split.checks import Cut, assert_identical, cut, split_model

BANDS = SplitKind.BANDS


def test_band_bounds_cover_every_row_once() -> None:
    assert band_bounds(10, 3) == ((0, 4), (4, 7), (7, 10))
    assert band_bounds(4, 4) == ((0, 1), (1, 2), (2, 3), (3, 4))


def test_stem_bands_slice_pad_and_run_valid() -> None:
    model = load_model(models.stem_model())
    split = cut(model, BANDS, 0, 3, 3)
    roles = [op.role for op in split.operators]
    assert roles[-1] is Role.CONCAT and roles.count(Role.CONCAT) == 1
    concat = split.operators[-1]
    assert dict(concat.options)["axis"] == 1 and concat.outputs == (split.region.result,)
    # Every window runs with VALID padding: the padding became explicit PADs.
    for op in split.operators:
        if op.role is Role.COMPUTE and op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            assert dict(op.options)["padding"] == 1
    pads = [op for op in split.operators if op.role is Role.PAD]
    assert pads and all(op.opcode == "PAD" for op in pads)
    # The bands' outputs cover the result's 6 rows: 2 + 2 + 2.
    heights = [t.shape[1] for t in concat.inputs if isinstance(t, Part)]
    assert heights == [2, 2, 2]
    # Halo rows are computed by both bands next to them: more MACs than the original.
    assert split.extra_macs > 0 and split.copied_bytes > 0
    assert split.macs == split.original_macs + split.extra_macs


def test_bands_lower_the_busiest_step() -> None:
    model = load_model(models.stem_model(size=(64, 48)))
    whole = live_profile(model, SplitPlan(0)).peak
    split = SplitPlan(0).with_split(cut(model, BANDS, 0, 3, 4))
    assert live_profile(model, split).peak < whole


@pytest.mark.runtime
@pytest.mark.parametrize(
    ("name", "data", "cuts"),
    [
        ("stem, 3 bands", models.stem_model(), [(BANDS, 0, 3, 3)]),
        ("stem, two regions", models.stem_model(1), [(BANDS, 0, 1, 4), (BANDS, 2, 3, 2)]),
        ("stem, one row each", models.stem_model(2), [(BANDS, 0, 3, 6)]),
        ("residual block with PAD and ADD", models.residual_model(), [(BANDS, 0, 4, 4)]),
        ("max pool padded, average pool valid", models.pooling_model(), [(BANDS, 0, 3, 3)]),
    ],
)
def test_bands_are_bit_identical_on_real_tflm(name: str, data: bytes, cuts: list[Cut]) -> None:
    pytest.importorskip("tflite_micro")
    written, _, _ = split_model(data, cuts)
    assert_identical(data, written)


def _dilated_model() -> bytes:
    net = models.network(3)
    x = models.image_input(net, (1, 15, 13, 3))
    a = net.conv(x, "dilated", channels=6, kernel=(3, 3), dilation=(2, 2))
    b = net.depthwise(a, "strided", kernel=(5, 3), strides=(2, 1))
    c = net.conv(b, "valid", channels=5, kernel=(2, 3), strides=(2, 2), padding=models.VALID)
    return net.build([x], [c])


@pytest.mark.runtime
def test_dilation_unequal_strides_and_valid_windows_are_bit_identical() -> None:
    pytest.importorskip("tflite_micro")
    data = _dilated_model()
    for parts in (2, 3):
        written, _, _ = split_model(data, [(BANDS, 0, 2, parts)])
        assert_identical(data, written, seeds=(5,))
