"""Greedy by size (offsets): largest buffer first, each into the smallest conflicting gap that fits.

Source: Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net Inference" (arXiv
2001.03288, 2020), "Greedy by Size" for offset calculation; the same algorithm is TFLite's GPU
`GreedyBySizeAssignment` (*tflite/delegates/gpu/common/memory_management/
greedy_by_size_assignment.cc*).
Ties (equal sizes) go to the earlier start step, then the lower id.
"""

from __future__ import annotations

from arenalens.planning.placement import Fit, place_in_order
from arenalens.planning.problem import Problem
from arenalens.planning.registry import register_planner


@register_planner(
    "greedy_by_size",
    description="largest first, each into the smallest gap that fits (best fit)",
    source="Pisarchyk & Lee 2020 (arXiv 2001.03288), offsets; TFLite GPU GreedyBySizeAssignment",
)
def greedy_by_size(problem: Problem) -> dict[int, int]:
    """Problem → offsets, buffers by size descending, best-fit gaps."""
    order = sorted(problem.buffers, key=lambda b: (-b.size, b.start, b.id))
    return place_in_order(problem, [b.id for b in order], fit=Fit.BEST)
