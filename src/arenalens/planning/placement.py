"""Shared placement step of the order-based planners: buffers in a given order → offsets.

Each buffer is put into a gap between the already-placed buffers it conflicts with (buffers not
live at a common step are transparent), either the lowest gap that fits (*first fit*) or the
smallest gap that fits (*best fit*, Pisarchyk & Lee 2020, "Efficient Memory Management for Deep
Neural Net Inference", arXiv 2001.03288, "Greedy by Size" for offset calculation); when no gap
fits, above the highest conflicting end. Fixed (offline) buffers are placed first at their own
offsets. Offsets are aligned to `Problem.alignment`.

An allowed overlap (`Overlap`) with a placed partner changes the byte range that partner blocks:
an output may start as low as `offset(input) - distance`, so a placed input blocks the output
only from `offset(input) + size(output) - distance`; a placed output blocks an input only over
its own first `distance` bytes. The ranges stay "forbidden where the new buffer would share a
byte", so the gap search is unchanged.

Finding the conflicting buffers scans every placed buffer (O(n) per buffer). In Python that made
a 10,000-operator chain take seconds, so large problems use an index from `offset_index`: the
interval index when few buffers are live together, or numpy arrays sorted by offset (the gap
chosen with array operations) when many are. Same offsets either way.
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Iterable, Sequence

from arenalens.planning.offset_index import (
    IndexKind,
    IntervalIndex,
    OffsetIndex,
    align_up_array,
    index_kind,
)
from arenalens.planning.problem import Buffer, Overlap, Problem, align_up


class Fit(enum.Enum):
    """How a gap is chosen among those that fit."""

    FIRST = "first"  # the lowest offset that fits
    BEST = "best"  # the smallest gap that fits; ties go to the lower offset


def place_in_order(
    problem: Problem, order: Iterable[int], *, fit: Fit = Fit.FIRST
) -> dict[int, int]:
    """Problem + buffer ids in placement order → offsets (fixed buffers first, then order)."""
    kind = index_kind(problem)
    placed: _Placed | _PlacedIntervals | _PlacedArrays
    if kind is IndexKind.ARRAYS:
        placed = _PlacedArrays(len(problem.buffers))
    elif kind is IndexKind.INTERVALS:
        placed = _PlacedIntervals(problem.buffers)
    else:
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
        partners = _placed_partners(problem, buffer, offsets)
        if partners:
            ranges = _with_overlaps(buffer, placed.ranges(buffer), partners)
            offset = choose_offset(buffer, ranges, problem.alignment, fit)
        else:
            offset = placed.choose(buffer, problem.alignment, fit)
        offsets[buffer.id] = offset
        placed.add(buffer, offset)
    missing = [b.id for b in problem.buffers if b.id not in offsets]
    if missing:
        raise ValueError(f"placement order leaves buffers {missing[:10]} unplaced")
    return offsets


def _placed_partners(
    problem: Problem, buffer: Buffer, offsets: dict[int, int]
) -> list[tuple[Buffer, int, Overlap]]:
    """Placed buffers live with `buffer` that it may overlap: (partner, its offset, overlap)."""
    found: list[tuple[Buffer, int, Overlap]] = []
    for overlap in problem.overlaps_by_buffer.get(buffer.id, ()):
        partner_id = overlap.input if overlap.output == buffer.id else overlap.output
        partner = problem.by_id[partner_id]
        if partner_id in offsets and partner.size and partner.conflicts_with(buffer):
            found.append((partner, offsets[partner_id], overlap))
    return found


def _with_overlaps(
    buffer: Buffer,
    ranges: Sequence[tuple[int, int]],
    partners: Sequence[tuple[Buffer, int, Overlap]],
) -> list[tuple[int, int]]:
    """Blocked (offset, end) ranges with each partner's range narrowed to what it really blocks.

    A range (low, high) forbids offsets x with x + size > low and x < high; narrowed ranges may
    have low > high and still forbid (low - size, high); empty ones are dropped.
    """
    adjusted = list(ranges)
    for partner, offset, overlap in partners:
        if (offset, offset + partner.size) in adjusted:
            adjusted.remove((offset, offset + partner.size))
        if overlap.output == buffer.id:
            # x may go down to offset - distance: blocked where x > offset - distance.
            distance = min(overlap.min_offset_distance, buffer.size)
            low, high = offset - distance + buffer.size, offset + partner.size
        else:
            # The input may start `distance` above the output: blocked where x < offset + distance.
            distance = min(overlap.min_offset_distance, partner.size)
            low, high = offset, offset + distance
        if low - buffer.size + 1 < high:  # some integer offset is forbidden
            adjusted.append((low, high))
    adjusted.sort()
    return adjusted


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

    def ranges(self, buffer: Buffer) -> list[tuple[int, int]]:
        return self.conflicting(buffer)

    def choose(self, buffer: Buffer, alignment: int, fit: Fit) -> int:
        return choose_offset(buffer, self.conflicting(buffer), alignment, fit)


class _PlacedIntervals:
    """The same placed buffers for large problems with few buffers live at once."""

    def __init__(self, buffers: Sequence[Buffer]) -> None:
        self.index = IntervalIndex(buffers)

    def add(self, buffer: Buffer, offset: int) -> None:
        if buffer.size:
            self.index.add(buffer, offset)

    def ranges(self, buffer: Buffer) -> list[tuple[int, int]]:
        return [(o, o + size) for o, size in self.index.live(buffer.start, buffer.end)]

    def choose(self, buffer: Buffer, alignment: int, fit: Fit) -> int:
        return choose_offset(buffer, self.ranges(buffer), alignment, fit)


class _PlacedArrays:
    """The same placed buffers for large problems: numpy arrays sorted by offset."""

    def __init__(self, capacity: int) -> None:
        self.index = OffsetIndex(capacity)

    def add(self, buffer: Buffer, offset: int) -> None:
        if buffer.size:
            self.index.add(buffer, offset)

    def ranges(self, buffer: Buffer) -> list[tuple[int, int]]:
        offsets, sizes = self.index.live(buffer.start, buffer.end)
        return [(int(o), int(o + size)) for o, size in zip(offsets, sizes, strict=True)]

    def choose(self, buffer: Buffer, alignment: int, fit: Fit) -> int:
        """choose_offset, vectorised: the cursor before each entry is a running maximum."""
        if buffer.size == 0:
            return 0
        offsets, sizes = self.index.live(buffer.start, buffer.end)
        if not len(offsets):
            return 0
        import numpy as np  # noqa: PLC0415 - the array path only (see offset_index)

        reach = np.maximum.accumulate(offsets + sizes)
        before = np.empty_like(reach)
        before[0] = 0
        before[1:] = reach[:-1]
        candidates = align_up_array(before, alignment)
        fitting = np.flatnonzero(candidates + buffer.size <= offsets)
        if not len(fitting):
            return align_up(int(reach[-1]), alignment)
        if fit is Fit.FIRST:
            return int(candidates[fitting[0]])
        gaps = offsets[fitting] - candidates[fitting]
        return int(candidates[fitting[int(np.argmin(gaps))]])  # first smallest: lowest offset
