"""Exports: Analysis → text other tools read (plan JSON, CSV, C header, MiniMalloc CSV, Model
Explorer node data). Each format is a function `(analysis, options) -> str` in FORMATS."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.errors import UsageError
from arenalens.exports.c_header import LiteRTMemory, c_header
from arenalens.exports.minimalloc import to_minimalloc_csv
from arenalens.exports.model_explorer import node_data
from arenalens.exports.plan_csv import plan_csv
from arenalens.exports.plan_json import plan_document
from arenalens.jsontext import to_json
from arenalens.pipeline import Analysis, ArenaResult


@dataclass(frozen=True)
class ExportOptions:
    """Knobs some formats take."""

    prefix: str | None = None  # c-header identifier prefix
    arena: str | None = None  # minimalloc: arena name or index (default: the primary)
    with_offsets: bool = False  # minimalloc: add the plan's `offset` column
    isa: str = ""  # json, LiteRT: the interpreter heap's ISA ('' for the measuring machine)
    delegate: str = "xnnpack"  # json, LiteRT: the delegate whose verdict it gives (--delegate)
    # c-header, LiteRT: the memory an app budgets (`litert_memory`: the model file + the
    # interpreter's peak heap under its delegate, ISA and threads); None for TFLM.
    litert: LiteRTMemory | None = None


@dataclass(frozen=True)
class ExportFormat:
    """One export format: its name, file extension, description and renderer."""

    name: str
    extension: str
    description: str
    render: Callable[[Analysis, ExportOptions], str]


def _json(analysis: Analysis, options: ExportOptions) -> str:
    return to_json(plan_document(analysis, isa=options.isa, delegate=options.delegate))


def _minimalloc(analysis: Analysis, options: ExportOptions) -> str:
    result = select_arena(analysis, options.arena)
    offsets = result.plan.offsets if options.with_offsets else None
    return to_minimalloc_csv(result.arena.problem, offsets)


def _model_explorer(analysis: Analysis, options: ExportOptions) -> str:
    return to_json(node_data(analysis))


def select_arena(analysis: Analysis, selector: str | None) -> ArenaResult:
    """--arena NAME or INDEX → that arena (default: the primary one)."""
    if not analysis.arenas:
        raise UsageError(f"{analysis.model.source}: the model has no arena to export")
    if selector is None:
        return analysis.primary
    for index, result in enumerate(analysis.arenas):
        if selector in (result.arena.name, str(index)):
            return result
    names = ", ".join(f"{i}: '{r.arena.name}'" for i, r in enumerate(analysis.arenas))
    raise UsageError(f"--arena '{selector}': no such arena (arenas: {names})")


FORMATS: Mapping[str, ExportFormat] = MappingProxyType(
    {
        "json": ExportFormat(
            "json", ".json", "the versioned plan document (schemas/plan.schema.json)", _json
        ),
        "csv": ExportFormat(
            "csv", ".csv", "one row per tensor: offset, size, lifetime", lambda a, o: plan_csv(a)
        ),
        "c-header": ExportFormat(
            "c-header",
            ".h",
            "kTensorArenaSize and per-tensor offsets for firmware",
            lambda a, o: c_header(a, prefix=o.prefix, litert=o.litert),
        ),
        "minimalloc": ExportFormat(
            "minimalloc", ".csv", "MiniMalloc's id,lower,upper,size input", _minimalloc
        ),
        "model-explorer": ExportFormat(
            "model-explorer",
            ".json",
            "Model Explorer node data: each operator coloured by live bytes",
            _model_explorer,
        ),
    }
)


def export(analysis: Analysis, format_name: str, options: ExportOptions | None = None) -> str:
    """Analysis + format name → the exported text."""
    found = FORMATS.get(format_name)
    if found is None:
        raise UsageError(f"unknown format '{format_name}' (known: {', '.join(FORMATS)})")
    return found.render(analysis, options or ExportOptions())


__all__ = ["FORMATS", "ExportFormat", "ExportOptions", "export", "select_arena"]
