"""--input-shape: shapes propagated by the real LiteRT interpreter, and the re-planned arena."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arenalens.errors import RuntimeUnavailableError, UsageError
from arenalens.examples import example_bytes
from arenalens.ir import Model
from arenalens.pipeline import analyze
from arenalens.runtimes.litert.shapes import (
    input_tensor_index,
    parse_input_shape,
    resize_model_inputs,
)
from arenalens.tflite.reader import load_model

HAVE_LITERT = importlib.util.find_spec("ai_edge_litert") is not None
HAVE_LITERT_RULES = importlib.util.find_spec("arenalens.runtimes.litert") is not None
needs_litert = pytest.mark.skipif(not HAVE_LITERT, reason="ai_edge_litert not installed")
EXAMPLE = "vww_mobilenet_v1"
NEW_SHAPE = (1, 128, 128, 3)


def example() -> Model:
    return load_model(example_bytes(EXAMPLE))


def litert(model_bytes: bytes, shape: tuple[int, ...] | None) -> Any:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interpreter = Interpreter(
        model_content=model_bytes,
        experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    if shape is not None:
        interpreter.resize_tensor_input(0, list(shape), strict=False)
    interpreter.allocate_tensors()
    return interpreter


def real_arena_bytes(interpreter: Any, model: Model) -> int:
    """The real arena's high-water mark: span of the non-constant tensors' data
    (docs/runtime-rules.md §L10)."""
    wrapper = interpreter._interpreter
    spans = []
    for index in range(wrapper.NumTensors(0)):
        if index < len(model.subgraphs[0].tensors):
            tensor = model.subgraphs[0].tensors[index]
            if tensor.has_data or tensor.is_variable:
                continue
        try:
            wrapper.TensorType(index, 0)  # typeless kernel tensors: never planned, never touch
            data = interpreter.tensor(index)()
        except ValueError:  # "Tensor data is null": dynamic, zero-byte or unallocated
            continue
        if data.ndim == 0 or data.nbytes == 0:
            continue
        spans.append((data.ctypes.data, data.nbytes))
    base = min(address for address, _ in spans)
    return max(address - base + nbytes for address, nbytes in spans)


def test_parse_input_shape() -> None:
    assert parse_input_shape("input=1x128x128x3") == ("input", (1, 128, 128, 3))
    assert parse_input_shape("a=b=1,2") == ("a=b", (1, 2))
    for bad in ("1x2", "x=", "x=1xx2", "x=0x3", "=1x2"):
        with pytest.raises(UsageError):
            parse_input_shape(bad)


def test_input_lookup_by_name_signature_and_position() -> None:
    model = example()
    assert input_tensor_index(model, "input") == model.subgraphs[0].inputs[0]
    assert input_tensor_index(model, "0") == model.subgraphs[0].inputs[0]
    with pytest.raises(UsageError, match=r"no input named 'nope'.*'input'"):
        input_tensor_index(model, "nope")
    with pytest.raises(UsageError, match="out of range"):
        input_tensor_index(model, "3")


@needs_litert
def test_shapes_match_the_interpreter_after_resize() -> None:
    model = example()
    resized = resize_model_inputs(model, {"input": NEW_SHAPE})
    interpreter = litert(example_bytes(EXAMPLE), NEW_SHAPE)
    for tensor in resized.subgraphs[0].tensors:
        real = tuple(int(d) for d in interpreter._interpreter.TensorSize(tensor.index, 0))
        assert tensor.shape == real, tensor.name
    grown = [
        (before.nbytes, after.nbytes)
        for before, after in zip(
            model.subgraphs[0].tensors, resized.subgraphs[0].tensors, strict=True
        )
        if before.nbytes != after.nbytes
    ]
    assert grown and all(after > before for before, after in grown)


@needs_litert
def test_resized_tflm_arena_grows_like_the_activations() -> None:
    model = example()
    resized = resize_model_inputs(model, {"input": NEW_SHAPE})
    before = analyze(model).primary.lower_bound
    after = analyze(resized).primary.lower_bound
    # Every feature map scales with the image area: (128 / 96)^2 = 16/9.
    assert after == pytest.approx(before * 16 / 9, rel=0.02)


@needs_litert
@pytest.mark.skipif(not HAVE_LITERT_RULES, reason="arenalens.runtimes.litert not on this branch")
def test_litert_arena_matches_the_real_interpreter_after_resize() -> None:
    model = example()
    resized = resize_model_inputs(model, {"input": NEW_SHAPE})
    for candidate, shape in ((model, None), (resized, NEW_SHAPE)):
        interpreter = litert(example_bytes(EXAMPLE), shape)
        predicted = analyze(candidate, runtime="litert").primary.runtime_plan.arena_size
        assert predicted == real_arena_bytes(interpreter, model)


@needs_litert
def test_real_arena_grows_after_resize() -> None:
    """The measurement the LiteRT comparison relies on sees the resize."""
    model = example()
    before = real_arena_bytes(litert(example_bytes(EXAMPLE), None), model)
    after = real_arena_bytes(litert(example_bytes(EXAMPLE), NEW_SHAPE), model)
    assert after > before


@needs_litert
def test_impossible_shape_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="LiteRT cannot run the model with input shape"):
        resize_model_inputs(example(), {"input": (1, 192, 192, 3)})
    with pytest.raises(UsageError, match="rank 4"):
        resize_model_inputs(example(), {"input": (1, 128, 128)})


@needs_litert
def test_a_litert_that_aborts_is_a_one_line_error() -> None:
    """LiteRT's ADD Prepare aborts the process on a near-zero output scale (flow campaign,
    `python -m flows --replay 75 --seed 1`): the shapes are propagated in a child, so arenalens
    says so in one line (exit 2) instead of dying with SIGABRT."""
    from arenalens.tflite.reader import parse_model
    from tests.fixtures.flow_models import tiny_add_scale_model

    model = parse_model(tiny_add_scale_model(), "tiny_add.tflite")
    with pytest.raises(UsageError, match=r"at its own size too.*aborted \(SIGABRT\)"):
        resize_model_inputs(model, {"image": (1, 16, 16, 4)})
    # The model as it is needs no LiteRT, and other shapes still propagate in the same process.
    assert resize_model_inputs(example(), {"input": NEW_SHAPE}).subgraphs[0].tensors[0].shape == (
        NEW_SHAPE
    )


@needs_litert
def test_check_at_a_shape_litert_aborts_on_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arenalens.cli import main
    from tests.fixtures.flow_models import tiny_add_scale_model

    path = tmp_path / "tiny_add.tflite"
    path.write_bytes(tiny_add_scale_model())
    code = main(["check", str(path), "--input-shape", "image=1x16x16x4", "--budget", "1MB"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert str(path) in err and "aborted" in err


def test_missing_litert_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_litert(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("ai_edge_litert"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_litert)
    with pytest.raises(RuntimeUnavailableError, match=r"pip install 'arenalens\[runtime\]'"):
        resize_model_inputs(example(), {"input": NEW_SHAPE})


def test_no_shapes_returns_the_model() -> None:
    model = example()
    assert resize_model_inputs(model, {}) is model
    assert np.prod(NEW_SHAPE) > 0


@needs_litert
def test_a_bias_axis_litert_refuses_still_propagates_shapes() -> None:
    """A model TFLM runs but LiteRT will not load, for a rank-1 bias's out-of-range
    quantized_dimension alone, still gets its shapes propagated (from a copy with the axis its
    scales describe); the model itself and its bytes stay as they were."""
    from arenalens.tflite.reader import parse_model
    from tests.fixtures.path_models import conv_with_bias_axis

    data = conv_with_bias_axis(3)
    with pytest.raises(ValueError, match="quantized_dimension must be in range"):
        litert(data, None)
    model = parse_model(data, "conv.tflite")
    resized = resize_model_inputs(model, {"x": (1, 10, 10, 4)})
    assert resized.subgraphs[0].tensors[3].shape == (1, 8, 8, 8)
    bias = 2
    assert resized.subgraphs[0].tensors[bias].quantization == (
        model.subgraphs[0].tensors[bias].quantization
    )
    assert bytes(model.data) == data


def test_only_an_out_of_range_axis_is_rewritten() -> None:
    from arenalens.ir import Quantization
    from arenalens.runtimes.litert.shapes import _described_axis

    def axis_for(shape: tuple[int, ...], channels: int, axis: int) -> int | None:
        return _described_axis(shape, Quantization(0.1, 0, channels, axis))

    assert axis_for((8,), 8, 3) == 0  # per-channel bias: its one axis
    assert axis_for((8,), 1, 3) == 0  # one scale: any axis LiteRT accepts
    assert axis_for((8, 3, 3, 8), 8, 3) is None  # in range: left alone
    assert axis_for((8, 8), 8, 2) is None  # two axes fit the scales: LiteRT's refusal stands
    assert axis_for((8,), 4, 3) is None  # no axis fits: likewise
    assert axis_for((8,), 8, -1) is None
    assert axis_for((), 8, 3) is None  # a scalar: LiteRT does not check
    assert _described_axis((8,), None) is None
