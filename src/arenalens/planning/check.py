"""The independent plan checker: Problem + offsets → None, or PlanError naming the culprits.

It checks, without trusting any planner: every buffer has an offset >= 0; fixed (offline) offsets
are honoured; other offsets respect the alignment; no two buffers live at a common step share a
byte; and the declared arena size is the highest end. Two *fixed* buffers may overlap: offline plans
(Vela) share bytes on purpose and the runtime never checks them, so diagnostics report that instead.

The overlap test sweeps steps in order, keeping the live buffers sorted by offset, so it costs
O(n log n + n·k) for k buffers live at once rather than O(n²).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Mapping

from arenalens.errors import PlanError
from arenalens.planning.problem import Buffer, Problem, arena_size


def check_plan(
    problem: Problem, offsets: Mapping[int, int], declared_size: int | None = None
) -> None:
    """Raise PlanError if offsets do not form a valid placement of problem."""
    _check_offsets(problem, offsets)
    _check_overlaps(problem, offsets)
    if declared_size is not None:
        needed = arena_size(problem, offsets)
        if declared_size != needed:
            raise PlanError(
                f"plan declares an arena of {declared_size} bytes but its buffers end at {needed}"
            )


def _check_offsets(problem: Problem, offsets: Mapping[int, int]) -> None:
    missing = [b.id for b in problem.buffers if b.id not in offsets]
    if missing:
        raise PlanError(f"plan has no offset for buffers {missing[:10]}")
    for buffer in problem.buffers:
        offset = offsets[buffer.id]
        if not isinstance(offset, int) or offset < 0:
            raise PlanError(f"buffer {buffer.id} has invalid offset {offset!r}")
        if buffer.fixed_offset is not None:
            if offset != buffer.fixed_offset:
                raise PlanError(
                    f"buffer {buffer.id} is fixed at offset {buffer.fixed_offset} "
                    f"but the plan puts it at {offset}"
                )
        elif buffer.size and offset % problem.alignment:
            raise PlanError(
                f"buffer {buffer.id} at offset {offset} breaks the "
                f"{problem.alignment}-byte alignment"
            )


def _check_overlaps(problem: Problem, offsets: Mapping[int, int]) -> None:
    placed = sorted((b for b in problem.buffers if b.size), key=lambda b: (b.start, b.id))
    ending: list[tuple[int, int]] = []  # heap of (end step, buffer id) for live buffers
    live: list[tuple[int, int]] = []  # (offset, buffer id), sorted by offset
    by_id = problem.by_id
    for buffer in placed:
        while ending and ending[0][0] < buffer.start:
            _, gone = heapq.heappop(ending)
            live.remove((offsets[gone], gone))
        offset = offsets[buffer.id]
        _check_against_live(buffer, offset, live, by_id)
        bisect.insort(live, (offset, buffer.id))
        heapq.heappush(ending, (buffer.end, buffer.id))


def _check_against_live(
    buffer: Buffer,
    offset: int,
    live: list[tuple[int, int]],
    by_id: Mapping[int, Buffer],
) -> None:
    # Live buffers starting before offset + size are the only candidates; scan them.
    stop = bisect.bisect_left(live, (offset + buffer.size, -1))
    for other_offset, other_id in live[:stop]:
        other = by_id[other_id]
        if other_offset + other.size <= offset:
            continue
        if buffer.fixed_offset is not None and other.fixed_offset is not None:
            continue
        low, high = max(offset, other_offset), min(offset + buffer.size, other_offset + other.size)
        first, last = max(buffer.start, other.start), min(buffer.end, other.end)
        raise PlanError(
            f"buffers {other_id} and {buffer.id} share bytes [{low}, {high}) at steps "
            f"{first}-{last} (buffer {other_id}: [{other_offset}, {other_offset + other.size}) "
            f"steps {other.start}-{other.end}; buffer {buffer.id}: [{offset}, "
            f"{offset + buffer.size}) steps {buffer.start}-{buffer.end})"
        )
