"""Indexes of placed buffers for the placement planners: "which placed buffers are live together
with this one, in offset order?", asked once per buffer.

TFLM's GreedyMemoryPlanner and LiteRT's SimpleMemoryArena both answer it by walking every placed
buffer (O(n) per buffer, O(n²) in all). Two indexes do better, each where the other is slow:

* `IntervalIndex`: a segment tree over steps finds just the k live buffers, which are then
  sorted: O(log n + k log k) in Python. Fast while few buffers are live together (chains, U-Nets:
  a 100,000-operator chain plans in about a second); minutes when thousands are.
* `OffsetIndex`: the placed buffers in int64 numpy arrays sorted by (offset, placement order);
  one vectorised mask returns the live ones already in that order: the runtimes' own O(n) walk,
  in C. Fast when thousands of buffers are live together (one operator with 20,000 outputs).

`index_kind` picks one from the problem's shape: the arrays when many buffers are live at once
relative to the problem's size (an array scan costs about a hundredth of a Python step per
buffer), the intervals otherwise, and neither for small problems, where a plain scan is fastest.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING

from arenalens.planning.problem import Buffer, Problem
from arenalens.planning.segment_tree import SegmentTree

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Int64Array = npt.NDArray[np.int64]

# numpy is imported by the array index alone: most problems never need it, and importing it
# costs more than planning a 10,000-operator chain.

# Below this many buffers a plain scan of the placed buffers is fastest.
MIN_BUFFERS = 512
# The arrays win when more than one buffer in this many is live at the busiest step.
ARRAY_DENSITY = 100
# IntervalIndex keeps per-step lists while the buffers' lifetimes add up to at most this many
# steps per buffer (a chain: 2), else a segment tree.
AREA_PER_BUFFER = 32
# Offsets and ends must stay well inside int64; larger totals (hostile shapes) use the exact
# Python paths.
MAX_BYTES = 1 << 61


class IndexKind(enum.Enum):
    """Which index a placement planner should use for a problem."""

    SCAN = "scan"  # small problem (or buffers live at no step): the planner's plain path
    INTERVALS = "intervals"
    ARRAYS = "arrays"


def index_kind(problem: Problem) -> IndexKind:
    """The index that answers this problem's placement queries fastest (same answers)."""
    if problem.buffer_count < MIN_BUFFERS:  # (the buffers are made only past this)
        return IndexKind.SCAN
    buffers = problem.buffers
    if any(b.end < b.start for b in buffers):
        # Live at no step: the planners' own paths each treat them their own way.
        return IndexKind.SCAN
    total = sum(b.size + problem.alignment for b in buffers)
    highest_fixed = max((b.fixed_offset or 0 for b in buffers), default=0)
    fits_int64 = total + highest_fixed < MAX_BYTES
    if fits_int64 and ARRAY_DENSITY * max_live_buffers(buffers) > len(buffers):
        return IndexKind.ARRAYS
    return IndexKind.INTERVALS


def use_offset_index(problem: Problem) -> bool:
    """True when the arrays are the fastest index for this problem."""
    return index_kind(problem) is IndexKind.ARRAYS


def max_live_buffers(buffers: Sequence[Buffer]) -> int:
    """Most sized buffers live at one step (a sweep over starts and ends)."""
    starts = sorted([b.start for b in buffers if b.size])
    stops = sorted([b.end + 1 for b in buffers if b.size])  # the first step a buffer is gone
    most = stopped = 0
    count = len(stops)
    for started, step in enumerate(starts, start=1):
        # Live once this buffer starts: those started so far less those gone by its step.
        while stopped < count and stops[stopped] <= step:
            stopped += 1
        most = max(most, started - stopped)
    return most


class OffsetIndex:
    """Placed buffers sorted by (offset, placement order); `live` answers one placement query."""

    def __init__(self, capacity: int) -> None:
        import numpy as np  # noqa: PLC0415 - the array path only (see the imports)

        self.count = 0
        self.offsets = np.zeros(capacity, dtype=np.int64)
        self.sizes = np.zeros(capacity, dtype=np.int64)
        self.starts = np.zeros(capacity, dtype=np.int64)
        self.ends = np.zeros(capacity, dtype=np.int64)

    def add(self, buffer: Buffer, offset: int) -> None:
        """Record a placed buffer after every buffer at the same offset (placement order)."""
        import numpy as np  # noqa: PLC0415 - the array path only (see the imports)

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


class IntervalIndex:
    """Placed buffers indexed by step, for sparse live sets.

    A placed buffer is live together with [start, end] iff it contains step `start` or begins in
    (start, end]; the two sets are disjoint. Steps are ranked (the distinct starts and ends).
    The index takes one of two forms, fixed from the buffers' total lifetime in ranks (their
    *area*):

    * small area: per rank, the placed buffers live there and those that begin there; a
      placement costs its lifetime, a query the ranks it spans (a 10,000-operator U-Net places
      in a few milliseconds);
    * otherwise: a segment tree over the ranks (stabbing query) and a start-sorted list (range
      query), O(log n) per placement and query whatever the lifetimes.

    `live` returns (offset, size) pairs in (offset, placement order) order.
    """

    def __init__(self, buffers: Sequence[Buffer]) -> None:
        self.steps = sorted({b.start for b in buffers} | {b.end for b in buffers})
        self.rank_of = {step: rank for rank, step in enumerate(self.steps)}
        ranks = max(1, len(self.steps))
        area = sum(max(0, self.rank_of[b.end] - self.rank_of[b.start] + 1) for b in buffers)
        # Per-rank lists while the area stays within this many ranks per buffer.
        self.by_rank = area <= AREA_PER_BUFFER * max(1, len(buffers))
        self.tree: SegmentTree[tuple[int, int, int]] = SegmentTree(ranks)
        self.live_at: list[list[tuple[int, int, int]]] = (
            [[] for _ in range(ranks)] if self.by_rank else []
        )
        self.starting_at: list[list[tuple[int, int, int]]] = (
            [[] for _ in range(ranks)] if self.by_rank else []
        )
        # (start rank, entry number), sorted; a SortedList, since inserting into a plain list
        # moves O(n) pointers each time (quadratic at 100,000 buffers). Imported here: only
        # problems of thousands of buffers make an index, and a check need not load it.
        from sortedcontainers import SortedList  # noqa: PLC0415

        self.starts = SortedList()
        self.entries: list[tuple[int, int, int]] = []  # (offset, entry number, size)

    def add(self, buffer: Buffer, offset: int) -> None:
        """Record a placed buffer (live at no step when its end is before its start: then only
        queries whose range holds its start report it, as the runtimes' walks do)."""
        number = len(self.entries)
        entry = (offset, number, buffer.size)
        self.entries.append(entry)
        low, high = self.rank_of[buffer.start], self.rank_of[buffer.end]
        if self.by_rank:
            self.starting_at[low].append(entry)
            for lists in self.live_at[low : high + 1]:
                lists.append(entry)
            return
        self.tree.add(low, high, entry)
        self.starts.add((low, number))

    def live(self, start: int, end: int) -> list[tuple[int, int]]:
        """(offset, size) of placed buffers live at some step of [start, end], in order."""
        low, high = self.rank_of[start], self.rank_of[end]
        if self.by_rank:
            found = list(self.live_at[low])
            for beginning in self.starting_at[low + 1 : high + 1]:
                found.extend(beginning)
        else:
            found = self.tree.at(low)
            first = self.starts.bisect_right((low, len(self.entries)))
            last = self.starts.bisect_right((high, len(self.entries)))
            found.extend(self.entries[number] for _, number in self.starts.islice(first, last))
        found.sort()
        return [(offset, size) for offset, _, size in found]


def align_up_array(values: Int64Array, alignment: int) -> Int64Array:
    """align_up for every element."""
    if alignment == 1:
        return values
    aligned: Int64Array = -(-values // alignment) * alignment
    return aligned


__all__ = [
    "MAX_BYTES",
    "MIN_BUFFERS",
    "IndexKind",
    "IntervalIndex",
    "OffsetIndex",
    "align_up_array",
    "index_kind",
    "max_live_buffers",
    "use_offset_index",
]
