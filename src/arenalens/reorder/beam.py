"""Heuristic reordering for graphs too wide for the exact search: a beam search over prefixes.

Each round extends every kept prefix by every ready operator; prefixes that ran the same set of
operators are merged (the live bytes depend only on that set, `state.py`), and the `width` best by
(peak so far, bytes live now, set) survive. Width 1 is the greedy rule "run the operator that keeps
memory lowest"; wider beams look past a temporarily costly branch. Linear in the operator count
for a fixed width; `time_limit_s` shrinks the width when the graph is large.

Source: beam search (Lowerre 1976) applied to the memory-aware scheduling objective of Liberis &
Lane (arXiv 1910.05110) and of SERENITY (Ahn et al., arXiv 2003.02369, 2020).
"""

from __future__ import annotations

import time

from arenalens.reorder.registry import ReorderOutput, register_reorderer
from arenalens.reorder.schedule import ScheduleProblem
from arenalens.reorder.state import advance, compile_problem, ready

# (peak so far, live bytes, done mask, live tensors, order)
_Entry = tuple[int, int, int, frozenset[int], tuple[int, ...]]


@register_reorderer(
    "beam",
    description="beam search over operator prefixes, merged by executed set (heuristic)",
    source="beam search on the Liberis & Lane objective (arXiv 1910.05110)",
)
def beam(problem: ScheduleProblem, *, width: int = 32, time_limit_s: float = 5.0) -> ReorderOutput:
    """ScheduleProblem → an order found by beam search (not proven optimal)."""
    compiled = compile_problem(problem)
    deadline = time.perf_counter() + time_limit_s
    live = compiled.initial_live
    live_bytes = sum(compiled.tensor_bytes[t] for t in live)
    frontier: list[_Entry] = [(compiled.initial_bytes, live_bytes, 0, live, ())]
    current_width = max(1, width)
    # The greedy finish gets as long again; past that, the rest runs in file order (valid: the
    # prefix is closed under dependencies). A round costs (ready operators × live tensors), so
    # a graph with a thousand operators ready at once would otherwise take minutes.
    hard_deadline = deadline + time_limit_s
    for _ in range(compiled.op_count):
        now = time.perf_counter()
        if current_width > 1 and now > deadline:
            current_width = 1  # out of time: finish greedily
        if now > hard_deadline:
            _, _, done, _, order = frontier[0]
            rest = [op for op in range(compiled.op_count) if not done >> op & 1]
            return ReorderOutput(
                order=[*order, *rest],
                notes=(
                    f"beam search out of time after {len(order)} operators; rest in file order",
                ),
                stats={"width": current_width},
            )
        merged: dict[int, _Entry] = {}
        for peak, held, done, tensors, order in frontier:
            for op in ready(compiled, done):
                after, next_live, next_bytes, running = advance(compiled, done, tensors, held, op)
                entry = (max(peak, running), next_bytes, after, next_live, (*order, op))
                known = merged.get(after)
                if known is None or entry[:2] < known[:2]:
                    merged[after] = entry
        frontier = sorted(merged.values(), key=lambda e: (e[0], e[1], e[2]))[:current_width]
    return ReorderOutput(order=list(frontier[0][4]), stats={"width": current_width})
