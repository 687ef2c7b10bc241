"""What `Interpreter(num_threads=N)` adds to a LiteRT interpreter's heap for N > 1, and the
operators whose multi-threaded heap is not modelled (heap.py refuses a figure for those)."""

from __future__ import annotations

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
