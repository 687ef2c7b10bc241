"""LiteRT Prepare state: tensors, nodes and the context a kernel rule works on."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

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
    # An IF's or WHILE's Prepare found its children dynamic (if.cc / while.cc: its outputs
    # SetTensorToDynamic, Eval_dynamic at Invoke): why, in words; '' for every other node.
    eval_dynamic: str = ""
    # A WHILE's condition on its first check, from the values known before the run (True: the
    # body runs at least once, False: never; prepare.first_check); None: a run-time value, or
    # not a WHILE.
    first_check: bool | None = None
    # An IF's (True: its then branch) or a WHILE's (True: its body runs) way when every model
    # input is zeros (prepare.first_check.zero_ways); None where that is not followed, or not
    # an IF or WHILE of the primary subgraph.
    zero_way: bool | None = None
    # An IF in a loop's body that takes both branches over the turns with zero inputs: the
    # branches in the order it first takes them (True: then); () for any other.
    zero_turns: tuple[bool, ...] = ()


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
    # Tensors each node's AddTensors added, by execution-plan position: in Init (at
    # Interpreter(...), in operator order) and in Prepare (allocate_tensors()); tensors_'s
    # growth depends on when (heap_interpreter.tensor_capacity_after_prepare).
    init_added: tuple[int, ...] = ()
    prepare_added: tuple[int, ...] = ()


# ---------------------------------------------------------------------------------------------
# Mutable working state, used only while simulating Prepare.


@dataclass
class WorkTensor:
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
    values: tuple[int, ...] | None = None  # integers folded in Prepare (PersistentRo), if known

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
        self, graph: WorkGraph, position: int, operator: Operator, op_data: dict[str, int]
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
    def input(self, slot: int) -> WorkTensor | None:
        """Input tensor at slot, or None when absent or omitted (-1)."""
        if slot >= len(self.inputs) or self.inputs[slot] < 0:
            return None
        return self.graph.tensors[self.inputs[slot]]

    def output(self, slot: int = 0) -> WorkTensor | None:
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

    def constant_ints(self, slot: int) -> tuple[int, ...] | None:
        """Values of a constant (MmapRo) INT32 / INT64 input, or of one folded in an earlier
        Prepare (PersistentRo, `prepare.folding`), as Prepare reads them; None when the input is
        neither, its folded values are unknown, or its buffer is shorter than its shape says."""
        tensor = self.input(slot)
        if tensor is not None and tensor.allocation == Allocation.PERSISTENT_RO:
            return tensor.values
        if tensor is None or tensor.allocation != Allocation.MMAP_RO or tensor.shape is None:
            return None
        element_bytes = {"INT32": 4, "INT64": 8}.get(tensor.dtype)
        if element_bytes is None:
            return None
        count = 1
        for dim in tensor.shape:
            count *= dim
        raw = self.graph.model.buffer_bytes(self.graph.subgraph.tensors[self.inputs[slot]].buffer)
        if count < 0 or len(raw) < count * element_bytes:
            return None
        return tuple(
            int.from_bytes(raw[i : i + element_bytes], "little", signed=True)
            for i in range(0, count * element_bytes, element_bytes)
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

    def resize_output(self, slot: int, shape: Sequence[int], *, dtype: str | None = None) -> None:
        """`context->ResizeTensor` on an output (and a type set by the kernel, if given)."""
        tensor = self.output(slot)
        if tensor is None:
            return
        tensor.shape = tuple(int(d) for d in shape)
        if dtype is not None:
            tensor.dtype = dtype

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


# ---------------------------------------------------------------------------------------------
# Kernel rules. Each function mirrors the named kernel's Prepare for num_threads = 1.


def is_hybrid(ctx: NodeContext, data_slot: int, weights_slot: int) -> bool:
    """*IsHybridOp*: float activations with 8-bit (or narrower) weights."""
    return ctx.dtype(data_slot) == "FLOAT32" and ctx.dtype(weights_slot) in (
        "INT8",
        "UINT8",
        "INT4",
        "INT2",
    )


def tensor_type_name(code: object) -> str:
    """Schema TensorType code → name; '' for 0 (FLOAT32 there means "not set")."""
    if not isinstance(code, int) or code == 0:
        return ""
    return dtype_for_code(code).name


class WorkGraph:
    """One subgraph's tensors while Init and Prepare run."""

    def __init__(self, model: Model, subgraph: Subgraph) -> None:
        self.model = model
        self.subgraph = subgraph
        self.tensors: list[WorkTensor] = [_build_time_tensor(t) for t in subgraph.tensors]
        self.inputs = list(subgraph.inputs)
        self.notes: list[str] = []

    def add_tensors(self, count: int) -> int:
        first = len(self.tensors)
        for _ in range(count):
            self.tensors.append(
                WorkTensor(name="", dtype="NOTYPE", shape=None, allocation=Allocation.MEM_NONE)
            )
        return first

    def scales(self, tensor_index: int) -> tuple[float, ...]:
        return read_quantization_scales(self.model, self.subgraph.index, tensor_index)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def _build_time_tensor(tensor: Tensor) -> WorkTensor:
    if tensor.has_data:
        allocation = Allocation.MMAP_RO
    elif tensor.dtype.name in ("STRING", "RESOURCE", "VARIANT"):
        allocation = Allocation.DYNAMIC
    elif tensor.is_variable:
        allocation = Allocation.ARENA_RW_PERSISTENT
    else:
        allocation = Allocation.ARENA_RW
    return WorkTensor(
        name=tensor.name,
        dtype=tensor.dtype.name,
        shape=tuple(tensor.shape),
        allocation=allocation,
        is_variable=tensor.is_variable,
        has_sparsity=tensor.has_sparsity,
        quantization_scales=tensor.quantization.channel_count if tensor.quantization else 0,
    )
