"""What `Interpreter(num_threads=N)` adds to a LiteRT interpreter's heap for N > 1, and the
operators whose multi-threaded heap is not modelled (heap.py refuses a figure for those)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from arenalens.ir import Model, Operator, Subgraph
from arenalens.runtimes.litert import eigen_cost, eigen_parallel, glibc
from arenalens.runtimes.litert.eigen_blocking import CacheSizes
from arenalens.runtimes.litert.heap_invoke_state import LiveHeap
from arenalens.runtimes.litert.heap_part import HeapPart
from arenalens.runtimes.litert.isa import HOST, IsaProfile
from arenalens.runtimes.litert.prepare.conv import THREADS_OPTION
from arenalens.runtimes.litert.prepare.state import PreparedSubgraph, RuntimeNode

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
# conv.cc's multi-threaded float kernel (eigen_pool_blocks): Eigen's thread pool. Its
# ThreadPoolTempl keeps one block of N ThreadData (41,376 B each: the wheel's trace at 4
# threads, a 165,504 B request, tests/litert_heap_trace.py) and 972 B a thread and 536 B more
# (the rest of 42,348 B a thread and 544 B, the same on all 24 mt16_* chains at 2 and 4 threads).
EIGEN_THREAD_DATA_BYTES = 41_376
EIGEN_THREAD_BYTES = 972
EIGEN_POOL_BYTES = 536
EIGEN_MEASURED_THREADS = (2, 4)
EIGEN_UNMEASURED_BYTES = 4_096  # over the line, per pool, at other thread counts
EIGEN_UNMEASURED_THREAD_BYTES = 64  # and per thread
# The contraction's task closures and barrier beside its replayed blocks (eigen_parallel).
CONTEXT_BYTES = 512
# CONV_3D: its GEMM always takes ruy (cpu_backend_gemm must_use_ruy), ruy's pool with it.
_THREADED_KERNELS = (
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL", "CONV_3D",
)  # fmt: skip
# optimized_ops::Softmax (float): batch / 8 tasks, capped by the threads, on the CPU back end's
# pool (cpu_backend_threadpool::Execute) once two or more.
SOFTMAX_ROWS_PER_TASK = 8


def threads_unsized(model: Model, threads: int, isa: IsaProfile = HOST) -> tuple[str, ...]:
    """Operators left to the builtin kernels whose heap with `threads` > 1 is not modelled: an
    ADD_N of 4+ inputs sizes its arena scratch for min(inputs / 2, threads) threads (add_n.cc
    Prepare: 4x the input at 4 threads with 8 inputs on the wheel), where the arenas are planned
    for one. (A float CONV_2D's multi-threaded kernel is replayed: `threaded_view`, heap_invoke.)"""
    if threads == 1:
        return ()
    found = set()
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode == "ADD_N" and len(operator.inputs) >= 4:
                found.add("ADD_N of 4 inputs or more")
    return tuple(sorted(found))


def threaded_view(model: Model, threads: int, isa: IsaProfile = HOST) -> Model | None:
    """The model as conv.cc's Prepare sees it with `threads` > 1 where its kernel is
    kMultithreadOptimized (x86-64 and armv7; aarch64 builds default to TFLITE_WITH_RUY,
    kernels/BUILD, and have no such kernel): each CONV_2D told the thread count, so that the
    planner replica gives a float one its `hwcn_weights` in the persistent arena and no im2col
    (prepare.conv.conv_2d). None when nothing changes (one thread, arm64, no CONV_2D)."""
    if threads == 1 or isa.family == "arm64":
        return None
    if not any(op.opcode == "CONV_2D" for sub in model.subgraphs for op in sub.operators):
        return None
    return replace(
        model,
        subgraphs=tuple(
            replace(
                subgraph,
                operators=tuple(
                    operator._replace(
                        options=MappingProxyType({**operator.options, THREADS_OPTION: threads})
                    )
                    if operator.opcode == "CONV_2D"
                    else operator
                    for operator in subgraph.operators
                ),
            )
            for subgraph in model.subgraphs
        ),
    )


def multithreaded_conv(prepared: PreparedSubgraph, node: RuntimeNode) -> bool:
    """A CONV_2D Prepare gave `hwcn_weights` (conv.cc with more than one thread): its Eval
    runs multithreaded_ops::Conv on Eigen's thread pool, without the CPU back end's context
    or a single-threaded GEMM, and keeps nothing (the transposed filter is planned)."""
    return node.opcode == "CONV_2D" and any(
        0 <= index < len(prepared.tensors) and prepared.tensors[index].role == "hwcn_weights"
        for index in node.temporaries
    )


@dataclass(frozen=True, slots=True)
class FloatConv:
    """A float CONV_2D conv.cc runs multi-threaded, as Eigen's contraction sees it: m the
    output channels (`columns`), k the filter's taps × input channels (`depth`), n the output
    pixels of every image (`rows`); the interpreter's thread count; and whether the data are
    `Eigen::SpatialConvolution`'s image patches (multithreaded_conv.h: neither a 1×1 stride-1
    filter nor an unpadded whole-input one, which are plain matrix products)."""

    rows: int
    depth: int
    columns: int
    threads: int
    patches: bool = True


def float_conv(model: Model, prepared: PreparedSubgraph, node: RuntimeNode) -> FloatConv | None:
    """The node's multi-threaded convolution (None: it is not one, or its shapes are unset)."""
    if not multithreaded_conv(prepared, node):
        return None
    data = prepared.tensors[node.inputs[0]].shape or ()
    weights = prepared.tensors[node.inputs[1]].shape or ()
    out = prepared.tensors[node.outputs[0]].shape or ()
    if len(data) != 4 or len(weights) != 4 or len(out) != 4:
        return None
    operator = model.subgraphs[prepared.index].operators[node.operator]
    options = operator.options
    threads = int(options.get(THREADS_OPTION, 1))
    stride = (int(options.get("stride_h", 1)), int(options.get("stride_w", 1)))
    matrix = weights[1:3] == (1, 1) and stride == (1, 1)
    if weights[1:3] == data[1:3] and not matrix:
        # conv.cc's padding (ComputePaddingWithOffset): half the total, rounded down.
        pads = (
            max((size - 1) * step + tap - extent, 0) // 2
            for size, step, tap, extent in zip(
                out[1:3], stride, weights[1:3], data[1:3], strict=True
            )
        )
        matrix = not any(pads)
    return FloatConv(
        data[0] * out[1] * out[2],
        weights[1] * weights[2] * data[3],
        weights[0],
        threads,
        patches=not matrix,
    )


def multithreaded_convs(model: Model) -> tuple[FloatConv, ...]:
    """The CONV_2Ds of `model` (a `threaded_view`) that conv.cc runs on Eigen's thread pool."""
    from arenalens.runtimes.litert.rules import litert_plans  # noqa: PLC0415 - a cycle

    found = (
        float_conv(model, plan.prepared, node)
        for plan in litert_plans(model)
        for node in plan.prepared.nodes
    )
    return tuple(conv for conv in found if conv is not None)


def eigen_pool_blocks(threads: int) -> tuple[list[int], bool]:
    """eigen_support.cc's Eigen::ThreadPool of `threads` threads, made at the first
    multi-threaded convolution's Eval and kept: the block of its threads' ThreadData (each a
    RunQueue of 1024 40-byte tasks; from 4 threads one glibc's mmap threshold decides, counted
    mmapped as glibc.py says) and the threads' other blocks (usable bytes); and whether that is
    exact (the thread counts measured; a bound at others)."""
    blocks = [
        glibc.usable(EIGEN_THREAD_DATA_BYTES * threads),
        EIGEN_POOL_BYTES + EIGEN_THREAD_BYTES * threads,
    ]
    if threads in EIGEN_MEASURED_THREADS:
        return blocks, True
    return [*blocks, EIGEN_UNMEASURED_BYTES + EIGEN_UNMEASURED_THREAD_BYTES * threads], False


def contraction_blocks(conv: FloatConv, caches: CacheSizes | None) -> tuple[list[int], bool]:
    """The multi-threaded convolution's blocks while it runs (usable bytes) and whether they
    are the wheel's: the packed blocks of the path Eigen's cost model takes (eigen_cost;
    eigen_parallel: a bound where the depth is sharded, whose blocks' overlap is timing) and
    CONTEXT_BYTES of task closures; without the CPU's cache sizes
    (eigen_blocking.replayed_caches), which decide the path and the blocks, the largest any
    caches may give (eigen_parallel.any_caches_blocks: a bound)."""
    m, k, n = conv.columns, conv.depth, conv.rows
    if caches is None:
        kinds = eigen_cost.possible_kinds(m, k, n, conv.threads, patches=conv.patches)
        blocks = eigen_parallel.any_caches_blocks(m, k, n, conv.threads, kinds)
        return [*blocks, CONTEXT_BYTES], False
    path = eigen_cost.contraction_path(m, k, n, conv.threads, caches, patches=conv.patches)
    packed, exact = eigen_parallel.path_blocks(path, m, k, n, pool=conv.threads, caches=caches)
    return [*packed, CONTEXT_BYTES], exact


def eigen_conv_eval(
    heap: LiveHeap,
    model: Model,
    prepared: PreparedSubgraph,
    node: RuntimeNode,
    *,
    caches: CacheSizes | None,
    estimated: list[str],
    pooled: bool,
) -> tuple[bool, bool]:
    """A multi-threaded convolution's Eval on `heap`: Eigen's thread pool made at the first
    (`pooled`: made already), then its contraction's blocks taken and freed; a pool at a
    thread count not measured is an estimate. Returns whether the pool is now made and
    whether the contraction's blocks are the wheel's (else the transient is a bound)."""
    conv = float_conv(model, prepared, node)
    if conv is None:
        return pooled, True
    if not pooled:
        pool, exact = eigen_pool_blocks(conv.threads)
        for block in pool:
            heap.take(block)
        if not exact:
            estimated.append("Eigen thread pool")
    transient, exact = contraction_blocks(conv, caches)
    for block in transient:
        heap.take(block)
    for block in transient:
        heap.give(block)
    return True, exact


def thread_parts(
    model: Model, threads: int, *, delegate: str, view: Model | None, isa: IsaProfile = HOST
) -> tuple[HeapPart, ...]:
    """What `threads` > 1 adds beside the arenas and first invoke of the threaded view
    (`threaded_view`: conv.cc's multi-threaded kernel, replayed in heap_invoke): XNNPACK's
    threadpool and the CPU back end's (bounds)."""
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
    eigen = _eigen_operators(cpu)
    if any(
        _ruy_threaded(subgraph, operator, isa, eigen.get(index, frozenset()))
        for index, subgraph in enumerate(cpu.subgraphs)
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


def _ruy_threaded(
    subgraph: Subgraph, operator: Operator, isa: IsaProfile, eigen: frozenset[int]
) -> bool:
    """The operator may run on the CPU back end's (ruy's) thread pool: a GEMM or depthwise
    kernel, but not one of `eigen` (conv.cc's Eigen kernel: `multithreaded_conv`) nor, on
    x86-64, a float CONV_2D (im2col and Eigen's single-threaded product) or a float
    FULLY_CONNECTED of one row (a matrix × vector product): measured, nothing for them on the
    48 mt16_* / mt17_* cases at 2 and 4 threads, dilated ones and heads included."""
    if operator.opcode == "SOFTMAX":
        return _softmax_tasks(subgraph, operator) > 1
    if operator.opcode not in _THREADED_KERNELS or operator.index in eigen:
        return False
    if isa.family == "arm64" or operator.opcode not in ("CONV_2D", "FULLY_CONNECTED"):
        return True
    tensors = subgraph.tensors
    data, weights = (tensors[i] if 0 <= i < len(tensors) else None for i in operator.inputs[:2])
    if data is None or weights is None:
        return True
    if (data.dtype.name, weights.dtype.name) != ("FLOAT32", "FLOAT32"):
        return True
    if operator.opcode == "CONV_2D":
        return False
    if len(weights.shape) != 2:
        return True
    elements = 1
    for dim in data.shape:
        elements *= max(dim, 1)
    return elements != max(weights.shape[1], 1)


def _softmax_tasks(subgraph: Subgraph, operator: Operator) -> int:
    """How many tasks a float SOFTMAX splits its rows into (before the thread cap)."""
    index = operator.inputs[0] if operator.inputs else -1
    if not 0 <= index < len(subgraph.tensors):
        return 0
    data = subgraph.tensors[index]
    if data.dtype.name != "FLOAT32" or not data.shape:
        return 0
    rows = 1
    for dim in data.shape[:-1]:
        rows *= max(dim, 1)
    return rows // SOFTMAX_ROWS_PER_TASK


def _eigen_operators(model: Model) -> dict[int, frozenset[int]]:
    """Per subgraph, the operators conv.cc runs multi-threaded (`multithreaded_conv`)."""
    from arenalens.runtimes.litert.rules import litert_plans  # noqa: PLC0415 - a cycle

    return {
        plan.prepared.index: frozenset(
            node.operator for node in plan.prepared.nodes if multithreaded_conv(plan.prepared, node)
        )
        for plan in litert_plans(model)
    }
