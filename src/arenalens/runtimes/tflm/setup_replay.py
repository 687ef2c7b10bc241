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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from functools import cache, partial
from math import gcd
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from arenalens.records import record
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.setup_layout import (
    CATEGORY_ORDER,
    HOST_64,
    LINEAR_PLANNER_CAPACITY,
    RuntimeLayout,
)

if TYPE_CHECKING:
    from arenalens.runtimes.tflm.temp_overlap import Hazard


class Action(enum.StrEnum):
    """What one step of setup does to the arena."""

    PERSISTENT = "persistent"  # tail allocation (AllocatePersistentBuffer)
    HEAD = "head"  # resize the head buffer (scratch requests; final head reservation)
    TEMP = "temp"  # temp allocation above the head
    RESET_TEMP = "reset temp"  # ResetTempAllocations: temp back to the head
    PLANNER = "planner"  # the planner takes all free memory: nbytes = buffers it must hold
    LINEAR_PLANNER = "linear planner"  # LinearMemoryPlanner: a fixed table, nbytes = buffers
    RELEASE_HEAD = "release head"  # DeallocateResizableBuffer: head back to the start


class Allocation(NamedTuple):
    """One step of TFLM's setup: an allocation (or a head / temp reset) and what it is for.

    A NamedTuple: a model's setup makes hundreds of these (and `kernels.base`'s events, of which
    they are made) per check, and a tuple is made at less than half a frozen dataclass's cost."""

    action: Action
    nbytes: int
    alignment: int = 1
    what: str = ""
    category: str = ""  # the print_allocations() category that records it ("" = none)
    # How many allocations the category counts for this one (arrays count items). The field
    # hides tuple.count, which nothing calls on an Allocation.
    count: int = 1  # type: ignore[assignment]
    # TEMP: which struct of a temp tensor view (structs.TEMP_TENSOR_PART, ...); PERSISTENT: the
    # runtime objects or the resource-variable table (setup.RUNTIME_OBJECTS, VARIABLE_TABLE).
    part: str = ""
    # PERSISTENT: a kernel buffer written while its temps are live (temp_overlap), and the
    # closed ranges of start addresses at which it breaks setup (set by setup_sequence).
    hazard: Hazard | None = None
    fails_at: tuple[tuple[int, int], ...] = ()


# `Allocation` from all its fields in one C call: a setup sequence is hundreds of steps a check,
# and the NamedTuple's own constructor is a Python function (it fills in defaults).
new_allocation = partial(tuple.__new__, Allocation)


@record()
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
    # Category → [used, requested, count].
    recorded: dict[str, list[int]] = {}
    planner_bytes_per_buffer = layout.planner_bytes_per_buffer
    persistent, temporary, resize_head = Action.PERSISTENT, Action.TEMP, Action.HEAD
    reset_temp, release_head = Action.RESET_TEMP, Action.RELEASE_HEAD
    planner, linear_planner = Action.PLANNER, Action.LINEAR_PLANNER
    failed_at: Allocation | None = None
    for step in sequence:
        action = step.action
        if action is temporary:  # most steps: first
            start = -(-temp // step.alignment) * step.alignment
            if tail - start < step.nbytes:
                failed_at = step
                break
            temp = start + step.nbytes
        elif action is persistent:
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
                totals = recorded.get(category)
                if totals is None:
                    totals = recorded[category] = [0, 0, 0]
                totals[0] += tail - result
                totals[1] += step.nbytes
                totals[2] += step.count
            tail = result
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
        name: (totals[0], totals[1], totals[2])
        for name in CATEGORY_ORDER
        if (totals := recorded.get(name)) is not None and (totals[0] > 0 or totals[1] > 0)
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
    """Setup sequence → the smallest arena_size from which every larger size sets up."""
    return settle(sequence, layout).minimal_arena


@record()
class Settled:
    """What every arena size from the minimal one on gives (`settle`): setup fits, with this head
    (None: the walk cannot tell, and only a replay can) and a tail that depends only on the
    size's residue modulo 16."""

    minimal_arena: int
    head: int | None
    tails: tuple[int, ...]  # residue → tail bytes

    def tail(self, arena_size: int) -> int:
        """The tail at an arena size from the minimal one on."""
        return self.tails[arena_size % 16]


def settle(sequence: Sequence[Allocation], layout: RuntimeLayout = HOST_64) -> Settled:
    """Setup sequence → the smallest arena_size from which every larger size sets up, and the
    head and tails setup leaves there, in one walk (a replay at a size gives the same).

    Head and temp positions count from the (aligned) array start and never depend on the size.
    Write the size as n = 16·k + r and the tail address as n - used: every alignment divides 16,
    so the tail's offset d = tail - 16·k depends on the residue r only (the tail is r - d), and
    every check becomes a lower bound `n >= value - d + r`. One pass therefore finds each
    residue's minimum; from the first 16-aligned tail allocation on, every residue's offset moves
    alike (`Lockstep`), and the pass costs O(1) per step.

    A kernel buffer written over live temps (`Allocation.fails_at`) fails at some start
    addresses only; for stability its start must lie above the highest of them, one more lower
    bound. Each residue r then fits exactly from its own S_r on, so the sizes that fail are
    below max(S_r) - 15 (without such buffers fitting is monotone and this is the first size
    that fits).
    """
    walk = ResidueWalk(layout.planner_bytes_per_buffer)
    walk.take(sequence)
    return walk.settled()


class ResidueWalk:
    """`settle`'s walk, fed a sequence in parts (`take`), then `settled`: for each residue r of
    the size modulo 16, its tail offset and the largest lower bound on the size; the head at the
    end.

    The residues are kept by group (`members`): residues whose offset and bound are equal stay
    equal (every step is a function of a residue's offset and bound), so each group keeps one
    offset and one bound, and each step is a comprehension over the groups. The first tail
    allocation aligned to a makes 16 / a groups, a 16-aligned one at most two: a walk of 16
    lists paid ~0.2 M instructions for the ~10 steps before Prepare (speed-setup15's callgrind
    on VWW). Few steps come here, as the walk hands the sequence to a `Lockstep` from the first
    tail allocation on whose alignment divides the offsets' spacing. When a part ends with every
    residue moving alike to the end (`aligned`: from the first 16-aligned tail allocation on),
    the walk's state is that `Lockstep`'s, and a caller may take steps it never writes straight
    into it (`setup` takes the kernels' events so)."""

    __slots__ = (
        "bounds",
        "head",
        "highest_end",
        "impossible",
        "lockstep",
        "members",
        "offsets",
        "planner_bytes_per_buffer",
        "temp",
        "temp_known",
    )

    def __init__(self, planner_bytes_per_buffer: int) -> None:
        self.planner_bytes_per_buffer = planner_bytes_per_buffer
        # Group → its tail offset d (the tail is 16·k + d for a size 16·k + r of each residue r
        # in the group) and its lower bound b (every check so far holds from n = b + r on), and
        # the residues of each group; at first each residue is a group.
        self.offsets = list(range(16))
        self.bounds = [NOTHING] * 16
        self.members = _EACH_RESIDUE
        self.head = self.temp = 0
        self.impossible = False
        # Temp and head checks bound every residue by (their end - its offset): between two tail
        # moves only the highest end matters, so it is kept here and given to the bounds when
        # the offsets are about to move (or at the end), not at every step.
        self.highest_end = NOTHING
        # The planner sets the temp end to the aligned tail, a position that depends on the
        # size, until the next head resize or temp reset.
        self.temp_known = True
        # The lockstep the last part ended in (the walk's state is then its own), else None.
        self.lockstep: Lockstep | None = None

    @property
    def aligned(self) -> Lockstep | None:
        """The lockstep every later step takes alike (spacing 16), if the walk is in one."""
        lockstep = self.lockstep
        return lockstep if lockstep is not None and lockstep.spacing == 16 else None

    def take(self, sequence: Iterable[Allocation]) -> None:
        """The next steps of the sequence."""
        steps = iter(sequence)
        planner_bytes_per_buffer = self.planner_bytes_per_buffer
        # A step a lockstep stopped at, still to take here.
        pending: Allocation | None = None
        if self.lockstep is not None:
            pending = self.lockstep.walk(steps, planner_bytes_per_buffer)
            if pending is None:
                return
            self._leave_lockstep()
        offsets, bounds, head, temp = self.offsets, self.bounds, self.head, self.temp
        members, impossible, temp_known = self.members, self.impossible, self.temp_known
        highest_end = self.highest_end
        nothing = NOTHING
        while True:
            step = pending if pending is not None else next(steps, None)
            pending = None
            if step is None:
                break
            action = step.action
            if action is _PERSISTENT:
                nbytes, alignment = step.nbytes, step.alignment
                if members is _EACH_RESIDUE and highest_end == nothing and bounds == _UNBOUNDED:
                    # The first tail move, nothing bounded yet: the residues fall into runs of
                    # one offset each (the new tail must not fall below the head).
                    members, firsts = _runs(nbytes % alignment, alignment)
                    offsets = [(r - nbytes) // alignment * alignment for r in firsts]
                    bounds = _bounded([nothing] * len(offsets), offsets, head)
                else:
                    if highest_end != nothing:  # a check `tail >= highest_end`, every residue
                        bounds = _bounded(bounds, offsets, highest_end)
                        highest_end = nothing
                    # The tail moves down; the new tail must not fall below the head.
                    offsets = [(d - nbytes) // alignment * alignment for d in offsets]
                    bounds = _bounded(bounds, offsets, head)
                    if len(set(offsets)) < len(offsets):
                        offsets, bounds, members = _merged(offsets, bounds, members)
                if step.fails_at:
                    bounds = _above_failing_starts(offsets, bounds, step.fails_at)
                spacing = _spacing(offsets)
                if spacing > 1:
                    # The residues move alike while the tail's alignments divide their spacing:
                    # from the first 16-aligned tail allocation on, to the end; before it, over
                    # the runs of smaller alignments (one per operator's options, the structs).
                    lockstep = Lockstep(
                        offsets,
                        bounds,
                        head=head,
                        temp=temp,
                        highest_end=nothing,
                        impossible=impossible,
                        temp_known=temp_known,
                        spacing=spacing,
                    )
                    pending = lockstep.walk(steps, planner_bytes_per_buffer)
                    if pending is None:  # the part ended in it: the state stays there
                        self.lockstep, self.members = lockstep, members
                        return
                    offsets, bounds = lockstep.residues()
                    impossible = lockstep.impossible
                    head, temp, temp_known = lockstep.head, lockstep.temp, lockstep.temp_known
            elif action is _TEMP:
                temp = -(-temp // step.alignment) * step.alignment + step.nbytes
                highest_end = max(highest_end, temp)
            elif action is _HEAD:
                highest_end = max(highest_end, step.nbytes)
                head = temp = step.nbytes
                temp_known = True
            elif action is _RESET_TEMP:
                temp = head
                temp_known = True
            elif action is _RELEASE_HEAD:
                head = temp = 0
                temp_known = True
            elif action is _PLANNER or action is _LINEAR_PLANNER:
                temp_known = False
                linear = action is _LINEAR_PLANNER
                impossible |= linear and step.nbytes > LINEAR_PLANNER_CAPACITY
                start = _align_up(temp, ARENA_ALIGNMENT)
                table = 0 if linear else step.nbytes * planner_bytes_per_buffer
                # align_down(tail, 16) - start >= table: the tail's own misalignment is lost.
                bounds = [
                    max(b, start + table - d + d % 16) for b, d in zip(bounds, offsets, strict=True)
                ]
                temp = start + table
        self.offsets, self.bounds, self.head, self.temp = offsets, bounds, head, temp
        self.members, self.impossible, self.temp_known = members, impossible, temp_known
        self.highest_end = highest_end

    def _leave_lockstep(self) -> None:
        """The lockstep's state back in the walk's residues."""
        lockstep = self.lockstep
        assert lockstep is not None
        self.offsets, self.bounds = lockstep.residues()
        self.impossible = lockstep.impossible
        self.head, self.temp, self.temp_known = lockstep.head, lockstep.temp, lockstep.temp_known
        self.highest_end = NOTHING
        self.lockstep = None

    def settled(self) -> Settled:
        """The smallest size from which every larger one fits, the head and the tails there."""
        if self.lockstep is not None:
            self._leave_lockstep()
        offsets, bounds = self.offsets, self.bounds
        if self.highest_end != NOTHING:
            bounds = _bounded(bounds, offsets, self.highest_end)
        if self.impossible:
            raise ValueError("no arena size fits this setup (a planner limit is exceeded)")
        # Residue r fits from the first size n >= b + r with n = r (mod 16) on: in a group, from
        # that of its highest residue.
        members = self.members
        first = max(b + max(group) + (-b) % 16 for b, group in zip(bounds, members, strict=True))
        head = max(self.head, self.temp) if self.temp_known else None
        tails = [0] * 16
        for d, group in zip(offsets, members, strict=True):
            for r in group:
                tails[r] = r - d
        return Settled(first - 15, head, tuple(tails))


# At first each residue is a group of its own, and no residue is bounded.
_EACH_RESIDUE: tuple[tuple[int, ...], ...] = tuple((residue,) for residue in range(16))

_Members = tuple[tuple[int, ...], ...]


@cache
def _runs(shift: int, alignment: int) -> tuple[_Members, tuple[int, ...]]:
    """The residues r whose first tail move of n bytes aligned to a (n = `shift` mod a) gives
    one offset, (r - n) // a · a: runs of consecutive residues; and each run's first."""
    runs: dict[int, list[int]] = {}
    for residue in range(16):
        runs.setdefault((residue - shift) // alignment, []).append(residue)
    members = tuple(tuple(run) for run in runs.values())
    return members, tuple(run[0] for run in members)


def _merged(
    offsets: list[int], bounds: list[int], members: _Members
) -> tuple[list[int], list[int], _Members]:
    """The groups whose offset and bound are equal as one."""
    merged: dict[tuple[int, int], tuple[int, ...]] = {}
    for pair, group in zip(zip(offsets, bounds, strict=True), members, strict=True):
        found = merged.get(pair)
        merged[pair] = group if found is None else found + group
    if len(merged) == len(offsets):  # equal offsets, other bounds: nothing to merge
        return offsets, bounds, members
    return [d for d, _ in merged], [b for _, b in merged], tuple(merged.values())


def _bounded(bounds: list[int], offsets: list[int], end: int) -> list[int]:
    """A check `tail >= end` for every residue: n >= end - d + r."""
    return [end - d if end - d > b else b for b, d in zip(bounds, offsets, strict=True)]


# The actions, bound once (an enum member read through its class is a lookup each time).
_PERSISTENT, _TEMP, _HEAD = Action.PERSISTENT, Action.TEMP, Action.HEAD
_RESET_TEMP, _RELEASE_HEAD = Action.RESET_TEMP, Action.RELEASE_HEAD
_PLANNER, _LINEAR_PLANNER = Action.PLANNER, Action.LINEAR_PLANNER


# No bound yet (lower than any): a highest end with nothing to give the bounds.
NOTHING = -(1 << 62)
_UNBOUNDED = [NOTHING] * 16  # no residue bounded yet (compared with, never changed)


class Lockstep:
    """`ResidueWalk` while every residue's tail offset is congruent modulo a spacing s (a power
    of two): a tail allocation whose alignment divides s moves all residues by the same amount
    (they keep their distances c_r to a base offset b). With s = 16 that is every allocation to
    the end of the sequence (every alignment divides 16); with a smaller s the walk stops at the
    first step it cannot take alike (a larger alignment, failing starts or the planner, whose
    bounds read the offsets modulo 16) and hands it back.

    Moving alike, every bound `ResidueWalk` gives a residue, shifted by c_r, is one value for them
    all: a residue's bound is max(its bound on entry + c_r, the running maximum M) - c_r. The walk
    keeps b and M alone, the same few operations per step whatever the residues.

    Its state is what a caller taking steps straight into it (`ResidueWalk.aligned`) updates, as
    `walk` does: `base` (b), `highest` (M), `head`, `temp`, `temp_known`. A temp end or head size
    e bounds M by e - b before the next tail move; a tail allocation of n bytes aligned to a
    moves b down to align_down(b - n, a) and bounds M by head - b.
    """

    __slots__ = (
        "base",
        "distances",
        "entry",
        "head",
        "highest",
        "impossible",
        "spacing",
        "temp",
        "temp_known",
    )

    def __init__(
        self,
        offsets: list[int],
        bounds: list[int],
        *,
        head: int,
        temp: int,
        highest_end: int,
        impossible: bool,
        temp_known: bool,
        spacing: int,
    ) -> None:
        """`offsets` and `bounds` by group of residues, as `ResidueWalk` keeps them."""
        self.spacing = spacing
        self.base = base = min(offsets)
        self.distances = distances = [offset - base for offset in offsets]
        self.entry = [b + c for b, c in zip(bounds, distances, strict=True)]
        self.highest = NOTHING  # M
        self.head, self.temp, self.impossible = head, temp, impossible
        self.temp_known = temp_known
        if highest_end != NOTHING:
            self.highest = highest_end - base

    def walk(self, steps: Iterator[Allocation], planner_bytes_per_buffer: int) -> Allocation | None:
        """The remaining steps (one loop, state in local variables: most of a sequence), up to
        the first one the residues cannot take alike at this `spacing`: that step, not taken (None:
        the sequence ended)."""
        base, highest, head, temp = self.base, self.highest, self.head, self.temp
        temp_known = self.temp_known
        highest_end = nothing = NOTHING
        persistent, temporary, resize_head = _PERSISTENT, _TEMP, _HEAD
        reset_temp, release_head = _RESET_TEMP, _RELEASE_HEAD
        planners = (_PLANNER, _LINEAR_PLANNER)
        spacing = self.spacing
        partial = spacing < 16
        stopped: Allocation | None = None
        # A step's fields by position (action, nbytes, alignment; fails_at is the last): reading
        # a NamedTuple's field by name is a descriptor call, by index a plain subscript.
        for step in steps:
            action = step[0]
            if partial and (
                (action is persistent and (spacing % step.alignment or step.fails_at))
                or action in planners
            ):
                stopped = step
                break
            if action is temporary:  # most steps: first
                alignment = step[2]
                temp = -(-temp // alignment) * alignment + step[1]
                if temp > highest_end:  # noqa: PLR1730 - max() is a call, per step
                    highest_end = temp
            elif action is persistent:
                if highest_end != nothing:  # `_bound_all`
                    if highest_end - base > highest:  # noqa: PLR1730 - max() is a call, per step
                        highest = highest_end - base
                    highest_end = nothing
                base -= step[1]  # `_move_tail`
                base -= base % step[2]
                if head - base > highest:  # noqa: PLR1730 - max() is a call, per step
                    highest = head - base
                for low, high in step[-1]:  # `_bound_above_failing_starts`
                    above = (high - base) // 16
                    if 16 * above + base >= low and 16 * (above + 1) > highest:
                        highest = 16 * (above + 1)
            elif action is resize_head:
                head = temp = step[1]
                if head > highest_end:  # noqa: PLR1730 - max() is a call, per step
                    highest_end = head
                temp_known = True
            elif action is reset_temp:
                temp = head
                temp_known = True
            elif action is release_head:
                head = temp = 0
                temp_known = True
            elif action is _PLANNER or action is _LINEAR_PLANNER:
                temp_known = False
                linear = action is _LINEAR_PLANNER
                self.impossible |= linear and step.nbytes > LINEAR_PLANNER_CAPACITY
                start = _align_up(temp, ARENA_ALIGNMENT)
                table = 0 if linear else step.nbytes * planner_bytes_per_buffer
                # align_down(tail, 16) - start >= table: the tail's own misalignment is lost.
                highest = max(highest, start + table - base + base % 16)
                temp = start + table
        if highest_end != nothing:
            highest = max(highest, highest_end - base)
        self.base, self.highest, self.head, self.temp = base, highest, head, temp
        self.temp_known = temp_known
        return stopped

    def residues(self) -> tuple[list[int], list[int]]:
        """Each residue's offset and bound at the end of the walk, unshifted."""
        base, highest = self.base, self.highest
        offsets = [base + distance for distance in self.distances]
        bounds = [
            (entry if entry > highest else highest) - distance
            for entry, distance in zip(self.entry, self.distances, strict=True)
        ]
        return offsets, bounds


def _spacing(offsets: list[int]) -> int:
    """The largest power of two up to 16 that divides every difference of the offsets."""
    base = offsets[0]
    # The lowest set bit of their greatest common divisor (0: all equal).
    common = gcd(*[offset - base for offset in offsets]) | 16
    return common & -common


def _above_failing_starts(
    offsets: list[int], bounds: list[int], fails_at: tuple[tuple[int, int], ...]
) -> list[int]:
    """The allocation just made (the tail, 16·k + d) must start above every failing start: the
    highest failing k of each residue is a lower bound n >= 16·(k + 1) + r."""
    bounds = list(bounds)
    for residue, offset in enumerate(offsets):
        for low, high in fails_at:
            highest = (high - offset) // 16
            if 16 * highest + offset >= low:
                bounds[residue] = max(bounds[residue], 16 * (highest + 1))
    return bounds
