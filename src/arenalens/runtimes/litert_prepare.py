"""LiteRT's graph after Prepare: flatbuffer model → tensors (bytes, type, allocation type) and
node temporaries, as the optimized builtin kernels leave them (no delegate, `num_threads` = 1).

What is modelled (docs/runtime-semantics.md §3.1, §3.2, §3.8, §3.9):

* **Build time** (*Subgraph::SetTensorParametersReadOnly / ReadWrite*): buffer data → MmapRo;
  string / resource / variant → Dynamic; `is_variable` → ArenaRwPersistent; else ArenaRw, with
  `bytes = product(shape) × element size` (sub-byte types packed).
* **Init-time tensors**: kernels that call `AddTensors` in Init (SVDF, LSTMs, RNNs, ADD_N, ...)
  reserve tensor indices right after the model's tensors, in operator order, before any Prepare.
* **Prepare**, in execution-plan order, through `KERNEL_RULES` — one row per builtin naming its
  kernel source file: temporaries added (indices in creation order) with their type, shape and
  allocation type; outputs made Dynamic when a shape-defining input is not constant; outputs made
  PersistentRo by constant folding; DEQUANTIZE / DENSIFY of constants made ArenaRwPersistent.
* **Chunks** (*Subgraph::PrepareOpsStartingAt*): Prepare stops after the first node with a
  Dynamic output (or an unknown RESHAPE shape); the planner's lifetimes (`planning_state`) see
  the tensors as they are at that moment; later chunks are planned at Invoke.
* **Control flow** (*if.cc, while.cc*): IF / STABLEHLO_COMPOSITE / STABLEHLO_CASE branches and
  the WHILE cond drop unused inputs; branch and body inputs become Custom; a WHILE pass-through
  nobody reads leaves the node; children are allocated inside the parent's Prepare.

Known limits (each reported in `PreparedSubgraph.notes` when a model hits it, where detectable):

* Output shapes are the flatbuffer `shape`; the runtime recomputes them in Prepare, which only
  differs for inconsistent files (`verify` then reports a "bytes" row). Shapes after a dynamic
  tensor are data-dependent at Invoke; later chunks are predicted from the flatbuffer shapes.
* Temporaries of these kernels are not modelled (their Init-time indices are still reserved):
  hybrid RNN / bidirectional sequence RNN and LSTM, GRU, DETECTION_POSTPROCESS, sparse (ledger)
  and 4-bit hybrid FULLY_CONNECTED, integer LSTM (8x8→8, verified only 8x8→16 via the corpus),
  RFFT2D, STABLEHLO kernels; custom ops are assumed to add none.
* Control-flow outputs made Dynamic by a child's dynamic or shape-changing outputs, and
  CALL_ONCE (allocated at Eval, then released), are not modelled.
* Kernel variants: optimized builtin kernels only (no reference kernels, no XNNPACK or other
  delegate, `num_threads` = 1, Linux x86-64).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from arenalens.analysis.lifetimes import LITERT_INPLACE_FLAGS
from arenalens.errors import ModelError
from arenalens.ir import DTYPES_BY_NAME, Model, Operator, Subgraph, Tensor, dtype_for_code
from arenalens.tflite.reader import read_quantization_scales


class Allocation(enum.StrEnum):
    """`TfLiteAllocationType` values a tensor can have after Prepare."""

    MEM_NONE = "none"  # runtime-added tensor a kernel never gave a type (never planned)
    MMAP_RO = "mmap_ro"  # constant: points into the model
    ARENA_RW = "arena_rw"  # planned in the subgraph's arena
    ARENA_RW_PERSISTENT = "arena_rw_persistent"  # planned in the persistent arena
    DYNAMIC = "dynamic"  # heap, sized at Eval
    PERSISTENT_RO = "persistent_ro"  # heap, computed in Prepare (constant folding)
    CUSTOM = "custom"  # control-flow child inputs: pointers copied in at Eval


class PrepareStatus(enum.Enum):
    """What a kernel's Prepare returned."""

    OK = "ok"
    OUTPUT_SHAPE_NOT_KNOWN = "output shape not known"  # kTfLiteOutputShapeNotKnown ends a chunk


@dataclass(frozen=True, slots=True)
class RuntimeTensor:
    """One tensor after Prepare; runtime-added tensors have indices past the model's."""

    index: int
    name: str
    dtype: str  # schema type name, or "NOTYPE" for runtime tensors a kernel never typed
    shape: tuple[int, ...] | None  # None when never resized
    nbytes: int
    allocation: Allocation
    is_variable: bool = False
    owner: int | None = None  # execution-plan position of the node that created it
    role: str = ""  # what a temporary holds ("im2col", "accumulator", ...)


@dataclass(frozen=True, slots=True)
class RuntimeNode:
    """One node of the execution plan after Prepare."""

    position: int  # execution-plan position (the planner's node index)
    operator: int  # flatbuffer operator index
    opcode: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    temporaries: tuple[int, ...]
    inplace_flags: int
    dynamic_output: bool  # Prepare ended its chunk here


@dataclass(frozen=True, slots=True)
class TensorState:
    """A tensor's bytes and allocation type at one moment (PlanAllocations sees the first)."""

    nbytes: int
    allocation: Allocation


@dataclass(frozen=True)
class PreparedSubgraph:
    """One subgraph as LiteRT's ArenaPlanner sees it."""

    index: int
    tensors: tuple[RuntimeTensor, ...]
    nodes: tuple[RuntimeNode, ...]
    inputs: tuple[int, ...]  # -1 for inputs removed by a control-flow parent
    outputs: tuple[int, ...]
    variables: tuple[int, ...]
    # (first, last) execution positions of each ExecuteAllocations call; allocate_tensors()
    # runs the first only, Invoke the rest.
    chunks: tuple[tuple[int, int], ...]
    planning_state: tuple[TensorState, ...]  # at PlanAllocations (after the first chunk)
    model_tensor_count: int
    allocated_by_allocate_tensors: bool  # subgraph 0 and children prepared by control flow
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# Mutable working state, used only while simulating Prepare.


@dataclass
class _WorkTensor:
    name: str
    dtype: str
    shape: tuple[int, ...] | None
    allocation: Allocation
    is_variable: bool = False
    has_sparsity: bool = False
    quantization_scales: int = 0
    owner: int | None = None
    role: str = ""
    nbytes_override: int | None = None  # RESHAPE with an unknown shape copies the input's bytes

    @property
    def nbytes(self) -> int:
        if self.nbytes_override is not None:
            return self.nbytes_override
        return bytes_required(self.dtype, self.shape)

    def state(self) -> TensorState:
        return TensorState(self.nbytes, self.allocation)


def bytes_required(dtype: str, shape: Sequence[int] | None) -> int:
    """*tflite/util.cc — BytesRequired*: elements × element size; int4/uint4/int2 packed."""
    if shape is None:
        return 0
    known = DTYPES_BY_NAME.get(dtype)
    if known is None or known.element_bytes is None:
        return 0
    count = 1
    for dim in shape:
        count *= max(dim, 0)
    if known.packed_bits is not None:
        return (count * known.packed_bits + 7) // 8
    return count * known.element_bytes


class NodeContext:
    """What one kernel's Init / Prepare sees: its node, the subgraph's tensors, helpers."""

    def __init__(
        self, graph: _WorkGraph, position: int, operator: Operator, op_data: dict[str, int]
    ) -> None:
        self.graph = graph
        self.position = position
        self.operator = operator
        self.options = operator.options
        self.inputs = list(operator.inputs)
        self.outputs = list(operator.outputs)
        self.op_data = op_data  # the kernel's OpData: survives between Init and Prepare
        self.temporaries: list[int] = []

    # Tensor access -------------------------------------------------------------------------
    def input(self, slot: int) -> _WorkTensor | None:
        """Input tensor at slot, or None when absent or omitted (-1)."""
        if slot >= len(self.inputs) or self.inputs[slot] < 0:
            return None
        return self.graph.tensors[self.inputs[slot]]

    def output(self, slot: int = 0) -> _WorkTensor | None:
        """Output tensor at slot, or None when absent."""
        if slot >= len(self.outputs) or self.outputs[slot] < 0:
            return None
        return self.graph.tensors[self.outputs[slot]]

    def is_constant(self, slot: int) -> bool:
        """*IsConstantTensor*: the input points into the model (MmapRo)."""
        tensor = self.input(slot)
        return tensor is not None and tensor.allocation == Allocation.MMAP_RO

    def is_constant_or_persistent(self, slot: int) -> bool:
        """*IsConstantOrPersistentTensor*: MmapRo, or PersistentRo from constant folding."""
        tensor = self.input(slot)
        return tensor is not None and tensor.allocation in (
            Allocation.MMAP_RO,
            Allocation.PERSISTENT_RO,
        )

    def dtype(self, slot: int) -> str:
        """Type name of an input ('' when absent)."""
        tensor = self.input(slot)
        return tensor.dtype if tensor is not None else ""

    def dims(self, slot: int) -> tuple[int, ...]:
        """Shape of an input (() when absent or unset)."""
        tensor = self.input(slot)
        return tensor.shape or () if tensor is not None else ()

    # Tensor creation and changes ------------------------------------------------------------
    def add_tensors(self, count: int) -> int:
        """`context->AddTensors`: count new untyped tensors; returns the first index."""
        return self.graph.add_tensors(count)

    def reserve(self, key: str, count: int) -> int:
        """Add tensors once per node (kernels keep the first index in OpData)."""
        if key not in self.op_data:
            self.op_data[key] = self.add_tensors(count)
        return self.op_data[key]

    def set_temporary(
        self,
        slot: int,
        tensor_index: int,
        *,
        dtype: str,
        shape: Sequence[int] | None,
        allocation: Allocation,
        role: str,
    ) -> None:
        """Put tensor_index into temporaries[slot] with a type, shape and allocation type."""
        while len(self.temporaries) <= slot:
            self.temporaries.append(-1)
        self.temporaries[slot] = tensor_index
        tensor = self.graph.tensors[tensor_index]
        tensor.dtype = dtype
        tensor.allocation = allocation
        if shape is not None:
            tensor.shape = tuple(int(d) for d in shape)
        tensor.owner = self.position
        tensor.role = role

    def set_dynamic_output(self, slot: int = 0) -> None:
        """*SetTensorToDynamic* on an output."""
        tensor = self.output(slot)
        if tensor is not None:
            tensor.allocation = Allocation.DYNAMIC

    def set_persistent_ro_output(self, slot: int = 0) -> None:
        """*SetTensorToPersistentRo* on an output (constant folding in Prepare)."""
        tensor = self.output(slot)
        if tensor is not None:
            tensor.allocation = Allocation.PERSISTENT_RO


PrepareFunction = Callable[[NodeContext], PrepareStatus | None]


@dataclass(frozen=True)
class KernelRule:
    """How one builtin's optimized kernel changes the graph in Init and Prepare."""

    source: str  # kernel source file, relative to the LiteRT root
    temporaries: str = "none"  # what it adds, for documentation and reports
    init_tensors: int = 0  # tensors AddTensors'd in Init (index bookkeeping)
    prepare: PrepareFunction | None = None
    # Inputs that must be constant (or PersistentRo) for a static output; otherwise the
    # outputs become Dynamic.
    shape_inputs: tuple[int, ...] = ()
    # Inputs that, when all constant-or-persistent, make output 0 PersistentRo; `()` with
    # `always_folds` means unconditionally.
    folding_inputs: tuple[int, ...] = ()
    always_folds: bool = False
    always_dynamic: bool = False
    verified: bool = False  # checked against the real interpreter on a shared/test model
    modelled: bool = True  # False: Prepare-time temporaries unknown to arenalens (noted per node)


# ---------------------------------------------------------------------------------------------
# Kernel rules. Each function mirrors the named kernel's Prepare for num_threads = 1.


def _is_hybrid(ctx: NodeContext, data_slot: int, weights_slot: int) -> bool:
    """*IsHybridOp*: float activations with 8-bit (or narrower) weights."""
    return ctx.dtype(data_slot) == "FLOAT32" and ctx.dtype(weights_slot) in (
        "INT8",
        "UINT8",
        "INT4",
        "INT2",
    )


def _conv_2d(ctx: NodeContext) -> None:
    """*conv.cc — Prepare, AllocateTemporaryTensorsIfRequired* (kGenericOptimized / multithread
    kernel with one thread: im2col whenever the kernel is not a plain 1×1, stride-1 conv)."""
    filter_shape = ctx.dims(1)
    output = ctx.output()
    input_type = ctx.dtype(0)
    filter_type = ctx.dtype(1)
    if len(filter_shape) != 4 or output is None or not output.shape:
        return
    stride = (ctx.options.get("stride_h", 1), ctx.options.get("stride_w", 1))
    dilation = (ctx.options.get("dilation_hfactor", 1), ctx.options.get("dilation_wfactor", 1))
    hybrid = input_type == "FLOAT32" and filter_type in ("INT8", "UINT8", "INT4")
    per_channel = hybrid and filter_type in ("INT8", "INT4") and _has_distinct_scales(ctx, 1)
    needs_im2col = dilation != (1, 1) or stride != (1, 1) or filter_shape[1:3] != (1, 1)
    slot = 0
    batches, out_height, out_width = ctx.dims(0)[0], output.shape[1], output.shape[2]
    if needs_im2col:
        index = ctx.reserve("im2col", 1)
        im2col_type = ("INT8" if filter_type == "INT4" else filter_type) if hybrid else input_type
        depth = filter_shape[1] * filter_shape[2] * filter_shape[3]
        ctx.set_temporary(
            slot,
            index,
            dtype=im2col_type,
            shape=(batches, out_height, out_width, depth),
            allocation=Allocation.ARENA_RW,
            role="im2col",
        )
        slot += 1
    if not hybrid:
        return
    input_shape = ctx.dims(0)
    channels_out = filter_shape[0]
    groups = input_shape[3] // filter_shape[3] if filter_shape[3] else 1
    input_rows = input_shape[0] * input_shape[1] * input_shape[2] * groups
    roles: list[tuple[str, str, tuple[int, ...], Allocation]] = [
        ("input_quantized", "INT8", input_shape, Allocation.ARENA_RW),
        ("scaling_factors", "FLOAT32", (input_rows,), Allocation.ARENA_RW),
        (
            "accumulator",
            "INT32",
            (channels_out, batches * out_height * out_width),
            Allocation.ARENA_RW,
        ),
    ]
    if per_channel:
        roles.append(("input_offsets", "INT32", (input_rows,), Allocation.ARENA_RW))
        roles.append(("row_sums", "INT32", (channels_out,), Allocation.ARENA_RW_PERSISTENT))
    for role, dtype, shape, allocation in roles:
        index = ctx.reserve(role, 1)
        ctx.set_temporary(slot, index, dtype=dtype, shape=shape, allocation=allocation, role=role)
        slot += 1


def _has_distinct_scales(ctx: NodeContext, slot: int) -> bool:
    """True when the input's per-channel quantization scales are not all equal."""
    tensor = ctx.input(slot)
    if tensor is None or tensor.quantization_scales <= 1:
        return False
    scales = ctx.graph.scales(ctx.inputs[slot])
    return len(set(scales)) > 1


def _depthwise_conv_2d(ctx: NodeContext) -> None:
    """*depthwise_conv.cc — Prepare*: hybrid (float input, int8 filter) adds three temporaries."""
    if not (ctx.dtype(0) == "FLOAT32" and ctx.dtype(1) == "INT8"):
        return
    input_shape = ctx.dims(0)
    batch = input_shape[0] if input_shape else 1
    roles = (
        ("input_quantized", "INT8", input_shape, Allocation.ARENA_RW),
        ("scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("input_offsets", "INT32", (batch,), Allocation.ARENA_RW),
    )
    for slot, (role, dtype, shape, allocation) in enumerate(roles):
        index = ctx.reserve(role, 1)
        ctx.set_temporary(slot, index, dtype=dtype, shape=shape, allocation=allocation, role=role)


def _fully_connected(ctx: NodeContext) -> None:
    """*fully_connected.cc — Prepare, PrepareImpl*: six tensors are always added (typeless and
    unused unless hybrid); hybrid uses five: quantized input, scaling factors, accumulator,
    input offsets and row sums (persistent)."""
    first = ctx.reserve("scratch", 6)
    if not _is_hybrid(ctx, 0, 1):
        return
    filter_shape = ctx.dims(1)
    input_shape = ctx.dims(0)
    if len(filter_shape) != 2 or filter_shape[1] == 0:
        return
    tensor = ctx.input(1)
    if tensor is not None and (tensor.has_sparsity or tensor.dtype == "INT4"):
        ctx.graph.note(
            f"node {ctx.position} FULLY_CONNECTED: sparse / 4-bit hybrid temporaries "
            f"are modelled as the dense kernel's"
        )
    elements = 1
    for dim in input_shape:
        elements *= dim
    batch = elements // filter_shape[1]
    units = filter_shape[0]
    roles = (
        ("input_quantized", "INT8", input_shape, Allocation.ARENA_RW),
        ("scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("accumulator", "INT32", (units, batch), Allocation.ARENA_RW),
        ("input_offsets", "INT32", (batch,), Allocation.ARENA_RW),
        ("row_sums", "INT32", (units,), Allocation.ARENA_RW_PERSISTENT),
    )
    for slot, (role, dtype, shape, allocation) in enumerate(roles):
        ctx.set_temporary(
            slot, first + slot, dtype=dtype, shape=shape, allocation=allocation, role=role
        )


def _reduce(ctx: NodeContext, *, mean_or_sum: bool) -> None:
    """*reduce.cc — PrepareSimple (+ PrepareMeanOrSum)*: index `[rank]`, resolved axes
    `[num_axes]`, accumulator `[output elements]` (MEAN/SUM only; Dynamic otherwise) and
    normalized dims (Dynamic unless the input is constant)."""
    first = ctx.reserve("scratch", 4)
    input_shape = ctx.dims(0)
    axis_shape = ctx.dims(1)
    axis_count = 1
    for dim in axis_shape:
        axis_count *= dim
    ctx.set_temporary(
        0,
        first,
        dtype="INT32",
        shape=(len(input_shape),),
        allocation=Allocation.ARENA_RW,
        role="index",
    )
    constant_axis = ctx.is_constant_or_persistent(1)
    ctx.set_temporary(
        1,
        first + 1,
        dtype="INT32",
        shape=(axis_count,) if constant_axis else None,
        allocation=Allocation.ARENA_RW if constant_axis else Allocation.DYNAMIC,
        role="resolved_axis",
    )
    accumulator_type = {
        "FLOAT32": "FLOAT32",
        "INT32": "INT64",
        "INT64": "INT64",
        "UINT8": "INT32",
        "INT8": "INT32",
        "INT16": "INT32",
        "BOOL": "BOOL",
    }.get(ctx.dtype(0), "INT32")
    output = ctx.output()
    output_elements = 1
    for dim in (output.shape or ()) if output is not None else ():
        output_elements *= dim
    sized_accumulator = mean_or_sum and constant_axis
    ctx.set_temporary(
        2,
        first + 2,
        dtype=accumulator_type,
        shape=(output_elements,) if sized_accumulator else None,
        allocation=Allocation.ARENA_RW if sized_accumulator else Allocation.MEM_NONE,
        role="accumulator",
    )
    constant_input = ctx.is_constant_or_persistent(0)
    ctx.set_temporary(
        3,
        first + 3,
        dtype="INT32",
        shape=(len(input_shape),) if constant_input else None,
        allocation=Allocation.ARENA_RW if constant_input else Allocation.DYNAMIC,
        role="normalized_dims",
    )
    if not constant_axis:
        ctx.set_dynamic_output()


def _unidirectional_sequence_lstm(ctx: NodeContext) -> None:
    """*unidirectional_sequence_lstm.cc — Prepare*: float: scratch `[B, 4·cell + 16]` (CIFG)
    or `[B, 5·cell + 16]`; integer (8x8→16): six `[B, cell]` scratches (int16 ×4, int8,
    int32); hybrid: twelve (persistent row sums)."""
    _lstm_like(ctx, sequence=True)


def _lstm(ctx: NodeContext) -> None:
    """*lstm.cc — Prepare* (full kernel): as the sequence LSTM, without the +16, and with an
    8-scratch variant for 8x8→8 integer models."""
    if len(ctx.inputs) <= 5:  # the basic (4-input) kernel: no temporaries
        return
    _lstm_like(ctx, sequence=False)


def _lstm_like(ctx: NodeContext, *, sequence: bool) -> None:
    first = ctx.op_data["scratch"]
    input_shape = ctx.dims(0)
    input_type = ctx.dtype(0)
    if len(input_shape) < 2:
        return
    if sequence:
        time_major = bool(ctx.options.get("time_major", False))
        batch = input_shape[1] if time_major else input_shape[0]
    else:
        batch = input_shape[0]
    cell = ctx.dims(4)[0] if ctx.dims(4) else 0  # input_to_output_weights: [cell, input]
    recurrent = ctx.dims(8)  # recurrent_to_output_weights: [cell, output] or diagonal [cell]
    output_size = recurrent[0] if len(recurrent) == 1 else (recurrent[1] if recurrent else 0)
    cifg = len(ctx.inputs) <= 1 or ctx.input(1) is None
    integer = input_type == "INT8"
    hybrid = _is_hybrid(ctx, 0, 4)
    extra = 16 if sequence else 0
    if integer:
        eight_bit = len(ctx.operator.intermediates) != 5 and not sequence
        if eight_bit:
            types: tuple[str, ...] = (
                "INT8",
                "INT8",
                "INT16",
                "INT16",
                "INT16",
                "INT16",
                "INT16",
                "INT16",
            )
        else:
            types = ("INT16", "INT16", "INT16", "INT16", "INT8", "INT32")
        for slot, dtype in enumerate(types):
            ctx.set_temporary(
                slot,
                first + slot,
                dtype=dtype,
                shape=(batch, cell),
                allocation=Allocation.ARENA_RW,
                role=f"scratch{slot}",
            )
        return
    width = cell * (4 if cifg else 5) + extra
    ctx.set_temporary(
        0,
        first,
        dtype=input_type,
        shape=(batch, width),
        allocation=Allocation.ARENA_RW,
        role="scratch",
    )
    if not hybrid:
        return
    weights_type = ctx.dtype(4)
    output_state = ctx.dims(18)
    cell_state = ctx.dims(19)
    row_sum_rows = 6 if cifg else 8
    if ctx.input(16) is not None and cell:  # projection weights
        row_sum_rows += -(-output_size // cell)
    roles: tuple[tuple[str, str, tuple[int, ...], Allocation], ...] = (
        ("input_quantized", weights_type, input_shape, Allocation.ARENA_RW),
        ("output_state_quantized", weights_type, output_state, Allocation.ARENA_RW),
        ("cell_state_quantized", weights_type, cell_state, Allocation.ARENA_RW),
        ("input_scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("output_state_scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("product_scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("recovered_cell_weights", "FLOAT32", (cell,), Allocation.ARENA_RW),
        ("accumulator", "INT32", (cell, batch), Allocation.ARENA_RW),
        ("input_zero_points", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("output_state_zero_points", "FLOAT32", (batch,), Allocation.ARENA_RW),
        ("row_sums", "INT32", (row_sum_rows, cell), Allocation.ARENA_RW_PERSISTENT),
    )
    for offset, (role, dtype, shape, allocation) in enumerate(roles, start=1):
        ctx.set_temporary(
            offset, first + offset, dtype=dtype, shape=shape, allocation=allocation, role=role
        )


def _svdf(ctx: NodeContext) -> None:
    """*svdf.cc — Prepare*: scratch `[B, filters]` (int32 if full-integer, else float);
    full-integer adds output_temp `[units, B]` int32; hybrid adds five more."""
    first = ctx.op_data["scratch"]
    input_shape = ctx.dims(0)
    feature_shape = ctx.dims(1)
    time_shape = ctx.dims(2)
    if not input_shape or not feature_shape:
        return
    batch, filters = input_shape[0], feature_shape[0]
    rank = int(ctx.options.get("rank", 1) or 1)
    units = filters // rank
    full_integer = ctx.dtype(0) == "INT8"
    hybrid = _is_hybrid(ctx, 0, 1)
    ctx.set_temporary(
        0,
        first,
        dtype="INT32" if full_integer else "FLOAT32",
        shape=(batch, filters),
        allocation=Allocation.ARENA_RW,
        role="scratch",
    )
    if hybrid:
        roles = (
            ("input_quantized", ctx.dtype(1), input_shape, Allocation.ARENA_RW),
            ("scaling_factors", "FLOAT32", (batch,), Allocation.ARENA_RW),
            ("float_weights_time", "FLOAT32", time_shape, Allocation.ARENA_RW_PERSISTENT),
            ("zero_points", "FLOAT32", (batch,), Allocation.ARENA_RW),
            ("row_sums", "FLOAT32", (filters,), Allocation.ARENA_RW_PERSISTENT),
        )
        for slot, (role, dtype, shape, allocation) in enumerate(roles, start=1):
            ctx.set_temporary(
                slot, first + slot, dtype=dtype, shape=shape, allocation=allocation, role=role
            )
    if full_integer:
        ctx.set_temporary(
            1,
            first + 1,
            dtype="INT32",
            shape=(units, batch),
            allocation=Allocation.ARENA_RW,
            role="output_temp",
        )


def _transpose_conv(ctx: NodeContext) -> None:
    """*transpose_conv.cc — Prepare, AllocateTemporaryTensorsIfRequired*: col2im, transposed
    weights and (quantized inputs) the int32/int64 scratch are all Dynamic (heap); hybrid adds
    three arena temporaries. A non-constant output shape makes the output Dynamic too."""
    input_type = ctx.dtype(2)
    weights_type = ctx.dtype(1)
    output = ctx.output()
    slot = 0
    col2im = ctx.reserve("col2im", 1)
    constant_shape = ctx.is_constant_or_persistent(0)
    input_shape = ctx.dims(2)
    weights_shape = ctx.dims(1)
    if constant_shape and len(input_shape) == 4 and len(weights_shape) == 4:
        rows = input_shape[1] * input_shape[2]
        columns = weights_shape[0] * weights_shape[1] * weights_shape[2]
        ctx.set_temporary(
            slot,
            col2im,
            dtype="FLOAT32" if input_type == "FLOAT32" else "INT32",
            shape=(rows, columns),
            allocation=Allocation.DYNAMIC,
            role="col2im",
        )
    else:
        ctx.set_temporary(
            slot, col2im, dtype="NOTYPE", shape=None, allocation=Allocation.DYNAMIC, role="col2im"
        )
    slot += 1
    transposed = ctx.reserve("transposed_weights", 1)
    if len(weights_shape) == 4:
        shape: tuple[int, ...] = (
            weights_shape[1],
            weights_shape[2],
            weights_shape[0],
            weights_shape[3],
        )
        ctx.set_temporary(
            slot,
            transposed,
            dtype=weights_type,
            shape=shape,
            allocation=Allocation.DYNAMIC,
            role="transposed_weights",
        )
    slot += 1
    if input_type in ("UINT8", "INT8", "INT16"):
        # Always Dynamic (heap), sized like the output when the output shape is constant.
        scratch = ctx.reserve("scratch", 1)
        bias_type = _tensor_type_name(ctx.options.get("quantized_bias_type", 0))
        scratch_type = bias_type or ("INT64" if input_type == "INT16" else "INT32")
        shape_known = constant_shape and output is not None and output.shape
        ctx.set_temporary(
            slot,
            scratch,
            dtype=scratch_type,
            shape=output.shape if shape_known and output is not None else None,
            allocation=Allocation.DYNAMIC,
            role="scratch",
        )
        slot += 1
    if input_type == "FLOAT32" and weights_type == "INT8":
        elements = 1
        for dim in input_shape:
            elements *= dim
        rows = elements // weights_shape[3] if len(weights_shape) == 4 and weights_shape[3] else 0
        for role, dtype, shape_ in (
            ("input_quantized", "INT8", input_shape),
            ("scaling_factors", "FLOAT32", (rows,)),
            ("input_offsets", "INT32", (rows,)),
        ):
            index = ctx.reserve(role, 1)
            ctx.set_temporary(
                slot, index, dtype=dtype, shape=shape_, allocation=Allocation.ARENA_RW, role=role
            )
            slot += 1
    if not constant_shape:
        ctx.set_dynamic_output()


def _tensor_type_name(code: object) -> str:
    """Schema TensorType code → name; '' for 0 (FLOAT32 there means "not set")."""
    if not isinstance(code, int) or code == 0:
        return ""
    return dtype_for_code(code).name


def _batch_matmul(ctx: NodeContext) -> None:
    """*batch_matmul.cc — Prepare, InitializeTemporaries*: transposed LHS (arena) and RHS
    (persistent when constant) scratch; hybrid (float × int8) adds five."""
    first = ctx.reserve("scratch", 7)
    lhs, rhs = ctx.dims(0), ctx.dims(1)
    if len(lhs) < 2 or len(rhs) < 2:
        return
    adj_x = bool(ctx.options.get("adj_x", False))
    adj_y = bool(ctx.options.get("adj_y", False))
    lhs_t = (*lhs[:-2], lhs[-1], lhs[-2])
    rhs_t = (*rhs[:-2], rhs[-1], rhs[-2])
    ctx.set_temporary(
        0,
        first,
        dtype=ctx.dtype(0),
        shape=lhs_t,
        allocation=Allocation.ARENA_RW,
        role="lhs_transposed",
    )
    rhs_allocation = Allocation.ARENA_RW_PERSISTENT if ctx.is_constant(1) else Allocation.ARENA_RW
    ctx.set_temporary(
        1,
        first + 1,
        dtype=ctx.dtype(1),
        shape=rhs_t,
        allocation=rhs_allocation,
        role="rhs_transposed",
    )
    if not (ctx.dtype(0) == "FLOAT32" and ctx.dtype(1) == "INT8"):
        return
    batch_size = lhs[-1] if adj_x else lhs[-2]
    units = rhs[-2] if adj_y else rhs[-1]
    batches = 1
    for dim in lhs[:-2]:
        batches *= dim
    matrices = 1
    for dim in rhs[:-2]:
        matrices *= dim
    roles = (
        ("input_quantized", ctx.dtype(1), lhs, Allocation.ARENA_RW),
        ("scaling_factors", "FLOAT32", (batches * batch_size,), Allocation.ARENA_RW),
        ("accumulator", "INT32", (units, batch_size), Allocation.ARENA_RW),
        ("input_offsets", "INT32", (batches * batch_size,), Allocation.ARENA_RW),
        ("row_sums", "INT32", (matrices * units,), Allocation.ARENA_RW_PERSISTENT),
    )
    for slot, (role, dtype, shape, allocation) in enumerate(roles, start=2):
        ctx.set_temporary(
            slot, first + slot, dtype=dtype, shape=shape, allocation=allocation, role=role
        )


def _conv_3d(ctx: NodeContext) -> None:
    """*conv3d.cc — Prepare*: im2col `[N, od, oh, ow, Cin·kd·kh·kw]` unless a plain 1×1×1,
    stride-1, undilated conv."""
    filter_shape = ctx.dims(1)  # [kd, kh, kw, Cin, Cout]
    output = ctx.output()
    if len(filter_shape) != 5 or output is None or not output.shape or len(output.shape) != 5:
        return
    options = ctx.options
    strides = (options.get("stride_d", 1), options.get("stride_h", 1), options.get("stride_w", 1))
    dilations = (
        options.get("dilation_dfactor", 1),
        options.get("dilation_hfactor", 1),
        options.get("dilation_wfactor", 1),
    )
    if strides == (1, 1, 1) and dilations == (1, 1, 1) and filter_shape[:3] == (1, 1, 1):
        return
    index = ctx.reserve("im2col", 1)
    depth = filter_shape[0] * filter_shape[1] * filter_shape[2] * filter_shape[3]
    shape = (*output.shape[:4], depth)
    ctx.set_temporary(
        0, index, dtype=ctx.dtype(0), shape=shape, allocation=Allocation.ARENA_RW, role="im2col"
    )


def _add_n(ctx: NodeContext) -> None:
    """*add_n.cc — Prepare*: scratch `[threads · elements]` of the input type (one thread)."""
    first = ctx.op_data["scratch"]
    elements = 1
    for dim in ctx.dims(0):
        elements *= dim
    ctx.set_temporary(
        0,
        first,
        dtype=ctx.dtype(0),
        shape=(elements,),
        allocation=Allocation.ARENA_RW,
        role="scratch",
    )


def _dequantize(ctx: NodeContext) -> None:
    """*dequantize.cc — Prepare*: a constant input is dequantized once into a persistent output."""
    output = ctx.output()
    if output is not None and ctx.is_constant(0):
        output.allocation = Allocation.ARENA_RW_PERSISTENT


def _densify(ctx: NodeContext) -> None:
    """*densify.cc — Prepare*: the output always lives in the persistent arena."""
    output = ctx.output()
    if output is not None:
        output.allocation = Allocation.ARENA_RW_PERSISTENT


def _reshape(ctx: NodeContext) -> PrepareStatus:
    """*reshape.cc — Prepare*: constant input → PersistentRo output; a non-constant shape
    tensor → kTfLiteOutputShapeNotKnown (the chunk ends; the output keeps the input's bytes)."""
    output = ctx.output()
    source = ctx.input(0)
    if output is None or source is None or output.dtype == "STRING":
        return PrepareStatus.OK
    shape_tensor = ctx.input(1)
    shape_is_vector = (
        shape_tensor is not None
        and shape_tensor.shape is not None
        and len(shape_tensor.shape) == 1
        and shape_tensor.dtype == "INT32"
    )
    if len(ctx.inputs) == 2 and shape_is_vector and not ctx.is_constant_or_persistent(1):
        if output.allocation == Allocation.ARENA_RW:
            output.nbytes_override = source.nbytes
        return PrepareStatus.OUTPUT_SHAPE_NOT_KNOWN
    if ctx.is_constant_or_persistent(0):
        ctx.set_persistent_ro_output()
    return PrepareStatus.OK


def _reduce_simple(ctx: NodeContext) -> None:
    _reduce(ctx, mean_or_sum=False)


def _reduce_mean_or_sum(ctx: NodeContext) -> None:
    _reduce(ctx, mean_or_sum=True)


def _reduce_prod(ctx: NodeContext) -> None:
    """*reduce.cc — PrepareProd*: as the simple reductions; folds constants of ≤ 8 outputs."""
    _reduce(ctx, mean_or_sum=False)
    output = ctx.output()
    if output is None:
        return
    if ctx.is_constant_or_persistent(0) and ctx.is_constant_or_persistent(1):
        elements = 1
        for dim in output.shape or ():
            elements *= dim
        if elements <= 8:
            ctx.set_persistent_ro_output()


_CONTROL_FLOW_CHILD_INPUTS_CUSTOM = ("IF", "STABLEHLO_COMPOSITE", "STABLEHLO_CASE")

_REDUCE_SOURCE = "tflite/kernels/reduce.cc"
_REDUCE_TEMPS = "index [rank], resolved axes [axes], accumulator, normalized dims (4 tensors)"

# One row per builtin whose optimized kernel changes memory planning. Builtins not listed keep
# their flatbuffer shapes and types, add no temporaries and never make outputs Dynamic.
KERNEL_RULES: Mapping[str, KernelRule] = MappingProxyType(
    {
        "CONV_2D": KernelRule(
            "tflite/kernels/conv.cc",
            "im2col [N,oh,ow,kh·kw·Cin] unless 1×1/stride 1/undilated; hybrid: quantized input, "
            "scaling factors, int32 accumulator [Cout, N·oh·ow], per-channel: input offsets, "
            "row sums (persistent)",
            prepare=_conv_2d,
            verified=True,
        ),
        "DEPTHWISE_CONV_2D": KernelRule(
            "tflite/kernels/depthwise_conv.cc",
            "hybrid only: quantized input, scaling factors [N], input offsets [N]",
            prepare=_depthwise_conv_2d,
            verified=True,
        ),
        "FULLY_CONNECTED": KernelRule(
            "tflite/kernels/fully_connected.cc",
            "6 tensors added in Prepare (typeless unless hybrid); hybrid: quantized input, "
            "scaling factors [B], accumulator [units, B], input offsets [B], row sums (persistent)",
            prepare=_fully_connected,
            verified=True,
        ),
        "MEAN": KernelRule(
            _REDUCE_SOURCE, _REDUCE_TEMPS, prepare=_reduce_mean_or_sum, verified=True
        ),
        "SUM": KernelRule(
            _REDUCE_SOURCE, _REDUCE_TEMPS, prepare=_reduce_mean_or_sum, verified=True
        ),
        "REDUCE_MAX": KernelRule(
            _REDUCE_SOURCE, _REDUCE_TEMPS, prepare=_reduce_simple, verified=True
        ),
        "REDUCE_MIN": KernelRule(_REDUCE_SOURCE, _REDUCE_TEMPS, prepare=_reduce_simple),
        "REDUCE_ANY": KernelRule(_REDUCE_SOURCE, _REDUCE_TEMPS, prepare=_reduce_simple),
        "REDUCE_ALL": KernelRule(_REDUCE_SOURCE, _REDUCE_TEMPS, prepare=_reduce_simple),
        "REDUCE_PROD": KernelRule(_REDUCE_SOURCE, _REDUCE_TEMPS, prepare=_reduce_prod),
        "UNIDIRECTIONAL_SEQUENCE_LSTM": KernelRule(
            "tflite/kernels/unidirectional_sequence_lstm.cc",
            "float: scratch [B, 4|5·cell + 16]; integer: 6 × [B, cell]; hybrid: 12",
            init_tensors=12,
            prepare=_unidirectional_sequence_lstm,
            verified=True,
        ),
        "LSTM": KernelRule(
            "tflite/kernels/lstm.cc",
            "float: scratch [B, 4|5·cell]; integer: 6 or 8 × [B, cell]; hybrid: 12 (+9 ledgers)",
            init_tensors=12 + 9,
            prepare=_lstm,
            verified=True,
        ),
        "SVDF": KernelRule(
            "tflite/kernels/svdf.cc",
            "scratch [B, filters]; full-integer: + output_temp [units, B]; hybrid: + 5",
            init_tensors=6,
            prepare=_svdf,
            verified=True,
        ),
        "TRANSPOSE_CONV": KernelRule(
            "tflite/kernels/transpose_conv.cc",
            "col2im (Dynamic), transposed weights (Dynamic), quantized: scratch [output] "
            "int32/int64; hybrid: + 3",
            prepare=_transpose_conv,
            verified=True,
        ),
        "BATCH_MATMUL": KernelRule(
            "tflite/kernels/batch_matmul.cc",
            "transposed LHS, transposed RHS (persistent if constant); hybrid: + 5",
            prepare=_batch_matmul,
            verified=True,
        ),
        "CONV_3D": KernelRule(
            "tflite/kernels/conv3d.cc",
            "im2col [N,od,oh,ow,kd·kh·kw·Cin] unless 1×1×1/stride 1/undilated",
            prepare=_conv_3d,
            verified=True,
        ),
        "ADD_N": KernelRule(
            "tflite/kernels/add_n.cc",
            "scratch [elements]",
            init_tensors=1,
            prepare=_add_n,
            verified=True,
        ),
        "DEQUANTIZE": KernelRule(
            "tflite/kernels/dequantize.cc",
            "constant input → output in the persistent arena",
            prepare=_dequantize,
            verified=True,
        ),
        "DENSIFY": KernelRule(
            "tflite/kernels/densify.cc", "output in the persistent arena", prepare=_densify
        ),
        "RESHAPE": KernelRule(
            "tflite/kernels/reshape.cc",
            "constant input → PersistentRo; unknown shape ends the chunk",
            prepare=_reshape,
            verified=True,
        ),
        # Init-time tensors whose Prepare-time use is not modelled (hybrid / sparse paths).
        "RNN": KernelRule(
            "tflite/kernels/basic_rnn.cc",
            "hybrid: 6 (not modelled)",
            init_tensors=6,
            modelled=False,
        ),
        "UNIDIRECTIONAL_SEQUENCE_RNN": KernelRule(
            "tflite/kernels/unidirectional_sequence_rnn.cc",
            "hybrid: 6 (not modelled)",
            init_tensors=6,
            modelled=False,
        ),
        "BIDIRECTIONAL_SEQUENCE_RNN": KernelRule(
            "tflite/kernels/bidirectional_sequence_rnn.cc",
            "hybrid: 9 (not modelled)",
            init_tensors=9,
            modelled=False,
        ),
        "BIDIRECTIONAL_SEQUENCE_LSTM": KernelRule(
            "tflite/kernels/bidirectional_sequence_lstm.cc",
            "19 (not modelled)",
            init_tensors=19,
            modelled=False,
        ),
        "CUSTOM:TFLite_Detection_PostProcess": KernelRule(
            "tflite/kernels/detection_postprocess.cc",
            "2 (not modelled)",
            init_tensors=2,
            modelled=False,
        ),
        # Outputs that become Dynamic when a shape-defining input is not constant.
        "ARG_MAX": KernelRule("tflite/kernels/arg_min_max.cc", shape_inputs=(1,)),
        "ARG_MIN": KernelRule("tflite/kernels/arg_min_max.cc", shape_inputs=(1,)),
        "BATCH_TO_SPACE_ND": KernelRule("tflite/kernels/batch_to_space_nd.cc", shape_inputs=(1, 2)),
        "SPACE_TO_BATCH_ND": KernelRule("tflite/kernels/space_to_batch_nd.cc", shape_inputs=(1, 2)),
        "BROADCAST_TO": KernelRule(
            "tflite/kernels/broadcast_to.cc", shape_inputs=(1,), verified=True
        ),
        "EXPAND_DIMS": KernelRule(
            "tflite/kernels/expand_dims.cc", shape_inputs=(1,), verified=True
        ),
        "FILL": KernelRule("tflite/kernels/fill.cc", shape_inputs=(0,)),
        "MIRROR_PAD": KernelRule("tflite/kernels/mirror_pad.cc", shape_inputs=(1,)),
        "ONE_HOT": KernelRule("tflite/kernels/one_hot.cc", shape_inputs=(1,)),
        "PAD": KernelRule("tflite/kernels/pad.cc", shape_inputs=(1,), verified=True),
        "PADV2": KernelRule("tflite/kernels/pad.cc", shape_inputs=(1,)),
        "RESIZE_BILINEAR": KernelRule(
            "tflite/kernels/resize_bilinear.cc", shape_inputs=(1,), verified=True
        ),
        "RESIZE_NEAREST_NEIGHBOR": KernelRule(
            "tflite/kernels/resize_nearest_neighbor.cc", shape_inputs=(1,)
        ),
        "SCATTER_ND": KernelRule("tflite/kernels/scatter_nd.cc", shape_inputs=(2,)),
        "SEGMENT_SUM": KernelRule("tflite/kernels/segment_sum.cc", shape_inputs=(0, 1)),
        "SLICE": KernelRule("tflite/kernels/slice.cc", shape_inputs=(1, 2), verified=True),
        "SPARSE_TO_DENSE": KernelRule("tflite/kernels/sparse_to_dense.cc", shape_inputs=(1,)),
        "SPLIT": KernelRule("tflite/kernels/split.cc", shape_inputs=(0,), verified=True),
        "SPLIT_V": KernelRule("tflite/kernels/split_v.cc", shape_inputs=(1, 2), verified=True),
        "TOPK_V2": KernelRule("tflite/kernels/topk_v2.cc", shape_inputs=(1,)),
        "TRANSPOSE": KernelRule("tflite/kernels/transpose.cc", shape_inputs=(1,), verified=True),
        "UNSORTED_SEGMENT_SUM": KernelRule(
            "tflite/kernels/unsorted_segment.cc", shape_inputs=(1, 2)
        ),
        "UNSORTED_SEGMENT_MAX": KernelRule(
            "tflite/kernels/unsorted_segment.cc", shape_inputs=(1, 2)
        ),
        "UNSORTED_SEGMENT_MIN": KernelRule(
            "tflite/kernels/unsorted_segment.cc", shape_inputs=(1, 2)
        ),
        "UNSORTED_SEGMENT_PROD": KernelRule(
            "tflite/kernels/unsorted_segment.cc", shape_inputs=(1, 2)
        ),
        "WHERE": KernelRule("tflite/kernels/where.cc", shape_inputs=(0,)),
        "NON_MAX_SUPPRESSION_V4": KernelRule(
            "tflite/kernels/non_max_suppression.cc", shape_inputs=(2,)
        ),
        "NON_MAX_SUPPRESSION_V5": KernelRule(
            "tflite/kernels/non_max_suppression.cc", shape_inputs=(2,)
        ),
        "UNIQUE": KernelRule("tflite/kernels/unique.cc", always_dynamic=True),
        # Constant folding in Prepare: output 0 becomes PersistentRo (heap).
        "SHAPE": KernelRule("tflite/kernels/shape.cc", always_folds=True, verified=True),
        "RANK": KernelRule("tflite/kernels/rank.cc", always_folds=True),
        "BROADCAST_ARGS": KernelRule("tflite/kernels/broadcast_args.cc", folding_inputs=(0, 1)),
        "GATHER": KernelRule("tflite/kernels/gather.cc", folding_inputs=(0, 1), verified=True),
        "MUL": KernelRule("tflite/kernels/mul.cc", folding_inputs=(0, 1), verified=True),
        "RANGE": KernelRule(
            "tflite/kernels/range.cc",
            shape_inputs=(0, 1, 2),
            folding_inputs=(0, 1, 2),
            verified=True,
        ),
        "STRIDED_SLICE": KernelRule(
            "tflite/kernels/strided_slice.cc",
            shape_inputs=(1, 2, 3),
            folding_inputs=(0, 1, 2),
            verified=True,
        ),
        "TILE": KernelRule(
            "tflite/kernels/tile.cc", shape_inputs=(1,), folding_inputs=(0, 1), verified=True
        ),
        "CONCATENATION": KernelRule(
            "tflite/kernels/concatenation.cc",
            folding_inputs=(-1,),
            verified=True,
        ),  # -1: every input
    }
)


# ---------------------------------------------------------------------------------------------
# The simulation.


class _WorkGraph:
    """One subgraph's tensors while Init and Prepare run."""

    def __init__(self, model: Model, subgraph: Subgraph) -> None:
        self.model = model
        self.subgraph = subgraph
        self.tensors: list[_WorkTensor] = [_build_time_tensor(t) for t in subgraph.tensors]
        self.inputs = list(subgraph.inputs)
        self.notes: list[str] = []

    def add_tensors(self, count: int) -> int:
        first = len(self.tensors)
        for _ in range(count):
            self.tensors.append(
                _WorkTensor(name="", dtype="NOTYPE", shape=None, allocation=Allocation.MEM_NONE)
            )
        return first

    def scales(self, tensor_index: int) -> tuple[float, ...]:
        return read_quantization_scales(self.model, self.subgraph.index, tensor_index)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def _build_time_tensor(tensor: Tensor) -> _WorkTensor:
    if tensor.has_data:
        allocation = Allocation.MMAP_RO
    elif tensor.dtype.name in ("STRING", "RESOURCE", "VARIANT"):
        allocation = Allocation.DYNAMIC
    elif tensor.is_variable:
        allocation = Allocation.ARENA_RW_PERSISTENT
    else:
        allocation = Allocation.ARENA_RW
    return _WorkTensor(
        name=tensor.name,
        dtype=tensor.dtype.name,
        shape=tuple(tensor.shape),
        allocation=allocation,
        is_variable=tensor.is_variable,
        has_sparsity=tensor.has_sparsity,
        quantization_scales=tensor.quantization.channel_count if tensor.quantization else 0,
    )


@dataclass
class _SubgraphRun:
    graph: _WorkGraph
    contexts: list[NodeContext] = field(default_factory=list)
    dynamic: list[bool] = field(default_factory=list)
    chunks: list[tuple[int, int]] = field(default_factory=list)
    planning_state: tuple[TensorState, ...] = ()
    prepared: bool = False


def prepare_model(model: Model) -> tuple[PreparedSubgraph, ...]:
    """Model → every subgraph as LiteRT's planner sees it after Prepare."""
    runs = [_SubgraphRun(_WorkGraph(model, subgraph)) for subgraph in model.subgraphs]
    for run in runs:
        _run_init(run)
    allocated = {0}
    _prepare_subgraph(model, runs, 0, allocated)
    for index, run in enumerate(runs):
        if not run.prepared:
            # Not reached by allocate_tensors(): prepared when a SignatureRunner or CALL_ONCE
            # allocates it; planned the same way then.
            _prepare_subgraph(model, runs, index, allocated, reached=False)
    return tuple(_freeze(run, index, index in allocated) for index, run in enumerate(runs))


def _run_init(run: _SubgraphRun) -> None:
    """Init of every node in operator order: kernels that add tensors in Init do so now."""
    for position, operator in enumerate(run.graph.subgraph.operators):
        op_data: dict[str, int] = {}
        rule = KERNEL_RULES.get(operator.opcode)
        if rule is not None and rule.init_tensors:
            op_data["scratch"] = run.graph.add_tensors(rule.init_tensors)
        run.contexts.append(NodeContext(run.graph, position, operator, op_data))


def _prepare_subgraph(
    model: Model,
    runs: list[_SubgraphRun],
    index: int,
    allocated: set[int],
    *,
    reached: bool = True,
) -> None:
    run = runs[index]
    if run.prepared:
        return
    run.prepared = True
    if reached:
        allocated.add(index)
    first = 0
    for ctx in run.contexts:
        status = _prepare_node(model, runs, ctx, allocated)
        dynamic = status == PrepareStatus.OUTPUT_SHAPE_NOT_KNOWN or any(
            run.graph.tensors[t].allocation == Allocation.DYNAMIC for t in ctx.outputs if t >= 0
        )
        run.dynamic.append(dynamic)
        if dynamic:
            run.chunks.append((first, ctx.position))
            if len(run.chunks) == 1:
                run.planning_state = tuple(t.state() for t in run.graph.tensors)
            first = ctx.position + 1
    if first < len(run.contexts) or not run.chunks:
        run.chunks.append((first, max(len(run.contexts) - 1, 0)))
        if len(run.chunks) == 1:
            run.planning_state = tuple(t.state() for t in run.graph.tensors)
    if len(run.chunks) > 1:
        run.graph.note(
            f"subgraph {index}: planned in {len(run.chunks)} chunks (dynamic outputs at nodes "
            f"{', '.join(str(last) for _, last in run.chunks[:-1])}); later chunks are planned at "
            f"Invoke with data-dependent shapes, predicted here from the flatbuffer shapes"
        )


def _prepare_node(
    model: Model, runs: list[_SubgraphRun], ctx: NodeContext, allocated: set[int]
) -> PrepareStatus:
    opcode = ctx.operator.opcode
    rule = KERNEL_RULES.get(opcode)
    if opcode.startswith("CUSTOM:") and rule is None:
        ctx.graph.note(f"node {ctx.position} {opcode}: custom op assumed to add no temporaries")
    if opcode in ("IF", "WHILE", *_CONTROL_FLOW_CHILD_INPUTS_CUSTOM):
        _prepare_control_flow(model, runs, ctx, allocated)
    status = PrepareStatus.OK
    if rule is None:
        return status
    if not rule.modelled:
        ctx.graph.note(
            f"node {ctx.position} {opcode}: Prepare-time temporaries not modelled "
            f"({rule.source}); tensor indices reserved in Init are"
        )
    if rule.prepare is not None:
        try:
            status = rule.prepare(ctx) or PrepareStatus.OK
        except ModelError:
            raise
        except (IndexError, KeyError, ValueError, TypeError, ZeroDivisionError) as error:
            # The rules read shapes and options as the kernels do, after the kernels' own
            # TF_LITE_ENSURE checks (rank 4, matching channels ...); a node that fails those,
            # the real Prepare refuses too: the model is the problem, so say so.
            raise ModelError(
                model.source,
                f"subgraph {ctx.graph.subgraph.index} node {ctx.position} ({opcode}): inputs or "
                f"options this kernel's Prepare would refuse ({type(error).__name__}: {error})",
            ) from None
    if rule.always_dynamic or any(
        slot < len(ctx.inputs) and not ctx.is_constant_or_persistent(slot)
        for slot in rule.shape_inputs
    ):
        for slot in range(len(ctx.outputs)):
            ctx.set_dynamic_output(slot)
        return status
    if rule.always_folds or _folds(ctx, rule.folding_inputs):
        ctx.set_persistent_ro_output()
    return status


def _folds(ctx: NodeContext, slots: tuple[int, ...]) -> bool:
    if not slots:
        return False
    if slots == (-1,):
        slots = tuple(range(len(ctx.inputs)))
    return all(ctx.is_constant_or_persistent(slot) for slot in slots)


def _prepare_control_flow(
    model: Model, runs: list[_SubgraphRun], ctx: NodeContext, allocated: set[int]
) -> None:
    """*if.cc / while.cc — Prepare*: branch (and WHILE cond) subgraphs drop unused inputs
    (*Subgraph::RemoveUnusedInputs*); branch and body inputs other than resources / variants
    become Custom (cond inputs stay in cond's arena); a WHILE pass-through whose output nobody
    reads is removed from the node; each child is allocated right away."""
    opcode = ctx.operator.opcode
    children = [c for c in ctx.operator.called_subgraphs if 0 <= c < len(runs)]
    for position, child in enumerate(children):
        child_graph = runs[child].graph
        is_body = opcode == "WHILE" and position == 1
        is_cond = opcode == "WHILE" and position == 0
        if not is_body:
            _remove_unused_inputs(model.subgraphs[child], child_graph)
        if is_body:
            _drop_unread_pass_throughs(ctx, model.subgraphs[child], child_graph)
        if not is_cond:
            for tensor in child_graph.inputs:
                if tensor >= 0 and child_graph.tensors[tensor].dtype not in ("RESOURCE", "VARIANT"):
                    child_graph.tensors[tensor].allocation = Allocation.CUSTOM
        _prepare_subgraph(model, runs, child, allocated)


def _remove_unused_inputs(subgraph: Subgraph, graph: _WorkGraph) -> None:
    """Inputs no node reads and no output names become -1, with 0 bytes."""
    used = {t for op in subgraph.operators for t in op.inputs if t >= 0}
    used.update(t for t in subgraph.outputs if t >= 0)
    for slot, tensor in enumerate(graph.inputs):
        if tensor >= 0 and tensor not in used:
            graph.tensors[tensor].nbytes_override = 0
            graph.inputs[slot] = -1


def _drop_unread_pass_throughs(ctx: NodeContext, body: Subgraph, graph: _WorkGraph) -> None:
    """WHILE: a body input passed straight to the same output, whose WHILE output nobody in the
    parent reads, is not copied back: the node loses that output."""
    parent = ctx.graph.subgraph
    read = [t for op in parent.operators for t in op.inputs if t >= 0]
    read += [t for t in parent.outputs if t >= 0]
    for slot, (body_input, body_output) in enumerate(zip(body.inputs, body.outputs, strict=False)):
        if body_input != body_output or slot >= len(ctx.outputs) or ctx.outputs[slot] < 0:
            continue
        if ctx.outputs[slot] in read or graph.tensors[body_input].dtype in (
            "STRING",
            "RESOURCE",
            "VARIANT",
        ):
            continue
        ctx.outputs[slot] = -1


def _freeze(run: _SubgraphRun, index: int, allocated: bool) -> PreparedSubgraph:
    graph = run.graph
    subgraph = graph.subgraph
    tensors = tuple(
        RuntimeTensor(
            index=i,
            name=t.name or (f"<{t.role}>" if t.role else f"<runtime tensor {i}>"),
            dtype=t.dtype,
            shape=t.shape,
            nbytes=t.nbytes,
            allocation=t.allocation,
            is_variable=t.is_variable,
            owner=t.owner,
            role=t.role,
        )
        for i, t in enumerate(graph.tensors)
    )
    nodes = tuple(
        RuntimeNode(
            position=ctx.position,
            operator=ctx.operator.index,
            opcode=ctx.operator.opcode,
            inputs=tuple(ctx.inputs),
            outputs=tuple(ctx.outputs),
            temporaries=tuple(t for t in ctx.temporaries),
            inplace_flags=LITERT_INPLACE_FLAGS.get(ctx.operator.opcode, 0),
            dynamic_output=run.dynamic[ctx.position] if ctx.position < len(run.dynamic) else False,
        )
        for ctx in run.contexts
    )
    planning = run.planning_state
    # Tensors added after PlanAllocations (later chunks) were unknown to it: pad with NONE.
    missing = len(tensors) - len(planning)
    planning = planning + tuple(TensorState(0, Allocation.MEM_NONE) for _ in range(missing))
    return PreparedSubgraph(
        index=index,
        tensors=tensors,
        nodes=nodes,
        inputs=tuple(graph.inputs),
        outputs=tuple(subgraph.outputs),
        variables=tuple(i for i, t in enumerate(subgraph.tensors) if t.is_variable),
        chunks=tuple(run.chunks),
        planning_state=planning,
        model_tensor_count=len(subgraph.tensors),
        allocated_by_allocate_tensors=allocated,
        notes=tuple(graph.notes),
    )
