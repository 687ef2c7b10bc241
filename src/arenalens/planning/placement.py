"""Shared placement step of the order-based planners: buffers in a given order → offsets.

Each buffer is put into a gap between the already-placed buffers it conflicts with (buffers not
live at a common step are transparent), either the lowest gap that fits (*first fit*) or the
smallest gap that fits (*best fit*, Pisarchyk & Lee 2020, "Efficient Memory Management for Deep
Neural Net Inference", arXiv 2001.03288, "Greedy by Size" for offset calculation); when no gap
fits, above the highest conflicting end. Fixed (offline) buffers are placed first at their own
offsets. Offsets are aligned to `Problem.alignment`.
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Iterable, Sequence

from arenalens.planning.problem import Buffer, Problem, align_up


class Fit(enum.Enum):
    """How a gap is chosen among those that fit."""

    FIRST = "first"  # the lowest offset that fits
    BEST = "best"  # the smallest gap that fits; ties go to the lower offset


def place_in_order(
    problem: Problem, order: Iterable[int], *, fit: Fit = Fit.FIRST
) -> dict[int, int]:
    """Problem + buffer ids in placement order → offsets (fixed buffers first, then order)."""
    placed = _Placed()
    offsets: dict[int, int] = {}
    by_id = problem.by_id
    for buffer in sorted(problem.buffers, key=lambda b: b.id):
        if buffer.fixed_offset is not None:
            offsets[buffer.id] = buffer.fixed_offset
            placed.add(buffer, buffer.fixed_offset)
    for buffer_id in order:
        buffer = by_id[buffer_id]
        if buffer.fixed_offset is not None:
            continue
        offset = choose_offset(buffer, placed.conflicting(buffer), problem.alignment, fit)
        offsets[buffer.id] = offset
        placed.add(buffer, offset)
    missing = [b.id for b in problem.buffers if b.id not in offsets]
    if missing:
        raise ValueError(f"placement order leaves buffers {missing[:10]} unplaced")
    return offsets


def choose_offset(
    buffer: Buffer, conflicting: Sequence[tuple[int, int]], alignment: int, fit: Fit
) -> int:
    """Offset for buffer among conflicting (offset, end) ranges sorted by offset."""
    if buffer.size == 0:
        return 0
    best: int | None = None
    best_gap = 0
    cursor = 0
    for offset, end in conflicting:
        candidate = align_up(cursor, alignment)
        if candidate + buffer.size <= offset:
            if fit is Fit.FIRST:
                return candidate
            gap = offset - candidate
            if best is None or gap < best_gap:
                best, best_gap = candidate, gap
        cursor = max(cursor, end)
    if best is not None:
        return best
    return align_up(cursor, alignment)


class _Placed:
    """Placed buffers, each as (offset, end, start step, end step), sorted by offset."""

    def __init__(self) -> None:
        self.entries: list[tuple[int, int, int, int]] = []

    def add(self, buffer: Buffer, offset: int) -> None:
        if buffer.size:
            bisect.insort(self.entries, (offset, offset + buffer.size, buffer.start, buffer.end))

    def conflicting(self, buffer: Buffer) -> list[tuple[int, int]]:
        return [
            (offset, end)
            for offset, end, start, stop in self.entries
            if not (buffer.start > stop or start > buffer.end)
        ]
