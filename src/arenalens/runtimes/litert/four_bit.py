"""The optimized 4-bit FULLY_CONNECTED's call on x86-64 (an int4 filter of one scale per channel,
or one, under a float input: fully_connected.cc EvalHybridDense4Bit and
kernels/internal/optimized/4bit/sse_fully_connected.cc), what it allocates and frees within
one Eval: `filter_scales`, a std::vector<float> of the filter's rows padded to FilterWidth (4);
inside it SseBatchQuantizeFloats4Bit's `scale` vector (the packed row count's floats, once per
block of rows) and then SseRunKernel's `lhs_vec_data` (RowsLeft (4) × the depth padded to
FilterDepth (32) / 2 + 15 bytes). Traced on the wheel (AMD EPYC): a 256-unit, 40-column filter
holds 1,032 B + 152 B at its peak (int4pc16_17's builtin peak was 864 B under without them).
The prepacked weights and the OpData4Bit are setup's (heap_kernels, prepare/matmul.py).

An int4 filter the 4-bit kernel does not take (fewer than 32 columns or 4 units, an odd depth)
runs EvalHybridDense, which unpacks it to int8 for the call (`make_unique<int8_t[]>(2 ×
filter->bytes)`, the filter buffer's bytes) — but only for an input that is not all zeros
(`IsZeroVector` returns first): the wheel measured on zeros allocates it only where a bias or
an activation made the FULLY_CONNECTED's input non-zero (int4pc16_8 and _23: 248 B and 224 B
under without it). The heap's figures count it (a device's inputs are not zeros); the way
all-zero inputs take, which skips it where the input is then zeros (zero_values), is a way of
its own (heap_ways), each way exact."""

from __future__ import annotations

from collections.abc import Sequence

from arenalens.ir import Model
from arenalens.runtimes.litert import blockwise, glibc, xnnpack_qc4w

FILTER_WIDTH = 4  # optimized_4bit::FilterWidth
FILTER_DEPTH = 32  # optimized_4bit::FilterDepth
MAX_ROWS = 4  # sse_fully_connected.h GetMaxSupportedRows
_LHS_PADDING = 15  # SseRunKernel's `padding`


def eval_steps(model: Model, subgraph: int, inputs: Sequence[int]) -> tuple[int, ...]:
    """The usable bytes one EvalHybridDense4Bit call takes (positive) and gives back
    (negative), in order; empty unless its PrepareImpl took the 4-bit kernel (constant int4
    weights [units, columns] not blockwise, columns even and at least 32, at least 4 units)."""
    if len(inputs) < 2 or min(inputs[:2]) < 0:
        return ()
    tensors = model.subgraphs[subgraph].tensors
    data, weights = tensors[inputs[0]], tensors[inputs[1]]
    if data.dtype.name != "FLOAT32" or weights.dtype.name != "INT4" or not weights.has_data:
        return ()
    if len(weights.shape) != 2 or blockwise.blockwise(model, subgraph, inputs[1]) is not None:
        return ()
    units, columns = weights.shape
    if columns % 2 or columns < FILTER_DEPTH or units < FILTER_WIDTH:
        return ()
    batch = data.element_count // columns
    if batch <= 0:
        return ()
    rows = MAX_ROWS
    while rows > 1 and batch < rows:
        rows //= 2
    scales = glibc.usable(4 * -(-units // FILTER_WIDTH) * FILTER_WIDTH)
    quantize = glibc.usable(4 * rows)
    depth = -(-columns // FILTER_DEPTH) * FILTER_DEPTH
    kernel = glibc.usable(FILTER_WIDTH * depth // 2 + _LHS_PADDING)
    return (scales, quantize, -quantize, kernel, -kernel, -scales)


def call_steps(
    model: Model, subgraph: int, inputs: Sequence[int], read: object
) -> tuple[tuple[int, ...], bool]:
    """A float FULLY_CONNECTED's int4 call: the usable bytes taken (positive) and given back
    (negative) in order, the 4-bit kernel's vectors (`eval_steps`) or EvalHybridDense's int8
    copy, and whether they are a bound. `read`: the way given (heap_control_flow.Ways): True,
    its input is not all zeros (the copy made); False, all zeros (none); None, not given
    (counted, a bound)."""
    unpacked = unpacked_bytes(model, subgraph, inputs)
    if not unpacked or read is False:
        return eval_steps(model, subgraph, inputs), False
    return (unpacked, -unpacked), read is None


def unpacked_bytes(model: Model, subgraph: int, inputs: Sequence[int]) -> int:
    """EvalHybridDense's int8 copy of an int4 filter (affine, not blockwise, one the 4-bit
    kernel does not take) for a float input: usable bytes of twice the filter buffer's size,
    held for the call when the input is not all zeros; 0 for any other FULLY_CONNECTED."""
    if len(inputs) < 2 or min(inputs[:2]) < 0 or eval_steps(model, subgraph, inputs):
        return 0
    tensors = model.subgraphs[subgraph].tensors
    data, weights = tensors[inputs[0]], tensors[inputs[1]]
    if data.dtype.name != "FLOAT32" or weights.dtype.name != "INT4" or not weights.has_data:
        return 0
    if blockwise.blockwise(model, subgraph, inputs[1]) is not None:
        return 0
    buffers = model.buffers
    size = buffers[weights.buffer].nbytes if 0 <= weights.buffer < len(buffers) else 0
    return glibc.usable(2 * (size or -(-weights.element_count // 2)))


def integer_unpacked_bytes(model: Model, subgraph: int, inputs: Sequence[int]) -> int:
    """EvalQuantized's int8 copy of an int4 filter under an int8 or int16 input
    (fully_connected.cc: `make_unique<int8_t[]>(filter->bytes * 2)`, unpacked for every call
    and freed when it returns, around the GEMM): usable bytes, 0 for any other
    FULLY_CONNECTED. No zero-input shortcut on this path: the wheel shows it on zeros
    (held17_int4_1: 128 x 320 and 37 x 128 filters, 127,336 B under at the peak without it
    and the GEMM's ruy blocks)."""
    if len(inputs) < 2 or min(inputs[:2]) < 0:
        return 0
    tensors = model.subgraphs[subgraph].tensors
    data, weights = tensors[inputs[0]], tensors[inputs[1]]
    if data.dtype.name not in ("INT8", "INT16") or weights.dtype.name != "INT4":
        return 0
    if not weights.has_data:
        return 0
    buffers = model.buffers
    size = buffers[weights.buffer].nbytes if 0 <= weights.buffer < len(buffers) else 0
    return glibc.usable(2 * (size or -(-weights.element_count // 2)))


UNPACKED_NOTE = (
    "; an int4 filter's int8 copy for the call (fully_connected.cc EvalHybridDense), which "
    "the kernel makes only for an input that is not all zeros: counted, as a device's inputs "
    "make it"
)


def unpacks(model: Model, *, delegated: bool = False) -> bool:
    """Whether a FULLY_CONNECTED the builtin kernels run unpacks an int4 filter for its call
    (`delegated`: with XNNPACK, which takes the per-channel ones of even depth)."""
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode != "FULLY_CONNECTED":
                continue
            if not unpacked_bytes(model, subgraph.index, operator.inputs):
                continue
            weights = subgraph.tensors[operator.inputs[1]]
            if not (delegated and xnnpack_qc4w.takes(weights)):
                return True
    return False
