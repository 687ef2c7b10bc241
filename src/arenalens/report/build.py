"""Report building: Analysis (+ alternative plans, a budget) → MemoryReport.

Steps shown are the arena's own steps. Lifetimes outside them are clamped for display: TFLM marks
a tensor that is read but never written with first = -1, and LiteRT keeps graph inputs and outputs
to the end with last = NEVER_FREED.

Nothing here plans: the alternative plans a report lets the user switch between, and the number
to declare with each, come made (`alternatives.py`). An analysis with overlaps puts its overlap
plan first, with the allowed overlaps and their bound next to the disjoint one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from arenalens.alternatives import Alternatives
from arenalens.analysis.arena_problem import ArenaProblem, PlannedBuffer
from arenalens.analysis.lifetimes import Step
from arenalens.declared import DeclaredArena, declared_arena
from arenalens.ir import Model
from arenalens.pipeline import Analysis, ArenaResult
from arenalens.planning.problem import Plan
from arenalens.report.data import (
    ArenaReport,
    BufferRow,
    MemoryReport,
    OverlapRow,
    PlanView,
    StepRow,
)
from arenalens.report.labels import short_labels

NO_ALTERNATIVES = Alternatives()


def build_report(
    analysis: Analysis,
    *,
    alternatives: Alternatives = NO_ALTERNATIVES,
    budget: int | None = None,
    name: str | None = None,
    delegate: str = "xnnpack",
) -> MemoryReport:
    """Analysis (+ alternative plans, made by `alternatives.plan_alternatives`) → MemoryReport;
    a LiteRT model's verdict and heap are the ones under `delegate` (LiteRT's, --delegate).

    Each arena's plans are its chosen plan first, then the runtime's and each alternative not yet
    listed (by planner name), then the no-reuse plan. Every plan of the primary arena carries the
    number to declare with it when the analysis or the alternatives hold it.
    """
    more = alternatives.plans
    arenas = tuple(
        _arena_report(analysis.model, result, more[i] if i < len(more) else ())
        for i, result in enumerate(analysis.arenas)
    )
    if arenas:
        arenas = (
            _with_required_bytes(analysis, arenas[0], alternatives),
            *arenas[1:],
        )
    shown = analysis
    if analysis.overlap is not None and arenas:
        arenas = (_with_overlap(arenas[0], analysis), *arenas[1:])
        shown = _overlap_analysis(analysis)
    budget_parts = shown.budget
    return MemoryReport(
        model=name or analysis.model.name,
        source=analysis.model.source,
        description=analysis.model.description,
        runtime=analysis.runtime,
        arenas=arenas,
        required_bytes=budget_parts.required_bytes,
        required_parts=MappingProxyType(dict(budget_parts.parts)),
        budget=budget,
        tensor_count=analysis.model.tensor_count,
        operator_count=analysis.model.operator_count,
        declared=_declared(shown, delegate),
        build=analysis.budget.build,
        sections=budget_parts.sections,
        interpreter_heap=_interpreter_heap(analysis, delegate),
    )


def _declared(analysis: Analysis, delegate: str) -> DeclaredArena:
    """The number to declare, LiteRT's under `delegate` (`litert_memory.delegate_verdict`)."""
    if analysis.runtime != "litert":
        return declared_arena(analysis)
    from arenalens.litert_memory import delegate_verdict  # noqa: PLC0415 - LiteRT only

    return delegate_verdict(analysis, delegate).declared


def _interpreter_heap(analysis: Analysis, delegate: str) -> tuple[dict[str, Any], ...]:
    """LiteRT: the interpreter's heap under each delegate that runs the model, `delegate`'s
    first (`litert_memory.heap_documents_of`); () for TFLM."""
    if analysis.runtime != "litert":
        return ()
    from arenalens.litert_memory import heap_documents_of  # noqa: PLC0415 - LiteRT only

    return tuple(heap_documents_of(analysis, first=delegate))


def _with_required_bytes(
    analysis: Analysis, arena: ArenaReport, alternatives: Alternatives
) -> ArenaReport:
    """The primary arena's plan views, each with the number to declare under that plan and its
    sections: the analysis's own for the runtime's and the chosen plan, the computed one for an
    alternative (`Alternatives.required_bytes`); none for the no-reuse baseline."""
    if not analysis.runtime_budget.device:
        return arena  # not made by a runtime's rules (a hand-made analysis): no numbers
    first = analysis.arenas[0]
    known = {
        first.runtime_plan.planner: analysis.runtime_budget,
        first.plan.planner: analysis.budget,
    }
    views = []
    for view in arena.plans:
        budget = known.get(view.planner)
        if budget is not None:
            views.append(
                replace(view, required_bytes=budget.required_bytes, sections=budget.sections)
            )
            continue
        views.append(
            replace(
                view,
                required_bytes=alternatives.required_bytes.get(view.planner),
                sections=alternatives.sections.get(view.planner, ()),
            )
        )
    return replace(arena, plans=tuple(views))


def _with_overlap(arena: ArenaReport, analysis: Analysis) -> ArenaReport:
    """The primary arena with the overlap plan shown first and its allowed overlaps listed."""
    overlap = analysis.overlap
    assert overlap is not None
    position = {row.id: index for index, row in enumerate(arena.buffers)}
    rows = tuple(
        OverlapRow(
            output=position[pair.overlap.output],
            input=position[pair.overlap.input],
            min_offset_distance=pair.overlap.min_offset_distance,
            operator=pair.operator,
            opcode=pair.opcode,
        )
        for pair in overlap.pairs
        if pair.overlap.output in position and pair.overlap.input in position
    )
    plan = overlap.plan
    view = PlanView(
        planner=plan.planner,
        arena_size=plan.arena_size,
        offsets=tuple(plan.offsets[row.id] for row in arena.buffers),
        is_runtime=False,
        proven_optimal=plan.proven_optimal or plan.arena_size == overlap.lower_bound,
        required_bytes=overlap.budget.required_bytes,
        sections=overlap.budget.sections,
        missing_extra=plan.missing_extra,
    )
    return replace(
        arena,
        plans=(view, *arena.plans),
        overlaps=rows,
        overlap_lower_bound=overlap.lower_bound,
    )


def _overlap_analysis(analysis: Analysis) -> Analysis:
    """The analysis as if its primary arena used the overlap plan (what the report shows first,
    and what the number to declare is then for)."""
    overlap = analysis.overlap
    assert overlap is not None
    primary = replace(analysis.arenas[0], plan=overlap.plan)
    return replace(
        analysis,
        planner=overlap.plan.planner,
        arenas=(primary, *analysis.arenas[1:]),
        budget=overlap.budget,
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
    labels = short_labels([row.name for row in rows])
    rows = tuple(replace(row, label=label) for row, label in zip(rows, labels, strict=True))
    plans = _ordered_plans(result, alternatives)
    views = tuple(
        PlanView(
            planner=plan.planner,
            arena_size=plan.arena_size,
            offsets=tuple(plan.offsets[buffer_id] for buffer_id in ids),
            is_runtime=plan.planner == arena.runtime_planner,
            # A plan at the lower bound is optimal whether or not its planner says so.
            proven_optimal=plan.proven_optimal or plan.arena_size == result.lower_bound,
            missing_extra=plan.missing_extra,
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
