"""Lifetimes under TFLM and LiteRT rules, checked against tables worked out by hand.

TFLM: one global step counter; step 0 precedes operator 0, operator k of subgraph 0 is step k+1,
and each nested subgraph entry takes one more step. LiteRT: per subgraph, step = plan position;
inputs, outputs and variables are never freed (NEVER_FREED).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from arenalens import load_model
from arenalens.analysis.lifetimes import NEVER_FREED, TensorLifetime
from arenalens.ir import Model
from arenalens.runtimes.litert.lifetimes import litert_timeline
from arenalens.runtimes.tflm.lifetimes import tflm_timeline
from arenalens.tflite.builder import ModelBuilder

END = NEVER_FREED


def intervals(model: Model, runtime: str, subgraph: int = 0) -> dict[str, tuple[int, int]]:
    """Tensor name → (first, last) for the non-constant tensors of one subgraph."""
    timeline = tflm_timeline(model) if runtime == "tflm" else litert_timeline(model)
    return {
        tensor.name: (
            timeline.of(subgraph, tensor.index).first,
            timeline.of(subgraph, tensor.index).last,
        )
        for tensor in model.subgraphs[subgraph].tensors
        if not tensor.has_data
    }


def chain() -> Model:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, a, b, y = (graph.add_tensor(n, [1, 8]) for n in ("x", "a", "b", "y"))
    graph.add_operator("RELU", [x], [a])
    graph.add_operator("RELU", [a], [b])
    graph.add_operator("RELU", [b], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    return load_model(builder.build())


def test_chain() -> None:
    model = chain()
    assert intervals(model, "tflm") == {"x": (0, 1), "a": (1, 2), "b": (2, 3), "y": (3, 3)}
    assert intervals(model, "litert") == {"x": (0, END), "a": (0, 1), "b": (1, 2), "y": (2, END)}


def test_residual_add() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, a, b, y = (graph.add_tensor(n, [1, 8]) for n in ("x", "a", "b", "y"))
    graph.add_operator("RELU", [x], [a])
    graph.add_operator("RELU", [a], [b])
    graph.add_operator("ADD", [a, b], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    model = load_model(builder.build())
    # The shortcut `a` stays live across the branch until the ADD reads it.
    assert intervals(model, "tflm") == {"x": (0, 1), "a": (1, 3), "b": (2, 3), "y": (3, 3)}
    # The ADD cannot run in place: its output is a graph output.
    assert intervals(model, "litert") == {"x": (0, END), "a": (0, 2), "b": (1, 2), "y": (2, END)}


def test_residual_add_in_place_under_litert() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, a, b, s, y = (graph.add_tensor(n, [1, 8]) for n in ("x", "a", "b", "s", "y"))
    graph.add_operator("RELU", [x], [a])
    graph.add_operator("RELU", [x], [b])
    graph.add_operator("ADD", [a, b], [s])  # a is read once: s may take a's bytes
    graph.add_operator("RELU", [s], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    model = load_model(builder.build())
    timeline = litert_timeline(model)
    assert timeline.of(0, s).alias_of == a
    # The root `a` now lives until the last reader of its alias `s` (node 3).
    assert (timeline.of(0, a).first, timeline.of(0, a).last) == (0, 3)
    assert intervals(model, "tflm") == {
        "x": (0, 2),
        "a": (1, 3),
        "b": (2, 3),
        "s": (3, 4),
        "y": (4, 4),
    }


def test_branch_concat() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, a, b = (graph.add_tensor(n, [1, 8]) for n in ("x", "a", "b"))
    y = graph.add_tensor("y", [1, 16])
    graph.add_operator("RELU", [x], [a])
    graph.add_operator("TANH", [x], [b])
    graph.add_operator("CONCATENATION", [a, b], [y], options={"axis": 1})
    graph.set_inputs([x])
    graph.set_outputs([y])
    model = load_model(builder.build())
    assert intervals(model, "tflm") == {"x": (0, 2), "a": (1, 3), "b": (2, 3), "y": (3, 3)}
    assert intervals(model, "litert") == {"x": (0, END), "a": (0, 2), "b": (1, 2), "y": (2, END)}


def test_model_output_read_by_a_later_operator() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, first, second = (graph.add_tensor(n, [1, 8]) for n in ("x", "first", "second"))
    graph.add_operator("RELU", [x], [first])
    graph.add_operator("RELU", [first], [second])
    graph.set_inputs([x])
    graph.set_outputs([first, second])
    model = load_model(builder.build())
    # Outputs are kept to the final step (TFLM) / never freed (LiteRT), even when read earlier.
    assert intervals(model, "tflm") == {"x": (0, 1), "first": (1, 2), "second": (2, 2)}
    assert intervals(model, "litert") == {
        "x": (0, END),
        "first": (0, END),
        "second": (1, END),
    }


def test_unread_intermediate_lives_one_step() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x, unused, y = (graph.add_tensor(n, [1, 8]) for n in ("x", "unused", "y"))
    graph.add_operator("RELU", [x], [unused])
    graph.add_operator("TANH", [x], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    model = load_model(builder.build())
    assert intervals(model, "tflm")["unused"] == (1, 1)
    # LiteRT frees only on a read: an unread output is never freed.
    assert intervals(model, "litert")["unused"] == (0, END)


def test_variable_tensor() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 8])
    state = graph.add_tensor("state", [1, 8], is_variable=True)
    y = graph.add_tensor("y", [1, 8])
    graph.add_operator("ADD", [x, state], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    model = load_model(builder.build())
    # TFLM: a variable is read but never written by an operator, so first stays -1.
    assert intervals(model, "tflm") == {"x": (0, 1), "state": (-1, 1), "y": (1, 1)}
    # LiteRT: variables are allocated at 0 and never freed.
    assert intervals(model, "litert") == {"x": (0, END), "state": (0, END), "y": (0, END)}


def test_optional_input_is_kept_visible_but_never_planned() -> None:
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 4])
    weights = graph.add_constant("w", np.ones((2, 4), dtype="float32"))
    y = graph.add_tensor("y", [1, 2])
    graph.add_operator("FULLY_CONNECTED", [x, weights, -1], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    model = load_model(builder.build())
    assert model.subgraphs[0].operators[0].inputs == (x, weights, -1)
    assert intervals(model, "tflm") == {"x": (0, 1), "y": (1, 1)}


def if_model() -> Model:
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    then_branch = builder.add_subgraph("then")
    else_branch = builder.add_subgraph("else")
    condition = main.add_tensor("cond", [1], "BOOL")
    x = main.add_tensor("x", [1, 8])
    y = main.add_tensor("y", [1, 8])
    main.add_operator(
        "IF",
        [condition, x],
        [y],
        options={"then_subgraph_index": 1, "else_subgraph_index": 2},
    )
    main.set_inputs([condition, x])
    main.set_outputs([y])
    for branch, opcode, prefix in ((then_branch, "RELU", "t"), (else_branch, "TANH", "e")):
        branch_in = branch.add_tensor(f"{prefix}_in", [1, 8])
        branch_out = branch.add_tensor(f"{prefix}_out", [1, 8])
        branch.add_operator(opcode, [branch_in], [branch_out])
        branch.set_inputs([branch_in])
        branch.set_outputs([branch_out])
    return load_model(builder.build())


def test_if_subgraphs_under_tflm() -> None:
    model = if_model()
    timeline = tflm_timeline(model)
    # IF runs at step 1; entering 'then' is step 2, its RELU step 3; 'else' 4, its TANH 5.
    assert intervals(model, "tflm", 0) == {"cond": (0, 5), "x": (0, 5), "y": (1, 5)}
    assert intervals(model, "tflm", 1) == {"t_in": (2, 3), "t_out": (3, 3)}
    assert intervals(model, "tflm", 2) == {"e_in": (4, 5), "e_out": (5, 5)}
    assert [(s.step, s.subgraph, s.operator) for s in timeline.steps] == [
        (0, 0, None),
        (1, 0, 0),
        (2, 1, None),
        (3, 1, 0),
        (4, 2, None),
        (5, 2, 0),
    ]


def test_if_subgraphs_under_litert() -> None:
    model = if_model()
    # Each subgraph is planned alone, on its own timeline.
    assert intervals(model, "litert", 0) == {"cond": (0, END), "x": (0, END), "y": (0, END)}
    assert intervals(model, "litert", 1) == {"t_in": (0, END), "t_out": (0, END)}


def test_while_subgraphs_under_tflm() -> None:
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    cond_graph = builder.add_subgraph("cond")
    body_graph = builder.add_subgraph("body")
    x = main.add_tensor("x", [1, 8])
    y = main.add_tensor("y", [1, 8])
    z = main.add_tensor("z", [1, 8])
    main.add_operator(
        "WHILE", [x], [y], options={"cond_subgraph_index": 1, "body_subgraph_index": 2}
    )
    main.add_operator("RELU", [y], [z])
    main.set_inputs([x])
    main.set_outputs([z])
    c_in = cond_graph.add_tensor("c_in", [1, 8])
    c_out = cond_graph.add_tensor("c_out", [1, 8], "BOOL")
    cond_graph.add_operator("GREATER", [c_in, c_in], [c_out])
    cond_graph.set_inputs([c_in])
    cond_graph.set_outputs([c_out])
    b_in = body_graph.add_tensor("b_in", [1, 8])
    b_mid = body_graph.add_tensor("b_mid", [1, 8])
    b_out = body_graph.add_tensor("b_out", [1, 8])
    body_graph.add_operator("RELU", [b_in], [b_mid])
    body_graph.add_operator("TANH", [b_mid], [b_out])
    body_graph.set_inputs([b_in])
    body_graph.set_outputs([b_out])
    model = load_model(builder.build())
    # WHILE at step 1; cond entered at 2 (GREATER 3); body entered at 4 (RELU 5, TANH 6);
    # the RELU after the loop is step 7.
    assert intervals(model, "tflm", 0) == {"x": (0, 6), "y": (1, 7), "z": (7, 7)}
    assert intervals(model, "tflm", 1) == {"c_in": (2, 3), "c_out": (3, 3)}
    assert intervals(model, "tflm", 2) == {"b_in": (4, 5), "b_mid": (5, 6), "b_out": (6, 6)}


def test_unreachable_subgraph_keeps_unset_lifetimes() -> None:
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    other = builder.add_subgraph("other_signature")
    for graph in (main, other):
        x = graph.add_tensor("x", [1, 8])
        y = graph.add_tensor("y", [1, 8])
        graph.add_operator("RELU", [x], [y])
        graph.set_inputs([x])
        graph.set_outputs([y])
    model = load_model(builder.build())
    assert intervals(model, "tflm", 1) == {"x": (-1, -1), "y": (-1, -1)}


def test_tflm_lifetimes_are_whole_tensor_lifetimes() -> None:
    # The TFLM marker builds its TensorLifetime tuples without the class's __new__: each must be
    # one, with every field (a field added to the class must be added there too).
    timeline = tflm_timeline(chain())
    for (subgraph, tensor), lifetime in timeline.lifetimes.items():
        assert type(lifetime) is TensorLifetime
        assert len(lifetime) == len(TensorLifetime._fields)
        assert lifetime == TensorLifetime(subgraph, tensor, lifetime.first, lifetime.last)


def straight_marks(model: Model) -> dict[int, tuple[int, int]]:
    """MarkAllocationLifetimes on a one-subgraph model, tensor by tensor as TFLM writes it."""
    graph = model.subgraphs[0]
    first: dict[int, int] = {}
    last: dict[int, int] = {}

    def mark(tensor: int, step: int, *, starts: bool) -> None:
        if tensor < 0:
            return
        if starts:
            first.setdefault(tensor, step)
        last[tensor] = step

    for tensor in graph.inputs:
        mark(tensor, 0, starts=True)
    for step, op in enumerate(graph.operators, start=1):
        for tensor in op.outputs:
            mark(tensor, step, starts=True)
        for tensor in (*op.inputs, *op.outputs):
            mark(tensor, step, starts=False)
    for tensor in graph.outputs:
        mark(tensor, len(graph.operators), starts=True)
    return {t: (first.get(t, -1), last.get(t, -1)) for t in range(len(graph.tensors))}


@pytest.mark.parametrize("seed", range(25))
def test_tflm_marks_of_a_straight_subgraph_match_the_tensor_walk(seed: int) -> None:
    # The marker sets a subgraph without calls by dict operations over all its operators at
    # once; here, tensor by tensor: tensors read and written several times, outputs written
    # twice, model inputs and outputs read by operators, tensors no operator touches.
    rng = random.Random(seed)
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    available = [graph.add_tensor(f"in{i}", [1, 4]) for i in range(rng.randint(1, 3))]
    graph.set_inputs(available[: rng.randint(1, len(available))])
    read: set[int] = set()
    for index in range(rng.randint(1, 10)):
        reads = [rng.choice(available), rng.choice(available)]
        unread = [t for t in available if t not in read and t not in reads]
        read.update(reads)
        if unread and rng.random() < 0.3:  # written again (a model input too): first mark stays
            graph.add_operator("ADD", reads, [rng.choice(unread)])
            continue
        written = graph.add_tensor(f"t{index}", [1, 4])
        graph.add_operator("ADD", reads, [written])
        available.append(written)
    graph.add_tensor("untouched", [1, 4])
    graph.set_outputs(rng.sample(available, rng.randint(1, 2)))
    model = load_model(builder.build())
    timeline = tflm_timeline(model)
    assert {t.tensor: (t.first, t.last) for t in timeline.lifetimes.values()} == straight_marks(
        model
    )


def test_tflm_lifetimes_read_as_the_dict_they_stand_for() -> None:
    # TFLM's lifetimes are made when read (a check reads the planned tensors' only): the mapping
    # holds every tensor of every subgraph, in order, and nothing else.
    builder = ModelBuilder()
    main = builder.add_subgraph("main")
    other = builder.add_subgraph("other")
    for graph in (main, other):
        x = graph.add_tensor("x", [1, 8])
        y = graph.add_tensor("y", [1, 8])
        graph.add_operator("RELU", [x], [y])
        graph.set_inputs([x])
        graph.set_outputs([y])
    lifetimes = tflm_timeline(load_model(builder.build())).lifetimes
    expected = {
        (0, 0): TensorLifetime(0, 0, 0, 1),
        (0, 1): TensorLifetime(0, 1, 1, 1),
        (1, 0): TensorLifetime(1, 0, -1, -1),
        (1, 1): TensorLifetime(1, 1, -1, -1),
    }
    assert list(lifetimes) == list(expected)
    assert len(lifetimes) == 4
    assert lifetimes == expected and expected == lifetimes
    assert all(type(lifetime) is TensorLifetime for lifetime in lifetimes.values())
    for foreign in ((0, 2), (2, 0), (-1, 0), (0, -1), (0,), "x", None):
        assert foreign not in lifetimes
        with pytest.raises(KeyError):
            lifetimes[foreign]  # type: ignore[index]
