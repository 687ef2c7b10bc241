"""Analysis → the versioned plan document (`export --format json`), described by
`arenalens/schemas/plan.schema.json`.

Version 1. Every size is in bytes; steps are the runtime's inclusive [first, last] lifetimes
(TFLM: one global step counter, -1 = never written / never read; LiteRT: execution-plan positions
per subgraph, 2147483647 = kept to the end). A buffer's `size` is what the planner places (TFLM
rounds to 16), `nbytes` what the tensor needs.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from typing import Any

from arenalens import __version__
from arenalens.builds.build import build_document
from arenalens.pipeline import Analysis, ArenaResult

PLAN_SCHEMA = "arenalens.plan"
PLAN_SCHEMA_VERSION = 1


def plan_schema_text() -> str:
    """The JSON Schema of the plan document, as shipped in the package."""
    return resources.files("arenalens.schemas").joinpath("plan.schema.json").read_text("utf-8")


def model_sha256(analysis: Analysis) -> str | None:
    """SHA-256 of the model file's bytes (None for models without data)."""
    data = analysis.model.data
    if not len(data):
        return None
    return hashlib.sha256(memoryview(data)).hexdigest()


def plan_document(
    analysis: Analysis, *, isa: str = "", delegate: str = "xnnpack"
) -> dict[str, Any]:
    """Analysis → the plan document (plain dicts and lists, JSON-ready, deterministic); a
    LiteRT plan's verdict is the one under `delegate` (`litert_memory.delegate_verdict`), its
    interpreter heap for `isa` ('' for the machine it was measured on)."""
    model = analysis.model
    budget = analysis.budget
    obstacles = budget.obstacles
    if analysis.runtime == "litert":
        from arenalens.litert_memory import delegate_verdict  # noqa: PLC0415 - LiteRT only

        obstacles = delegate_verdict(analysis, delegate).obstacles
    document: dict[str, Any] = {
        "schema": PLAN_SCHEMA,
        "schema_version": PLAN_SCHEMA_VERSION,
        "generator": f"arenalens {__version__}",
        "model": {
            "name": model.name,
            "file": model.source,
            "file_bytes": model.file_bytes,
            "sha256": model_sha256(analysis),
            "subgraphs": len(model.subgraphs),
            "tensors": model.tensor_count,
            "operators": model.operator_count,
        },
        "runtime": analysis.runtime,
        "runs": not obstacles,
        "cannot_run": [obstacle.as_dict() for obstacle in obstacles],
        "planner": analysis.planner,
        "alignment": analysis.options.get("alignment"),
        "build": build_document(budget.build),
        "required_bytes": budget.required_bytes,
        "budget": {
            "required_bytes": budget.required_bytes,
            "parts": dict(budget.parts),
            "assumptions": list(budget.assumptions),
            "estimates": list(budget.estimate_reasons),
        },
        "runtime_required_bytes": analysis.runtime_budget.required_bytes,
        "arenas": [_arena_document(analysis, result) for result in analysis.arenas],
    }
    if analysis.runtime == "litert":
        from arenalens.litert_memory import heap_fields  # noqa: PLC0415 - LiteRT only

        document["delegate"] = delegate
        document.update(heap_fields(analysis, isa=isa, first=delegate))
    return document


def _arena_document(analysis: Analysis, result: ArenaResult) -> dict[str, Any]:
    arena, plan = result.arena, result.plan
    buffers = []
    for buffer in sorted(arena.problem.buffers, key=lambda b: b.id):
        planned = arena.buffers[buffer.id]
        buffers.append(
            {
                "id": buffer.id,
                "kind": planned.kind.value,
                "subgraph": planned.subgraph,
                "tensor": planned.tensor,
                "operator": planned.operator,
                "name": planned.name,
                "nbytes": planned.nbytes,
                "size": buffer.size,
                "offset": plan.offsets[buffer.id],
                "first": buffer.start,
                "last": buffer.end,
                "fixed_offset": buffer.fixed_offset,
                "aliases": list(planned.aliases),
            }
        )
    return {
        "name": arena.name,
        "planner": plan.planner,
        "runtime_planner": arena.runtime_planner,
        "alignment": arena.problem.alignment,
        "arena_bytes": plan.arena_size,
        "runtime_arena_bytes": result.runtime_plan.arena_size,
        "naive_bytes": result.naive_plan.arena_size,
        "lower_bound_bytes": result.lower_bound,
        "proven_optimal": plan.proven_optimal,
        "notes": list(arena.notes) + list(plan.notes),
        "buffers": buffers,
        "steps": [
            {"step": s.step, "subgraph": s.subgraph, "operator": s.operator, "label": s.label}
            for s in arena.steps
        ],
    }
