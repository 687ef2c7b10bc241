"""The planner registry: name → pure function `Problem -> offsets`, every result checked.

A planner is a function `(problem, *, settings...) -> offsets` (a mapping buffer id → offset) or a
`PlannerOutput` when it has more to say (a proven bound, optimality). Register one with

    @register_planner("my_planner", description="...", source="paper / runtime file")
    def my_planner(problem: Problem) -> dict[int, int]: ...

and `run_planner("my_planner", problem)` times it, checks the result with `check_plan` and returns a
frozen `Plan`. Nothing reaches a user without passing the checker.

Settings are the planner's keyword arguments; the registry reads them once (`PlannerInfo.settings`)
and passes on what a planner takes: `seed`, `effort` and `time_limit_s` (`arenalens.effort`) may be
offered to every planner (`run_planner("greedy_by_size", problem, seed=1)` runs it without a seed),
any other setting a planner does not take is a UsageError.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from arenalens.errors import PlanError
from arenalens.planning.checker import checked_arena_size
from arenalens.planning.problem import Plan, Problem
from arenalens.records import record
from arenalens.registry import Registry, Settings


@record()
class PlannerOutput:
    """What a planner may return instead of bare offsets."""

    offsets: Mapping[int, int]
    proven_optimal: bool = False
    bound: int | None = None
    notes: tuple[str, ...] = ()
    stats: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    missing_extra: str = ""  # `Plan.missing_extra`


PlannerFunction = Callable[..., Mapping[int, int] | PlannerOutput]


@record()
class PlannerInfo:
    """A registered planner: its function and what a user should know about it."""

    name: str
    function: PlannerFunction
    description: str
    source: str = ""
    # Reproduces a real runtime's planner byte for byte (its result is what the device does).
    replicates_runtime: str | None = None
    # Part of the `best` portfolio: cheap enough to run on every model by default.
    in_portfolio: bool = True

    @cached_property
    def settings(self) -> Settings:
        """The settings (keyword arguments) the planner takes."""
        return Settings.of(self.function)


_REGISTRY: Registry[PlannerInfo] = Registry("planner", "arenalens.planning.builtin")
PLANNERS = _REGISTRY.entries


def register_planner(
    name: str,
    *,
    description: str,
    source: str = "",
    replicates_runtime: str | None = None,
    in_portfolio: bool = True,
    replace: bool = False,
) -> Callable[[PlannerFunction], PlannerFunction]:
    """Decorator: add a planner function to PLANNERS under name (refuses duplicates)."""

    def decorate(function: PlannerFunction) -> PlannerFunction:
        info = PlannerInfo(
            name=name,
            function=function,
            description=description,
            source=source,
            replicates_runtime=replicates_runtime,
            in_portfolio=in_portfolio,
        )
        _REGISTRY.add(info, replace=replace)
        return function

    return decorate


def planner_names() -> list[str]:
    """Registered planner names, sorted."""
    return _REGISTRY.names()


def known_planner_names() -> list[str]:
    """Every built-in and registered planner's name, sorted, importing no planner module."""
    return _REGISTRY.known_names()


def get_planner(name: str) -> PlannerInfo:
    """Name → PlannerInfo, or UsageError listing the known names."""
    return _REGISTRY.get(name)


def run_planner(name: str, problem: Problem, **settings: Any) -> Plan:
    """Run one registered planner on problem with the settings it takes → a checked, timed Plan."""
    result, seconds = _REGISTRY.run(name, problem, settings)
    output = result if isinstance(result, PlannerOutput) else None
    given = result if output is None else output.offsets
    if type(given) is dict and {*map(type, given), *map(type, given.values())} == {int}:
        plain = given.copy()  # plain ints already (the runtimes' planners)
    else:
        plain = dict(zip(map(int, given.keys()), map(int, given.values()), strict=True))
    # The checker and the size read the plain dict (half the cost of a read through the view),
    # which no one else holds.
    try:
        size = checked_arena_size(problem, plain)
    except PlanError as error:
        raise PlanError(f"planner '{name}' produced an invalid plan: {error}") from error
    offsets = MappingProxyType(plain)
    if output is None:  # bare offsets (the runtimes' planners): a Plan of the defaults
        return Plan(planner=name, offsets=offsets, arena_size=size, seconds=seconds)
    bound = output.bound
    if bound is not None and bound > size:
        raise PlanError(f"planner '{name}' claims a bound of {bound} above its own arena {size}")
    return Plan(
        planner=name,
        offsets=offsets,
        arena_size=size,
        seconds=seconds,
        proven_optimal=output.proven_optimal,
        bound=bound,
        notes=output.notes,
        stats=MappingProxyType(dict(output.stats)),
        missing_extra=output.missing_extra,
    )
