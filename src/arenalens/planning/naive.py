"""No reuse: every buffer gets its own bytes, end to end in id order (the baseline to beat)."""

from __future__ import annotations

import operator

from arenalens.planning.problem import Problem, align_up
from arenalens.planning.registry import register_planner


@register_planner(
    "naive",
    description="no reuse: buffers end to end in id order (TFLM's LinearMemoryPlanner shape)",
    source="baseline",
)
def naive(problem: Problem) -> dict[int, int]:
    """Problem → offsets with every buffer after the previous one, fixed buffers kept."""
    offsets: dict[int, int] = {}
    cursor = 0
    fixed_end = max(
        (b.fixed_offset + b.size for b in problem.buffers if b.fixed_offset is not None),
        default=0,
    )
    # Online buffers start above every fixed one, so they never collide with an offline plan.
    cursor = fixed_end
    for buffer in sorted(problem.buffers, key=operator.attrgetter("id")):
        if buffer.fixed_offset is not None:
            offsets[buffer.id] = buffer.fixed_offset
            continue
        offset = align_up(cursor, problem.alignment)
        offsets[buffer.id] = offset
        cursor = offset + buffer.size
    return offsets
