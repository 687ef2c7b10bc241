"""LiteRT's loader refuses a tensor's quantization before any kernel or delegate runs
(runtimes/litert/loader.py): arenalens says CANNOT RUN under both delegates, with LiteRT's own
message, and the 2.3.0 wheel's `Interpreter(...)` raises that message on the same models. TFLM
runs them (it never reads the field), as TFLM's own person_detect shows."""

from __future__ import annotations

import numpy as np
import pytest

import arenalens
from arenalens.declared import Status
from arenalens.tflite.builder import ModelBuilder, QuantizationSpec, quantization
from tests.conftest import SHARED_MODELS, SHARED_REASON

_CHANNELS = 8


def _conv(bias: QuantizationSpec, weights: QuantizationSpec | None = None) -> bytes:
    """An int8 CONV_2D (8 output channels) with the given bias and filter quantization."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("x", [1, 6, 6, 4], "INT8", quantization=quantization(0.5, 0))
    filter_ = graph.add_constant(
        "w",
        np.ones((_CHANNELS, 3, 3, 4), np.int8),
        quantization=weights or quantization([0.01] * _CHANNELS, 0, axis=0),
    )
    bias_tensor = graph.add_constant("b", np.zeros(_CHANNELS, np.int32), quantization=bias)
    result = graph.add_tensor("y", [1, 4, 4, _CHANNELS], "INT8", quantization=quantization(0.5))
    graph.add_operator(
        "CONV_2D", [source, filter_, bias_tensor], [result], options={"padding": "VALID"}
    )
    graph.set_inputs([source])
    graph.set_outputs([result])
    return builder.build()


def _add_scalar(constant: QuantizationSpec) -> bytes:
    """An int8 ADD of an input and a rank-0 constant with the given quantization."""
    return _add_constant((), np.array(3, np.int8).tobytes(), constant_quantization=constant)


def _add_constant(
    shape: tuple[int, ...],
    data: bytes,
    *,
    constant_quantization: QuantizationSpec | None = None,
    input_shape: tuple[int, ...] = (1, 4),
) -> bytes:
    """An int8 ADD of an input (of `input_shape`) and a constant of `shape` holding `data`
    (quantized as the input unless `constant_quantization` says otherwise)."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("x", list(input_shape), "INT8", quantization=quantization(0.5, 0))
    constant = graph.add_tensor(
        "c",
        list(shape),
        "INT8",
        data=data,
        quantization=constant_quantization or quantization(0.5, 0),
    )
    result = graph.add_tensor("y", [1, 4], "INT8", quantization=quantization(0.5, 0))
    graph.add_operator("ADD", [source, constant], [result])
    graph.set_inputs([source])
    graph.set_outputs([result])
    return builder.build()


def _spec(scales: int, zero_points: int, axis: int) -> QuantizationSpec:
    return QuantizationSpec((0.005,) * scales, (0,) * zero_points, axis)


# name → (model, LiteRT's message, or None where the loader accepts the model)
CASES = {
    "axis 3 on a rank-1 bias (TOCO)": (
        _conv(_spec(8, 8, 3)),
        "quantized_dimension must be in range [0, 1). Was 3.",
    ),
    "axis 1 on a rank-1 bias": (
        _conv(_spec(8, 8, 1)),
        "quantized_dimension must be in range [0, 1). Was 1.",
    ),
    "a negative axis": (
        _conv(_spec(8, 8, -1)),
        "quantized_dimension must be in range [0, 1). Was -1.",
    ),
    "one scale, axis out of range": (
        _conv(_spec(1, 1, 3)),
        "quantized_dimension must be in range [0, 1). Was 3.",
    ),
    "4 scales for 8 channels": (
        _conv(_spec(4, 4, 0)),
        "num_scales must be 1 for per-layer quantization, or 8 for per-axis quantization, "
        "but got 4.",
    ),
    "one zero point for 8 scales": (
        _conv(_spec(8, 1, 0)),
        "QuantizationParam has 1 zero_point values and 8 scale values. Must have same number.",
    ),
    "no zero points": (
        _conv(_spec(8, 0, 0)),
        "QuantizationParam has 0 zero_point values and 8 scale values. Must have same number.",
    ),
    "two zero points for one scale": (
        _conv(_spec(1, 2, 0)),
        "QuantizationParam has 2 zero_point values and 1 scale values. Must have same number.",
    ),
    "filter axis 4 of rank 4": (
        _conv(quantization([0.005] * _CHANNELS, 0), weights=_spec(8, 8, 4)),
        "quantized_dimension must be in range [0, 4). Was 4.",
    ),
    "a scalar's axis 5 (no range for rank 0)": (_add_scalar(_spec(1, 1, 5)), None),
    "a scalar's negative axis": (
        _add_scalar(_spec(1, 1, -2)),
        "quantized_dimension must be in range [0, 0). Was -2.",
    ),
    "a well-formed per-channel convolution": (_conv(quantization([0.005] * _CHANNELS, 0)), None),
}


@pytest.mark.parametrize("delegate", ["xnnpack", "none"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_arenalens_refuses_what_the_loader_refuses(name: str, delegate: str) -> None:
    data, message = CASES[name]
    verdict = arenalens.check(data, budget="100MB", runtime="litert", delegate=delegate)
    if message is None:
        assert verdict.declared.status is not Status.CANNOT_RUN, verdict.declared.reasons
        return
    assert verdict.declared.status is Status.CANNOT_RUN
    (refusal,) = verdict.declared.refusals
    assert f"'{message}'" in refusal.reason and refusal.phase == "setup"
    if name.startswith("filter"):
        return  # TFLM's convolution reads a filter's axis: its Prepare refuses this one too
    # TFLM never reads a bias' or a constant's field: the same model is no CANNOT RUN there.
    assert arenalens.check(data, budget="100MB").declared.status is not Status.CANNOT_RUN


@pytest.mark.runtime
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_wheel_refuses_the_same_models_with_the_same_words(name: str) -> None:
    interpreter_module = pytest.importorskip("ai_edge_litert.interpreter")
    data, message = CASES[name]
    if message is None:
        interpreter_module.Interpreter(model_content=data).allocate_tensors()
        return
    with pytest.raises(ValueError, match="invalid quantization parameters") as raised:
        interpreter_module.Interpreter(model_content=data)
    assert message in str(raised.value)


def test_a_model_with_the_quirk_on_every_bias_gets_one_reason() -> None:
    """Converters repeat a quirk on every bias: one reason names the tensors and counts them."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    tensor = graph.add_tensor("x0", [1, 4, 4, 8], "INT8", quantization=quantization(0.5))
    for layer in range(10):
        filter_ = graph.add_constant(
            f"w{layer}", np.ones((8, 1, 1, 8), np.int8), quantization=quantization([0.01] * 8)
        )
        bias = graph.add_constant(f"b{layer}", np.zeros(8, np.int32), quantization=_spec(8, 8, 3))
        result = graph.add_tensor(
            f"x{layer + 1}", [1, 4, 4, 8], "INT8", quantization=quantization(0.5)
        )
        graph.add_operator("CONV_2D", [tensor, filter_, bias], [result])
        tensor = result
    graph.set_inputs([0])
    graph.set_outputs([tensor])
    verdict = arenalens.check(builder.build(), budget="100MB", runtime="litert")
    (refusal,) = verdict.declared.refusals
    assert refusal.reason.startswith("10 tensors (2, 5, 8, 11, 14, 17, 20, 23, ... and 2 more;")
    assert "the first 'b0'" in refusal.reason


@pytest.mark.skipif(
    not (SHARED_MODELS / "tflite_micro__person_detect.tflite").is_file(), reason=SHARED_REASON
)
def test_tflm_person_detect_cannot_run_on_litert() -> None:
    """The shared corpus' reference.json: LiteRT's loader refuses it ('quantized_dimension must
    be in range [0, 1). Was 3.'), the real TFLM runs it."""
    data = (SHARED_MODELS / "tflite_micro__person_detect.tflite").read_bytes()
    for delegate in ("xnnpack", "none"):
        verdict = arenalens.check(data, budget="100MB", runtime="litert", delegate=delegate)
        assert verdict.declared.status is Status.CANNOT_RUN
        assert "Was 3." in verdict.declared.refusals[0].reason
    assert arenalens.check(data, budget="100MB").declared.status is Status.EXACT


def _int4_weights(outputs: int, depth: int, nbytes: int) -> bytes:
    """A float FULLY_CONNECTED with int4 per-channel weights whose buffer holds `nbytes`."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("x", [1, depth], "FLOAT32")
    weights = graph.add_tensor(
        "w",
        [outputs, depth],
        "INT4",
        data=bytes(nbytes),
        quantization=quantization([0.1] * outputs, [0] * outputs, axis=0),
    )
    result = graph.add_tensor("y", [1, outputs], "FLOAT32")
    graph.add_operator("FULLY_CONNECTED", [source, weights, -1], [result])
    graph.set_inputs([source])
    graph.set_outputs([result])
    return builder.build()


_OVERFLOW = "BytesRequired number of elements overflowed."
# The wheel prints subgraph.cc's check failing; arenalens names the check.
_SHORT = "TF_LITE_ENSURE(required_bytes <= bytes) in SetTensorParametersReadOnly"
# name → (model, the tensor LiteRT names, its message; None where the loader accepts the model)
SIZE_CASES = {
    "a constant holding its bytes": (_add_constant((4,), bytes(4)), None),
    "a constant holding more than its bytes": (_add_constant((4,), bytes(5)), None),
    "a constant holding fewer bytes": (_add_constant((4,), bytes(3)), (1, _SHORT)),
    "a constant with a negative dimension": (_add_constant((1, -4), bytes(4)), (1, _OVERFLOW)),
    "a constant with a zero then a negative dimension": (
        _add_constant((0, -4), bytes(1)),
        (1, _OVERFLOW),
    ),
    "an input with a negative dimension": (
        _add_constant((4,), bytes(4), input_shape=(1, -4)),
        (0, _OVERFLOW),
    ),
    "int4 weights packed two a byte": (_int4_weights(3, 3, 5), None),
    "int4 weights a byte short of packed": (_int4_weights(3, 3, 4), (1, _SHORT)),
}


@pytest.mark.parametrize("delegate", ["xnnpack", "none"])
@pytest.mark.parametrize("name", sorted(SIZE_CASES))
def test_arenalens_refuses_the_sizes_the_loader_refuses(name: str, delegate: str) -> None:
    """A negative dimension (the fuzzer's input 610 of seed 16 had one in a dense layer's
    weights, and crashed the first-invoke replay) or a constant short of its bytes: CANNOT RUN
    under both delegates, with LiteRT's words; TFLM makes neither check."""
    data, expected = SIZE_CASES[name]
    verdict = arenalens.check(data, budget="100MB", runtime="litert", delegate=delegate)
    if expected is None:
        assert verdict.declared.status is not Status.CANNOT_RUN, verdict.declared.reasons
        return
    tensor, message = expected
    assert verdict.declared.status is Status.CANNOT_RUN
    (refusal,) = verdict.declared.refusals
    assert refusal.phase == "setup"
    assert f"('{message}' then 'Tensor {tensor} is invalidly specified in schema.')" in (
        refusal.reason
    )


@pytest.mark.runtime
@pytest.mark.parametrize("name", sorted(SIZE_CASES))
def test_the_wheel_refuses_the_same_sizes_with_the_same_words(name: str) -> None:
    interpreter_module = pytest.importorskip("ai_edge_litert.interpreter")
    data, expected = SIZE_CASES[name]
    if expected is None:
        interpreter_module.Interpreter(model_content=data).allocate_tensors()
        return
    tensor, message = expected
    with pytest.raises(ValueError, match=f"Tensor {tensor} is invalidly specified") as raised:
        interpreter_module.Interpreter(model_content=data)
    words = "required_bytes <= bytes" if message == _SHORT else message
    assert words in str(raised.value)
