"""The file order: operators as the model lists them (the baseline every reorderer must beat)."""

from __future__ import annotations

from arenalens.reorder.registry import register_reorderer
from arenalens.reorder.schedule import ScheduleProblem


@register_reorderer("file", description="operators in file order (what the runtimes do)")
def file_order(problem: ScheduleProblem) -> list[int]:
    """ScheduleProblem → operators 0..N-1."""
    return list(range(problem.op_count))
