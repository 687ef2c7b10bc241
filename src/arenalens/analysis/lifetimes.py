"""Tensor lifetimes: the runtime-neutral shapes, one inclusive [first, last] step interval each.

Both ends are inclusive: a tensor with `last = s` is still live at step s. Each runtime computes
them by its own rules (`runtimes/tflm/lifetimes.py`, `runtimes/litert/lifetimes.py`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, overload

from arenalens.ir import Operator
from arenalens.records import quick_init, record

UNSET = -1
# LiteRT's kNodeNotAssigned (INT32_MAX): "allocated until the end", and "not yet allocated".
NEVER_FREED = 2**31 - 1


class TensorLifetime(NamedTuple):
    """One tensor's inclusive [first, last] steps; -1 = never written / never read."""

    subgraph: int
    tensor: int
    first: int
    last: int
    alias_of: int | None = None  # LiteRT in-place: this tensor lives in that tensor's bytes


@quick_init
@dataclass(frozen=True, slots=True)
class ScratchRequest:
    """A kernel's scratch memory request for one operator (TFLM RequestScratchBufferInArena)."""

    subgraph: int
    operator: int
    nbytes: int
    label: str = ""


@quick_init
@dataclass(frozen=True, slots=True)
class ScratchLifetime:
    """One scratch request with its inclusive step interval."""

    request: ScratchRequest
    first: int
    last: int


@quick_init
@dataclass(frozen=True, slots=True)
class Step:
    """What happens at one step: an operator runs, or a subgraph is entered (operator = None)."""

    step: int
    subgraph: int
    operator: int | None
    label: str


class OperatorSteps(Sequence[Step]):
    """Steps made when first read: a run of one subgraph's operators (one step each, in order,
    from `start`) among Steps already made. A check reads no step (a report, an export or
    the overlap rules do), so a candidate in a search loop makes none. Read-only, equal to the
    tuple it stands for."""

    def __init__(self, parts: Sequence[Step | tuple[int, int, Sequence[Operator]]]) -> None:
        self._parts = parts  # a Step, or (first step, subgraph, its operators)
        self._made: tuple[Step, ...] | None = None

    def _steps(self) -> tuple[Step, ...]:
        made = self._made
        if made is None:
            steps: list[Step] = []
            for part in self._parts:
                if isinstance(part, Step):
                    steps.append(part)
                    continue
                start, subgraph, operators = part
                steps.extend(
                    Step(start + position, subgraph, op.index, op.opcode)
                    for position, op in enumerate(operators)
                )
            made = self._made = tuple(steps)
        return made

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Step, ...]: ...
    def __getitem__(self, index: int | slice) -> Step | tuple[Step, ...]:
        return self._steps()[index]

    def __len__(self) -> int:
        return len(self._steps())

    def __iter__(self) -> Iterator[Step]:
        return iter(self._steps())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, OperatorSteps):
            return self._steps() == other._steps()
        return self._steps() == other

    def __hash__(self) -> int:
        return hash(self._steps())

    def __repr__(self) -> str:
        return repr(self._steps())


@record()
class Timeline:
    """Lifetimes of every tensor under one runtime's rules, plus what each step is."""

    runtime: str
    lifetimes: Mapping[tuple[int, int], TensorLifetime]  # (subgraph, tensor) → lifetime
    scratch: tuple[ScratchLifetime, ...]
    # TFLM: one timeline (`OperatorSteps`); LiteRT: subgraphs' steps concatenated
    steps: Sequence[Step]

    def of(self, subgraph: int, tensor: int) -> TensorLifetime:
        """Lifetime of one tensor."""
        return self.lifetimes[(subgraph, tensor)]

    def steps_of(self, subgraph: int) -> tuple[Step, ...]:
        """Steps that belong to one subgraph (LiteRT) or run its operators (TFLM)."""
        return tuple(step for step in self.steps if step.subgraph == subgraph)
