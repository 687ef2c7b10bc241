"""The stages every fuzz input runs through, in pipeline order; adding a stage is one line.

A stage is a name and a function of the shared state dict: it reads what earlier stages stored
("data", "model", "timelines", "problems" ...) and stores its own results. A stage may raise
`ModelError` (the input is refused, which is fine); anything else is a bug the harness counts.
Knobs keep each stage bounded on hostile input (planner time limits), not smaller than real use.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from types import MappingProxyType
from typing import Any

from arenalens.diagnostics.rules import diagnose
from arenalens.exports import FORMATS, export
from arenalens.ir import Model
from arenalens.optimization import optimize_model
from arenalens.pipeline import analyze
from arenalens.planning.problem import Buffer, Plan, Problem
from arenalens.planning.registry import get_planner, planner_names, run_planner
from arenalens.reorder.registry import reorderer_names, run_reorderer
from arenalens.reorder.runtime_order import reorder_for_runtime
from arenalens.reorder.schedule import apply_schedule, schedule_problem
from arenalens.report.ascii import render_tflm_memory_plan
from arenalens.report.build import build_report
from arenalens.report.diagnose_output import diagnosis_document, render_diagnosis
from arenalens.report.html_page import render_html
from arenalens.report.images import render_images
from arenalens.report.inspect_output import inspect_document, render_inspect
from arenalens.report.plan_output import plan_document
from arenalens.report.plan_text import render_plan
from arenalens.report.terminal import render_report_text
from arenalens.runtimes import RUNTIME_MODULES
from arenalens.runtimes.litert.lifetimes import litert_timeline
from arenalens.runtimes.tflm.lifetimes import tflm_planned, tflm_timeline
from arenalens.tflite.reader import load_model

State = dict[str, Any]

# Effort of each search (CP-SAT, hill climb, reordering, diagnose's what-if planning): small, so
# one input stays well inside the harness's time limit; the code paths are the same as with
# real budgets. The wall-clock cap is a second net for hostile inputs (fuzzing only: it makes
# results machine-dependent).
SEARCH_EFFORT = 0.05
SEARCH_TIME_LIMIT_S = 0.05
# Per input, every planner runs on this many arenas of each runtime (primary first), every
# reorderer on this many subgraphs: a hostile model with 2,000 subgraphs has 4,000 LiteRT arenas,
# and ten planners on each would measure the harness, not arenalens. The runtimes still plan
# every arena with their own planner.
MAX_ARENAS_PLANNED = 4
MAX_SUBGRAPHS_REORDERED = 3
PLANNER_KNOBS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "optimal": {"effort": SEARCH_EFFORT, "time_limit_s": SEARCH_TIME_LIMIT_S, "workers": 1},
        "best": {"effort": SEARCH_EFFORT, "time_limit_s": SEARCH_TIME_LIMIT_S},
        "hillclimb": {
            "max_iterations": 50,
            "effort": SEARCH_EFFORT,
            "time_limit_s": SEARCH_TIME_LIMIT_S,
        },
    }
)

# Planners that refuse offline-planned (fixed) buffers on purpose, as their runtime does
# (PlanError "cannot honour fixed offsets"): not run on problems that have any.
WITHOUT_FIXED_OFFSETS = frozenset({"tflm_linear", "litert_arena"})


@dataclass(frozen=True, slots=True)
class Stage:
    """One pipeline stage under test; `deep` stages run only on inputs chosen for the deep tier."""

    name: str
    run: Callable[[State], None]
    deep: bool = False


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
    """Every registered planner that does not search, on the first arenas of each runtime and on
    the generic arena; `run_planner` checks each result. The runtimes' arenas skip the planners
    `analyze` already ran on them (its own and naive)."""
    state["plans"] = tuple(_run_planners(state, search=False))


def search(state: State) -> None:
    """The searching planners (those with a time limit: CP-SAT, hill climb, portfolios) on the
    primary arena of each runtime: each search costs tens of milliseconds even when tiny."""
    state["plans"] += tuple(_run_planners(state, search=True))


def _run_planners(state: State, *, search: bool) -> list[Plan]:
    plans = []
    for analysis in state["analyses"]:
        arenas = analysis.arenas[: 1 if search else MAX_ARENAS_PLANNED]
        for result in arenas:
            done = {result.runtime_plan.planner, result.naive_plan.planner, result.plan.planner}
            problem = result.arena.problem
            for name in applicable_planners(problem):
                if name not in done and is_search_planner(name) == search:
                    plans.append(run_planner(name, problem, **planner_knobs(name)))
    if not search:
        for problem in state["problems"]:
            for name in applicable_planners(problem):
                if not is_search_planner(name):
                    plans.append(run_planner(name, problem, **planner_knobs(name)))
    return plans


@cache
def is_search_planner(name: str) -> bool:
    """True for planners that search (CP-SAT, hill climb, portfolios: they take an effort)."""
    return get_planner(name).settings.takes("effort")


def applicable_planners(problem: Problem) -> list[str]:
    """Registered planners, minus those that refuse this problem's fixed buffers by design."""
    if any(b.fixed_offset is not None for b in problem.buffers):
        return [name for name in planner_names() if name not in WITHOUT_FIXED_OFFSETS]
    return planner_names()


def planner_knobs(name: str) -> dict[str, Any]:
    """The fuzzing knobs a planner takes (others are dropped: planners differ in knobs)."""
    settings = get_planner(name).settings
    return {key: value for key, value in PLANNER_KNOBS.get(name, {}).items() if settings.takes(key)}


def report(state: State) -> None:
    """Every document a user can get from an analysis: plan JSON, every export format, the TFLM
    memory-plan picture, the inspect document, and the HTML report (checked for escaping)."""
    model: Model = state["model"]
    texts: list[str] = []
    for analysis in state["analyses"]:
        texts.append(json.dumps(plan_document(analysis)))
        texts.extend(export(analysis, name) for name in FORMATS)
        if analysis.runtime == "tflm":
            texts.append(render_tflm_memory_plan(analysis.primary.arena, analysis.primary.plan))
    texts.append(json.dumps(inspect_document(model, state["timelines"][0])))
    reports = tuple(build_report(analysis) for analysis in state["analyses"])
    page = render_html(reports)
    check_html_escaping(page, model)
    texts.append(page)
    state["reports"] = reports
    state["texts"] = tuple(texts)


def terminal(state: State) -> None:
    """Every terminal text: plan tables, the inspect summary with tensors and lifetimes, and
    the memory report (rich tables: milliseconds per hundred rows, hence the deep tier)."""
    model: Model = state["model"]
    for analysis in state["analyses"]:
        render_plan(plan_document(analysis), color=True)
    render_inspect(model, show_tensors=True, timeline=state["timelines"][1])
    for memory_report in state["reports"]:
        render_report_text(memory_report, color=True)


# Markup that must never reach an HTML page raw from model text (names, descriptions).
_RAW_MARKUP = ("<script>alert", "<img src=x", "<svg onload", "</script><")


def check_html_escaping(page: str, model: Model) -> None:
    """Raise when model-controlled text appears unescaped in the page (a report bug)."""
    names = [model.description, *(sg.name for sg in model.subgraphs)]
    names += [t.name for sg in model.subgraphs[:4] for t in sg.tensors[:200]]
    names += [op.opcode for sg in model.subgraphs[:4] for op in sg.operators[:200]]
    for text in names:
        if "<" in text and text in page:
            raise AssertionError(f"model text {text[:60]!r} appears unescaped in the HTML report")
    for marker in _RAW_MARKUP:
        if marker in page:
            raise AssertionError(f"{marker!r} appears unescaped in the HTML report")


def images(state: State) -> None:
    """Every chart of every report as PNG and SVG (matplotlib)."""
    for report in state["reports"]:
        render_images(report)


def diagnosis(state: State) -> None:
    """Every diagnose rule under each runtime, what-if planning included, as text and JSON."""
    for analysis in state["analyses"]:
        found = diagnose(
            state["model"],
            runtime=analysis.runtime,
            analysis=analysis,
            planner_effort=SEARCH_EFFORT,
            planner_time_limit_s=SEARCH_TIME_LIMIT_S,
            what_if=True,
        )
        render_diagnosis(found, color=True)
        json.dumps(diagnosis_document(found))


def reorder(state: State) -> None:
    """Every reorderer on the first subgraphs, sized by tensor bytes (`run_reorderer` checks
    each order is a valid topological order); then the default reorderer under each runtime's
    own sizes, and the model rewritten in its order analysed again."""
    model: Model = state["model"]
    for subgraph in model.subgraphs[:MAX_SUBGRAPHS_REORDERED]:
        problem = schedule_problem(model, subgraph.index, tensor_bytes=lambda t: t.nbytes)
        for name in reorderer_names():
            run_reorderer(name, problem, effort=SEARCH_EFFORT, time_limit_s=SEARCH_TIME_LIMIT_S)
    for runtime in available_runtimes():
        schedule, _ = reorder_for_runtime(
            model, runtime, effort=SEARCH_EFFORT, time_limit_s=SEARCH_TIME_LIMIT_S
        )
        if not schedule.is_file_order():
            analyze(apply_schedule(model, schedule), runtime=runtime)


def optimize(state: State) -> None:
    """`optimize` with reordering, in-place aliases and overlaps (no proof run), the output read
    back."""
    optimization = optimize_model(
        state["model"],
        planner="greedy_by_size",
        reorder=True,
        inplace=True,
        overlap=True,
        prove_inplace=False,
        time_limit_s=SEARCH_TIME_LIMIT_S,
    )
    load_model(optimization.data)


STAGES: tuple[Stage, ...] = (
    Stage("load", load),
    Stage("lifetimes", lifetimes),
    Stage("runtimes", runtimes),
    Stage("problems", problems),
    Stage("planning", planning),
    Stage("report", report),
    Stage("search", search, deep=True),
    Stage("terminal", terminal, deep=True),
    Stage("images", images, deep=True),
    Stage("diagnose", diagnosis, deep=True),
    Stage("reorder", reorder, deep=True),
    Stage("optimize", optimize, deep=True),
)

__all__ = ["PLANNER_KNOBS", "STAGES", "Stage", "State", "planner_knobs"]
