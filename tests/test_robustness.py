"""Regression tests for inputs the fuzzer found: each must end in a result or ModelError, quickly.

One test per bug, named after the symptom; the input is built here (small, readable) or by the
crafter in `arenalens.fuzzing.hostile` that found it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
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
