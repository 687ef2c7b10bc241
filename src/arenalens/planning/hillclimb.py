"""Hill climb over placement orders (Vela-style): move the buffer that sets the arena size earlier.

Source: Arm Vela's `HillClimbAllocator` (*ethosu/vela/hillclimb_allocation.py*, from
`tensor_allocation.py`): a placement order is decoded by first fit; the buffer that ends highest is
*critical*, and a step moves it in front of a random earlier buffer it conflicts with (or, when it
has none, swaps two random positions). A move is kept when the arena does not grow, so plateaus are
crossed; every `restart_after` fruitless moves the walk restarts from the best order so far. It
starts from the better of the size-descending and breadth orders, stops at the lower bound, and
is bounded by `max_iterations` and by its `effort` (`arenalens.effort`: a number of buffer
placements, each step re-placing every buffer), so it is deterministic for a given seed; only a
user's wall-clock cap (`time_limit_s`, off by default) can cut it short elsewhere.
"""

from __future__ import annotations

import random

from arenalens.effort import HILLCLIMB_PLACEMENTS, deadline, past, steps
from arenalens.planning.bounds import sound_lower_bound
from arenalens.planning.greedy_by_breadth import breadth_order
from arenalens.planning.placement import Fit, place_in_order
from arenalens.planning.problem import Problem, arena_size
from arenalens.planning.registry import PlannerOutput, register_planner


@register_planner(
    "hillclimb",
    description="Vela-style hill climb over first-fit placement orders (seeded, bounded)",
    source="Arm Vela ethosu/vela/hillclimb_allocation.py (HillClimbAllocator)",
)
def hillclimb(
    problem: Problem,
    *,
    seed: int = 0,
    max_iterations: int = 2000,
    effort: float = 2.0,
    time_limit_s: float | None = None,
    restart_after: int = 200,
) -> PlannerOutput:
    """Problem → offsets from the best first-fit order found by a bounded, seeded hill climb."""
    rng = random.Random(seed)
    movable = [b.id for b in problem.buffers if b.fixed_offset is None and b.size]
    by_size = [b.id for b in sorted(problem.buffers, key=lambda b: (-b.size, b.start, b.id))]
    starts = [by_size, breadth_order(problem)]
    scored = [(_evaluate(problem, order), index, order) for index, order in enumerate(starts)]
    (best_size, best_offsets), _, best_order = min(scored, key=lambda s: (s[0][0], s[1]))
    lower_bound = sound_lower_bound(problem)
    # Each step places every buffer once: the effort's placements over the buffer count.
    placements = steps(effort, HILLCLIMB_PLACEMENTS)
    budget = min(max_iterations, placements // max(1, len(problem.buffers)))
    end = deadline(time_limit_s)
    current_order, current_size, current_offsets = best_order, best_size, best_offsets
    iterations = fruitless = 0
    while iterations < budget and best_size > lower_bound and len(movable) > 1:
        if past(end):
            break
        iterations += 1
        candidate = _move(problem, current_order, current_offsets, current_size, rng)
        size, offsets = _evaluate(problem, candidate)
        if size <= current_size:
            current_order, current_size, current_offsets = candidate, size, offsets
        if size < best_size:
            best_order, best_size, best_offsets = candidate, size, offsets
            fruitless = 0
        else:
            fruitless += 1
        if fruitless >= restart_after:
            current_order, current_size, current_offsets = best_order, best_size, best_offsets
            fruitless = 0
    return PlannerOutput(
        offsets=best_offsets,
        proven_optimal=best_size == lower_bound,
        bound=lower_bound,
        stats={"iterations": iterations},
    )


def _evaluate(problem: Problem, order: list[int]) -> tuple[int, dict[int, int]]:
    offsets = place_in_order(problem, order, fit=Fit.FIRST)
    return arena_size(problem, offsets), offsets


def _move(
    problem: Problem,
    order: list[int],
    offsets: dict[int, int],
    size: int,
    rng: random.Random,
) -> list[int]:
    """One neighbour of order: the critical buffer moved before an earlier conflicting one."""
    by_id = problem.by_id
    critical = [
        i
        for i in order
        if by_id[i].fixed_offset is None and by_id[i].size and offsets[i] + by_id[i].size == size
    ]
    position = {buffer_id: index for index, buffer_id in enumerate(order)}
    candidate = list(order)
    if critical:
        chosen = rng.choice(critical)
        here = position[chosen]
        earlier = [
            index
            for index in range(here)
            if by_id[order[index]].size and by_id[order[index]].conflicts_with(by_id[chosen])
        ]
        if earlier:
            target = rng.choice(earlier)
            candidate.pop(here)
            candidate.insert(target, chosen)
            return candidate
    first, second = rng.sample(range(len(order)), 2)
    candidate[first], candidate[second] = candidate[second], candidate[first]
    return candidate
