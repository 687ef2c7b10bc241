"""Automatic reordering: the exact search when tractable, else a beam search; never worse.

Runs the beam search first (its peak bounds and speeds up the exact search), then the exact search
within the remaining time. The result is the smallest-peak order among the file order, the beam
order and the exact order; ties keep the file order, so nothing moves without a measured gain.
"""

from __future__ import annotations

import time

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
    problem: ScheduleProblem, *, time_limit_s: float = 5.0, max_states: int = 200_000
) -> ReorderOutput:
    """ScheduleProblem → the smallest-peak order found; proven when the exact search ends."""
    started = time.perf_counter()
    file_order = list(range(problem.op_count))
    candidates: list[tuple[int, int, list[int]]] = [(problem.peak(file_order), 0, file_order)]
    heuristic = list(beam(problem, time_limit_s=time_limit_s / 2).order)
    candidates.append((problem.peak(heuristic), 1, heuristic))
    remaining = max(0.05, time_limit_s - (time.perf_counter() - started))
    best_peak = min(peak for peak, _, _ in candidates)
    found = search(problem, time_limit_s=remaining, max_states=max_states, upper_bound=best_peak)
    notes: list[str] = []
    if found is not None:
        candidates.append((problem.peak(found[0]), 2, found[0]))
    else:
        notes.append("exact search not tractable within its limits; beam search result")
    _, _, order = min(candidates, key=lambda c: (c[0], c[1]))
    return ReorderOutput(order=order, proven_optimal=found is not None, notes=tuple(notes))
