"""First fit in start order: buffers as they appear on the timeline, each at the lowest gap.

Source: the classic online first-fit allocator (Knuth, TAOCP vol. 1 §2.5), as a dynamic storage
allocator would see the buffers at run time: by start step, larger first among equal starts, each
at the lowest offset free of the buffers it conflicts with.
"""

from __future__ import annotations

from arenalens.planning.placement import Fit, place_in_order
from arenalens.planning.problem import Problem
from arenalens.planning.registry import register_planner


@register_planner(
    "first_fit",
    description="in start-step order, each at the lowest offset that fits (first fit)",
    source="online first-fit (Knuth, TAOCP vol. 1 §2.5)",
)
def first_fit(problem: Problem) -> dict[int, int]:
    """Problem → offsets, buffers by start step, lowest fitting gap."""
    order = sorted(problem.buffers, key=lambda b: (b.start, -b.size, b.id))
    return place_in_order(problem, [b.id for b in order], fit=Fit.FIRST)
