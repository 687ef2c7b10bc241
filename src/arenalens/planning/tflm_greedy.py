"""TFLM's GreedyMemoryPlanner, byte for byte: Problem → the offsets the device will use.

Source: tflite-micro *memory_planner/greedy_memory_planner.cc — CalculateOffsetsIfNeeded*
(docs/runtime-rules.md §T6). The algorithm:

1. Order. Buffers with a fixed (offline) offset come first, in id order. The others follow by size,
   largest first; among equal sizes the *higher* id first (TFLM lists them in reverse submission
   order, then bubble-sorts by size, swapping only on a strict `<`).
2. Placement. Fixed buffers take their offset, unchecked. Every other buffer is first fit from
   offset 0: walk the placed buffers that are live at a common step in offset order, keeping a
   cursor c (the highest end seen so far, starting at 0); stop at the first one whose offset is at
   least c + size and place there, else place at c after the walk.

TFLM walks its whole offset-ordered list for every buffer (O(n²)). The walk only ever looks at
buffers live together with the new one, and ties between equal offsets cannot change the result
(an entry that does not fit raises c past every entry at its offset), so this module finds just
those buffers with an interval index (`offset_index.IntervalIndex`) and sorts them by offset:
O(n·(log n + k log k)) for k buffers live together. A 20,000-operator chain plans in a fraction of
a second. When thousands of buffers are live together (one operator with 20,000 outputs), k log k
per buffer takes minutes in Python, so large problems use `offset_index` instead: the runtime's
own walk, vectorised (same offsets).

TFLM rounds sizes before planning and never aligns offsets; for a Problem whose alignment is above 1
the cursor is rounded up to it, which changes nothing when the alignment is 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import itemgetter, sub

from arenalens.planning.offset_index import (
    AREA_PER_BUFFER,
    IntervalIndex,
    OffsetIndex,
    align_up_array,
    use_offset_index,
)
from arenalens.planning.problem import Buffer, Problem, align_up
from arenalens.planning.registry import register_planner

# The processing order's sort keys (`_in_processing_order`).
_SIZE, _ID = itemgetter(0), itemgetter(1)


@register_planner(
    "tflm_greedy",
    description="TFLite Micro's GreedyMemoryPlanner: size-descending first fit from offset 0",
    source="tflite-micro memory_planner/greedy_memory_planner.cc",
    replicates_runtime="tflm",
)
def tflm_greedy(problem: Problem) -> dict[int, int]:
    """Problem → offsets exactly as GreedyMemoryPlanner computes them (id = planner index)."""
    if use_offset_index(problem):
        return _place_with_arrays(problem)
    by_steps = _place_by_steps(problem)
    return by_steps if by_steps is not None else _place_with_intervals(problem)


def _place_with_intervals(problem: Problem) -> dict[int, int]:
    """The placement, live buffers found through `IntervalIndex` (long lifetimes)."""
    placed = IntervalIndex(problem.buffers)
    alignment = problem.alignment
    offsets: dict[int, int] = {}
    for buffer in greedy_processing_order(problem.buffers):
        if buffer.fixed_offset is not None:
            offset = buffer.fixed_offset
        elif buffer.end < buffer.start:
            offset = 0  # live at no step: nothing conflicts
        else:
            live_together = placed.live(buffer.start, buffer.end)  # in offset order
            offset = first_fit_offset(buffer.size, live_together, alignment)
        offsets[buffer.id] = offset
        placed.add(buffer, offset)
    return offsets


def _place_by_steps(
    problem: Problem, area_per_buffer: int = AREA_PER_BUFFER
) -> dict[int, int] | None:
    """The placement with `IntervalIndex`'s per-step lists written out (the usual model: a few
    buffers live at each step), or None when the lifetimes are too long for them.

    Per ranked step: the placed (offset, end) live there and those that begin there (the end
    rounded up to the alignment, as the walk's cursor is); a buffer meets those live at its first
    step and those beginning later in its lifetime (one begun before its first step and live
    there is in the first list: none is met twice). Entries are sorted by (offset, end), not
    placement order: ties at one offset do not change a first fit (the module's docstring)."""
    ids, starts, ends, sizes, fixed = problem.columns  # the checker reads them too
    if not ids:
        return {}
    steps = sorted({*starts, *ends})
    lows: Sequence[int] = starts
    highs: Sequence[int] = ends
    if steps[0] != 0 or steps[-1] != len(steps) - 1:
        # Steps with gaps (or negative): ranked. The usual TFLM timeline's steps are already
        # 0..n-1, each its own rank, and ranking them costs a dict and two maps per plan.
        rank_of = dict(zip(steps, range(len(steps)), strict=True))
        lows = list(map(rank_of.__getitem__, starts))
        highs = list(map(rank_of.__getitem__, ends))
    # Ranks the lifetimes span (one less per buffer live at no step): which path is faster.
    if sum(map(sub, highs, lows)) + len(ids) > area_per_buffer * len(ids):
        return None
    live_at: list[list[tuple[int, int]]] = [[] for _ in steps]
    starting_at: list[list[tuple[int, int]]] = [[] for _ in steps]
    alignment = problem.alignment
    offsets: dict[int, int] = {}
    # One tuple per buffer, in processing order; the first fit written inline (a call per
    # buffer cost a fifth of the planner on VWW's 34 buffers).
    for size, buffer_id, low, high, fixed_offset in _in_processing_order(
        problem, lows, highs, ids=ids, sizes=sizes, fixed=fixed
    ):
        if fixed_offset is not None:
            offset = fixed_offset
        elif high < low:
            offset = 0  # live at no step: nothing conflicts
        else:
            if high == low + 1:  # the usual buffer: written at one step, read at the next
                found = live_at[low] + starting_at[high]
                found.sort()
            elif high > low:
                found = live_at[low][:]
                for later in starting_at[low + 1 : high + 1]:
                    found += later
                found.sort()
            else:
                found = sorted(live_at[low])
            offset = 0  # the cursor: the highest end of the entries walked so far
            for other_offset, other_end in found:
                # A gap is measured from the running highest end: a negative one never fits.
                if other_offset - offset >= size:
                    break
                if other_end > offset:  # noqa: PLR1730 - a call per entry costs more than the test
                    offset = other_end
        offsets[buffer_id] = offset
        entry = (offset, offset + size if alignment == 1 else align_up(offset + size, alignment))
        starting_at[low].append(entry)
        if high == low + 1:
            live_at[low].append(entry)
            live_at[high].append(entry)
        else:
            for live in live_at[low : high + 1]:
                live.append(entry)
    return offsets


def _in_processing_order(
    problem: Problem,
    lows: Sequence[int],
    highs: Sequence[int],
    *,
    ids: Sequence[int],
    sizes: Sequence[int],
    fixed: Sequence[int | None],
) -> list[tuple[int, int, int, int, int | None]]:
    """(size, id, first rank, last rank, fixed offset) per buffer in `greedy_processing_order`.

    When no buffer is fixed (the usual case): the tuples made in C, sorted by id, then by size
    (a stable sort: equal sizes stay in descending id order), both descending. Two sorts by one
    int each cost half of one sort by (-size, -id), which compares tuples item by item."""
    if fixed.count(None) == len(fixed):
        rows = sorted(zip(sizes, ids, lows, highs, fixed, strict=True), key=_ID, reverse=True)
        rows.sort(key=_SIZE, reverse=True)
        return rows
    buffers = problem.buffers  # (a fixed offset: made here, if the columns came first)
    position_of = {b.id: position for position, b in enumerate(buffers)}
    positions = [position_of[b.id] for b in greedy_processing_order(buffers)]
    return [(sizes[p], ids[p], lows[p], highs[p], fixed[p]) for p in positions]


def _place_with_arrays(problem: Problem) -> dict[int, int]:
    """The same placement for large problems: the live buffers come from `offset_index`, already
    in offset order, and the first-fit walk is a running maximum over arrays."""
    index = OffsetIndex(len(problem.buffers))
    offsets: dict[int, int] = {}
    for buffer in greedy_processing_order(problem.buffers):
        if buffer.fixed_offset is not None:
            offset = buffer.fixed_offset
        else:
            offset = _first_fit_in_arrays(buffer, index, problem.alignment)
        offsets[buffer.id] = offset
        index.add(buffer, offset)
    return offsets


def _first_fit_in_arrays(buffer: Buffer, index: OffsetIndex, alignment: int) -> int:
    """first_fit_offset over the placed buffers live together with this one, vectorised."""
    if buffer.end < buffer.start:
        return 0  # live at no step: nothing conflicts
    offsets, sizes = index.live(buffer.start, buffer.end)
    if not len(offsets):
        return 0
    import numpy as np  # noqa: PLC0415 - the array path only (see offset_index)

    reach = np.maximum.accumulate(align_up_array(offsets + sizes, alignment))
    before = np.empty_like(reach)  # the cursor when the walk reaches each entry
    before[0] = 0
    before[1:] = reach[:-1]
    fitting = np.flatnonzero(offsets - before >= buffer.size)
    return int(before[fitting[0]]) if len(fitting) else int(reach[-1])


def greedy_processing_order(buffers: Iterable[Buffer]) -> list[Buffer]:
    """Buffers → the order GreedyMemoryPlanner places them: fixed by id, then (-size, -id)."""
    fixed = sorted((b for b in buffers if b.fixed_offset is not None), key=lambda b: b.id)
    online = sorted((b for b in buffers if b.fixed_offset is None), key=lambda b: (-b.size, -b.id))
    return fixed + online


def first_fit_offset(size: int, live_together: Sequence[tuple[int, int]], alignment: int) -> int:
    """(size, [(offset, size)] of placed buffers live together, in offset order) → TFLM's
    first-fit offset. Among equal offsets any order gives the same answer (see the module)."""
    cursor = 0
    for offset, other_size in live_together:
        # A gap is measured from the running highest end, so a negative gap never fits.
        if offset - cursor >= size:
            return cursor
        end = offset + other_size if alignment == 1 else align_up(offset + other_size, alignment)
        cursor = max(cursor, end)
    return cursor
