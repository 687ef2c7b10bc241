"""The number to declare: Analysis → the arena size a user writes into firmware, its parts in the
runtime's own words, the build it is for, and how sure it is.

For TFLite Micro it is the smallest `kTensorArenaSize` that `AllocateTensors()` accepts. TFLM
splits that one block in two (micro_allocator.h, single_arena_buffer_allocator.h): the *head*, the
non-persistent section where the memory planner lays out activations and scratch buffers, and the
*tail*, the persistent section allocated downwards from the arena's end (tensor and node structs,
kernel data, variables). Both are inside the tensor arena; setup may briefly need a little more
than head + tail, and that is part of the number too. For LiteRT it is every arena's high-water
mark added up (each subgraph's arena and persistent arena).

Every view that shows a size (terminal report, HTML report, `check`, `optimize`, the board table)
reads it from here, so a later change to how the number is made (a device-specific build, a model
the runtime cannot set up) shows everywhere at once.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from arenalens.analysis.placeholders import placeholder_inputs, placeholder_text
from arenalens.cannot_run import Refusal, group_refusals
from arenalens.plan_validity import PlanConflict, plan_conflicts
from arenalens.records import record

if TYPE_CHECKING:  # the pipeline makes Analyses; this module only reads them
    from arenalens.pipeline import Analysis


class Status(enum.StrEnum):
    """How far the number can be trusted."""

    EXACT = "exact"  # the runtime's own figure, replayed byte for byte
    ESTIMATE = "estimate"  # some part is guessed (the reasons say which, and by how much)
    CANNOT_RUN = "cannot-run"  # the runtime cannot set the model up or invoke it: no size will do
    # The model's offline plan would corrupt tensors at these shapes or on this build: it runs,
    # but computes garbage, and its figure means nothing (`plan_validity.py`).
    WRONG_OUTPUTS = "cannot-run-correctly"
    # An input's real size is unknown (-1 in shape_signature): the number is for a placeholder.
    PLACEHOLDER_SHAPE = "placeholder-shape"

    @property
    def gives_a_number(self) -> bool:
        """False when no size is safe to declare (it cannot run, correctly, or at a known input
        size): every view then leaves out what presumes a number, and exits 1."""
        return self not in _NO_NUMBER


# Status's members as module constants: an Enum member read through its class costs about a
# microsecond on Python 3.11, and a check asks these questions a few dozen times.
_CANNOT_RUN, _WRONG_OUTPUTS = Status.CANNOT_RUN, Status.WRONG_OUTPUTS
_PLACEHOLDER_SHAPE = Status.PLACEHOLDER_SHAPE
_NO_NUMBER = (_CANNOT_RUN, _WRONG_OUTPUTS, _PLACEHOLDER_SHAPE)


# The symbol of LiteRT's figure on a device (`litert_memory.py`): the model file and the
# interpreter's peak heap, which the app needs of the device's RAM; nothing a user declares.
LITERT_MEMORY = "LiteRT memory"


class StatusAnswers:
    """The three questions every view asks of a figure's status before it presumes a number,
    asked once: a `FitCheck` and a `Verdict` each answer them from the `declared` they carry."""

    __slots__ = ()
    declared: DeclaredArena  # a field of each class that takes these answers

    @property
    def runs(self) -> bool:
        """False when the runtime cannot set the model up or invoke it, whatever the arena."""
        return self.declared.status is not _CANNOT_RUN

    @property
    def plan_holds(self) -> bool:
        """False when the model's offline plan would corrupt tensors at these shapes or on this
        build (`plan_validity.py`)."""
        return self.declared.status is not _WRONG_OUTPUTS

    @property
    def shape_known(self) -> bool:
        """False when an input's real size is unknown: any figure is for a placeholder shape."""
        return self.declared.status is not _PLACEHOLDER_SHAPE


@record(slots=True)
class DeclaredPart:
    """One part of the number to declare, named and explained as the runtime names it."""

    name: str
    nbytes: int
    meaning: str


@record()
class DeclaredArena:
    """The memory to declare for one model, runtime and plan."""

    runtime: str  # "tflm" | "litert"
    symbol: str  # what the user sets: "kTensorArenaSize", or "LiteRT arenas"
    required_bytes: int
    parts: tuple[DeclaredPart, ...]  # they add up to required_bytes
    planner: str
    runtime_plan: bool  # False: the plan exists on the device only after `arenalens optimize`
    device: str  # the build the figure is for
    status: Status = Status.EXACT
    reasons: tuple[str, ...] = ()  # why an estimate, or why it cannot run
    # Why it cannot run, one per distinct reason with the operators it hits and the fix.
    refusals: tuple[Refusal, ...] = ()
    # Why its offline plan would corrupt tensors (at these shapes, or on this build).
    conflicts: tuple[PlanConflict, ...] = ()

    @property
    def is_process_memory(self) -> bool:
        """True for LiteRT's memory on a device (model file + interpreter heap): a figure to
        budget RAM for, not a size to declare."""
        return self.symbol.startswith(LITERT_MEMORY)

    @property
    def is_estimate(self) -> bool:
        """True when the figure is not the runtime's exact one."""
        return self.status is not Status.EXACT

    @classmethod
    def from_dict(cls, document: Mapping[str, Any], *, runtime: str) -> DeclaredArena:
        """The `declare` JSON form (as_dict) → DeclaredArena, for renderers of documents."""
        return cls(
            runtime=runtime,
            symbol=str(document["symbol"]),
            required_bytes=int(document["required_bytes"]),
            parts=tuple(
                DeclaredPart(str(p["name"]), int(p["bytes"]), str(p["meaning"]))
                for p in document["parts"]
            ),
            planner=str(document["planner"]),
            runtime_plan=bool(document["runtime_plan"]),
            device=str(document["device"]),
            status=Status(document["status"]),
            reasons=tuple(str(r) for r in document["reasons"]),
            refusals=tuple(
                Refusal(
                    reason=str(r["reason"]),
                    phase=str(r["phase"]),
                    opcode=None if r["opcode"] is None else str(r["opcode"]),
                    operators=tuple((int(s), int(o)) for s, o in r["operators"]),
                    fix=str(r["fix"]),
                )
                for r in document.get("refusals", ())
            ),
            conflicts=tuple(
                PlanConflict(str(c["kind"]), str(c["reason"]), str(c["fix"]))
                for c in document.get("conflicts", ())
            ),
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON form (check, report and optimize documents embed it as `declare`)."""
        return {
            "symbol": self.symbol,
            "required_bytes": self.required_bytes,
            "parts": [
                {"name": part.name, "bytes": part.nbytes, "meaning": part.meaning}
                for part in self.parts
            ],
            "planner": self.planner,
            "runtime_plan": self.runtime_plan,
            "device": self.device,
            "status": self.status.value,
            "reasons": list(self.reasons),
            "refusals": [refusal.as_dict() for refusal in self.refusals],
            "conflicts": [conflict.as_dict() for conflict in self.conflicts],
        }


# TFLM's names for the parts of kTensorArenaSize; all three are inside the tensor arena.
TFLM_PARTS = (
    (
        "head",
        "head",
        "non-persistent section: activations and scratch buffers, laid out by the memory planner",
    ),
    (
        "tail",
        "tail_at_minimum",
        "persistent section, from the arena's end: tensor and node structs, kernel data, variables",
    ),
    (
        "setup",
        "setup_overhead",
        "temporary allocations while AllocateTensors() runs, above head + tail",
    ),
)


def declared_arena(analysis: Analysis) -> DeclaredArena:
    """Analysis → the number to declare with the analysis's chosen plan, and its parts.

    Its reasons are the first answer that comes before any size: why the runtime cannot run
    the model (one line per distinct reason), why its offline plan would corrupt tensors, which
    input's size is a placeholder; else why the figure is an estimate."""
    budget = analysis.budget
    placeholders = placeholder_inputs(analysis.model)
    runtime_plan = all(result.plan is result.runtime_plan for result in analysis.arenas)
    parts = (
        _tflm_parts(budget.parts, budget.required_bytes)
        if analysis.runtime == "tflm"
        else _arena_parts(budget.parts)
    )
    conflicts = (
        plan_conflicts(analysis.model, analysis.build)
        if analysis.runtime == "tflm" and analysis.build is not None
        else ()
    )
    refusals = group_refusals(analysis.model, budget.obstacles)
    return DeclaredArena(
        runtime=analysis.runtime,
        symbol="kTensorArenaSize" if analysis.runtime == "tflm" else "LiteRT arenas",
        required_bytes=budget.required_bytes,
        parts=parts,
        planner=analysis.planner,
        runtime_plan=runtime_plan,
        device=budget.device,
        status=_status(budget.runs, bool(conflicts), placeholders, budget.estimate_reasons),
        reasons=tuple(refusal.text() for refusal in refusals)
        or tuple(conflict.reason for conflict in conflicts)
        or tuple(placeholder_text(tensor) for tensor in placeholders)
        or tuple(budget.estimate_reasons),
        refusals=refusals,
        conflicts=conflicts,
    )


def _status(
    runs: bool,
    wrong_outputs: bool,
    placeholders: tuple[Any, ...],
    estimate_reasons: tuple[str, ...],
) -> Status:
    if not runs:
        return Status.CANNOT_RUN
    if wrong_outputs:
        return Status.WRONG_OUTPUTS
    if placeholders:
        return Status.PLACEHOLDER_SHAPE
    return Status.ESTIMATE if estimate_reasons else Status.EXACT


def _tflm_parts(parts: Mapping[str, int], required: int) -> tuple[DeclaredPart, ...]:
    found = tuple(
        DeclaredPart(name, parts[key], meaning)
        for name, key, meaning in TFLM_PARTS
        if key in parts and (parts[key] or name != "setup")
    )
    rest = required - sum(part.nbytes for part in found)
    if rest:  # keep the parts adding up whatever the runtime module reports
        found += (DeclaredPart("other", rest, "bytes the runtime needs besides these"),)
    return found


def _arena_parts(parts: Mapping[str, int]) -> tuple[DeclaredPart, ...]:
    return tuple(
        DeclaredPart(
            name,
            nbytes,
            "persistent arena: tensors kept for the interpreter's lifetime"
            if name.endswith("persistent")
            else "arena: tensors with planned lifetimes, reused as they die",
        )
        for name, nbytes in parts.items()
    )


def parts_text(declared: DeclaredArena, format_bytes: Callable[[int], str]) -> str:
    """'head 3.75 KiB + tail 23.73 KiB, both inside the tensor arena' (one line)."""
    shown = " + ".join(f"{part.name} {format_bytes(part.nbytes)}" for part in declared.parts)
    if declared.is_process_memory and declared.parts:
        # The heap's parts are many (the heap view lists them): the file, then the heap.
        file, *heap = declared.parts
        peak = sum(part.nbytes for part in heap)
        return f"{file.name} {format_bytes(file.nbytes)} + peak heap {format_bytes(peak)}"
    if declared.runtime != "tflm" or not declared.parts:
        return shown
    inside = {1: "", 2: "both "}.get(len(declared.parts), "all ")
    return f"{shown}, {inside}inside the tensor arena"
