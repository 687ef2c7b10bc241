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
(`tests/data/litert_heap.json`, remade by `python -m tests.litert_heap_measure`); other ISAs
pack to other tiles and are labelled estimates too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arenalens.ir import Model, Subgraph, Tensor

DELEGATES = ("xnnpack", "none")
DEFAULT_DELEGATE = "xnnpack"  # LiteRT applies XNNPACK unless told not to

# The wheel these constants were measured on (tests/data/litert_heap.json: environment).
MEASURED_ON = "ai-edge-litert 2.3.0, Linux x86-64 (glibc 2.36), Python 3.11"

# Fixed part of an interpreter with the builtin op resolver, through the Python wrapper:
# measured with a one-RELU model (tests/litert_heap_measure.py, calibration models).
INTERPRETER_FIXED_BYTES = 96_500
# Per operator: TfLiteNode and its registration in the subgraph's node vector (grown by
# doubling), inputs / outputs / intermediates / temporaries arrays, builtin options, the
# kernel's OpData from Init. Measured as the slope of RELU chains of 1..128 operators, plus
# the largest OpData of the kernels arenalens knows (conv: 1 KiB).
PER_OPERATOR_BYTES = 1_400
# Per tensor: TfLiteTensor (112 B in a vector grown by doubling) and its dims array.
PER_TENSOR_BYTES = 280
# ArenaPlanner bookkeeping at allocate_tensors(): alloc / dealloc nodes, allocations,
# in-place ids per tensor; the node-to-tensor hash sets per node; the planner and arenas.
PLANNER_FIXED_BYTES = 1_200
PLANNER_PER_TENSOR_BYTES = 64
PLANNER_PER_OPERATOR_BYTES = 400
# First invoke of float models: the Python wrapper's input and output views.
INVOKE_FIXED_BYTES = 1_600
# XNNPACK: the delegate, its subgraph, runtime and operator objects.
XNNPACK_FIXED_BYTES = 40_000
XNNPACK_PER_OPERATOR_BYTES = 2_048
# The widest output-channel tile an x86-64 microkernel packs to (AVX-512: 64 for qs8
# depthwise; GEMMs 16 or 32), and the row tile of its GEMMs (indirection rows padded to it).
XNNPACK_CHANNEL_TILE = 64
XNNPACK_ROW_TILE = 16
# ruy's widest int8 kernel on x86-64 (AVX-512: 16 × 16 blocks).
RUY_TILE = 16
# ruy's context: its thread-specific resources, allocator and tuning state.
RUY_CONTEXT_BYTES = 16_384
POINTER_BYTES = 8

_GEMM_OPERATORS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV")
_QUANTIZED = ("INT8", "UINT8", "INT16")
_RECURRENT_OPERATORS = (
    "LSTM",
    "UNIDIRECTIONAL_SEQUENCE_LSTM",
    "BIDIRECTIONAL_SEQUENCE_LSTM",
    "SVDF",
    "RNN",
    "UNIDIRECTIONAL_SEQUENCE_RNN",
    "BIDIRECTIONAL_SEQUENCE_RNN",
)


def malloc_usable(nbytes: int) -> int:
    """glibc (64-bit): a request's usable size, chunk = max(32, round_up(n + 8, 16)), less 8."""
    if nbytes <= 0:
        return 0
    return max(32, (nbytes + 8 + 15) & ~15) - 8


def arena_block(high_water_mark: int) -> int:
    """ResizableAlignedBuffer on Linux: aligned_alloc(64, round_up(hwm + 63, 64)), as glibc
    hands it out (the alignment slack is split off and freed)."""
    if high_water_mark <= 0:
        return 0
    return malloc_usable(((high_water_mark + 63 + 63) // 64) * 64)


@dataclass(frozen=True, slots=True)
class HeapPart:
    """One part of the interpreter's heap, in bytes, and when it is taken."""

    name: str
    nbytes: int
    phase: str  # setup | first_invoke | transient (live during the first invoke only)
    exact: bool
    meaning: str


@dataclass(frozen=True, slots=True)
class InterpreterHeap:
    """Heap a LiteRT interpreter holds for a model under one delegate."""

    delegate: str  # xnnpack | none
    parts: tuple[HeapPart, ...]
    machine: str
    notes: tuple[str, ...] = ()

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
        return all(part.exact for part in self.parts)


def interpreter_heap(
    model: Model, arena_sizes: Sequence[int], *, delegate: str = DEFAULT_DELEGATE
) -> InterpreterHeap:
    """Model + each arena's high-water mark (arena and persistent arena per subgraph, in
    `rules.arenas` order) → the interpreter's heap under `delegate` (xnnpack or none)."""
    if delegate not in DELEGATES:
        raise ValueError(f"delegate must be one of {', '.join(DELEGATES)}, not {delegate!r}")
    tensors = sum(len(subgraph.tensors) for subgraph in model.subgraphs)
    operators = sum(len(subgraph.operators) for subgraph in model.subgraphs)
    arenas = sum(arena_block(size) for size in arena_sizes)
    parts = [
        HeapPart(
            "interpreter structures",
            INTERPRETER_FIXED_BYTES
            + PER_OPERATOR_BYTES * operators
            + PER_TENSOR_BYTES * tensors
            + sum(_quantization_bytes(t) for s in model.subgraphs for t in s.tensors),
            "setup",
            False,
            "op resolver, interpreter and Python wrapper; a TfLiteTensor per tensor, a node "
            "with its registration, arrays and options per operator, quantization parameters",
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
            PLANNER_FIXED_BYTES
            + PLANNER_PER_TENSOR_BYTES * tensors
            + PLANNER_PER_OPERATOR_BYTES * operators
            + sum(
                _requantization_bytes(s, op.inputs)
                for s in model.subgraphs
                for op in s.operators
                if op.opcode in _GEMM_OPERATORS
            ),
            "setup",
            False,
            "ArenaPlanner's per-tensor and per-node bookkeeping; per-channel requantization "
            "multipliers and shifts of quantized convolutions and matmuls",
        ),
    ]
    if delegate == "none":
        gemm = _gemm_backend_bytes(model)
        parts.append(
            HeapPart(
                "first-invoke kernel buffers",
                INVOKE_FIXED_BYTES + gemm,
                "first_invoke",
                False,
                "the GEMM back end's packed weight and activation blocks (ruy / gemmlowp "
                "context, kept), and the wrapper's input and output views",
            )
        )
        parts.append(
            HeapPart(
                "first-invoke transient",
                gemm + _largest_gemm_activation_bytes(model),
                "transient",
                False,
                "packing buffers a quantized or float GEMM takes during its call, and frees",
            )
        )
        return InterpreterHeap("none", tuple(parts), MEASURED_ON)
    packed, indirection = _xnnpack_weights_and_indirection(model)
    delegated = sum(1 for s in model.subgraphs for op in s.operators if _delegable(s, op.inputs))
    parts.extend(
        (
            HeapPart(
                "XNNPACK packed weights",
                packed,
                "setup",
                False,
                "weights and biases repacked per output-channel tile of the selected "
                "microkernel (the model's own copy stays in the file)",
            ),
            HeapPart(
                "XNNPACK indirection buffers",
                indirection,
                "setup",
                False,
                "one pointer per output pixel per kernel tap for spatial and depthwise "
                "convolutions",
            ),
            HeapPart(
                "XNNPACK workspace and runtime",
                XNNPACK_FIXED_BYTES + XNNPACK_PER_OPERATOR_BYTES * delegated + arenas,
                "setup",
                False,
                "XNNPACK's memory planner packs the delegated tensors into its workspace "
                "(counted here at the builtin arena's size, which it never exceeds); its "
                "subgraph, runtime and operator objects",
            ),
            HeapPart(
                "first-invoke buffers",
                INVOKE_FIXED_BYTES,
                "first_invoke",
                False,
                "the wrapper's input and output views",
            ),
            HeapPart(
                "first-invoke transient",
                XNNPACK_FIXED_BYTES + _largest_gemm_activation_bytes(model),
                "transient",
                False,
                "threadpool and per-call scratch XNNPACK takes during the first run",
            ),
        )
    )
    return InterpreterHeap(
        "xnnpack",
        tuple(parts),
        MEASURED_ON,
        notes=(
            "XNNPACK takes the operators it supports; the arena keeps only the tensors "
            "crossing between it and the builtin kernels",
        ),
    )


def _quantization_bytes(tensor: Tensor) -> int:
    """TfLiteAffineQuantization (24 B) + a float scale array and an int zero-point array of one
    element per channel (TfLiteFloatArray / TfLiteIntArray: 4 B count + 4 B per element)."""
    if tensor.quantization is None or tensor.quantization.scale is None:
        return 0
    channels = max(tensor.quantization.channel_count, 1)
    return malloc_usable(24) + 2 * malloc_usable(4 + 4 * channels)


def _requantization_bytes(subgraph: Subgraph, inputs: Sequence[int]) -> int:
    """Quantized conv / depthwise / FC: per-channel multiplier and shift vectors (int32 each)."""
    if len(inputs) < 2 or inputs[1] < 0:
        return 0
    weights = subgraph.tensors[inputs[1]]
    if weights.dtype.name not in _QUANTIZED or not weights.shape:
        return 0
    channels = max(weights.shape[0], weights.shape[-1])
    return 2 * malloc_usable(4 * channels)


def _gemm_backend_bytes(model: Model) -> int:
    """Quantized GEMMs go through ruy / gemmlowp, whose context keeps packed blocks sized for
    the largest call: packed weights (rows and depth padded to the kernel's tile) and packed
    activations, with their int32 sums. An upper bound: the largest weights + activations."""
    largest = 0
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode in _RECURRENT_OPERATORS:
                # Every gate's matmul packs its weights through the same context.
                weights_bytes = sum(
                    subgraph.tensors[i].nbytes
                    for i in operator.inputs
                    if i >= 0 and subgraph.tensors[i].has_data
                )
                largest = max(largest, 2 * weights_bytes + RUY_CONTEXT_BYTES)
                continue
            if operator.opcode not in _GEMM_OPERATORS or len(operator.inputs) < 2:
                continue
            weights = subgraph.tensors[operator.inputs[1]] if operator.inputs[1] >= 0 else None
            if weights is None or weights.dtype.name not in _QUANTIZED:
                continue
            # One byte per 8-bit element; rows padded to ruy's widest kernel tile; an int32
            # sum per packed row and column.
            columns = _im2col_elements(subgraph, operator.inputs, operator.outputs)
            padded = _padded_weights(weights, tile=RUY_TILE)
            sums = 4 * columns // max(_depth(weights), 1)
            largest = max(largest, padded + columns + sums + RUY_CONTEXT_BYTES)
    return largest


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


def _xnnpack_weights_and_indirection(model: Model) -> tuple[int, int]:
    packed = indirection = 0
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            if operator.opcode not in _GEMM_OPERATORS or len(operator.inputs) < 2:
                continue
            if operator.inputs[1] < 0 or not _delegable(subgraph, operator.inputs):
                continue
            weights = subgraph.tensors[operator.inputs[1]]
            packed += malloc_usable(_padded_weights(weights) + 64)
            if operator.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"):
                output = subgraph.tensors[operator.outputs[0]] if operator.outputs else None
                if output is None or len(output.shape) != 4 or len(weights.shape) != 4:
                    continue
                taps = weights.shape[1] * weights.shape[2]
                if taps == 1 and operator.opcode == "CONV_2D":
                    continue  # 1×1 convolutions run as GEMMs, no indirection
                pixels = output.shape[1] * output.shape[2]
                rows = -(-pixels // XNNPACK_ROW_TILE) * XNNPACK_ROW_TILE
                indirection += malloc_usable(rows * taps * POINTER_BYTES)
    return packed, indirection


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


def heap_document(heap: InterpreterHeap) -> dict[str, object]:
    """One delegate's heap as JSON (`plan --json`: interpreter_heap)."""
    return {
        "delegate": heap.delegate,
        "after_setup_bytes": heap.after_setup,
        "after_first_invoke_bytes": heap.after_first_invoke,
        "peak_bytes": heap.peak,
        "exact": heap.exact,
        "machine": heap.machine,
        "estimate": None
        if heap.exact
        else (
            "the interpreter's structures, kernel buffers and XNNPACK's parts are estimates "
            "that err high (measured never under on the wheel's machine); other ISAs pack to "
            "other tiles"
        ),
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
    }


def heap_documents(model: Model, arena_sizes: Sequence[int]) -> list[dict[str, object]]:
    """The heap under each delegate, XNNPACK (LiteRT's default) first, as JSON."""
    return [
        heap_document(interpreter_heap(model, arena_sizes, delegate=delegate))
        for delegate in DELEGATES
    ]
