"""planning.litert_arena: LiteRT SimpleMemoryArena placement, hand-checked cases and properties."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arenalens.planning import Buffer, Problem, run_planner
from arenalens.planning.litert_arena import NEVER_FREED, default_litert_order
from arenalens.planning.problem import align_up
from arenalens.planning.registry import get_planner
from tests.hang_guard import no_hang


def plan(problem: Problem) -> dict[int, int]:
    """Run the registered planner (which also runs the independent checker)."""
    return dict(run_planner("litert_arena", problem).offsets)


def test_registered_as_the_litert_replica() -> None:
    info = get_planner("litert_arena")
    assert info.replicates_runtime == "litert"
    assert "simple_memory_arena.cc" in info.source


def test_hello_world_float_worked_example() -> None:
    # docs/runtime-rules.md §L6: t0 (input, 4 B, whole) → 0; t7 (64 B, [0, 1]) → 64;
    # t8 (64 B, [1, 2]) → 128; t9 (output, 4 B, [2, INF]) into the gap below t8, at 64.
    # High-water mark 192.
    problem = Problem(
        buffers=(
            Buffer(0, 0, NEVER_FREED, 4),
            Buffer(7, 0, 1, 64),
            Buffer(8, 1, 2, 64),
            Buffer(9, 2, NEVER_FREED, 4),
        ),
        alignment=64,
        order=(0, 7, 8, 9),
    )
    result = run_planner("litert_arena", problem)
    assert dict(result.offsets) == {0: 0, 7: 64, 8: 128, 9: 64}
    assert result.arena_size == 192


def test_default_order_is_litert_comparator() -> None:
    buffers = (
        Buffer(5, 0, NEVER_FREED, 4),  # whole: first, by id
        Buffer(2, 0, NEVER_FREED, 8),
        Buffer(3, 1, 2, 64),
        Buffer(4, 0, 1, 64),  # same size as 3, earlier start first
        Buffer(1, 2, 3, 128),
    )
    assert default_litert_order(buffers) == (2, 5, 1, 4, 3)
    hello = Problem(
        (
            Buffer(0, 0, NEVER_FREED, 4),
            Buffer(7, 0, 1, 64),
            Buffer(8, 1, 2, 64),
            Buffer(9, 2, NEVER_FREED, 4),
        ),
        alignment=64,
    )
    assert plan(hello) == {0: 0, 7: 64, 8: 128, 9: 64}


def test_partial_order_is_completed_by_the_comparator() -> None:
    buffers = (Buffer(1, 0, 1, 64), Buffer(2, 0, 1, 128), Buffer(3, 0, 1, 32))
    partial = Problem(buffers, alignment=64, order=(3, 99))  # 99: not in the problem
    assert plan(partial) == {3: 0, 2: 64, 1: 192}


def test_best_fit_measured_from_unaligned_cursor() -> None:
    # Conflicting entries for D: A [0, 10), B [128, 192), C [256, 320). Gaps for 50 bytes:
    # after A at 64 (aligned gap 64, stored as 128 - 10 = 118: the quirk), then after B at 192
    # (gap 64 < 118, so it wins). A correct best fit would keep 64 (64 is not < 64).
    problem = Problem(
        buffers=(
            Buffer(1, 0, 5, 10),  # A
            Buffer(2, 0, 1, 64),  # filler X, dead before D
            Buffer(3, 0, 5, 64),  # B
            Buffer(4, 0, 1, 64),  # filler Y
            Buffer(5, 0, 5, 64),  # C
            Buffer(6, 3, 3, 50),  # D
        ),
        alignment=64,
        order=(1, 2, 3, 4, 5, 6),
    )
    offsets = plan(problem)
    assert (offsets[1], offsets[3], offsets[5]) == (0, 128, 256)
    assert offsets[6] == 192


def test_non_conflicting_buffers_are_transparent() -> None:
    problem = Problem(
        buffers=(Buffer(1, 0, 1, 100), Buffer(2, 2, 3, 100), Buffer(3, 0, 3, 10)),
        alignment=64,
        order=(1, 2, 3),
    )
    assert plan(problem) == {1: 0, 2: 0, 3: 128}


def test_equal_offsets_keep_placement_order_and_gaps_still_found() -> None:
    # Two dead-to-each-other buffers share offset 0 (upper_bound insertion puts the second after
    # the first); a later buffer conflicting with both sees one occupied range.
    problem = Problem(
        buffers=(Buffer(1, 0, 1, 64), Buffer(2, 2, 3, 32), Buffer(3, 0, 3, 16)),
        alignment=64,
        order=(1, 2, 3),
    )
    assert plan(problem) == {1: 0, 2: 0, 3: 64}


def test_zero_size_buffers_get_offset_zero_and_take_no_space() -> None:
    problem = Problem(
        buffers=(Buffer(1, 0, 3, 0), Buffer(2, 0, 3, 8), Buffer(3, 0, 3, 8)),
        alignment=64,
        order=(1, 2, 3),
    )
    result = run_planner("litert_arena", problem)
    assert dict(result.offsets) == {1: 0, 2: 0, 3: 64}
    assert result.arena_size == 72  # sizes are not padded


def test_unpadded_last_buffer_can_beat_and_lose_to_naive() -> None:
    # LiteRT keeps the runtime's order: 70 bytes then 60 → 0 and 128, 188 bytes. The naive
    # planner in id order (60 first) needs only 64 + 70 = 134; in LiteRT's order it needs 188.
    problem = Problem(buffers=(Buffer(1, 0, 1, 60), Buffer(2, 0, 1, 70)), alignment=64)
    assert run_planner("litert_arena", problem).arena_size == 188
    assert problem.naive_size() == 134


def test_twenty_thousand_operator_chain_plans_fast() -> None:
    count = 20_000
    buffers = [Buffer(0, 0, NEVER_FREED, 256)]
    buffers += [Buffer(i, i - 1, i, 256 + 64 * (i % 5)) for i in range(1, count)]
    buffers.append(Buffer(count, count - 1, NEVER_FREED, 256))
    problem = Problem(tuple(buffers), alignment=64)
    with no_hang(2, "litert_arena"):
        result = run_planner("litert_arena", problem)
    assert result.arena_size <= 3 * 512


_STEPS = st.integers(min_value=0, max_value=12)


@st.composite
def problems(draw: st.DrawFn) -> Problem:
    """Random arenas: lifetimes over a few steps (some never freed), sizes including zero."""
    count = draw(st.integers(min_value=0, max_value=25))
    buffers = []
    for buffer_id in range(count):
        start = draw(_STEPS)
        end = draw(st.one_of(st.integers(min_value=start, max_value=12), st.just(NEVER_FREED)))
        size = draw(st.one_of(st.just(0), st.integers(min_value=1, max_value=300)))
        buffers.append(Buffer(buffer_id, start, end, size))
    alignment = draw(st.sampled_from((1, 4, 16, 64)))
    ordered = draw(st.permutations(range(count))) if draw(st.booleans()) else ()
    return Problem(tuple(buffers), alignment=alignment, order=tuple(ordered))


@settings(max_examples=200, deadline=None)
@given(problems())
def test_property_valid_bounded_deterministic(problem: Problem) -> None:
    first = run_planner("litert_arena", problem)  # run_planner checks overlaps and alignment
    second = run_planner("litert_arena", problem)
    assert dict(first.offsets) == dict(second.offsets)
    assert problem.lower_bound() <= first.arena_size
    # Whatever the order, nothing is placed above every conflicting buffer, padded.
    padded = sum(align_up(b.size, problem.alignment) for b in problem.buffers)
    assert first.arena_size <= padded


@settings(max_examples=200, deadline=None)
@given(problems())
def test_property_never_worse_than_naive_in_the_same_order(problem: Problem) -> None:
    # Placing in id order, each buffer starts no higher than the naive planner's cursor, so
    # lower_bound <= arena <= naive (same alignment, same order).
    in_id_order = Problem(
        problem.buffers, alignment=problem.alignment, order=tuple(b.id for b in problem.buffers)
    )
    size = run_planner("litert_arena", in_id_order).arena_size
    assert in_id_order.lower_bound() <= size <= in_id_order.naive_size()
    assert size <= run_planner("naive", in_id_order).arena_size
