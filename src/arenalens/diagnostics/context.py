"""What every rule reads: the model, the runtime, its plans, and when each buffer is really in use.

Rules that judge a plan need two views of time. The *planned* view is the runtime's own lifetimes
(what its planner assumed). The *execution* view is when the bytes are really written and read:
for TFLM the same marking, but with nested subgraphs visited whenever a kernel runs them (TFLM's
marker tests the raw `builtin_code` field and skips IF / WHILE whose file sets only the deprecated
one, while the kernel still runs the branch — docs/runtime-rules.md §T4). Where the two differ,
a plan valid for the planner can still overwrite live data on the device.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING

from arenalens.analysis.arena_problem import ArenaProblem, BufferKind, PlannedBuffer
from arenalens.analysis.lifetimes import Timeline
from arenalens.ir import Model
from arenalens.names import short_name
from arenalens.pipeline import Analysis
from arenalens.records import record
from arenalens.runtimes.door import tflm_runtime
from arenalens.runtimes.litert.lifetimes import litert_timeline
from arenalens.target_build import board_options

if TYPE_CHECKING:
    from arenalens.targets import Target


@record(slots=True)
class Interval:
    """Inclusive [first, last] execution steps; first = -1 means never written."""

    first: int
    last: int

    def overlaps(self, other: Interval) -> bool:
        """True when the two intervals share a step."""
        return not (self.first > other.last or other.first > self.last)


@record()
class DiagnoseContext:
    """The inputs of every rule; derived views are computed once, on first use."""

    model: Model
    runtime: str  # "tflm" | "litert"
    analysis: Analysis | None  # None when planning failed; plan rules are then skipped
    required_alignment: int  # --alignment, or the runtime's data_alignment
    planner_effort: float = 5.0  # search effort of `planner-waste`, for all arenas
    planner_time_limit_s: float | None = None  # a user's wall-clock cap on it (None: none)
    what_if: bool = True  # allow hints that re-plan a changed model (LiteRT shapes, schedules)
    target: Target | None = None  # the board asked (--target): suggested commands name it
    delegate: str = "xnnpack"  # LiteRT: the delegate the app runs (--delegate; its default)

    def build_options(self, *, overlap: bool = False) -> str:
        """The options of a suggested command that select the analysed build again
        (`board_options`: the board as typed when one was asked, as check's steps print it)."""
        build = None if self.analysis is None else self.analysis.budget.build
        return board_options(self.target, build, overlap=overlap)

    @cached_property
    def execution_timeline(self) -> Timeline:
        """Lifetimes as execution really runs (see the module docstring)."""
        if self.runtime == "litert":
            return litert_timeline(self.model)
        return tflm_runtime().execution_timeline(self.model)

    @cached_property
    def operator_steps(self) -> Mapping[tuple[int, int], int]:
        """(subgraph, operator) → its step on the execution timeline (TFLM: first visit)."""
        steps: dict[tuple[int, int], int] = {}
        for step in self.execution_timeline.steps:
            if step.operator is not None:
                steps.setdefault((step.subgraph, step.operator), step.step)
        return MappingProxyType(steps)

    def execution_interval(self, arena: ArenaProblem, planned: PlannedBuffer) -> Interval:
        """When one planned buffer's bytes are really in use."""
        if self.runtime == "litert":
            buffer = arena.problem.by_id[planned.id]
            return Interval(buffer.start, buffer.end)
        if planned.kind in (BufferKind.SCRATCH, BufferKind.TEMPORARY) or planned.tensor is None:
            step = self.operator_steps.get((planned.subgraph, planned.operator or 0), -1)
            return Interval(step, step)
        lifetime = self.execution_timeline.lifetimes.get((planned.subgraph, planned.tensor))
        if lifetime is None:  # a runtime-added tensor the model does not list
            buffer = arena.problem.by_id[planned.id]
            return Interval(buffer.start, buffer.end)
        return Interval(lifetime.first, lifetime.last)


def tensor_name(model: Model, subgraph: int, tensor: int) -> str:
    """'7 'conv/Relu'' for messages."""
    return f"{tensor} '{short_name(model.subgraphs[subgraph].tensors[tensor].name)}'"
