"""Heuristic portfolio, shared by the `optimal` and `best` planners.

The portfolio is every registered planner marked `in_portfolio` (cheap, heuristic or runtime
replica), run through `run_planner` so each result is checked. Every member is offered `seed`,
the portfolio's whole effort (only the hill climb searches) and, when a user capped the wall
clock, the seconds left; the registry passes them to the members that take them.
"""

from __future__ import annotations

from arenalens.effort import cap_settings, deadline
from arenalens.errors import ArenalensError
from arenalens.planning.problem import Plan, Problem
from arenalens.planning.registry import get_planner, planner_names, run_planner

# Heuristics run first and stop the portfolio early when one reaches the bound.
_PREFERRED = ("greedy_by_size", "greedy_by_breadth", "first_fit")


def portfolio_names() -> list[str]:
    """Planners in the portfolio, cheap and deterministic ones first, then by name."""
    names = [n for n in planner_names() if get_planner(n).in_portfolio]
    return sorted(names, key=lambda n: (_PREFERRED.index(n) if n in _PREFERRED else 99, n))


def run_portfolio(
    problem: Problem,
    *,
    seed: int = 0,
    effort: float = 2.0,
    time_limit_s: float | None = None,
    stop_at: int | None = None,
) -> list[Plan]:
    """Problem → checked plans of every portfolio planner (stops early at `stop_at` bytes)."""
    plans: list[Plan] = []
    end = deadline(time_limit_s)
    for name in portfolio_names():
        try:
            plans.append(run_planner(name, problem, seed=seed, effort=effort, **cap_settings(end)))
        except ArenalensError:
            # A replica may refuse a problem outside its runtime's rules; the others still run.
            continue
        if stop_at is not None and plans[-1].arena_size <= stop_at:
            break
    return plans


def smallest(plans: list[Plan]) -> Plan:
    """The plan with the smallest arena; ties go to the earlier plan."""
    return min(enumerate(plans), key=lambda item: (item[1].arena_size, item[0]))[1]


def warm_start(
    problem: Problem, *, effort: float, time_limit_s: float | None, seed: int, stop_at: int
) -> tuple[Plan, float]:
    """An exact search's warm start: the portfolio on a quarter of the search's effort (two units
    at most) and of its time cap, stopping at `stop_at` bytes → its smallest plan, and the effort
    left for the search."""
    share = min(2.0, effort / 4)
    plans = run_portfolio(
        problem,
        seed=seed,
        effort=share,
        time_limit_s=None if time_limit_s is None else time_limit_s / 4,
        stop_at=stop_at,
    )
    return smallest(plans), effort - share
