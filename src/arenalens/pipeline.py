"""The pipeline, top to bottom: load → check → lifetimes → arena problems → plans → budget.

Every stage asks the runtime (`runtimes.Runtime`) and follows one build (`builds.build.Build`):
under TFLM the x86-64 `tflite_micro` wheel unless a core and kernel library are chosen, e.g.
`build="cortex-m7/cmsis-nn"`; other runtimes have the host's only.

With `overlap=True` (TFLM), the head is planned once more with the overlaps the kernels allow (an
operator's output may start below an input it consumes) on every kernel code path the build's chip
may run, or the library the user named (`builds.kernel_paths.overlap_rules`), aligned to the
runtime's data alignment as `optimize --overlap` writes it, next to the plans that share no bytes.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.analysis.lifetimes import Timeline
from arenalens.builds.build import HOST, Build, as_build
from arenalens.builds.kernel_paths import OverlapRules, as_overlap_rules
from arenalens.errors import UsageError
from arenalens.ir import Model
from arenalens.memo import recent_by_identity
from arenalens.planning.problem import Plan, Problem
from arenalens.planning.registry import run_planner
from arenalens.records import record
from arenalens.runtimes import MemoryBudget, Runtime, get_runtime
from arenalens.runtimes.door import tflm_runtime
from arenalens.tflite.reader import load_model

if TYPE_CHECKING:  # overlaps are planned when asked for
    from arenalens.analysis.overlap_pairs import OverlapPair

OVERLAP_PLANNER = "best"


@record()
class ArenaResult:
    """One arena planned three ways: by the chosen planner, by the runtime, and with no reuse
    (that one when first asked for: `check` never asks)."""

    arena: ArenaProblem
    plan: Plan  # the chosen planner's plan (the runtime's own when none was chosen)
    runtime_plan: Plan
    given_naive_plan: Plan | None = field(default=None, repr=False, compare=False)

    @cached_property
    def naive_plan(self) -> Plan:
        """The arena with no reuse: every buffer end to end."""
        if self.given_naive_plan is not None:
            return self.given_naive_plan
        return run_planner("naive", self.arena.problem)

    @property
    def lower_bound(self) -> int:
        """Bytes live at the busiest step of this arena."""
        return self.arena.problem.lower_bound()


@record()
class OverlapResult:
    """The primary arena planned with its allowed overlaps."""

    rules: OverlapRules  # the kernel code paths the overlaps hold on
    pairs: tuple[OverlapPair, ...]  # every overlap the kernels allow
    shared: tuple[OverlapPair, ...]  # those whose buffers share bytes in the plan
    problem: Problem  # the arena's problem with the overlaps, 16-aligned offsets
    plan: Plan  # named '<planner>+overlaps'
    budget: MemoryBudget  # what the runtime needs with this plan

    @property
    def lower_bound(self) -> int:
        """No plan with these overlaps can use less."""
        return self.problem.lower_bound()


@record()
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
    overlap: OverlapResult | None = None
    build: Build | None = None  # the TFLM build planned for (None: a runtime without builds)

    @property
    def runtime_build(self) -> Build:
        """The build the runtime's rules took: the chosen TFLM build, the host for a runtime
        without builds."""
        return self.build or HOST

    @property
    def primary(self) -> ArenaResult:
        """The arena users care about first (TFLM head; LiteRT subgraph 0 arena)."""
        return self.arenas[0]

    @property
    def runs(self) -> bool:
        """False when the runtime cannot set the model up or invoke it, whatever the arena: the
        figures are then what it would plan, not a size that works (`budget.obstacles` say
        why; `arenalens.check` gives the whole verdict)."""
        return self.budget.runs


def analyze(
    model: Model | str | os.PathLike[str] | bytes,
    *,
    runtime: str = "tflm",
    build: Build | str | None = None,
    planner: str | None = None,
    alignment: int | None = None,
    planner_options: Mapping[str, Any] | None = None,
    overlap: OverlapRules | str | bool | None = None,
    overlap_effort: float = 5.0,
) -> Analysis:
    """Model (or path/bytes) → Analysis: lifetimes, every arena planned, the memory to declare;
    with `overlap` (TFLM only), the head also planned with the overlaps its kernels allow: True
    for the rules the build says (`builds.kernel_paths.overlap_rules`: the build's library when
    the user named it, "cortex-m7/cmsis-nn"; else every library its chip may run), or
    `OverlapRules` for others (the wheel with CMSIS-NN's code paths: `overlap_rules(HOST,
    "cmsis-nn")`). A library's name ('reference', 'cmsis-nn') is deprecated: name it on the build.

    `build` (TFLM only) is a `Build`, a name like "cortex-m7/cmsis-nn" or "cortex-m55", or None
    for the x86-64 wheel: the figures are then that build's (`device_build`, `select_build`).
    `overlap_effort` is the overlap plan's search effort (`arenalens.effort`: counted work).
    """
    if not isinstance(model, Model):
        model = load_model(model)
    if planner_options is None and not overlap:
        # check's analysis is asked again by the remedy ladder's optimize (the original's figure
        # on each build), a report after a check, ...: the same frozen answer.
        return _plain_analysis(model, runtime, build, planner, alignment)
    return _analysis(
        model,
        runtime=runtime,
        build=build,
        planner=planner,
        alignment=alignment,
        planner_options=planner_options,
        overlap=overlap,
        overlap_effort=overlap_effort,
    )


@recent_by_identity()
def _plain_analysis(
    model: Model,
    runtime: str,
    build: Build | str | None,
    planner: str | None,
    alignment: int | None,
) -> Analysis:
    return _analysis(model, runtime=runtime, build=build, planner=planner, alignment=alignment)


def _analysis(
    model: Model,
    *,
    runtime: str,
    build: Build | str | None,
    planner: str | None,
    alignment: int | None,
    planner_options: Mapping[str, Any] | None = None,
    overlap: OverlapRules | str | bool | None = None,
    overlap_effort: float = 5.0,
) -> Analysis:
    if isinstance(overlap, str):
        warnings.warn(
            f"analyze(overlap={overlap!r}) is deprecated: name the kernel library on the build "
            "(build='cortex-m7/cmsis-nn') and pass overlap=True, or pass overlap=OverlapRules",
            DeprecationWarning,
            stacklevel=3,  # analyze's caller
        )
    if overlap is False:
        overlap = None
    rules = get_runtime(runtime)
    if overlap and not rules.plans_overlaps:
        raise UsageError("--overlap needs TFLM (--runtime tflm): LiteRT plans its own arenas")
    chosen = runtime_build(runtime, build)
    timeline = rules.timeline(model, chosen)
    arenas = rules.arenas(model, chosen, alignment=alignment)
    results = tuple(_plan_arena(arena, planner, dict(planner_options or {})) for arena in arenas)
    budget = rules.budget(model, arenas, [r.plan for r in results], chosen)
    # With the runtime's own planner both budgets are the same; skip the second replay.
    same_plans = all(r.plan is r.runtime_plan for r in results)
    runtime_budget = (
        budget
        if same_plans
        else rules.budget(model, arenas, [r.runtime_plan for r in results], chosen)
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
        overlap=None
        if not overlap or not arenas
        else _plan_overlaps(rules, model, arenas, overlap, effort=overlap_effort, build=chosen),
        build=chosen if rules.has_builds else None,
    )


def runtime_build(runtime: str, build: Build | str | None) -> Build:
    """The build a runtime plans for: TFLM's chosen one (the wheel by default); other runtimes
    have only the host's, and refuse a device build."""
    chosen = as_build(build)
    if not get_runtime(runtime).has_builds and not chosen.is_host:
        raise UsageError(
            f"a Cortex-M build ({chosen.name}) is a TFLite Micro build; the {runtime} rules "
            "describe the host interpreter only (use --runtime tflm with --cpu / --kernels)"
        )
    return chosen


def _plan_overlaps(
    rules: Runtime,
    model: Model,
    arenas: tuple[ArenaProblem, ...],
    overlap: OverlapRules | str | bool,
    *,
    effort: float,
    build: Build,
) -> OverlapResult:
    """The primary arena with its allowed overlaps → the best plan and what the runtime then
    needs."""
    from arenalens.analysis.overlap_pairs import shared_pairs  # noqa: PLC0415

    arena = arenas[0]
    chosen = as_overlap_rules(None if isinstance(overlap, bool) else overlap, build)
    pairs = rules.overlaps(model, arena, paths=chosen.paths)
    problem = Problem(
        arena.problem.buffers,
        alignment=rules.data_alignment,  # as `optimize --overlap` writes them,
        overlaps=tuple(p.overlap for p in pairs),
    )
    plan = run_planner(OVERLAP_PLANNER, problem, effort=effort)
    named = replace(plan, planner=f"{OVERLAP_PLANNER}+overlaps")
    budget = _overlap_budget(
        rules, model, arena=arena, plan=named, size_builds=chosen.size_builds, build=build
    )
    return OverlapResult(
        rules=chosen,
        pairs=pairs,
        shared=shared_pairs(arena, pairs, plan.offsets),
        problem=problem,
        plan=named,
        budget=budget,
    )


def _overlap_budget(
    rules: Runtime,
    model: Model,
    *,
    arena: ArenaProblem,
    plan: Plan,
    size_builds: Sequence[Build],
    build: Build,
) -> MemoryBudget:
    """What TFLM needs with the plan written into the model (its tensors' offsets offline, each
    build's scratch placed online around them, as `optimize --overlap` writes it): the largest
    over the builds the number must hold on."""
    # Only TFLM plans overlaps (`Runtime.plans_overlaps`): its offline-plan format is the one.
    written = replace(model, offline_plan=tflm_runtime().offline_plan(model, arena, plan.offsets))
    budgets = []
    for each in (build, *(b for b in size_builds if b.name != build.name)):
        arenas = rules.arenas(written, each)
        plans = [run_planner(a.runtime_planner, a.problem) for a in arenas]
        budgets.append(rules.budget(written, arenas, plans, each))
    worst = max(budgets, key=lambda found: found.required_bytes)
    # The analysed build's figures, unless another build needs more.
    return budgets[0] if worst.required_bytes == budgets[0].required_bytes else worst


def _plan_arena(arena: ArenaProblem, planner: str | None, knobs: dict[str, Any]) -> ArenaResult:
    runtime_plan = run_planner(arena.runtime_planner, arena.problem, **arena.runtime_options)
    if planner is None or planner == arena.runtime_planner:
        plan = runtime_plan
    else:
        plan = run_planner(planner, arena.problem, **knobs)
    return ArenaResult(arena=arena, plan=plan, runtime_plan=runtime_plan)
