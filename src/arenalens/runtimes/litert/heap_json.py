"""The interpreter's heap as JSON (`plan --json`, `export --format json`, the report's
`interpreter_heap`): one document per delegate, XNNPACK (LiteRT's default) first."""

from __future__ import annotations

from collections.abc import Sequence

from arenalens.ir import Model
from arenalens.runtimes.litert import heap_ways, heap_xnnpack
from arenalens.runtimes.litert.heap import (
    DELEGATES,
    InterpreterHeap,
    interpreter_heap,
    xnnpack_unsized,
)
from arenalens.runtimes.litert.heap_control_flow import control_flow_unsized
from arenalens.runtimes.litert.heap_threads import threads_unsized
from arenalens.runtimes.litert.isa import HOST, IsaProfile


def heap_document(heap: InterpreterHeap) -> dict[str, object]:
    """One delegate's heap as JSON (`plan --json`: interpreter_heap)."""
    return {
        "delegate": heap.delegate,
        "threads": heap.threads,
        "isa": heap.isa.name,
        "after_setup_bytes": heap.after_setup,
        "after_first_invoke_bytes": heap.after_first_invoke,
        "peak_bytes": heap.peak,
        "exact": heap.exact,
        "machine": heap.machine,
        "estimate": heap.estimate,
        "parts": [
            {
                "name": part.name,
                "bytes": part.nbytes,
                "phase": part.phase,
                "exact": part.exact,
                "meaning": part.meaning,
            }
            for part in heap.parts
        ],
        "notes": list(heap.notes),
        # Each way a model input picks, with its own figures (those above: the larger).
        **({"ways": [heap_ways.way_document(way) for way in heap.ways]} if heap.ways else {}),
    }


def heap_documents(
    model: Model,
    arena_sizes: Sequence[int],
    *,
    threads: int = 1,
    isa: IsaProfile = HOST,
    delegates: Sequence[str] = DELEGATES,
    absent: Sequence[str] = (),
) -> list[dict[str, object]]:
    """The heap under each of `delegates`, XNNPACK (LiteRT's default) first, as JSON; a model
    with operators whose XNNPACK heap is not modelled gets the builtin figure only, saying why
    (and a delegate whose heap with `threads` threads is not modelled gets none). `absent` (why
    a delegate has no figure) is added to every document's notes."""
    if control_flow_unsized(model):
        return []  # no figure that never falls under (heap_control_flow.control_flow_refusal)
    unsized = xnnpack_unsized(model)
    documents = []
    unthreaded: list[str] = list(absent)
    for delegate in (delegate for delegate in DELEGATES if delegate in delegates):
        if delegate == "xnnpack" and unsized:
            continue
        view = heap_xnnpack.delegated_view(model) if delegate == "xnnpack" else None
        found = threads_unsized(view if view is not None else model, threads, isa)
        if found:
            unthreaded.append(
                f"{'with XNNPACK' if delegate == 'xnnpack' else 'with the builtin kernels only'}"
                f" and {threads} threads the heap is not sized: the builtin {', '.join(found)} "
                "sizes its arena scratch for the threads, which is not modelled; give "
                "--threads 1 for that figure"
            )
            continue
        heap = interpreter_heap(model, arena_sizes, delegate=delegate, threads=threads, isa=isa)
        document = heap_document(heap)
        if delegate == "none" and unsized:
            notes = document["notes"]
            assert isinstance(notes, list)
            notes.append(
                f"with XNNPACK (LiteRT's default) the heap is not sized: its {', '.join(unsized)} "
                "packing is not modelled; this figure holds with the builtin kernels only "
                "(OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)"
            )
        documents.append(document)
    for document in documents:
        notes = document["notes"]
        assert isinstance(notes, list)
        notes.extend(unthreaded)
    return documents
