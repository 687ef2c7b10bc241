"""The reorderer registry: name → pure function `ScheduleProblem -> order`, every result checked.

Same shape as the planner registry: a reorderer returns an operator order (or a `ReorderOutput`
with more to say); `run_reorderer` times it, checks that the order is a valid topological order
of the problem's dependencies (`check_order`) and measures its peak. Settings work as for planners:
`seed`, `effort` and `time_limit_s` may be offered to every reorderer; any other it does not take is
refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from functools import cached_property
from types import MappingProxyType
from typing import Any, TypeVar

from arenalens.errors import PlanError
from arenalens.records import record
from arenalens.registry import Registry, Settings
from arenalens.reorder.schedule import ScheduleProblem, check_order


@record()
class ReorderOutput:
    """What a reorderer may return instead of a bare order."""

    order: Sequence[int]
    proven_optimal: bool = False
    notes: tuple[str, ...] = ()
    stats: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


ReordererFunction = Callable[..., Sequence[int] | ReorderOutput]
_Function = TypeVar("_Function", bound=ReordererFunction)


@record()
class ReordererInfo:
    """A registered reorderer and what a user should know about it."""

    name: str
    function: ReordererFunction
    description: str
    source: str = ""

    @cached_property
    def settings(self) -> Settings:
        """The settings (keyword arguments) the reorderer takes."""
        return Settings.of(self.function)


@record()
class ReorderResult:
    """A checked order: operator indices in run order, its peak, and how it was found."""

    reorderer: str
    order: tuple[int, ...]
    peak: int
    file_order_peak: int
    seconds: float = 0.0
    proven_optimal: bool = False
    notes: tuple[str, ...] = ()
    stats: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


_REGISTRY: Registry[ReordererInfo] = Registry("reorderer", "arenalens.reorder.builtin")
REORDERERS = _REGISTRY.entries


def register_reorderer(
    name: str, *, description: str, source: str = ""
) -> Callable[[_Function], _Function]:
    """Decorator: add a reorderer under name (refuses duplicates)."""

    def decorate(function: _Function) -> _Function:
        _REGISTRY.add(ReordererInfo(name, function, description, source))
        return function

    return decorate


def reorderer_names() -> list[str]:
    """Registered reorderer names, sorted."""
    return _REGISTRY.names()


def get_reorderer(name: str) -> ReordererInfo:
    """Name → ReordererInfo, or UsageError listing the known names."""
    return _REGISTRY.get(name)


def run_reorderer(name: str, problem: ScheduleProblem, **settings: Any) -> ReorderResult:
    """Run one reorderer with the settings it takes → a checked, timed ReorderResult."""
    result, seconds = _REGISTRY.run(name, problem, settings)
    output = result if isinstance(result, ReorderOutput) else ReorderOutput(order=result)
    order = tuple(int(op) for op in output.order)
    try:
        check_order(order, problem.predecessors)
    except PlanError as error:
        raise PlanError(f"reorderer '{name}' produced an invalid order: {error}") from error
    return ReorderResult(
        reorderer=name,
        order=order,
        peak=problem.peak(order),
        file_order_peak=problem.peak(range(problem.op_count)),
        seconds=seconds,
        proven_optimal=output.proven_optimal,
        notes=output.notes,
        stats=MappingProxyType(dict(output.stats)),
    )
