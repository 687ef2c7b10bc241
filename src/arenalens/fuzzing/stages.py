"""The stages every fuzz input runs through, in pipeline order; adding a stage is one line.

A stage is a name and a function of the shared state dict: it reads what earlier stages stored
("data", "model", "timelines", "problems" ...) and stores its own results. A stage may raise
`ModelError` (the input is refused, which is fine); anything else is a bug the harness counts.
Knobs keep each stage bounded on hostile input (planner time limits), not smaller than real use.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from types import MappingProxyType
from typing import Any

from arenalens.analysis.lifetimes import litert_timeline, tflm_planned, tflm_timeline
from arenalens.ir import Model
from arenalens.pipeline import analyze
from arenalens.planning.problem import Buffer, Problem
from arenalens.planning.registry import get_planner, planner_names, run_planner
from arenalens.runtimes import RUNTIME_MODULES
from arenalens.tflite.reader import load_model

State = dict[str, Any]

# Knobs for planners that search: small budgets, so one input stays well inside its time limit.
PLANNER_KNOBS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "optimal": {"time_limit_s": 0.5, "workers": 1},
        "best": {"time_limit_s": 0.5},
        "hillclimb": {"max_iterations": 300, "time_limit_s": 0.5},
    }
)

# Planners that refuse offline-planned (fixed) buffers on purpose, as their runtime does
# (PlanError "cannot honour fixed offsets"): not run on problems that have any.
WITHOUT_FIXED_OFFSETS = frozenset({"tflm_linear", "litert_arena"})


@dataclass(frozen=True, slots=True)
class Stage:
    """One pipeline stage under test."""

    name: str
    run: Callable[[State], None]


def load(state: State) -> None:
    """Bytes → checked Model (reader + model checker)."""
    state["model"] = load_model(state["data"])


def lifetimes(state: State) -> None:
    """Model → TFLM and LiteRT timelines."""
    model: Model = state["model"]
    state["timelines"] = (tflm_timeline(model), litert_timeline(model))


@cache
def available_runtimes() -> tuple[str, ...]:
    """Runtime rule sets present in this build (each lands as its own module)."""
    found = []
    for name, module in RUNTIME_MODULES.items():
        try:
            import_module(module)
        except ModuleNotFoundError:
            continue
        found.append(name)
    return tuple(found)


def runtimes(state: State) -> None:
    """Model → each runtime's analysis: its prepare rules, arenas, runtime planner and budget."""
    state["analyses"] = tuple(
        analyze(state["model"], runtime=name) for name in available_runtimes()
    )


def problems(state: State) -> None:
    """One arena from the plain TFLM lifetimes (the whole model): a shape the runtimes' own
    rules may not produce, for every planner to place too."""
    model: Model = state["model"]
    tflm, _ = state["timelines"]
    buffers: list[Buffer] = []
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            lifetime = tflm.of(subgraph.index, tensor.index)
            if tflm_planned(tensor) and 0 <= lifetime.first <= lifetime.last:
                buffers.append(Buffer(len(buffers), lifetime.first, lifetime.last, tensor.nbytes))
    state["problems"] = (Problem(tuple(buffers), alignment=16),)


def planning(state: State) -> None:
    """Every registered planner on every arena; `run_planner` checks each result. The runtimes'
    arenas skip the planners `analyze` already ran on them (the runtime's own and naive)."""
    plans = []
    for analysis in state["analyses"]:
        for result in analysis.arenas:
            done = {result.runtime_plan.planner, result.naive_plan.planner, result.plan.planner}
            problem = result.arena.problem
            for name in applicable_planners(problem):
                if name not in done:
                    plans.append(run_planner(name, problem, **planner_knobs(name)))
    for problem in state["problems"]:
        for name in applicable_planners(problem):
            plans.append(run_planner(name, problem, **planner_knobs(name)))
    state["plans"] = tuple(plans)


def applicable_planners(problem: Problem) -> list[str]:
    """Registered planners, minus those that refuse this problem's fixed buffers by design."""
    if any(b.fixed_offset is not None for b in problem.buffers):
        return [name for name in planner_names() if name not in WITHOUT_FIXED_OFFSETS]
    return planner_names()


def planner_knobs(name: str) -> dict[str, Any]:
    """The fuzzing knobs a planner accepts (others are dropped: planners differ in knobs)."""
    wanted = PLANNER_KNOBS.get(name, {})
    accepted = inspect.signature(get_planner(name).function).parameters
    return {key: value for key, value in wanted.items() if key in accepted}


STAGES: tuple[Stage, ...] = (
    Stage("load", load),
    Stage("lifetimes", lifetimes),
    Stage("runtimes", runtimes),
    Stage("problems", problems),
    Stage("planning", planning),
)

__all__ = ["PLANNER_KNOBS", "STAGES", "Stage", "State", "planner_knobs"]
