"""Arena problems: lifetimes + a runtime's rules → the planner's buffers, and what each one is.

A planner sees only `planning.Buffer`s. Reports and diagnostics need to know what a buffer id
stands for (a tensor, a kernel scratch request, a LiteRT temporary), so each runtime builds an
`ArenaProblem` that pairs the planner's `Problem` with one `PlannedBuffer` per buffer id.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field, fields
from operator import attrgetter
from types import MappingProxyType
from typing import Any

from arenalens.analysis.lifetimes import Step
from arenalens.planning.problem import Problem
from arenalens.records import quick_init, record


class BufferKind(enum.StrEnum):
    """What a planned buffer holds."""

    TENSOR = "tensor"
    SCRATCH = "scratch"  # TFLM kernel scratch (RequestScratchBufferInArena)
    TEMPORARY = "temporary"  # LiteRT node temporary (im2col, accumulators, ...)
    VARIABLE = "variable"  # variable tensor planned in an arena (offline plan, LiteRT persistent)


@quick_init
@dataclass(frozen=True, slots=True)
class PlannedBuffer:
    """The meaning of one buffer id: which tensor or request it is, and its unrounded bytes."""

    id: int
    kind: BufferKind
    subgraph: int
    tensor: int | None  # tensor index (runtime-added temporaries get indices past the model's)
    operator: int | None  # the operator that requests a scratch / temporary buffer
    name: str
    nbytes: int  # bytes the runtime needs; Buffer.size may be larger (TFLM rounds to 16)
    # Tensors that share this buffer's bytes without being planned themselves (LiteRT in-place).
    aliases: tuple[int, ...] = ()


# A PlannedBuffer's fields, in order, as a tuple (its row).
_FIELDS = attrgetter(*(f.name for f in fields(PlannedBuffer)))


class PlannedBuffers(Mapping[int, PlannedBuffer]):
    """Buffer id → PlannedBuffer, each made when the mapping is first read from one row of its
    fields (id first): `check` never asks what a buffer is, a report or optimize does, so a
    candidate in a search loop makes none. Read-only, as the MappingProxyType it stands for.

    `rows` may be a one-pass iterator whose rows are made as they are read (the TFLM head's
    tensors): `count` then says how many there are."""

    def __init__(self, rows: Iterable[tuple[Any, ...]], count: int | None = None) -> None:
        self._rows = rows
        self._count = count if count is not None or not isinstance(rows, Sized) else len(rows)
        self._made: dict[int, PlannedBuffer] | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as the fields of what it made (the rows may be an iterator).
        return (PlannedBuffers, ([_FIELDS(p) for p in self._buffers().values()],))

    def _buffers(self) -> dict[int, PlannedBuffer]:
        made = self._made
        if made is None:
            made = self._made = {row[0]: PlannedBuffer(*row) for row in self._rows}
        return made

    def __getitem__(self, buffer_id: int) -> PlannedBuffer:
        return self._buffers()[buffer_id]

    def __iter__(self) -> Iterator[int]:
        return iter(self._buffers())

    def __len__(self) -> int:
        if self._count is None:
            return len(self._buffers())
        return self._count

    def __repr__(self) -> str:
        return f"PlannedBuffers({self._buffers()!r})"


@record()
class ArenaProblem:
    """One arena to plan: the Problem, what each buffer is, and the runtime's own planner."""

    name: str  # "head" (TFLM), "subgraph 0", "subgraph 0 persistent" (LiteRT)
    problem: Problem
    buffers: Mapping[int, PlannedBuffer]
    steps: Sequence[Step]  # what runs at each step of this arena's timeline
    runtime_planner: str  # registered planner that reproduces the runtime
    # Planners that cannot honour this arena's constraints (e.g. a persistent arena is fixed).
    notes: tuple[str, ...] = ()
    # Every Buffer.size is the runtime's byte count rounded up to this (TFLM: 16); 1 = exact.
    size_rounding: int = 1
    # Runtime-specific knobs the runtime planner needs beyond the Problem (kept out of Problem).
    runtime_options: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    def buffer_for_tensor(self, subgraph: int, tensor: int) -> PlannedBuffer | None:
        """The buffer that holds a tensor (directly or as an alias), if it is in this arena."""
        for planned in self.buffers.values():
            if planned.subgraph != subgraph:
                continue
            if planned.tensor == tensor or tensor in planned.aliases:
                return planned
        return None
