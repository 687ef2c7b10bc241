"""What a planner sees: buffers with an inclusive [start, end] step interval and a byte size.

Two buffers are *live together* (conflict) unless one ends before the other starts:
`a.start > b.end or b.start > a.end` means no conflict. Both ends are inclusive, so a buffer last
read at step s conflicts with one first written at step s, as in both runtimes. Steps may be -1
(TFLM: read but never written) or very large (LiteRT: never freed); the arithmetic is the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class Buffer:
    """One placement request: `size` bytes live over steps [start, end]; maybe a fixed offset."""

    id: int
    start: int
    end: int
    size: int
    fixed_offset: int | None = None  # offline-planned: the planner must use this offset

    def conflicts_with(self, other: Buffer) -> bool:
        """True when the two buffers are live at a common step."""
        return not (self.start > other.end or other.start > self.end)


@dataclass(frozen=True)
class Problem:
    """Buffers to place in one arena, the offset alignment, and an optional runtime order.

    `order` lists buffer ids in the order a runtime processes them when that order is not a
    function of (start, end, size, id) alone (LiteRT sorts by hash-set order); planners that do
    not replicate a runtime ignore it.
    """

    buffers: tuple[Buffer, ...]
    alignment: int = 1
    order: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        ids = [b.id for b in self.buffers]
        if len(set(ids)) != len(ids):
            raise ValueError("buffer ids must be unique")
        if self.alignment < 1:
            raise ValueError(f"alignment must be >= 1, got {self.alignment}")
        for buffer in self.buffers:
            if buffer.size < 0:
                raise ValueError(f"buffer {buffer.id} has negative size {buffer.size}")

    @cached_property
    def by_id(self) -> Mapping[int, Buffer]:
        """Buffer id → Buffer."""
        return MappingProxyType({b.id: b for b in self.buffers})

    def live_bytes(self) -> list[tuple[int, int]]:
        """(step, bytes live from that step on) at every step where the total changes."""
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
        return curve

    def lower_bound(self) -> int:
        """Bytes live at the busiest step: no planner can use less."""
        return max((total for _, total in self.live_bytes()), default=0)

    def naive_size(self) -> int:
        """Arena bytes with no reuse: every buffer end to end, each start aligned."""
        total = 0
        for buffer in sorted(self.buffers, key=lambda b: b.id):
            if buffer.size:
                total = align_up(total, self.alignment) + buffer.size
        return total


def align_up(value: int, alignment: int) -> int:
    """Round value up to a multiple of alignment (>= 1)."""
    return -(-value // alignment) * alignment


@dataclass(frozen=True)
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

    def offset(self, buffer_id: int) -> int:
        """Offset of one buffer."""
        return self.offsets[buffer_id]


def arena_size(problem: Problem, offsets: Mapping[int, int]) -> int:
    """The arena a set of offsets needs: the highest end over all buffers (0 when empty)."""
    return max((offsets[b.id] + b.size for b in problem.buffers), default=0)
