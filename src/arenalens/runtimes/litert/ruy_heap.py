"""ruy's heap during the builtin kernels' GEMMs (8-bit ones on x86-64, float ones too on
Arm builds with TFLITE_WITH_RUY): the blocks each call asks its main allocator for, and how
the allocator keeps them (*ruy/allocator.cc, prepare_packed_matrices.cc,
create_trmul_params.h*; heap_invoke replays the calls in execution order). A matrix × vector
product goes to the custom GEMV instead (*cpu_backend_gemm_custom_gemv.h*), which allocates
nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from arenalens.ir import Model
from arenalens.runtimes.litert import glibc
from arenalens.runtimes.litert.isa import HOST, RuyLayout

# ruy: ctx->GetMainAllocator (new Allocator, 56 B), GetMainThreadTuning (80 B and its
# vector of one unique_ptr, 8 B).
RUY_ALLOCATOR_REQUEST = 56
RUY_TUNING_REQUESTS = (80, 8)
# cpuinfo_initialize (once per process, kept): FULLY_CONNECTED's Init runs it when the
# interpreter is created; otherwise ruy's first path selection does, during the first invoke.
# Its tables follow the machine's processors and caches: these are this machine's
# (2 logical processors) usable bytes, counted by the tracer.
CPUINFO_USABLE_BYTES = 736
RUY_BLOCK_ALIGNMENT = 64  # detail::kMinimumBlockAlignment
RUY_ALIASING_BYTES = 1024  # AllocateBytesAvoidingAliasingWith's kMinPeriod
POINTER_BYTES = 8
# AVX-512 kernels for 8-bit operands: FixedKernelLayout<kColMajor, 4, 16> on both sides
# (isa.HOST.ruy; other ISAs' layouts are in isa.py).
# Custom GEMV (matrix × one column): kKernelRows = 4, and at least 8 LHS columns.
GEMV_MINIMUM_ROWS = 4
GEMV_MINIMUM_COLUMNS = 8


@dataclass(frozen=True, slots=True)
class Gemm:
    """One GEMM as cpu_backend_gemm sees it: LHS rows × depth times depth × columns."""

    rows: int
    depth: int
    columns: int
    per_channel: bool  # per-row multipliers (int8 convolutions, per-channel FC)
    has_bias: bool
    quantized: bool  # 8-bit: ruy; float: Eigen
    raw: bool = False  # int32 accumulators out: that Gemm always takes ruy, never the GEMV
    rhs_bytes: int = 1  # 2: int16 activations (16x8), which the custom GEMV never takes
    # A float GEMM whose storage orders are not Eigen's (a column-major LHS: CONV_3D):
    # cpu_backend_gemm.h's must_use_ruy sends it to ruy before any GEMV or Eigen.
    must_use_ruy: bool = False

    @property
    def custom_gemv(self) -> bool:
        if (self.raw and self.quantized) or self.rhs_bytes != 1 or self.must_use_ruy:
            return False
        return (
            self.columns == 1
            and self.rows >= GEMV_MINIMUM_ROWS
            and self.depth >= GEMV_MINIMUM_COLUMNS
        )


def sixteen_by_eight(model: Model, subgraph: int, operator: int) -> bool:
    """A 16x8 FULLY_CONNECTED (int16 activations, an int8 or int4 filter) that takes the
    optimized kernel, cpu_backend_gemm with an int16 RHS through ruy (fully_connected.cc
    EvalQuantized): every zero point 0 (its first one, params.zero_point), no int64 bias and
    quantized_bias_type not INT64; otherwise the reference kernel, which allocates nothing.
    cpu_backend_gemm's custom GEMV takes no int16 RHS."""
    if not 0 <= operator < len(model.subgraphs[subgraph].operators):
        return False
    node = model.subgraphs[subgraph].operators[operator]
    if node.opcode != "FULLY_CONNECTED" or len(node.inputs) < 2 or not node.outputs:
        return False
    tensors = model.subgraphs[subgraph].tensors
    data, weights, output = (
        tensors[node.inputs[0]],
        tensors[node.inputs[1]],
        tensors[node.outputs[0]],
    )
    if data.dtype.name != "INT16" or output.dtype.name != "INT16":
        return False
    if weights.dtype.name not in ("INT8", "INT4"):
        return False
    if any(
        t.quantization is not None and t.quantization.zero_point for t in (data, weights, output)
    ):
        return False
    bias = tensors[node.inputs[2]] if len(node.inputs) > 2 and node.inputs[2] >= 0 else None
    if bias is not None and bias.dtype.name == "INT64":
        return False
    return node.options.get("quantized_bias_type", 0) not in (4, "INT64")  # TensorType INT64


class Takes(Protocol):
    """The replay's heap: blocks taken and given back (usable bytes)."""

    def take(self, usable: int) -> None: ...

    def give(self, usable: int) -> None: ...


class Ruy:
    """ruy's main allocator and the context objects its first call creates."""

    def __init__(self, heap: Takes) -> None:
        self.heap = heap
        self.created = False
        self.size = 0  # the main buffer's request (0: none yet)
        self.vector_capacity = 0  # fallback_blocks_ (kept with its capacity by clear())

    def multiply(self, requests: Sequence[int], *, cpuinfo: bool) -> None:
        heap = self.heap
        if not self.created:
            if cpuinfo:
                heap.take(CPUINFO_USABLE_BYTES)
            heap.take(glibc.usable(RUY_ALLOCATOR_REQUEST))
        current = 0
        fallbacks: list[int] = []
        for request in requests:
            if current + request <= self.size:
                current += request
                continue
            heap.take(glibc.aligned_usable(RUY_BLOCK_ALIGNMENT, request))
            fallbacks.append(request)
            if len(fallbacks) > self.vector_capacity:
                grown = max(1, 2 * self.vector_capacity)
                heap.take(glibc.usable(POINTER_BYTES * grown))
                if self.vector_capacity:
                    heap.give(glibc.usable(POINTER_BYTES * self.vector_capacity))
                self.vector_capacity = grown
        if not self.created:
            for tuning in RUY_TUNING_REQUESTS:
                heap.take(glibc.usable(tuning))
            self.created = True
        if not fallbacks:
            return
        if self.size:
            heap.give(glibc.aligned_usable(RUY_BLOCK_ALIGNMENT, self.size))
        self.size += sum(fallbacks)
        heap.take(glibc.aligned_usable(RUY_BLOCK_ALIGNMENT, self.size))
        for request in fallbacks:
            heap.give(glibc.aligned_usable(RUY_BLOCK_ALIGNMENT, request))


def ruy_requests(gemm: Gemm, layout: RuyLayout = HOST.ruy[0]) -> list[int]:
    """The main allocator's requests of one 8-bit ruy GEMM, in the order ruy makes them, for
    the ISA's kernel `layout` (AVX-512's by default)."""
    columns = _round_up(gemm.rows, layout.lhs_columns)
    requests: list[int] = []
    if columns > gemm.rows:
        per_channel = int(gemm.has_bias) + (2 if gemm.per_channel else 0)
        requests.extend([_block(4 * columns)] * per_channel)
    depth = _round_up(gemm.depth, layout.depth)
    for side_columns, element in ((columns, 1), (_round_up(gemm.columns, layout.rhs_columns),
                                                 gemm.rhs_bytes)):  # fmt: skip
        requests.append(_block(depth * side_columns * element + RUY_ALIASING_BYTES))
        requests.append(_block(4 * side_columns))
    return requests


def ruy_float_requests(gemm: Gemm, layout: RuyLayout) -> list[int]:
    """A float GEMM through ruy (Arm builds, TFLITE_WITH_RUY; anywhere must_use_ruy): the bias
    padded to the kernel's columns when the rows are not a multiple of them, then each packed
    operand (depth unpadded, columns to the float kernel's, 4 B each, plus the aliasing
    period) and its sums (one float per column: prepare_packed_matrices.cc allocates them for
    every type)."""
    kernel = layout.ruy_float_columns
    columns = _round_up(gemm.rows, kernel)
    requests: list[int] = []
    if columns > gemm.rows and gemm.has_bias:
        requests.append(_block(4 * columns))
    for side_columns in (columns, _round_up(gemm.columns, kernel)):
        requests.append(_block(4 * gemm.depth * side_columns + RUY_ALIASING_BYTES))
        requests.append(_block(4 * side_columns))
    return requests


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _block(nbytes: int) -> int:
    return _round_up(nbytes, RUY_BLOCK_ALIGNMENT)
