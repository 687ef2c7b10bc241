"""render_tflm_memory_plan reproduces GreedyMemoryPlanner::PrintMemoryPlan's text."""

from __future__ import annotations

from types import MappingProxyType

from hypothesis import given
from hypothesis import strategies as st

from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.planning import Buffer, Problem, run_planner
from arenalens.planning.problem import Plan
from arenalens.report.ascii import ordinal_character, render_tflm_memory_plan

HELLO_WORLD = """\
0 (id=0): size=16, offset=0, first_used=0 last_used=1
1 (id=1): size=64, offset=64, first_used=1 last_used=2
2 (id=2): size=64, offset=0, first_used=2 last_used=3
* (id=3): size=16, offset=64, first_used=3 last_used=3
   0: 0000000000...................................................................... (1k)
   1: 0000000000..............................1111111111111111111111111111111111111111 (1k)
   2: 22222222222222222222222222222222222222221111111111111111111111111111111111111111 (1k)
   3: 2222222222222222222222222222222222222222**********.............................. (1k)
"""


def arena_of(rows: list[tuple[int, int, int]]) -> ArenaProblem:
    problem = Problem(
        tuple(Buffer(i, first, last, size) for i, (size, first, last) in enumerate(rows))
    )
    return ArenaProblem("head", problem, MappingProxyType({}), (), "tflm_greedy")


def test_hello_world_printout_is_byte_exact() -> None:
    arena = arena_of([(16, 0, 1), (64, 1, 2), (64, 2, 3), (16, 3, 3)])
    plan = run_planner("tflm_greedy", arena.problem)
    assert render_tflm_memory_plan(arena, plan) == HELLO_WORLD


def test_hello_world_printout_from_the_real_model(shared_path) -> None:  # type: ignore[no-untyped-def]
    from arenalens.pipeline import analyze

    analysis = analyze(shared_path / "tflite_micro__hello_world_float.tflite")
    primary = analysis.primary
    assert render_tflm_memory_plan(primary.arena, primary.plan) == HELLO_WORLD


def test_ordinal_characters_cycle_through_62() -> None:
    assert [ordinal_character(i) for i in (0, 9, 10, 35, 36, 61, 62, 71)] == list("09azAZ09")


def test_collisions_show_exclamation_marks_and_minus_one_rules() -> None:
    # Two buffers forced onto the same bytes (as an offline plan may); one with last = -1.
    arena = arena_of([(40, 0, 2), (40, 1, 2), (16, -1, 1), (16, 0, -1)])
    plan = Plan("manual", MappingProxyType({0: 0, 1: 0, 2: 40, 3: 56}), 80)
    text = render_tflm_memory_plan(arena, plan)
    lines = text.splitlines()
    assert lines[2] == "2 (id=2): size=16, offset=40, first_used=-1 last_used=1"
    assert lines[3] == "3 (id=3): size=16, offset=56, first_used=0 last_used=-1"
    # scale 80: buffer 0 covers columns 0-39, buffer 2 columns 40-55 from step 0 (first = -1).
    assert lines[4] == "   0: " + "0" * 40 + "2" * 16 + "." * 24 + " (1k)"
    assert lines[5] == "   1: " + "!" * 40 + "2" * 16 + "." * 24 + " (1k)"
    assert lines[6] == "   2: " + "!" * 40 + "." * 40 + " (1k)"
    assert len(lines) == 7


def test_kilobytes_round_up_and_scale_shrinks_large_arenas() -> None:
    arena = arena_of([(3000, 0, 1), (1000, 1, 1)])
    plan = run_planner("tflm_greedy", arena.problem)
    text = render_tflm_memory_plan(arena, plan)
    assert text.splitlines()[-1] == "   1: " + "0" * 60 + "*" * 20 + " (4k)"


def test_offsets_beyond_32_bit_arithmetic_get_a_note() -> None:
    arena = arena_of([(64, 0, 1), (64, 0, 1)])
    plan = Plan("manual", MappingProxyType({0: 0, 1: 30_000_000}), 30_000_064)
    text = render_tflm_memory_plan(arena, plan)
    assert text.splitlines()[-1].startswith("note: offsets above 26,843,545 bytes overflow")


def per_step_bars(arena: ArenaProblem, plan: Plan) -> list[str]:
    """The step lines computed the plain way: every buffer tested at every step."""
    rows = [(b.size, plan.offsets[b.id], b.start, b.end) for b in arena.problem.buffers]
    scale = max([80, *(offset + size for size, offset, _, _ in rows)])
    lines = []
    for step in range(max(last for _, _, _, last in rows) + 1):
        bar = ["."] * 80
        used = 0
        for index, (size, offset, first, last) in enumerate(rows):
            if first <= step <= last:
                used += size
                for column in range(offset * 80 // scale, (offset + size) * 80 // scale):
                    character = "*" if first == last else ordinal_character(index)
                    bar[column] = character if bar[column] == "." else "!"
        lines.append(f"{step:4d}: {''.join(bar)} ({(used + 1023) // 1024}k)")
    return lines


@given(
    st.lists(
        st.tuples(st.integers(1, 4096), st.integers(0, 30), st.integers(0, 30)),
        min_size=1,
        max_size=40,
    )
)
def test_step_lines_match_the_per_step_walk(rows: list[tuple[int, int, int]]) -> None:
    arena = arena_of([(size, min(a, b), max(a, b)) for size, a, b in rows])
    plan = run_planner("tflm_greedy", arena.problem)
    lines = render_tflm_memory_plan(arena, plan).splitlines()
    assert lines[len(rows) :] == per_step_bars(arena, plan)


def test_a_million_steps_print_each_unchanged_stretch_once() -> None:
    # Control flow run thousands of times gives a million steps; the printout stays short.
    arena = arena_of([(64, 0, 999_999), (32, 10, 500_000), (16, 999_999, 999_999)])
    plan = run_planner("tflm_greedy", arena.problem)
    lines = render_tflm_memory_plan(arena, plan).splitlines()
    assert len(lines) < 20
    assert "  11-500000: as step 10" in lines
    assert lines[-1].startswith("999999: ")
