"""What a planner sees: buffers with an inclusive [start, end] step interval and a byte size.

Two buffers are *live together* (conflict) unless one ends before the other starts:
`a.start > b.end or b.start > a.end` means no conflict. Both ends are inclusive, so a buffer last
read at step s conflicts with one first written at step s, as in both runtimes. Steps may be -1
(TFLM: read but never written) or very large (LiteRT: never freed); the arithmetic is the same.

Buffers live together never share a byte, except the pairs a Problem lists as *allowed overlaps*:
an `Overlap(output, input, min_offset_distance)` lets buffer `output` share bytes with buffer
`input` when `offset(input) - offset(output) >= min_offset_distance`, that is when the output
starts at least that many bytes below the input (a negative distance lets it start above). Where
the pairs come from (a kernel that walks its output in order and never reads back the input bytes
it has overwritten) is the runtime's business; planners, bounds and the checker see only this.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import add
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from arenalens.errors import PlanError
from arenalens.records import record


class Buffer(NamedTuple):
    """One placement request: `size` bytes live over steps [start, end]; maybe a fixed offset.

    A NamedTuple, not a dataclass (as `ir.Tensor`): every check makes one per planned tensor and
    the planner and the checker read them by column (`zip(*problem.buffers)`, one C loop);
    making one costs a tuple. Immutable and hashable; change one with `_replace`."""

    id: int
    start: int
    end: int
    size: int
    fixed_offset: int | None = None  # offline-planned: the planner must use this offset

    def conflicts_with(self, other: Buffer) -> bool:
        """True when the two buffers are live at a common step."""
        return not (self.start > other.end or other.start > self.end)


@record(slots=True)
class Overlap:
    """Buffer `output` may share bytes with buffer `input` when it starts low enough.

    Allowed when `offset(input) - offset(output) >= min_offset_distance`; any placement that
    shares no byte is allowed anyway. Order matters: the output is the one that may slide below.
    """

    output: int
    input: int
    min_offset_distance: int

    def allows(self, output_offset: int, input_offset: int) -> bool:
        """True when these two offsets may share bytes under this overlap."""
        return input_offset - output_offset >= self.min_offset_distance


@dataclass(frozen=True)
class Problem:
    """Buffers to place in one arena, the offset alignment, an optional runtime order, and the
    pairs of buffers allowed to share bytes (see the module docstring).

    `order` lists buffer ids in the order a runtime processes them when that order is not a
    function of (start, end, size, id) alone (LiteRT sorts by hash-set order); planners that do
    not replicate a runtime ignore it. Runtime replicas ignore `overlaps` too: a plan without
    overlaps is always valid.
    """

    buffers: tuple[Buffer, ...]
    alignment: int = 1
    order: tuple[int, ...] = ()
    overlaps: tuple[Overlap, ...] = ()

    def __post_init__(self) -> None:
        self._check_columns()

    @classmethod
    def from_columns(
        cls,
        starts: Sequence[int],
        ends: Sequence[int],
        sizes: Sequence[int],
        fixed: Mapping[int, int] | None = None,
        *,
        alignment: int = 1,
    ) -> Problem:
        """Buffers 0..n-1 by column (buffer i: `starts[i]`..`ends[i]`, `sizes[i]` bytes, at
        `fixed[i]` when given): the Problem of those Buffers, whose `buffers` are made when
        first read. The planner and the checker read the columns; a check never reads the
        buffers, so the TFLM head makes none (a tuple per buffer, and its Python step)."""
        count = len(sizes)
        offsets = (None,) * count if not fixed else tuple(map(fixed.get, range(count)))
        problem = object.__new__(cls)
        for name, value in (("alignment", alignment), ("order", ()), ("overlaps", ())):
            object.__setattr__(problem, name, value)
        columns = (tuple(range(count)), tuple(starts), tuple(ends), tuple(sizes), offsets)
        object.__setattr__(problem, "columns", columns)  # the cached property's value
        problem._check_columns()
        return problem

    if not TYPE_CHECKING:  # (mypy would take any attribute of a Problem for one)

        def __getattr__(self, name: str) -> Any:
            # Called for an attribute not set: the `buffers` of a Problem `from_columns`.
            if name != "buffers" or "columns" not in self.__dict__:
                raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
            ids, starts, ends, sizes, fixed = self.columns
            buffers = tuple(map(Buffer, ids, starts, ends, sizes, fixed))
            object.__setattr__(self, "buffers", buffers)
            return buffers

    @property
    def buffer_count(self) -> int:
        """len(buffers), without making them (`from_columns`)."""
        return len(self.columns[0])

    def _check_columns(self) -> None:
        # By column (`columns`, which the planner and the checker read next): a Python step
        # per buffer costs more.
        ids, _, _, sizes, _ = self.columns
        known = set(ids)
        if len(known) != len(ids):
            raise ValueError("buffer ids must be unique")
        if self.alignment < 1:
            raise ValueError(f"alignment must be >= 1, got {self.alignment}")
        if min(sizes, default=0) < 0:
            position = next(p for p, size in enumerate(sizes) if size < 0)
            raise ValueError(f"buffer {ids[position]} has negative size {sizes[position]}")
        pairs: set[frozenset[int]] = set()
        for overlap in self.overlaps:
            if overlap.output not in known or overlap.input not in known:
                raise ValueError(
                    f"overlap {overlap.output} -> {overlap.input} names a buffer not in the problem"
                )
            pair = frozenset((overlap.output, overlap.input))
            if len(pair) != 2:
                raise ValueError(f"overlap of buffer {overlap.output} with itself")
            if pair in pairs:
                raise ValueError(
                    f"buffers {overlap.output} and {overlap.input} have more than one overlap"
                )
            pairs.add(pair)

    @cached_property
    def columns(self) -> tuple[tuple[Any, ...], ...]:
        """(ids, starts, ends, sizes, fixed offsets): the buffers by field, made once (one C
        loop) for the planner and the checker, which both read every buffer by column."""
        if not self.buffers:
            return ((), (), (), (), ())
        return tuple(zip(*self.buffers, strict=True))

    @cached_property
    def by_id(self) -> Mapping[int, Buffer]:
        """Buffer id → Buffer."""
        return MappingProxyType({b.id: b for b in self.buffers})

    @cached_property
    def overlaps_by_buffer(self) -> Mapping[int, tuple[Overlap, ...]]:
        """Buffer id → the allowed overlaps it takes part in (as output or input), in order."""
        found: dict[int, list[Overlap]] = {}
        for overlap in sorted(self.overlaps, key=lambda o: (o.output, o.input)):
            found.setdefault(overlap.output, []).append(overlap)
            found.setdefault(overlap.input, []).append(overlap)
        return MappingProxyType({key: tuple(value) for key, value in found.items()})

    def overlap_between(self, first: int, second: int) -> Overlap | None:
        """The allowed overlap of two buffers (either order), or None."""
        for overlap in self.overlaps_by_buffer.get(first, ()):
            if second in (overlap.output, overlap.input):
                return overlap
        return None

    def without_overlaps(self) -> Problem:
        """The same problem where no two live buffers may share a byte."""
        if not self.overlaps:
            return self
        return Problem(self.buffers, alignment=self.alignment, order=self.order)

    def live_bytes(self) -> list[tuple[int, int]]:
        """(step, bytes live from that step on) at every step where the total changes."""
        return list(self._live_curve)

    @cached_property
    def _live_curve(self) -> tuple[tuple[int, int], ...]:
        # Asked several times per problem (the bound of each plan, the report): computed once.
        events: dict[int, int] = {}
        for buffer in self.buffers:
            if buffer.size == 0:
                continue
            events[buffer.start] = events.get(buffer.start, 0) + buffer.size
            events[buffer.end + 1] = events.get(buffer.end + 1, 0) - buffer.size
        running = 0
        curve: list[tuple[int, int]] = []
        for step in sorted(events):
            running += events[step]
            curve.append((step, running))
        return tuple(curve)

    def lower_bound(self) -> int:
        """Bytes live at the busiest step, less what allowed overlaps can save there: no planner
        can use less (`disjoint_lower_bound` when no overlap is allowed)."""
        if not self.overlaps:
            return self.disjoint_lower_bound()
        savings = overlap_savings(self)
        best = 0
        for step, total in self.live_bytes():
            best = max(best, total - savings.at(step))
        return best

    def disjoint_lower_bound(self) -> int:
        """Bytes live at the busiest step: no plan that shares no bytes can use less."""
        return self._busiest

    @cached_property
    def _busiest(self) -> int:
        # Asked by every report of the problem (its bound, each plan's overhead): computed once.
        return max((total for _, total in self._live_curve), default=0)

    def naive_size(self) -> int:
        """Arena bytes with no reuse: every buffer end to end, each start aligned."""
        total = 0
        for buffer in sorted(self.buffers, key=lambda b: b.id):
            if buffer.size:
                total = align_up(total, self.alignment) + buffer.size
        return total


class OverlapSavings:
    """The most bytes allowed overlaps can save at each step: a step function over steps.

    Bonferroni: the bytes a set of live buffers covers are at least their total size less the
    sum of their pairwise intersections, and only allowed pairs intersect. One pair (output O,
    input I, distance D) shares at most min(|I|, |O| - max(D, 0)) bytes (the output's first D
    bytes lie below the input), with D rounded up to the alignment when both are online. An
    output's shares with several inputs lie in its top |O| - min(D) bytes and are disjoint when
    those inputs may not overlap each other, so they are capped together; likewise an input's
    shares with several outputs are capped by |I|.
    """

    def __init__(self, problem: Problem) -> None:
        self.steps: list[int] = []
        self.values: list[int] = []
        by_id = problem.by_id
        live_pairs: list[tuple[int, int, Overlap, int]] = []
        for overlap in problem.overlaps:
            output, source = by_id[overlap.output], by_id[overlap.input]
            first, last = max(output.start, source.start), min(output.end, source.end)
            share = _pair_share(problem, output, source, overlap.min_offset_distance)
            if first <= last and share > 0:
                live_pairs.append((first, last, overlap, share))
        if not live_pairs:
            return
        live_pairs.sort(key=lambda item: (item[0], item[2].output, item[2].input))
        events = sorted({item[0] for item in live_pairs} | {item[1] + 1 for item in live_pairs})
        active: dict[tuple[int, int], tuple[int, Overlap, int]] = {}
        position = 0
        for step in events:
            while position < len(live_pairs) and live_pairs[position][0] <= step:
                _, last, overlap, share = live_pairs[position]
                active[(overlap.output, overlap.input)] = (last, overlap, share)
                position += 1
            for key in [key for key, (last, _, _) in active.items() if last < step]:
                del active[key]
            here = [(overlap, share) for _, overlap, share in active.values()]
            self.steps.append(step)
            self.values.append(_capped_savings(problem, here))

    def at(self, step: int) -> int:
        """Most bytes overlaps can save at one step."""
        position = bisect.bisect_right(self.steps, step) - 1
        return self.values[position] if position >= 0 else 0


def overlap_savings(problem: Problem) -> OverlapSavings:
    """Problem → the most bytes its allowed overlaps can save at each step."""
    return OverlapSavings(problem)


def _pair_share(problem: Problem, output: Buffer, source: Buffer, distance: int) -> int:
    """Most bytes one allowed pair can share."""
    effective = min(distance, output.size)
    if effective > 0 and output.fixed_offset is None and source.fixed_offset is None:
        effective = align_up(effective, problem.alignment)
    return max(0, min(source.size, output.size - max(effective, 0)))


def _capped_savings(problem: Problem, pairs: list[tuple[Overlap, int]]) -> int:
    """Savings of the pairs live at one step: per pair, capped per output and per input."""
    uncapped = sum(share for _, share in pairs)
    by_output: dict[int, list[tuple[Overlap, int]]] = {}
    by_input: dict[int, list[tuple[Overlap, int]]] = {}
    for overlap, share in pairs:
        by_output.setdefault(overlap.output, []).append((overlap, share))
        by_input.setdefault(overlap.input, []).append((overlap, share))
    by_id = problem.by_id
    output_side = 0
    for output_id, group in by_output.items():
        total = sum(share for _, share in group)
        partners = [o.input for o, _ in group]
        if len(group) > 1 and not _any_pair_overlaps(problem, partners):
            lowest = min(max(o.min_offset_distance, 0) for o, _ in group)
            total = min(total, max(0, by_id[output_id].size - lowest))
        output_side += total
    input_side = 0
    for input_id, group in by_input.items():
        total = sum(share for _, share in group)
        partners = [o.output for o, _ in group]
        if len(group) > 1 and not _any_pair_overlaps(problem, partners):
            total = min(total, by_id[input_id].size)
        input_side += total
    return min(uncapped, output_side, input_side)


def _any_pair_overlaps(problem: Problem, ids: list[int]) -> bool:
    return any(
        problem.overlap_between(first, second) is not None
        for position, first in enumerate(ids)
        for second in ids[position + 1 :]
    )


def refuse_fixed_offsets(problem: Problem, planner: str, why: str) -> None:
    """A replica of a runtime planner that has no offline-planned offsets refuses a problem with
    fixed ones (PlanError naming the first five buffers and why it cannot honour them)."""
    fixed = [b.id for b in problem.buffers if b.fixed_offset is not None]
    if fixed:
        raise PlanError(f"{planner} cannot honour fixed offsets (buffers {fixed[:5]}): {why}")


def missing_extra_text(install: str) -> str:
    """How a number from a plan that went without the exact search says so (`Plan.missing_extra`:
    its install command)."""
    return f"planned without OR-Tools' exact search, which may lower it: {install}"


def missing_extra_note(install: str) -> str:
    """'; planned without ...' for the text beside a number (`missing_extra_text`), '' when no
    extra was missing."""
    return f"; {missing_extra_text(install)}" if install else ""


def align_up(value: int, alignment: int) -> int:
    """Round value up to a multiple of alignment (>= 1)."""
    return -(-value // alignment) * alignment


@record()
class Plan:
    """A checked placement: offset per buffer id and the arena size it needs."""

    planner: str
    offsets: Mapping[int, int]
    arena_size: int
    seconds: float = 0.0
    proven_optimal: bool = False
    bound: int | None = None  # best proven lower bound on the arena size, when a solver gives one
    notes: tuple[str, ...] = ()
    # Free-form numbers a planner reports (iterations, nodes explored, ...), for reports only.
    stats: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    # The install command of an optional extra the planner's search went without ('' none): a
    # plan above its lower bound that the extra's search might have made smaller (`best`
    # without OR-Tools).
    missing_extra: str = ""

    def offset(self, buffer_id: int) -> int:
        """Offset of one buffer."""
        return self.offsets[buffer_id]


def arena_size(problem: Problem, offsets: Mapping[int, int]) -> int:
    """The arena a set of offsets needs: the highest end over all buffers (0 when empty)."""
    ids, _, _, sizes, _ = problem.columns
    return max(map(add, map(offsets.__getitem__, ids), sizes), default=0)
