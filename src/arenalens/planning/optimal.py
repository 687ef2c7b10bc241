"""Exact planning with OR-Tools CP-SAT: 2-D no-overlap of (offset × bytes, steps) rectangles.

Each online buffer is a rectangle: bytes [offset, offset + size) by steps [start, end]; the steps
are fixed, the offset (a multiple of the alignment) is a variable; rectangles may not overlap
(`AddNoOverlap2D`), and the arena is the highest end, minimised. Fixed (offline) buffers are
constants the others must avoid. The search is warm-started (`AddHint`) from the best heuristic
plan, whose size is also the horizon, and starts from a sound lower bound (busiest step), so it
either proves the optimum or reports the gap that remains when its effort is spent. The effort is
CP-SAT's deterministic time (`max_deterministic_time`, its own count of work), with one worker
and a fixed seed by default (several workers interleave their search in fixed batches,
`interleave_search`: deterministic whatever their number, sat_parameters.proto, but on these
models several times slower per unit of work), so the same problem gets the same plan on every
machine; only a user's wall-clock cap (`time_limit_s`, off by default) can stop it elsewhere.

Allowed overlaps (`Overlap`: an output may start at least D bytes below an input it shares bytes
with) break the no-overlap rule for one pair during the steps they share. Those steps are a
prefix of the later-starting buffer's lifetime (its *cut*), so that buffer's rectangle keeps only
the steps after the cut, and for the cut steps it gets one disjunction per buffer live there:
"below or above" for an ordinary neighbour, "at least D below, or above" for its overlap
partner.

Source: the 2-D strip-packing view of memory planning with fixed lifetimes (e.g. Sekiyama et al.,
"Profile-guided memory optimization for deep neural networks", arXiv 1804.10001, 2018);
CP-SAT's `NoOverlap2D` (developers.google.com/optimization).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Mapping
from typing import Any

from arenalens.effort import CPSAT_DETERMINISTIC_SECONDS, deadline, seconds_left
from arenalens.errors import RuntimeUnavailableError
from arenalens.planning.bounds import sound_lower_bound
from arenalens.planning.portfolio import warm_start
from arenalens.planning.problem import Buffer, Problem, arena_size
from arenalens.planning.registry import PlannerOutput, register_planner
from arenalens.units import format_bytes_exact

EXACT_INSTALL = "pip install 'arenalens[exact]'"  # the extra with OR-Tools
INSTALL_HINT = f"the 'optimal' planner needs OR-Tools: {EXACT_INSTALL}"


@register_planner(
    "optimal",
    description="OR-Tools CP-SAT 2-D no-overlap, warm-started; proves optimality or a gap",
    source="CP-SAT NoOverlap2D; strip packing with fixed lifetimes (arXiv 1804.10001)",
    in_portfolio=False,
)
def optimal(
    problem: Problem,
    *,
    effort: float = 10.0,
    time_limit_s: float | None = None,
    seed: int = 0,
    workers: int = 1,
    hint: Mapping[int, int] | None = None,
) -> PlannerOutput:
    """Problem → offsets minimising the arena, with a proof of optimality or a proven bound."""
    cp_model = _import_cp_model()
    end = deadline(time_limit_s)
    bound = sound_lower_bound(problem)
    search_effort = effort
    if hint is None:
        start_plan, search_effort = warm_start(
            problem, effort=effort, time_limit_s=time_limit_s, seed=seed, stop_at=bound
        )
        hint_offsets: Mapping[int, int] = start_plan.offsets
        warm_from = start_plan.planner
    else:
        hint_offsets, warm_from = hint, "hint"
    hint_size = arena_size(problem, hint_offsets)
    if hint_size <= bound:
        return PlannerOutput(
            offsets=dict(hint_offsets),
            proven_optimal=True,
            bound=hint_size,
            notes=(f"{warm_from} reaches the lower bound; no search needed",),
        )
    solved = _solve(
        cp_model,
        problem,
        hint=hint_offsets,
        horizon=hint_size,
        bound=bound,
        effort=search_effort,
        time_limit_s=seconds_left(end),
        seed=seed,
        workers=workers,
    )
    offsets, proven_optimal, solver_bound, status = solved
    best_size = arena_size(problem, offsets)
    final_bound = min(max(bound, solver_bound), best_size)
    proven_optimal = proven_optimal or final_bound == best_size
    gap = best_size - final_bound
    note = (
        f"CP-SAT {status}: optimum proven"
        if proven_optimal
        else f"CP-SAT {status}: {format_bytes_exact(gap)} above the proven bound {final_bound:,}"
    )
    return PlannerOutput(
        offsets=offsets,
        proven_optimal=proven_optimal,
        bound=final_bound,
        notes=(f"warm start from {warm_from} ({format_bytes_exact(hint_size)})", note),
        stats={"gap_bytes": gap},
    )


def _cuts(problem: Problem) -> dict[int, int]:
    """Online buffer id → last step it shares with an overlap partner that started no later."""
    cuts: dict[int, int] = {}
    by_id = problem.by_id
    for overlap in problem.overlaps:
        pair = (by_id[overlap.output], by_id[overlap.input])
        if not (pair[0].size and pair[1].size and pair[0].conflicts_with(pair[1])):
            continue
        later, earlier = sorted(pair, key=lambda b: (b.start, b.id), reverse=True)
        if later.fixed_offset is None:
            shared_until = min(later.end, earlier.end)
            cuts[later.id] = max(cuts.get(later.id, shared_until), shared_until)
    return cuts


def _pairwise(
    problem: Problem, online: list[Buffer], fixed: list[Buffer], cuts: dict[int, int]
) -> list[tuple[Buffer, Buffer]]:
    """Pairs that need their own disjunction, each once, in a deterministic order.

    Every online buffer against each fixed buffer it conflicts with, and every cut buffer
    against each buffer live during its cut steps (those live at its first step, found by one
    sweep, plus those starting later within the cut).
    """
    pairs: dict[tuple[int, int], tuple[Buffer, Buffer]] = {}
    for buffer in online:
        for other in fixed:
            if buffer.conflicts_with(other):
                pairs[(buffer.id, other.id)] = (buffer, other)
    by_id = problem.by_id
    cut_buffers = sorted((by_id[i] for i in cuts), key=lambda b: (b.start, b.id))
    by_start = sorted(online, key=lambda b: (b.start, b.id))
    start_steps = [b.start for b in by_start]
    live: dict[int, Buffer] = {}
    ending: list[tuple[int, int]] = []
    position = 0
    for buffer in cut_buffers:
        while position < len(by_start) and by_start[position].start <= buffer.start:
            entered = by_start[position]
            live[entered.id] = entered
            heapq.heappush(ending, (entered.end, entered.id))
            position += 1
        while ending and ending[0][0] < buffer.start:
            del live[heapq.heappop(ending)[1]]
        later = by_start[
            bisect.bisect_right(start_steps, buffer.start) : bisect.bisect_right(
                start_steps, cuts[buffer.id]
            )
        ]
        for other in [*live.values(), *later]:
            if other.id != buffer.id:
                key = (min(buffer.id, other.id), max(buffer.id, other.id))
                pairs.setdefault(key, (buffer, other))
    return [pairs[key] for key in sorted(pairs)]


def _separate(
    model: Any, problem: Problem, first: Buffer, second: Buffer, offsets: dict[int, Any]
) -> None:
    """Constrain two live-together buffers: disjoint, or their allowed overlap."""

    def position(buffer: Buffer) -> Any:
        return buffer.fixed_offset if buffer.fixed_offset is not None else offsets[buffer.id]

    below = model.NewBoolVar(f"below_{first.id}_{second.id}")
    overlap = problem.overlap_between(first.id, second.id)
    if overlap is None:
        model.Add(position(first) + first.size <= position(second)).OnlyEnforceIf(below)
        model.Add(position(first) >= position(second) + second.size).OnlyEnforceIf(below.Not())
        return
    output = first if first.id == overlap.output else second
    source = second if output is first else first
    distance = min(overlap.min_offset_distance, output.size)
    # Below (sharing bytes or not) by at least the distance, or wholly above the input.
    model.Add(position(output) + distance <= position(source)).OnlyEnforceIf(below)
    model.Add(position(output) >= position(source) + source.size).OnlyEnforceIf(below.Not())


def _import_cp_model() -> Any:
    try:
        from ortools.sat.python import cp_model  # noqa: PLC0415 - optional extra, lazily
    except ImportError as error:
        raise RuntimeUnavailableError(INSTALL_HINT) from error
    return cp_model


def _solve(
    cp_model: Any,
    problem: Problem,
    *,
    hint: Mapping[int, int],
    horizon: int,
    bound: int,
    effort: float,
    time_limit_s: float | None,
    seed: int,
    workers: int,
) -> tuple[dict[int, int], bool, int, str]:
    """Build and run the CP-SAT model → (offsets, proven optimal, solver bound, status name)."""
    model = cp_model.CpModel()
    alignment = problem.alignment
    online = sorted(
        (b for b in problem.buffers if b.fixed_offset is None and b.size), key=lambda b: b.id
    )
    fixed = sorted(
        (b for b in problem.buffers if b.fixed_offset is not None and b.size), key=lambda b: b.id
    )
    arena = model.NewIntVar(bound, horizon, "arena")
    cuts = _cuts(problem)
    offset_vars: dict[int, Any] = {}
    slots: dict[int, Any] = {}
    x_intervals, y_intervals = [], []
    for buffer in online:
        top = (horizon - buffer.size) // alignment
        slot = model.NewIntVar(0, max(top, 0), f"slot_{buffer.id}")
        offset = model.NewIntVar(0, horizon, f"offset_{buffer.id}")
        model.Add(offset == slot * alignment)
        model.Add(offset + buffer.size <= arena)
        model.AddHint(slot, hint[buffer.id] // alignment)
        slots[buffer.id] = slot
        offset_vars[buffer.id] = offset
        first_step = cuts.get(buffer.id, buffer.start - 1) + 1
        if first_step <= buffer.end:
            x_intervals.append(
                model.NewFixedSizeIntervalVar(offset, buffer.size, f"bytes_{buffer.id}")
            )
            y_intervals.append(
                model.NewFixedSizeIntervalVar(
                    first_step, buffer.end - first_step + 1, f"steps_{buffer.id}"
                )
            )
    for first, second in _pairwise(problem, online, fixed, cuts):
        _separate(model, problem, first, second, offset_vars)
    for other in fixed:
        if other.fixed_offset is not None:
            model.Add(arena >= other.fixed_offset + other.size)
    model.AddNoOverlap2D(x_intervals, y_intervals)
    model.Minimize(arena)
    solver = cp_model.CpSolver()
    solver.parameters.max_deterministic_time = effort * CPSAT_DETERMINISTIC_SECONDS
    if time_limit_s is not None:
        solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.random_seed = seed
    solver.parameters.num_workers = max(1, workers)
    # One worker searches deterministically; several only when interleaved in fixed batches.
    solver.parameters.interleave_search = workers > 1
    status = solver.Solve(model)
    name = solver.StatusName(status)
    offsets = dict(hint)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        candidate = {b.id: hint[b.id] for b in problem.buffers}
        for buffer_id, slot in slots.items():
            candidate[buffer_id] = int(solver.Value(slot)) * alignment
        if arena_size(problem, candidate) <= arena_size(problem, offsets):
            offsets = candidate
    solver_bound = int(solver.BestObjectiveBound()) if status != cp_model.UNKNOWN else bound
    if status == cp_model.INFEASIBLE:
        # The hint itself is feasible within the horizon, so this cannot happen; stay safe.
        solver_bound = bound
    return offsets, status == cp_model.OPTIMAL, solver_bound, name
