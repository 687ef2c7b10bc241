"""Regression tests for inputs the fuzzer found: each must end in a result or ModelError, quickly.

One test per bug, named after the symptom; the input is built here (small, readable) or by the
crafter in `arenalens.fuzzing.hostile` that found it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from arenalens import ModelError, load_model
from arenalens.analysis.lifetimes import litert_timeline, tflm_timeline
from arenalens.fuzzing.harness import deadline
from arenalens.tflite.builder import ModelBuilder


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail (instead of hanging the suite) when the block runs longer than `seconds`."""
    started = time.perf_counter()
    with deadline(seconds * 4):
        yield
    assert time.perf_counter() - started < seconds


def in_place_self_write(opcode: str) -> bytes:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, a, y = (graph.add_tensor(name, [1, 8]) for name in ("x", "a", "y"))
    graph.add_operator("RELU", [x], [a])
    inputs = [a, a] if opcode in ("ADD", "MUL") else [a]
    graph.add_operator(opcode, inputs, [a])  # writes the tensor it reads
    graph.add_operator("RELU", [a], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    return builder.build()


@pytest.mark.parametrize("opcode", ["RESHAPE", "SOFTMAX", "ADD"])
def test_litert_in_place_operator_writing_its_input_does_not_hang(opcode: str) -> None:
    # Found by `in_place_loops`: the alias map got an edge a -> a and root() never returned.
    model = load_model(in_place_self_write(opcode))
    with within(1):
        timeline = litert_timeline(model)
    assert timeline.of(0, 1).alias_of is None


def test_litert_alias_chain_that_loops_back_does_not_hang() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, a, b, y = (graph.add_tensor(name, [1, 8]) for name in ("x", "a", "b", "y"))
    graph.add_operator("RELU", [x], [a])
    graph.add_operator("RESHAPE", [a], [b])  # b lives in a's bytes
    graph.add_operator("RESHAPE", [b], [a])  # ... and a in b's: a loop of aliases
    graph.add_operator("RELU", [a], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    model = load_model(builder.build())
    with within(1):
        timeline = litert_timeline(model)
    assert timeline.of(0, 2).alias_of == 1


def nested_calls(depth: int, calls_per_level: int, opcode: str = "CALL_ONCE") -> bytes:
    """Subgraph i calls subgraph i + 1 `calls_per_level` times."""
    builder = ModelBuilder()
    graphs = [builder.add_subgraph(f"g{i}") for i in range(depth)]
    for index, graph in enumerate(graphs):
        x = graph.add_tensor("x", [1, 8])
        y = graph.add_tensor("y", [1, 8])
        if index + 1 < depth:
            for _ in range(calls_per_level):
                if opcode == "IF":
                    flag = graph.add_tensor("flag", [1], "BOOL")
                    graph.add_operator(
                        "IF",
                        [flag, x],
                        [graph.add_tensor("r", [1, 8])],
                        options={
                            "then_subgraph_index": index + 1,
                            "else_subgraph_index": index + 1,
                        },
                    )
                else:
                    graph.add_operator(
                        "CALL_ONCE", [], [], options={"init_subgraph_index": index + 1}
                    )
        graph.add_operator("RELU", [x], [y])
        graph.set_inputs([x])
        graph.set_outputs([y])
    return builder.build()


def test_tflm_deep_control_flow_does_not_hit_the_recursion_limit() -> None:
    # Found by `deep_control_flow`: the marker recursed once per nesting level (RecursionError).
    model = load_model(nested_calls(3000, 1))
    with within(5):
        timeline = tflm_timeline(model)
    # 3000 RELUs, 2999 CALL_ONCEs, 2999 subgraph entries, and step 0.
    assert len(timeline.steps) == 3000 + 2 * 2999 + 1
    # The innermost RELU runs after every call and entry above it.
    assert timeline.of(2999, 1).first == 2 * 2999 + 1


def test_tflm_exponential_control_flow_is_refused_quickly() -> None:
    # Found by `control_flow_fan_out`: each subgraph called twice per level, 40 levels deep, is a
    # walk of 2**40 steps; TFLM itself would take as long. Refused up front.
    model = load_model(nested_calls(40, 2))
    with within(1), pytest.raises(ModelError, match="control flow expands to more than"):
        tflm_timeline(model)


def test_tflm_step_count_matches_the_walk() -> None:
    from arenalens.analysis.lifetimes import tflm_step_count
    from arenalens.fuzzing.seeds import control_flow_model

    for data in (nested_calls(6, 2), nested_calls(5, 3, "IF"), control_flow_model()):
        model = load_model(data)
        assert tflm_step_count(model, 10**9) == len(tflm_timeline(model).steps) - 1
