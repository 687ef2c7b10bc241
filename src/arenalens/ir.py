"""The model IR: frozen Tensor, Operator, Subgraph and Model values that refer to each other by id.

Only `arenalens.tflite` builds these from FlatBuffers; everything else reads them. A tensor is
identified by `(subgraph index, tensor index)`; an operator by `(subgraph index, operator index)`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Mapping
from dataclasses import field
from functools import cached_property
from itertools import chain
from operator import itemgetter
from types import MappingProxyType
from typing import Any, NamedTuple

from arenalens.errors import ModelError
from arenalens.records import record

# Largest byte count arenalens accepts for one tensor: 2**62, far beyond any device, small enough
# that sums over a model cannot overflow a signed 64-bit integer in the runtimes we mirror.
MAX_TENSOR_BYTES = 1 << 62


@record(slots=True)
class DType:
    """One schema TensorType: its name, code and storage size."""

    code: int
    name: str
    # Bytes per element as the runtimes store it; None for types without a fixed size
    # (STRING, VARIANT) that neither runtime plans in an arena.
    element_bytes: int | None
    # Bits per element when packed (INT4 → 4); LiteRT packs sub-byte types, TFLM does not.
    packed_bits: int | None = None


_DTYPE_LIST = (
    DType(0, "FLOAT32", 4),
    DType(1, "FLOAT16", 2),
    DType(2, "INT32", 4),
    DType(3, "UINT8", 1),
    DType(4, "INT64", 8),
    DType(5, "STRING", None),
    DType(6, "BOOL", 1),
    DType(7, "INT16", 2),
    DType(8, "COMPLEX64", 8),
    DType(9, "INT8", 1),
    DType(10, "FLOAT64", 8),
    DType(11, "COMPLEX128", 16),
    DType(12, "UINT64", 8),
    DType(13, "RESOURCE", 4),
    DType(14, "VARIANT", None),
    DType(15, "UINT32", 4),
    DType(16, "UINT16", 2),
    DType(17, "INT4", 1, packed_bits=4),
    DType(18, "BFLOAT16", 2),
    DType(19, "INT2", 1, packed_bits=2),
    DType(20, "UINT4", 1, packed_bits=4),
)
DTYPES: Mapping[int, DType] = MappingProxyType({dtype.code: dtype for dtype in _DTYPE_LIST})
DTYPES_BY_NAME: Mapping[str, DType] = MappingProxyType({d.name: d for d in _DTYPE_LIST})


def dtype_for_code(code: int) -> DType:
    """Schema type code → DType; unknown codes become an unsized placeholder type."""
    known = DTYPES.get(code)
    return known if known is not None else DType(code, f"UNKNOWN_{code}", None)


class TensorKind(enum.StrEnum):
    """What a tensor is to its subgraph; one kind per tensor, most specific first."""

    CONSTANT = "constant"
    VARIABLE = "variable"
    INPUT = "input"
    OUTPUT = "output"
    INTERMEDIATE = "intermediate"


class Quantization(NamedTuple):
    """A summary of a tensor's quantization: the first scale / zero point and their count."""

    scale: float | None
    zero_point: int | None
    channel_count: int
    axis: int


class Tensor(NamedTuple):
    """One tensor of one subgraph; `shape` comes from the FlatBuffer `shape` field.

    A NamedTuple, not a dataclass: a model has hundreds of tensors and a candidate in a search
    loop reads every one, so making one must cost a tuple (the reader's `tuple.__new__(Tensor,
    fields)` is ~6x cheaper than a frozen dataclass's __init__). Immutable and hashable; equal
    tensors are equal tuples; change one with `_replace`. Fields, order and repr are the former
    dataclass's.
    """

    index: int  # type: ignore[assignment]  # (shadows tuple.index, as the field it was)
    name: str
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...]  # the shape when the file has no signature
    dtype: DType
    buffer: int
    has_data: bool  # the buffer holds bytes (in the FlatBuffer or at an external offset)
    is_variable: bool
    kind: TensorKind
    is_input: bool
    is_output: bool
    quantization: Quantization | None = None
    has_sparsity: bool = False

    @property
    def element_count(self) -> int:
        """Number of elements; a missing shape is a scalar, a negative dim makes it 0."""
        count = 1
        for dim in self.shape:
            if dim < 0:
                return 0
            count *= dim
        return count

    @property
    def nbytes(self) -> int:
        """Unpacked byte size (TFLM's rule: one byte per INT4 element); 0 for unsized types."""
        if self.dtype.element_bytes is None:
            return 0
        return self.element_count * self.dtype.element_bytes

    @property
    def packed_nbytes(self) -> int:
        """Byte size with sub-byte types packed (LiteRT's rule)."""
        if self.dtype.packed_bits is not None:
            return (self.element_count * self.dtype.packed_bits + 7) // 8
        return self.nbytes

    @property
    def is_constant(self) -> bool:
        """True for buffer-backed tensors (weights, biases, constant shapes)."""
        return self.has_data

    @property
    def has_dynamic_dims(self) -> bool:
        """True when `shape_signature` marks a dimension unknown until run time (-1)."""
        return any(d < 0 for d in self.shape_signature)


# Roles of the subgraph indices that control-flow operators carry in their options.
CONTROL_FLOW_OPTION_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "IF": ("then_subgraph_index", "else_subgraph_index"),
        "WHILE": ("cond_subgraph_index", "body_subgraph_index"),
        "CALL_ONCE": ("init_subgraph_index",),
        "CALL": ("subgraph",),
        "STABLEHLO_WHILE": ("cond_subgraph_index", "body_subgraph_index"),
        "STABLEHLO_COMPOSITE": ("decomposition_subgraph_index",),
        "STABLEHLO_CASE": ("branch_subgraph_indices",),
        "STABLEHLO_REDUCE": ("body_subgraph_index",),
        "STABLEHLO_REDUCE_WINDOW": ("body_subgraph_index",),
        "STABLEHLO_SCATTER": ("update_computation_subgraph_index",),
        "STABLEHLO_SORT": ("comparator_subgraph_index",),
        "REDUCE_WINDOW": ("body_subgraph_index",),
    }
)


# The options of an operator that has none (one shared, read-only, empty mapping).
NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


class Operator(NamedTuple):
    """One operator: its opcode name and tensor indices; -1 marks an omitted optional input.

    A NamedTuple for the reason `Tensor` is one; change one with `_replace`."""

    index: int  # type: ignore[assignment]  # (shadows tuple.index)
    opcode: str  # builtin name ("CONV_2D") or "CUSTOM:<custom code>"
    builtin_code: int  # max(builtin_code, deprecated_builtin_code), as kernel lookup does
    raw_builtin_code: int  # the `builtin_code` field alone (TFLM's control-flow test reads it)
    custom_code: str | None
    version: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...]
    options: Mapping[str, Any] = NO_OPTIONS
    # Subgraphs this operator runs, in the order the runtimes visit them.
    called_subgraphs: tuple[int, ...] = ()
    # Where its table sits in the file's operators vector, when a reordering moved it (None:
    # at `index`); what reads the file for this operator (custom options) must use this.
    file_index: int | None = None

    @property
    def is_custom(self) -> bool:
        """True for custom ops (opcode 'CUSTOM:...')."""
        return self.custom_code is not None

    @property
    def position_in_file(self) -> int:
        """Index of this operator's table in the FlatBuffer's operators vector."""
        return self.index if self.file_index is None else self.file_index


@record()
class Subgraph:
    """One subgraph: tensors and operators in FlatBuffer order, plus derived indexes."""

    index: int
    name: str
    tensors: tuple[Tensor, ...]
    operators: tuple[Operator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]

    @cached_property
    def producers(self) -> Mapping[int, int]:
        """Tensor index → index of the first operator that writes it."""
        produced: dict[int, int] = {}
        for op in self.operators:
            for tensor_index in op.outputs:
                if tensor_index >= 0:
                    produced.setdefault(tensor_index, op.index)
        return MappingProxyType(produced)

    @cached_property
    def consumers(self) -> Mapping[int, tuple[int, ...]]:
        """Tensor index → indices of operators that read it, in order, without repeats."""
        readers: dict[int, list[int]] = {}
        for op in self.operators:
            for tensor_index in op.inputs:
                if tensor_index >= 0:
                    ops = readers.setdefault(tensor_index, [])
                    if not ops or ops[-1] != op.index:
                        ops.append(op.index)
        return MappingProxyType({t: tuple(ops) for t, ops in readers.items()})


class BufferRef(NamedTuple):
    """Where one FlatBuffer `Buffer`'s bytes live: in the FlatBuffer or at an external offset."""

    index: int  # type: ignore[assignment]  # (shadows tuple.index)
    file_offset: int  # byte offset of the data in the file (0 when empty)
    nbytes: int
    external: bool  # stored after the FlatBuffer via Buffer.offset/size (models > 2 GB)


@record(slots=True)
class Metadata:
    """One `Model.metadata` entry: a name and the buffer that holds its bytes."""

    name: str
    buffer: int


# The metadata entry TFLM reads an offline plan from (`tflite.offline_plan` codes its bytes).
OFFLINE_PLAN_METADATA = "OfflineMemoryAllocation"


@record(slots=True)
class OfflinePlan:
    """The decoded `OfflineMemoryAllocation` metadata: one offset per tensor, -1 = plan online."""

    version: int
    subgraph_count: int
    offsets: tuple[int, ...]  # all subgraphs' tensors, concatenated in order


@record(slots=True)
class PlanRecord:
    """arenalens' record next to an offline plan (`arenalens_plan_validity` metadata): the kernel
    code paths the plan computes the right outputs on, and what was run to check it.

    `plan_sha256` is the digest of the `OfflineMemoryAllocation` bytes it was written for: a record
    whose plan has since been replaced says nothing about the new one.
    """

    version: int
    plan_sha256: str
    valid_for: tuple[str, ...]  # code paths as `KernelPath.name` spells them ('*': every build)
    proven: tuple[str, ...] = ()  # one line per check on a real runtime: which build, what held
    writer: str = ""  # "arenalens 0.9.0"
    # The main inputs' shapes an arenalens split was made at (its bands slice those rows, so at
    # any other size the model computes other outputs than the one it was split from); () when
    # the model was not split.
    split_input_shapes: tuple[tuple[int, ...], ...] = ()


@record(slots=True)
class SignatureDef:
    """A named entry point: its subgraph and input/output names mapped to tensor indices."""

    key: str
    subgraph: int
    inputs: tuple[tuple[str, int], ...]
    outputs: tuple[tuple[str, int], ...]


@record()
class Model:
    """A whole .tflite model; `data` is the (memory-mapped) file, never copied."""

    source: str  # file path or "<bytes>", used in every error message
    version: int
    description: str
    subgraphs: tuple[Subgraph, ...]
    buffers: tuple[BufferRef, ...]
    metadata: tuple[Metadata, ...]
    signature_defs: tuple[SignatureDef, ...]
    offline_plan: OfflinePlan | None
    file_bytes: int
    data: Any = field(repr=False, compare=False, default=b"")
    plan_record: PlanRecord | None = None  # arenalens' record of where the offline plan holds

    @property
    def operator_count(self) -> int:
        """Operators over all subgraphs."""
        return sum(len(sg.operators) for sg in self.subgraphs)

    @property
    def tensor_count(self) -> int:
        """Tensors over all subgraphs."""
        return sum(len(sg.tensors) for sg in self.subgraphs)

    @property
    def name(self) -> str:
        """The file's base name without extension, or '<bytes>'."""
        base = self.source.replace("\\", "/").rsplit("/", 1)[-1]
        return base[:-7] if base.endswith(".tflite") else base

    def buffer_bytes(self, buffer_index: int) -> bytes:
        """The bytes stored in one buffer (a copy of that buffer only)."""
        ref = self.buffers[buffer_index]
        return bytes(self.data[ref.file_offset : ref.file_offset + ref.nbytes])

    def tensor_offset_index(self, subgraph: int, tensor: int) -> int:
        """(subgraph, tensor) → position in the concatenated all-subgraph tensor list."""
        return sum(len(sg.tensors) for sg in self.subgraphs[:subgraph]) + tensor


def check_shape_size(
    label: str, where: str, index: int, shape: tuple[int, ...], element_bytes: int
) -> None:
    """None, or ModelError when a tensor of this shape would exceed MAX_TENSOR_BYTES (a shape
    with a dim of 0 or less holds nothing)."""
    total = element_bytes
    for dim in shape:
        if dim <= 0:
            return
        total *= dim
        if total > MAX_TENSOR_BYTES:
            raise ModelError(
                label,
                f"{where} tensor {index}: shape {list(shape)} is too large "
                f"(more than 2^62 bytes; the size would overflow)",
            )


def check_model(model: Model, *, strict: bool = False, proven: Collection[int] = ()) -> None:
    """Model → None, or ModelError naming the first structural problem found.

    Checks: indices in range, a valid subgraph call graph without cycles, operators reading only
    tensors that are constant, inputs, variables or written by an earlier operator (strict), and an
    offline plan with one offset per tensor. Sizes were bounded when the tensors were read.

    `proven`: subgraphs whose operators the reader saw pass these checks as it read them (every
    index in range, each input ready before its operator, no intermediates nor calls:
    `operator_tables.read_operators`); their operators are not walked again. Their checks would
    pass, so the first fault named is the same.
    """

    def fail(problem: str) -> ModelError:
        return ModelError(model.source, problem)

    subgraph_count = len(model.subgraphs)
    calls = False
    for subgraph in model.subgraphs:
        calls |= _check_subgraph_indices(
            subgraph, subgraph_count, fail, walk_operators=subgraph.index not in proven
        )
    if calls:  # (without calls there is no cycle)
        _check_call_graph(model, fail)
    for subgraph in model.subgraphs:
        if subgraph.index not in proven:
            _check_data_order(subgraph, strict, fail)
    for signature in model.signature_defs:
        if not 0 <= signature.subgraph < subgraph_count:
            raise fail(
                f"signature '{signature.key}' names subgraph {signature.subgraph}, "
                f"out of range (model has {subgraph_count})"
            )


def _check_subgraph_indices(
    subgraph: Subgraph,
    subgraph_count: int,
    fail: Callable[[str], ModelError],
    *,
    walk_operators: bool = True,
) -> bool:
    """Fail on the first index out of range; else whether an operator calls a subgraph.
    `walk_operators`: False checks the subgraph's inputs and outputs only (its operators are
    proven: `check_model`)."""
    count = len(subgraph.tensors)
    where = f"subgraph {subgraph.index}"

    def check(indices: tuple[int, ...], what: str) -> None:
        for tensor_index in indices:
            if tensor_index != -1 and not 0 <= tensor_index < count:
                raise fail(
                    f"{what} names tensor {tensor_index}, out of range "
                    f"({where} has {count} tensors)"
                )

    check(subgraph.inputs, f"{where} inputs")
    check(subgraph.outputs, f"{where} outputs")
    if not walk_operators:
        return False
    operators = subgraph.operators
    # Every operator's indices at once, in C: those of a sound subgraph lie in [-1, count), and
    # few operators have intermediates or call subgraphs. Otherwise operator by operator, for
    # the first one's message.
    indices = [
        *chain.from_iterable(map(_INPUTS_OF, operators)),
        *chain.from_iterable(map(_OUTPUTS_OF, operators)),
    ]
    calls = any(map(_CALLED_OF, operators))
    if not (
        (indices and (min(indices) < -1 or max(indices) >= count))
        or any(map(_INTERMEDIATES_OF, operators))
        or calls
    ):
        return False
    for op in operators:
        # min and max in C first: every index of a sound operator lies in [-1, count).
        inputs, outputs, intermediates = op.inputs, op.outputs, op.intermediates
        if (
            (inputs and (min(inputs) < -1 or max(inputs) >= count))
            or (outputs and (min(outputs) < -1 or max(outputs) >= count))
            or intermediates
            or op.called_subgraphs
        ):
            label = f"{where} operator {op.index} ({op.opcode})"
            check(inputs, f"{label} inputs")
            check(outputs, f"{label} outputs")
            check(intermediates, f"{label} intermediates")
            for called in op.called_subgraphs:
                if called != -1 and not 0 <= called < subgraph_count:
                    raise fail(
                        f"{label} calls subgraph {called}, out of range "
                        f"(model has {subgraph_count} subgraphs)"
                    )
    return calls


# Operator and Tensor fields by position: a NamedTuple's field read by name goes through the
# generic attribute lookup, several times the cost of a subscript, and these run per operator
# (per tensor) of every model read.
_INPUTS_OF = itemgetter(Operator._fields.index("inputs"))
_OUTPUTS_OF = itemgetter(Operator._fields.index("outputs"))
_INTERMEDIATES_OF = itemgetter(Operator._fields.index("intermediates"))
_CALLED_OF = itemgetter(Operator._fields.index("called_subgraphs"))
_TENSOR_INDEX = Tensor._fields.index("index")
_HAS_DATA = Tensor._fields.index("has_data")
_IS_VARIABLE = Tensor._fields.index("is_variable")


def _check_call_graph(model: Model, fail: Callable[[str], ModelError]) -> None:
    """Reject control flow that calls itself: the runtimes would recurse without end."""
    callees = {
        sg.index: sorted({c for op in sg.operators for c in op.called_subgraphs if c >= 0})
        for sg in model.subgraphs
    }
    state = dict.fromkeys(callees, 0)  # 0 new, 1 on the current path, 2 done
    for root in callees:
        if state[root]:
            continue
        stack: list[tuple[int, int]] = [(root, 0)]
        state[root] = 1
        while stack:
            node, position = stack[-1]
            if position < len(callees[node]):
                stack[-1] = (node, position + 1)
                child = callees[node][position]
                if state[child] == 1:
                    raise fail(
                        f"control flow cycle: subgraph {node} calls subgraph {child}, "
                        f"which is already running"
                    )
                if state[child] == 0:
                    state[child] = 1
                    stack.append((child, 0))
            else:
                state[node] = 2
                stack.pop()


def _check_data_order(subgraph: Subgraph, strict: bool, fail: Callable[[str], ModelError]) -> None:
    index, has_data, is_variable = _TENSOR_INDEX, _HAS_DATA, _IS_VARIABLE
    available = {t[index] for t in subgraph.tensors if t[has_data] or t[is_variable]}
    # Negative indices never reach a lookup (an omitted input is skipped; the indices were
    # checked to be -1 or more), so -1 sits in it.
    available.add(-1)
    available.update(subgraph.inputs)
    written_later: set[int] | None = None
    for op, inputs, outputs in zip(
        subgraph.operators,
        map(_INPUTS_OF, subgraph.operators),
        map(_OUTPUTS_OF, subgraph.operators),
        strict=True,
    ):
        if available.issuperset(inputs):  # one call in C for a sound operator
            available.update(outputs)
            continue
        for tensor_index in inputs:
            if tensor_index in available:
                continue
            producer = subgraph.producers.get(tensor_index)
            name = subgraph.tensors[tensor_index].name
            if producer is not None and producer > op.index:
                raise fail(
                    f"subgraph {subgraph.index} operator {op.index} ({op.opcode}) reads tensor "
                    f"{tensor_index} '{name}' before operator {producer} writes it "
                    f"(operators out of order, or a cycle)"
                )
            if written_later is None:
                written_later = set(subgraph.producers)
            if strict and tensor_index not in written_later:
                raise fail(
                    f"subgraph {subgraph.index} operator {op.index} ({op.opcode}) reads tensor "
                    f"{tensor_index} '{name}', which is not constant, not an input, not a "
                    f"variable and written by no operator (strict check)"
                )
        available.update(outputs)
