"""Placed buffers as numpy arrays sorted by offset: the runtimes' offset-ordered list, scanned in C.

TFLM's GreedyMemoryPlanner and LiteRT's SimpleMemoryArena both place a buffer by walking every
placed buffer in offset order, skipping those not live at a common step (O(n) per buffer, O(n²)
in all). Their replicas here find the live ones with an interval index and sort them, which is
fast while few buffers are live together but takes minutes when thousands are (one operator with
20,000 outputs). For large problems this index keeps the placed buffers in int64 arrays sorted
by (offset, placement order) and returns the live ones already in that order with one vectorised
mask: the runtimes' own O(n) walk per buffer, run in C.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from arenalens.planning.problem import Buffer, Problem

# Below this many buffers the planners' interval indexes are faster than array scans.
MIN_BUFFERS = 512
# Offsets and ends must stay well inside int64; larger totals (hostile shapes) use the exact
# Python paths.
MAX_BYTES = 1 << 61

Int64Array = npt.NDArray[np.int64]


def use_offset_index(problem: Problem) -> bool:
    """True when a problem is large enough to gain from the arrays and small enough for int64.

    Buffers that end before they start (live at no step) are left to the planners' own paths,
    whose indexes each treat them their own way.
    """
    if len(problem.buffers) < MIN_BUFFERS:
        return False
    if any(b.end < b.start for b in problem.buffers):
        return False
    total = sum(b.size + problem.alignment for b in problem.buffers)
    highest_fixed = max((b.fixed_offset or 0 for b in problem.buffers), default=0)
    return total + highest_fixed < MAX_BYTES


class OffsetIndex:
    """Placed buffers sorted by (offset, placement order); `live` answers one placement query."""

    def __init__(self, capacity: int) -> None:
        self.count = 0
        self.offsets = np.zeros(capacity, dtype=np.int64)
        self.sizes = np.zeros(capacity, dtype=np.int64)
        self.starts = np.zeros(capacity, dtype=np.int64)
        self.ends = np.zeros(capacity, dtype=np.int64)

    def add(self, buffer: Buffer, offset: int) -> None:
        """Record a placed buffer after every buffer at the same offset (placement order)."""
        count = self.count
        position = int(np.searchsorted(self.offsets[:count], offset, side="right"))
        for array, value in (
            (self.offsets, offset),
            (self.sizes, buffer.size),
            (self.starts, buffer.start),
            (self.ends, buffer.end),
        ):
            array[position + 1 : count + 1] = array[position:count]
            array[position] = value
        self.count = count + 1

    def live(self, start: int, end: int) -> tuple[Int64Array, Int64Array]:
        """(offsets, sizes) of placed buffers live at some step of [start, end], in order."""
        count = self.count
        mask = (self.starts[:count] <= end) & (self.ends[:count] >= start)
        return self.offsets[:count][mask], self.sizes[:count][mask]


def align_up_array(values: Int64Array, alignment: int) -> Int64Array:
    """align_up for every element."""
    if alignment == 1:
        return values
    aligned: Int64Array = -(-values // alignment) * alignment
    return aligned


__all__ = ["MAX_BYTES", "MIN_BUFFERS", "OffsetIndex", "align_up_array", "use_offset_index"]
