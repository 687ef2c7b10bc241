"""Alternative plans for a report: each arena planned by more planners, and the number to
declare with each plan of the primary arena."""

from __future__ import annotations

import pytest

from arenalens import alternatives
from arenalens.alternatives import default_planners, plan_alternatives
from arenalens.errors import UsageError
from arenalens.examples import example_bytes
from arenalens.pipeline import Analysis, analyze
from arenalens.report.build import build_report
from tests.report_helpers import synthetic_model, tensor_only_analysis


def test_every_default_planner_not_in_the_analysis_plans_each_arena() -> None:
    analysis = analyze(example_bytes("kws_ds_cnn"), runtime="tflm")
    found = plan_alternatives(analysis, default_planners("tflm"))
    assert len(found.plans) == len(analysis.arenas)
    names = [plan.planner for plan in found.plans[0]]
    assert "tflm_greedy" not in names and "naive" not in names  # in the analysis already
    assert "litert_arena" not in names  # replicates another runtime
    assert set(names) <= set(default_planners("tflm")) and names
    # The number to declare with each new plan of the primary arena, from the setup replay.
    assert set(found.required_bytes) == set(names)
    assert all(
        required is None or required >= plan.arena_size
        for plan, required in zip(found.plans[0], found.required_bytes.values(), strict=True)
    )


def test_the_report_shows_the_alternatives_numbers() -> None:
    analysis = analyze(example_bytes("kws_ds_cnn"), runtime="tflm")
    found = plan_alternatives(analysis, ["first_fit"])
    views = {
        view.planner: view for view in build_report(analysis, alternatives=found).primary.plans
    }
    assert views["first_fit"].required_bytes == found.required_bytes["first_fit"]
    assert views["tflm_greedy"].required_bytes == analysis.runtime_budget.required_bytes
    assert views["naive"].required_bytes is None


def test_no_replay_for_a_hand_made_analysis_or_past_the_operator_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hand_made = tensor_only_analysis(synthetic_model(2))
    assert plan_alternatives(hand_made, ["greedy_by_size"]).required_bytes == {}
    analysis = analyze(example_bytes("kws_ds_cnn"), runtime="tflm")
    monkeypatch.setattr(alternatives, "PLAN_BUDGET_MAX_OPERATORS", 1)
    found = plan_alternatives(analysis, ["first_fit"])
    assert found.plans[0] and found.required_bytes == {}


def test_unknown_planners_fail_before_any_work() -> None:
    analysis = tensor_only_analysis(synthetic_model(1))
    with pytest.raises(UsageError, match="unknown planner 'nope'"):
        plan_alternatives(analysis, ["greedy_by_size", "nope"])


def _placements(analysis: Analysis, found: alternatives.Alternatives) -> int:
    """The hill climb's counted work over every arena: each of its steps places every buffer."""
    total = 0
    for result, plans in zip(analysis.arenas, found.plans, strict=True):
        buffers = len(result.arena.problem.buffers)
        climbs = [plan for plan in plans if plan.planner == "hillclimb"]
        total += sum(int(plan.stats["iterations"]) * buffers for plan in climbs)
    return total


def test_a_report_searches_with_one_budget_however_many_arenas() -> None:
    """Fuzz seed 14, input 1891 (hostile:shared_tables): 500 subgraph entries sharing one table
    give LiteRT 1,000 arenas, and the hill climb searched each at its full effort: 11,000,000
    placements, 89 s of `report --runtime litert`. The report's one budget (the planner's own
    effort, split by the arenas' buffers) bounds it: at most one arena's worth of placements."""
    from fuzz.hostile import shared_subgraphs_model

    from arenalens.effort import HILLCLIMB_PLACEMENTS, steps

    analysis = analyze(shared_subgraphs_model(500, 10), runtime="litert")
    assert len(analysis.arenas) >= 500
    found = plan_alternatives(analysis, ["hillclimb"], plan_budgets=False)
    assert _placements(analysis, found) <= steps(2.0, HILLCLIMB_PLACEMENTS)


def test_a_model_of_one_arena_is_searched_as_before() -> None:
    """One arena takes the whole budget: the plan a report shows is the planner's own, at its
    default effort (every TFLM model: the golden reports keep their plans)."""
    from arenalens.planning.registry import run_planner

    analysis = analyze(example_bytes("kws_ds_cnn"), runtime="tflm")
    found = plan_alternatives(analysis, ["hillclimb"], plan_budgets=False)
    alone = run_planner("hillclimb", analysis.arenas[0].arena.problem)
    assert found.plans[0][0].offsets == alone.offsets
    assert found.plans[0][0].stats["iterations"] == alone.stats["iterations"]
