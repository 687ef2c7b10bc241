"""The seed corpus: valid models, built by code, that mutation starts from.

Built-in examples, small synthetic graphs, and small models that exercise one feature each
(control flow, variables, offline plans, signatures, optional inputs, in-place operators,
sub-byte and string types, dynamic shapes). Real models are added at run time from a directory
when one is given (the shared corpus is never copied into the project).
"""

from __future__ import annotations

import itertools
import os
import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from tests.fixtures.synthetic import SYNTHETIC_SHAPES, synthetic_model

from arenalens.examples import EXAMPLES, example_bytes
from arenalens.tflite.builder import ModelBuilder
from arenalens.tflite.reader import OFFLINE_PLAN_METADATA


@dataclass(frozen=True, slots=True)
class Seed:
    """One corpus entry: a name for recipes, and the model bytes."""

    name: str
    data: bytes


def control_flow_model() -> bytes:
    """IF, WHILE and CALL_ONCE calling small subgraphs (one called twice)."""
    builder = ModelBuilder(description="control flow seed")
    main = builder.add_subgraph("main")
    branch = builder.add_subgraph("branch")
    cond_graph = builder.add_subgraph("cond")
    init = builder.add_subgraph("init")
    bx, by = branch.add_tensor("x", [1, 8]), branch.add_tensor("y", [1, 8])
    branch.add_operator("RELU", [bx], [by])
    branch.set_inputs([bx])
    branch.set_outputs([by])
    cx, cy = cond_graph.add_tensor("x", [1, 8]), cond_graph.add_tensor("c", [1], "BOOL")
    zero = cond_graph.add_constant("zero", np.zeros((1, 8), dtype="float32"))
    cond_graph.add_operator("LESS", [cx, zero], [cy])
    cond_graph.set_inputs([cx])
    cond_graph.set_outputs([cy])
    init.add_operator("RELU", [init.add_tensor("i", [2])], [init.add_tensor("o", [2])])
    x = main.add_tensor("x", [1, 8])
    flag = main.add_tensor("flag", [1], "BOOL")
    a, b, y = (main.add_tensor(name, [1, 8]) for name in ("a", "b", "y"))
    main.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": 3})
    main.add_operator(
        "IF", [flag, x], [a], options={"then_subgraph_index": 1, "else_subgraph_index": 1}
    )
    main.add_operator(
        "WHILE", [a], [b], options={"cond_subgraph_index": 2, "body_subgraph_index": 1}
    )
    main.add_operator("ADD", [a, b], [y])
    main.set_inputs([x, flag])
    main.set_outputs([y])
    return builder.build()


def features_model() -> bytes:
    """Variables, optional inputs, in-place ops, INT4 / STRING tensors, dynamic shapes, outputs."""
    builder = ModelBuilder(description="features seed")
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 16], "INT8", shape_signature=[-1, 16])
    state = graph.add_tensor("state", [1, 16], "INT8", is_variable=True)
    weights = graph.add_tensor("w", [16, 16], "INT4", data=bytes(128))
    shape = graph.add_constant("shape", np.array([16], dtype="int32"))
    a, b, c, d, e = (graph.add_tensor(n, [1, 16], "INT8") for n in "abcde")
    flat = graph.add_tensor("flat", [16], "INT8")
    text = graph.add_tensor("text", [1], "STRING")
    graph.add_operator("FULLY_CONNECTED", [x, weights, -1], [a])
    graph.add_operator("ADD", [a, state], [b])
    graph.add_operator("ASSIGN_VARIABLE", [state, b], [])
    graph.add_operator("RESHAPE", [b, shape], [flat])
    graph.add_operator("RESHAPE", [flat, shape], [c])
    graph.add_operator("SOFTMAX", [c], [d])
    graph.add_operator("MUL", [d, d], [e])
    graph.add_operator("CUSTOM:to_text", [e], [text])
    graph.set_inputs([x])
    graph.set_outputs([e, text, d])
    builder.add_signature("serving_default", graph)
    return builder.build()


def offline_plan_model() -> bytes:
    """A chain with an `OfflineMemoryAllocation` plan for some tensors (-1: plan online)."""
    builder = ModelBuilder(description="offline plan seed")
    graph = builder.add_subgraph("main")
    tensors = [graph.add_tensor(f"t{i}", [1, 32], "INT8") for i in range(5)]
    for source, target in itertools.pairwise(tensors):
        graph.add_operator("RELU", [source], [target])
    graph.set_inputs([tensors[0]])
    graph.set_outputs([tensors[-1]])
    offsets = (0, 32, -1, 0, -1)
    builder.add_metadata(
        OFFLINE_PLAN_METADATA, struct.pack(f"<iii{len(offsets)}i", 1, 1, len(offsets), *offsets)
    )
    return builder.build()


def multi_output_model() -> bytes:
    """Branches, a residual, two outputs, an output also read inside the graph."""
    builder = ModelBuilder(description="multi-output seed")
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 8, 8, 4])
    a, b, c, y1, y2 = (graph.add_tensor(n, [1, 8, 8, 4]) for n in ("a", "b", "c", "y1", "y2"))
    graph.add_operator("RELU", [x], [a])
    graph.add_operator("TANH", [a], [b])
    graph.add_operator("LOGISTIC", [a], [c])
    graph.add_operator("ADD", [b, c], [y1])
    graph.add_operator("ADD", [y1, a], [y2])
    graph.set_inputs([x])
    graph.set_outputs([y1, y2])
    return builder.build()


def built_seeds() -> tuple[Seed, ...]:
    """Seeds made by project code (examples, synthetic graphs, feature models)."""
    seeds = [Seed(f"example:{name}", example_bytes(name)) for name in EXAMPLES]
    for shape in SYNTHETIC_SHAPES:
        for count in (6, 40):
            seeds.append(Seed(f"synthetic:{shape}x{count}", synthetic_model(shape, count, width=4)))
    seeds.append(Seed("seed:control_flow", control_flow_model()))
    seeds.append(Seed("seed:features", features_model()))
    seeds.append(Seed("seed:offline_plan", offline_plan_model()))
    seeds.append(Seed("seed:multi_output", multi_output_model()))
    return tuple(seeds)


def directory_seeds(directory: str | os.PathLike[str]) -> tuple[Seed, ...]:
    """Every .tflite file in a directory (sorted by name); empty when the directory is absent."""
    folder = Path(directory)
    if not folder.is_dir():
        return ()
    return tuple(Seed(f"file:{p.name}", p.read_bytes()) for p in sorted(folder.glob("*.tflite")))


@cache
def seed_corpus(directory: str | None = None) -> tuple[Seed, ...]:
    """Built seeds plus the models found in `directory` (cached per process)."""
    return built_seeds() + (directory_seeds(directory) if directory else ())


__all__ = ["Seed", "built_seeds", "directory_seeds", "seed_corpus"]
