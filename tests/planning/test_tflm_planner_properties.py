"""Property tests over random buffer sets for tflm_greedy, tflm_linear and naive: every plan
passes the checker, `lower_bound <= arena <= naive`, planning is deterministic, and shuffling the
buffer list (same ids) changes nothing."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from arenalens.planning import Buffer, Problem, check_plan, run_planner

PLANNERS = ("tflm_greedy", "tflm_linear", "naive")


@st.composite
def problems(draw: st.DrawFn) -> Problem:
    """Online buffers with sizes that are multiples of the alignment (as TFLM rounds them)."""
    alignment = draw(st.sampled_from([1, 4, 16, 64]))
    count = draw(st.integers(min_value=0, max_value=40))
    buffers = []
    for index in range(count):
        first = draw(st.integers(min_value=-1, max_value=30))
        last = first + draw(st.integers(min_value=0, max_value=8))
        size = alignment * draw(st.integers(min_value=0, max_value=32))
        buffers.append(Buffer(index, first, last, size))
    return Problem(tuple(buffers), alignment=alignment)


@settings(max_examples=150, deadline=None)
@given(problem=problems(), planner=st.sampled_from(PLANNERS))
def test_plans_are_valid_and_between_the_bounds(problem: Problem, planner: str) -> None:
    plan = run_planner(planner, problem)
    check_plan(problem, plan.offsets, plan.arena_size)
    assert problem.lower_bound() <= plan.arena_size <= problem.naive_size()


@settings(max_examples=100, deadline=None)
@given(problem=problems(), planner=st.sampled_from(PLANNERS), seed=st.integers(0, 2**16))
def test_plans_are_deterministic_and_shuffle_invariant(
    problem: Problem, planner: str, seed: int
) -> None:
    first = run_planner(planner, problem)
    again = run_planner(planner, problem)
    shuffled_buffers = list(problem.buffers)
    random.Random(seed).shuffle(shuffled_buffers)
    shuffled = run_planner(planner, Problem(tuple(shuffled_buffers), alignment=problem.alignment))
    assert dict(first.offsets) == dict(again.offsets) == dict(shuffled.offsets)


@settings(max_examples=100, deadline=None)
@given(problem=problems(), data=st.data())
def test_greedy_honours_fixed_offsets(problem: Problem, data: st.DataObject) -> None:
    pinned = tuple(
        Buffer(b.id, b.start, b.end, b.size, data.draw(st.integers(0, 8)) * problem.alignment)
        if data.draw(st.booleans()) and b.id % 3 == 0
        else b
        for b in problem.buffers
    )
    fixed_problem = Problem(pinned, alignment=problem.alignment)
    for planner in ("tflm_greedy", "naive"):
        plan = run_planner(planner, fixed_problem)
        for buffer in pinned:
            if buffer.fixed_offset is not None:
                assert plan.offsets[buffer.id] == buffer.fixed_offset
