"""tflm_greedy and tflm_linear: hand-checked tables from TFLM's tests and docs, a literal replay of
GreedyMemoryPlanner's linked-list walk as a differential oracle, and the speed bound."""

from __future__ import annotations

import random

import pytest

from arenalens.errors import PlanError
from arenalens.planning import Buffer, Problem, run_planner
from arenalens.planning.tflm_greedy import (
    _place_by_steps,
    _place_with_intervals,
    greedy_processing_order,
)
from tests.hang_guard import no_hang


def problem_of(rows: list[tuple[int, int, int]], **fixed: int) -> Problem:
    """[(size, first, last)] → Problem with ids = row positions; fixed={'b3': 48} pins buffer 3."""
    pinned = {int(key[1:]): value for key, value in fixed.items()}
    return Problem(
        tuple(
            Buffer(i, first, last, size, pinned.get(i))
            for i, (size, first, last) in enumerate(rows)
        )
    )


def reference_greedy(problem: Problem) -> dict[int, int]:
    """GreedyMemoryPlanner as TFLM writes it: bubble sort, then walk the whole offset list."""
    buffers = sorted(problem.buffers, key=lambda b: b.id)
    offline = [b for b in buffers if b.fixed_offset is not None]
    online = list(reversed([b for b in buffers if b.fixed_offset is None]))
    swapped = True
    while swapped:  # ReverseSortInPlace: swap only when the left size is strictly smaller
        swapped = False
        for i in range(1, len(online)):
            if online[i - 1].size < online[i].size:
                online[i - 1], online[i] = online[i], online[i - 1]
                swapped = True
    placed: list[tuple[int, Buffer]] = []  # kept sorted by offset, bisect-right insertion
    offsets: dict[int, int] = {}
    for buffer in offline + online:
        if buffer.fixed_offset is not None:
            offset = buffer.fixed_offset
        else:
            offset = 0
            for other_offset, other in placed:
                if other.start > buffer.end or buffer.start > other.end:
                    continue
                if other_offset - offset >= buffer.size:
                    break
                offset = max(offset, other_offset + other.size)
        offsets[buffer.id] = offset
        position = sum(1 for other_offset, _ in placed if other_offset <= offset)
        placed.insert(position, (offset, buffer))
    return offsets


def test_greedy_medium_from_tflm_unit_tests() -> None:
    # greedy_memory_planner_test.cc TestGreedyMedium.
    problem = problem_of([(10, 0, 1), (20, 1, 2), (30, 2, 3), (40, 3, 4), (50, 0, 1)])
    plan = run_planner("tflm_greedy", problem)
    assert [plan.offsets[i] for i in range(5)] == [50, 70, 40, 0, 0]
    assert plan.arena_size == 90


def test_hello_world_float_plan() -> None:
    problem = problem_of([(16, 0, 1), (64, 1, 2), (64, 2, 3), (16, 3, 3)])
    assert [b.id for b in greedy_processing_order(problem.buffers)] == [2, 1, 3, 0]
    plan = run_planner("tflm_greedy", problem)
    assert [plan.offsets[i] for i in range(4)] == [0, 64, 0, 64]
    assert plan.arena_size == 128


def test_equal_sizes_place_the_higher_index_first() -> None:
    # Two equal buffers live together: index 1 is processed first and takes offset 0.
    plan = run_planner("tflm_greedy", problem_of([(32, 0, 1), (32, 0, 1)]))
    assert plan.offsets == {0: 32, 1: 0}


def test_first_fit_takes_the_lowest_gap_not_the_best() -> None:
    # Placed: A [0,100) and B [150,200) at step 0 (a 50 B gap), C [250,1250) big; a 40 B buffer
    # goes into the first gap that fits, at 100, not the tighter one.
    rows = [(100, 0, 0), (50, 0, 0), (1000, 0, 0), (40, 0, 0), (30, 1, 1)]
    problem = problem_of(rows, b0=0, b1=150, b2=250)
    plan = run_planner("tflm_greedy", problem)
    assert plan.offsets[3] == 100
    assert plan.offsets[4] == 0  # not live with anything placed: offset 0


def test_offline_buffers_are_placed_first_and_may_misalign_the_rest() -> None:
    # docs/runtime-rules.md §T9: offset 8 with a 48-byte buffer puts the next online buffer at
    # 56; head 148.
    problem = problem_of([(48, 0, 2), (92, 1, 2)], b0=8)
    plan = run_planner("tflm_greedy", problem)
    assert plan.offsets == {0: 8, 1: 56}
    assert plan.arena_size == 148


def test_offline_buffers_may_overlap_each_other() -> None:
    problem = problem_of([(64, 0, 3), (64, 0, 3), (16, 1, 1)], b0=0, b1=0)
    plan = run_planner("tflm_greedy", problem)
    assert plan.offsets == {0: 0, 1: 0, 2: 64}


@pytest.mark.parametrize("seed", range(40))
def test_greedy_matches_the_literal_replay(seed: int) -> None:
    rng = random.Random(seed)
    count = rng.randint(1, 60)
    rows = []
    for _ in range(count):
        first = rng.randint(-1, 20)
        rows.append(
            (
                rng.choice([16, 32, 48, 64, 16 * rng.randint(1, 40)]),
                first,
                first + rng.randint(0, 6),
            )
        )
    fixed = {f"b{i}": 16 * rng.randint(0, 20) for i in range(count) if rng.random() < 0.1}
    problem = problem_of(rows, **fixed)
    assert dict(run_planner("tflm_greedy", problem).offsets) == reference_greedy(problem)


def random_buffers(rng: random.Random, count: int, *, fixed_share: float) -> tuple[Buffer, ...]:
    """Buffers with short and long lifetimes, some live at no step (end before start), sizes of
    0 and off any alignment, a share of them fixed."""
    buffers = []
    for index in range(count):
        first = rng.randint(-1, 30)
        last = first + rng.choice([rng.randint(0, 4), rng.randint(0, 40), -rng.randint(1, 3)])
        size = rng.choice([0, 16, 48, 16 * rng.randint(1, 40), rng.randint(1, 100)])
        fixed = 16 * rng.randint(0, 20) if rng.random() < fixed_share else None
        buffers.append(Buffer(index, first, last, size, fixed))
    return tuple(buffers)


@pytest.mark.parametrize("seed", range(40))
def test_step_lists_place_as_the_interval_index(seed: int) -> None:
    # Small problems place through per-step lists; long lifetimes through IntervalIndex. Both on
    # the same problems (`random_buffers`), alignments 1 and 16.
    rng = random.Random(7_000 + seed)
    buffers = random_buffers(rng, rng.randint(1, 80), fixed_share=0.1)
    problem = Problem(buffers, alignment=rng.choice([1, 1, 16]))
    assert _place_by_steps(problem, area_per_buffer=10**9) == _place_with_intervals(problem)
    assert _place_by_steps(problem, area_per_buffer=0) in (None, _place_with_intervals(problem))


def test_greedy_plans_a_20000_operator_chain_quickly() -> None:
    # A chain: operator k writes buffer k, read by operator k + 1 (TFLM steps k+1 .. k+2).
    count = 20_000
    rng = random.Random(0)
    buffers = tuple(Buffer(i, i + 1, i + 2, 16 * rng.randint(1, 64)) for i in range(count))
    problem = Problem(buffers)
    with no_hang(2, "tflm_greedy on 20,000 buffers"):
        plan = run_planner("tflm_greedy", problem)
    assert problem.lower_bound() <= plan.arena_size <= 4 * 16 * 64


def test_linear_lays_buffers_end_to_end_in_id_order() -> None:
    plan = run_planner("tflm_linear", problem_of([(16, 0, 1), (64, 1, 2), (64, 2, 3), (16, 3, 3)]))
    assert [plan.offsets[i] for i in range(4)] == [0, 16, 80, 144]
    assert plan.arena_size == 160


def test_linear_refuses_offline_plans_like_tflm() -> None:
    with pytest.raises(PlanError, match="offline"):
        run_planner("tflm_linear", problem_of([(16, 0, 1)], b0=0))


@pytest.mark.parametrize("seed", range(30))
def test_live_bytes_is_the_sum_of_live_sizes_at_each_step(seed: int) -> None:
    # Problem.live_bytes sums sorted size changes in C; here, step by step: the bytes of the
    # buffers live from each step on, at every step where a sized buffer starts or is gone.
    rng = random.Random(9_000 + seed)
    buffers = random_buffers(rng, rng.randint(0, 40), fixed_share=0.0)
    problem = Problem(buffers)
    sized = [b for b in buffers if b.size]
    changes = sorted({b.start for b in sized} | {b.end + 1 for b in sized})
    expected = [
        (
            step,
            sum(b.size for b in sized if b.start <= step)
            - sum(b.size for b in sized if b.end + 1 <= step),
        )
        for step in changes
    ]
    assert problem.live_bytes() == expected
    assert problem.disjoint_lower_bound() == max((total for _, total in expected), default=0)
