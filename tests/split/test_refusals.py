"""What must not be split, and why: one test per refusal."""

from __future__ import annotations

import numpy as np

from arenalens import load_model
from arenalens.split.bands import split_bands
from arenalens.split.channels import split_channels
from arenalens.split.operators import channel_rule, row_rule
from arenalens.split.parts import Region, SplitKind
from arenalens.split.regions import Rules, region_of
from arenalens.tflite.builder import ModelBuilder, quantization
from tests.split import models


def _rules(data: bytes) -> Rules:
    return Rules.of(load_model(data))


def test_fully_connected_is_never_split() -> None:
    rules = _rules(models.fully_connected_model())
    fc = rules.subgraph.operators[2]
    assert fc.opcode == "FULLY_CONNECTED"
    for reason in (
        row_rule(rules.model, rules.subgraph, fc),
        channel_rule(rules.model, rules.subgraph, fc, head=True),
    ):
        assert isinstance(reason, str) and "partial sum" in reason
    refused = region_of(rules, 0, 2, SplitKind.BANDS)
    assert isinstance(refused, str) and "operator 1" in refused  # RESHAPE has no band rule


def test_a_convolution_after_a_channel_group_is_not_split_by_its_input_channels() -> None:
    rules = _rules(models.stem_model())
    # conv0 → depthwise → pw2 (a CONV_2D reading every channel of the group chain).
    refused = region_of(rules, 0, 2, SplitKind.CHANNELS)
    assert isinstance(refused, str)
    assert "sums over every input channel" in refused and "partial sum" in refused


def test_float_models_are_not_split() -> None:
    rules = _rules(models.float_model())
    reason = rules.rows[0]
    assert isinstance(reason, str) and "FLOAT32" in reason and "sign" in reason


def test_average_pooling_is_not_padded() -> None:
    rules = _rules(models.pooling_model(average_padding="SAME"))
    region = region_of(rules, 2, 3, SplitKind.BANDS)
    assert isinstance(region, Region)
    refused = split_bands(rules, region, 3)
    assert isinstance(refused, str)
    assert "AVERAGE_POOL_2D" in refused and "number of points inside the image" in refused


def test_a_region_reads_one_activation_from_outside() -> None:
    rules = _rules(models.two_input_model())
    refused = region_of(rules, 0, 1, SplitKind.BANDS)
    assert isinstance(refused, str) and "2 activations from outside" in refused


def test_a_tensor_read_after_the_region_stays_whole() -> None:
    rules = _rules(models.branch_model())
    refused = region_of(rules, 0, 1, SplitKind.BANDS)
    assert isinstance(refused, str) and "read after the region (by operator 3)" in refused


def test_at_most_ten_parts_for_tflms_concatenation() -> None:
    rules = _rules(models.stem_model())
    region = region_of(rules, 0, 3, SplitKind.BANDS)
    assert isinstance(region, Region)
    refused = split_bands(rules, region, 11)
    assert isinstance(refused, str) and "at most 10" in refused
    channels = region_of(rules, 2, 3, SplitKind.CHANNELS)
    assert isinstance(channels, Region)
    assert "at most 10" in str(split_channels(rules, channels, 12))


def test_no_more_bands_than_rows() -> None:
    rules = _rules(models.stem_model())
    region = region_of(rules, 3, 3, SplitKind.BANDS)
    assert isinstance(region, Region)
    refused = split_bands(rules, region, 7)
    assert isinstance(refused, str) and "6 rows, fewer than 7 bands" in refused


def test_a_broadcast_operand_is_not_split() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph()
    q = quantization(0.05, -3)
    x = graph.add_tensor("x", (1, 8, 8, 4), "INT8", quantization=q)
    bias = graph.add_constant("c", np.ones((1, 1, 1, 4), dtype=np.int8), quantization=q)
    y = graph.add_tensor("y", (1, 8, 8, 4), "INT8", quantization=q)
    graph.add_operator("ADD", [x, bias], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    rules = _rules(builder.build())
    reason = rules.rows[0]
    assert isinstance(reason, str) and "constant" in reason


def test_an_output_shape_tflm_would_not_compute_is_refused() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph()
    q = quantization(0.05, -3)
    x = graph.add_tensor("x", (1, 8, 8, 2), "INT8", quantization=q)
    w = graph.add_constant("w", np.ones((2, 3, 3, 2), dtype=np.int8), quantization=q)
    # SAME at stride 1 keeps 8 rows; the file claims 6.
    y = graph.add_tensor("y", (1, 6, 8, 2), "INT8", quantization=q)
    graph.add_operator("CONV_2D", [x, w, -1], [y], options={"padding": "SAME"})
    graph.set_inputs([x])
    graph.set_outputs([y])
    reason = _rules(builder.build()).rows[0]
    assert isinstance(reason, str) and "output size 6 is not the 8 TFLM computes" in reason
