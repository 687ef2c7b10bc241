"""The plan checker against a brute-force pairwise check, and its speed with many live buffers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalens.errors import PlanError
from arenalens.planning import Buffer, Problem, check_plan, checker, run_planner
from arenalens.planning.checker import _plainly_valid, checked_arena_size
from arenalens.planning.problem import arena_size
from tests.hang_guard import no_hang


def brute_force_conflict(problem: Problem, offsets: dict[int, int]) -> bool:
    """True when two sized buffers, not both fixed, share a step and a byte (O(n²))."""
    buffers = [b for b in problem.buffers if b.size]
    for position, a in enumerate(buffers):
        for b in buffers[position + 1 :]:
            if a.fixed_offset is not None and b.fixed_offset is not None:
                continue
            if not a.conflicts_with(b):
                continue
            if offsets[a.id] < offsets[b.id] + b.size and offsets[b.id] < offsets[a.id] + a.size:
                return True
    return False


@st.composite
def placed_problems(draw: st.DrawFn) -> tuple[Problem, dict[int, int]]:
    count = draw(st.integers(0, 24))
    buffers = []
    offsets = {}
    for buffer_id in range(count):
        start = draw(st.integers(0, 12))
        end = start + draw(st.integers(0, 6))
        size = draw(st.integers(0, 40))
        offset = draw(st.integers(0, 120))
        fixed = offset if draw(st.integers(0, 4)) == 0 else None
        buffers.append(Buffer(buffer_id, start, end, size, fixed))
        offsets[buffer_id] = offset
    return Problem(tuple(buffers)), offsets


@settings(max_examples=400, deadline=None)
@given(placed_problems())
def test_checker_agrees_with_brute_force(case: tuple[Problem, dict[int, int]]) -> None:
    problem, offsets = case
    expected = brute_force_conflict(problem, offsets)
    try:
        check_plan(problem, offsets)
    except PlanError as error:
        assert expected, f"checker refused a valid plan: {error}"
    else:
        assert not expected, "checker accepted overlapping buffers"


@pytest.mark.parametrize("fixed_every", [0, 3])
def test_checker_is_fast_with_thousands_of_live_buffers(fixed_every: int) -> None:
    # Found by `wide_operators`: 20,000 outputs of one operator are all live at once, and the old
    # sweep compared each new buffer with every live buffer below it (minutes).
    count = 20_000
    buffers = tuple(
        Buffer(i, 0, 1, 16, 16 * i if fixed_every and i % fixed_every == 0 else None)
        for i in range(count)
    )
    problem = Problem(buffers)
    plan = run_planner("naive", problem)
    with no_hang(2, "check_plan"):
        check_plan(problem, plan.offsets)


def test_checker_names_the_fixed_buffer_an_online_one_overlaps() -> None:
    problem = Problem((Buffer(0, 0, 5, 64, 0), Buffer(1, 0, 5, 64, 32), Buffer(2, 3, 4, 16, None)))
    with pytest.raises(PlanError, match="buffers 0 and 2 share bytes"):
        check_plan(problem, {0: 0, 1: 32, 2: 16})
    check_plan(problem, {0: 0, 1: 32, 2: 96})  # fixed 0 and 1 may overlap each other


@st.composite
def online_problems(draw: st.DrawFn) -> tuple[Problem, dict[int, int]]:
    """No fixed buffer, no allowed overlap: the checker's all-online path."""
    count = draw(st.integers(0, 24))
    buffers = []
    offsets = {}
    for buffer_id in range(count):
        start = draw(st.integers(-1, 12))
        end = start + draw(st.integers(-1, 6))
        buffers.append(Buffer(buffer_id, start, end, draw(st.integers(0, 40))))
        offsets[buffer_id] = draw(st.integers(0, 120))
    return Problem(tuple(buffers)), offsets


def _verdict(problem: Problem, offsets: dict[int, int]) -> str:
    try:
        check_plan(problem, offsets)
    except PlanError as error:
        return str(error)
    return "valid"


@settings(max_examples=400, deadline=None)
@given(online_problems())
def test_the_all_online_path_finds_what_the_general_sweep_finds(
    case: tuple[Problem, dict[int, int]],
) -> None:
    # A fixed buffer live at no step of the others changes no verdict, but sends the check down
    # the general sweep (fixed and overlapping buffers): both must name the same two buffers.
    problem, offsets = case
    far = Buffer(1_000, -10, -10, 8, 0)
    with_fixed = Problem((*problem.buffers, far))
    assert _verdict(problem, offsets) == _verdict(with_fixed, offsets | {far.id: 0})


@pytest.mark.parametrize("steps_per_buffer", [0, 4, 1_000])
@settings(max_examples=400, deadline=None)
@given(case=online_problems())
def test_the_usual_plans_quick_proof_is_the_brute_forces_answer(
    case: tuple[Problem, dict[int, int]], steps_per_buffer: int
) -> None:
    # `check_plan` trusts the quick sweep's "valid" and judges everything else in full, so a
    # quick proof that accepted a shared byte, or refused a valid plan, would pass unnoticed
    # (a wrong plan through, or every check slow): it must be the brute force's answer exactly
    # wherever it applies (every buffer live at a step).
    problem, offsets = case
    if any(b.end < b.start for b in problem.buffers) or not problem.buffers:
        return
    with pytest.MonkeyPatch.context() as patch:  # the sweep (0), step by step (1,000)
        patch.setattr(checker, "_STEPS_PER_BUFFER", steps_per_buffer)
        assert _plainly_valid(problem, offsets) is not brute_force_conflict(problem, offsets)


@pytest.mark.parametrize("steps_per_buffer", [0, 4, 1_000])
@settings(max_examples=400, deadline=None)
@given(case=st.one_of(online_problems(), placed_problems()))
def test_the_checked_size_is_the_checks_verdict_and_the_highest_end(
    case: tuple[Problem, dict[int, int]], steps_per_buffer: int
) -> None:
    # `run_planner` takes a plan's size from the check's own sweep where it can: the same
    # verdict as `check_plan` and the same size as `arena_size`, buffers of 0 bytes included.
    # Both ways of the quick proof: the sweep (0), step by step wherever it applies (1,000).
    problem, offsets = case
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(checker, "_STEPS_PER_BUFFER", steps_per_buffer)
            size = checked_arena_size(problem, offsets)
    except PlanError as error:
        assert _verdict(problem, offsets) == str(error)
    else:
        assert _verdict(problem, offsets) == "valid"
        assert size == arena_size(problem, offsets)


def test_the_quick_proof_leaves_every_other_plan_to_the_full_judge() -> None:
    buffers = (Buffer(0, 0, 1, 16), Buffer(1, 1, 2, 16))
    valid = {0: 0, 1: 16}
    assert _plainly_valid(Problem(buffers), valid)
    assert not _plainly_valid(Problem(buffers), {0: 0, 1: 15})  # one byte shared, from below
    assert not _plainly_valid(Problem(buffers), {0: 15, 1: 0})  # and from above
    assert not _plainly_valid(Problem(buffers, alignment=16), valid)
    assert not _plainly_valid(Problem((buffers[0], buffers[1]._replace(fixed_offset=16))), valid)
    assert not _plainly_valid(Problem(buffers), {0: 0, 1: True})  # not a plain int
    assert not _plainly_valid(Problem(buffers), {0: 0})  # no offset
    assert not _plainly_valid(Problem(buffers), {0: -16, 1: 16})
    assert not _plainly_valid(Problem((buffers[0], Buffer(1, 2, 1, 16))), valid)  # never live
    with pytest.raises(PlanError, match="buffers 0 and 1 share bytes"):
        check_plan(Problem(buffers), {0: 0, 1: 8})
