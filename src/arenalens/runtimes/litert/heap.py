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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.runtimes.litert import (
    eigen_blocking,
    glibc,
    heap_build,
    heap_caller,
    heap_resources,
    heap_xnnpack,
    xnnpack_attention,
    xnnpack_custom,
    xnnpack_objects,
    xnnpack_packing,
    xnnpack_subgraphs,
    xnnpack_workspace,
)
from arenalens.runtimes.litert.heap_interpreter import (
    Block,
    allocation_blocks,
    creation_blocks,
    persistent_ro_blocks,
)
from arenalens.runtimes.litert.heap_invoke import decompositions, first_invoke
from arenalens.runtimes.litert.isa import HOST, IsaProfile, largest_request
from arenalens.runtimes.litert.rules import litert_plans

DELEGATES = ("xnnpack", "none")
DEFAULT_DELEGATE = "xnnpack"  # LiteRT applies XNNPACK unless told not to

# First invoke of float models: the Python wrapper's input and output views.
INVOKE_FIXED_BYTES = 1_600
# XNNPACK's first run: its threadpool and per-call scratch (an upper bound).
XNNPACK_FIXED_BYTES = 40_000
# The delegate object, its workspace handle, the CPU back end's context it asks for and
# cpuinfo's tables (tflite/delegates/xnnpack/xnnpack_delegate.cc: Delegate::Delegate): 3,760 B
# on the wheel's trace, counted with room.
XNNPACK_DELEGATE_BYTES = 4_096
# The widest output-channel tile an x86-64 microkernel packs to (AVX-512: 64 for qs8
# depthwise; GEMMs 16 or 32), and the row tile of its GEMMs (indirection rows padded to it).
XNNPACK_CHANNEL_TILE = 64
XNNPACK_ROW_TILE = 16
XNNPACK_DWCONV_PRIMARY_TILE = 25  # the widest unipass depthwise tile (5×5)
POINTER_BYTES = 8
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

_GEMM_OPERATORS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV")


@dataclass(frozen=True, slots=True)
class HeapPart:
    """One part of the interpreter's heap, in bytes, and when it is taken."""

    name: str
    nbytes: int
    phase: str  # setup | first_invoke | transient (live during the first invoke only)
    exact: bool
    meaning: str
    allowance: bool = False  # bytes that are not the model's (glibc placement, the caller)


@dataclass(frozen=True, slots=True)
class InterpreterHeap:
    """Heap a LiteRT interpreter holds for a model under one delegate."""

    delegate: str  # xnnpack | none
    parts: tuple[HeapPart, ...]
    machine: str
    notes: tuple[str, ...] = ()
    threads: int = 1  # Interpreter(num_threads=...)
    isa: IsaProfile = HOST

    def _sum(self, *phases: str) -> int:
        return sum(part.nbytes for part in self.parts if part.phase in phases)

    @property
    def after_setup(self) -> int:
        """Live after Interpreter(...) and allocate_tensors()."""
        return self._sum("setup")

    @property
    def after_first_invoke(self) -> int:
        """Live after the first invoke()."""
        return self._sum("setup", "first_invoke")

    @property
    def peak(self) -> int:
        """The most live at any moment up to the end of the first invoke()."""
        return self._sum("setup", "first_invoke", "transient")

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
        estimated = ", ".join(
            part.name for part in self.parts if not part.exact and not part.allowance
        )
        return (
            f"estimate that errs high: {estimated} (measured never under with "
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
    read = model  # Interpreter(...)'s nodes; XNNPACK's: xnnpack_custom.as_xnnpack_builtins
    if delegate == "xnnpack":
        model = xnnpack_custom.as_xnnpack_builtins(model)
    view = heap_xnnpack.delegated_view(model) if delegate == "xnnpack" else None
    unthreaded = threads_unsized(view if view is not None else model, threads, isa)
    if unthreaded:
        raise ValueError(
            f"the heap with {threads} threads is not modelled for {', '.join(unthreaded)}"
        )
    setup = setup_blocks(read, arena_sizes, view=view)
    replayed = xnnpack_objects.delegate_objects(model) if delegate == "xnnpack" else None
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
            all(block.block.exact for block in created),
            "Interpreter(...): the op resolver and Python wrapper (the same for every model), "
            "then per subgraph its tensors and nodes vectors, per tensor its dims and "
            "quantization arrays, per node its index arrays, builtin options and kernel OpData",
        ),
        HeapPart(
            "arenas",
            arenas,
            "setup",
            True,
            "each subgraph's arena and persistent arena: one 64-aligned block of its "
            "high-water mark (the planner replica's figure)",
        ),
        HeapPart(
            "planner and kernel setup",
            sum(block.block.usable for block in kernel_blocks),
            "setup",
            all(block.block.exact for block in kernel_blocks),
            "allocate_tensors(): tensors and dims Prepare adds, kernels' per-channel "
            "requantization and lookup tables, ArenaPlanner's per-tensor and per-node "
            "bookkeeping and its arenas' allocation lists",
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
        parts.extend(first_invoke_parts(model, isa=isa, arenas=arena_sizes))
        parts.extend(thread_parts(model, threads, delegate="none", view=None))
        return InterpreterHeap("none", tuple(parts), machine, threads=threads, isa=isa)
    xnnpack = xnnpack_parts(model, arenas, isa, threads)
    parts.extend(xnnpack)
    parts.extend(thread_parts(model, threads, delegate="xnnpack", view=view))
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
        sizes, plan = heap_xnnpack.view_arena_sizes(view), heap_resources.delegated_plan(model)
        parts.extend(
            first_invoke_parts(view, delegated=True, isa=isa, arenas=sizes, variables=plan)
        )
        parts.append(_build_transient(model, parts, replayed, isa))
    return InterpreterHeap(
        "xnnpack",
        tuple(parts),
        machine,
        notes=(
            "XNNPACK takes the operators it supports; the arena keeps only the tensors "
            "crossing between it and the builtin kernels",
        ),
        threads=threads,
        isa=isa,
    )


def _build_transient(
    model: Model,
    parts: Sequence[HeapPart],
    replayed: xnnpack_objects.DelegateObjects | None,
    isa: IsaProfile,
) -> HeapPart:
    """The delegate's build moment (heap_build) over the first invoke's peak, when above it."""
    setup = {part.name: part.nbytes for part in parts if part.phase == "setup"}
    exact = replayed is not None and replayed.exact
    exact = exact and all(part.exact for part in parts if part.name in heap_build.LATE_PARTS)
    moment = heap_build.build_moment_bytes(
        model, setup, replayed, exact, isa, delegate_bytes=XNNPACK_DELEGATE_BYTES
    )
    invoke = sum(part.nbytes for part in parts if part.phase != "setup")
    return HeapPart(
        "XNNPACK build transient",
        max(moment - sum(setup.values()) - invoke, 0),
        "transient",
        # Replayed block by block but for XNNPACK's fingerprint scratch, counted so that it
        # never falls under (a convolution's dummy, a float GEMM's tile): not called exact.
        False,
        "while the delegate builds each kernel (xnnpack_delegate.cc Subgraph::Create): its "
        "XNNPACK subgraph's value and node arrays, Init's sets and maps and the partition, "
        "freed once the runtime exists, before the planner, the arena, XNNPACK's indirection "
        "buffers and workspace are made: counted where that moment is above the first "
        "invoke's peak; XNNPACK's one-off fingerprint of each kind of packing is counted "
        "with room" + ("" if exact else " (an operator or part not replayed: an upper bound)"),
    )


def xnnpack_parts(
    model: Model, arenas: int, isa: IsaProfile = HOST, threads: int = 1
) -> tuple[HeapPart, ...]:
    """XNNPACK's own heap after setup (heap_xnnpack): packed weights, indirection buffers,
    workspace and runtime objects, exact where every delegated operator is modelled. On
    `isa`, packing is counted for each configuration its CPUs may select, the largest taken."""
    view = heap_xnnpack.delegated_view(model)
    modelled, prepared = view is not None, xnnpack_subgraphs.prepared(view)
    packed = indirection = workspace = 0
    packed_exact = indirection_exact = modelled
    replayed = xnnpack_objects.delegate_objects(model)
    objects = XNNPACK_DELEGATE_BYTES if replayed is None else replayed.total
    for subgraph in model.subgraphs:
        split = heap_xnnpack.partition(subgraph, model)
        if replayed is None:
            objects += heap_xnnpack.objects_bound(subgraph, split)
        if split.unmodelled:
            # Operators the delegate may take, not modelled: taken, with the old bound's room.
            objects += XNNPACK_FIXED_BYTES + heap_xnnpack.objects_bound(
                subgraph, heap_xnnpack.unmodelled_only(subgraph, split)
            )
        modelled = modelled and not split.unmodelled
        taken = set(xnnpack_workspace.runtime_operators(subgraph, split.delegated, model))
        reshaped = taken if subgraph.index in prepared or view is None else set()  # at Prepare
        for operator in subgraph.operators:
            if operator.opcode in xnnpack_packing.POOLING and operator.index in taken:
                # A pooling window's indirection buffer (malloc'd, as glibc hands it out).
                window = xnnpack_packing.pooling_indirection(subgraph, operator)
                indirection += glibc.usable(window) if operator.index in reshaped else 0
                continue
            if operator.opcode == "BATCH_MATMUL" and operator.index in taken:
                packing = partial(xnnpack_packing.packed_weights_request, subgraph, operator)
                constant_b = isa.largest_bound(packing)  # a constant B packed to the GEMM's tiles
                packed += xnnpack_packing.aligned_block(constant_b)
                objects += isa.gemm_operator_extra_bytes  # a GEMM-based operator's tables
                continue
            if operator.index in taken and xnnpack_attention.replayed(subgraph, operator):
                objects += 2 * isa.gemm_operator_extra_bytes  # its products' GEMM operators
            if operator.opcode not in _GEMM_OPERATORS or len(operator.inputs) < 2:
                continue
            if operator.index not in taken and not (
                operator.opcode in split.unmodelled and _delegable(subgraph, operator.inputs)
            ):
                continue
            # Packing follows the operator whether or not the partition around it is modelled.
            request = largest_request(xnnpack_packing.packing_of(model), subgraph, operator, isa)
            weights, weights_exact = _request_or_bound(
                request, _bounded_weights, subgraph, operator
            )
            weights_exact = weights_exact and operator.index in taken
            if operator.index in taken:
                objects += isa.gemm_operator_extra_bytes
            request = largest_request(xnnpack_packing.indirection_request, subgraph, operator, isa)
            if operator.opcode == "TRANSPOSE_CONV" and operator.index in taken and request:
                # Its indirection buffer is malloc'd (xnn_reallocate_memory), not aligned.
                indirection += glibc.usable(request) if operator.index in reshaped else 0
                packed += weights
                packed_exact = packed_exact and weights_exact
                continue
            buffer, buffer_exact = _request_or_bound(
                request if operator.index in taken else None,
                _bounded_indirection,
                subgraph,
                operator,
            )
            packed += weights
            indirection += 0 if operator.index in taken - reshaped else buffer
            packed_exact = packed_exact and weights_exact
            indirection_exact = indirection_exact and buffer_exact
        if subgraph.index in prepared or not modelled:  # else never reshaped: no workspace
            workspace_of = partial(xnnpack_workspace.workspace_request, subgraph, split.delegated)
            request = isa.largest_bound(partial(workspace_of, model, threads))
            workspace = max(workspace, request)
    packed_exact = packed_exact and modelled
    indirection_exact = indirection_exact and modelled
    return (
        HeapPart(
            "XNNPACK packed weights",
            packed,
            "setup",
            packed_exact,
            "weights and biases repacked per output-channel tile of the selected "
            f"microkernel ({isa.tiles_name}; the model's own copy stays in the file)",
        ),
        HeapPart(
            "XNNPACK indirection buffers",
            indirection,
            "setup",
            indirection_exact,
            "one pointer per output pixel per kernel tap for spatial convolutions (rows rounded to "
            "the GEMM's tile), a depthwise one's window: made at reshape, in prepared subgraphs",
        ),
        HeapPart(
            "XNNPACK workspace",
            xnnpack_packing.aligned_block(workspace) if modelled else arenas,
            "setup",
            modelled and not xnnpack_workspace.rows_estimate(model, isa),
            "XNNPACK's memory planner packs the values internal to each delegated partition "
            "and its operators' own workspaces (a hybrid GEMM's packed input, a run-time "
            "matrix packed for a BATCH_MATMUL) into one workspace (the largest partition's "
            "plan plus 32 B)"
            + ("" if modelled else "; counted at the builtin arena's size, which it never exceeds")
            + xnnpack_workspace.rows_estimate(model, isa),
        ),
        HeapPart(
            "XNNPACK runtime and operator objects",
            objects,
            "setup",
            replayed is not None and replayed.exact,
            (
                "the delegate and its contexts, each delegate kernel's node, maps and "
                "vectors, each XNNPACK runtime's operator data and values, each operator's "
                "object, context and zero or indirection buffers: replayed block by block "
                "from the delegate's and XNNPACK's sources (xnnpack_objects)"
                if replayed is not None and replayed.exact
                else "the delegate, its runtimes' value and operator arrays, each operator's "
                "object and parameters, the delegate kernels' nodes: an upper bound per "
                "runtime, operator and value (an operator kind or a node clean-up that is "
                "not replayed; a variable of 8-bit unsigned values: which of its operators "
                "the delegate takes is not modelled)"
            ),
        ),
    )


def _request_or_bound(
    request: int | None,
    bound: Callable[[Subgraph, Operator], int],
    subgraph: Subgraph,
    operator: Operator,
) -> tuple[int, bool]:
    """A modelled request as the 64-aligned block glibc gives (exact), else the bound."""
    if request is None:
        return bound(subgraph, operator), False
    return xnnpack_packing.aligned_block(request), True


def _bounded_weights(subgraph: Subgraph, operator: Operator) -> int:
    """An operator whose packing is not modelled (a hybrid convolution's weights): every
    channel padded to the widest tile, with a bias and a scale per channel."""
    weights = subgraph.tensors[operator.inputs[1]]
    return glibc.aligned_usable(64, _padded_weights(weights) + 64)


def _bounded_indirection(subgraph: Subgraph, operator: Operator) -> int:
    if operator.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D") or not operator.outputs:
        return 0
    weights = subgraph.tensors[operator.inputs[1]]
    output = subgraph.tensors[operator.outputs[0]]
    if len(output.shape) != 4 or len(weights.shape) != 4:
        return 0
    size = _indirection_bytes(operator, weights.shape, output.shape)
    return glibc.aligned_usable(64, size) if size else 0


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
) -> tuple[HeapPart, ...]:
    """The builtin kernels' first invoke (heap_invoke) with the ISA's ruy layouts, and the
    caller's blocks (`delegated`: on the delegated plan; `arenas`: high-water marks)."""
    plans = [plan.prepared for plan in litert_plans(model)]
    # Eigen's blocks follow the CPU's caches: replayed on those it was checked on, else a bound.
    caches = eigen_blocking.replayed_caches() if isa.replayed else None
    requests = [arena_request(size) if size else 0 for size in arenas[::2]]
    invoke = first_invoke(
        model, plans[0], delegated=delegated, ruy_layouts=isa.ruy, eigen_caches=caches,
        decompositions=decompositions(plans, requests), variables=variables,
        arena_block=glibc.aligned_usable(64, requests[0]) if requests and requests[0] else 0,
    )  # fmt: skip
    estimated = ", ".join(sorted(set(invoke.estimated)))
    estimate = f"; {estimated} not replayed: an upper bound" if estimated else ""
    released = invoke.released and "; less composites' decomposition arenas (ReleaseMemory)"
    return (
        HeapPart(
            "first-invoke kernel buffers",
            invoke.kept,
            "first_invoke",
            invoke.exact,
            "kept after the first invoke: the CPU back end's contexts, ruy's main buffer "
            "(grown to the largest 8-bit GEMM's packed operands) and its tuning, cpuinfo's "
            "tables when no kernel initialized them earlier, dynamic temporaries sized at "
            "Eval, string tensors' buffers (empty strings: an application's characters add "
            f"to them){released or ''}{estimate}",
        ),
        HeapPart(
            "first-invoke transient",
            invoke.transient,
            "transient",
            invoke.peak_exact,
            "held only during the first invoke, at its peak: ruy's fallback blocks while "
            "its buffer grows, Eigen's packed float blocks over 128 KiB"
            + (
                f" (blocked for {caches.label}; other caches block otherwise)"
                if caches is not None
                else " (bounded by the whole packed operand)"
            )
            + ", kernels' scratch, the DynamicBuffer LiteRT writes string tensors through"
            + estimate,
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
    model: Model, arena_sizes: Sequence[int], *, view: Model | None = None
) -> list[PhasedBlock]:
    """Every block Interpreter(...) and allocate_tensors() leave allocated (builtin kernels),
    from the model, its prepared subgraphs and each arena's high-water mark. With `view` (the
    model as the planner sees it once a delegate took its partitions: heap_xnnpack), the
    interpreter is created from the model and allocate_tensors() plans the view."""
    created = creation_blocks(model)
    if view is not None:
        model, arena_sizes = view, heap_xnnpack.view_arena_sizes(view)
    plans = litert_plans(model)
    requests: list[tuple[str, int]] = []
    placements: list[tuple[int, int]] = []
    for index, plan in enumerate(plans):
        arena, persistent = (
            arena_sizes[2 * index] if 2 * index < len(arena_sizes) else 0,
            arena_sizes[2 * index + 1] if 2 * index + 1 < len(arena_sizes) else 0,
        )
        if plan.prepared.allocated_by_allocate_tensors:
            for name, size in (("arena", arena), ("persistent arena", persistent)):
                if size > 0:
                    requests.append((f"subgraph {index} {name}", arena_request(size)))
        placements.append((len(plan.order.arena_order), len(plan.order.persistent_order)))
    allocated = allocation_blocks(
        model,
        [plan.prepared for plan in plans],
        [len(plan.order.aliases) for plan in plans],
        requests,
        placements,
    )
    for plan in plans:
        allocated.extend(persistent_ro_blocks(plan.prepared))
    return [PhasedBlock("create", block) for block in created] + [
        PhasedBlock("allocate", block) for block in allocated
    ]


def arena_request(high_water_mark: int) -> int:
    """ResizableAlignedBuffer::Resize: aligned_alloc(64, round_up(hwm + 63, 64))."""
    return (high_water_mark + 63 + 63) // 64 * 64


def placement_allowance(block_count: int) -> int:
    """Bytes glibc's whole-chunk reuse may add over the blocks' requested sizes (an allowance,
    see the heap part's meaning)."""
    return GLIBC_SLACK_BYTES * -(-block_count // GLIBC_SLACK_EVERY_BLOCKS) + WRAPPER_VARIATION_BYTES


def _largest_gemm_activation_bytes(model: Model) -> int:
    """The largest im2col-shaped float activation a float GEMM packs (elements × 4 B)."""
    largest = 0
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode not in _GEMM_OPERATORS or len(operator.inputs) < 2:
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
    pixels = _elements(output.shape) // max(output.shape[-1] if output.shape else 1, 1)
    depth = _elements(weights.shape) // max(weights.shape[0] if weights.shape else 1, 1)
    return pixels * depth


def _output_channels(weights: Tensor) -> int:
    """Output channels: the last dim of a depthwise filter [1, kh, kw, C], else the first."""
    if len(weights.shape) == 4 and weights.shape[0] == 1:
        return weights.shape[-1]
    return weights.shape[0] if weights.shape else 1


def _depth(weights: Tensor) -> int:
    return _elements(weights.shape) // max(_output_channels(weights), 1)


def _padded_weights(weights: Tensor, *, tile: int = XNNPACK_CHANNEL_TILE) -> int:
    """Weights with output channels padded to a tile, 4 B per float element and 1 B per 8-bit
    one, plus an int32 bias and a float scale per channel."""
    if not weights.shape:
        return 0
    channels = _output_channels(weights)
    depth = _depth(weights)
    tiled = -(-channels // tile) * tile
    element = 4 if weights.dtype.name == "FLOAT32" else 1
    return tiled * (depth * element + 8)


def _indirection_bytes(
    operator: Operator, weights_shape: Sequence[int], output_shape: Sequence[int]
) -> int:
    """XNNPACK's indirection buffer for one convolution (*src/operators/convolution-nhwc.c*,
    reshape): IGEMM takes one pointer per kernel tap per output pixel, pixels rounded up to
    the microkernel's rows (at most 16 on x86-64: counted as 15 more); a 1×1 convolution of
    stride 1 runs as a GEMM, with none. A depthwise convolution takes
    `primary_tile − taps + output_height × step_height` pointers, step_height = taps +
    (output_width − 1) × step_width × kernel_height, step_width = the stride (the kernel
    width when dilated); the primary tile is counted as max(taps, 25), the widest unipass
    tile. Per image, counted for every image of the batch (errs high). A depthwise
    convolution with a depth multiplier over 1 is a grouped convolution there: IGEMM."""
    batch, height, width = output_shape[0], output_shape[1], output_shape[2]
    kernel_height, kernel_width = weights_shape[1], weights_shape[2]
    taps = kernel_height * kernel_width
    options = operator.options
    stride_w, stride_h = int(options.get("stride_w", 1) or 1), int(options.get("stride_h", 1) or 1)
    dilated = any(
        int(options.get(key, 1) or 1) != 1
        for key in (
            "dilation_wfactor",
            "dilation_hfactor",
            "dilation_w_factor",
            "dilation_h_factor",
        )
    )
    # XNNPACK runs a depthwise convolution as one only with one output channel per group
    # (depth multiplier 1); otherwise it is a grouped convolution through IGEMM.
    multiplier = int(options.get("depth_multiplier", 1) or 1)
    if operator.opcode == "DEPTHWISE_CONV_2D" and multiplier == 1:
        step_width = kernel_width if dilated else stride_w
        step_height = taps + (width - 1) * step_width * kernel_height
        pointers = max(taps, XNNPACK_DWCONV_PRIMARY_TILE) - taps + height * step_height
        return max(batch, 1) * pointers * POINTER_BYTES
    if taps == 1 and stride_w == 1 and stride_h == 1:
        return 0
    pixels = max(batch, 1) * height * width
    return (pixels + XNNPACK_ROW_TILE - 1) * taps * POINTER_BYTES


def _delegable(subgraph: Subgraph, inputs: Sequence[int]) -> bool:
    """XNNPACK takes float32 and 8-bit operators with constant weights (hybrid ones aside)."""
    live = [subgraph.tensors[i] for i in inputs if i >= 0]
    if not live:
        return False
    data = live[0].dtype.name
    return data in ("FLOAT32", "INT8", "UINT8")


def _elements(shape: Sequence[int]) -> int:
    count = 1
    for dim in shape:
        count *= max(dim, 0)
    return count


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


# Threads (Interpreter(num_threads=N)), measured with the tracer at 1, 2 and 4 threads
# (tests/data/litert_heap_threads.json, `python -m tests.litert_heap_threads`). XNNPACK: the
# delegate creates a pthreadpool of N threads (xnnpack_delegate.cc: pthreadpool_create when
# num_threads > 1): its cache-line aligned pool and per-thread records, and the worker
# threads' first blocks (1,632-1,792 B at 2 threads, 2,848-3,072 B at 4 on the cached models).
# The builtin kernels: the CPU back end's thread pool (ruy's workers and their per-thread
# resources) once a kernel multiplies with it (600-2,056 B at 2 threads, 1,768-5,000 B at 4).
XNNPACK_THREADPOOL_BYTES = 1_152
XNNPACK_THREAD_BYTES = 768
BACKEND_THREAD_BYTES = 2_560
_THREADED_KERNELS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL")


def threads_unsized(model: Model, threads: int, isa: IsaProfile = HOST) -> tuple[str, ...]:
    """Operators left to the builtin kernels whose heap with `threads` > 1 is not modelled: a
    float CONV_2D takes its multi-threaded kernel, which plans other temporaries (the transposed
    filter in the persistent arena, no im2col) and runs Eigen's thread pool (a float depthwise
    convolution adds nothing measurable: kws_ref_model_float32), except on aarch64, where
    TFLITE_WITH_RUY is the default (kernels/BUILD) and conv.cc has no such kernel (the aarch64
    wheel at 4 threads: never under, tests/data/litert_heap_arm64_threads.json); an ADD_N of 4+
    inputs sizes its arena scratch for min(inputs / 2, threads) threads (add_n.cc Prepare: 4x the
    input at 4 threads with 8 inputs on the wheel), where the arenas are planned for one."""
    if threads == 1:
        return ()
    found = set()
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode == "ADD_N" and len(operator.inputs) >= 4:
                found.add("ADD_N of 4 inputs or more")
                continue
            if operator.opcode != "CONV_2D" or len(operator.inputs) < 2 or isa.family == "arm64":
                continue
            data, weights = operator.inputs[0], operator.inputs[1]
            if data >= 0 and weights >= 0:
                kinds = (subgraph.tensors[data].dtype.name, subgraph.tensors[weights].dtype.name)
                if kinds == ("FLOAT32", "FLOAT32"):
                    found.add(f"float {operator.opcode}")
    return tuple(sorted(found))


def thread_parts(
    model: Model, threads: int, *, delegate: str, view: Model | None
) -> tuple[HeapPart, ...]:
    """What `threads` > 1 adds: XNNPACK's threadpool, the CPU back end's (bounds)."""
    if threads == 1:
        return ()
    extra = threads - 1
    parts = []
    if delegate == "xnnpack":
        pool = XNNPACK_THREADPOOL_BYTES + XNNPACK_THREAD_BYTES * extra
        if view is None:  # the partition is not modelled: a wider bound
            pool = 2 * XNNPACK_THREAD_BYTES * threads + XNNPACK_THREADPOOL_BYTES
        parts.append(
            HeapPart(
                "XNNPACK threadpool",
                pool,
                "setup",
                False,
                f"the delegate's pthreadpool of {threads} threads and its workers' first "
                "blocks (an upper bound from the wheel's measurements at 2 and 4 threads)",
            )
        )
    cpu = view if view is not None else model
    if any(
        operator.opcode in _THREADED_KERNELS
        for subgraph in cpu.subgraphs
        for operator in subgraph.operators
    ):
        parts.append(
            HeapPart(
                "CPU back end threads",
                BACKEND_THREAD_BYTES * extra,
                "first_invoke",
                False,
                f"the builtin kernels' thread pool: {extra} ruy workers and their per-thread "
                "resources (an upper bound from the wheel's measurements at 2 and 4 threads)",
            )
        )
    return tuple(parts)
