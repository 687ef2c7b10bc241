"""Allowed overlaps in the planning layer: checker, lower bound, heuristics and CP-SAT."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arenalens.errors import PlanError
from arenalens.planning import Buffer, Problem, check_plan, planner_names, run_planner
from arenalens.planning.bounds import sound_lower_bound
from arenalens.planning.problem import Overlap, arena_size
from tests.planning.test_planners import knobs, plan_or_refusal

# A 1x1 convolution that doubles 100 bytes into 200: the output may start 20 bytes below the
# input (its last read of an input byte comes 20 bytes before the output byte it is writing).
IN, OUT = Buffer(0, 0, 1, 100), Buffer(1, 1, 2, 200)
DOUBLING = Problem((IN, OUT), overlaps=(Overlap(1, 0, 20),))


def test_checker_accepts_exactly_the_allowed_distance() -> None:
    check_plan(DOUBLING, {0: 20, 1: 0}, 200)
    check_plan(DOUBLING, {0: 200, 1: 0})  # disjoint above: always fine
    check_plan(DOUBLING, {0: 0, 1: 100})  # disjoint, output above the input
    with pytest.raises(PlanError, match=r"at least 20 B below buffer 0; it is 19 B"):
        check_plan(DOUBLING, {0: 19, 1: 0})
    with pytest.raises(PlanError, match="share bytes"):
        check_plan(DOUBLING, {0: 0, 1: 50})  # the output above the input start: not allowed
    with pytest.raises(PlanError, match="share bytes"):
        check_plan(DOUBLING.without_overlaps(), {0: 20, 1: 0})


def test_overlap_is_ordered_and_negative_distances_let_the_output_start_above() -> None:
    reversed_pair = Problem((IN, OUT), overlaps=(Overlap(0, 1, 20),))
    with pytest.raises(PlanError):
        check_plan(reversed_pair, {0: 20, 1: 0})  # buffer 0 is now the one that may go below
    check_plan(reversed_pair, {0: 0, 1: 20})
    above = Problem((IN, OUT), overlaps=(Overlap(1, 0, -30),))
    check_plan(above, {0: 0, 1: 30})
    with pytest.raises(PlanError):
        check_plan(above, {0: 0, 1: 31})


def test_only_the_named_pair_may_share_bytes() -> None:
    third = Buffer(2, 1, 1, 10)
    problem = Problem((IN, OUT, third), overlaps=(Overlap(1, 0, 20),))
    check_plan(problem, {0: 20, 1: 0, 2: 200})
    with pytest.raises(PlanError, match=r"buffers 1 and 2|buffers 2 and 1"):
        check_plan(problem, {0: 20, 1: 0, 2: 190})
    with pytest.raises(PlanError, match="share bytes"):
        check_plan(problem, {0: 20, 1: 0, 2: 115})  # inside both


def test_fixed_partners_are_judged_by_the_same_rule() -> None:
    problem = Problem((Buffer(0, 0, 1, 100, fixed_offset=20), OUT), overlaps=(Overlap(1, 0, 20),))
    check_plan(problem, {0: 20, 1: 0})
    with pytest.raises(PlanError):
        check_plan(problem, {0: 20, 1: 16})


def test_problem_refuses_malformed_overlaps() -> None:
    with pytest.raises(ValueError, match="not in the problem"):
        Problem((IN,), overlaps=(Overlap(1, 0, 0),))
    with pytest.raises(ValueError, match="itself"):
        Problem((IN,), overlaps=(Overlap(0, 0, 0),))
    with pytest.raises(ValueError, match="more than one"):
        Problem((IN, OUT), overlaps=(Overlap(1, 0, 0), Overlap(0, 1, 5)))


def test_lower_bound_hand_checked() -> None:
    # Busiest step holds 300 bytes; the pair can share min(100, 200 - 20) = 100 of them.
    assert DOUBLING.disjoint_lower_bound() == 300
    assert DOUBLING.lower_bound() == 200
    # With 16-byte offsets the distance is 32 in effect: still 100 shareable.
    aligned = Problem(DOUBLING.buffers, alignment=16, overlaps=DOUBLING.overlaps)
    assert aligned.lower_bound() == 200
    # A 190-byte distance leaves only 10 of the output's bytes to share.
    far = Problem((IN, OUT), overlaps=(Overlap(1, 0, 190),))
    assert far.lower_bound() == 290
    # An ADD whose output may overlap both 100-byte inputs shares at most its own 100 bytes.
    add = Problem(
        (Buffer(0, 0, 1, 100), Buffer(1, 0, 1, 100), Buffer(2, 1, 2, 100)),
        overlaps=(Overlap(2, 0, 0), Overlap(2, 1, 0)),
    )
    assert add.lower_bound() == 200
    assert sound_lower_bound(add) == 200


def _brute_force_optimum(problem: Problem, limit: int) -> int:
    """Smallest arena over every placement with offsets below limit (tiny problems only)."""
    choices = [
        [b.fixed_offset]
        if b.fixed_offset is not None
        else range(0, max(1, limit - b.size + 1), problem.alignment)
        for b in problem.buffers
    ]
    best = None
    for combination in itertools.product(*choices):
        offsets = {b.id: o for b, o in zip(problem.buffers, combination, strict=True)}
        try:
            check_plan(problem, offsets)
        except PlanError:
            continue
        size = arena_size(problem, offsets)
        best = size if best is None else min(best, size)
    assert best is not None
    return best


@st.composite
def overlap_problems(draw: st.DrawFn, *, max_buffers: int = 12, max_size: int = 400) -> Problem:
    """Random buffers with random allowed overlaps between live-together pairs."""
    count = draw(st.integers(0, max_buffers))
    buffers = []
    for buffer_id in range(count):
        start = draw(st.integers(0, 8))
        end = start + draw(st.integers(0, 4))
        size = draw(st.integers(0, max_size))
        fixed = None
        if draw(st.integers(0, 11)) == 0:
            fixed = draw(st.integers(0, 2 * max_size))
        buffers.append(Buffer(buffer_id * 2 + 1, start, end, size, fixed))
    overlaps = []
    used: set[frozenset[int]] = set()
    for first, second in itertools.permutations(buffers, 2):
        pair = frozenset((first.id, second.id))
        if pair in used or not first.conflicts_with(second) or draw(st.integers(0, 2)):
            continue
        used.add(pair)
        distance = draw(st.integers(-max_size // 4, max_size))
        overlaps.append(Overlap(first.id, second.id, distance))
    alignment = draw(st.sampled_from((1, 4, 16)))
    return Problem(tuple(buffers), alignment=alignment, overlaps=tuple(overlaps))


@pytest.mark.parametrize("name", planner_names())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=overlap_problems())
def test_every_planner_is_valid_and_bounded_with_overlaps(name: str, problem: Problem) -> None:
    plan = plan_or_refusal(name, problem)
    if plan is None:
        return
    check_plan(problem, plan.offsets, plan.arena_size)
    assert sound_lower_bound(problem) <= plan.arena_size
    if plan.bound is not None:
        assert plan.bound <= plan.arena_size
    again = run_planner(name, problem, **knobs(name))
    if name not in ("optimal", "best"):
        assert dict(again.offsets) == dict(plan.offsets)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=overlap_problems(max_buffers=3, max_size=12))
def test_lower_bound_is_sound_and_cp_sat_optimal(problem: Problem) -> None:
    pytest.importorskip("ortools")
    limit = sum(b.size for b in problem.buffers) + max(
        (b.fixed_offset or 0 for b in problem.buffers), default=0
    )
    optimum = _brute_force_optimum(problem, limit + problem.alignment * 3)
    assert sound_lower_bound(problem) <= optimum
    plan = run_planner("optimal", problem, effort=5.0)
    if plan.proven_optimal:
        assert plan.arena_size == optimum


def test_heuristics_use_overlaps_on_a_chain() -> None:
    # A VWW-like chain: input, stride-2 conv, depthwise, channel-doubling 1x1 conv, ...
    buffers = (
        Buffer(0, 0, 1, 27648),
        Buffer(1, 1, 2, 18432),
        Buffer(2, 2, 3, 18432),
        Buffer(3, 3, 4, 36864),
        Buffer(4, 4, 5, 9216),
    )
    overlaps = (Overlap(1, 0, 112), Overlap(2, 1, 400), Overlap(3, 2, 18439), Overlap(4, 3, 0))
    problem = Problem(buffers, alignment=16, overlaps=overlaps)
    assert problem.disjoint_lower_bound() == 55296
    assert problem.lower_bound() == 36880  # 36,864 + the 18,439-byte distance rounded to 18,448
    plan = run_planner("hillclimb", problem)
    assert plan.arena_size == 36880
    assert run_planner("tflm_greedy", problem).arena_size >= 55296  # replicas ignore overlaps


def test_cp_sat_finds_an_overlap_the_hint_misses() -> None:
    pytest.importorskip("ortools")
    problem = Problem(
        (*DOUBLING.buffers, Buffer(2, 0, 2, 50), Buffer(3, 1, 1, 40)),
        alignment=4,
        overlaps=DOUBLING.overlaps,
    )
    naive = run_planner("naive", problem)
    plan = run_planner("optimal", problem, hint=naive.offsets, effort=5.0)
    assert plan.proven_optimal
    assert plan.arena_size == 290  # 200 + 50 + 40: the input hides inside the output
    check_plan(problem, plan.offsets, plan.arena_size)
