"""Greedy by breadth (offsets): visit steps from the busiest down, placing each step's buffers.

Source: Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net Inference" (arXiv
2001.03288, 2020), "Greedy by Breadth", in its offset-calculation form: steps are
visited in order of decreasing *breadth* (bytes live at the step); at each step its not yet placed
buffers are placed largest first, each into the smallest conflicting gap that fits. The busiest
step is packed first and tightly, so it usually lands at the lower bound.
"""

from __future__ import annotations

from arenalens.planning.placement import Fit, place_in_order
from arenalens.planning.problem import Problem
from arenalens.planning.registry import register_planner


@register_planner(
    "greedy_by_breadth",
    description="busiest step first; its buffers largest first into the smallest gap that fits",
    source="Pisarchyk & Lee 2020 (arXiv 2001.03288), offsets",
)
def greedy_by_breadth(problem: Problem) -> dict[int, int]:
    """Problem → offsets, buffers grouped by their busiest step, best-fit gaps."""
    return place_in_order(problem, breadth_order(problem), fit=Fit.BEST)


def breadth_order(problem: Problem) -> list[int]:
    """Buffer ids: steps by breadth descending (ties: earlier step), each step's buffers by size."""
    live = [b for b in problem.buffers if b.size and b.fixed_offset is None]
    # Steps where the live set can change are the buffer starts; the breadth between two such
    # points is constant, so visiting every start step is enough.
    steps = sorted({b.start for b in live})
    breadth = {step: sum(b.size for b in live if b.start <= step <= b.end) for step in steps}
    ordered: list[int] = []
    seen: set[int] = set()
    for step in sorted(steps, key=lambda s: (-breadth[s], s)):
        here = [b for b in live if b.start <= step <= b.end and b.id not in seen]
        for buffer in sorted(here, key=lambda b: (-b.size, b.start, b.id)):
            ordered.append(buffer.id)
            seen.add(buffer.id)
    ordered.extend(b.id for b in sorted(problem.buffers, key=lambda b: b.id) if b.id not in seen)
    return ordered
