"""Properties over random DAG models (branches, residuals, several outputs, control flow):
every planner on every arena of every runtime returns a checked plan, no smaller than the lower
bound, the same one twice; analyses are deterministic; reorderers return valid schedules."""

from __future__ import annotations

import random
from types import MappingProxyType

from fuzz.graphs import GraphSpec, random_dag_model
from fuzz.stages import (
    applicable_planners,
    available_runtimes,
    is_search_planner,
    planner_knobs,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arenalens import load_model
from arenalens.pipeline import analyze
from arenalens.planning import Problem, run_planner

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def arena_problems(data: bytes) -> list[Problem]:
    model = load_model(data)
    return [
        result.arena.problem
        for runtime in available_runtimes()
        for result in analyze(model, runtime=runtime).arenas
    ]


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_every_planner_returns_a_checked_deterministic_plan(rng: random.Random) -> None:
    for problem in arena_problems(random_dag_model(rng)):
        for name in applicable_planners(problem):
            # Searches too: they stop on counted work, never on a clock (`arenalens.effort`);
            # the fuzzing knobs' wall-clock safety cap is left off here.
            knobs = {k: v for k, v in planner_knobs(name).items() if k != "time_limit_s"}
            plan = run_planner(name, problem, **knobs)  # checked inside
            assert problem.lower_bound() <= plan.arena_size, name
            again = run_planner(name, problem, **knobs)
            assert dict(plan.offsets) == dict(again.offsets), name


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_search_planners_agree_on_size_when_they_prove_it(rng: random.Random) -> None:
    spec = GraphSpec(max_operators=8, control_flow=False)
    for problem in arena_problems(random_dag_model(rng, spec))[:2]:
        for name in applicable_planners(problem):
            if not is_search_planner(name):
                continue
            first = run_planner(name, problem, effort=0.5)
            second = run_planner(name, problem, effort=0.5)
            assert dict(first.offsets) == dict(second.offsets), name
            if first.proven_optimal and second.proven_optimal:
                assert first.arena_size == second.arena_size, name


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_analysis_is_deterministic(rng: random.Random) -> None:
    data = random_dag_model(rng)
    for runtime in available_runtimes():
        first = analyze(load_model(data), runtime=runtime)
        second = analyze(load_model(data), runtime=runtime)
        assert first.budget == second.budget
        assert [dict(r.plan.offsets) for r in first.arenas] == [
            dict(r.plan.offsets) for r in second.arenas
        ]


def test_random_models_cover_the_shapes_they_claim() -> None:
    opcodes: set[str] = set()
    most_outputs = 0
    for seed in range(60):
        model = load_model(random_dag_model(random.Random(seed), GraphSpec(max_operators=40)))
        opcodes.update(op.opcode for sg in model.subgraphs for op in sg.operators)
        most_outputs = max(most_outputs, len(model.subgraphs[0].outputs))
    assert {"IF", "WHILE", "CALL_ONCE", "SPLIT", "CONCATENATION", "ADD"} <= opcodes
    assert most_outputs >= 2


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_every_reorderer_returns_a_valid_deterministic_schedule(rng: random.Random) -> None:
    from arenalens.reorder.registry import reorderer_names, run_reorderer
    from arenalens.reorder.schedule import Schedule, apply_schedule, schedule_problem

    model = load_model(random_dag_model(rng, GraphSpec(max_operators=14)))
    problem = schedule_problem(model, 0, tensor_bytes=lambda t: t.nbytes)
    for name in reorderer_names():
        # Searches stop on counted work (`arenalens.effort`): the same order twice, always.
        result = run_reorderer(name, problem, effort=0.5)  # checks a topological order
        again = run_reorderer(name, problem, effort=0.5)
        assert result.order == again.order, name
        assert sorted(result.order) == list(range(problem.op_count)), name
        if name in ("exact", "auto"):
            assert result.peak <= result.file_order_peak, name
        # The model rewritten in that order is valid and analyses under both runtimes.
        reordered = apply_schedule(model, Schedule(MappingProxyType({0: result.order})))
        for runtime in available_runtimes():
            analyze(reordered, runtime=runtime)


def test_no_property_runs_on_a_clock() -> None:
    # conftest's profile: a loaded CI machine must not fail a property on hypothesis's 200 ms
    # deadline per example (tests/report/test_tflm_ascii.py did, under two workers on two cores).
    from hypothesis import settings

    assert settings().deadline is None
