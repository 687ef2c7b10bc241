"""What `Interpreter(num_threads=N)` adds to a LiteRT interpreter's heap for N > 1, and the
operators whose multi-threaded heap is not modelled (heap.py refuses a figure for those)."""

from __future__ import annotations

from dataclasses import dataclass

from arenalens.ir import Model
from arenalens.runtimes.litert.heap_part import HeapPart
from arenalens.runtimes.litert.isa import HOST, IsaProfile

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
# fixed (measured 42,348 B a thread and 1,416 B on the AMD EPYC, the wheel at 2 and 4 threads).
EIGEN_THREAD_BYTES = 43_008
EIGEN_POOL_BYTES = 4_096
_TFLITE_TENSOR_BYTES = 112  # sizeof(TfLiteTensor) on LP64
_TENSORS_HEADROOM = 16  # subgraph.cc kTensorsCapacityHeadroom
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


@dataclass(frozen=True, slots=True)
class FloatConv:
    """A float CONV_2D as a GEMM: output pixels (all images), filter taps × input channels,
    output channels; its filter's bytes."""

    rows: int
    depth: int
    columns: int
    filter_nbytes: int


def multithreaded_convs(model: Model, isa: IsaProfile) -> tuple[FloatConv, ...]:
    """The float CONV_2Ds left to the builtin kernels that may take conv.cc's multi-threaded
    kernel with more than one thread (kMultithreadOptimized: float input and filter; every one
    counted, the dilated ones too, which fall back to im2col: a bound); none on aarch64, where
    TFLITE_WITH_RUY is the default (kernels/BUILD) and conv.cc has no such kernel (the aarch64
    wheel at 4 threads: never under, tests/data/litert_heap_arm64_threads.json). A float
    depthwise convolution adds nothing measurable (kws_ref_model_float32)."""
    if isa.family == "arm64":
        return ()
    found = []
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode != "CONV_2D" or len(operator.inputs) < 2 or not operator.outputs:
                continue
            data, weights, output = operator.inputs[0], operator.inputs[1], operator.outputs[0]
            if min(data, weights, output) < 0:
                continue
            tensors = subgraph.tensors
            kinds = (tensors[data].dtype.name, tensors[weights].dtype.name)
            shape, out = tensors[weights].shape, tensors[output].shape
            if kinds != ("FLOAT32", "FLOAT32") or len(shape) != 4 or len(out) != 4:
                continue
            rows = max(out[0], 1) * max(out[1], 1) * max(out[2], 1)
            depth = max(shape[1], 1) * max(shape[2], 1) * max(shape[3], 1)
            found.append(FloatConv(rows, depth, max(shape[0], 1), 4 * depth * max(shape[0], 1)))
    return tuple(found)


def eigen_conv_parts(model: Model, threads: int, isa: IsaProfile = HOST) -> tuple[HeapPart, ...]:
    """What conv.cc's multi-threaded float kernel adds with `threads` > 1, as labelled upper
    bounds over the 1-thread replay (whose im2col arena tensors it keeps: the kernel plans
    none, so the arenas only err high there):

    * Prepare's transposed filter (`hwcn_weights`, kTfLiteArenaRwPersistent): the filter's
      bytes in the persistent arena, rounded to 64, and a TfLiteTensor vector that may double
      for the tensors it adds where a 1x1 stride-1 convolution had no im2col;
    * eigen_support.cc's Eigen::ThreadPool of `threads` threads, made at the first such Eval
      and kept: per thread a RunQueue of 1024 tasks (40 B each) and its thread's blocks
      (42,348 B a thread and 1,416 B over the 1-thread figure on the AMD EPYC, at 2 and 4
      threads), counted EIGEN_THREAD_BYTES a thread and EIGEN_POOL_BYTES;
    * the parallel contraction's packed blocks (TensorContractionThreadPool.h: up to P - 1 = 2
      k-slices of every LHS and RHS block), counted as two slices of the whole packed operands
      of the largest such convolution, (rows x depth + depth x columns) x 4 B each (the
      measured transient at most 1.41 such slices on 12 generated chains, mt16_*)."""
    convs = multithreaded_convs(model, isa) if threads > 1 else ()
    if not convs:
        return ()
    filters = sum(-(-conv.filter_nbytes // 64) * 64 for conv in convs) + 64
    tensors = sum(len(subgraph.tensors) for subgraph in model.subgraphs)
    filters += (tensors + len(convs) + _TENSORS_HEADROOM) * _TFLITE_TENSOR_BYTES
    pool = EIGEN_POOL_BYTES + EIGEN_THREAD_BYTES * threads
    packed = max(2 * 4 * (c.rows * c.depth + c.depth * c.columns) for c in convs)
    return (
        HeapPart(
            "multi-threaded convolutions' transposed filters",
            filters,
            "setup",
            False,
            "conv.cc Prepare with more than one thread: each float convolution's filter "
            "transposed into the persistent arena (hwcn_weights; the arenas above keep the "
            "1-thread plan's im2col, which this kernel does not plan: an upper bound)",
        ),
        HeapPart(
            "Eigen thread pool",
            pool,
            "first_invoke",
            False,
            f"eigen_support.cc: the Eigen::ThreadPool of {threads} threads the multi-threaded "
            "convolution runs on, made at its first Eval and kept (an upper bound from the "
            "wheel's measurements at 2 and 4 threads)",
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
    return (*parts, *eigen_conv_parts(cpu, threads, isa))
