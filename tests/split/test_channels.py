"""Channel groups: sliced weights with their own scales, outputs byte for byte on the wheel."""

from __future__ import annotations

import pytest

from arenalens import load_model
from arenalens.split.parts import Part, Role, SplitKind
from arenalens.tflite.reader import read_quantization_scales
from tests.split import models
from tests.split.checks import assert_identical, cut, split_model

CHANNELS = SplitKind.CHANNELS


def test_groups_slice_filters_biases_and_scales() -> None:
    model = load_model(models.channel_model())
    split = cut(model, CHANNELS, 0, 2, 3)
    assert split.extra_macs == 0
    convs = [op for op in split.operators if op.opcode == "CONV_2D"]
    assert len(convs) == 3
    original_scales = read_quantization_scales(model, 0, model.subgraphs[0].operators[0].inputs[1])
    for index, conv in enumerate(convs):
        weights = conv.inputs[1]
        assert isinstance(weights, Part) and weights.shape[0] == 8
        assert weights.quantization is not None
        assert weights.quantization.scales == original_scales[8 * index : 8 * index + 8]
    concat = split.operators[-1]
    assert concat.role is Role.CONCAT and dict(concat.options)["axis"] == 3


def test_per_tensor_weights_keep_their_one_scale() -> None:
    model = load_model(models.channel_model(per_tensor=True))
    split = cut(model, CHANNELS, 0, 2, 2)
    weights = split.operators[0].inputs[1]
    assert isinstance(weights, Part) and weights.quantization is None
    assert weights.like == model.subgraphs[0].operators[0].inputs[1]


@pytest.mark.runtime
@pytest.mark.parametrize(
    ("name", "data", "parts"),
    [
        ("per-channel weights", models.channel_model(), 3),
        ("per-tensor weights", models.channel_model(1, per_tensor=True), 4),
        ("depth multiplier 2", models.channel_model(2, multiplier=2), 4),
        ("eight groups", models.channel_model(3), 8),
    ],
)
def test_groups_are_bit_identical_on_real_tflm(name: str, data: bytes, parts: int) -> None:
    pytest.importorskip("tflite_micro")
    written, _, _ = split_model(data, [(CHANNELS, 0, 2, parts)])
    assert_identical(data, written)
