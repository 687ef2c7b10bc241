"""The pipeline, top to bottom: load → check → lifetimes → arena problems → plans → budget."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from arenalens.analysis.lifetimes import Timeline
from arenalens.analysis.problem import ArenaProblem
from arenalens.ir import Model
from arenalens.planning.problem import Plan
from arenalens.planning.registry import run_planner
from arenalens.runtimes import MemoryBudget, get_runtime
from arenalens.tflite.reader import load_model


@dataclass(frozen=True)
class ArenaResult:
    """One arena planned three ways: by the chosen planner, by the runtime, and with no reuse."""

    arena: ArenaProblem
    plan: Plan  # the chosen planner's plan (the runtime's own when none was chosen)
    runtime_plan: Plan
    naive_plan: Plan

    @property
    def lower_bound(self) -> int:
        """Bytes live at the busiest step of this arena."""
        return self.arena.problem.lower_bound()


@dataclass(frozen=True)
class Analysis:
    """Everything arenalens knows about one model under one runtime and planner."""

    model: Model
    runtime: str
    planner: str
    timeline: Timeline
    arenas: tuple[ArenaResult, ...]
    budget: MemoryBudget
    runtime_budget: MemoryBudget  # what the runtime's own planner needs, for comparison
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def primary(self) -> ArenaResult:
        """The arena users care about first (TFLM head; LiteRT subgraph 0 arena)."""
        return self.arenas[0]


def analyze(
    model: Model | str | os.PathLike[str] | bytes,
    *,
    runtime: str = "tflm",
    planner: str | None = None,
    alignment: int | None = None,
    planner_options: Mapping[str, Any] | None = None,
) -> Analysis:
    """Model (or path/bytes) → Analysis: lifetimes, every arena planned, the memory to declare."""
    if not isinstance(model, Model):
        model = load_model(model)
    rules = get_runtime(runtime)
    timeline = rules.timeline(model)
    arenas = rules.arenas(model, alignment=alignment)
    results = tuple(_plan_arena(arena, planner, dict(planner_options or {})) for arena in arenas)
    budget = rules.budget(model, arenas, [r.plan for r in results])
    # With the runtime's own planner both budgets are the same; skip the second replay.
    same_plans = all(r.plan is r.runtime_plan for r in results)
    runtime_budget = (
        budget if same_plans else rules.budget(model, arenas, [r.runtime_plan for r in results])
    )
    return Analysis(
        model=model,
        runtime=runtime,
        planner=planner or (arenas[0].runtime_planner if arenas else "naive"),
        timeline=timeline,
        arenas=results,
        budget=budget,
        runtime_budget=runtime_budget,
        options=MappingProxyType({"alignment": alignment}),
    )


def _plan_arena(arena: ArenaProblem, planner: str | None, knobs: dict[str, Any]) -> ArenaResult:
    runtime_plan = run_planner(arena.runtime_planner, arena.problem, **arena.runtime_options)
    naive_plan = run_planner("naive", arena.problem)
    if planner is None or planner == arena.runtime_planner:
        plan = runtime_plan
    else:
        plan = run_planner(planner, arena.problem, **knobs)
    return ArenaResult(arena=arena, plan=plan, runtime_plan=runtime_plan, naive_plan=naive_plan)
