"""XNNPACK's fusion of 8-bit unary chains into one lookup table
(xnnpack_workspace.fuse_unary_chains, from subgraph.c xnn_subgraph_fuse_unary_quantized_into_lut
at the XNNPACK commit LiteRT 2.3.0 pins, ae746db) against the 2.3.0 wheel's traces."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from arenalens.ir import Model
from arenalens.pipeline import analyze
from arenalens.runtimes.litert import heap_xnnpack, xnnpack_objects, xnnpack_workspace
from arenalens.runtimes.litert.heap import WRAPPER_VARIATION_BYTES, interpreter_heap
from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from arenalens.tflite.reader import parse_model
from tests.litert_cases import _single
from tests.litert_fusion_cases import unary_chain_model
from tests.litert_heap_measure import DATA as HEAP_DATA

_OUTPUT_QUANTIZATION = {"TANH": (1 / 128, 0), "LOGISTIC": (1 / 256, -128), "DEQUANTIZE": None}


def _chain(opcodes: Sequence[str], *, branch: int = -1) -> Model:
    """int8 ADD, then the unary `opcodes` in a row; `branch`: the output of that step is
    also a graph output (read twice)."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [1, 64], "INT8", quantization=quantization(0.05, 0))
        y = g.add_tensor("y", [1, 64], "INT8", quantization=quantization(0.05, 0))
        current = g.add_tensor("sum", [1, 64], "INT8", quantization=quantization(0.1, 0))
        g.add_operator("ADD", [x, y], [current])
        outputs = []
        for step, opcode in enumerate(opcodes):
            scale = _OUTPUT_QUANTIZATION.get(opcode, (0.05, 0))
            if scale is None:
                following = g.add_tensor(f"s{step}", [1, 64])
            else:
                following = g.add_tensor(
                    f"s{step}", [1, 64], "INT8", quantization=quantization(*scale)
                )
            g.add_operator(opcode, [current], [following])
            current = following
            if step == branch:
                outputs.append(current)
        return [x, y], [*outputs, current]

    return parse_model(_single(build), "chain")


def _kinds(model: Model) -> list[str]:
    subgraph = model.subgraphs[0]
    split = heap_xnnpack.partition(subgraph, model)
    subset = next(s for s in heap_xnnpack.node_subsets(subgraph, split.delegated) if s.delegated)
    boundary = set(subset.inputs) | set(subset.outputs)
    return [node.kind for node in xnnpack_workspace._nodes(subgraph, subset.operators, boundary)]


def test_two_tanh_make_one_lut_and_one_value_more() -> None:
    """int8 ADD -> TANH -> TANH: the wheel's runtime holds 3 operator-data slots and 8 values
    (720 and 1,280 B; one value more than the tensors for the table), creates a binary and
    one unary operator, and keeps the fusion's 256-byte table (traced, 2.3.0)."""
    model = _chain(["TANH", "TANH"])
    assert _kinds(model) == ["binary", "lut"]
    assert xnnpack_objects.runtime_array_requests(model) == [(720, 1280)]


def test_single_unary_and_branches_are_not_fused() -> None:
    assert _kinds(_chain(["TANH"])) == ["binary", "unary"]
    # The first TANH's output is read twice (a graph output too): no chain through it.
    assert _kinds(_chain(["TANH", "TANH"], branch=0)) == ["binary", "unary", "unary"]
    assert _kinds(_chain(["TANH", "TANH", "ELU"], branch=0)) == ["binary", "unary", "lut"]


def test_chain_backs_off_to_its_last_eight_bit_value() -> None:
    """A DEQUANTIZE ends the chain in float: the LUT stops at the 8-bit value before it."""
    assert _kinds(_chain(["TANH", "LOGISTIC", "DEQUANTIZE"])) == ["binary", "lut", "unary"]


def test_chain_is_at_most_ten_nodes() -> None:
    assert _kinds(_chain(["TANH", "ELU"] * 6)) == ["binary", "lut", "lut"]


_HEAP = json.loads(HEAP_DATA.read_text())["models"]
HELD_OUT = sorted(name for name in _HEAP if name.startswith("lut7_"))


def test_held_out_chain_models_are_cached() -> None:
    assert len(HELD_OUT) == 20


@pytest.mark.parametrize("name", HELD_OUT)
def test_held_out_chain_model_xnnpack(name: str) -> None:
    """Held-out LUT-chain models (tests/litert_fusion_cases.py, drawn after the rule): with
    XNNPACK never under the wheel; after setup within 1% without the wrapper allowance (the
    peak holds the LUT runtime's moment, bounded: 1.006-1.018x measured)."""
    model = parse_model(unary_chain_model(int(name.removeprefix("lut7_").split(".")[0])), name)
    real = _HEAP[name]["xnnpack"]
    sizes = [result.runtime_plan.arena_size for result in analyze(model, runtime="litert").arenas]
    heap = interpreter_heap(model, sizes, delegate="xnnpack")
    assert heap.after_setup >= real["after_allocate"]
    assert heap.after_first_invoke >= real["after_invoke"] and heap.peak >= real["peak"]
    assert heap.after_setup - WRAPPER_VARIATION_BYTES <= 1.01 * real["after_allocate"]
