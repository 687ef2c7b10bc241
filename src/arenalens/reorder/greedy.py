"""Greedy reordering: step by step, run the ready operator that leaves the fewest bytes live.

The working-set rule of tflite-tools (github.com/eliberis/tflite-tools): among the operators
whose predecessors have all run (data, variable and resource dependencies alike: the problem's
`predecessors`), run the one whose outputs add the fewest bytes net of the inputs it is the last
to read (which it frees); ties go to the lowest operator index, so a chain keeps its order and
the result is deterministic. One pass, no search and no clock: it costs (ready operators ×
their operands) per step, and may miss the best order that `exact` finds.
"""

from __future__ import annotations

from arenalens.reorder.registry import register_reorderer
from arenalens.reorder.schedule import ScheduleProblem


@register_reorderer(
    "greedy",
    description="at each step the ready operator that leaves the fewest bytes live (heuristic)",
    source="the working-set rule of tflite-tools (github.com/eliberis/tflite-tools)",
)
def greedy(problem: ScheduleProblem) -> list[int]:
    """ScheduleProblem → a valid order, chosen one operator at a time (not proven optimal)."""
    readers_left = {tensor: set(ops) for tensor, ops in problem.readers.items()}
    waiting = [len(required) for required in problem.predecessors]
    followers: list[list[int]] = [[] for _ in range(problem.op_count)]
    for op, required in enumerate(problem.predecessors):
        for earlier in required:
            followers[earlier].append(op)
    ready = {op for op, count in enumerate(waiting) if count == 0}
    order: list[int] = []
    while ready:
        best = min(ready, key=lambda op: (_added_bytes(problem, op, readers_left), op))
        ready.discard(best)
        order.append(best)
        for tensor in problem.op_inputs[best]:
            readers_left[tensor].discard(best)
        for later in followers[best]:
            waiting[later] -= 1
            if waiting[later] == 0:
                ready.add(later)
    return order


def _added_bytes(problem: ScheduleProblem, op: int, readers_left: dict[int, set[int]]) -> int:
    """Bytes live after running op minus before: its outputs, less the inputs it reads last."""
    added = sum(problem.tensor_bytes[tensor] for tensor in problem.op_outputs[op])
    freed = sum(
        problem.tensor_bytes[tensor]
        for tensor in problem.op_inputs[op]
        if tensor not in problem.kept and readers_left.get(tensor) == {op}
    )
    return added - freed
