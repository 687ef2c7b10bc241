"""LiteRT's SimpleMemoryArena: best fit among gaps between live buffers, in the runtime's order.

Source: *tflite/simple_memory_arena.cc — SimpleMemoryArena::Allocate* (docs/runtime-rules.md
§L6). Buffers are placed one at a time in `problem.order` (LiteRT's sorted tensor list, which
the runtime module computes from its hash sets and `std::sort`). For each buffer of size s over
steps [f, l]:

1. walk the placed buffers in offset order (ties: earlier placed first), skipping those not live
   together with [f, l]; `cur` starts at 0;
2. at each conflicting entry e: `a = align_up(cur)`; if `a + s <= e.offset` and
   `e.offset - a < best_fit`, remember `a` and set `best_fit = e.offset - cur` — the runtime
   stores the gap measured from the *unaligned* cur (a quirk kept on purpose); then
   `cur = max(cur, e.offset + e.size)`;
3. with no fitting gap, place at `align_up(cur)`.

Sizes are not padded. A zero-size buffer gets offset 0 and is not recorded.

Speed: the runtime scans every placed buffer; only conflicting ones matter, so this version
finds them with an interval index (a segment tree over the distinct steps for buffers that
contain the new start, plus a start-sorted list for those beginning inside the new interval)
and sorts just those k by (offset, placement order): O(k log k) per buffer instead of O(n)
(`offset_index.IntervalIndex`).
When thousands of buffers are live together (one operator with 20,000 outputs), k log k per
buffer in Python takes minutes, so large problems use `offset_index` (the placed buffers in
numpy arrays sorted by offset) and do the scan as array operations (the runtime's own O(n) per
buffer, in C); only gaps that fit are visited in Python. Same offsets either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from arenalens.planning.offset_index import (
    IntervalIndex,
    OffsetIndex,
    align_up_array,
    use_offset_index,
)
from arenalens.planning.problem import Buffer, Problem, align_up, refuse_fixed_offsets
from arenalens.planning.registry import register_planner

# LiteRT's kNodeNotAssigned (INT32_MAX): a buffer ending here is never freed.
NEVER_FREED = 2**31 - 1


@register_planner(
    "litert_arena",
    description="LiteRT SimpleMemoryArena: best fit among gaps of live buffers, runtime order",
    source="tflite/simple_memory_arena.cc — SimpleMemoryArena::Allocate",
    replicates_runtime="litert",
)
def litert_arena(problem: Problem) -> dict[int, int]:
    """Problem (+ order) → offsets exactly as LiteRT's SimpleMemoryArena assigns them."""
    # Placing them in sort order could overlap buffers placed earlier; LiteRT itself has no
    # offline plans, so there is nothing to replicate.
    refuse_fixed_offsets(
        problem, "litert_arena", "LiteRT's ArenaPlanner has no offline-planned offsets"
    )
    order = placement_order(problem)
    if use_offset_index(problem):
        return _place_with_arrays(problem, order)
    placed = IntervalIndex(problem.buffers)
    alignment = problem.alignment
    return _place(
        problem, order, placed, lambda b: best_fit_offset(b, placed.live(b.start, b.end), alignment)
    )


def _place_with_arrays(problem: Problem, order: Sequence[int]) -> dict[int, int]:
    """The same placement for large problems, the live buffers from `offset_index` arrays."""
    arrays = OffsetIndex(len(order))
    alignment = problem.alignment
    return _place(problem, order, arrays, lambda b: _best_fit_in_arrays(b, arrays, alignment))


def _place(
    problem: Problem,
    order: Sequence[int],
    placed: IntervalIndex | OffsetIndex,
    best_fit: Callable[[Buffer], int],
) -> dict[int, int]:
    """Place buffers in order at best_fit(buffer), recording each in `placed` (zero-size buffers
    get offset 0 and are not recorded, as in SimpleMemoryArena)."""
    by_id = problem.by_id
    offsets: dict[int, int] = {}
    for buffer_id in order:
        buffer = by_id[buffer_id]
        if buffer.size == 0:
            offsets[buffer_id] = 0
            continue
        offset = best_fit(buffer)
        offsets[buffer_id] = offset
        placed.add(buffer, offset)
    return offsets


def placement_order(problem: Problem) -> list[int]:
    """Buffer ids in the order they are placed: `problem.order`, completed by the comparator."""
    by_id = problem.by_id
    listed = list(dict.fromkeys(b for b in problem.order if b in by_id))
    # Buffers the order does not name (a filtered or extended problem) follow, in the runtime
    # comparator's order; unknown ids in the order are ignored.
    named = set(listed)
    rest = [b for b in by_id if b not in named]
    return listed + list(default_litert_order(by_id[b] for b in rest))


def _best_fit_in_arrays(buffer: Buffer, index: OffsetIndex, alignment: int) -> int:
    """best_fit_offset over the placed buffers live together with this one, vectorised."""
    offsets, sizes = index.live(buffer.start, buffer.end)
    if not len(offsets):
        return 0
    import numpy as np  # noqa: PLC0415 - the array path only (see offset_index)

    reach = np.maximum.accumulate(offsets + sizes)
    before = np.empty_like(reach)  # the runtime's `cur` when it reaches each entry
    before[0] = 0
    before[1:] = reach[:-1]
    aligned = align_up_array(before, alignment)
    best: int | None = None
    best_fit: int | None = None
    for position in np.flatnonzero(aligned + buffer.size <= offsets).tolist():
        offset, start = int(offsets[position]), int(aligned[position])
        if best_fit is None or offset - start < best_fit:
            best = start
            best_fit = offset - int(before[position])  # from the unaligned cursor, as above
    return align_up(int(reach[-1]), alignment) if best is None else best


def best_fit_offset(buffer: Buffer, conflicting: Sequence[tuple[int, int]], alignment: int) -> int:
    """Best-fit offset for buffer among conflicting (offset, size) pairs, in offset order (ties:
    placement order)."""
    best: int | None = None
    best_fit: int | None = None  # None stands for the runtime's "+infinity"
    current = 0
    for offset, size in conflicting:
        aligned = align_up(current, alignment)
        if aligned + buffer.size <= offset and (best_fit is None or offset - aligned < best_fit):
            best = aligned
            best_fit = offset - current  # measured from the unaligned cursor, as the runtime does
        current = max(current, offset + size)
    return align_up(current, alignment) if best is None else best


def default_litert_order(buffers: Iterable[Buffer]) -> tuple[int, ...]:
    """LiteRT's comparator as a total order (ties broken by id; the runtime's are unstable).

    Whole-run buffers (start 0, never freed) first by id; then larger size first; then earlier
    start first.
    """

    def key(buffer: Buffer) -> tuple[int, int, int, int]:
        whole = buffer.start <= 0 and buffer.end >= NEVER_FREED
        if whole:
            return (0, 0, 0, buffer.id)
        return (1, -buffer.size, buffer.start, buffer.id)

    return tuple(b.id for b in sorted(buffers, key=key))
