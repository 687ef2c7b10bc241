"""Built-in examples: structure, int8 validity, determinism, alignment, runs in both runtimes."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import numpy as np
import pytest

from arenalens import UsageError, load_model
from arenalens.examples import EXAMPLES, example_bytes, write_example
from arenalens.ir import Model, Subgraph

# name → (operators, tensors, opcode histogram)
EXPECTED_STRUCTURE = {
    "vww_mobilenet_v1": (
        31,
        89,
        {
            "CONV_2D": 14,
            "DEPTHWISE_CONV_2D": 13,
            "AVERAGE_POOL_2D": 1,
            "RESHAPE": 1,
            "FULLY_CONNECTED": 1,
            "SOFTMAX": 1,
        },
    ),
    "kws_ds_cnn": (
        13,
        35,
        {
            "CONV_2D": 5,
            "DEPTHWISE_CONV_2D": 4,
            "AVERAGE_POOL_2D": 1,
            "RESHAPE": 1,
            "FULLY_CONNECTED": 1,
            "SOFTMAX": 1,
        },
    ),
    "resnet8_cifar": (
        16,
        38,
        {
            "CONV_2D": 9,
            "ADD": 3,
            "AVERAGE_POOL_2D": 1,
            "RESHAPE": 1,
            "FULLY_CONNECTED": 1,
            "SOFTMAX": 1,
        },
    ),
    "fc_autoencoder": (10, 31, {"FULLY_CONNECTED": 10}),
    "mobilenet_v1_224": (
        31,
        90,
        {
            "CONV_2D": 14,
            "DEPTHWISE_CONV_2D": 13,
            "MEAN": 1,
            "RESHAPE": 1,
            "FULLY_CONNECTED": 1,
            "SOFTMAX": 1,
        },
    ),
    "branchy_inception": (
        25,
        59,
        {
            "CONV_2D": 15,
            "MAX_POOL_2D": 4,
            "CONCATENATION": 2,
            "AVERAGE_POOL_2D": 1,
            "RESHAPE": 1,
            "FULLY_CONNECTED": 1,
            "SOFTMAX": 1,
        },
    ),
}
# (input shape, output shape) per example.
EXPECTED_IO = {
    "vww_mobilenet_v1": ((1, 96, 96, 3), (1, 2)),
    "kws_ds_cnn": ((1, 49, 10, 1), (1, 12)),
    "resnet8_cifar": ((1, 32, 32, 3), (1, 10)),
    "fc_autoencoder": ((1, 640), (1, 640)),
    "branchy_inception": ((1, 32, 32, 3), (1, 10)),
    "mobilenet_v1_224": ((1, 224, 224, 3), (1, 10)),
}
MAX_FILE_BYTES = 300_000
ARENA_BYTES = 2 * 1024 * 1024
NAMES = sorted(EXAMPLES)


def _main(name: str) -> tuple[Model, Subgraph]:
    model = load_model(example_bytes(name), strict=True)
    return model, model.subgraphs[0]


def test_registry_names_and_descriptions() -> None:
    assert set(EXAMPLES) == set(EXPECTED_STRUCTURE)
    for name, spec in EXAMPLES.items():
        assert spec.name == name
        assert spec.description
        assert "\n" not in spec.description


@pytest.mark.parametrize("name", NAMES)
def test_structure(name: str) -> None:
    model, main = _main(name)
    operator_count, tensor_count, histogram = EXPECTED_STRUCTURE[name]
    assert len(model.subgraphs) == 1
    assert model.operator_count == operator_count
    assert model.tensor_count == tensor_count
    assert Counter(op.opcode for op in main.operators) == histogram
    input_shape, output_shape = EXPECTED_IO[name]
    assert [main.tensors[i].shape for i in main.inputs] == [input_shape]
    assert [main.tensors[i].shape for i in main.outputs] == [output_shape]
    assert [sig.key for sig in model.signature_defs] == ["serving_default"]


@pytest.mark.parametrize("name", NAMES)
def test_int8_quantization(name: str) -> None:
    _, main = _main(name)
    for tensor in main.tensors:
        if tensor.is_constant:
            continue
        assert tensor.dtype.name == "INT8", tensor.name
        assert tensor.quantization is not None
        assert tensor.quantization.channel_count == 1
    for op in main.operators:
        weights = [main.tensors[i] for i in op.inputs[1:] if main.tensors[i].dtype.name == "INT8"]
        biases = [main.tensors[i] for i in op.inputs[1:] if main.tensors[i].dtype.name == "INT32"]
        if op.opcode in {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"}:
            (weight,), (bias,) = weights, biases
            assert weight.is_constant and bias.is_constant
            assert weight.quantization is not None and bias.quantization is not None
            assert weight.quantization.zero_point == 0
            expected_axis, expected_channels = {
                "CONV_2D": (0, weight.shape[0]),
                "DEPTHWISE_CONV_2D": (3, weight.shape[-1]),
                "FULLY_CONNECTED": (0, 1),
            }[op.opcode]
            assert weight.quantization.axis == expected_axis
            assert weight.quantization.channel_count == expected_channels
            assert bias.quantization.channel_count == expected_channels
            assert op.version >= 3
        if op.opcode == "SOFTMAX":
            output = main.tensors[op.outputs[0]].quantization
            assert output is not None
            assert (output.scale, output.zero_point) == (1 / 256, -128)


@pytest.mark.parametrize("name", NAMES)
def test_build_is_deterministic(name: str) -> None:
    first = EXAMPLES[name].build()
    assert EXAMPLES[name].build() == first
    assert example_bytes(name) == first


@pytest.mark.parametrize("name", NAMES)
def test_size_and_alignment(name: str) -> None:
    model, _ = _main(name)
    assert model.file_bytes < MAX_FILE_BYTES
    assert model.buffers[0].nbytes == 0
    data_buffers = [buffer for buffer in model.buffers if buffer.nbytes]
    assert data_buffers
    assert all(buffer.file_offset % 16 == 0 for buffer in data_buffers)


def test_example_bytes_is_cached_and_checks_names() -> None:
    assert example_bytes("kws_ds_cnn") is example_bytes("kws_ds_cnn")
    with pytest.raises(UsageError, match="unknown example 'nope'"):
        example_bytes("nope")


def test_write_example(tmp_path) -> None:
    path = write_example("resnet8_cifar", tmp_path / "models")
    assert path == tmp_path / "models" / "resnet8_cifar.tflite"
    assert path.read_bytes() == example_bytes("resnet8_cifar")
    assert load_model(path).operator_count == 16


# -- branchy_inception: the emitted order is the memory-unfriendly one ----------------------------


def _peak_live_bytes(main: Subgraph, order: list[int]) -> int:
    """Operator order → the largest sum of live activation bytes over its steps.

    A tensor is live from the step that writes it (step 0 for inputs) through the last step that
    reads it, inclusive at both ends; model outputs stay live to the end.
    """
    assert sorted(order) == list(range(len(main.operators)))
    step_of = {op: step for step, op in enumerate(order)}
    last_step = len(order) - 1
    live_ranges = []
    for tensor in main.tensors:
        if tensor.is_constant:
            continue
        first = 0 if tensor.is_input else step_of[main.producers[tensor.index]]
        readers = [step_of[op] for op in main.consumers.get(tensor.index, ())]
        assert all(reader > first for reader in readers) or tensor.is_input
        last = last_step if tensor.is_output else max([first, *readers])
        live_ranges.append((first, last, tensor.nbytes))
    return max(
        sum(nbytes for first, last, nbytes in live_ranges if first <= step <= last)
        for step in range(len(order))
    )


def _branch_by_branch(main: Subgraph) -> list[int]:
    """The emitted order with each module's branches run one after the other, to completion."""
    names = [main.tensors[op.outputs[0]].name for op in main.operators]

    def branch_key(op: int) -> tuple[str, str]:
        module, branch, *_ = names[op].split("/")
        return module, branch

    order: list[int] = []
    pending: list[int] = []
    for op, name in enumerate(names):
        if "/branch_" in name:
            pending.append(op)
            continue
        order.extend(sorted(pending, key=lambda o: (branch_key(o), o)))
        pending = []
        order.append(op)
    return order


def test_branchy_inception_order_is_memory_unfriendly() -> None:
    _, main = _main("branchy_inception")
    emitted = list(range(len(main.operators)))
    reordered = _branch_by_branch(main)
    assert reordered != emitted
    # Numbers quoted in the module docstring.
    assert _peak_live_bytes(main, emitted) == 30_720
    assert _peak_live_bytes(main, reordered) == 22_528


def test_branchy_inception_emits_branches_breadth_first() -> None:
    _, main = _main("branchy_inception")
    names = [main.tensors[op.outputs[0]].name for op in main.operators]
    module_a = [name.split("/")[1:3] for name in names if name.startswith("module_a/branch")]
    levels = [int(level) for _, level in module_a]
    assert levels == sorted(levels)  # every first operator, then every second, ...
    assert all(a != b for a, b in pairwise(module_a))


# -- real runtimes ----------------------------------------------------------------------------


def _random_input(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, size=shape, dtype=np.int8)


def _run_litert(data: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    interpreter = litert.Interpreter(
        model_content=data,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    interpreter.allocate_tensors()
    outputs = []
    for array in inputs:
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], array)
        interpreter.invoke()
        outputs.append(interpreter.get_tensor(interpreter.get_output_details()[0]["index"]))
    return outputs


def _run_tflm(data: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    tflite_micro = pytest.importorskip("tflite_micro")
    interpreter = tflite_micro.runtime.Interpreter.from_bytes(data, arena_size=ARENA_BYTES)
    outputs = []
    for array in inputs:
        interpreter.set_input(array, 0)
        interpreter.invoke()
        outputs.append(np.array(interpreter.get_output(0)))
    return outputs


@pytest.mark.runtime
@pytest.mark.parametrize("name", NAMES)
def test_runs_in_tflm_and_litert(name: str) -> None:
    data = example_bytes(name)
    _, main = _main(name)
    input_shape, output_shape = EXPECTED_IO[name]
    inputs = [_random_input(input_shape, seed) for seed in range(3)]
    from_litert = _run_litert(data, inputs)
    from_tflm = _run_tflm(data, inputs)
    output = main.tensors[main.outputs[0]].quantization
    assert output is not None and output.scale is not None and output.zero_point is not None
    for litert_out, tflm_out in zip(from_litert, from_tflm, strict=True):
        assert litert_out.dtype == tflm_out.dtype == np.int8
        assert litert_out.shape == tflm_out.shape == output_shape
        # LiteRT runs its optimized int8 kernels, TFLM its reference kernels; they round a few
        # intermediate steps differently (at most 2 steps of the output scale seen).
        difference = np.abs(litert_out.astype(np.int32) - tflm_out.astype(np.int32))
        assert difference.max() <= 3
        values = (litert_out.astype(np.float64) - output.zero_point) * output.scale
        assert np.all(np.isfinite(values))
        if main.operators[-1].opcode == "SOFTMAX":
            assert values.sum() == pytest.approx(1.0, abs=0.05)
    # The network reacts to its input: different inputs give different outputs somewhere.
    assert any(not np.array_equal(from_litert[0], other) for other in from_litert[1:])
