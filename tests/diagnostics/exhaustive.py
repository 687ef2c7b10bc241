"""A test-only planner: first fit over every buffer order (problems of <= 8 buffers)."""

from __future__ import annotations

import itertools

import pytest

from arenalens.errors import PlanError
from arenalens.planning.problem import Buffer, Problem, align_up
from arenalens.planning.registry import PLANNERS, PlannerInfo, PlannerOutput, get_planner

NAME = "test_exhaustive"


def _first_fit(order: tuple[Buffer, ...], alignment: int) -> dict[int, int]:
    placed: list[tuple[int, Buffer]] = []
    offsets: dict[int, int] = {}
    for buffer in order:
        if buffer.fixed_offset is not None:
            offset = buffer.fixed_offset
        else:
            offset = 0
            for other_offset, other in sorted(placed, key=lambda item: item[0]):
                if not buffer.conflicts_with(other):
                    continue
                if other_offset - offset >= buffer.size:
                    break
                offset = max(offset, align_up(other_offset + other.size, alignment))
        offsets[buffer.id] = offset
        placed.append((offset, buffer))
    return offsets


MAX_BUFFERS = 8


def exhaustive(problem: Problem) -> PlannerOutput:
    """Problem (<= 8 online buffers) → the smallest first-fit plan over all buffer orders."""
    fixed = tuple(b for b in problem.buffers if b.fixed_offset is not None)
    online = [b for b in problem.buffers if b.fixed_offset is None]
    if len(online) > MAX_BUFFERS:
        raise PlanError(f"{NAME} tries every order: at most {MAX_BUFFERS} buffers")
    best: dict[int, int] | None = None
    best_size = -1
    for order in itertools.permutations(online):
        offsets = _first_fit(fixed + order, problem.alignment)
        size = max((offsets[b.id] + b.size for b in problem.buffers), default=0)
        if best is None or size < best_size:
            best, best_size = offsets, size
    return PlannerOutput(offsets=best or {})


EXHAUSTIVE = PlannerInfo(
    name=NAME,
    function=exhaustive,
    description="test-only: first fit over all orders",
    in_portfolio=False,
)


def install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the exhaustive planner known for one test (never for the whole session)."""
    get_planner("naive")  # load the built-ins first
    monkeypatch.setitem(PLANNERS, NAME, EXHAUSTIVE)
