"""TFLM setup replay: a setup sequence (`setup.setup_sequence`) against an arena size → whether
`AllocateTensors` fits, its head, tail and `print_allocations()` categories, and the smallest
size from which every larger one fits.

TFLM runs inside one user array: the head grows up from its start, the tail grows down from its
end, and short-lived "temp" memory sits just above the head (docs/runtime-rules.md §T1,
§T10). Whether setup succeeds for a given `arena_size`, and the head and tail it prints, follow
from the exact sequence of allocations and their alignments, because every tail allocation rounds
the tail pointer *down* from the array's (possibly unaligned) end. `replay` reproduces:

* *SingleArenaBufferAllocator* (arena_allocator/single_arena_buffer_allocator.cc): persistent
  allocations round down and fail below the head; temp allocations round up and fail above the
  tail; the resizable head buffer needs `tail - start >= size`.
* *Kernel buffers filled while their temps are live* (`temp_overlap`): AllocatePersistentBuffer
  checks the head, not the temp end, so such a buffer may lie on the kernel's own temp
  TfLiteTensors; setup fails only at the start addresses where its written bytes hit what is read
  afterwards (`Allocation.fails_at`), so the minimal arena is the size from which every larger
  one works (a few smaller ones may too).
* *RecordingMicroAllocator* (recording_micro_allocator.cc): which allocations each
  `print_allocations()` category counts.

Two places where C and this replay part on purpose, neither ever lowering the minimal arena:

* A temp allocation that would start above the tail (only after a persistent allocation that
  went below the temp end: persistent allocations are checked against the head, not the temp
  end) wraps around in C's unsigned arithmetic and "succeeds" over the persistent data. The
  replay counts it as a failure; when the planner step that follows wraps the same way, TFLM
  faults there (keyword_scrambled's variables), and the replay's failure is the same answer.
* FinishPrepareNodeAllocations' head resize may fail without stopping setup (its status is
  ignored); the replay fails there, because the planning step later needs more room anyway.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from arenalens.runtimes.tflm import temp_overlap
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.setup_layout import (
    CATEGORY_ORDER,
    HOST_64,
    LINEAR_PLANNER_CAPACITY,
    RuntimeLayout,
)


class Action(enum.StrEnum):
    """What one step of setup does to the arena."""

    PERSISTENT = "persistent"  # tail allocation (AllocatePersistentBuffer)
    HEAD = "head"  # resize the head buffer (scratch requests; final head reservation)
    TEMP = "temp"  # temp allocation above the head
    RESET_TEMP = "reset temp"  # ResetTempAllocations: temp back to the head
    PLANNER = "planner"  # the planner takes all free memory: nbytes = buffers it must hold
    LINEAR_PLANNER = "linear planner"  # LinearMemoryPlanner: a fixed table, nbytes = buffers
    RELEASE_HEAD = "release head"  # DeallocateResizableBuffer: head back to the start


@dataclass(frozen=True, slots=True)
class Allocation:
    """One step of TFLM's setup: an allocation (or a head / temp reset) and what it is for."""

    action: Action
    nbytes: int
    alignment: int = 1
    what: str = ""
    category: str = ""  # the print_allocations() category that records it ("" = none)
    count: int = 1  # how many allocations the category counts for this one (arrays count items)
    # TEMP: which struct of a temp tensor view (temp_overlap.TENSOR, ...); PERSISTENT: the
    # runtime objects or the resource-variable table (setup.RUNTIME_OBJECTS, VARIABLE_TABLE).
    part: str = ""
    # PERSISTENT: a kernel buffer written while its temps are live (temp_overlap), and the
    # closed ranges of start addresses at which it breaks setup (set by setup_sequence).
    hazard: temp_overlap.Hazard | None = None
    fails_at: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class SetupOutcome:
    """One replay: did setup fit, where it failed, and what print_allocations() would print."""

    arena_size: int
    fits: bool
    head: int
    tail: int
    failed_at: Allocation | None = None
    # Category → (used, requested, count), only categories with bytes, in print order.
    categories: Mapping[str, tuple[int, int, int]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    @property
    def total(self) -> int:
        """Head plus tail, as 'Arena allocation total'."""
        return self.head + self.tail


def _align_down(value: int, alignment: int) -> int:
    return value - value % alignment


def _align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def replay(
    sequence: Sequence[Allocation], arena_size: int, layout: RuntimeLayout = HOST_64
) -> SetupOutcome:
    """(setup sequence, arena size) → whether TFLM's setup fits, and its head, tail, categories.

    SingleArenaBufferAllocator over [0, arena_size), the array start assumed 16-byte aligned. One
    loop with the arena in local variables: a 10,000-operator model's setup is ~60,000 steps,
    replayed twice per budget.
    """
    head = temp = 0
    tail = arena_size
    used: dict[str, int] = {}
    requested: dict[str, int] = {}
    counted: dict[str, int] = {}
    planner_bytes_per_buffer = layout.planner_bytes_per_buffer
    persistent, temporary, resize_head = Action.PERSISTENT, Action.TEMP, Action.HEAD
    reset_temp, release_head = Action.RESET_TEMP, Action.RELEASE_HEAD
    planner, linear_planner = Action.PLANNER, Action.LINEAR_PLANNER
    failed_at: Allocation | None = None
    for step in sequence:
        action = step.action
        if action is persistent:
            result = tail - step.nbytes
            result -= result % step.alignment
            if result < head or (
                # Most buffers have no failing starts: skip building the generator (hot loop).
                step.fails_at and any(low <= result <= high for low, high in step.fails_at)
            ):
                failed_at = step
                break
            category = step.category
            if category:
                used[category] = used.get(category, 0) + tail - result
                requested[category] = requested.get(category, 0) + step.nbytes
                counted[category] = counted.get(category, 0) + step.count
            tail = result
        elif action is temporary:
            start = -(-temp // step.alignment) * step.alignment
            if tail - start < step.nbytes:
                failed_at = step
                break
            temp = start + step.nbytes
        elif action is resize_head:
            # ResizeBuffer starts at the aligned array start; the array start is aligned.
            if tail < step.nbytes:
                failed_at = step
                break
            head = temp = step.nbytes
        elif action is reset_temp:
            temp = head
        elif action is release_head:
            head = temp = 0
        elif action is planner or action is linear_planner:
            available = _align_down(tail, ARENA_ALIGNMENT) - _align_up(temp, ARENA_ALIGNMENT)
            linear = action is linear_planner
            limit = LINEAR_PLANNER_CAPACITY if linear else available // planner_bytes_per_buffer
            if available < 0 or step.nbytes > limit:
                failed_at = step
                break
            temp = _align_down(tail, ARENA_ALIGNMENT)
    categories = {
        name: (used[name], requested[name], counted[name])
        for name in CATEGORY_ORDER
        if used.get(name, 0) > 0 or requested.get(name, 0) > 0
    }
    return SetupOutcome(
        arena_size,
        failed_at is None,
        max(head, temp),
        arena_size - tail,
        failed_at=failed_at,
        categories=MappingProxyType(categories),
    )


def minimal_arena_size(sequence: Sequence[Allocation], layout: RuntimeLayout = HOST_64) -> int:
    """Setup sequence → the smallest arena_size from which every larger size sets up.

    Head and temp positions count from the (aligned) array start and never depend on the size.
    Write the size as n = 16·k + r and the tail address as n - used: every alignment divides 16,
    so the tail's offset d = tail - 16·k depends on the residue r only, and every check becomes
    a lower bound `n >= value - d + r`. One pass therefore finds each residue's minimum; the
    residues share one offset d as soon as a 16-aligned tail allocation lines them up (in
    practice the first kernel buffer), after which the pass costs O(1) per step.

    A kernel buffer written over live temps (`Allocation.fails_at`) fails at some start
    addresses only; for stability its start must lie above the highest of them, one more lower
    bound. Each residue r then fits exactly from its own S_r on, so the sizes that fail are
    below max(S_r) - 15 (without such buffers fitting is monotone and this is the first size
    that fits).
    """
    needs = _residue_needs(sequence, layout.planner_bytes_per_buffer)
    firsts = [need + (residue - need) % 16 for residue, need in needs.items() if need is not None]
    if len(firsts) < len(needs):
        raise ValueError("no arena size fits this setup (a planner limit is exceeded)")
    return max(firsts) - 15


class _ResidueGroup:
    """Residues whose tail offset d currently agree: a shared running bound, and earlier ones."""

    __slots__ = ("earlier", "shared")

    def __init__(self, earlier: dict[int, int]) -> None:
        self.earlier = earlier  # residue → bound (value - d) collected before joining
        self.shared = -(1 << 62)  # bound collected since, for every residue of the group


def _residue_needs(
    sequence: Sequence[Allocation], planner_bytes_per_buffer: int
) -> dict[int, int | None]:
    """Sequence → for each residue r, the largest lower bound on the size (None: none fits)."""
    groups: dict[int, _ResidueGroup] = {r: _ResidueGroup({r: -(1 << 62)}) for r in range(16)}
    head = temp = 0
    impossible = False
    # Temp and head checks bound every group by (their end - its offset): between two tail
    # moves only the highest end matters, so it is kept here and given to the groups when the
    # offsets are about to move (or at the end), not at every step.
    highest_end = nothing = -(1 << 62)
    persistent, temporary, resize_head = Action.PERSISTENT, Action.TEMP, Action.HEAD
    reset_temp, release_head = Action.RESET_TEMP, Action.RELEASE_HEAD
    for step in sequence:
        action = step.action
        if action is persistent:
            if highest_end != nothing:
                _bound_all(groups, highest_end)
                highest_end = nothing
            groups = _move_tail(groups, step.nbytes, step.alignment, head)
            if step.fails_at:
                _bound_above_failing_starts(groups, step.fails_at)
        elif action is temporary:
            temp = -(-temp // step.alignment) * step.alignment + step.nbytes
            highest_end = max(highest_end, temp)
        elif action is resize_head:
            highest_end = max(highest_end, step.nbytes)
            head = temp = step.nbytes
        elif action is reset_temp:
            temp = head
        elif action is release_head:
            head = temp = 0
        elif action in (Action.PLANNER, Action.LINEAR_PLANNER):
            linear = action is Action.LINEAR_PLANNER
            impossible |= linear and step.nbytes > LINEAR_PLANNER_CAPACITY
            start = _align_up(temp, ARENA_ALIGNMENT)
            table = 0 if linear else step.nbytes * planner_bytes_per_buffer
            # align_down(tail, 16) - start >= table: the tail's own misalignment is lost.
            for offset, group in groups.items():
                group.shared = max(group.shared, start + table - offset + offset % 16)
            temp = start + table
    if highest_end != nothing:
        _bound_all(groups, highest_end)
    needs: dict[int, int | None] = {}
    for group in groups.values():
        for residue, earlier in group.earlier.items():
            needs[residue] = None if impossible else max(earlier, group.shared) + residue
    return dict(sorted(needs.items()))


def _bound_all(groups: dict[int, _ResidueGroup], start_relative: int) -> None:
    """A check `tail >= start_relative` for every residue: n >= start_relative - d + r."""
    for offset, group in groups.items():
        bound = start_relative - offset
        group.shared = max(group.shared, bound)


def _bound_above_failing_starts(
    groups: dict[int, _ResidueGroup], fails_at: tuple[tuple[int, int], ...]
) -> None:
    """The allocation just made (the tail, 16·k + d) must start above every failing start: the
    highest failing k of each group is a lower bound n >= 16·(k + 1) + r."""
    for offset, group in groups.items():
        for low, high in fails_at:
            highest = (high - offset) // 16
            if 16 * highest + offset >= low:
                group.shared = max(group.shared, 16 * (highest + 1))


def _move_tail(
    groups: dict[int, _ResidueGroup], nbytes: int, alignment: int, head: int
) -> dict[int, _ResidueGroup]:
    """A persistent allocation: each group's tail offset moves down; groups that meet merge."""
    moved: dict[int, _ResidueGroup] = {}
    for offset, group in groups.items():
        new_offset = offset - nbytes
        new_offset -= new_offset % alignment
        # The new tail must not fall below the head: n + new_offset - r >= head.
        group.shared = max(group.shared, head - new_offset)
        target = moved.get(new_offset)
        if target is None:
            moved[new_offset] = group
            continue
        for merged in (target, group):  # fold running bounds into per-residue history
            for residue in merged.earlier:
                merged.earlier[residue] = max(merged.earlier[residue], merged.shared)
            merged.shared = -(1 << 62)
        target.earlier.update(group.earlier)
    return moved
