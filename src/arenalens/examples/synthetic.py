"""Generated models for scaling benchmarks and tests: chains, wide branches, U-Net-like skips.

They are structurally valid float32 graphs of cheap elementwise and fully-connected operators, sized
by operator count, with per-layer weights so the tensor count grows like a real network's. They are
not meant to compute anything useful.
"""

from __future__ import annotations

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder

SYNTHETIC_SHAPES = ("chain", "branches", "unet")


def synthetic_model(shape: str, operator_count: int, *, width: int = 16, seed: int = 0) -> bytes:
    """Shape name ('chain' | 'branches' | 'unet') and operator count → .tflite bytes."""
    if shape not in SYNTHETIC_SHAPES:
        raise ValueError(
            f"unknown synthetic shape '{shape}' (known: {', '.join(SYNTHETIC_SHAPES)})"
        )
    if operator_count < 1:
        raise ValueError("operator_count must be >= 1")
    builder = ModelBuilder(description=f"arenalens synthetic {shape} x{operator_count}")
    graph = builder.add_subgraph("main")
    rng = np.random.default_rng(seed)
    first = graph.add_tensor("input", [1, width])
    graph.set_inputs([first])
    last = {"chain": _chain, "branches": _branches, "unet": _unet}[shape](
        graph, first, operator_count, width, rng
    )
    graph.set_outputs([last])
    return builder.build()


def _dense(
    graph: SubgraphBuilder, source: int, width: int, rng: np.random.Generator, name: str
) -> int:
    weights = graph.add_constant(f"{name}/w", rng.standard_normal((width, width)).astype("float32"))
    bias = graph.add_constant(f"{name}/b", np.zeros(width, dtype="float32"))
    output = graph.add_tensor(name, [1, width])
    graph.add_operator("FULLY_CONNECTED", [source, weights, bias], [output])
    return output


def _unary(graph: SubgraphBuilder, opcode: str, source: int, width: int, name: str) -> int:
    output = graph.add_tensor(name, [1, width])
    graph.add_operator(opcode, [source], [output])
    return output


def _chain(
    graph: SubgraphBuilder, current: int, count: int, width: int, rng: np.random.Generator
) -> int:
    for index in range(count):
        if index % 2 == 0:
            current = _dense(graph, current, width, rng, f"dense{index}")
        else:
            current = _unary(graph, "RELU", current, width, f"relu{index}")
    return current


def _branches(
    graph: SubgraphBuilder, current: int, count: int, width: int, rng: np.random.Generator
) -> int:
    """Blocks of four parallel branches (1-3 ops each) joined by an ADD_N-free ADD tree."""
    made = 0
    block = 0
    while made < count:
        heads = []
        for branch in range(4):
            head = current
            for depth in range(1 + branch % 3):
                if made >= count - 3:
                    break
                head = _unary(
                    graph,
                    "RELU" if depth % 2 else "TANH",
                    head,
                    width,
                    f"b{block}/{branch}/{depth}",
                )
                made += 1
            heads.append(head)
        while len(heads) > 1 and made < count:
            left, right = heads.pop(), heads.pop()
            joined = graph.add_tensor(f"b{block}/join{len(heads)}", [1, width])
            graph.add_operator("ADD", [left, right], [joined])
            heads.insert(0, joined)
            made += 1
        current = heads[0]
        block += 1
        if made < count and block % 8 == 0:
            current = _dense(graph, current, width, rng, f"b{block}/dense")
            made += 1
    return current


def _unet(
    graph: SubgraphBuilder, current: int, count: int, width: int, rng: np.random.Generator
) -> int:
    """Encoder steps push skips; decoder steps pop and ADD them: long-lived skip tensors."""
    depth = 8
    made = 0
    skips: list[int] = []
    step = 0
    while made < count:
        going_down = (step // depth) % 2 == 0
        if going_down or not skips:
            current = _dense(graph, current, width, rng, f"enc{step}")
            skips.append(current)
        else:
            merged = graph.add_tensor(f"dec{step}", [1, width])
            graph.add_operator("ADD", [current, skips.pop()], [merged])
            current = merged
        made += 1
        step += 1
    return current
