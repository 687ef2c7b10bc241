"""TFLM's LinearMemoryPlanner: Problem → buffers end to end in submission (id) order, no reuse.

Source: tflite-micro *memory_planner/linear_memory_planner.cc* (docs/runtime-rules.md §T8).
TFLM uses it under `preserve_all_tensors` (Python `kPreserveAllTensors`), so every tensor keeps its
bytes after Invoke; the head is then the sum of all rounded sizes. It has no offline `AddBuffer`, so
TFLM fails on a model with an offline plan, and this planner refuses fixed offsets the same way.
It holds at most 1024 buffers in TFLM; that limit belongs to the runtime rules, not to the plan.
"""

from __future__ import annotations

from arenalens.planning.problem import Problem, align_up, refuse_fixed_offsets
from arenalens.planning.registry import register_planner


@register_planner(
    "tflm_linear",
    description="TFLite Micro's LinearMemoryPlanner (preserve_all_tensors): no reuse, id order",
    source="tflite-micro memory_planner/linear_memory_planner.cc",
    replicates_runtime="tflm",
    in_portfolio=False,
)
def tflm_linear(problem: Problem) -> dict[int, int]:
    """Problem → offsets with each buffer right after the previous one, in id order."""
    refuse_fixed_offsets(
        problem,
        "tflm_linear",
        "TFLM's LinearMemoryPlanner has no offline AddBuffer, so the runtime fails on offline "
        "plans",
    )
    offsets: dict[int, int] = {}
    cursor = 0
    for buffer in sorted(problem.buffers, key=lambda b: b.id):
        offset = align_up(cursor, problem.alignment)
        offsets[buffer.id] = offset
        cursor = offset + buffer.size
    return offsets
