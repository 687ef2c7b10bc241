"""Self-checking overlap models: for targets that cannot hand outputs back (Cortex-M probes).

The Cortex-M probes (`../shared/tools/cortex-m/`) invoke a model once on zeroed inputs and
report only whether Invoke() succeeded. A self-checking model turns "the overlapped operator
computed the same outputs" into that one bit: two copies of the same pseudo-random int8 tensor
are made from the zero input (x + constant); the operator under test runs on each, one copy with
its output placed a given distance below its input (an offline plan), the other apart.
NOT_EQUAL -> CAST -> EMBEDDING_LOOKUP turns any differing element into lookup index 1 of a
one-row table, which EMBEDDING_LOOKUP refuses ("index out of bounds"): Invoke() fails exactly
when the overlapped copy computed differently. `SELF_CHECKS` covers every CMSIS-NN int8 path the
access-order rules name (tests/test_overlap_cortex_m.py, benchmarks/check_overlap_cortex_m.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from arenalens.ir import OfflinePlan
from arenalens.planning.problem import align_up
from arenalens.runtimes import get_runtime
from arenalens.runtimes.tflm.access_order import KernelLibrary
from arenalens.runtimes.tflm.overlap import arena_overlaps
from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from arenalens.tflite.reader import load_model
from arenalens.tflite.rewriter import rewrite_model

SELF_CHECK_SCALE = 0.05
# Adds the operator under test to a graph: (graph, input tensor, name) → output tensor.
OperatorMaker = Callable[[SubgraphBuilder, int, str], int]


@dataclass(frozen=True)
class SelfCheck:
    """A self-checking model and where its overlapped pair sits."""

    data: bytes
    operator: int  # the overlapped operator
    input_tensor: int
    output_tensor: int


def self_checking_model(
    shape: tuple[int, ...],
    add_operator: OperatorMaker,
    *,
    seed: int = 0,
) -> SelfCheck:
    """Input shape + a function adding the operator under test (graph, input, name → output)."""
    builder = ModelBuilder(description="overlap self-check")
    graph = builder.add_subgraph("main")
    rng = np.random.default_rng(seed)
    spec = quantization(SELF_CHECK_SCALE, 0)
    zero = graph.add_tensor("zero", shape, "INT8", quantization=spec)
    noise = graph.add_constant(
        "noise", rng.integers(-100, 100, shape, dtype=np.int8), quantization=spec
    )
    copies = []
    for name in ("checked", "reference"):
        copy = graph.add_tensor(f"{name}/input", shape, "INT8", quantization=spec)
        graph.add_operator("ADD", [zero, noise], [copy])
        copies.append(copy)
    outputs = [
        add_operator(graph, copy, name)
        for copy, name in zip(copies, ("checked", "reference"), strict=True)
    ]
    operator = 2  # the first operator under test (after the two ADDs)
    out_shape = graph.shape(outputs[0])
    count = int(np.prod(out_shape))
    differs = graph.add_tensor("differs", out_shape, "BOOL")
    graph.add_operator("NOT_EQUAL", outputs, [differs])
    index = graph.add_tensor("index", out_shape, "INT32")
    graph.add_operator("CAST", [differs], [index])
    flat_shape = graph.add_constant("flat_shape", np.array([count], np.int32))
    flat = graph.add_tensor("flat_index", (count,), "INT32")
    graph.add_operator("RESHAPE", [index, flat_shape], [flat], options={"new_shape": (count,)})
    table = graph.add_constant("table", np.array([[1.0]], np.float32))
    verdict = graph.add_tensor("verdict", (count, 1), "FLOAT32")
    graph.add_operator("EMBEDDING_LOOKUP", [flat, table], [verdict])
    graph.set_inputs([zero])
    graph.set_outputs([verdict])
    return SelfCheck(builder.build(), operator, copies[0], outputs[0])


def _int8_conv_op(kernel: int, stride: int, channels: int, padding: str = "SAME") -> OperatorMaker:
    def add(graph: SubgraphBuilder, source: int, name: str) -> int:
        rng = np.random.default_rng(1)
        batch, height, _, depth = graph.shape(source)
        scales = np.full(channels, 0.01)
        weights = graph.add_constant(
            f"{name}/w",
            rng.integers(-127, 127, (channels, kernel, kernel, depth), dtype=np.int8),
            quantization=quantization(scales, 0, axis=0),
        )
        bias = graph.add_constant(
            f"{name}/b",
            rng.integers(-500, 500, channels, dtype=np.int32),
            quantization=quantization(scales * SELF_CHECK_SCALE, 0, axis=0),
        )
        size = -(-height // stride) if padding == "SAME" else (height - kernel) // stride + 1
        out = graph.add_tensor(
            f"{name}/output",
            (batch, size, size, channels),
            "INT8",
            quantization=quantization(0.25, 0),
        )
        graph.add_operator(
            "CONV_2D",
            [source, weights, bias],
            [out],
            options={"padding": padding, "stride_w": stride, "stride_h": stride},
            version=3,
        )
        return out

    return add


def _int8_depthwise_op(stride: int, kernel: int = 3) -> OperatorMaker:
    def add(graph: SubgraphBuilder, source: int, name: str) -> int:
        rng = np.random.default_rng(2)
        batch, height, _, depth = graph.shape(source)
        scales = np.full(depth, 0.02)
        weights = graph.add_constant(
            f"{name}/w",
            rng.integers(-127, 127, (1, kernel, kernel, depth), dtype=np.int8),
            quantization=quantization(scales, 0, axis=3),
        )
        bias = graph.add_constant(
            f"{name}/b",
            rng.integers(-500, 500, depth, dtype=np.int32),
            quantization=quantization(scales * SELF_CHECK_SCALE, 0, axis=0),
        )
        size = -(-height // stride)
        out = graph.add_tensor(
            f"{name}/output", (batch, size, size, depth), "INT8", quantization=quantization(0.1, 0)
        )
        graph.add_operator(
            "DEPTHWISE_CONV_2D",
            [source, weights, bias],
            [out],
            options={
                "padding": "SAME",
                "stride_w": stride,
                "stride_h": stride,
                "depth_multiplier": 1,
            },
            version=3,
        )
        return out

    return add


def _int8_pool_op(opcode: str, pool: int, stride: int, padding: str) -> OperatorMaker:
    def add(graph: SubgraphBuilder, source: int, name: str) -> int:
        batch, height, _, depth = graph.shape(source)
        size = -(-height // stride) if padding == "SAME" else (height - pool) // stride + 1
        out = graph.add_tensor(
            f"{name}/output",
            (batch, size, size, depth),
            "INT8",
            quantization=quantization(SELF_CHECK_SCALE, 0),
        )
        graph.add_operator(
            opcode,
            [source],
            [out],
            options={
                "padding": padding,
                "stride_w": stride,
                "stride_h": stride,
                "filter_width": pool,
                "filter_height": pool,
            },
            version=2,
        )
        return out

    return add


def _int8_add_op() -> OperatorMaker:
    def add(graph: SubgraphBuilder, source: int, name: str) -> int:
        rng = np.random.default_rng(3)
        shape = graph.shape(source)
        other = graph.add_constant(
            f"{name}/other",
            rng.integers(-100, 100, shape, dtype=np.int8),
            quantization=quantization(SELF_CHECK_SCALE, 0),
        )
        out = graph.add_tensor(
            f"{name}/output", shape, "INT8", quantization=quantization(2 * SELF_CHECK_SCALE, 0)
        )
        graph.add_operator("ADD", [source, other], [out], version=2)
        return out

    return add


def _int8_softmax_op() -> OperatorMaker:
    def add(graph: SubgraphBuilder, source: int, name: str) -> int:
        out = graph.add_tensor(
            f"{name}/output", graph.shape(source), "INT8", quantization=quantization(1 / 256, -128)
        )
        graph.add_operator("SOFTMAX", [source], [out], options={"beta": 1.0}, version=2)
        return out

    return add


# (name, input shape, operator): every CMSIS-NN int8 path the rules name.
SELF_CHECKS: tuple[tuple[str, tuple[int, ...], OperatorMaker], ...] = (
    ("conv 3x3 (arm_convolve_s8)", (1, 9, 9, 4), _int8_conv_op(3, 1, 8)),
    ("conv 3x3 stride 2", (1, 9, 9, 4), _int8_conv_op(3, 2, 6)),
    ("conv 1x1 (mat_mult_nt_t)", (1, 9, 9, 8), _int8_conv_op(1, 1, 16, "VALID")),
    ("depthwise 3x3, 8 channels", (1, 9, 9, 8), _int8_depthwise_op(1)),
    ("depthwise 3x3 stride 2", (1, 9, 9, 8), _int8_depthwise_op(2)),
    ("depthwise 5x5 (opt kernel)", (1, 9, 9, 8), _int8_depthwise_op(1, kernel=5)),
    ("depthwise 3x3, 128 channels", (1, 6, 6, 128), _int8_depthwise_op(1)),
    ("average pool 3x3", (1, 9, 9, 8), _int8_pool_op("AVERAGE_POOL_2D", 3, 1, "SAME")),
    ("max pool 3x3", (1, 9, 9, 8), _int8_pool_op("MAX_POOL_2D", 3, 1, "SAME")),
    ("add", (1, 8, 8, 8), _int8_add_op()),
    ("softmax", (8, 20), _int8_softmax_op()),
)


def place_self_check(check: SelfCheck, distance: int) -> bytes:
    """The self-checking model with its checked output `distance` bytes below its input."""
    model = load_model(check.data)
    subgraph = model.subgraphs[0]
    arena = get_runtime("tflm").arenas(model)[0]
    output_offset = max(0, -distance)
    offsets = {check.output_tensor: output_offset, check.input_tensor: output_offset + distance}
    cursor = align_up(
        max(o + subgraph.tensors[t].nbytes for t, o in offsets.items()),
        16,
    )
    for planned in sorted(arena.buffers.values(), key=lambda p: p.id):
        if planned.tensor is None or planned.tensor in offsets:
            continue
        offsets[planned.tensor] = cursor
        cursor = align_up(cursor + arena.problem.by_id[planned.id].size, 16)
    values = tuple(offsets.get(t.index, -1) for t in subgraph.tensors)
    return rewrite_model(check.data, offline_plan=OfflinePlan(0, 1, values))


def self_check_distance(check: SelfCheck, library: KernelLibrary) -> int | None:
    """The rule's distance for the checked pair under a kernel library (None: no overlap)."""
    model = load_model(check.data)
    arena = get_runtime("tflm").arenas(model)[0]
    for pair in arena_overlaps(model, arena, library=library):
        if (pair.operator, pair.input_tensor) == (check.operator, check.input_tensor):
            return pair.overlap.min_offset_distance
    return None
