"""LiteRT as deployed: the memory an app needs for one model on a Linux-class device.

A LiteRT app holds the model file (memory-mapped or read: the interpreter reads every weight,
and XNNPACK repacks them) and the interpreter's heap, whose peak comes during the first invoke
(`runtimes/litert/heap.py`: the interpreter's structures, its arenas, the kernels' first-invoke
buffers, with XNNPACK its packed weights and workspace). `check --runtime litert` compares their
sum with the device's RAM less what the operating system and the rest of the app keep (the
device's profile in `targets.json`), under the delegate the app runs: XNNPACK unless told
otherwise, as LiteRT applies it by default.

The heap was measured on one machine (`heap.MEASURED_ON`, x86-64); on another ISA LiteRT's
kernels pack to that ISA's tiles, narrower than x86-64's AVX-512 ones for XNNPACK and ruy, and
its pointers are no wider: there the figure is an estimate that errs high, and says so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from arenalens.declared import LITERT_MEMORY, DeclaredArena, DeclaredPart, Status
from arenalens.errors import UsageError

if TYPE_CHECKING:
    from arenalens.pipeline import Analysis
    from arenalens.runtimes.litert.heap import InterpreterHeap

MEASURED_ISA = "x86-64"
DEFAULT_DELEGATE = "xnnpack"  # LiteRT applies XNNPACK unless the app says otherwise
DELEGATE_TITLES = {"xnnpack": "XNNPACK", "none": "builtin kernels"}
_PHASE_WORDS = {
    "setup": "after setup",
    "first_invoke": "kept from the first invoke",
    "transient": "held during the first invoke only",
}


def delegate_title(delegate: str) -> str:
    """'XNNPACK' | 'builtin kernels'."""
    return DELEGATE_TITLES[delegate]


def interpreter_heap_of(analysis: Analysis, delegate: str, threads: int = 1) -> InterpreterHeap:
    """The analysis's model and LiteRT arenas → the interpreter's heap under `delegate` with
    `threads` threads; UsageError when an operator's heap is not modelled that way."""
    from arenalens.runtimes.litert.heap import (  # noqa: PLC0415 - LiteRT only
        interpreter_heap,
        xnnpack_unsized,
    )

    model = analysis.model
    if delegate == "xnnpack" and xnnpack_unsized(model):
        raise UsageError(
            f"{model.name}: the XNNPACK heap is not modelled for "
            f"{', '.join(xnnpack_unsized(model))}; check it with --delegate none (the builtin "
            "kernels, OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)"
        )
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    try:
        return interpreter_heap(model, sizes, delegate=delegate, threads=threads)
    except ValueError as error:  # threads > 1 with a kernel whose threaded heap is not modelled
        raise UsageError(f"{model.name}: {error}; check it with --threads 1") from None


def litert_memory(
    analysis: Analysis, delegate: str, *, isa: str = "", threads: int = 1
) -> DeclaredArena:
    """The memory a LiteRT app needs for the model: the model file + the interpreter's peak
    heap under `delegate` with `threads` threads, part by part, for a device of `isa` ('' for
    the machine the heap was measured on). A model LiteRT cannot run, or whose input size is
    unknown, keeps its arena verdict (no number)."""
    from arenalens.declared import declared_arena  # noqa: PLC0415

    arenas = declared_arena(analysis)
    if not arenas.status.gives_a_number:
        return arenas
    heap = interpreter_heap_of(analysis, delegate, threads)
    parts = (
        DeclaredPart(
            "model file",
            analysis.model.file_bytes,
            "the .tflite the app maps or reads: the interpreter reads every weight from it",
        ),
        *(
            DeclaredPart(part.name, part.nbytes, f"{_PHASE_WORDS[part.phase]}: {part.meaning}")
            for part in heap.parts
            if part.nbytes
        ),
    )
    reasons = list(arenas.reasons)
    if not heap.exact and heap.estimate:
        reasons.append(heap.estimate)
    if isa and isa != MEASURED_ISA:
        reasons.append(
            f"the heap is measured on {heap.machine}; on {isa} LiteRT's kernels pack to that "
            "ISA's tiles (narrower than AVX-512's for XNNPACK and ruy) with pointers no wider: "
            "an estimate that errs high, measure it on the device"
        )
    status = arenas.status
    if status is Status.EXACT and reasons:
        status = Status.ESTIMATE
    return replace(
        arenas,
        symbol=f"{LITERT_MEMORY} ({delegate_title(delegate)})",
        required_bytes=sum(part.nbytes for part in parts),
        parts=parts,
        device=f"LiteRT with {delegate_title(delegate)}"
        + (f", {threads} threads" if threads > 1 else "")
        + ", "
        + (heap.machine if not isa or isa == MEASURED_ISA else f"{isa} (measured on x86-64)"),
        status=status,
        reasons=tuple(reasons),
    )
