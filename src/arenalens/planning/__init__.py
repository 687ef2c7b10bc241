"""Planners: Problem (buffers with lifetimes and sizes) → checked Plan (offsets, arena size)."""

from arenalens.planning.checker import check_plan
from arenalens.planning.problem import Buffer, Overlap, Plan, Problem, align_up, arena_size
from arenalens.planning.registry import (
    PLANNERS,
    PlannerInfo,
    PlannerOutput,
    get_planner,
    planner_names,
    register_planner,
    run_planner,
)

__all__ = [
    "PLANNERS",
    "Buffer",
    "Overlap",
    "Plan",
    "PlannerInfo",
    "PlannerOutput",
    "Problem",
    "align_up",
    "arena_size",
    "check_plan",
    "get_planner",
    "planner_names",
    "register_planner",
    "run_planner",
]
