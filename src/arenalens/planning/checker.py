"""The independent plan checker: Problem + offsets → None, or PlanError naming the culprits.

It checks, without trusting any planner: every buffer has an offset >= 0; fixed (offline) offsets
are honoured; other offsets respect the alignment; no two buffers live at a common step share a
byte, except a pair the Problem allows to overlap (`Overlap`) placed with at least its minimal
offset distance; and the declared arena size is the highest end. Two *fixed* buffers may overlap:
offline plans (Vela) share bytes on purpose and the runtime never checks them, so diagnostics
report that instead.

The overlap test sweeps steps in order, keeping the live online buffers that take part in no
allowed overlap sorted by offset: they never overlap each other, so a new buffer is compared with
its two neighbours only. The usual plan (every buffer online, no overlap allowed, no alignment)
is proven valid by that sweep over plain columns first (`_plain_arena_size`); any other plan, and
any fault, is judged in full, which names the fault. Fixed buffers, and online buffers that may
overlap a partner, may share bytes and are searched through max segment trees, each byte-range
hit judged by the pair's rule. O(n log n) in all, even when thousands of buffers are live at once
(a hostile 20,000-output operator took minutes before).
"""

from __future__ import annotations

import bisect
import heapq
import operator
from collections.abc import Iterator, Mapping, Sequence
from itertools import compress
from operator import add, sub
from typing import cast

from arenalens.errors import PlanError
from arenalens.planning.problem import Buffer, Problem, arena_size
from arenalens.units import format_bytes_exact

# The order buffers are checked in: by first step, then id.
_START_AND_ID = operator.attrgetter("start", "id")
_SIZE = operator.attrgetter("size")
_FIRST = operator.itemgetter(0)
# The plain check goes step by step while the steps, and the steps the buffers live at, number
# under this many per buffer (`_shares_a_byte_at_a_step`); else it sweeps (`_highest_end`).
_STEPS_PER_BUFFER = 4


def check_plan(
    problem: Problem, offsets: Mapping[int, int], declared_size: int | None = None
) -> None:
    """Raise PlanError if offsets do not form a valid placement of problem."""
    if _plain_arena_size(problem, offsets) is None:
        # Anything else, or a fault: judged in full, and the fault named.
        _check_offsets(problem, offsets)
        _check_overlaps(problem, offsets)
    if declared_size is not None:
        needed = arena_size(problem, offsets)
        if declared_size != needed:
            raise PlanError(
                f"plan declares an arena of {format_bytes_exact(declared_size)} but its "
                f"buffers end at {needed:,}"
            )


def checked_arena_size(problem: Problem, offsets: Mapping[int, int]) -> int:
    """`check_plan`, then the arena the offsets need (`problem.arena_size`): for the usual plan
    the check's own sweep finds the highest end (a pass over every buffer costs more)."""
    size = _plain_arena_size(problem, offsets)
    if size is None:
        _check_offsets(problem, offsets)
        _check_overlaps(problem, offsets)
        size = arena_size(problem, offsets)
    return size


def _plainly_valid(problem: Problem, offsets: Mapping[int, int]) -> bool:
    """True when the usual plan is valid (`_plain_arena_size`)."""
    return _plain_arena_size(problem, offsets) is not None


def _plain_arena_size(problem: Problem, offsets: Mapping[int, int]) -> int | None:
    """The arena the usual plan needs (its highest end) when it is valid: no buffer fixed, no
    overlap allowed, no alignment to keep, every offset a plain int >= 0, every buffer live at
    a step, and no two buffers live at a common step sharing a byte. None for anything else
    and for any fault: `check_plan` then judges it in full and names the fault.

    Step by step where the steps are few (`_shares_a_byte_at_a_step`: most plans), else one
    sweep over the sized buffers by first step, with the live ones' offsets in a sorted list and
    their ends by offset (two live buffers never share an offset: they would share a byte): a
    new buffer can only collide with its two neighbours. Live buffers leave in order of their
    last step (a sorted list, no heap): those that ended before the new one's first step have
    all begun before it."""
    ids, starts, ends, sizes, fixed = problem.columns  # the planner's too
    if problem.alignment != 1 or problem.overlaps or not ids:
        return None
    given = list(map(offsets.get, ids))
    if fixed.count(None) != len(fixed) or set(map(type, given)) != {int}:
        return None
    placed = cast("list[int]", given)
    if min(placed) < 0 or min(map(sub, ends, starts)) < 0:
        return None
    last = max(ends)
    if (
        min(starts) >= 0
        and last < _STEPS_PER_BUFFER * len(ids)
        and sum(map(sub, ends, starts)) < _STEPS_PER_BUFFER * len(ids)
    ):
        # The usual plan: a few buffers live at each of a few steps.
        if _shares_a_byte_at_a_step(starts, ends, placed, sizes, last + 1):
            return None
        size: int = max(map(add, placed, sizes))
        return size
    # Sorted by their first int alone (a sort of tuples compares them item by item): the order
    # of buffers that begin (or leave) at one step does not change what the sweep finds.
    rows = sorted(compress(zip(starts, ends, placed, sizes, strict=True), sizes), key=_FIRST)
    leaving = sorted(compress(zip(ends, placed, strict=True), sizes), key=_FIRST)  # by last step
    highest = _highest_end(rows, leaving) if rows else 0
    if highest is None:
        return None
    if len(rows) != len(placed):  # a buffer of 0 bytes: its offset may be the highest end
        highest = max(map(add, placed, sizes))
    return highest


def _shares_a_byte_at_a_step(
    starts: Sequence[int],
    ends: Sequence[int],
    placed: Sequence[int],
    sizes: Sequence[int],
    steps: int,
) -> bool:
    """True when two sized buffers live at a common step (0..steps-1) share a byte: per step,
    its live buffers' (offset, end) sorted; each must begin at or after the one before ends
    (then they are disjoint). Without `_highest_end`'s two bisects and list edits per buffer:
    an append per step a buffer lives at (two for the usual one) and a sort of a few entries
    per step."""
    live_at: list[list[tuple[int, int]]] = [[] for _ in range(steps)]
    for start, end, offset, size in zip(starts, ends, placed, sizes, strict=True):
        if not size:
            continue  # no byte to share
        entry = (offset, offset + size)
        if end == start + 1:  # the usual buffer: written at one step, read at the next
            live_at[start].append(entry)
            live_at[end].append(entry)
        else:
            for live in live_at[start : end + 1]:
                live.append(entry)
    for live in live_at:
        if len(live) > 1:
            live.sort()
            reach = 0
            for offset, end in live:
                if offset < reach:
                    return True
                reach = end
    return False


def _highest_end(
    rows: list[tuple[int, int, int, int]], leaving: list[tuple[int, int]]
) -> int | None:
    """The sweep of `_plain_arena_size`: the sized buffers' rows (first step, last step, offset,
    size) by first step and their (last step, offset) by last step → their highest end, or None
    when two live at a common step share a byte."""
    last_steps, leaving_offsets = zip(*leaving, strict=True)
    gone = 0
    live_offsets: list[int] = []  # sorted
    # Offset → the end of the buffer last placed there: the live one, for every offset in
    # `live_offsets` (an entry left by a buffer gone is overwritten before it is read again).
    end_at: dict[int, int] = {}
    search = bisect.bisect_left
    highest = 0
    for start, _, offset, size in rows:
        # The row's own entry in `leaving` ends at or after `start`: the scan stops there.
        while last_steps[gone] < start:
            del live_offsets[search(live_offsets, leaving_offsets[gone])]
            gone += 1
        position = search(live_offsets, offset)
        if position and end_at[live_offsets[position - 1]] > offset:
            return None
        end = offset + size
        if position < len(live_offsets) and live_offsets[position] < end:
            return None
        live_offsets.insert(position, offset)
        end_at[offset] = end
        if end > highest:  # noqa: PLR1730 - a call per buffer costs more than the test
            highest = end
    return highest


def _check_offsets(problem: Problem, offsets: Mapping[int, int]) -> None:
    buffers = problem.buffers
    alignment = problem.alignment
    get = offsets.get
    for buffer in buffers:
        offset = get(buffer.id)
        # The usual buffer in one test each; anything else (no offset, a fixed offset moved, an
        # int subclass, a misaligned one) is judged, and named, by `_judge_offsets`.
        if type(offset) is int and offset >= 0:
            fixed = buffer.fixed_offset
            if fixed is None:
                if alignment == 1 or not buffer.size or not offset % alignment:
                    continue
            elif offset == fixed:
                continue
        _judge_offsets(problem, offsets)
        return


def _judge_offsets(problem: Problem, offsets: Mapping[int, int]) -> None:
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
    offsets = dict(offsets)  # a plain dict: read several times per buffer
    placed = sorted(filter(_SIZE, problem.buffers), key=_START_AND_ID)
    by_id = problem.by_id
    in_pairs = problem.overlaps_by_buffer
    ending: list[tuple[int, int]] = []  # heap of (end step, buffer id) for live buffers
    # Live online buffers without allowed overlaps as (offset, id), sorted; they never overlap
    # each other (each was checked on entry), so a new buffer can only collide with its two
    # neighbours in this list.
    online: list[tuple[int, int]] = []
    fixed = _LiveRanges([b for b in placed if b.fixed_offset is not None], offsets)
    flexible = _LiveRanges(
        [b for b in placed if b.fixed_offset is None and b.id in in_pairs], offsets
    )
    # Without fixed or flexible buffers (the usual case) only the online neighbours can collide.
    searched_by_online = tuple(ranges for ranges in (fixed, flexible) if ranges.ids)
    for buffer in placed:
        while ending and ending[0][0] < buffer.start:
            _, gone = heapq.heappop(ending)
            gone_buffer = by_id[gone]
            if gone_buffer.fixed_offset is not None:
                fixed.set_live(gone, live=False)
            elif gone in in_pairs:
                flexible.set_live(gone, live=False)
            else:
                del online[bisect.bisect_left(online, (offsets[gone], gone))]
        offset = offsets[buffer.id]
        low, high = offset, offset + buffer.size
        _check_against_online(buffer, offset, online, by_id)
        is_fixed = buffer.fixed_offset is not None
        if not is_fixed and buffer.id not in in_pairs:
            # No allowed overlap: any shared byte with a fixed or flexible buffer is an error.
            for ranges in searched_by_online:
                other_id = ranges.any_overlapping(low, high)
                if other_id is not None:
                    raise _overlap_error(by_id[other_id], offsets[other_id], buffer, offset)
            bisect.insort(online, (offset, buffer.id))
        else:
            # Fixed buffers may share bytes with each other (offline plans do it on purpose).
            searched = (flexible,) if is_fixed else (fixed, flexible)
            for ranges in searched:
                for other_id in ranges.all_overlapping(low, high):
                    if not _allowed(problem, offsets, buffer.id, other_id):
                        raise _overlap_error(
                            by_id[other_id], offsets[other_id], buffer, offset, problem
                        )
            (fixed if is_fixed else flexible).set_live(buffer.id, live=True)
        heapq.heappush(ending, (buffer.end, buffer.id))


def _allowed(problem: Problem, offsets: Mapping[int, int], first: int, second: int) -> bool:
    """True when two buffers that share bytes are an allowed overlap placed far enough apart."""
    overlap = problem.overlap_between(first, second)
    if overlap is None:
        return False
    return overlap.allows(offsets[overlap.output], offsets[overlap.input])


def _check_against_online(
    buffer: Buffer, offset: int, online: list[tuple[int, int]], by_id: Mapping[int, Buffer]
) -> None:
    position = bisect.bisect_left(online, (offset, -1))
    if position > 0:
        below_offset, below_id = online[position - 1]
        if below_offset + by_id[below_id].size > offset:
            raise _overlap_error(by_id[below_id], below_offset, buffer, offset)
    if position < len(online):
        above_offset, above_id = online[position]
        if above_offset < offset + buffer.size:
            raise _overlap_error(by_id[above_id], above_offset, buffer, offset)


def _overlap_error(
    other: Buffer, other_offset: int, buffer: Buffer, offset: int, problem: Problem | None = None
) -> PlanError:
    low, high = max(offset, other_offset), min(offset + buffer.size, other_offset + other.size)
    first, last = max(buffer.start, other.start), min(buffer.end, other.end)
    rule = ""
    overlap = problem.overlap_between(other.id, buffer.id) if problem is not None else None
    if overlap is not None:
        placed = {other.id: other_offset, buffer.id: offset}
        distance = placed[overlap.input] - placed[overlap.output]
        rule = (
            f" (allowed only with buffer {overlap.output} at least "
            f"{format_bytes_exact(overlap.min_offset_distance)} below buffer {overlap.input}; "
            f"it is {format_bytes_exact(distance)})"
        )
    return PlanError(
        f"buffers {other.id} and {buffer.id}{rule} share bytes [{low}, {high}) at steps "
        f"{first}-{last} (buffer {other.id}: [{other_offset}, {other_offset + other.size}) "
        f"steps {other.start}-{other.end}; buffer {buffer.id}: [{offset}, "
        f"{offset + buffer.size}) steps {buffer.start}-{buffer.end})"
    )


class _LiveRanges:
    """Live buffers that may overlap each other, searchable by byte range in O(log n).

    A max segment tree over the buffers sorted by offset holds each live buffer's end offset (-1
    when not live); "does any live buffer starting below `high` end above `low`" is a
    prefix-maximum query.
    """

    def __init__(self, buffers: list[Buffer], offsets: Mapping[int, int]) -> None:
        ordered = sorted(buffers, key=lambda b: (offsets[b.id], b.id))
        self.starts = [offsets[b.id] for b in ordered]
        self.ends = [offsets[b.id] + b.size for b in ordered]
        self.ids = [b.id for b in ordered]
        self.slot = {b.id: position for position, b in enumerate(ordered)}
        self.width = 1
        while self.width < max(1, len(ordered)):
            self.width *= 2
        self.tree = [-1] * (2 * self.width)

    def set_live(self, buffer_id: int, *, live: bool) -> None:
        position = self.slot[buffer_id]
        node = self.width + position
        self.tree[node] = self.ends[position] if live else -1
        node //= 2
        while node:
            self.tree[node] = max(self.tree[2 * node], self.tree[2 * node + 1])
            node //= 2

    def any_overlapping(self, low: int, high: int) -> int | None:
        """Id of a live buffer sharing a byte with [low, high) (the lowest offset), or None."""
        return next(self.all_overlapping(low, high), None)

    def all_overlapping(self, low: int, high: int) -> Iterator[int]:
        """Ids of every live buffer sharing a byte with [low, high), lowest offset first."""
        count = bisect.bisect_left(self.starts, high)  # buffers starting below `high`
        # Descend, preferring the left child; only subtrees inside the prefix [0, count) count.
        stack = [(1, 0, self.width)]
        while stack:
            node, left, right = stack.pop()
            if left >= count or self.tree[node] <= low:
                continue
            if right - left == 1:
                yield self.ids[left]
                continue
            middle = (left + right) // 2
            stack.append((2 * node + 1, middle, right))
            stack.append((2 * node, left, middle))
