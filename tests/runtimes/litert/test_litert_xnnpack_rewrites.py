"""XNNPACK's rewrites of the nodes the delegate defines, as they reach its workspace
(runtimes/litert/xnnpack_workspace.py): a reduction of a square reads the square's input
(optimize_common_subgraphs_reduce_sum_to_square), a binary operator's fused activation is a
clamp node after a value of its own (xnn_insert_clamp_node); and int4 blockwise
FULLY_CONNECTEDs (runtimes/litert/xnnpack_blockwise.py). Checked on generated graphs, on
held-out ones measured on the wheel after the rules were committed (xnn9_square_*,
xnn9_blockwise_*, tests/litert_rewrite_cases.py, cached in tests/data/litert_heap.json by
`python -m tests.litert_heap_measure --only xnn9_`; on this session's AVX2 machine, which each
entry names) and on the upstream norm.tflite and qwen_fc_blockwise_quantized.tflite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arenalens.ir import Model
from arenalens.pipeline import analyze
from arenalens.runtimes.litert import (
    heap_xnnpack,
    xnnpack_blockwise,
    xnnpack_packing,
    xnnpack_workspace,
)
from arenalens.runtimes.litert.heap import WRAPPER_VARIATION_BYTES, interpreter_heap
from arenalens.runtimes.litert.isa import X86_64_V3
from arenalens.tflite.builder import ModelBuilder
from arenalens.tflite.reader import parse_model
from tests.litert_heap_cache import cached, names
from tests.litert_upstream_measure import DATA as UPSTREAM_DATA
from tests.litert_upstream_measure import absence, mirror, model_bytes
from tests.runtimes.litert.test_litert_heap import _large_blocks, predicted

SQUARES = sorted(name for name in names() if name.startswith("xnn9_square_"))
BLOCKWISE = sorted(name for name in names() if name.startswith("xnn9_blockwise_"))
SIGNATURES = sorted(
    name
    for name in names()
    if name.startswith(("xnn9_signatures_", "xnn10_signatures_"))
    and "error" not in cached(name)["xnnpack"]
)
PHASES = (("after_allocate", "after_setup"), ("after_invoke", "after_first_invoke"),
          ("peak", "peak"))  # fmt: skip


def _rms_norm(square: str, activation: int = 0, square_is_output: bool = False) -> bytes:
    """x (4, 64, 256) → its square (SQUARE or MUL of x by itself) → SUM over the last axis,
    kept → RSQRT → x times it."""
    model = ModelBuilder()
    g = model.add_subgraph("main")
    shape = [4, 64, 256]
    x, squared = g.add_tensor("x", shape), g.add_tensor("square", shape)
    if square == "SQUARE":
        g.add_operator("SQUARE", [x], [squared])
    else:
        options = {"fused_activation_function": activation}
        g.add_operator("MUL", [x, x], [squared], options=options)
    axes = g.add_constant("axes", np.array([-1], dtype=np.int32))
    total, root = g.add_tensor("total", [4, 64, 1]), g.add_tensor("root", [4, 64, 1])
    g.add_operator("SUM", [squared, axes], [total], options={"keep_dims": True})
    g.add_operator("RSQRT", [total], [root])
    y = g.add_tensor("y", shape)
    g.add_operator("MUL", [x, root], [y], options={"fused_activation_function": 0})
    g.set_inputs([x])
    g.set_outputs([y, squared] if square_is_output else [y])
    return model.build()


def _workspace(data: bytes) -> int:
    model = parse_model(data, "rms_norm.tflite")
    subgraph = model.subgraphs[0]
    delegated = [operator.index for operator in subgraph.operators]
    return xnnpack_workspace.workspace_request(subgraph, delegated, model)


SQUARE_BYTES = 4 * 64 * 256 * 4


@pytest.mark.parametrize("square", ["SQUARE", "MUL"])
def test_a_sum_of_squares_reads_the_input(square: str) -> None:
    # The square's 256 KiB value leaves the workspace: only the (4, 64, 1) values stay.
    assert _workspace(_rms_norm(square)) < 4096


def test_a_square_with_an_activation_stays() -> None:
    # A RELU on the MUL puts a clamp between the square and the SUM: no rewrite.
    assert _workspace(_rms_norm("MUL", activation=1)) > SQUARE_BYTES


def test_a_fused_activation_writes_a_value_of_its_own() -> None:
    # The square is the caller's output: the MUL writes a new internal value of its size and
    # the clamp copies it out; without the activation the MUL writes the output itself.
    assert _workspace(_rms_norm("MUL", activation=1, square_is_output=True)) > SQUARE_BYTES
    assert _workspace(_rms_norm("MUL", activation=0, square_is_output=True)) < 4096


def _within(heaps: dict[str, Any], real: dict[str, int], limit: float) -> None:
    """Never under the wheel, and within `limit` of it at every moment (the wrapper's
    variation, the caller's blocks and a page per block of 128 KiB or more, which glibc may
    map or cut from its heap, left out)."""
    heap = heaps["xnnpack"]
    caller = sum(part.nbytes for part in heap.parts if part.name == "caller's blocks")
    for measured, figure in PHASES:
        value = getattr(heap, figure)
        wrapper = WRAPPER_VARIATION_BYTES + (caller if measured != "after_allocate" else 0)
        wrapper += _large_blocks(heaps)
        assert real[measured] <= value, measured
        assert value - wrapper <= real[measured] * limit, (measured, value / real[measured])


@pytest.mark.parametrize("name", SQUARES)
def test_held_out_squares_are_within_one_percent(name: str, tmp_path_factory: Any) -> None:
    """1.45-1.89x before the rewrite was modelled, 0.84x (under) before the activation's
    clamp was."""
    heaps = predicted(name, str(tmp_path_factory.getbasetemp()))
    assert heaps is not None
    _within(heaps, cached(name)["xnnpack"], 1.01)


def test_int4_blockwise_packing() -> None:
    """qd8_f32_qb4w: per output channel (to 16) the depth in nibbles, a float bias, a float
    of extra bytes and a bf16 scale per block: 1,024 × (512 + 4 + 4 + 64) for qwen_fc's
    1,024 × 1,024 weights in blocks of 32 (the wheel's block: 598,016 B asked for)."""
    model = parse_model(_blockwise_fc(1024, 1024, 32, rows=1), "fc.tflite")
    subgraph = model.subgraphs[0]
    operator = subgraph.operators[0]
    assert xnnpack_packing.packed_weights_request(subgraph, operator, model=model) == 598_016
    assert xnnpack_blockwise.bf16_scales_request(model, subgraph, operator) == 65_536
    # Without the file the block size is unknown: not modelled.
    assert xnnpack_packing.packed_weights_request(subgraph, operator) is None
    # 40 channels pack as 48; blocks of 64 halve the scales.
    narrow = parse_model(_blockwise_fc(40, 256, 64, rows=1), "fc.tflite")
    request = xnnpack_packing.packed_weights_request(
        narrow.subgraphs[0], narrow.subgraphs[0].operators[0], model=narrow
    )
    assert request == -(-48 * (128 + 4 + 4 + 4 * 2) // 64) * 64


def _blockwise_fc(channels: int, depth: int, block: int, rows: int) -> bytes:
    from arenalens.tflite.builder import blockwise_quantization

    model = ModelBuilder()
    g = model.add_subgraph("main")
    x = g.add_tensor("x", [rows, depth])
    scales = g.add_constant("s", np.full((channels, depth // block), 0.02, np.float16))
    packed = np.full((channels, depth // 2), 0x21, np.uint8).tobytes()
    quantization = blockwise_quantization(scales, -1, block)
    w = g.add_tensor("w", [channels, depth], "INT4", data=packed, quantization=quantization)
    y = g.add_tensor("y", [rows, channels])
    g.add_operator("FULLY_CONNECTED", [x, w], [y], options={"keep_num_dims": False}, version=6)
    g.set_inputs([x])
    g.set_outputs([y])
    return model.build()


@pytest.mark.parametrize("name", BLOCKWISE)
def test_held_out_blockwise_fully_connected(name: str, tmp_path_factory: Any) -> None:
    """Int4 blockwise FULLY_CONNECTEDs under XNNPACK: within 1% with one row of input; with
    several, the workspace says it is an estimate (the int4 GEMM's packed input counted as an
    int8 one's) and the figures stay within 5% (the build moment then a bound). Before, the
    partition was not modelled: 1.31-1.51x on these, 1.73x on qwen_fc."""
    heaps = predicted(name, str(tmp_path_factory.getbasetemp()))
    assert heaps is not None
    workspace = next(part for part in heaps["xnnpack"].parts if part.name == "XNNPACK workspace")
    _within(heaps, cached(name)["xnnpack"], 1.01 if workspace.exact else 1.05)
    assert workspace.exact or "estimate" in workspace.meaning


def _convolution(opcode: str, bias: str) -> Model:
    """A float 3×3 convolution (or depthwise one) whose bias is a tensor, omitted (-1) or
    absent (two inputs)."""
    model = ModelBuilder()
    g = model.add_subgraph("main")
    x, y = g.add_tensor("x", [1, 8, 8, 4]), g.add_tensor("y", [1, 8, 8, 4])
    layout = (1, 3, 3, 4) if opcode == "DEPTHWISE_CONV_2D" else (4, 3, 3, 4)
    w = g.add_constant("w", np.ones(layout, dtype=np.float32))
    inputs = [x, w]
    if bias == "tensor":
        inputs.append(g.add_constant("b", np.zeros(4, dtype=np.float32)))
    elif bias == "omitted":
        inputs.append(-1)
    g.add_operator(opcode, inputs, [y], options={"padding": "SAME"})
    g.set_inputs([x])
    g.set_outputs([y])
    return parse_model(model.build(), "convolution.tflite")


@pytest.mark.parametrize("opcode", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@pytest.mark.parametrize("bias", ["tensor", "omitted", "absent"])
def test_a_convolution_is_taken_only_with_a_bias(opcode: str, bias: str) -> None:
    """VisitConv2DNode / VisitDepthwiseConv2DNode: three inputs and a bias tensor, else
    'unsupported ... node without bias': the builtin kernel keeps it (a signature's subgraph
    never prepared holds no packed weights for it: held-out xnn9_signatures_1, 3 and 15 were
    1.13-1.20x after setup while it was counted as taken)."""
    model = _convolution(opcode, bias)
    taken = heap_xnnpack.partition(model.subgraphs[0], model).delegated
    assert taken == ((0,) if bias == "tensor" else ())


@pytest.mark.parametrize("name", SIGNATURES)
def test_held_out_signatures(name: str, tmp_path_factory: Any) -> None:
    """Models of several signatures, each its own subgraph: the delegate builds every one's
    kernels (a convolution only with a bias), allocate_tensors() prepares subgraph 0 only
    (the others' runtimes are never reshaped: no indirection buffers, no workspace).
    Measured on an AVX2 machine (each entry names it), so compared with x86-64-v3's figures:
    never under, within 1% after setup; its peak is that profile's labelled estimate (other
    tiles' fingerprints). Main 8598d62: xnn9_signatures_1, 3 and 15 1.13-1.20x after setup
    (their convolutions have no bias), xnn10_signatures_ up to 1.11x (unprepared subgraphs'
    indirection buffers counted)."""
    heaps = predicted(name, str(tmp_path_factory.getbasetemp()), on_its_cpu=True)
    assert heaps is not None and heaps["xnnpack"].isa == X86_64_V3
    real = cached(name)["xnnpack"]
    for measured, figure in PHASES:
        assert real[measured] <= getattr(heaps["xnnpack"], figure), measured
    model_part = heaps["xnnpack"].after_setup - WRAPPER_VARIATION_BYTES - _large_blocks(heaps)
    assert model_part <= real["after_allocate"] * 1.01


UPSTREAM = {
    "norm": "google-ai-edge+LiteRT:litert/test/testdata/norm.tflite",
    "qwen_fc": "google-ai-edge+LiteRT:litert/test/testdata/qwen_fc_blockwise_quantized.tflite",
    "multi_signature": "google-ai-edge+LiteRT:litert/js/packages/core/testdata/"
    "multi_signature_model.tflite",
    "delegate_compatibility": "google-ai-edge+LiteRT:litert/js/packages/core/testdata/"
    "delegate_compatibility_test.tflite",
}


@pytest.mark.parametrize("key", sorted(UPSTREAM))
def test_upstream_models_are_within_one_percent(key: str, tmp_path: Path) -> None:
    """The upstream RMS norm (MUL of the input by itself, SUM, DIV, ADD, RSQRT, MUL): 1.49x
    after setup while the square's 4 MiB value was counted in the workspace; qwen_fc's int4
    blockwise FULLY_CONNECTED: 1.73x while its partition was not modelled; three signatures'
    subgraphs (multi_signature, delegate_compatibility): 1.11x and 1.10x at the peak while
    the signatures' subgraphs were a bound."""
    repository, path = UPSTREAM[key].split(":", 1)
    if not mirror(repository).is_dir():
        pytest.skip(f"the {repository} mirror is absent")
    data = model_bytes(repository, path)
    if data is None or absence(data):
        pytest.skip(f"{path}: {absence(data)}")
    model = tmp_path / "model.tflite"
    model.write_bytes(data)
    analysis = analyze(str(model), runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack")
    real = json.loads(UPSTREAM_DATA.read_text())["models"][UPSTREAM[key]]["xnnpack"]
    for measured, figure in PHASES:
        value = getattr(heap, figure)
        assert real[measured] <= value <= real[measured] * 1.01, (measured, value / real[measured])
