"""The tail rules' claims, live on the tflite-micro wheel.

`tail-fusion` says a standalone activation folded into the layer before it computes
bit-identical outputs when the activation keeps its input's quantization (or the model is float),
and that kTensorArenaSize drops by its saving. Here both models, the one with the standalone
activation and the one the converter writes with it fused, run on the real interpreter: same
random inputs, same output bytes, and each is set up at the number arenalens declares for it and
not in one byte less, so the saving is what the wheel saves.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arenalens.diagnostics import diagnose
from arenalens.pipeline import analyze
from arenalens.tflite.builder import ModelBuilder, quantization
from arenalens.tflite.reader import parse_model

pytestmark = pytest.mark.runtime

INPUT = quantization(0.05, -3)
HIDDEN = quantization(0.08, 5)


def _layer_then_activation(layer: str, activation: str, *, fused: bool, dtype: str) -> bytes:
    """input → layer (a convolution, FULLY_CONNECTED, ADD/SUB/MUL or a pool) → activation →
    output, or (fused) the layer with the activation fused, writing the output itself. Weights
    are seeded random values, per-channel int8 for the convolutions."""
    generator = np.random.default_rng(7)
    quantized = dtype == "INT8"
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    shape = (1, 6, 6, 4) if layer != "FULLY_CONNECTED" else (1, 24)
    source = graph.add_tensor("input", shape, dtype, quantization=INPUT if quantized else None)
    graph.set_inputs([source])
    channels = 4 if layer == "DEPTHWISE_CONV_2D" else 5
    keeps_shape = layer in BINARY or layer in POOLS
    out_shape = shape if keeps_shape else (*shape[:-1], channels)
    options: dict[str, object] = {}
    if layer in POOLS:
        inputs = [source]
        options = {"padding": "SAME", "stride_h": 1, "stride_w": 1}
        options |= {"filter_height": 2, "filter_width": 2}
    elif layer in BINARY:
        other = graph.add_tensor("other", shape, dtype, quantization=INPUT if quantized else None)
        graph.set_inputs([source, other])
        inputs = [source, other]
    else:
        depth = shape[-1]
        kernel_shape = {
            "CONV_2D": (channels, 3, 3, depth),
            "DEPTHWISE_CONV_2D": (1, 3, 3, channels),
            "FULLY_CONNECTED": (channels, depth),
        }[layer]
        if quantized:
            scales = list(generator.uniform(0.004, 0.02, channels))
            axis = 0 if layer != "DEPTHWISE_CONV_2D" else 3
            per_channel = layer != "FULLY_CONNECTED"
            weights = graph.add_constant(
                "w",
                generator.integers(-127, 128, kernel_shape, dtype=np.int8),
                quantization=quantization(scales if per_channel else scales[0], 0, axis=axis),
            )
            bias_scales = [0.05 * s for s in (scales if per_channel else scales[:1])]
            bias = graph.add_constant(
                "b",
                generator.integers(-500, 500, (channels,), dtype=np.int32),
                quantization=quantization(bias_scales if per_channel else bias_scales[0], 0),
            )
        else:
            weights = graph.add_constant(
                "w", generator.standard_normal(kernel_shape).astype(np.float32)
            )
            bias = graph.add_constant("b", generator.standard_normal(channels).astype(np.float32))
        inputs = [source, weights, bias]
        if layer != "FULLY_CONNECTED":
            options = {"padding": "SAME", "stride_h": 1, "stride_w": 1}
            if layer == "DEPTHWISE_CONV_2D":
                options["depth_multiplier"] = 1
    # A pool keeps its input's quantization (pooling_common.cc checks it).
    hidden_quantization = (INPUT if layer in POOLS else HIDDEN) if quantized else None
    name = "fused" if fused else "layer"
    hidden = graph.add_tensor(name, out_shape, dtype, quantization=hidden_quantization)
    graph.add_operator(
        layer,
        inputs,
        [hidden],
        options={**options, "fused_activation_function": activation if fused else "NONE"},
    )
    if fused:
        graph.set_outputs([hidden])
        return builder.build()
    output = graph.add_tensor("activated", out_shape, dtype, quantization=hidden_quantization)
    graph.add_operator(activation, [hidden], [output])
    graph.set_outputs([output])
    return builder.build()


BINARY = ("ADD", "SUB", "MUL")
POOLS = ("AVERAGE_POOL_2D", "MAX_POOL_2D")
CASES = [
    ("CONV_2D", "RELU", "INT8"),
    ("CONV_2D", "RELU6", "INT8"),
    ("DEPTHWISE_CONV_2D", "RELU", "INT8"),
    ("FULLY_CONNECTED", "RELU", "INT8"),
    ("ADD", "RELU6", "INT8"),
    ("SUB", "RELU", "INT8"),
    ("MUL", "RELU6", "INT8"),
    ("AVERAGE_POOL_2D", "RELU", "INT8"),
    ("MAX_POOL_2D", "RELU6", "FLOAT32"),
    ("CONV_2D", "RELU6", "FLOAT32"),
]


def _declared_on_the_wheel(data: bytes, path: Path) -> int:
    """The number arenalens declares for the model, checked on the wheel: set up there and not
    in one byte less."""
    from arenalens.runtimes.tflm.probe import probe

    path.write_bytes(data)
    required = analyze(parse_model(data, path.stem)).budget.required_bytes
    assert probe(str(path), required).fits
    assert not probe(str(path), required - 1).fits
    return required


@pytest.mark.parametrize(("layer", "activation", "dtype"), CASES)
def test_a_folded_activation_is_bit_identical_and_saves_what_the_finding_says(
    layer: str, activation: str, dtype: str, tmp_path: Path
) -> None:
    pytest.importorskip("tflite_micro")
    from arenalens.runtimes.tflm.run import random_inputs, run_model, same_outputs

    standalone = _layer_then_activation(layer, activation, fused=False, dtype=dtype)
    fused = _layer_then_activation(layer, activation, fused=True, dtype=dtype)
    model = parse_model(standalone, "standalone")
    (finding,) = diagnose(model, rules=["tail-fusion"]).findings
    assert "bit-identical" in finding.fix
    inputs = random_inputs(model, invocations=3, seed=1)
    before = run_model(standalone, inputs, output_count=1)
    after = run_model(fused, inputs, output_count=1)
    assert before.ok and after.ok, before.error or after.error
    assert same_outputs(before, after)
    saved = _declared_on_the_wheel(standalone, tmp_path / "standalone.tflite")
    saved -= _declared_on_the_wheel(fused, tmp_path / "fused.tflite")
    assert finding.saving_bytes == saved > 0


def test_folding_an_activation_tflm_has_no_kernel_for_makes_the_model_run(tmp_path: Path) -> None:
    """TFLM registers no RELU_N1_TO_1 kernel, but its layers apply it fused: the finding says
    the model cannot run as it is, and what the folded one declares, which the wheel confirms."""
    pytest.importorskip("tflite_micro")
    standalone = _layer_then_activation(
        "DEPTHWISE_CONV_2D", "RELU_N1_TO_1", fused=False, dtype="INT8"
    )
    fused = _layer_then_activation("DEPTHWISE_CONV_2D", "RELU_N1_TO_1", fused=True, dtype="INT8")
    diagnosis = diagnose(parse_model(standalone, "standalone"))
    assert "cannot-run" in {finding.rule for finding in diagnosis.findings}
    # Nothing about the tail's bytes of a model that cannot run: they are moot.
    assert not {"tail", "tail-per-channel", "tail-variables"} & {f.rule for f in diagnosis.findings}
    (finding,) = [f for f in diagnosis.findings if f.rule == "tail-fusion"]
    assert finding.saving_bytes is None
    declared = _declared_on_the_wheel(fused, tmp_path / "fused.tflite")
    assert finding.details["required_bytes_folded"] == declared
    assert (
        "cannot run the model as it is, but folded it runs on this build and declares "
        f"kTensorArenaSize = {declared:,} B" in finding.message
    )
