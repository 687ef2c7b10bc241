"""Greedy by breadth (offsets): visit steps from the busiest down, placing each step's buffers.

Source: Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net Inference" (arXiv
2001.03288, 2020), "Greedy by Breadth", in its offset-calculation form: steps are
visited in order of decreasing *breadth* (bytes live at the step); at each step its not yet placed
buffers are placed largest first, each into the smallest conflicting gap that fits. The busiest
step is packed first and tightly, so it usually lands at the lower bound.
"""

from __future__ import annotations

import bisect
import itertools

from arenalens.planning.placement import Fit, place_in_order
from arenalens.planning.problem import Buffer, Problem
from arenalens.planning.registry import register_planner
from arenalens.planning.segment_tree import SegmentTree


@register_planner(
    "greedy_by_breadth",
    description="busiest step first; its buffers largest first into the smallest gap that fits",
    source="Pisarchyk & Lee 2020 (arXiv 2001.03288), offsets",
)
def greedy_by_breadth(problem: Problem) -> dict[int, int]:
    """Problem → offsets, buffers grouped by their busiest step, best-fit gaps."""
    return place_in_order(problem, breadth_order(problem), fit=Fit.BEST)


def breadth_order(problem: Problem) -> list[int]:
    """Buffer ids: steps by breadth descending (ties: earlier step), each step's buffers by size.

    Breadths come from one sweep over the buffers' starts and ends, and each step's buffers from
    a segment tree over the steps whose node lists are emptied as they are read (every buffer is
    handed out once): O(n log n) where recomputing both per step was O(steps × n).
    """
    live = [b for b in problem.buffers if b.size and b.fixed_offset is None]
    # Steps where the live set can change are the buffer starts; the breadth between two such
    # points is constant, so visiting every start step is enough.
    steps = sorted({b.start for b in live})
    breadth = _breadths(live, steps)
    tree = _step_tree(steps, live)
    ordered: list[int] = []
    seen: set[int] = set()
    for position in sorted(range(len(steps)), key=lambda p: (-breadth[p], steps[p])):
        here = [b for b in tree.at(position, take=True) if b.id not in seen]
        for buffer in sorted(here, key=lambda b: (-b.size, b.start, b.id)):
            ordered.append(buffer.id)
            seen.add(buffer.id)
    ordered.extend(b.id for b in sorted(problem.buffers, key=lambda b: b.id) if b.id not in seen)
    return ordered


def _breadths(live: list[Buffer], steps: list[int]) -> list[int]:
    """Bytes live at each step (start <= step <= end), by prefix sums over starts and ends."""
    starts = sorted((b.start, b.size) for b in live)
    ends = sorted((b.end + 1, b.size) for b in live)
    start_keys = [step for step, _ in starts]
    end_keys = [step for step, _ in ends]
    started = list(itertools.accumulate((size for _, size in starts), initial=0))
    ended = list(itertools.accumulate((size for _, size in ends), initial=0))
    return [
        started[bisect.bisect_right(start_keys, step)] - ended[bisect.bisect_right(end_keys, step)]
        for step in steps
    ]


def _step_tree(steps: list[int], buffers: list[Buffer]) -> SegmentTree[Buffer]:
    """Buffers by the positions (in `steps`) of the steps they are live at: starts inside
    [start, end]."""
    tree: SegmentTree[Buffer] = SegmentTree(len(steps))
    for buffer in buffers:
        low = bisect.bisect_left(steps, buffer.start)
        high = bisect.bisect_right(steps, buffer.end) - 1
        tree.add(low, high, buffer)
    return tree
