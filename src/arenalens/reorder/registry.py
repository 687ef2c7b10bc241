"""The reorderer registry: name → pure function `ScheduleProblem -> order`, every result checked.

Same shape as the planner registry: a reorderer returns an operator order (or a `ReorderOutput`
with more to say); `run_reorderer` times it, checks that the order is a valid topological order
of the problem's dependencies (`check_order`) and measures its peak.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from arenalens.analysis.schedule import ScheduleProblem, check_order
from arenalens.errors import PlanError, UsageError


@dataclass(frozen=True)
class ReorderOutput:
    """What a reorderer may return instead of a bare order."""

    order: Sequence[int]
    proven_optimal: bool = False
    notes: tuple[str, ...] = ()
    stats: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


ReordererFunction = Callable[..., Sequence[int] | ReorderOutput]
_Function = TypeVar("_Function", bound=ReordererFunction)


@dataclass(frozen=True)
class ReordererInfo:
    """A registered reorderer and what a user should know about it."""

    name: str
    function: ReordererFunction
    description: str
    source: str = ""


@dataclass(frozen=True)
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


REORDERERS: dict[str, ReordererInfo] = {}


def register_reorderer(
    name: str, *, description: str, source: str = ""
) -> Callable[[_Function], _Function]:
    """Decorator: add a reorderer under name (refuses duplicates)."""

    def decorate(function: _Function) -> _Function:
        if name in REORDERERS:
            raise ValueError(f"a reorderer named '{name}' is already registered")
        REORDERERS[name] = ReordererInfo(name, function, description, source)
        return function

    return decorate


def reorderer_names() -> list[str]:
    """Registered reorderer names, sorted."""
    _load_builtin_reorderers()
    return sorted(REORDERERS)


def get_reorderer(name: str) -> ReordererInfo:
    """Name → ReordererInfo, or UsageError listing the known names."""
    _load_builtin_reorderers()
    try:
        return REORDERERS[name]
    except KeyError:
        known = ", ".join(sorted(REORDERERS))
        raise UsageError(f"unknown reorderer '{name}' (known: {known})") from None


def run_reorderer(name: str, problem: ScheduleProblem, **knobs: Any) -> ReorderResult:
    """Run one reorderer → a checked, timed ReorderResult."""
    info = get_reorderer(name)
    started = time.perf_counter()
    result = info.function(problem, **knobs)
    seconds = time.perf_counter() - started
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


_BUILTINS_LOADED = False


def _load_builtin_reorderers() -> None:
    """Import the built-in reorderer modules once; each registers itself on import."""
    global _BUILTINS_LOADED  # noqa: PLW0603 - one-time lazy import guard
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    from arenalens.reorder import builtin  # noqa: F401, PLC0415 - registers the reorderers
