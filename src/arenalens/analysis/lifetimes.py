"""Tensor lifetimes: the runtime-neutral shapes, one inclusive [first, last] step interval each.

Both ends are inclusive: a tensor with `last = s` is still live at step s. Each runtime computes
them by its own rules (`runtimes/tflm/lifetimes.py`, `runtimes/litert/lifetimes.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

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


@record()
class Timeline:
    """Lifetimes of every tensor under one runtime's rules, plus what each step is."""

    runtime: str
    lifetimes: Mapping[tuple[int, int], TensorLifetime]  # (subgraph, tensor) → lifetime
    scratch: tuple[ScratchLifetime, ...]
    steps: tuple[Step, ...]  # TFLM: one timeline; LiteRT: subgraphs' steps concatenated

    def of(self, subgraph: int, tensor: int) -> TensorLifetime:
        """Lifetime of one tensor."""
        return self.lifetimes[(subgraph, tensor)]

    def steps_of(self, subgraph: int) -> tuple[Step, ...]:
        """Steps that belong to one subgraph (LiteRT) or run its operators (TFLM)."""
        return tuple(step for step in self.steps if step.subgraph == subgraph)
