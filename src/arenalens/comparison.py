"""Planner comparison: model + runtime → every registered planner on the runtime's primary arena.

Each row is one planner's checked plan (or why it has none): arena bytes, how far above the lower
bound, how many bytes it saves against the runtime's own planner, whether it is proven optimal, and
how long it took. With `reorder`, the model is first put in the operator order that lowers the
runtime's busiest step (the bound itself moves; the file-order bound is kept for reference). With
`overlap` (TFLM), every planner runs a second time on the same arena with its allowed overlaps
(an output may start below an input it consumes), next to its disjoint plan.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

from arenalens.analysis.arena_problem import ArenaProblem
from arenalens.analysis.overlap_pairs import with_overlaps
from arenalens.builds.build import Build
from arenalens.builds.kernel_paths import OverlapRules, as_overlap_rules
from arenalens.effort import cap_setting
from arenalens.errors import ArenalensError, UsageError
from arenalens.ir import Model
from arenalens.pipeline import runtime_build
from arenalens.planning.bounds import sound_lower_bound
from arenalens.planning.problem import Plan
from arenalens.planning.registry import get_planner, planner_names, run_planner
from arenalens.reorder.registry import ReorderResult
from arenalens.reorder.runtime_order import reorder_for_runtime
from arenalens.reorder.schedule import apply_schedule
from arenalens.runtimes import get_runtime
from arenalens.tflite.reader import load_model


@dataclass(frozen=True)
class PlannerRow:
    """One planner on the arena: its plan, or the reason it has none."""

    planner: str
    plan: Plan | None
    error: str = ""
    is_runtime_planner: bool = False


@dataclass(frozen=True)
class Comparison:
    """Every planner on one arena, with the bound and the runtime's own result."""

    model: Model
    runtime: str
    arena: ArenaProblem
    lower_bound: int
    runtime_arena_bytes: int  # the runtime's own planner on the model as given (file order)
    rows: tuple[PlannerRow, ...]
    reorder: ReorderResult | None = None
    file_order_lower_bound: int | None = None
    # With overlaps allowed: the same planners on the same arena, the bound, the pairs allowed.
    overlap_rows: tuple[PlannerRow, ...] = ()
    overlap_lower_bound: int | None = None
    overlap_count: int = 0
    build: Build | None = None  # the TFLM build (None: a runtime without builds)


def compare_planners(
    source: Model | str | os.PathLike[str] | bytes,
    *,
    runtime: str = "tflm",
    planners: list[str] | None = None,
    effort: float = 10.0,
    time_limit_s: float | None = None,
    seed: int = 0,
    reorder: bool = False,
    overlap: bool | OverlapRules = False,
    build: Build | str | None = None,
    kernels: OverlapRules | str | None = None,
) -> Comparison:
    """Model → a Comparison of the planners (all registered ones by default) on its main arena;
    `build` is the TFLM build whose scratch buffers are planned (None: the x86-64 wheel). With
    `overlap=True`, overlaps respect the access orders the build says (its library when the user
    named it, else every library its chip may run: `builds.kernel_paths.overlap_rules`);
    `overlap=OverlapRules` others. `kernels` (a library's name) is deprecated: name it on the
    build. `effort` is each search planner's counted work (`arenalens.effort`: the same plans on
    every machine); `time_limit_s` an optional wall-clock cap (None: none)."""
    if kernels is not None:
        warnings.warn(
            "compare_planners(kernels=...) is deprecated: name the kernel library on the build "
            "(build='cortex-m7/cmsis-nn') or pass overlap=OverlapRules",
            DeprecationWarning,
            stacklevel=2,
        )
    model = source if isinstance(source, Model) else load_model(source)
    rules = get_runtime(runtime)
    if overlap and not rules.plans_overlaps:
        raise UsageError("--overlap needs TFLM (--runtime tflm): LiteRT plans its own arenas")
    chosen = runtime_build(runtime, build)
    reordered: ReorderResult | None = None
    file_bound: int | None = None
    given = rules.arenas(model, chosen)[0]
    runtime_plan = run_planner(given.runtime_planner, given.problem, **given.runtime_options)
    if reorder:
        file_bound = sound_lower_bound(given.problem)
        schedule, reordered = reorder_for_runtime(
            model,
            runtime,
            effort=min(5.0, effort),
            time_limit_s=None if time_limit_s is None else min(5.0, time_limit_s),
            build=chosen,
        )
        model = apply_schedule(model, schedule)
    arena = rules.arenas(model, chosen)[0]
    names = planners if planners is not None else _planners_for(runtime)
    for name in names:
        get_planner(name)  # unknown names fail before any work
    search = {"effort": effort, "seed": seed, **cap_setting(time_limit_s)}
    rows = tuple(_row(name, arena, search) for name in names)
    overlap_rows: tuple[PlannerRow, ...] = ()
    overlap_bound: int | None = None
    if isinstance(overlap, OverlapRules):
        paths = overlap.paths
    else:
        paths = as_overlap_rules(kernels, chosen).paths if overlap else ()
    pairs = rules.overlaps(model, arena, paths=paths) if overlap else ()
    if overlap:
        overlapping = with_overlaps(arena, pairs)
        overlap_bound = sound_lower_bound(overlapping.problem)
        overlap_rows = tuple(_row(name, overlapping, search) for name in names)
    return Comparison(
        model=model,
        runtime=runtime,
        arena=arena,
        lower_bound=sound_lower_bound(arena.problem),
        runtime_arena_bytes=runtime_plan.arena_size,
        rows=rows,
        reorder=reordered,
        file_order_lower_bound=file_bound,
        overlap_rows=overlap_rows,
        overlap_lower_bound=overlap_bound,
        overlap_count=len(pairs),
        build=chosen if rules.has_builds else None,
    )


def _planners_for(runtime: str) -> list[str]:
    """Registered planners, without replicas of another runtime (meaningless here)."""
    return [
        name for name in planner_names() if get_planner(name).replicates_runtime in (None, runtime)
    ]


def _row(name: str, arena: ArenaProblem, search: Mapping[str, float]) -> PlannerRow:
    """One planner's plan, offered the search settings (effort, seed, a user's cap)."""
    is_runtime = name == arena.runtime_planner
    settings: dict[str, object] = dict(arena.runtime_options) if is_runtime else {}
    started = time.perf_counter()
    try:
        plan = run_planner(name, arena.problem, **settings, **search)
    except ArenalensError as error:
        return PlannerRow(
            name, None, f"{error} ({time.perf_counter() - started:.2f} s)", is_runtime
        )
    return PlannerRow(name, plan, "", is_runtime)
