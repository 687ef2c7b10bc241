"""`plan` and `verify` documents: Analysis or VerifyResult → a JSON-ready document.

The document is the report: plain numbers and strings, built once from the Analysis; the text
renderer (`plan_text`) reads only the document, so `--json` and the table always agree. Both work
for any runtime: arenas, buffers and budget parts come from the runtime's own rules. Nothing here
imports the terminal renderer (rich): `plan --json` does not need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from arenalens.analysis.arena_problem import BufferKind
from arenalens.analysis.lifetimes import NEVER_FREED
from arenalens.builds.build import build_document
from arenalens.declared import declared_arena
from arenalens.report.npu_memory import npu_memory_json
from arenalens.runtimes.sections import sections_json

if TYPE_CHECKING:  # the report reads an Analysis; it never runs the pipeline
    from arenalens.pipeline import Analysis, ArenaResult
    from arenalens.runtimes.verification import VerifyResult

PLAN_SCHEMA_VERSION = 1
_TENSOR_KINDS = (BufferKind.TENSOR, BufferKind.VARIABLE)


def percent_over(value: int, bound: int) -> float | None:
    """How far value is above bound, in percent (2 decimals); None when bound is not positive."""
    return None if bound <= 0 else round(100.0 * (value - bound) / bound, 2)


def ratio(numerator: int, denominator: int) -> float | None:
    """numerator / denominator (3 decimals); None when the denominator is not positive."""
    return None if denominator <= 0 else round(numerator / denominator, 3)


def plan_document(
    analysis: Analysis,
    *,
    arena_base: int | None = None,
    threads: int = 1,
    isa: str = "",
    delegate: str = "xnnpack",
) -> dict[str, Any]:
    """Analysis → the `plan --json` document (primary arena numbers at the top level); LiteRT's
    verdict is the one under `delegate` (`litert_memory.delegate_verdict`, as check's), its
    interpreter heap for `threads` threads on `isa` ('' for the measuring machine)."""
    primary = analysis.primary
    tensors: list[dict[str, Any]] = []
    scratch: list[dict[str, Any]] = []
    for result in analysis.arenas:
        rows = _buffer_rows(analysis, result, arena_base)
        tensors.extend(row for row in rows if row["kind"] in _TENSOR_KINDS)
        scratch.extend(row for row in rows if row["kind"] not in _TENSOR_KINDS)
    declared = declared_arena(analysis)
    obstacles = analysis.budget.obstacles
    if analysis.runtime == "litert":
        from arenalens.litert_memory import delegate_verdict  # noqa: PLC0415 - LiteRT only

        verdict = delegate_verdict(analysis, delegate)
        declared, obstacles = verdict.declared, verdict.obstacles
    document: dict[str, Any] = {
        "schema_version": PLAN_SCHEMA_VERSION,
        "model": analysis.model.source,
        "runtime": analysis.runtime,
        "planner": analysis.planner,
        "runtime_planner": primary.arena.runtime_planner,
        # Whether the runtime can set the model up and invoke it; when not, why (the sizes below
        # are then what it would plan, not a size that works).
        "runs": not obstacles,
        "cannot_run": [obstacle.as_dict() for obstacle in obstacles],
        # Whether the model's offline plan holds at its tensor sizes and on this build; when not,
        # why (it would corrupt tensors: CANNOT RUN CORRECTLY, and the sizes below mean nothing).
        "plan_holds": not declared.conflicts,
        "plan_conflicts": [conflict.as_dict() for conflict in declared.conflicts],
        "alignment": _alignment(primary),
        "alignment_applies_to": "sizes" if primary.arena.size_rounding > 1 else "offsets",
        "arena_base": arena_base,
        "arena_bytes": primary.plan.arena_size,
        "lower_bound_bytes": primary.lower_bound,
        "naive_bytes": primary.naive_plan.arena_size,
        "runtime_arena_bytes": primary.runtime_plan.arena_size,
        "overhead_over_lower_bound_percent": percent_over(
            primary.plan.arena_size, primary.lower_bound
        ),
        "reuse_ratio_vs_naive": ratio(primary.naive_plan.arena_size, primary.plan.arena_size),
        "build": build_document(analysis.budget.build),
        "required_bytes": analysis.budget.required_bytes,
        "runtime_required_bytes": analysis.runtime_budget.required_bytes,
        "declare": declared.as_dict(),
        # Where every byte of required_bytes goes (TFLM: head, setup, tail by part).
        "arena_sections": sections_json(analysis.budget.sections),
        "budget": {
            "parts": dict(analysis.budget.parts),
            "assumptions": list(analysis.budget.assumptions),
            "estimates": list(analysis.budget.estimate_reasons),
        },
        "arenas": [_arena_summary(result) for result in analysis.arenas],
        "tensors": tensors,
        "scratch": scratch,
    }
    if analysis.runtime == "litert":
        from arenalens.litert_memory import heap_fields  # noqa: PLC0415 - LiteRT only

        # The verdict's delegate (check's --delegate), its heap first.
        document["delegate"] = delegate
        document.update(heap_fields(analysis, threads=threads, isa=isa, first=delegate))
    if analysis.runtime == "tflm":
        document["head_bytes"] = analysis.budget.parts.get("head")
        document["tail_bytes"] = analysis.budget.parts.get("tail")
        # No number to declare for a build that cannot run the model (`runs` is false).
        runs = analysis.budget.runs
        document["min_arena_bytes"] = analysis.budget.required_bytes if runs else None
        document["min_arena_is_estimate"] = bool(analysis.budget.estimate_reasons)
        npu = npu_memory_json(analysis.model, analysis.budget.required_bytes)
        if npu is not None:
            # A Vela-compiled model: the memories the board gives the NPU besides the arena.
            document["npu_memory"] = npu
    return document


def _alignment(result: ArenaResult) -> int:
    if result.arena.size_rounding > 1:
        return result.arena.size_rounding
    return result.arena.problem.alignment


def _arena_summary(result: ArenaResult) -> dict[str, Any]:
    return {
        "name": result.arena.name,
        "planner": result.plan.planner,
        "arena_bytes": result.plan.arena_size,
        "lower_bound_bytes": result.lower_bound,
        "naive_bytes": result.naive_plan.arena_size,
        "runtime_planner": result.arena.runtime_planner,
        "runtime_arena_bytes": result.runtime_plan.arena_size,
        "buffers": len(result.arena.problem.buffers),
        "notes": list(result.arena.notes),
    }


def _buffer_rows(
    analysis: Analysis, result: ArenaResult, arena_base: int | None
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    name = result.arena.name
    meanings = result.arena.buffers
    by_id = result.arena.problem.by_id
    offsets = result.plan.offsets
    kinds = {kind: kind.value for kind in BufferKind}  # an enum's .value is a property
    for buffer_id in sorted(meanings):
        meaning = meanings[buffer_id]
        buffer = by_id[buffer_id]
        offset = offsets[buffer_id]
        start, end = buffer.start, buffer.end
        row: dict[str, Any] = {
            "arena": name,
            "buffer": buffer_id,
            "kind": kinds[meaning.kind],
            "subgraph": meaning.subgraph,
            "index": meaning.tensor,
            "operator": meaning.operator,
            "name": meaning.name,
            "bytes": meaning.nbytes,
            "planned_bytes": buffer.size,
            # Steps for JSON: None for LiteRT's 'never freed'.
            "first": None if start == NEVER_FREED else start,
            "last": None if end == NEVER_FREED else end,
            "offset": offset,
            "fixed": buffer.fixed_offset is not None,
        }
        if arena_base is not None:
            row["address"] = arena_base + offset
        rows.append(row)
        subgraph = analysis.model.subgraphs[meaning.subgraph]
        for alias in meaning.aliases:
            rows.append(
                row
                | {"index": alias, "name": subgraph.tensors[alias].name, "alias_of": meaning.tensor}
            )
    return rows


def verify_document(
    result: VerifyResult, wrong_outputs: Sequence[str] = (), heap_unsized: str = ""
) -> dict[str, Any]:
    """VerifyResult (+ why the verified interpreter computes wrong outputs with the model's
    offline plan, why LiteRT's interpreter heap has no figure) → the `verify --json`
    document."""
    unsized = {"interpreter_heap_unsized": heap_unsized} if heap_unsized else {}
    return {
        "runtime": result.runtime,
        "agrees": result.agrees,
        # The interpreter runs the model with wrong outputs: its offline plan shares bytes the
        # wheel's reference kernels read after writing over them (a plan made for other kernels).
        "cannot_run_correctly": list(wrong_outputs),
        # The real interpreter refused to set the model up (its words), or None.
        "cannot_run": result.refused or None,
        "rows": [
            {
                "label": row.label,
                "predicted": row.predicted,
                "real": row.real,
                "agrees": row.agrees,
                "note": row.note,
            }
            for row in result.rows
        ],
        "notes": list(result.notes),
        "interpreter": result.interpreter or None,
        "predicted_for": result.predicted_for or None,
        # LiteRT: why the interpreter's heap has no figure (plan's and check's reason), if so.
        **unsized,
    }
