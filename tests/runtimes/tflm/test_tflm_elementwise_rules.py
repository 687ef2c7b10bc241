"""Elementwise-family kernel rules: struct sizes on both ABIs (hand-checked against the compilers'
sizeof: x86-64 g++ for the wheel, arm-none-eabi-g++ with short enums for the probes) and what
differs between the wheel and Cortex-M builds."""

from __future__ import annotations

import pytest

from arenalens.builds.abi import ILP32, LP64
from arenalens.builds.build import HOST, device_build
from arenalens.builds.tflm import tflm_release
from arenalens.runtimes.tflm.abi import Struct
from arenalens.runtimes.tflm.kernels import activations, arithmetic, elementwise, quantize, reduce
from arenalens.runtimes.tflm.kernels.base import INVOKE, Scratch
from arenalens.runtimes.tflm.kernels.setups import operator_setups
from arenalens.runtimes.tflm.support import support
from arenalens.tflite.builder import ModelBuilder, quantization
from arenalens.tflite.reader import parse_model

# (struct, LP64 size, ILP32 size)
SIZES = [
    (arithmetic._ADD_PARAMS, 8, 2),
    (arithmetic._MUL_PARAMS, 4, 1),
    (arithmetic._ADD_OP_DATA, 60, 60),
    (arithmetic._SUB_OP_DATA, 52, 52),
    (arithmetic._MUL_OP_DATA, 36, 36),
    (arithmetic._DIV_OP_DATA, 28, 28),
    (arithmetic._ADD_N_OP_DATA, 40, 40),
    (arithmetic._SQUARED_DIFFERENCE_OP_DATA, 112, 112),  # int64 bounds: 8-aligned on EABI too
    (elementwise._ABS_RSQRT_OP_DATA, 28, 28),  # TfLiteQuantizationType is `enum : int`
    (elementwise._COMPARISON_OP_DATA, 32, 32),
    (elementwise._SELECT_OP_DATA, 1, 1),
    (activations._RELU_OP_DATA, 28, 28),
    (activations._RELU6_OP_DATA, 8, 8),
    (activations._LOGISTIC_OP_DATA, 16, 16),
    (activations._HARD_SWISH_PARAMS, 20, 20),
    (activations._ELU_OP_DATA, 256, 256),
    (activations._LEAKY_RELU_OP_DATA, 24, 24),
    (reduce._REDUCE_OP_DATA, 44, 44),
    (reduce._REDUCER_PARAMS, 1, 1),
    (reduce._ARG_MAX_PARAMS, 4, 1),
    (quantize._CAST_PARAMS, 8, 2),
    (quantize._QUANTIZE_OP_DATA, 32, 32),  # a double: 8-aligned on both
    (quantize._DEQUANTIZE_OP_DATA, 32, 32),
]


@pytest.mark.parametrize(("layout", "lp64", "ilp32"), SIZES, ids=[s[0].name for s in SIZES])
def test_struct_sizes_on_both_abis(layout: Struct, lp64: int, ilp32: int) -> None:
    features = HOST.features  # today's TFLM: every change of its history
    assert (layout.size(LP64, features), layout.size(ILP32, features)) == (lp64, ilp32)


def test_op_data_reduce_before_its_scratch_buffers() -> None:
    """Before 0efdd51 (2026-01-16) OpDataReduce had two scratch indices, not three."""
    older = HOST.at_release(tflm_release("2025-12")).features
    assert (
        reduce._REDUCE_OP_DATA.size(LP64, older),
        reduce._REDUCE_OP_DATA.size(ILP32, older),
    ) == (
        40,
        40,
    )


def _single(opcode: str, inputs: list[tuple[str, object]], output: tuple[str, object]) -> bytes:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    operands = [
        graph.add_tensor(f"in{i}", [1, 4, 4, 3], dtype, quantization=q)
        for i, (dtype, q) in enumerate(inputs)
    ]
    result = graph.add_tensor("out", [1, 4, 4, 3], output[0], quantization=output[1])
    graph.add_operator(opcode, operands, [result])
    graph.set_inputs(operands)
    graph.set_outputs([result])
    return builder.build()


M7 = device_build("cortex-m7")


def test_add_n_requests_one_data_pointer_per_input() -> None:
    model = parse_model(_single("ADD_N", [("FLOAT32", None)] * 5, ("FLOAT32", None)), "add_n")
    for build, pointer in ((HOST, 8), (M7, 4)):
        (setup,) = operator_setups(model, build)
        assert [s.nbytes for s in setup.prepare if isinstance(s, Scratch)] == [5 * pointer]


def test_cast_to_bool_runs_on_the_wheel_only() -> None:
    model = parse_model(_single("CAST", [("FLOAT32", None)], ("BOOL", None)), "cast")
    assert support(model, HOST).runs
    (obstacle,) = support(model, M7).obstacles
    assert obstacle.phase == INVOKE and "Output type BOOL (6) not supported." in obstacle.reason


def test_add_int8_without_quantization_is_refused_on_the_wheel_and_aborts_on_devices() -> None:
    model = parse_model(_single("ADD", [("INT8", None)] * 2, ("INT8", None)), "add")
    assert "was not true" in support(model, HOST).obstacles[0].reason
    assert "aborts" in support(model, M7).obstacles[0].reason
    quantized = quantization(0.1, 0)
    fine = parse_model(_single("ADD", [("INT8", quantized)] * 2, ("INT8", quantized)), "add")
    assert support(fine, HOST).runs and support(fine, M7).runs


def test_elementwise_type_checks_never_fire_in_prepare() -> None:
    # elementwise.cc's type whitelist is dead code: SIN sets up on int8 and Eval refuses it.
    model = parse_model(_single("SIN", [("INT8", quantization(0.1, 0))], ("INT8", None)), "sin")
    found = support(model, HOST)
    assert found.sets_up and not found.runs
    assert "input->type != expected_type (INT8 != FLOAT32)" in found.obstacles[0].reason
