"""The tail by part: setup sequence + arena size → the bytes each kind of persistent data takes
from the arena's end, and what setup needs above head + tail.

Every persistent allocation of the setup replay (`setup.setup_sequence`) moves the tail down by
its bytes plus the alignment padding below it, exactly as RecordingMicroAllocator counts a
category's "used" bytes; each allocation belongs to one part, and each part to at most one
`print_allocations()` category, so the parts of a category add up to what the real interpreter
prints for it. Parts are listed in the order TFLM first allocates them, from the arena's end
downwards.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from arenalens.records import record
from arenalens.runtimes.sections import SectionItem, SectionPart
from arenalens.runtimes.tflm.setup_layout import (
    EVAL_TENSORS,
    NODES,
    PERSISTENT_BUFFERS,
    PERSISTENT_TENSORS,
    QUANTIZATION,
    VARIABLES,
    RuntimeLayout,
)
from arenalens.runtimes.tflm.setup_replay import Action, Allocation, replay

LARGEST_ITEMS = 3  # allocations named per part


@record(slots=True)
class TailPart:
    """One kind of persistent data: its name, what it is, and its print_allocations() category."""

    name: str
    meaning: str
    category: str = ""


RUNTIME_OBJECTS = TailPart(
    "runtime objects",
    "the allocator, the memory planner, the builtin-data allocator and the per-subgraph "
    "allocation records (not counted by print_allocations)",
)
RESOURCE_VARIABLES = TailPart(
    "resource variables",
    "MicroResourceVariables' table and the buffers ASSIGN_VARIABLE allocates",
    PERSISTENT_BUFFERS,
)
EVAL = TailPart(
    "eval tensors",
    "one TfLiteEvalTensor per tensor of every subgraph (data pointer, dims, type)",
    EVAL_TENSORS,
)
NODE_STRUCTS = TailPart(
    "operator nodes", "one NodeAndRegistration per operator of every subgraph", NODES
)
OPTIONS = TailPart(
    "operator options",
    "each operator's builtin options, parsed into its TfLite*Params struct (not counted by "
    "print_allocations)",
)
KERNEL_BUFFERS = TailPart(
    "kernel persistent buffers",
    "what kernels allocate in Init and Prepare: OpData, per-channel multipliers and shifts, "
    "lookup tables, dims copies, states",
    PERSISTENT_BUFFERS,
)
SCRATCH_HANDLES = TailPart(
    "scratch buffer handles",
    "one handle per kernel scratch request (not counted by print_allocations)",
)
VARIABLE_TENSORS = TailPart(
    "variable tensors",
    "the data of variable tensors (streaming states), kept across Invoke",
    VARIABLES,
)
IO_POINTERS = TailPart(
    "input/output tensor pointers",
    "the interpreter's arrays of input and output tensor pointers",
    PERSISTENT_BUFFERS,
)
IO_TENSORS = TailPart(
    "input/output TfLiteTensors",
    "the TfLiteTensor structs the interpreter keeps for the model's inputs and outputs",
    PERSISTENT_TENSORS,
)
IO_QUANTIZATION = TailPart(
    "input/output quantization",
    "quantization parameters copied for the input and output TfLiteTensors",
    QUANTIZATION,
)
PARTS = (
    RUNTIME_OBJECTS,
    RESOURCE_VARIABLES,
    EVAL,
    NODE_STRUCTS,
    OPTIONS,
    KERNEL_BUFFERS,
    SCRATCH_HANDLES,
    VARIABLE_TENSORS,
    IO_POINTERS,
    IO_TENSORS,
    IO_QUANTIZATION,
)
_BY_CATEGORY = {
    EVAL_TENSORS: EVAL,
    NODES: NODE_STRUCTS,
    VARIABLES: VARIABLE_TENSORS,
    PERSISTENT_TENSORS: IO_TENSORS,
    QUANTIZATION: IO_QUANTIZATION,
}


def part_of(step: Allocation) -> TailPart:
    """The part one persistent allocation belongs to: its print_allocations() category, and
    within the categories that count several kinds of data, what the setup sequence says it is
    for (`setup.setup_sequence` names every allocation)."""
    known = _BY_CATEGORY.get(step.category)
    if known is not None:
        return known
    what = step.what
    if step.category == PERSISTENT_BUFFERS:
        if "resource variable" in what:  # the table, its entries, ASSIGN_VARIABLE's buffers
            return RESOURCE_VARIABLES
        if what.endswith("tensor pointers"):
            return IO_POINTERS
        return KERNEL_BUFFERS
    if what.startswith("options of "):
        return OPTIONS
    if what == "scratch handles":
        return SCRATCH_HANDLES
    return RUNTIME_OBJECTS


@record()
class TailBreakdown:
    """The tail at one arena size, by part (parts in first-allocation order, none empty)."""

    arena_size: int
    parts: tuple[SectionPart, ...]

    @property
    def nbytes(self) -> int:
        """The whole tail."""
        return sum(part.nbytes for part in self.parts)


def tail_breakdown(sequence: Sequence[Allocation], arena_size: int) -> TailBreakdown:
    """(setup sequence, an arena size at which setup fits) → the tail by part.

    The tail pointer starts at the array's end and each persistent allocation rounds it down,
    so the bytes (and padding) of an allocation depend on every one before it; setup must fit
    at this size, or the parts would describe a tail TFLM never reaches.
    """
    tail = arena_size
    # Part name → [the part, bytes used, allocations counted, (what, bytes) of each allocation];
    # a 10,000-operator model has ~15,000 persistent allocations, of which a part names three.
    found: dict[str, list[Any]] = {}
    for step in sequence:
        if step.action is not Action.PERSISTENT:
            continue
        start = tail - step.nbytes
        start -= start % step.alignment
        part = part_of(step)
        record = found.get(part.name)
        if record is None:
            record = found[part.name] = [part, 0, 0, []]
        record[1] += tail - start
        record[2] += step.count
        record[3].append((step.what, tail - start))
        tail = start
    parts = tuple(
        SectionPart(
            part.name,
            used,
            part.meaning,
            part.category,
            counted,
            # The largest first, the earliest among equals (a stable sort's order).
            tuple(
                SectionItem(what, nbytes)
                for what, nbytes in heapq.nlargest(LARGEST_ITEMS, items, key=itemgetter(1))
            ),
        )
        for part, used, counted, items in found.values()  # first-allocation order
        if used > 0
    )
    return TailBreakdown(arena_size, parts)


@record(slots=True)
class SetupNeed:
    """What needs the bytes between head and tail: a short name and the allocation that fails
    one byte below the minimal arena."""

    name: str
    what: str


SETUP_WORKING_MEMORY = "setup working memory"


def setup_need(
    sequence: Sequence[Allocation], minimal_arena: int, layout: RuntimeLayout
) -> SetupNeed:
    """Why the minimal arena is larger than head + tail: the step that fails one byte below it
    (at one of the isolated sizes below the minimum where a few kernels happen to fit, the
    general answer)."""
    outcome = replay(sequence, minimal_arena - 1, layout) if minimal_arena > 0 else None
    if outcome is None or outcome.fits or outcome.failed_at is None:
        return SetupNeed(SETUP_WORKING_MEMORY, "temporary allocations while AllocateTensors() runs")
    step = outcome.failed_at
    if step.action in (Action.PLANNER, Action.LINEAR_PLANNER):
        return SetupNeed(
            "planner working memory",
            "the memory planner's working memory, above the allocation info and scratch "
            "requests, while CommitStaticMemoryPlan runs",
        )
    if step.action is Action.TEMP:
        return SetupNeed("Prepare temporaries", f"temporary memory above the head: {step.what}")
    if step.action is Action.HEAD:
        return SetupNeed("scratch request records", f"the head while setup runs: {step.what}")
    return SetupNeed(
        "tail alignment slack",
        "free bytes left by aligning the tail's allocations down from the arena's end: one "
        f"byte less and {step.what} no longer fits above the head",
    )
