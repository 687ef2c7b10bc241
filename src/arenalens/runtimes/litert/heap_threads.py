"""What `Interpreter(num_threads=N)` adds to a LiteRT interpreter's heap for N > 1, and the
operators whose multi-threaded heap is not modelled (heap.py refuses a figure for those)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from arenalens.ir import Model, Operator, Subgraph
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
# conv.cc's multi-threaded float kernel (eigen_conv_parts): Eigen's thread pool, per thread and
# fixed: 42,348 B a thread and 544 B on the wheel at 2 and 4 threads (the same on all 24 mt16_*
# chains, tests/data/litert_heap_conv_threads.json), a bound elsewhere.
EIGEN_THREAD_BYTES = 42_348
EIGEN_POOL_BYTES = 544
EIGEN_MEASURED_THREADS = (2, 4)
EIGEN_UNMEASURED_BYTES = 4_096  # over the line, per pool, at other thread counts
EIGEN_UNMEASURED_THREAD_BYTES = 64  # and per thread
_THREADED_KERNELS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL")


def threads_unsized(model: Model, threads: int, isa: IsaProfile = HOST) -> tuple[str, ...]:
    """Operators left to the builtin kernels whose heap with `threads` > 1 is not modelled: an
    ADD_N of 4+ inputs sizes its arena scratch for min(inputs / 2, threads) threads (add_n.cc
    Prepare: 4x the input at 4 threads with 8 inputs on the wheel), where the arenas are planned
    for one. (A float CONV_2D's multi-threaded kernel is bounded: `eigen_conv_parts`.)"""
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
    """A float CONV_2D conv.cc runs multi-threaded, as EigenTensorConvFunctor sees it: its
    input (batches, height, width, depth), filter (height, width, count), strides, padding
    values and output (height, width)."""

    input: tuple[int, int, int, int]
    filter: tuple[int, int, int]
    strides: tuple[int, int]
    output: tuple[int, int]
    padded: bool

    @property
    def rows(self) -> int:
        return self.input[0] * self.output[0] * self.output[1]

    @property
    def depth(self) -> int:
        return self.filter[0] * self.filter[1] * self.input[3]

    @property
    def columns(self) -> int:
        return self.filter[2]


def multithreaded_convs(model: Model) -> tuple[FloatConv, ...]:
    """The CONV_2Ds of `model` (a `threaded_view`) that conv.cc runs on Eigen's thread pool."""
    from arenalens.runtimes.litert.rules import litert_plans  # noqa: PLC0415 - a cycle

    found = []
    for plan in litert_plans(model):
        prepared = plan.prepared
        for node in prepared.nodes:
            if not multithreaded_conv(prepared, node):
                continue
            data = prepared.tensors[node.inputs[0]].shape or ()
            weights = prepared.tensors[node.inputs[1]].shape or ()
            out = prepared.tensors[node.outputs[0]].shape or ()
            if len(data) != 4 or len(weights) != 4 or len(out) != 4:
                continue
            operator = model.subgraphs[prepared.index].operators[node.operator]
            strides = (operator.options.get("stride_h", 1), operator.options.get("stride_w", 1))
            # ComputePaddingHeightWidth: half the total padding, in each direction.
            padded = any(
                ((size - 1) * stride + tap - extent) // 2 > 0
                for size, stride, tap, extent in zip(
                    out[1:3], strides, weights[1:3], data[1:3], strict=True
                )
            )
            found.append(
                FloatConv(
                    (data[0], data[1], data[2], data[3]),
                    (weights[1], weights[2], weights[0]),
                    strides,
                    (out[1], out[2]),
                    padded,
                )
            )
    return tuple(found)


def eigen_conv_parts(model: Model, threads: int) -> tuple[HeapPart, ...]:
    """What conv.cc's multi-threaded float kernel adds with `threads` > 1 on `model` (a
    `threaded_view`, whose arenas hold the transposed filters and no im2col):

    * eigen_support.cc's Eigen::ThreadPool of `threads` threads, made at the first such Eval
      and kept: per thread a RunQueue of 1024 tasks (40 B each) and its thread's blocks,
      EIGEN_THREAD_BYTES a thread and EIGEN_POOL_BYTES as the wheel holds them at 2 and 4
      threads (exact there; a bound at other counts);
    * the parallel contraction's packed blocks (TensorContractionThreadPool.h: up to P - 1 = 2
      k-slices of every LHS and RHS block), counted as two slices of the whole packed operands
      of the largest such convolution, (rows x depth + depth x columns) x 4 B each (the
      measured transient at most 1.41 such slices on 12 generated chains, mt16_*)."""
    convs = multithreaded_convs(model) if threads > 1 else ()
    if not convs:
        return ()
    measured = threads in EIGEN_MEASURED_THREADS
    pool = EIGEN_POOL_BYTES + EIGEN_THREAD_BYTES * threads
    if not measured:
        pool += EIGEN_UNMEASURED_BYTES + EIGEN_UNMEASURED_THREAD_BYTES * threads
    packed = max(2 * 4 * (c.rows * c.depth + c.depth * c.columns) for c in convs)
    return (
        HeapPart(
            "Eigen thread pool",
            pool,
            "first_invoke",
            measured,
            f"eigen_support.cc: the Eigen::ThreadPool of {threads} threads the multi-threaded "
            "convolution runs on, made at its first Eval and kept: per thread its RunQueue of "
            "1024 tasks and the thread's blocks, as the wheel holds them at 2 and 4 threads"
            + ("" if measured else " (another thread count: an upper bound from those)"),
        ),
        HeapPart(
            "Eigen parallel contraction",
            packed,
            "transient",
            False,
            "the multi-threaded convolution's packed blocks while it runs: two k-slices of the "
            "largest one's whole packed operands (an upper bound)",
        ),
    )


def thread_parts(
    model: Model, threads: int, *, delegate: str, view: Model | None, isa: IsaProfile = HOST
) -> tuple[HeapPart, ...]:
    """What `threads` > 1 adds: XNNPACK's threadpool, the CPU back end's, the multi-threaded
    float convolution's (`eigen_conv_parts`; bounds)."""
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
        _ruy_threaded(subgraph, operator, isa)
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
    return (*parts, *eigen_conv_parts(cpu, threads))


def _ruy_threaded(subgraph: Subgraph, operator: Operator, isa: IsaProfile) -> bool:
    """The operator may run on the CPU back end's (ruy's) thread pool: a GEMM or depthwise
    kernel, but on x86-64 not a float CONV_2D, FULLY_CONNECTED or BATCH_MATMUL, whose GEMM
    is Eigen's single-threaded product there (cpu_backend_gemm_eigen.cc; TFLITE_WITH_RUY
    is aarch64's default only) or conv.cc's Eigen kernel (`eigen_conv_parts`)."""
    if operator.opcode not in _THREADED_KERNELS:
        return False
    if isa.family == "arm64" or operator.opcode == "DEPTHWISE_CONV_2D":
        return True
    kinds = [
        subgraph.tensors[index].dtype.name if 0 <= index < len(subgraph.tensors) else ""
        for index in operator.inputs[:2]
    ]
    return kinds != ["FLOAT32", "FLOAT32"]
