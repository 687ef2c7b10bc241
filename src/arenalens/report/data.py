"""Report data: Analysis + plans → the frozen numbers every view draws (terminal, images, HTML).

A `MemoryReport` describes one model under one runtime: per arena, one row per planned buffer (what
it is, when it lives, how big), one row per step (what runs, bytes live), and one `PlanView` per
planner (an offset per buffer row). Renderers read only this, never the pipeline, so a view can be
tested on a hand-made report and every view of one report agrees on every number.

Steps shown are the arena's own steps. Lifetimes outside them are clamped for display: TFLM marks
a tensor that is read but never written with first = -1, and LiteRT keeps graph inputs and outputs
to the end with last = NEVER_FREED.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from arenalens.analysis.lifetimes import Step
from arenalens.analysis.problem import ArenaProblem, PlannedBuffer
from arenalens.ir import Model
from arenalens.pipeline import Analysis, ArenaResult
from arenalens.planning.problem import Plan

REPORT_SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class BufferRow:
    """One planned buffer as a user sees it: what it holds, its shape, bytes and lifetime."""

    id: int  # the planner's buffer id
    name: str
    kind: str  # tensor / scratch / temporary / variable
    subgraph: int
    tensor: int | None
    shape: tuple[int, ...]
    dtype: str
    nbytes: int  # bytes the runtime needs
    size: int  # bytes the planner places (TFLM rounds up to 16)
    first: int  # first step live, clamped to the arena's steps (inclusive)
    last: int  # last step live, clamped (inclusive)
    producer: int | None  # step of the operator that writes it
    consumers: tuple[int, ...]  # steps of the operators that read it
    aliases: tuple[str, ...] = ()  # tensors sharing these bytes (LiteRT in-place)


@dataclass(frozen=True, slots=True)
class StepRow:
    """One step: the operator that runs (or a subgraph entry), bytes live, buffers touched."""

    step: int
    subgraph: int
    operator: int | None
    opcode: str  # "CONV_2D", or the step's label when no operator runs
    live_bytes: int
    reads: tuple[int, ...]  # positions in ArenaReport.buffers
    writes: tuple[int, ...]


@dataclass(frozen=True)
class PlanView:
    """One planner's layout of an arena: an offset per buffer row, and the arena it needs."""

    planner: str
    arena_size: int
    offsets: tuple[int, ...]  # aligned with ArenaReport.buffers
    is_runtime: bool  # the runtime's own planner: what the device does
    proven_optimal: bool = False


@dataclass(frozen=True)
class ArenaReport:
    """One arena: its buffers, steps and plans (plans[0] is the one shown first)."""

    name: str
    buffers: tuple[BufferRow, ...]
    steps: tuple[StepRow, ...]
    plans: tuple[PlanView, ...]
    lower_bound: int
    no_reuse_bytes: int  # every buffer end to end (the naive plan)
    notes: tuple[str, ...] = ()

    @property
    def peak(self) -> StepRow | None:
        """The first step with the most bytes live, or None for an arena without steps."""
        if not self.steps:
            return None
        return max(self.steps, key=lambda row: (row.live_bytes, -row.step))

    def plan(self, planner: str) -> PlanView:
        """The view of one planner (KeyError when it was not run)."""
        for view in self.plans:
            if view.planner == planner:
                return view
        raise KeyError(planner)

    def live_at(self, step: int) -> tuple[int, ...]:
        """Positions of the buffers live at a step, largest first (ties by position)."""
        live = [i for i, row in enumerate(self.buffers) if row.first <= step <= row.last]
        return tuple(sorted(live, key=lambda i: (-self.buffers[i].size, i)))


@dataclass(frozen=True)
class MemoryReport:
    """One model under one runtime: every arena, what the runtime needs, an optional budget."""

    model: str  # display name
    source: str
    description: str
    runtime: str
    arenas: tuple[ArenaReport, ...]
    # Bytes to declare with plans[0] of every arena, and its parts (TFLM head / tail ...).
    required_bytes: int
    required_parts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    budget: int | None = None
    tensor_count: int = 0
    operator_count: int = 0

    @property
    def primary(self) -> ArenaReport:
        """The arena users care about first (TFLM head; LiteRT subgraph 0)."""
        return self.arenas[0]

    @property
    def other_bytes(self) -> int:
        """Bytes the runtime needs besides the primary arena (TFLM tail, other arenas)."""
        if not self.arenas or not self.primary.plans:
            return self.required_bytes
        return max(0, self.required_bytes - self.primary.plans[0].arena_size)

    def required_with(self, planner: str) -> int:
        """Bytes to declare when the primary arena uses planner's layout (other parts fixed)."""
        return self.primary.plan(planner).arena_size + self.other_bytes


# ---------------------------------------------------------------------------------------------
# Building


def build_report(
    analysis: Analysis,
    *,
    alternatives: Sequence[Sequence[Plan]] = (),
    budget: int | None = None,
    name: str | None = None,
) -> MemoryReport:
    """Analysis (+ more plans per arena, in arena order) → MemoryReport.

    Each arena's plans are its chosen plan first, then the runtime's and each alternative not yet
    listed (by planner name), then the no-reuse plan.
    """
    arenas = tuple(
        _arena_report(analysis.model, result, alternatives[i] if i < len(alternatives) else ())
        for i, result in enumerate(analysis.arenas)
    )
    return MemoryReport(
        model=name or analysis.model.name,
        source=analysis.model.source,
        description=analysis.model.description,
        runtime=analysis.runtime,
        arenas=arenas,
        required_bytes=analysis.budget.required_bytes,
        required_parts=MappingProxyType(dict(analysis.budget.parts)),
        budget=budget,
        tensor_count=analysis.model.tensor_count,
        operator_count=analysis.model.operator_count,
    )


def _arena_report(model: Model, result: ArenaResult, alternatives: Sequence[Plan]) -> ArenaReport:
    arena = result.arena
    ids = sorted(arena.buffers)
    step_of = _step_index(arena.steps)
    step_range = _step_range(arena.steps)
    rows = tuple(
        _buffer_row(model, arena, arena.buffers[buffer_id], step_of=step_of, step_range=step_range)
        for buffer_id in ids
    )
    plans = _ordered_plans(result, alternatives)
    views = tuple(
        PlanView(
            planner=plan.planner,
            arena_size=plan.arena_size,
            offsets=tuple(plan.offsets[buffer_id] for buffer_id in ids),
            is_runtime=plan.planner == arena.runtime_planner,
            proven_optimal=plan.proven_optimal,
        )
        for plan in plans
    )
    return ArenaReport(
        name=arena.name,
        buffers=rows,
        steps=_step_rows(model, arena, rows),
        plans=views,
        lower_bound=result.lower_bound,
        no_reuse_bytes=result.naive_plan.arena_size,
        notes=arena.notes,
    )


def _ordered_plans(result: ArenaResult, alternatives: Sequence[Plan]) -> list[Plan]:
    ordered: list[Plan] = []
    for plan in (result.plan, result.runtime_plan, *alternatives, result.naive_plan):
        if all(plan.planner != seen.planner for seen in ordered):
            ordered.append(plan)
    return ordered


def _step_index(steps: Sequence[Step]) -> dict[tuple[int, int], int]:
    """(subgraph, operator) → the step it runs at (the first, if a subgraph runs twice)."""
    index: dict[tuple[int, int], int] = {}
    for step in steps:
        if step.operator is not None:
            index.setdefault((step.subgraph, step.operator), step.step)
    return index


def _step_range(steps: Sequence[Step]) -> tuple[int, int]:
    if not steps:
        return 0, 0
    return min(s.step for s in steps), max(s.step for s in steps)


def _buffer_row(
    model: Model,
    arena: ArenaProblem,
    planned: PlannedBuffer,
    *,
    step_of: Mapping[tuple[int, int], int],
    step_range: tuple[int, int],
) -> BufferRow:
    low, high = step_range
    buffer = arena.problem.by_id[planned.id]
    subgraph = (
        model.subgraphs[planned.subgraph] if planned.subgraph < len(model.subgraphs) else None
    )
    tensor = None
    if (
        subgraph is not None
        and planned.tensor is not None
        and planned.tensor < len(subgraph.tensors)
    ):
        tensor = subgraph.tensors[planned.tensor]
    producer = consumers = None
    if subgraph is not None and planned.tensor is not None:
        writer = subgraph.producers.get(planned.tensor)
        producer = None if writer is None else step_of.get((planned.subgraph, writer))
        readers = subgraph.consumers.get(planned.tensor, ())
        consumers = tuple(
            step_of[(planned.subgraph, r)] for r in readers if (planned.subgraph, r) in step_of
        )
    if planned.operator is not None:  # scratch / temporary: "written" by its operator
        producer = step_of.get((planned.subgraph, planned.operator))
    aliases: tuple[str, ...] = ()
    if subgraph is not None:
        aliases = tuple(
            subgraph.tensors[a].name for a in planned.aliases if a < len(subgraph.tensors)
        )
    first = min(max(buffer.start, low), high)
    last = min(max(buffer.end, first), high)
    return BufferRow(
        id=planned.id,
        name=planned.name,
        kind=planned.kind.value,
        subgraph=planned.subgraph,
        tensor=planned.tensor,
        shape=tensor.shape if tensor is not None else (),
        dtype=tensor.dtype.name if tensor is not None else "-",
        nbytes=planned.nbytes,
        size=buffer.size,
        first=first,
        last=last,
        producer=producer,
        consumers=consumers or (),
        aliases=aliases,
    )


def _step_rows(model: Model, arena: ArenaProblem, rows: Sequence[BufferRow]) -> tuple[StepRow, ...]:
    live = _live_bytes_per_step(rows, [s.step for s in arena.steps])
    by_tensor: dict[tuple[int, int], int] = {
        (row.subgraph, row.tensor): i for i, row in enumerate(rows) if row.tensor is not None
    }
    # Scratch and temporaries belong to their operator: it writes them.
    requested: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        if row.kind in ("scratch", "temporary") and row.producer is not None:
            requested.setdefault(row.producer, []).append(i)
    result = []
    for step in arena.steps:
        reads: tuple[int, ...] = ()
        writes: tuple[int, ...] = ()
        opcode = step.label
        if step.operator is not None and step.subgraph < len(model.subgraphs):
            op = model.subgraphs[step.subgraph].operators[step.operator]
            opcode = op.opcode
            reads = _positions(by_tensor, step.subgraph, op.inputs)
            writes = _positions(by_tensor, step.subgraph, op.outputs)
            writes += tuple(requested.get(step.step, ()))
        result.append(
            StepRow(
                step=step.step,
                subgraph=step.subgraph,
                operator=step.operator,
                opcode=opcode,
                live_bytes=live.get(step.step, 0),
                reads=reads,
                writes=writes,
            )
        )
    return tuple(result)


def _positions(
    by_tensor: Mapping[tuple[int, int], int], subgraph: int, tensors: Sequence[int]
) -> tuple[int, ...]:
    found: list[int] = []
    for tensor in tensors:
        i = by_tensor.get((subgraph, tensor))
        if i is not None and i not in found:
            found.append(i)
    return tuple(found)


def _live_bytes_per_step(rows: Sequence[BufferRow], steps: Sequence[int]) -> dict[int, int]:
    """Step → planned bytes live there (a sweep over start/end events)."""
    delta: dict[int, int] = {}
    for row in rows:
        delta[row.first] = delta.get(row.first, 0) + row.size
        delta[row.last + 1] = delta.get(row.last + 1, 0) - row.size
    live: dict[int, int] = {}
    running = 0
    events = sorted(delta)
    cursor = 0
    for step in sorted(steps):
        while cursor < len(events) and events[cursor] <= step:
            running += delta[events[cursor]]
            cursor += 1
        live[step] = running
    return live


# ---------------------------------------------------------------------------------------------
# JSON


def report_document(reports: Sequence[MemoryReport], *, tool: str = "") -> dict[str, Any]:
    """Reports → one JSON-ready document (columnar per arena; what the HTML page embeds)."""
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "tool": tool,
        "reports": [_report_json(report) for report in reports],
    }


def _report_json(report: MemoryReport) -> dict[str, Any]:
    return {
        "model": report.model,
        "source": report.source,
        "description": report.description,
        "runtime": report.runtime,
        "tensor_count": report.tensor_count,
        "operator_count": report.operator_count,
        "required_bytes": report.required_bytes,
        "required_parts": dict(report.required_parts),
        "other_bytes": report.other_bytes,
        "budget": report.budget,
        "arenas": [_arena_json(arena) for arena in report.arenas],
    }


def _arena_json(arena: ArenaReport) -> dict[str, Any]:
    rows = arena.buffers
    peak = arena.peak
    return {
        "name": arena.name,
        "lower_bound": arena.lower_bound,
        "no_reuse_bytes": arena.no_reuse_bytes,
        "peak_step": None if peak is None else peak.step,
        "notes": list(arena.notes),
        "buffers": {
            "id": [r.id for r in rows],
            "name": [r.name for r in rows],
            "kind": [r.kind for r in rows],
            "subgraph": [r.subgraph for r in rows],
            "tensor": [r.tensor for r in rows],
            "shape": [list(r.shape) for r in rows],
            "dtype": [r.dtype for r in rows],
            "nbytes": [r.nbytes for r in rows],
            "size": [r.size for r in rows],
            "first": [r.first for r in rows],
            "last": [r.last for r in rows],
            "producer": [r.producer for r in rows],
            "consumers": [list(r.consumers) for r in rows],
            "aliases": [list(r.aliases) for r in rows],
        },
        "steps": {
            "step": [s.step for s in arena.steps],
            "subgraph": [s.subgraph for s in arena.steps],
            "operator": [s.operator for s in arena.steps],
            "opcode": [s.opcode for s in arena.steps],
            "live_bytes": [s.live_bytes for s in arena.steps],
            "reads": [list(s.reads) for s in arena.steps],
            "writes": [list(s.writes) for s in arena.steps],
        },
        "plans": [
            {
                "planner": view.planner,
                "arena_size": view.arena_size,
                "is_runtime": view.is_runtime,
                "proven_optimal": view.proven_optimal,
                "offsets": list(view.offsets),
            }
            for view in arena.plans
        ],
    }
