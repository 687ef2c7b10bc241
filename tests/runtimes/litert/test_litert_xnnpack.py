"""XNNPACK's parts of the LiteRT heap (runtimes/litert/heap_xnnpack.py) against the real wheel's,
block by block, as tests/data/litert_xnnpack_parts.json cached them (`python -m
tests.litert_xnnpack_parts` remakes it): which operators the delegate took, the bytes it asked
for to pack each operator's weights, each indirection buffer, its workspace, and LiteRT's arena
once the delegate has taken its partitions."""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arenalens.ir import Model
from arenalens.pipeline import analyze
from arenalens.runtimes.litert import (
    glibc,
    heap_build,
    heap_resources,
    heap_xnnpack,
    xnnpack_fingerprint,
    xnnpack_objects,
    xnnpack_packing,
    xnnpack_planner,
    xnnpack_variables,
    xnnpack_workspace,
)
from arenalens.runtimes.litert.heap import (
    WRAPPER_VARIATION_BYTES,
    interpreter_heap,
)
from arenalens.runtimes.litert.heap_interpreter import arena_request
from arenalens.runtimes.litert.isa import HOST, X86_64_V3_ZEN
from arenalens.tflite.builder import ModelBuilder, quantization
from arenalens.tflite.reader import parse_model
from tests.litert_heap_cache import cached, names
from tests.litert_variable_partitions import COMMAND as VARIABLE_COMMAND
from tests.litert_variable_partitions import DATA as VARIABLE_DATA
from tests.litert_variable_partitions import SEEDS as VARIABLE_SEEDS
from tests.litert_variable_partitions import variable_model
from tests.litert_xnnpack_parts import COMMAND, DATA, model_file
from tests.runtimes.litert.test_litert_heap import predicted

CACHE: dict[str, Any] = json.loads(DATA.read_text())
MEASURED = sorted(name for name, entry in CACHE["models"].items() if "error" not in entry)
_FOLDER = Path(tempfile.mkdtemp(prefix="arenalens-xnnpack-"))
# Every pytest worker that imports this module made one; 640 were left in /tmp by session 7.
atexit.register(shutil.rmtree, _FOLDER, True)

# Models whose partition is not modelled, and why (their XNNPACK figure is a labelled
# estimate). A change that models one, or loses one, fails here until this list says so.
# Empty since session 7: the variable operators the delegate takes are modelled
# (xnnpack_variables in partition()).
UNMODELLED: dict[str, str] = {}


# Workspaces that are bounds, and why (a hybrid GEMM's quantized input is packed inline, in
# its operator workspace, which made ToyCar's and kws_ref_model_float32's exact; a hybrid
# BATCH_MATMUL with a run-time B packs A the same way, after the packed B, and B itself is an
# internal value: exact since session 6). None today.
WORKSPACE_BOUNDS: dict[str, str] = {}


# Models whose dead-node clean-up cascades (xnn_subgraph_clean_up: single-output producers go
# recursively, multi-output nodes stay with their unread values cleared): replayed exactly.
CASCADES = ("heldout_dag_1.tflite", "fresh_dag_3.tflite", "fresh_dag_4.tflite")


@functools.cache
def _model(name: str) -> Model | None:
    path = model_file(name, _FOLDER)
    return None if path is None else analyze(path, runtime="litert").model


def _measured(name: str) -> tuple[Model, dict[str, Any]]:
    model = _model(name)
    if model is None:
        pytest.skip("the shared models are not here")
    return model, CACHE["models"][name]


def test_cache_names_where_its_figures_hold() -> None:
    assert CACHE["command"] == COMMAND
    assert "amx_int8" in CACHE["environment"]["cpu_flags"]  # HOST_TILES: AMX int8 GEMMs
    assert len(MEASURED) >= 60


@pytest.mark.parametrize("name", MEASURED)
def test_partition_is_the_delegates(name: str) -> None:
    """Each delegate node reads and writes the tensors the wheel's delegate nodes do (the
    partition, the subsets' order and their boundaries), or the model is listed as not
    modelled."""
    model, real = _measured(name)
    view = heap_xnnpack.delegated_view(model)
    if view is None:
        assert name in UNMODELLED, "partition not modelled: list it with the reason"
        return
    assert name not in UNMODELLED, "modelled now: drop it from UNMODELLED"
    nodes = [
        {"inputs": list(operator.inputs), "outputs": list(operator.outputs)}
        for operator in view.subgraphs[0].operators
        if operator.opcode == heap_xnnpack.DELEGATE_OPCODE
    ]
    assert nodes == real["partitions"]


def _delegated(model: Model) -> list[Any]:
    subgraph = model.subgraphs[0]
    split = heap_xnnpack.partition(subgraph, model)
    kept = xnnpack_workspace.runtime_operators(subgraph, split.delegated, model)
    return [subgraph.operators[index] for index in kept]


@pytest.mark.parametrize("name", MEASURED)
def test_packed_weights_and_indirection_are_the_wheels(name: str) -> None:
    """Every operator's packed weights and indirection buffer: the very requests the wheel
    made (xnn_get_pointer_to_write_weights, reshape_igemm / reshape_dwconv / the poolings')."""
    model, real = _measured(name)
    if name in UNMODELLED:
        return
    subgraph = model.subgraphs[0]
    weights = [xnnpack_packing.packed_weights_request(subgraph, op) for op in _delegated(model)]
    buffers = [xnnpack_packing.indirection_request(subgraph, op) for op in _delegated(model)]
    buffers += [xnnpack_packing.pooling_indirection(subgraph, op) for op in _delegated(model)]
    assert sorted(size for size in weights if size) == sorted(real["packed_weights"])
    assert sorted(size for size in buffers if size) == sorted(real["indirection"])


@pytest.mark.parametrize("name", MEASURED)
def test_workspace_and_arena_are_the_wheels(name: str) -> None:
    """XNNPACK's workspace (its memory planner's plan of the values inside the partitions)
    and LiteRT's arena once the delegate took them: the wheel's requests."""
    model, real = _measured(name)
    view = heap_xnnpack.delegated_view(model)
    if view is None:
        return
    subgraph = model.subgraphs[0]
    delegated = heap_xnnpack.partition(subgraph, model).delegated
    workspace = xnnpack_workspace.workspace_request(subgraph, delegated, model)
    if name in WORKSPACE_BOUNDS:
        assert sum(real["workspace"]) <= workspace <= 1.12 * sum(real["workspace"]) + 256
    else:
        assert ([workspace] if workspace else []) == real["workspace"]
    sizes = heap_xnnpack.view_arena_sizes(view)
    if heap_resources.dynamic_reads(subgraph):
        # A rank-0 READ_VARIABLE stays builtin and ends a planning chunk: the wheel plans the
        # rest at the first invoke (its setup-time arena is smaller); the view plans it all
        # at setup, which errs high.
        assert sum(real["arena"]) <= sum(arena_request(size) for size in sizes)
        return
    assert [arena_request(size) for size in sizes if size] == real["arena"]


@pytest.mark.parametrize("name", MEASURED)
def test_runtime_arrays_are_the_wheels(name: str) -> None:
    """Each XNNPACK runtime's operator-data and value arrays (xnn_create_runtime_v4: 240 B per
    node, folded PADs included, and 160 B per value the subgraph defined): the wheel's
    requests, runtime by runtime (xnnpack_objects.runtime_array_requests)."""
    model, real = _measured(name)
    predicted = xnnpack_objects.runtime_array_requests(model)
    if predicted is None:
        assert name in UNMODELLED
        return
    assert [list(pair) for pair in predicted] == real["runtime_arrays"]


def test_plan_records_places_largest_first_in_the_smallest_gap() -> None:
    # (bytes, first node, last node). 256 at 0; 192 (nodes 2-3) never meets it: at 0 too;
    # 128 (nodes 1-3) meets both: after them, at 256; 64 (node 2) meets 192 and 128 and
    # fits the 64-byte gap between them, at 192. The arena ends with 128, at 384.
    records = [(256, 0, 1), (128, 1, 3), (64, 2, 2), (192, 2, 3)]
    assert xnnpack_planner.plan_records(records) == 384


# The XNNPACK heap's bounds: where they leave the figure above 1.2× the wheel's, and why.
LOOSE: dict[str, str] = {}


@pytest.mark.parametrize("name", MEASURED)
def test_xnnpack_heap_is_close_where_modelled(name: str) -> None:
    """On a model whose partition is modelled, the XNNPACK figures after setup, after the
    first invoke and at the peak are never under the wheel's (tests/data/litert_heap.json) and
    within 1.2× of it, but for the models of LOOSE."""
    if name in UNMODELLED or name not in names():
        return
    heaps = predicted(name, str(_FOLDER))
    if heaps is None:
        pytest.skip("the shared models are not here")
    heap, real = heaps["xnnpack"], cached(name)["xnnpack"]
    for measured, figure in (
        ("after_allocate", heap.after_setup),
        ("after_invoke", heap.after_first_invoke),
        ("peak", heap.peak),
    ):
        assert real[measured] <= figure, measured
        if name not in LOOSE:
            assert figure <= 1.2 * real[measured], (measured, figure / real[measured])


# Generated models measured after the rules were written, with their heap figures: the
# held-out families' new seeds (fresh_* in session 3, fresh4_* after the objects replay) and
# one-rule cases (xcase_*, tests/litert_xnnpack_cases.py: depthwise windows over 25 taps, run
# as grouped IGEMMs).
HELD_OUT_PREFIXES = ("fresh_", "fresh4_", "xcase_", "fresh5_", "fresh6_", "adjx6_", "adjx6b_")
FRESH = sorted(name for name in MEASURED if name.startswith(HELD_OUT_PREFIXES))

# Within 1% after setup where the objects are replayed: what stays over is glibc's placement
# (up to 32 B per 64-aligned block, an allowance per other block) and blocks of 128 KiB or more
# counted as a fresh process's mmap (a ResNet's 192 KiB workspace: 1.01000×).
WITHIN = 1.0101


def _after_setup_ratio(model: Model, figure: int, measured: int) -> float | None:
    if heap_xnnpack.delegated_view(model) is None:
        return None
    return figure / measured


def _within(figure: int, measured: int, limit: float) -> bool:
    """Never under the wheel's figure, and within `limit` of it without the Python wrapper's
    own allowance (heap.WRAPPER_VARIATION_BYTES: not the model's; the issue's "within 1% where
    the wrapper's own allocations are not the model's")."""
    return measured <= figure and figure - WRAPPER_VARIATION_BYTES <= measured * limit


@pytest.mark.parametrize("name", MEASURED)
def test_xnnpack_after_setup_is_within_one_percent(name: str) -> None:
    """The runtime and operator objects replayed (xnnpack_objects): after setup, the XNNPACK
    figure is within 1% of the wheel's on every model whose partition is modelled, cached
    (tests/data/litert_heap.json) or held out (`fresh_*`, measured after the rules)."""
    model, real = _measured(name)
    if name.startswith(HELD_OUT_PREFIXES):
        measured = real["heap"]["after_allocate"]
    elif name in names() and "error" not in cached(name)["xnnpack"]:
        measured = cached(name)["xnnpack"]["after_allocate"]
    else:
        return
    analysis = analyze(model_file(name, _FOLDER) or Path(), runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    if name in UNMODELLED:
        return
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack")
    ratio = _after_setup_ratio(model, heap.after_setup, measured)
    if ratio is not None:
        limit = 1.03 if name in WORKSPACE_BOUNDS else WITHIN
        assert _within(heap.after_setup, measured, limit), ratio


@pytest.mark.parametrize("name", FRESH)
def test_fresh_models_heap(name: str) -> None:
    """Generated models measured only after the XNNPACK rules were written: their figures
    (measure.py with XNNPACK, cached beside their parts) are never under the wheel's, and
    within 1.2× of it where the partition is modelled (the parts tests above check their
    partition, packing, indirection, workspace and arena)."""
    model, real = _measured(name)
    analysis = analyze(model_file(name, _FOLDER) or Path(), runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack")
    figures = real["heap"]
    for measured, figure in (
        ("after_allocate", heap.after_setup),
        ("after_invoke", heap.after_first_invoke),
        ("peak", heap.peak),
    ):
        assert figures[measured] <= figure, measured
        if heap_xnnpack.delegated_view(model) is not None:
            assert figure <= 1.2 * figures[measured], (measured, figure / figures[measured])


@pytest.mark.parametrize(
    "name",
    ["mlperf_tiny__model_ToyCar_quant.tflite", "heldout_case_fully_connected_hybrid.tflite"],
)
def test_hybrid_fully_connected_packing_is_the_wheels(name: str) -> None:
    """A hybrid fully connected operator's packed weights are the wheel's requests, though
    the rest of its partition (dynamically quantized inputs) is not modelled."""
    model, real = _measured(name)
    subgraph = model.subgraphs[0]
    requests = [
        xnnpack_packing.packed_weights_request(subgraph, operator)
        for operator in subgraph.operators
        if operator.opcode == "FULLY_CONNECTED"
    ]
    assert sorted(size for size in requests if size) == sorted(real["packed_weights"])


# XNNPACK peaks over 1% of the wheel's (never under), and why: the rest are within 1%. The
# build moment is replayed (heap_build), XNNPACK's one-off fingerprint scratch with it (a
# fully connected dummy block by block; a convolution's 1×1 dummy at a whole tile, a bound).
PEAK_BOUNDS = {
    "heldout_case_add_n.tflite": "the caller's allowance on a 100 KB interpreter",
}


@pytest.mark.parametrize("name", MEASURED)
def test_xnnpack_peak_is_within_one_percent(name: str) -> None:
    """The peak with XNNPACK (the delegate's build moment or the first invoke's) is never under
    the wheel's and within 1% of it where the partition is modelled, but for PEAK_BOUNDS
    (within 2%, 3.5% where the workspace is a bound)."""
    model, real = _measured(name)
    if name in UNMODELLED or heap_xnnpack.delegated_view(model) is None:
        return
    if name.startswith(HELD_OUT_PREFIXES):
        measured = real["heap"]["peak"]
    elif name in names() and "error" not in cached(name)["xnnpack"]:
        measured = cached(name)["xnnpack"]["peak"]
    else:
        return
    analysis = analyze(model_file(name, _FOLDER) or Path(), runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack")
    ratio = heap.peak / measured
    # Where the workspace itself is a bound, the moment carries it: within 3.5%.
    reason = PEAK_BOUNDS.get(name)
    limit = 1.01 if reason is None else 1.035 if "workspace bound" in reason else 1.02
    assert _within(heap.peak, measured, limit), ratio


def test_an_int8_transposed_convolution_over_the_requantization_limit_cannot_run() -> None:
    """deconvolution-nhwc.c refuses a requantization scale of 256 or more, as the fully connected
    and convolution operators do: on the wheel, an int8 TRANSPOSE_CONV with input scale 10,
    filter scale 1 and output scale 0.01 fails "failed to create XNNPACK runtime" with XNNPACK
    and runs with the builtin kernels (measured by hand, session 5)."""
    model = ModelBuilder()
    graph = model.add_subgraph("main")
    shape = graph.add_constant("shape", np.array([1, 8, 8, 3], dtype=np.int32))
    weights = graph.add_constant(
        "w", np.ones((3, 3, 3, 4), np.int8), "INT8", quantization=quantization([1.0] * 3, 0)
    )
    x = graph.add_tensor("x", [1, 4, 4, 4], "INT8", quantization=quantization(10.0, 0))
    y = graph.add_tensor("y", [1, 8, 8, 3], "INT8", quantization=quantization(0.01, 0))
    options = {"stride_w": 2, "stride_h": 2, "padding": "SAME"}
    graph.add_operator("TRANSPOSE_CONV", [shape, weights, x], [y], options=options)
    graph.set_inputs([x])
    graph.set_outputs([y])
    parsed = parse_model(model.build(), "transpose_conv_over_limit")
    (failure,) = heap_xnnpack.create_failures(parsed)
    assert failure.opcode == "TRANSPOSE_CONV" and round(failure.scale) == 1000


def test_a_dead_operator_packs_nothing_at_the_build_moment() -> None:
    """XNNPACK's clean-up removes a node whose output nobody reads before the runtime creates
    its operators, so it packs no weights (fresh4_dag_11 on the wheel: three float
    FULLY_CONNECTEDs, one packing request of 128 B). The build moment counts packing only for
    created operators: counting the dead one's as still to come put fresh4_dag_11's moment at
    0.997x the wheel's peak, until a per-node allowance hid it."""
    model = ModelBuilder()
    graph = model.add_subgraph("main")
    x = graph.add_tensor("x", [1, 16], "FLOAT32")
    live = graph.add_tensor("live", [1, 8], "FLOAT32")
    dead = graph.add_tensor("dead", [1, 64], "FLOAT32")
    w_live = graph.add_constant("w_live", np.ones((8, 16), np.float32))
    w_dead = graph.add_constant("w_dead", np.ones((64, 16), np.float32))
    graph.add_operator("FULLY_CONNECTED", [x, w_live, -1], [live])
    graph.add_operator("FULLY_CONNECTED", [x, w_dead, -1], [dead])
    graph.set_inputs([x])
    graph.set_outputs([live])
    parsed = parse_model(model.build(), "dead_fully_connected")
    subgraph = parsed.subgraphs[0]
    split = heap_xnnpack.partition(subgraph, parsed)
    (kernel,) = [s for s in heap_xnnpack.node_subsets(subgraph, split.delegated) if s.delegated]
    created = heap_build._created_packing(subgraph, kernel, kernel.operators, parsed, HOST)
    assert created == heap_build._packed(subgraph, subgraph.operators[0], HOST) > 0


@pytest.mark.parametrize(
    ("kind", "requests"),
    [
        # heldout_case_conv_dilated (float IGEMM): data 204, packing 256, zero buffer 80.
        ("FLOAT32", (204, 256, 80)),
        # peak5_cnn_31 (int8 depthwise): data 201, requantization scale 4, packing 384, zero 48.
        ("INT8", (201, 4, 384, 48)),
    ],
)
def test_a_convolution_fingerprint_dummy_is_the_wheels(kind: str, requests: tuple[int]) -> None:
    """XNNPACK fingerprints a convolution kind with a padded 1×1 one-channel dummy that runs
    as a depthwise convolution: its blocks, as the wheel's trace showed them
    (tests/litert_heap_trace.py), each at the most glibc hands out for its request."""
    convolution = xnnpack_packing._Convolution("igemm", 1, 3, 8, 9, kind)
    element, scales = (4, 0) if kind == "FLOAT32" else (1, 4)
    expected = sum(xnnpack_packing.aligned_block(request) for request in requests)
    expected += xnnpack_objects._operator_blocks("dwconv")
    assert xnnpack_fingerprint.convolution_dummy_bytes(convolution, element, scales) == expected


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_a_float_one_by_one_depthwise_convolution_runs_as_depthwise(padding: str) -> None:
    """convolution-nhwc.c never sets the context's vmulcaddc config, so a float 1×1 depthwise
    convolution runs as a depthwise one: on the wheel (tests/litert_heap_trace.py, 8×8×3) it
    packed 256 B (three taps of 16 channels and their bias) and reshape_dwconv kept 576 B of
    indirection, with SAME and with VALID padding."""
    model = ModelBuilder()
    graph = model.add_subgraph("main")
    x = graph.add_tensor("x", [1, 8, 8, 3])
    weights = graph.add_constant("w", np.ones((1, 1, 1, 3), np.float32))
    bias = graph.add_constant("b", np.zeros(3, np.float32))
    y = graph.add_tensor("y", [1, 8, 8, 3])
    options = {"padding": padding, "stride_w": 1, "stride_h": 1, "depth_multiplier": 1}
    graph.add_operator("DEPTHWISE_CONV_2D", [x, weights, bias], [y], options=options)
    graph.set_inputs([x])
    graph.set_outputs([y])
    parsed = parse_model(model.build(), "depthwise_1x1")
    subgraph = parsed.subgraphs[0]
    (operator,) = subgraph.operators
    assert xnnpack_packing.packed_weights_request(subgraph, operator) == 256
    assert xnnpack_packing.indirection_request(subgraph, operator) == 576


def test_an_int8_one_scale_convolution_gemm_is_fingerprinted_apart() -> None:
    """An 8-bit 1×1 convolution with one filter scale is XNNPACK's qs8 kind, fingerprinted
    apart from a FULLY_CONNECTED (qc8w) and generated without scales: on the wheel
    (xnn6_fingerprint_7) the FULLY_CONNECTED's dummy had 3,072 B of data and the
    convolutions' 2,816 B, both packing 2,560 B."""
    model = ModelBuilder()
    graph = model.add_subgraph("main")
    one = quantization(0.05, 0)
    x = graph.add_tensor("x", [1, 4, 4, 4], "INT8", quantization=one)
    fc_w = graph.add_constant("fc", np.ones((2, 64), np.int8), "INT8", quantization=one)
    conv_w = graph.add_constant("cw", np.ones((1, 1, 1, 4), np.int8), "INT8", quantization=one)
    y = graph.add_tensor("y", [1, 2], "INT8", quantization=one)
    z = graph.add_tensor("z", [1, 4, 4, 1], "INT8", quantization=one)
    graph.add_operator("FULLY_CONNECTED", [x, fc_w, -1], [y])
    options = {"padding": "VALID", "stride_w": 1, "stride_h": 1}
    graph.add_operator("CONV_2D", [x, conv_w, -1], [z], options=options)
    graph.set_inputs([x])
    graph.set_outputs([y, z])
    parsed = parse_model(model.build(), "qs8_gemm")
    subgraph = parsed.subgraphs[0]
    fully_connected, convolution = subgraph.operators
    kinds = {
        xnnpack_fingerprint.fingerprint_kind(subgraph, op) for op in (fully_connected, convolution)
    }
    assert len(kinds) == 2
    gap = xnnpack_fingerprint.fingerprint_bytes(
        subgraph, fully_connected
    ) - xnnpack_fingerprint.fingerprint_bytes(subgraph, convolution)
    # The data blocks' difference (64 outputs x a 4-byte scale) and the scale parameters.
    aligned = xnnpack_packing.aligned_block
    assert gap == aligned(3072) - aligned(2816) + aligned(256)


def _hybrid_model(opcode: str) -> Model:
    """A float input through a CONV_2D (3×3, 4 filters) or FULLY_CONNECTED with 8-bit
    per-tensor weights: the delegate's dynamically quantized (qd8_f32_qc8w) kind."""
    model = ModelBuilder()
    graph = model.add_subgraph("main")
    one = quantization(0.05, 0)
    if opcode == "CONV_2D":
        x = graph.add_tensor("x", [1, 8, 8, 3])
        w = graph.add_constant("w", np.ones((4, 3, 3, 3), np.int8), "INT8", quantization=one)
        y = graph.add_tensor("y", [1, 8, 8, 4])
        options = {"padding": "SAME", "stride_w": 1, "stride_h": 1}
        graph.add_operator("CONV_2D", [x, w, -1], [y], options=options)
    else:
        x = graph.add_tensor("x", [1, 16])
        w = graph.add_constant("w", np.ones((4, 16), np.int8), "INT8", quantization=one)
        y = graph.add_tensor("y", [1, 4])
        graph.add_operator("FULLY_CONNECTED", [x, w, -1], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    return parse_model(model.build(), f"hybrid_{opcode.lower()}")


@pytest.mark.parametrize(
    ("opcode", "requests", "kind"),
    [
        # hybrid6_conv_1 on the AMD EPYC (4x8c8): data 201, packing 192, zero buffer 24 (the
        # 1×1 dummy padded by 2 runs as an IGEMM: qd8 has no depthwise microkernel).
        ("CONV_2D", (201, 192, 24), "igemm"),
        # held15_hybrid_6 there: data 608 (32 inputs x 8 outputs and 12 B each, four
        # alignments), packing 384 (8 x (32 + 12) rounded to 64), no scale parameters.
        ("FULLY_CONNECTED", (608, 384), "gemm"),
    ],
)
def test_a_hybrid_fingerprint_dummy_is_the_wheels(
    opcode: str, requests: tuple[int, ...], kind: str
) -> None:
    """The dynamically quantized kinds' fingerprint dummies, as the wheel's trace on a first
    Zen showed them (tests/litert_heap_trace.py): their own kind, apart from an 8-bit one's,
    each block at the most glibc hands out for its request (it was a 3-tile bound, 1,024 B
    over the trace on hybrid6_conv_1)."""
    parsed = _hybrid_model(opcode)
    subgraph = parsed.subgraphs[0]
    (operator,) = subgraph.operators
    tiles = X86_64_V3_ZEN.replay_tiles
    found = xnnpack_fingerprint.fingerprint_kind(subgraph, operator, tiles)
    assert found is not None and found[1] == f"INT8/qd8/{kind}"
    expected = glibc.usable(24) + xnnpack_objects._operator_blocks(kind)
    expected += sum(xnnpack_packing.aligned_block(request) for request in requests)
    assert xnnpack_fingerprint.fingerprint_bytes(subgraph, operator, tiles) == expected


def test_variable_operators_taken_give_the_wheels_delegate_kernels() -> None:
    """Variables under XNNPACK (xnnpack_variables): the handles whose resource got a proxy,
    the ranked read and the assignments are taken, the unused handle and the rank-0 read stay
    builtin; resource operators are chained (OpMightHaveSideEffect), so the handles form a
    delegate kernel of their own: the wheel's three kernels, inputs and outputs as listed."""
    model, real = _measured("xcase_resource_variables.tflite")
    subgraph = model.subgraphs[0]
    variables = xnnpack_variables.taken(subgraph)
    assert variables == frozenset({0, 1, 3, 4, 5})
    delegated = sorted({*heap_xnnpack.partition(subgraph, model).delegated, *variables})
    kernels = [
        {"inputs": list(subset.inputs), "outputs": list(subset.outputs)}
        for subset in heap_xnnpack.node_subsets(subgraph, delegated)
        if subset.delegated
    ]
    assert kernels == real["partitions"]


_VARIABLE_KERNELS: dict[str, Any] = json.loads(VARIABLE_DATA.read_text())


def test_variable_partitions_cache_names_its_command() -> None:
    assert _VARIABLE_KERNELS["command"] == VARIABLE_COMMAND
    assert len(_VARIABLE_KERNELS["models"]) == len(VARIABLE_SEEDS)


@pytest.mark.parametrize("seed", VARIABLE_SEEDS)
def test_held_out_variable_models_get_the_wheels_delegate_kernels(seed: int) -> None:
    """Held-out variable models (drawn after xnnpack_variables was committed): the delegate
    kernels LiteRT makes once XNNPACK takes the variable operators xnnpack_variables names,
    the wheel's, kernel by kernel."""
    model = parse_model(variable_model(seed), f"variables_{seed}")
    subgraph = model.subgraphs[0]
    variables = xnnpack_variables.taken(subgraph)
    assert variables is not None
    delegated = sorted({*heap_xnnpack.partition(subgraph, model).delegated, *variables})
    kernels = [
        {"inputs": list(subset.inputs), "outputs": list(subset.outputs)}
        for subset in heap_xnnpack.node_subsets(subgraph, delegated)
        if subset.delegated
    ]
    assert kernels == _VARIABLE_KERNELS["models"][str(seed)]


def test_variable_kernels_runtime_arrays_are_the_wheels() -> None:
    """The XNNPACK runtimes of a variable model's kernels (xnnpack_objects.runtime_counts):
    a VAR_HANDLE materialises no node, each read or assignment is one copy node, and each
    resource is an internal value (the delegate defines it from its proxy, whose type is not a
    resource, so Subgraph::Create gives it no external id): the wheel's 0/4, 3/6 and 1/3
    nodes/values. The heap figure stays a bound: partition() leaves these operators unmodelled
    (the handles' persistent arena and the build moment are not replayed)."""
    model, real = _measured("xcase_resource_variables.tflite")
    subgraph = model.subgraphs[0]
    variables = xnnpack_variables.taken(subgraph)
    assert variables is not None
    delegated = sorted({*heap_xnnpack.partition(subgraph, model).delegated, *variables})
    arrays = [
        [
            xnnpack_objects.OPERATOR_DATA_BYTES * nodes,
            xnnpack_objects.RUNTIME_VALUE_BYTES * values,
        ]
        for subset in heap_xnnpack.node_subsets(subgraph, delegated)
        if subset.delegated
        for nodes, values in [xnnpack_objects.runtime_counts(subgraph, subset, model)]
    ]
    assert arrays == real["runtime_arrays"]
