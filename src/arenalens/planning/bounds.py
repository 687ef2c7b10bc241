"""Lower bounds on the arena of a Problem that hold for every valid plan."""

from __future__ import annotations

from arenalens.planning.problem import Problem, overlap_savings


def sound_lower_bound(problem: Problem) -> int:
    """A lower bound valid even when fixed buffers share bytes on purpose.

    `Problem.lower_bound()` sums sizes; fixed (offline) buffers may overlap, so here they count by
    the union of their byte ranges at each step, and the highest fixed end is a bound too.
    Allowed overlaps subtract what they can save at each step (`overlap_savings`).
    """
    fixed = [b for b in problem.buffers if b.fixed_offset is not None and b.size]
    online = [b for b in problem.buffers if b.fixed_offset is None and b.size]
    if not any(b.fixed_offset is not None for b in problem.buffers):
        return problem.lower_bound()
    savings = overlap_savings(problem)
    steps = sorted(
        {b.start for b in problem.buffers if b.size}
        | ({b.end + 1 for b in problem.buffers if b.size} if problem.overlaps else set())
    )
    # arena_size counts every buffer's end, zero-byte fixed ones included.
    best = max(
        (b.fixed_offset + b.size for b in problem.buffers if b.fixed_offset is not None),
        default=0,
    )
    for step in steps:
        online_bytes = sum(b.size for b in online if b.start <= step <= b.end)
        ranges = sorted(
            (b.fixed_offset, b.fixed_offset + b.size)
            for b in fixed
            if b.start <= step <= b.end and b.fixed_offset is not None
        )
        covered, reach = 0, 0
        for low, high in ranges:
            start = max(low, reach)
            if high > start:
                covered += high - start
                reach = high
        best = max(best, online_bytes + covered - savings.at(step))
    return best
