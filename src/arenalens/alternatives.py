"""Alternative plans: Analysis + planner names → every arena planned by each, and the number to
declare with each plan of the primary arena.

A report lets the user switch between planners; this is where those plans are made, so `report/`
only lays out frozen results. By default the alternatives are every registered planner cheap
enough for the `best` portfolio that does not replicate another runtime (the runtime's own plan,
the chosen plan and `naive`, the no-reuse baseline, are in the analysis already). With each plan
of the primary arena, the runtime's setup is replayed (TFLM: the plan as an offline plan) to give
the number to declare with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from types import MappingProxyType

from arenalens.errors import ArenalensError
from arenalens.pipeline import Analysis
from arenalens.planning.problem import Plan
from arenalens.planning.registry import PLANNERS, get_planner, planner_names, run_planner
from arenalens.records import record
from arenalens.runtimes import MemoryBudget, get_runtime
from arenalens.runtimes.sections import ArenaSection

# Above this many operators the number to declare is replayed only for the runtime's and the
# chosen plan (each replay of TFLM's setup costs about 0.5 ms per operator); the other views fall
# back to their arena plus what the runtime needs outside it.
PLAN_BUDGET_MAX_OPERATORS = 2000


@record()
class Alternatives:
    """More plans of an analysis's arenas, and the number to declare with each primary one."""

    plans: tuple[tuple[Plan, ...], ...] = ()  # per arena, in arena order
    # Planner → the number to declare with its plan of the primary arena; None when the runtime's
    # setup cannot take that plan. Planners not listed: not computed.
    required_bytes: Mapping[str, int | None] = field(default_factory=lambda: MappingProxyType({}))
    # Planner → where every byte of that number goes (the runtime's `MemoryBudget.sections`),
    # for the planners whose number was computed.
    sections: Mapping[str, tuple[ArenaSection, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )


def default_planners(runtime: str) -> tuple[str, ...]:
    """Planners a report shows by default: cheap ones (the `best` portfolio) that do not
    replicate another runtime, sorted by name; the runtime's own plan and naive come anyway."""
    chosen = []
    for name in planner_names():
        info = PLANNERS[name]
        if not info.in_portfolio:
            continue
        if info.replicates_runtime not in (None, runtime):
            continue
        chosen.append(name)
    return tuple(chosen)


def plan_alternatives(
    analysis: Analysis, planners: Sequence[str], *, plan_budgets: bool = True
) -> Alternatives:
    """Each arena of analysis planned by every planner not already in it (arena order); with
    `plan_budgets`, the number to declare with each new plan of the primary arena."""
    for name in planners:
        get_planner(name)  # unknown names fail before any work, listing the known ones
    plans = []
    shares = _effort_shares(analysis)
    for arena, share in zip(analysis.arenas, shares, strict=True):
        done = {arena.plan.planner, arena.runtime_plan.planner, arena.naive_plan.planner}
        extra = []
        for name in dict.fromkeys(planners):  # keep order, drop repeats
            if name in done:
                continue
            settings = dict(
                arena.arena.runtime_options if name == arena.arena.runtime_planner else {}
            )
            effort = get_planner(name).settings.default_effort
            if effort is not None and share < 1.0:
                settings["effort"] = effort * share
            extra.append(run_planner(name, arena.arena.problem, **settings))
        plans.append(tuple(extra))
    required, sections = _required_bytes(analysis, plans[0]) if plan_budgets and plans else ({}, {})
    return Alternatives(tuple(plans), MappingProxyType(required), MappingProxyType(sections))


def _effort_shares(analysis: Analysis) -> list[float]:
    """Each arena's share of a report's one search budget: its buffers over all arenas' (each
    step of a search places every buffer of its arena). A searching planner runs once per arena,
    and at its full effort on each, a model of 500 subgraphs (LiteRT: 1,000 arenas; fuzz seed 14,
    input 1891) searched for 89 s; split, the whole report searches as long as one arena does,
    and a model of one arena (every TFLM model, most LiteRT ones) as before."""
    sizes = [len(result.arena.problem.buffers) for result in analysis.arenas]
    total = sum(sizes)
    return [1.0 if total == size else size / total for size in sizes]


def _required_bytes(
    analysis: Analysis, plans: Sequence[Plan]
) -> tuple[dict[str, int | None], dict[str, tuple[ArenaSection, ...]]]:
    """Planner → the number to declare with its plan of the primary arena (the other arenas keep
    their chosen plans), and its sections; plans with the same offsets share one replay."""
    if not analysis.runtime_budget.device:
        return {}, {}  # not made by a runtime's rules (a hand-made analysis): nothing to replay
    if analysis.model.operator_count > PLAN_BUDGET_MAX_OPERATORS:
        return {}, {}
    rules = get_runtime(analysis.runtime)
    first = analysis.arenas[0]
    known = {first.runtime_plan.planner, first.plan.planner}
    problems = [result.arena for result in analysis.arenas]
    rest = [result.plan for result in analysis.arenas[1:]]
    by_offsets: dict[tuple[tuple[int, int], ...], MemoryBudget | None] = {}
    required: dict[str, int | None] = {}
    sections: dict[str, tuple[ArenaSection, ...]] = {}
    for plan in plans:
        if plan.planner in known or plan.planner in required:
            continue
        key = tuple(sorted(plan.offsets.items()))
        if key not in by_offsets:
            try:
                by_offsets[key] = rules.budget(
                    analysis.model, problems, [plan, *rest], analysis.runtime_build
                )
            except ArenalensError:
                by_offsets[key] = None  # a plan the runtime's setup cannot take
        budget = by_offsets[key]
        required[plan.planner] = None if budget is None else budget.required_bytes
        if budget is not None:
            sections[plan.planner] = budget.sections
    return required, sections
