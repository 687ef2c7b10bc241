"""The heap a LiteRT interpreter holds for a model: arenas + plans → its parts after setup
(`Interpreter(...)` and `allocate_tensors()`), after the first `invoke()`, and at the peak, with
the builtin kernels alone or with LiteRT's default XNNPACK delegate.

What it is made of (LiteRT *tflite/core/interpreter_builder.cc, subgraph.cc, arena_planner.cc,
simple_memory_arena.cc*; XNNPACK *src/subgraph.c, src/runtime.c, src/memory-planner.c,
src/operators/convolution-nhwc.c, src/packing.c*):

* **interpreter structures**: the wheel's fixed part (the op resolver's registration tables, the
  interpreter, its error reporter, the Python wrapper), then one `TfLiteTensor` per tensor and
  one node with its registration, its index arrays and its builtin options per operator, and
  each quantized tensor's `TfLiteAffineQuantization` with one scale and one zero point per
  channel (a glibc block each);
* **arenas**: each subgraph's arena and persistent arena, one `aligned_alloc(64, ...)` block of
  its high-water mark rounded up as `ResizableAlignedBuffer` does (exact: the planner replica);
* **kernel setup**: the planner's per-tensor and per-node bookkeeping, and per-channel
  requantization vectors (conv, depthwise, fully connected: one multiplier and one shift per
  output channel);
* **first invoke** (builtin): the GEMM back end's packed blocks (ruy/gemmlowp: packed weights
  and packed activations of the largest quantized convolution or matmul), kept by its context;
* **XNNPACK**: the weights it repacks into its own layout (per output channel group of the
  microkernel the CPU selects: bias and scales added, channels padded to the tile), the
  indirection buffers of spatial convolutions (one pointer per output pixel per tap), and its
  workspace, planned by its memory planner over the delegated tensors, which in exchange leave
  the arena.

Exactness: the arena blocks are exact. The interpreter's structures, the GEMM back end's blocks
and XNNPACK's parts are estimates, made to err high on the x86-64 wheel they were measured on
(`tests/data/litert_heap.json`, remade by `python -m tests.litert_heap_measure`); another ISA's
figure is labelled an estimate that names what it assumes (`isa.IsaProfile.assumptions`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from arenalens.ir import Model, Subgraph
from arenalens.runtimes.litert import (
    eigen_blocking,
    four_bit,
    glibc,
    heap_build,
    heap_call_once,
    heap_caller,
    heap_control_flow,
    heap_replan,
    heap_resources,
    heap_ways,
    heap_xnnpack,
    heap_xnnpack_reshape,
    xnnpack_custom,
    xnnpack_float16,
    xnnpack_objects,
)
from arenalens.runtimes.litert.heap_control_flow import (
    control_flow_refusal,
    control_flow_unsized,
    decompositions,
)
from arenalens.runtimes.litert.heap_interpreter import (
    Block,
    allocation_blocks,
    arena_request,
    creation_blocks,
    persistent_ro_blocks,
)
from arenalens.runtimes.litert.heap_invoke import first_invoke
from arenalens.runtimes.litert.heap_part import MMAPPED_NOTE, HeapPart, PhasedFigures
from arenalens.runtimes.litert.heap_threads import (
    multithreaded_convs,
    thread_parts,
    threaded_view,
    threads_unsized,
)
from arenalens.runtimes.litert.heap_xnnpack_reshape import KernelReshape
from arenalens.runtimes.litert.heap_xnnpack_setup import (
    GEMM_OPERATORS,
    XNNPACK_DELEGATE_BYTES,
    XNNPACK_FIXED_BYTES,
    workspace_request,
    xnnpack_parts,
)
from arenalens.runtimes.litert.isa import HOST, IsaProfile
from arenalens.runtimes.litert.rules import litert_plans
from arenalens.runtimes.litert.xnnpack_node_builds import NodeBuilds

DELEGATES = ("xnnpack", "none")
DEFAULT_DELEGATE = "xnnpack"  # LiteRT applies XNNPACK unless told not to

# First invoke of float models: the Python wrapper's input and output views.
INVOKE_FIXED_BYTES = 1_600
# glibc placement: up to 16 B more per block (a reused free chunk given whole); measured at most
# one block in 20 on the 48 cached models, so 16 B per 16 blocks never falls under.
GLIBC_SLACK_BYTES = 16
GLIBC_SLACK_EVERY_BLOCKS = 16
# The Python wrapper's own blocks move with the process, not the model: the model path's length
# (96 B between two temporary folders: tests/litert_heap_measure.py pins it) and the process's
# import state (PYTHONPATH set or not, the interpreter's prefix: one model's after-setup figure
# spans up to 176 B over eight such processes, measured in session 6, the same bytes every run in
# each). Added so that the figure never falls under; the 1% checks leave it out.
WRAPPER_VARIATION_BYTES = 176


@dataclass(frozen=True, slots=True)
class InterpreterHeap(PhasedFigures):
    """Heap a LiteRT interpreter holds for a model under one delegate."""

    delegate: str  # xnnpack | none
    parts: tuple[HeapPart, ...]
    machine: str
    notes: tuple[str, ...] = ()
    threads: int = 1  # Interpreter(num_threads=...)
    isa: IsaProfile = HOST
    # Each way a model input picks (heap_ways: an IF's branch, a WHILE's body run or not) with
    # its own figures; those above count the larger of each.
    ways: tuple[heap_ways.Way, ...] = ()

    @property
    def exact(self) -> bool:
        """Every part but the allowances is the real interpreter's, byte for byte."""
        return self.isa.replayed and all(part.exact for part in self.parts if not part.allowance)

    @property
    def estimate(self) -> str | None:
        """How far the figures may be from the real interpreter's, and which way."""
        if not self.isa.replayed:
            return self.isa.estimate
        allowances = ", ".join(part.name for part in self.parts if part.allowance)
        allowance = sum(part.nbytes for part in self.parts if part.allowance)
        if self.exact:  # "within 1%" only where the allowances are (small models: not)
            smallest = min(self.after_setup, self.after_first_invoke)
            within = "within 1%, never under: " if 100 * allowance <= smallest else ""
            return f"{within}exact but for the allowances ({allowances}), which err high"
        # Parts counted as the larger of each way a model input picks, each way exact.
        decided = heap_ways.decided_parts(self.ways, self.parts)
        rest = [p for p in self.parts if not p.exact and not p.allowance and p.name not in decided]
        if decided and not rest:
            exact = f"exact but for the allowances ({allowances}), which err high"
            return heap_ways.ways_words(self.ways, exact)
        ways = heap_ways.ways_words(self.ways, "exact in its first invoke") if decided else ""
        estimated = ", ".join(
            part.name
            + (
                " (a block glibc mmaps or not as the process's history has it, "
                "counted mmapped: up to a page over)"
                if part.mmapped
                else ""
            )
            for part in rest
        )
        return (
            (f"{ways}; " if ways else "")
            + f"estimate that errs high: {estimated} (measured never under with "
            f"{self.isa.tiles_name}; another CPU's figure: --isa)"
        )


def interpreter_heap(
    model: Model,
    arena_sizes: Sequence[int],
    *,
    delegate: str = DEFAULT_DELEGATE,
    threads: int = 1,
    isa: IsaProfile = HOST,
) -> InterpreterHeap:
    """Model + each arena's high-water mark (arena and persistent arena per subgraph, in
    `rules.arenas` order) → the interpreter's heap under `delegate` (xnnpack or none) with
    `threads` threads (Interpreter(num_threads=...); 1, the wrapper's default), on `isa`."""
    if delegate not in DELEGATES:
        raise ValueError(f"delegate must be one of {', '.join(DELEGATES)}, not {delegate!r}")
    if threads < 1:
        raise ValueError(f"threads must be 1 or more, not {threads}")
    if delegate == "xnnpack" and xnnpack_unsized(model):
        raise ValueError(
            f"the XNNPACK heap is not modelled for {', '.join(xnnpack_unsized(model))}"
        )
    if control_flow_unsized(model):
        raise ValueError(control_flow_refusal(model))
    read = model  # Interpreter(...)'s nodes; XNNPACK's: xnnpack_custom.as_xnnpack_builtins
    if delegate == "xnnpack":
        model = xnnpack_float16.as_float32_weights(xnnpack_custom.as_xnnpack_builtins(model))
    view = heap_xnnpack.delegated_view(model) if delegate == "xnnpack" else None
    unthreaded = threads_unsized(view if view is not None else model, threads, isa)
    if unthreaded:
        raise ValueError(
            f"the heap with {threads} threads is not modelled for {', '.join(unthreaded)}"
        )
    # conv.cc's Prepare with more than one thread (heap_threads.threaded_view): the arenas the
    # builtin kernels' convolutions plan then, in place of the caller's one-thread ones.
    planned = view
    if view is not None:
        view = planned = threaded_view(view, threads, isa) or view
    elif delegate == "none" and (threaded := threaded_view(model, threads, isa)) is not None:
        model = planned = threaded
    reshapes = _kernel_reshapes(model, view, isa, threads)
    setup = setup_blocks(read, arena_sizes, view=planned, reshapes=reshapes)
    if planned is not None and view is None:
        arena_sizes = heap_xnnpack.view_arena_sizes(planned)
    # The delegate's nodes of each subset run, built once for this call (xnnpack_node_builds).
    builds = NodeBuilds(model)
    replayed = xnnpack_objects.delegate_objects(model, builds) if delegate == "xnnpack" else None
    delegate_blocks = replayed.blocks if replayed is not None else 0
    created = [block for block in setup if block.phase == "create"]
    allocated = [block for block in setup if block.phase == "allocate"]
    arena_blocks = [block for block in allocated if block.block.part == "arenas"]
    kernel_blocks = [block for block in allocated if block.block.part != "arenas"]
    arenas = sum(block.block.usable for block in arena_blocks)
    parts = [
        HeapPart(
            "interpreter structures",
            sum(block.block.usable for block in created) + isa.structures_extra_bytes,
            "setup",
            _exact(created),
            "Interpreter(...): the op resolver and Python wrapper (the same for every model), "
            "then per subgraph its tensors and nodes vectors, per tensor its dims and "
            "quantization arrays, per node its index arrays, builtin options and kernel OpData",
            mmapped=_mmapped(created),
        ),
        HeapPart(
            "arenas",
            arenas,
            "setup",
            _exact(arena_blocks),
            "each subgraph's arena and persistent arena: one 64-aligned block of its "
            "high-water mark (the planner replica's figure)"
            + (MMAPPED_NOTE if _mmapped(arena_blocks) else ""),
            mmapped=_mmapped(arena_blocks),
        ),
        HeapPart(
            "planner and kernel setup",
            sum(block.block.usable for block in kernel_blocks),
            "setup",
            _exact(kernel_blocks),
            "allocate_tensors(): tensors and dims Prepare adds, kernels' per-channel "
            "requantization and lookup tables, ArenaPlanner's per-tensor and per-node "
            "bookkeeping and its arenas' allocation lists"
            + (MMAPPED_NOTE if _mmapped(kernel_blocks) else ""),
            mmapped=_mmapped(kernel_blocks),
        ),
        HeapPart(
            "heap placement allowance",
            placement_allowance(len(setup) + delegate_blocks),
            "setup",
            False,
            "glibc hands a free chunk out whole when splitting it would leave under 32 bytes: "
            "a block can hold 16 bytes more than it asked for, depending on what was freed "
            "before it; sixteen bytes per sixteen blocks keeps the figure from falling under, "
            f"and {WRAPPER_VARIATION_BYTES} more cover the Python wrapper's own blocks, which move "
            "with the process (its import path, the model path's length), not with the model",
            allowance=True,
        ),
    ]
    machine = isa.machine
    if delegate == "none":
        parts.extend(thread_parts(model, threads, delegate="none", view=None, isa=isa))
        invoke = functools.partial(first_invoke_parts, model, isa=isa, arenas=arena_sizes)
        picked = heap_ways.heap_ways(read, model, lambda given: [*parts, *invoke(ways=given)])
        return InterpreterHeap(
            "none", (*parts, *invoke()), machine, threads=threads, isa=isa, ways=picked,
            notes=heap_ways.ways_notes(model, picked),
        )  # fmt: skip
    xnnpack = xnnpack_parts(model, arenas, isa, threads, first_workspace=_setup_workspace(reshapes))
    parts.extend(xnnpack)
    if skipped := xnnpack_float16.delegate_bytes(read, model):
        parts.append(
            HeapPart(
                "XNNPACK skipped float16 DEQUANTIZEs",
                skipped,
                "setup",
                True,
                "the DEQUANTIZEs of float16 weights the delegate skips (xnnpack_float16): its "
                "sets of them, each kernel's node list and float32 tensor → float16 value map",
            )
        )
    parts.extend(thread_parts(model, threads, delegate="xnnpack", view=view, isa=isa))
    ways: tuple[heap_ways.Way, ...] = ()
    if view is None:
        parts.extend(
            (
                HeapPart(
                    "first-invoke buffers",
                    INVOKE_FIXED_BYTES,
                    "first_invoke",
                    False,
                    "the wrapper's input and output views",
                ),
                HeapPart(
                    "first-invoke transient",
                    XNNPACK_FIXED_BYTES
                    + _largest_gemm_activation_bytes(model)
                    + heap_caller.input_arrays_bytes(model)
                    + xnnpack_custom.fingerprint_transient(read, isa.xnnpack),
                    "transient",
                    False,
                    "threadpool and per-call scratch XNNPACK takes during the first run"
                    + (
                        ", and the fingerprint of a custom transposed convolution's kind"
                        if xnnpack_custom.fingerprint_transient(read, isa.xnnpack)
                        else ""
                    ),
                ),
            )
        )
    else:
        # The builtin kernels' first invoke on the delegated plan (XNNPACK allocates nothing).
        sizes = heap_xnnpack.view_arena_sizes(view)
        plan = heap_resources.delegated_plan(model, reshapes.by_operator)
        delegated = functools.partial(
            first_invoke_parts,
            view, delegated=True, isa=isa, arenas=sizes, variables=plan,
            reshapes=functools.partial(
                heap_xnnpack_reshape.kernel_reshapes, model, view, isa, threads
            ),
            workspace=workspace_request(model, isa, threads, _setup_workspace(reshapes)),
        )  # fmt: skip
        base = tuple(parts)

        def parts_of(given: heap_control_flow.Ways) -> list[HeapPart]:
            invoked = [*base, *delegated(ways=given)]
            transient = _build_transient(model, invoked, replayed, isa, builds, read=read)
            return [*invoked, transient]

        parts = parts_of(heap_control_flow.NO_WAYS)
        ways = heap_ways.heap_ways(read, view, parts_of)
    return InterpreterHeap(
        "xnnpack",
        tuple(parts),
        machine,
        notes=(
            "XNNPACK takes the operators it supports; the arena keeps only the tensors "
            "crossing between it and the builtin kernels",
            *_unreplayed_note(model),
            *heap_ways.ways_notes(view if view is not None else model, ways),
        ),
        threads=threads,
        isa=isa,
        ways=ways,
    )


def _exact(blocks: Sequence[PhasedBlock]) -> bool:
    """Every block replayed, and none that glibc's mmap threshold decides."""
    return all(block.block.exact and not block.block.mmapped for block in blocks)


def _mmapped(blocks: Sequence[PhasedBlock]) -> bool:
    """A bound only through blocks glibc's mmap threshold decides (HeapPart.mmapped)."""
    replayed = all(block.block.exact for block in blocks)
    return replayed and any(block.block.mmapped for block in blocks)


def _build_transient(
    model: Model,
    parts: Sequence[HeapPart],
    replayed: xnnpack_objects.DelegateObjects | None,
    isa: IsaProfile,
    builds: NodeBuilds | None = None,
    *,
    read: Model | None = None,
) -> HeapPart:
    """The delegate's build moment (heap_build) over the first invoke's peak, when above it;
    `read`: the model as read, whose float16 DEQUANTIZEs the delegate unpacks (xnnpack_float16)."""
    setup = {part.name: part.nbytes for part in parts if part.phase == "setup"}
    exact = replayed is not None and replayed.exact
    # A late part that is a bound only through glibc's mmap threshold is still replayed.
    late = [part for part in parts if part.name in heap_build.LATE_PARTS]
    exact = exact and all(part.exact or part.mmapped for part in late)
    conversions = xnnpack_float16.conversions(read, model) if read is not None else None
    moment, replayed_moment = heap_build.build_moment_bytes(
        model, setup, replayed, exact, isa, delegate_bytes=XNNPACK_DELEGATE_BYTES, builds=builds,
        conversions=conversions,
    )  # fmt: skip
    # Float16 constants DEQUANTIZEd (the converter's float16 weights): the delegate unpacks
    # them to float32 while it builds, not replayed (held18b_5: 3,336 B over the replayed
    # moment for a 3,200 B float32 copy): two float32 copies, a bound.
    half = _float16_static_bytes(model)
    moment += 2 * half
    if read is not None:  # Create's execution_map, the partition's DEQUANTIZE nodes
        moment += xnnpack_float16.execution_map_bytes(read, model)
        moment += xnnpack_float16.partition_bytes(read, model)
    replayed_moment = replayed_moment and not half
    invoke = sum(part.nbytes for part in parts if part.phase != "setup")
    transient = max(moment - sum(setup.values()) - invoke, 0)
    return HeapPart(
        "XNNPACK build transient",
        transient,
        "transient",
        # Replayed block by block on a replayed ISA, XNNPACK's fingerprints (each kind's dummy
        # operator) too, each 64-aligned block counted with the up to 32 B tail glibc may keep.
        # At 0 B there is nothing to estimate either: the moment is under the first invoke's
        # peak as counted, so the peak is the other parts' and this part adds nothing to it.
        replayed_moment or transient == 0,
        "while the delegate builds each kernel (xnnpack_delegate.cc Subgraph::Create): its "
        "XNNPACK subgraph's value and node arrays, Init's sets and maps and the partition, "
        "freed once the runtime exists, before the planner, the arena, XNNPACK's indirection "
        "buffers and workspace are made, and XNNPACK's one-off fingerprint of each kind of "
        "packing (a dummy operator's generated weights, packing and objects): counted where "
        "that moment is above the first invoke's peak"
        + (
            "; each 64-aligned block with the up to 32 B tail glibc may keep"
            if replayed_moment
            else " (an operator, part or ISA not replayed: an upper bound)"
        ),
    )


def _float16_static_bytes(model: Model) -> int:
    """Float32 bytes of every float16 constant a DEQUANTIZE reads (4 B an element)."""
    total = 0
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode != "DEQUANTIZE" or not operator.inputs:
                continue
            index = operator.inputs[0]
            if not 0 <= index < len(subgraph.tensors):
                continue
            tensor = subgraph.tensors[index]
            if tensor.dtype.name == "FLOAT16" and tensor.has_data:
                total += 2 * tensor.nbytes
    return total


@dataclass(frozen=True, slots=True)
class DelegateReshapes:
    """Subgraph 0's XNNPACK kernels' reshapes by view operator (heap_xnnpack_reshape), and
    those the first invoke's re-plan prepares (after a rank-0 read), where it is replayed."""

    by_operator: Mapping[int, KernelReshape]
    later: frozenset[int]


def _kernel_reshapes(
    model: Model, view: Model | None, isa: IsaProfile, threads: int
) -> DelegateReshapes:
    if view is None:
        return DelegateReshapes({}, frozenset())
    kernels = heap_xnnpack_reshape.kernel_reshapes(model, view, isa, threads)
    first = litert_plans(view)[0].prepared
    later = (
        heap_replan.replan(first, view.subgraphs[0], kernels).later_kernels
        if len(first.chunks) > 1
        else frozenset()
    )
    return DelegateReshapes(kernels, later)


def _setup_workspace(reshapes: DelegateReshapes) -> int | None:
    """Subgraph 0's workspace request after allocate_tensors() where the first invoke prepares
    some of its kernels (None: every kernel was prepared, xnnpack_parts' own count)."""
    if not reshapes.later:
        return None
    return heap_xnnpack_reshape.setup_workspace(reshapes.by_operator, reshapes.later)


@dataclass(frozen=True, slots=True)
class PhasedBlock:
    """A heap block and the call that makes it: Interpreter(...) or allocate_tensors()."""

    phase: str  # create | allocate
    block: Block


def first_invoke_parts(
    model: Model,
    *,
    delegated: bool = False,
    isa: IsaProfile = HOST,
    arenas: Sequence[int] = (),
    variables: heap_resources.VariablePlan | None = None,
    reshapes: Callable[[int], Mapping[int, KernelReshape]] | None = None,
    workspace: int = 0,
    ways: heap_control_flow.Ways = heap_control_flow.NO_WAYS,
) -> tuple[HeapPart, ...]:
    """The builtin kernels' first invoke (heap_invoke) with the ISA's ruy layouts, and the
    caller's blocks (`delegated`: on the delegated plan; `arenas`: high-water marks;
    `reshapes`, `workspace`: a CALL_ONCE init's delegate kernels' and the delegate's shared
    workspace request after setup, heap_call_once)."""
    plans = [plan.prepared for plan in litert_plans(model)]
    # Eigen's blocks follow the CPU's caches: replayed on those it was checked on, else a bound.
    caches = eigen_blocking.replayed_caches() if isa.replayed else None
    requests = [arena_request(size) if size else 0 for size in arenas[::2]]
    invoke = first_invoke(
        model, plans[0], delegated=delegated, ruy_layouts=isa.ruy, eigen_caches=caches,
        decompositions=decompositions(plans, requests), variables=variables,
        arena_block=glibc.aligned_usable(64, requests[0]) if requests and requests[0] else 0,
        inits=heap_call_once.init_subgraphs(model, arenas, reshapes), workspace=workspace,
        ways=ways,
    )  # fmt: skip
    eigen = bool(multithreaded_convs(model))
    estimated = ", ".join(sorted(set(invoke.estimated)))
    estimate = f"; counted at an upper bound: {estimated}" if estimated else ""
    released = invoke.released and "; less the arenas of the subgraphs it ran (ReleaseMemory)"
    return (
        HeapPart(
            "first-invoke kernel buffers",
            invoke.kept,
            "first_invoke",
            invoke.exact and not invoke.mmapped_kept,
            "kept after the first invoke: the CPU back end's contexts, "
            + ("Eigen's thread pool (the multi-threaded convolutions'), " if eigen else "")
            + "ruy's main buffer "
            "(grown to the largest 8-bit GEMM's packed operands) and its tuning, cpuinfo's "
            "tables when no kernel initialized them earlier, dynamic temporaries sized at "
            "Eval, string tensors' buffers (empty strings: an application's characters add "
            f"to them){released or ''}{estimate}"
            + (MMAPPED_NOTE if invoke.exact and invoke.mmapped_kept else ""),
            mmapped=invoke.exact and invoke.mmapped_kept,
        ),
        HeapPart(
            "first-invoke transient",
            invoke.transient,
            "transient",
            invoke.peak_exact and not invoke.mmapped_peak,
            "held only during the first invoke, at its peak: ruy's fallback blocks while "
            "its buffer grows, "
            + (
                "a multi-threaded convolution's packed blocks (Eigen's parallel contraction, "
                "on the path its cost model takes; sharded by depth, its blocks counted as "
                "if all ran at once: an upper bound, their overlap is timing), "
                if eigen
                else ""
            )
            + "Eigen's packed float blocks over 128 KiB"
            + (
                f" (blocked for {caches.label}; other caches block otherwise)"
                if caches is not None
                else " (bounded by the whole packed operand)"
            )
            + ", kernels' scratch, the DynamicBuffer LiteRT writes string tensors through"
            + estimate
            + (
                "; a delegate kernel the re-plan after a rank-0 read prepares: its memory "
                "planner's scratch counted at a bound (heap_xnnpack_reshape)"
                if invoke.reshaped_at_replan
                else ""
            )
            + (four_bit.UNPACKED_NOTE if four_bit.unpacks(model, delegated=delegated) else "")
            + (MMAPPED_NOTE if invoke.peak_exact and invoke.mmapped_peak else ""),
            mmapped=invoke.peak_exact and invoke.mmapped_peak,
        ),
        HeapPart(
            "caller's transient blocks",
            invoke.caller_transient,
            "transient",
            True,
            "not the interpreter's, live at that peak: the caller's numpy input arrays being "
            "set, pybind11's call blocks, the numpy iterator (2,632 B) over a string input",
            allowance=True,
        ),
        HeapPart(
            "caller's blocks",
            invoke.caller_kept,
            "first_invoke",
            False,
            "not the interpreter's: what numpy's caches keep of the caller's inputs and their "
            "details, and the last input's details (caches empty before: errs high)",
            allowance=True,
        ),
    )


def setup_blocks(
    model: Model,
    arena_sizes: Sequence[int],
    *,
    view: Model | None = None,
    reshapes: DelegateReshapes | None = None,
) -> list[PhasedBlock]:
    """Every block Interpreter(...) and allocate_tensors() leave allocated (builtin kernels),
    from the model, its prepared subgraphs and each arena's high-water mark. With `view` (the
    model as the planner sees it once a delegate took its partitions: heap_xnnpack), the
    interpreter is created from the model and allocate_tensors() plans the view; `reshapes`:
    its delegate kernels' (`_kernel_reshapes`), which the first invoke's re-plan may prepare."""
    created = creation_blocks(model)
    if view is not None:
        model, arena_sizes = view, heap_xnnpack.view_arena_sizes(view)
    plans = litert_plans(model)
    requests: list[tuple[str, int]] = []
    placements: list[tuple[int, int]] = []
    # Subgraph 0's later chunks, where the first invoke's re-plan is replayed (heap_replan).
    first = plans[0].prepared
    kernels = reshapes.by_operator if reshapes is not None else {}
    replanned = (
        heap_replan.replan(first, model.subgraphs[0], kernels) if len(first.chunks) > 1 else None
    )
    left_to_invoke = {}
    for index, plan in enumerate(plans):
        arena, persistent = (
            arena_sizes[2 * index] if 2 * index < len(arena_sizes) else 0,
            arena_sizes[2 * index + 1] if 2 * index + 1 < len(arena_sizes) else 0,
        )
        placed = (len(plan.order.arena_order), len(plan.order.persistent_order))
        if index == 0 and replanned is not None and replanned.later_first_node is not None:
            setup = replanned.setup
            arena, persistent = setup.arena_high_water, setup.persistent_high_water
            placed = (setup.arena_placed, setup.persistent_placed)
            left_to_invoke[0] = replanned.later_first_node
        if plan.prepared.allocated_by_allocate_tensors:
            for name, size in (("arena", arena), ("persistent arena", persistent)):
                if size > 0:
                    requests.append((f"subgraph {index} {name}", arena_request(size)))
        placements.append(placed)
    allocated = allocation_blocks(
        model,
        [plan.prepared for plan in plans],
        [len(plan.order.aliases) for plan in plans],
        requests,
        placements,
        left_to_invoke=left_to_invoke,
    )
    for plan in plans:
        allocated.extend(persistent_ro_blocks(plan.prepared))
    allocated.extend(heap_call_once.status_map_blocks(model))
    return [PhasedBlock("create", block) for block in created] + [
        PhasedBlock("allocate", block) for block in allocated
    ]


def placement_allowance(block_count: int) -> int:
    """Bytes glibc's whole-chunk reuse may add over the blocks' requested sizes (an allowance,
    see the heap part's meaning)."""
    return GLIBC_SLACK_BYTES * -(-block_count // GLIBC_SLACK_EVERY_BLOCKS) + WRAPPER_VARIATION_BYTES


def _largest_gemm_activation_bytes(model: Model) -> int:
    """The largest im2col-shaped float activation a float GEMM packs (elements × 4 B)."""
    largest = 0
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode not in GEMM_OPERATORS or len(operator.inputs) < 2:
                continue
            if operator.inputs[1] >= 0 and subgraph.tensors[operator.inputs[1]].dtype.name in (
                "FLOAT32"
            ):
                largest = max(
                    largest, 4 * _im2col_elements(subgraph, operator.inputs, operator.outputs)
                )
    return largest


def _im2col_elements(subgraph: Subgraph, inputs: Sequence[int], outputs: Sequence[int]) -> int:
    if not outputs or outputs[0] < 0 or inputs[1] < 0:
        return 0
    output = subgraph.tensors[outputs[0]]
    weights = subgraph.tensors[inputs[1]]
    pixels = output.element_count // max(output.shape[-1] if output.shape else 1, 1)
    depth = weights.element_count // max(weights.shape[0] if weights.shape else 1, 1)
    return pixels * depth


def xnnpack_unsized(model: Model) -> tuple[str, ...]:
    """Operators XNNPACK may take whose delegate-side heap is not modelled: a transposed
    convolution of a kind not replayed (8-bit unsigned) fingerprints its packing into
    temporaries of a fixed shape (up to 120 times a small operator's weights), so no figure
    that never falls under can be given for it."""
    found = []
    for subgraph in model.subgraphs:
        split = heap_xnnpack.partition(subgraph, model)
        if "TRANSPOSE_CONV" in split.unmodelled:
            found.append("TRANSPOSE_CONV")
    return tuple(sorted(set(found)))


def _unreplayed_note(model: Model) -> tuple[str, ...]:
    """Why the delegate's parts are bounds where its partition is not replayed: the operators
    it may take whose acceptance is not modelled (e.g. a FULLY_CONNECTED whose weights are
    computed at run time, or blockwise int4 weights on int8 activations)."""
    found = sorted(
        {
            opcode
            for sg in model.subgraphs
            for opcode in heap_xnnpack.partition(sg, model).unmodelled
        }
    )
    if not found:
        return ()
    return (
        f"not replayed: which {', '.join(found)} operators XNNPACK takes (their kind is not "
        "modelled), so its partition, packed weights, workspace and objects are counted at "
        "bounds that err high",
    )
