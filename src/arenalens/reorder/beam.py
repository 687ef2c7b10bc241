"""Heuristic reordering for graphs too wide for the exact search: a beam search over prefixes.

Each round extends every kept prefix by every ready operator; prefixes that ran the same set of
operators are merged (the live bytes depend only on that set, `state.py`), and the `width` best by
(peak so far, bytes live now, set) survive. Width 1 is the greedy rule "run the operator that keeps
memory lowest"; wider beams look past a temporarily costly branch. Linear in the operator count
for a fixed width. Its `effort` (`arenalens.effort`) is counted work (the operator steps tried,
each by what it costs: `reorder.state.advance_work`): once spent the beam narrows to the greedy
width 1, and past twice that the rest runs in file order, so a wide graph ends in bounded work
with the same order on every machine.

Source: beam search (Lowerre 1976) applied to the memory-aware scheduling objective of Liberis &
Lane (arXiv 1910.05110) and of SERENITY (Ahn et al., arXiv 2003.02369, 2020).
"""

from __future__ import annotations

from arenalens.effort import REORDER_WORK, deadline, past, steps
from arenalens.reorder.registry import ReorderOutput, register_reorderer
from arenalens.reorder.schedule import ScheduleProblem
from arenalens.reorder.state import advance, advance_work, compile_problem, ready, ready_work

# (peak so far, live bytes, done mask, live tensors, order)
_Entry = tuple[int, int, int, frozenset[int], tuple[int, ...]]


@register_reorderer(
    "beam",
    description="beam search over operator prefixes, merged by executed set (heuristic)",
    source="beam search on the Liberis & Lane objective (arXiv 1910.05110)",
)
def beam(
    problem: ScheduleProblem,
    *,
    width: int = 32,
    effort: float = 5.0,
    time_limit_s: float | None = None,
) -> ReorderOutput:
    """ScheduleProblem → an order found by beam search (not proven optimal)."""
    compiled = compile_problem(problem)
    budget = steps(effort, REORDER_WORK)
    step_work, scan_work = advance_work(compiled), ready_work(compiled)
    end = deadline(time_limit_s)
    live = compiled.initial_live
    live_bytes = sum(compiled.tensor_bytes[t] for t in live)
    frontier: list[_Entry] = [(compiled.initial_bytes, live_bytes, 0, live, ())]
    current_width = max(1, width)
    work = 0
    # The greedy finish gets as much work again; past that, the rest runs in file order (valid:
    # the prefix is closed under dependencies). A round costs (ready operators × live tensors),
    # so a graph with a thousand operators ready at once would otherwise take minutes.
    for _ in range(compiled.op_count):
        if current_width > 1 and work > budget:
            current_width = 1  # effort spent: finish greedily
        if work > 2 * budget or past(end):
            _, _, done, _, order = frontier[0]
            rest = [op for op in range(compiled.op_count) if not done >> op & 1]
            return ReorderOutput(
                order=[*order, *rest],
                notes=(
                    f"beam search out of effort after {len(order)} operators; rest in file order",
                ),
                stats={"width": current_width},
            )
        merged: dict[int, _Entry] = {}
        for peak, held, done, tensors, order in frontier:
            work += scan_work
            for op in ready(compiled, done):
                work += step_work
                after, next_live, next_bytes, running = advance(compiled, done, tensors, held, op)
                entry = (max(peak, running), next_bytes, after, next_live, (*order, op))
                known = merged.get(after)
                if known is None or entry[:2] < known[:2]:
                    merged[after] = entry
        frontier = sorted(merged.values(), key=lambda e: (e[0], e[1], e[2]))[:current_width]
    return ReorderOutput(order=list(frontier[0][4]), stats={"width": current_width})
