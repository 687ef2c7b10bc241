"""Best of a portfolio: every cheap planner, then CP-SAT if none reaches the lower bound.

Runs the heuristic portfolio (greedy by size, by breadth, first fit, hill climb, the runtime
replicas), stops as soon as one reaches the sound lower bound (optimal by proof), and otherwise
hands the smallest plan to the `optimal` planner as a warm start when OR-Tools is installed. Every
candidate is checked by `run_planner`; the smallest wins (ties: the earlier one).
"""

from __future__ import annotations

from arenalens.effort import cap_settings, deadline
from arenalens.errors import RuntimeUnavailableError
from arenalens.planning.bounds import sound_lower_bound
from arenalens.planning.optimal import EXACT_INSTALL
from arenalens.planning.portfolio import warm_start
from arenalens.planning.problem import Problem
from arenalens.planning.registry import PlannerOutput, register_planner, run_planner
from arenalens.units import format_bytes_exact


@register_planner(
    "best",
    description="portfolio of every heuristic, then CP-SAT from the winner; smallest checked plan",
    source="portfolio of the registered planners",
    in_portfolio=False,
)
def best(
    problem: Problem, *, effort: float = 10.0, time_limit_s: float | None = None, seed: int = 0
) -> PlannerOutput:
    """Problem → the smallest checked plan of the portfolio (and of CP-SAT, if available); the
    portfolio gets a quarter of the effort (two units at most), CP-SAT the rest."""
    end = deadline(time_limit_s)
    bound = sound_lower_bound(problem)
    winner, search_effort = warm_start(
        problem, effort=effort, time_limit_s=time_limit_s, seed=seed, stop_at=bound
    )
    notes = [f"best heuristic: {winner.planner} ({format_bytes_exact(winner.arena_size)})"]
    proven = winner.arena_size <= bound
    final_bound = bound
    missing_extra = ""
    if not proven:
        try:
            exact = run_planner(
                "optimal",
                problem,
                effort=search_effort,
                seed=seed,
                hint=winner.offsets,
                **cap_settings(end),
            )
        except RuntimeUnavailableError as error:
            notes.append(f"no exact search: {error}")
            missing_extra = EXACT_INSTALL  # the heuristic's plan is above the bound
        else:
            notes.extend(exact.notes)
            final_bound = exact.bound if exact.bound is not None else bound
            proven = exact.proven_optimal
            if exact.arena_size < winner.arena_size:
                winner = exact
    return PlannerOutput(
        offsets=winner.offsets,
        proven_optimal=proven or winner.arena_size <= final_bound,
        bound=min(final_bound, winner.arena_size),
        notes=(f"winner: {winner.planner}", *notes),
        missing_extra=missing_extra,
    )
