"""Report data: the frozen numbers every view draws (terminal, images, HTML), and its JSON form.

A `MemoryReport` describes one model under one runtime: per arena, one row per planned buffer (what
it is, when it lives, how big), one row per step (what runs, bytes live), and one `PlanView` per
planner (an offset per buffer row). Renderers read only this, never the pipeline, so a view can be
tested on a hand-made report and every view of one report agrees on every number.
`report.build` makes one from an Analysis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from functools import cached_property
from operator import attrgetter
from types import MappingProxyType
from typing import Any

from arenalens.builds.build import Build, build_document, build_flags, overlap_flags
from arenalens.declared import DeclaredArena, parts_text
from arenalens.placement import placement_document
from arenalens.planning.problem import missing_extra_text
from arenalens.records import record
from arenalens.report.labels import (
    OVERLAP_PLAN_SUFFIX,
    declared_qualifier,
    operator_label,
    optimize_command,
    reason_prefix,
    shape_label,
)
from arenalens.report.npu_memory import npu_shortfall
from arenalens.runtimes.sections import ArenaSection, sections_json, with_section_resized
from arenalens.units import format_bytes_short
from arenalens.verdict import Verdict

REPORT_SCHEMA_VERSION = 2


@record(slots=True)
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
    label: str = ""  # a short name that tells it apart from the arena's other buffers


@record(slots=True)
class StepRow:
    """One step: the operator that runs (or a subgraph entry), bytes live, buffers touched."""

    step: int
    subgraph: int
    operator: int | None
    opcode: str  # "CONV_2D", or the step's label when no operator runs
    live_bytes: int
    reads: tuple[int, ...]  # positions in ArenaReport.buffers
    writes: tuple[int, ...]


@record()
class PlanView:
    """One planner's layout of an arena: an offset per buffer row, and the arena it needs."""

    planner: str
    arena_size: int
    offsets: tuple[int, ...]  # aligned with ArenaReport.buffers
    is_runtime: bool  # the runtime's own planner: what the device does
    proven_optimal: bool = False  # its planner proved it, or it meets the lower bound
    # The number to declare with this plan of the primary arena (TFLM: head, tail and setup
    # replayed with it as an offline plan); None when not computed.
    required_bytes: int | None = None
    # Where every byte of that number goes, when computed (`MemoryBudget.sections`).
    sections: tuple[ArenaSection, ...] = ()
    # The install command of the extra whose exact search this plan went without, above its
    # lower bound (`Plan.missing_extra`; '' none).
    missing_extra: str = ""


@record(slots=True)
class FindingRow:
    """One diagnose finding as the report lists it under "what to do next"."""

    rule: str
    severity: str  # error / warning / info
    where: str
    message: str
    fix: str
    saving_bytes: int | None = None


@record(slots=True)
class InputSizeRow:
    """One input size planned by --max-input: the bytes to declare there (None: refused)."""

    shape: tuple[int, ...]
    height: int
    required_bytes: int | None
    fits: bool


@record(slots=True)
class OverlapRow:
    """An allowed overlap: buffer row `output` may start `min_offset_distance` bytes (or more)
    below buffer row `input`, which its operator consumes."""

    output: int  # position in ArenaReport.buffers
    input: int
    min_offset_distance: int
    operator: int
    opcode: str


@record()
class ArenaReport:
    """One arena: its buffers, steps and plans (plans[0] is the one shown first)."""

    name: str
    buffers: tuple[BufferRow, ...]
    steps: tuple[StepRow, ...]
    plans: tuple[PlanView, ...]
    lower_bound: int  # no plan sharing no bytes can use less
    no_reuse_bytes: int  # every buffer end to end (the naive plan)
    notes: tuple[str, ...] = ()
    # With overlaps allowed (TFLM, `--overlap`): the pairs and the bound they leave.
    overlaps: tuple[OverlapRow, ...] = ()
    overlap_lower_bound: int | None = None

    def shared_regions(self, view: PlanView) -> tuple[tuple[int, int, int, int, int], ...]:
        """(overlap index, first step, last step, low byte, high byte) of every allowed overlap
        whose buffers share bytes in this view's layout."""
        found = []
        for index, overlap in enumerate(self.overlaps):
            out, source = self.buffers[overlap.output], self.buffers[overlap.input]
            low = max(view.offsets[overlap.output], view.offsets[overlap.input])
            high = min(
                view.offsets[overlap.output] + out.size, view.offsets[overlap.input] + source.size
            )
            first, last = max(out.first, source.first), min(out.last, source.last)
            if low < high and first <= last:
                found.append((index, first, last, low, high))
        return tuple(found)

    def lower_bound_for(self, view: PlanView) -> int:
        """The bound a view is judged against: with overlaps when it shares bytes."""
        if self.overlap_lower_bound is not None and self.shared_regions(view):
            return self.overlap_lower_bound
        return self.lower_bound

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

    @cached_property
    def spans_subgraphs(self) -> bool:
        """True when operator numbers need their subgraph: the steps run another subgraph than 0."""
        return any(step.subgraph != 0 for step in self.steps)

    def step_label(self, row: StepRow) -> str:
        """What runs at a step: 'op 3 CONV_2D' ('subgraph 1 op 3 ...' when it spans several)."""
        return operator_label(
            row.operator, row.opcode, subgraph=row.subgraph, nested=self.spans_subgraphs
        )

    def live_at(self, step: int) -> tuple[int, ...]:
        """Positions of the buffers live at a step, largest first (ties by position)."""
        live = [i for i, row in enumerate(self.buffers) if row.first <= step <= row.last]
        return tuple(sorted(live, key=lambda i: (-self.buffers[i].size, i)))


@record()
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
    declared: DeclaredArena | None = None  # the number to declare, its parts, how sure
    # The answers and next steps (`verdict.py`), computed once by the command.
    verdict: Verdict | None = None
    findings: tuple[FindingRow, ...] = ()  # diagnose, most severe first
    next_steps: tuple[str, ...] = ()  # what to do, in order
    model_argument: str = "MODEL"  # the model as typed, for the commands shown
    input_name: str = ""  # --max-input: the resized input
    input_sizes: tuple[InputSizeRow, ...] = ()  # --max-input: every size planned, by height
    max_input: tuple[int, ...] | None = None  # --max-input: the largest shape that fits
    # The build the figures are for (None for a runtime without builds).
    build: Build | None = None
    # Where every byte of required_bytes goes, in address order (TFLM: head, setup, tail by
    # part; LiteRT: one section per arena); () when not made by a runtime's rules.
    sections: tuple[ArenaSection, ...] = ()
    # LiteRT: the interpreter's heap under each delegate (`heap.heap_document`), the delegate
    # the figure is for first; () for TFLM.
    interpreter_heap: tuple[Mapping[str, Any], ...] = ()

    @property
    def primary(self) -> ArenaReport:
        """The arena users care about first (TFLM head; LiteRT subgraph 0)."""
        return self.arenas[0]

    @property
    def other_bytes(self) -> int:
        """Bytes the runtime needs besides the primary arena (TFLM tail, other arenas)."""
        if not self.arenas:
            return self.required_bytes
        return self.other_bytes_than(self.primary)

    def other_bytes_than(self, arena: ArenaReport) -> int:
        """Bytes the runtime needs besides one arena with its first plan: the number to declare
        with every arena's first plan, minus that arena's."""
        if not arena.plans:
            return self.required_bytes
        return max(0, self.required_bytes - arena.plans[0].arena_size)

    def required_with(self, planner: str) -> int:
        """Bytes to declare when the primary arena uses planner's layout: computed for that plan
        when the report has it, else that arena plus everything else the runtime needs."""
        return self.required_with_view(self.primary, self.primary.plan(planner))

    def sections_with_view(self, arena: ArenaReport, view: PlanView) -> tuple[ArenaSection, ...]:
        """Where every byte of `required_with_view` goes: the sections computed for that plan,
        else the report's own with that arena at the plan's size (what `required_with_view`
        assumes); () when the report has none."""
        if arena is self.primary and view.sections:
            return view.sections
        if not self.sections or not arena.plans:
            return ()
        if view is arena.plans[0] and arena is self.primary:
            return self.sections
        return with_section_resized(
            self.sections, arena.name, view.arena_size, arena.lower_bound_for(view)
        )

    def required_with_view(self, arena: ArenaReport, view: PlanView) -> int:
        """Bytes to declare when one arena uses one of its plans (the others keep their first):
        computed for that plan of the primary arena when the report has it, else that arena
        plus everything else the runtime needs."""
        if arena is self.primary and view.required_bytes is not None:
            return view.required_bytes
        return view.arena_size + self.other_bytes_than(arena)


# ---------------------------------------------------------------------------------------------
# JSON


def report_document(reports: Sequence[MemoryReport], *, tool: str = "") -> dict[str, Any]:
    """Reports → one JSON-ready document (columnar per arena; what the HTML page embeds).

    Besides the numbers it carries the labels every view shows (a step's operator, a buffer's
    short label, shape text and matching key, a plan's bound, shared bytes, number to declare
    and optimize command), made by the same functions as the terminal report: the HTML viewer
    shows them and derives none of them again (report/assets/viewer/document.js types them).
    """
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "tool": tool,
        "reports": [_report_json(report) for report in reports],
    }


# At most this many section entries in a report's document: every plan of every arena carries
# all the report's sections (one per arena under LiteRT), so a model of hundreds of subgraphs would
# write sections squared (a hostile 24 KB file of 500 subgraphs: a 1.6 GiB page, 8 GB of memory).
# Real models stay far below (100 arenas of 3 plans: 30,000). Past it the document has no sections,
# as a report whose runtime computes none (the page then draws no whole-arena strip).
_SECTION_ENTRIES = 100_000


def _sections_fit(report: MemoryReport) -> bool:
    views = sum(len(arena.plans) for arena in report.arenas)
    return len(report.sections) * (views + 1) <= _SECTION_ENTRIES


def _report_json(report: MemoryReport) -> dict[str, Any]:
    sectioned = _sections_fit(report)
    return {
        "model": report.model,
        "source": report.source,
        "description": report.description,
        "runtime": report.runtime,
        "tensor_count": report.tensor_count,
        "operator_count": report.operator_count,
        "build": build_document(report.build),
        "required_bytes": report.required_bytes,
        "required_parts": dict(report.required_parts),
        "arena_sections": sections_json(report.sections) if sectioned else [],
        "other_bytes": report.other_bytes,
        "budget": report.budget,
        "declare": None if report.declared is None else _declared_json(report.declared),
        "verdict": None if report.verdict is None else _verdict_json(report.verdict),
        "next_steps": list(report.next_steps),
        "findings": [
            {
                "rule": f.rule,
                "severity": f.severity,
                "where": f.where,
                "message": f.message,
                "fix": f.fix,
                "saving_bytes": f.saving_bytes,
            }
            for f in report.findings
        ],
        "model_argument": report.model_argument,
        "max_input_name": report.input_name or None,
        "max_input_shape": None if report.max_input is None else list(report.max_input),
        "input_sizes": [
            {
                "shape": list(size.shape),
                "height": size.height,
                "required_bytes": size.required_bytes,
                "fits": size.fits,
            }
            for size in report.input_sizes
        ],
        "arenas": [_arena_json(report, arena, sectioned) for arena in report.arenas],
        # LiteRT only (a TFLM report's document is as it was).
        **(
            {"interpreter_heap": [dict(heap) for heap in report.interpreter_heap]}
            if report.interpreter_heap
            else {}
        ),
    }


def _declared_json(declared: DeclaredArena) -> dict[str, Any]:
    return {
        **declared.as_dict(),
        "qualifier": declared_qualifier(declared.status),
        "reason_prefix": reason_prefix(declared.status),
        "parts_text": parts_text(declared, format_bytes_short),
        **({"process_memory": True} if declared.is_process_memory else {}),
    }


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    """The verdict as the viewer reads it: the answer, the budget asked about, the numbers,
    the grouped reasons and the steps (each with the command it names)."""
    fit = verdict.fit
    target = None if fit is None else fit.target
    document: dict[str, Any] = {
        "verdict": None if verdict.answer is None else verdict.answer.value,
        "where": verdict.where,
        "budget_bytes": None if fit is None else fit.budget_bytes,
        "reserve_bytes": None if fit is None else fit.reserve_bytes,
        "available_bytes": None if fit is None else fit.available_bytes,
        "fits": verdict.fits,
        "fits_after_optimize": verdict.fits_after_optimize,
        "optimized_bytes": verdict.optimized_bytes if verdict.has_number else None,
        # How the views say the exact search could lower optimized_bytes or let a rewrite fit.
        "optimized_missing_extra_text": missing_extra_text(verdict.optimized_missing_extra)
        if verdict.has_number and verdict.optimized_missing_extra
        else None,
        "best_case_bytes": None if fit is None or not verdict.has_number else fit.best_case_bytes,
        "target": None if target is None else target.name,
        "source": "" if target is None else target.source,
        "runs": verdict.runs,
        "plan_holds": verdict.plan_holds,
        "shape_known": verdict.shape_known,
        "required_bytes": verdict.required_bytes,
        "headroom_bytes": verdict.headroom_bytes,
        "cannot_run": [refusal.as_dict() for refusal in verdict.refusals],
        "plan_conflicts": [conflict.as_dict() for conflict in verdict.conflicts],
        "steps": [step.as_dict() for step in verdict.steps],
    }
    if fit is not None and fit.placement is not None and verdict.has_number:
        # A board with several RAM banks: where each part goes (only then in the document).
        document["placement"] = placement_document(fit.placement)
    if verdict.npu_short and fit is not None and fit.npu is not None:
        # The arena fits, the NPU's other SRAM pieces do not: why (only then in the document).
        document["npu_short"] = npu_shortfall(fit.npu)
    return document


def _arena_json(report: MemoryReport, arena: ArenaReport, sectioned: bool) -> dict[str, Any]:
    rows = arena.buffers
    peak = arena.peak
    return {
        "name": arena.name,
        "other_bytes": report.other_bytes_than(arena),
        "lower_bound": arena.lower_bound,
        "overlap_lower_bound": arena.overlap_lower_bound,
        "overlaps": _columns(
            arena.overlaps, "output", "input", "min_offset_distance", "operator", "opcode"
        ),
        "no_reuse_bytes": arena.no_reuse_bytes,
        "peak_step": None if peak is None else peak.step,
        "notes": list(arena.notes),
        "buffers": {
            **_columns(
                rows,
                "id",
                "name",
                "kind",
                "subgraph",
                "tensor",
                "shape",
                "dtype",
                "nbytes",
                "size",
                "first",
                "last",
                "producer",
                "consumers",
                "aliases",
                "label",
            ),
            "shape_label": [shape_label(r.kind, r.shape) for r in rows],
            # The matching key where it is not the name itself (null), to keep pages small.
            "key": [
                None if key == row.name else key
                for key, row in zip(match_keys(rows), rows, strict=True)
            ],
        },
        "steps": {
            **_columns(
                arena.steps,
                "step",
                "subgraph",
                "operator",
                "opcode",
                "live_bytes",
                "reads",
                "writes",
            ),
            "label": [arena.step_label(s) for s in arena.steps],
        },
        "plans": [_plan_json(report, arena, view, sectioned) for view in arena.plans],
    }


def _columns(rows: Sequence[object], *names: str) -> dict[str, list[Any]]:
    """Rows → the viewer's column form: one list per named field, in that order (a tuple field
    as a list), so that a page of many rows does not repeat every field name."""
    return {
        name: [list(value) if isinstance(value, tuple) else value for value in map(read, rows)]
        for name, read in zip(names, map(attrgetter, names), strict=True)
    }


def _plan_json(
    report: MemoryReport, arena: ArenaReport, view: PlanView, sectioned: bool
) -> dict[str, Any]:
    declare_bytes = report.required_with_view(arena, view)
    document: dict[str, Any] = {
        "planner": view.planner,
        "arena_size": view.arena_size,
        "is_runtime": view.is_runtime,
        "proven_optimal": view.proven_optimal,
        "required_bytes": view.required_bytes,
        "offsets": list(view.offsets),
        "lower_bound": arena.lower_bound_for(view),
        "shared_regions": [list(region) for region in arena.shared_regions(view)],
        "declare_bytes": declare_bytes,
        "sections": sections_json(report.sections_with_view(arena, view)) if sectioned else [],
        "parts_text": _plan_parts_text(report, arena, view, declare_bytes),
        "optimize_command": (
            None
            if view.is_runtime
            else optimize_command(report.model_argument, view.planner, plan_options(report, view))
        ),
    }
    if view.missing_extra:  # how the views say the plan went without the exact search
        document["missing_extra_text"] = missing_extra_text(view.missing_extra)
    return document


def plan_options(report: MemoryReport, view: PlanView) -> str:
    """The build options of the command that writes this plan (the overlap plan's own rules)."""
    if view.planner.endswith(OVERLAP_PLAN_SUFFIX):
        return overlap_flags(report.build)
    return build_flags(report.build)


def _plan_parts_text(
    report: MemoryReport, arena: ArenaReport, view: PlanView, declare_bytes: int
) -> str:
    """What the number to declare with a plan is made of ('' when it is the arena alone)."""
    declared = report.declared
    if declared is None or report.runtime != "tflm":
        if declare_bytes == view.arena_size:
            return ""
        return (
            f"arena {format_bytes_short(view.arena_size)} + "
            f"{format_bytes_short(declare_bytes - view.arena_size)} in the other arenas"
        )
    if view.is_runtime and arena is report.primary:
        return parts_text(declared, format_bytes_short)
    return (
        f"head {format_bytes_short(view.arena_size)} + tail and setup "
        f"{format_bytes_short(declare_bytes - view.arena_size)}, all inside the tensor arena"
    )


def match_keys(rows: Sequence[BufferRow]) -> list[str]:
    """Buffer rows → the keys that match them across two reports: the name (or '<unnamed KIND>'),
    with '#k' from its second occurrence on."""
    seen: dict[str, int] = {}
    keys = []
    for row in rows:
        name = row.name or f"<unnamed {row.kind}>"
        count = seen.get(name, 0)
        seen[name] = count + 1
        keys.append(name if count == 0 else f"{name}#{count + 1}")
    return keys
