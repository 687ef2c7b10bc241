"""XNNPACK's memory planner (*src/memory-planner.c*: xnn_plan_value_allocation_tracker): the
usage records runtime.c's xnn_plan_memory makes of a runtime's workspace values and its
operators' own workspaces (xnnpack_workspace) placed in one arena, largest first, each at the
smallest gap that fits among the records already placed whose node ranges overlap it."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """One runtime's plan: its arena's bytes (0: nothing placed), the records placed (sized
    values not reused in place and sized operator workspaces), the lowest model tensor among
    its workspace values (None: none), how many workspace values the nodes add of their
    own (numbered after the model's tensors, in the order they are defined) and the rank of
    the first of them in that order (None: none)."""

    arena: int
    placed: int
    first_tensor: int | None
    added: int
    first_added: int | None = None


def plan_records(records: Sequence[tuple[int, int, int]]) -> int:
    """xnn_plan_value_allocation_tracker: (bytes, first node, last node) → arena bytes.
    Largest first (ties keep their value order), each at the smallest gap that fits among the
    records already placed whose node ranges overlap it, else after the highest."""
    order = sorted(range(len(records)), key=lambda i: -records[i][0])
    offsets: dict[int, int] = {}
    arena = 0
    # The records placed so far, found without looking at each one (a 20,000-node chain would
    # be quadratic): a short one (fewer than _SHORT_RANGE nodes) by the node it starts at, since
    # one that overlaps [first, last] starts in [first - _SHORT_RANGE, last]; the rest in a list.
    short_by_start: dict[int, list[int]] = {}
    long: list[int] = []
    for index in order:
        size, first, last = records[index]
        live = [
            (offsets[other], offsets[other] + records[other][0])
            for other in long
            if _overlap(records[index], records[other])
        ]
        for start in range(first - _SHORT_RANGE, last + 1):
            for other in short_by_start.get(start, ()):
                if records[other][2] >= first:
                    live.append((offsets[other], offsets[other] + records[other][0]))
        live.sort()
        offsets[index] = _smallest_gap(live, size)
        arena = max(arena, offsets[index] + size)
        if 0 <= last - first < _SHORT_RANGE:
            short_by_start.setdefault(first, []).append(index)
        else:
            long.append(index)
    return arena


_SHORT_RANGE = 16  # nodes: most values live a few nodes; a longer one is checked directly


def _overlap(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    if a[1] < b[1]:
        return a[2] >= b[1]
    return b[2] >= a[1]


def _smallest_gap(live: Sequence[tuple[int, int]], size: int) -> int:
    if not live:
        return 0
    merged = [list(live[0])]
    for start, end in live[1:]:
        if start > merged[-1][1]:
            merged.append([start, end])
        elif end > merged[-1][1]:
            merged[-1][1] = end
    offset, best = merged[-1][1], None
    if merged[0][0] >= size:
        offset, best = 0, merged[0][0]
    for before, after in itertools.pairwise(merged):
        gap = after[0] - before[1]
        if gap >= size and (best is None or gap < best):
            offset, best = before[1], gap
    return offset
