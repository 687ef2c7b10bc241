"""Schedules and reorderers: dependencies (data, variables, resources), peaks, optimality."""

from __future__ import annotations

import itertools
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalens import PlanError, load_model
from arenalens.examples import example_bytes
from arenalens.reorder import reorderer_names, run_reorderer
from arenalens.reorder.runtime_order import reorder_for_runtime
from arenalens.reorder.schedule import (
    Schedule,
    ScheduleProblem,
    apply_schedule,
    check_order,
    predecessors,
    schedule_problem,
)
from arenalens.tflite.builder import ModelBuilder
from tests.fixtures.optimize_models import streaming_state_model


def _diamond() -> ScheduleProblem:
    """a → (b, c) → d; b's output is big and c's small, so running c first keeps less live."""
    return ScheduleProblem(
        predecessors=(frozenset(), frozenset({0}), frozenset({0}), frozenset({1, 2})),
        tensor_bytes=MappingProxyType({0: 10, 1: 10, 2: 100, 3: 1, 4: 10}),
        op_inputs=((0,), (1,), (1,), (2, 3)),
        op_outputs=((1,), (2,), (3,), (4,)),
        op_extra=(0, 0, 0, 0),
        initial=frozenset({0}),
        kept=frozenset({4}),
    )


def test_peak_is_hand_checked() -> None:
    problem = _diamond()
    # Steps: 0 input; a: 10+10; b: 10 (t1 still read by c) + 100; c: 100 + 10 + 1; d: 100+1+10.
    assert problem.step_bytes([0, 1, 2, 3]) == [10, 20, 110, 111, 111]
    # c first: a: 20; c: 10 + 1; b: 10 + 1 + 100; d: 111.
    assert problem.step_bytes([0, 2, 1, 3]) == [10, 20, 11, 111, 111]
    assert problem.peak([0, 2, 1, 3]) == 111


def test_greedy_runs_the_ready_operator_that_adds_least() -> None:
    # After a, b would add 100 B and c 1 B (neither frees t1, both read it): c, then b, then d.
    result = run_reorderer("greedy", _diamond())
    assert result.order == (0, 2, 1, 3)
    assert result.peak == 111


def test_check_order_names_the_broken_dependency() -> None:
    problem = _diamond()
    check_order([0, 2, 1, 3], problem.predecessors)
    with pytest.raises(PlanError, match="operator 3 runs at position 2"):
        check_order([0, 1, 3, 2], problem.predecessors)
    with pytest.raises(PlanError, match="not a permutation"):
        check_order([0, 1, 2], problem.predecessors)


@st.composite
def random_problems(draw: st.DrawFn) -> ScheduleProblem:
    count = draw(st.integers(1, 7))
    # Tensor i is the output of op i; tensor `count` is the graph input.
    inputs: list[tuple[int, ...]] = []
    for op in range(count):
        choices = [*range(op), count]
        picked = draw(st.lists(st.sampled_from(choices), min_size=1, max_size=3, unique=True))
        inputs.append(tuple(sorted(picked)))
    sizes = {t: draw(st.integers(1, 64)) * 16 for t in range(count + 1)}
    extra = tuple(draw(st.integers(0, 3)) * 16 for _ in range(count))
    readers = {t for ins in inputs for t in ins}
    kept = frozenset(t for t in range(count) if t not in readers) | {count - 1}
    return ScheduleProblem(
        predecessors=tuple(frozenset(t for t in ins if t != count) for ins in inputs),
        tensor_bytes=MappingProxyType(sizes),
        op_inputs=tuple(inputs),
        op_outputs=tuple((op,) for op in range(count)),
        op_extra=extra,
        initial=frozenset({count}),
        kept=kept,
    )


def _brute_force(problem: ScheduleProblem) -> int:
    best = None
    for order in itertools.permutations(range(problem.op_count)):
        try:
            check_order(order, problem.predecessors)
        except PlanError:
            continue
        peak = problem.peak(order)
        best = peak if best is None else min(best, peak)
    assert best is not None
    return best


@settings(max_examples=60, deadline=None)
@given(problem=random_problems())
def test_exact_matches_brute_force_and_others_are_valid(problem: ScheduleProblem) -> None:
    optimum = _brute_force(problem)
    exact = run_reorderer("exact", problem)
    assert exact.proven_optimal
    assert exact.peak == optimum
    for name in reorderer_names():
        result = run_reorderer(name, problem)  # run_reorderer checks the order
        assert result.peak >= optimum
    assert run_reorderer("auto", problem).peak == optimum
    assert run_reorderer("auto", problem).peak <= problem.peak(range(problem.op_count))


def test_exact_gives_up_past_its_state_budget() -> None:
    # 14 independent operators: 2^14 sets; a budget of 50 states cannot finish.
    count = 14
    problem = ScheduleProblem(
        predecessors=tuple(frozenset() for _ in range(count)),
        tensor_bytes=MappingProxyType({t: 16 * (t + 1) for t in range(count)}),
        op_inputs=tuple(() for _ in range(count)),
        op_outputs=tuple((t,) for t in range(count)),
        op_extra=tuple(0 for _ in range(count)),
        initial=frozenset(),
        kept=frozenset(range(count)),
    )
    result = run_reorderer("exact", problem, max_states=50, upper_bound=10**9)
    assert not result.proven_optimal
    assert "not tractable" in result.notes[0]


def _stateful_model() -> bytes:
    """Two variable tensors and two resource handles naming one variable."""
    builder = ModelBuilder(description="state order")
    main = builder.add_subgraph("main")
    x = main.add_tensor("x", (1, 4))
    state = main.add_tensor("state", (1, 4), is_variable=True)
    h1 = main.add_tensor("h1", (1,), "RESOURCE")
    h2 = main.add_tensor("h2", (1,), "RESOURCE")
    read1, read2, total = (main.add_tensor(n, (1, 4)) for n in ("read1", "read2", "total"))
    unrelated = main.add_tensor("unrelated", (1, 4))
    main.add_operator("VAR_HANDLE", [], [h1], options={"shared_name": "v"})  # 0
    main.add_operator("VAR_HANDLE", [], [h2], options={"shared_name": "v"})  # 1
    main.add_operator("READ_VARIABLE", [h1], [read1])  # 2
    main.add_operator("ASSIGN_VARIABLE", [h2, x], [])  # 3: same variable as op 2
    main.add_operator("READ_VARIABLE", [h1], [read2])  # 4
    main.add_operator("ADD", [read1, state], [total])  # 5: reads the variable tensor
    main.add_operator("ADD", [read2, state], [unrelated])  # 6: reads it again
    main.set_inputs([x])
    main.set_outputs([total, unrelated])
    return builder.build()


def test_dependencies_keep_each_variables_reads_and_writes_in_order() -> None:
    model = load_model(_stateful_model())
    before = predecessors(model, 0)
    assert before[2] == {0}  # data: the handle
    assert before[3] == {1, 2}  # the write after the earlier read of the same variable
    assert before[4] == {0, 3}  # the next read after that write
    assert before[5] == {2}  # only data: reading a variable tensor twice is ordered below
    assert before[6] == {4, 5}  # data, and after the previous access of `state`


def test_call_once_is_a_barrier_for_state() -> None:
    model = load_model(streaming_state_model(layers=2))
    before = predecessors(model, 0)
    ops = model.subgraphs[0].operators
    call_once = next(op.index for op in ops if op.opcode == "CALL_ONCE")
    for op in ops:
        if op.opcode in ("READ_VARIABLE", "ASSIGN_VARIABLE"):
            assert call_once in before[op.index]


def test_apply_schedule_reindexes_and_checks() -> None:
    model = load_model(_stateful_model())
    moved = apply_schedule(model, Schedule({0: (1, 0, 2, 3, 4, 5, 6)}))
    assert [op.index for op in moved.subgraphs[0].operators] == list(range(7))
    assert moved.subgraphs[0].operators[0].opcode == "VAR_HANDLE"
    assert moved.subgraphs[0].operators[0].outputs == model.subgraphs[0].operators[1].outputs
    with pytest.raises(PlanError):
        apply_schedule(model, Schedule({0: (0, 1, 3, 2, 4, 5, 6)}))


def _tflm_problem(data: bytes) -> ScheduleProblem:
    model = load_model(data)
    return schedule_problem(
        model,
        tensor_bytes=lambda t: (
            0
            if t.has_data or t.is_variable or t.dtype.name == "RESOURCE"
            else -(-t.nbytes // 16) * 16
        ),
    )


def test_branchy_example_reorders_to_its_lower_bound() -> None:
    problem = _tflm_problem(example_bytes("branchy_inception"))
    result = run_reorderer("auto", problem)
    assert result.file_order_peak == 30_720
    assert result.peak == 20_480
    assert result.proven_optimal


def test_streaming_states_are_read_just_before_use() -> None:
    data = streaming_state_model()
    model = load_model(data)
    schedule, result = reorder_for_runtime(model, "tflm")
    assert result.peak <= 0.83 * result.file_order_peak  # at least 17% lower
    order = schedule.order(model, 0)
    ops = model.subgraphs[0].operators
    position = {op: index for index, op in enumerate(order)}
    for read in (op for op in ops if op.opcode == "READ_VARIABLE"):
        consumer = model.subgraphs[0].consumers[read.outputs[0]][0]
        assert position[consumer] == position[read.index] + 1, "read right before its use"
    check_order(order, predecessors(model, 0))


@pytest.mark.runtime
def test_reordered_streaming_model_computes_the_same_outputs() -> None:
    pytest.importorskip("tflite_micro")
    from arenalens.optimization import prove_outputs
    from arenalens.tflite.rewriter import rewrite_model

    data = streaming_state_model()
    model = load_model(data)
    schedule, _ = reorder_for_runtime(model, "tflm")
    rewritten = rewrite_model(data, operator_orders=dict(schedule.orders))
    proof = prove_outputs(data, rewritten, model, invocations=5)
    assert proof.identical, proof.detail
    assert proof.new_head is not None and proof.original_head is not None
    assert proof.new_head < proof.original_head
    assert np.isfinite(proof.new_head)
