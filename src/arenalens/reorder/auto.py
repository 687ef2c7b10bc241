"""Automatic reordering: the exact search when tractable, else a beam search; never worse.

Runs the beam search first (its peak bounds and speeds up the exact search), then the exact search,
each with half the effort. The result is the smallest-peak order among the file order, the beam
order and the exact order; ties keep the file order, so nothing moves without a measured gain.
"""

from __future__ import annotations

from arenalens.effort import deadline, seconds_left
from arenalens.reorder.beam import beam
from arenalens.reorder.exact import search
from arenalens.reorder.registry import ReorderOutput, register_reorderer
from arenalens.reorder.schedule import ScheduleProblem


@register_reorderer(
    "auto",
    description="exact when tractable, else beam search; the best of those and the file order",
    source="exact + beam (this package)",
)
def auto(
    problem: ScheduleProblem,
    *,
    effort: float = 5.0,
    time_limit_s: float | None = None,
    max_states: int = 200_000,
) -> ReorderOutput:
    """ScheduleProblem → the smallest-peak order found; proven when the exact search ends."""
    end = deadline(time_limit_s)
    file_order = list(range(problem.op_count))
    candidates: list[tuple[int, int, list[int]]] = [(problem.peak(file_order), 0, file_order)]
    half_cap = None if time_limit_s is None else time_limit_s / 2
    heuristic = list(beam(problem, effort=effort / 2, time_limit_s=half_cap).order)
    candidates.append((problem.peak(heuristic), 1, heuristic))
    best_peak = min(peak for peak, _, _ in candidates)
    found = search(
        problem,
        effort=effort / 2,
        time_limit_s=seconds_left(end),
        max_states=max_states,
        upper_bound=best_peak,
    )
    notes: list[str] = []
    if found is not None:
        candidates.append((problem.peak(found[0]), 2, found[0]))
    else:
        notes.append("exact search not tractable within its limits; beam search result")
    _, _, order = min(candidates, key=lambda c: (c[0], c[1]))
    return ReorderOutput(order=order, proven_optimal=found is not None, notes=tuple(notes))
