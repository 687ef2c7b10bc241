"""The tail rules' quiet cases: what they must not say (the triggers are in test_rules.py,
the live claims in test_tail_rules_live.py)."""

from __future__ import annotations

import numpy as np

from arenalens.tflite.builder import ModelBuilder
from arenalens.tflite.reader import load_model, parse_model
from tests.conftest import SHARED_MODELS
from tests.diagnostics.models import ACTIVATION, chain, load
from tests.diagnostics.test_rules import activation_after_conv, clean_model, run


def test_tail_quiet_under_litert() -> None:
    assert run(clean_model(), "tail", runtime="litert") == []


def test_tail_fusion_merges_consecutive_reshapes() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 4, 4, 2), "FLOAT32")
    flat = graph.add_tensor("flat", (1, 32), "FLOAT32")
    square = graph.add_tensor("square", (4, 8), "FLOAT32")
    graph.add_operator("RESHAPE", [source], [flat], options={"new_shape": [1, 32]})
    graph.add_operator("RESHAPE", [flat], [square], options={"new_shape": [4, 8]})
    graph.set_inputs([source])
    graph.set_outputs([square])
    (finding,) = run(load(builder), "tail-fusion")
    assert finding.saving_bytes and finding.saving_bytes > 0
    assert "operator 1 (RESHAPE) into operator 0 (RESHAPE)" in finding.message


def test_tail_fusion_quiet_when_the_activation_is_fused_or_shared() -> None:
    assert run(activation_after_conv(relu_fused=True), "tail-fusion") == []
    builder, graph = chain(channels=(8, 8))
    first = graph.operators[0].outputs[0]
    out = graph.add_tensor("relu", graph.shape(first), "INT8", quantization=ACTIVATION)
    graph.add_operator("RELU", [first], [out])  # conv0's output is also read by conv1
    graph.set_outputs([graph.outputs[0], out])
    assert run(load(builder), "tail-fusion") == []


def test_tail_per_channel_quiet_without_per_channel_kernels() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("input", (1, 16), "FLOAT32")
    weights = graph.add_constant("w", np.ones((4, 16), np.float32))
    out = graph.add_tensor("out", (1, 4), "FLOAT32")
    graph.add_operator("FULLY_CONNECTED", [source, weights, -1], [out])
    graph.set_inputs([source])
    graph.set_outputs([out])
    assert run(load(builder), "tail-per-channel") == []


def test_tail_per_channel_quiet_when_half_the_width_saves_nothing() -> None:
    """Four channels: each array is 16 B, and still one 16-byte tail step at two channels."""
    builder, _ = chain(channels=(4,))
    assert run(load(builder), "tail-per-channel") == []


def test_tail_rules_quiet_on_a_model_the_build_cannot_run() -> None:
    """No share of a kTensorArenaSize that does not exist: the cannot-run finding leads."""
    builder, graph = chain(channels=(8,))
    last = graph.outputs[0]
    out = graph.add_tensor("gelu", graph.shape(last), "INT8", quantization=ACTIVATION)
    graph.add_operator("GELU", [last], [out])
    graph.set_outputs([out])
    model = load(builder)
    for rule in ("tail", "tail-per-channel", "tail-fusion"):
        assert run(model, rule, build="cortex-m7/reference") == []


def test_tail_variables_quiet_for_int8_state_or_a_kernel_that_needs_it_wide() -> None:
    from tests.tflm_synthetic import svdf_with_variable_state

    assert run(clean_model(), "tail-variables") == []
    # An int16 SVDF state: the kernel reads its state as its int16 time weights' type, so an
    # int8 state alone cannot run.
    assert run(parse_model(svdf_with_variable_state(), "svdf"), "tail-variables") == []
    lstm = SHARED_MODELS / "tflite_micro__trained_lstm.tflite"
    if lstm.is_file():  # float LSTM state: its kernel refuses int8 state
        assert run(load_model(lstm), "tail-variables") == []
