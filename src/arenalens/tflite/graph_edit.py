"""Graph edit: .tflite bytes + one subgraph's new operators, tensors, buffers → new .tflite bytes.

What operator splitting writes: some operators of a subgraph replaced by new ones (slices, pads,
the same kernels on parts, concatenations), new activation and constant tensors, new constant
buffers. Like the rewriter (`rewriter.py`, whose reading and prefix-writing helpers this module
shares), nothing of the original is re-serialized: a prefix holds the new Model, SubGraph,
Tensor, Operator, OperatorCode and Buffer tables and the original file follows byte for byte, so
weights, signature defs, descriptions and every field this module does not know stay as they were.

Tensor indices stay valid: an edit may only *replace* a tensor nobody uses any more (an
activation the split no longer produces) or *append* new ones, because operators kept from the
original, the subgraph's inputs and outputs and the signature defs all refer to tensors by index.
A replaced index must be unused by every operator of the new list, or TFLM would plan a tensor
with no lifetime. Buffers are only appended. An `OfflineMemoryAllocation` entry is dropped: its
offsets count the old tensors (optimize writes a new plan afterwards).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from arenalens.ir import DTYPES_BY_NAME
from arenalens.tflite.builder import QuantizationSpec
from arenalens.tflite.builder_options import OPTIONS_TYPES
from arenalens.tflite.opcodes import BUILTIN_CODES, BUILTIN_NAMES, OPTION_TABLES_PATH
from arenalens.tflite.reader import BUFFER_DATA_ALIGNMENT, FILE_IDENTIFIER, OFFLINE_PLAN_METADATA
from arenalens.tflite.rewriter import (
    _OFFSET,
    DEFAULT_ALIGNMENT,
    _Field,
    _Prefix,
    _Ref,
    _Target,
    _View,
)

# Field slots (0-based) of the schema tables written here (schema.fbs field order).
_MODEL_FIELDS = 8
_MODEL_VERSION, _MODEL_OPERATOR_CODES, _MODEL_SUBGRAPHS = 0, 1, 2
_MODEL_BUFFERS, _MODEL_METADATA = 4, 6
_SUBGRAPH_FIELDS = 6
_SUBGRAPH_TENSORS, _SUBGRAPH_INPUTS, _SUBGRAPH_OUTPUTS, _SUBGRAPH_OPERATORS = 0, 1, 2, 3
_SUBGRAPH_DEBUG_METADATA = 5
_TENSOR_SHAPE, _TENSOR_TYPE, _TENSOR_BUFFER, _TENSOR_NAME, _TENSOR_QUANTIZATION = 0, 1, 2, 3, 4
_QUANTIZATION_SCALE, _QUANTIZATION_ZERO_POINT, _QUANTIZATION_DIMENSION = 2, 3, 6
_OPERATOR_OPCODE, _OPERATOR_INPUTS, _OPERATOR_OUTPUTS = 0, 1, 2
_OPERATOR_OPTIONS_TYPE, _OPERATOR_OPTIONS = 3, 4
_OPCODE_DEPRECATED, _OPCODE_CUSTOM, _OPCODE_VERSION, _OPCODE_BUILTIN = 0, 1, 2, 3
_BUFFER_DATA = 0
_METADATA_NAME = 0
# Builtin codes above this live only in `builtin_code` (the byte-sized field holds 127).
_PLACEHOLDER_FOR_GREATER_OP_CODES = 127


@dataclass(frozen=True, slots=True)
class QuantizationOf:
    """Quantization shared with an original tensor of the same subgraph (its table, reused)."""

    tensor: int


@dataclass(frozen=True, slots=True)
class NewTensor:
    """A tensor to write: `data` indexes `SubgraphEdit.buffers` (None: an activation)."""

    name: str
    shape: tuple[int, ...]
    dtype: str  # schema type name: "INT8", "INT32", ...
    data: int | None = None
    quantization: QuantizationSpec | QuantizationOf | None = None


@dataclass(frozen=True, slots=True)
class NewOperator:
    """A builtin operator to write, with every field of its options table (absent: default)."""

    opcode: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: tuple[tuple[str, Any], ...] = ()
    version: int = 1


@dataclass(frozen=True)
class SubgraphEdit:
    """One subgraph's new operator list (original indices or new operators), the tensors it
    replaces or appends (by final index) and the constant buffers the new tensors read."""

    subgraph: int
    operators: tuple[int | NewOperator, ...]
    tensors: Mapping[int, NewTensor]
    buffers: tuple[bytes, ...] = ()


def edit_model(
    data: bytes | bytearray | memoryview,
    edit: SubgraphEdit,
    *,
    label: str = "<bytes>",
    alignment: int = DEFAULT_ALIGNMENT,
) -> bytes:
    """Original .tflite bytes + one subgraph edit → the edited model's bytes (input untouched)."""
    original = bytes(data)
    view = _View(original, label)
    if original[4:8] != FILE_IDENTIFIER:
        raise view.fail("not a TFLite model (file identifier is not 'TFL3')")
    model = view.table(view.u32(0))
    view.refuse_unknown_fields(model, _MODEL_FIELDS, "Model")
    return _Edit(view, model, edit).write(alignment)


class _Edit:
    """The prefix writer of one edit: tables first, each table's children after it."""

    def __init__(self, view: _View, model: int, edit: SubgraphEdit) -> None:
        self.view = view
        self.model = model
        self.edit = edit
        self.subgraphs = view.vector_of_tables(model, _MODEL_SUBGRAPHS)
        self.buffers = view.vector_of_tables(model, _MODEL_BUFFERS)
        self.opcodes = view.vector_of_tables(model, _MODEL_OPERATOR_CODES)
        self.metadata = view.vector_of_tables(model, _MODEL_METADATA)
        if not 0 <= edit.subgraph < len(self.subgraphs):
            raise ValueError(
                f"edit of subgraph {edit.subgraph}; the model has {len(self.subgraphs)}"
            )
        self.subgraph = self.subgraphs[edit.subgraph]
        view.refuse_unknown_fields(self.subgraph, _SUBGRAPH_FIELDS, f"SubGraph {edit.subgraph}")
        self.tensors = view.vector_of_tables(self.subgraph, _SUBGRAPH_TENSORS)
        self.operators = view.vector_of_tables(self.subgraph, _SUBGRAPH_OPERATORS)
        self.new_opcodes: list[tuple[str, int]] = []
        self.opcode_index = self._opcode_indices()
        self.queue: list[Callable[[], None]] = []
        self.prefix = _Prefix()
        self._check()

    # -- checks --------------------------------------------------------------------------

    def _check(self) -> None:
        edit, count = self.edit, len(self.tensors)
        appended = sorted(i for i in edit.tensors if i >= count)
        if appended != list(range(count, count + len(appended))):
            raise ValueError("new tensors must be appended at consecutive indices")
        total = count + len(appended)
        for entry in edit.operators:
            if isinstance(entry, int):
                if not 0 <= entry < len(self.operators):
                    raise ValueError(f"operator {entry} is not in subgraph {edit.subgraph}")
            elif any(not -1 <= t < total for t in (*entry.inputs, *entry.outputs)):
                raise ValueError(f"{entry.opcode} refers to a tensor outside 0..{total - 1}")
        kept = self._kept_tensors()
        for index, tensor in edit.tensors.items():
            if tensor.data is not None and not 0 <= tensor.data < len(edit.buffers):
                raise ValueError(f"tensor {tensor.name} reads new buffer {tensor.data}")
            if index < count and index in kept:
                raise ValueError(f"tensor {index} is replaced but still in use")

    def _kept_tensors(self) -> set[int]:
        """Original tensor indices still referred to: by kept operators, as subgraph inputs or
        outputs."""
        kept: set[int] = set()
        for entry in self.edit.operators:
            if isinstance(entry, int):
                kept.update(self._int_vector(self.operators[entry], _OPERATOR_INPUTS))
                kept.update(self._int_vector(self.operators[entry], _OPERATOR_OUTPUTS))
        kept.update(self._int_vector(self.subgraph, _SUBGRAPH_INPUTS))
        kept.update(self._int_vector(self.subgraph, _SUBGRAPH_OUTPUTS))
        return {t for t in kept if t >= 0}

    def _int_vector(self, table: int, slot: int) -> tuple[int, ...]:
        view = self.view
        vector = view.target(table, slot)
        if not vector:
            return ()
        length = view.u32(vector)
        view.check(vector + 4, 4 * length)
        values: tuple[int, ...] = struct.unpack_from(f"<{length}i", view.data, vector + 4)
        return values

    def _scalar(self, table: int, slot: int, fmt: str) -> int:
        position = self.view.field(table, slot)
        if not position:
            return 0
        self.view.check(position, struct.calcsize(fmt))
        value: int = struct.unpack_from(fmt, self.view.data, position)[0]
        return value

    def _opcode_indices(self) -> dict[str, int]:
        """Builtin name → an operator code index: an existing one, or a new entry."""
        view = self.view
        indices: dict[str, int] = {}
        for index, table in enumerate(self.opcodes):
            if view.target(table, _OPCODE_CUSTOM):  # a custom operator, not a builtin
                continue
            code = max(
                self._scalar(table, _OPCODE_BUILTIN, "<i"),
                self._scalar(table, _OPCODE_DEPRECATED, "<b"),
            )
            name = BUILTIN_NAMES.get(code)
            if name is not None:
                indices.setdefault(name, index)
        for entry in self.edit.operators:
            if isinstance(entry, NewOperator) and entry.opcode not in indices:
                if entry.opcode not in BUILTIN_CODES:
                    raise ValueError(f"unknown builtin operator {entry.opcode}")
                indices[entry.opcode] = len(self.opcodes) + len(self.new_opcodes)
                self.new_opcodes.append((entry.opcode, entry.version))
        return indices

    # -- writing -------------------------------------------------------------------------

    def write(self, alignment: int) -> bytes:
        prefix = self.prefix
        root = _Ref()
        prefix.put(_OFFSET + FILE_IDENTIFIER)
        prefix.fixups.append((0, "prefix", root))
        refs = {
            _MODEL_OPERATOR_CODES: _Ref() if self.new_opcodes else None,
            _MODEL_SUBGRAPHS: _Ref(),
            _MODEL_BUFFERS: _Ref() if self.edit.buffers else None,
            _MODEL_METADATA: _Ref() if self._drops_offline_plan() else None,
        }
        view = self.view
        prefix.table_copy(
            view,
            self.model,
            _MODEL_FIELDS,
            root,
            replaced={slot: ref for slot, ref in refs.items() if ref is not None},
            scalars={_MODEL_VERSION: 4},
        )
        if (ref := refs[_MODEL_OPERATOR_CODES]) is not None:
            self._vector_of(
                ref, [("original", t) for t in self.opcodes], self.new_opcodes, self._opcode
            )
        subgraph_ref = _Ref()
        prefix.vector(
            [
                ("prefix", subgraph_ref) if i == self.edit.subgraph else ("original", table)
                for i, table in enumerate(self.subgraphs)
            ],
            refs[_MODEL_SUBGRAPHS],  # type: ignore[arg-type]
        )
        if (ref := refs[_MODEL_BUFFERS]) is not None:
            self._vector_of(
                ref, [("original", t) for t in self.buffers], list(self.edit.buffers), self._buffer
            )
        if (ref := refs[_MODEL_METADATA]) is not None:
            kept = [
                ("original", entry)
                for entry in self.metadata
                if view.string(view.target(entry, _METADATA_NAME)) != OFFLINE_PLAN_METADATA
            ]
            prefix.vector(kept, ref)
        self._subgraph(subgraph_ref)
        while self.queue:
            self.queue.pop(0)()
        prefix.align(alignment)
        prefix.resolve(len(prefix.data))
        return bytes(prefix.data) + view.data

    def _drops_offline_plan(self) -> bool:
        view = self.view
        return any(
            view.string(view.target(entry, _METADATA_NAME)) == OFFLINE_PLAN_METADATA
            for entry in self.metadata
        )

    def _vector_of(
        self,
        ref: _Ref,
        originals: list[_Target],
        additions: Sequence[Any],
        writer: Callable[[Any, _Ref], None],
    ) -> None:
        """A vector of table references: the originals, then one new table per addition."""
        new_refs = [_Ref() for _ in additions]
        self.prefix.vector([*originals, *(("prefix", r) for r in new_refs)], ref)
        for addition, new_ref in zip(additions, new_refs, strict=True):
            self.queue.append(partial(writer, addition, new_ref))

    def _vector_in_order(
        self,
        ref: _Ref,
        entries: Sequence[Any],
        originals: Sequence[int],
        writer: Callable[[Any, _Ref], None],
    ) -> None:
        """A vector of table references in the order given: an int entry is the original table
        at that index, any other a new table that `writer` writes later (queued in order)."""
        targets: list[_Target] = []
        for entry in entries:
            if isinstance(entry, int):
                targets.append(("original", originals[entry]))
            else:
                new_ref = _Ref()
                targets.append(("prefix", new_ref))
                self.queue.append(partial(writer, entry, new_ref))
        self.prefix.vector(targets, ref)

    def _subgraph(self, ref: _Ref) -> None:
        view, prefix = self.view, self.prefix
        tensors_ref, operators_ref = _Ref(), _Ref()
        prefix.table_copy(
            view,
            self.subgraph,
            _SUBGRAPH_FIELDS,
            ref,
            replaced={_SUBGRAPH_TENSORS: tensors_ref, _SUBGRAPH_OPERATORS: operators_ref},
            scalars={_SUBGRAPH_DEBUG_METADATA: 4},
        )
        count = len(self.tensors)
        total = count + sum(1 for i in self.edit.tensors if i >= count)
        tensors = [self.edit.tensors.get(index, index) for index in range(total)]
        self._vector_in_order(tensors_ref, tensors, self.tensors, self._tensor)
        self._vector_in_order(operators_ref, self.edit.operators, self.operators, self._operator)

    def _tensor(self, tensor: NewTensor, ref: _Ref) -> None:
        dtype = DTYPES_BY_NAME.get(tensor.dtype)
        if dtype is None:
            raise ValueError(f"unknown tensor type {tensor.dtype}")
        shape_ref, name_ref = _Ref(), _Ref()
        fields: list[_Field] = [
            (_TENSOR_SHAPE, _OFFSET, ("prefix", shape_ref)),
            (_TENSOR_TYPE, struct.pack("<b", dtype.code), None),
            (_TENSOR_NAME, _OFFSET, ("prefix", name_ref)),
        ]
        if tensor.data is not None:
            buffer = len(self.buffers) + tensor.data
            fields.append((_TENSOR_BUFFER, struct.pack("<I", buffer), None))
        quantization = tensor.quantization
        quantization_ref = _Ref()
        if isinstance(quantization, QuantizationOf):
            table = self.view.target(self.tensors[quantization.tensor], _TENSOR_QUANTIZATION)
            if table:
                fields.append((_TENSOR_QUANTIZATION, _OFFSET, ("original", table)))
        elif quantization is not None:
            fields.append((_TENSOR_QUANTIZATION, _OFFSET, ("prefix", quantization_ref)))
        self.prefix.table(fields, ref)
        self._numbers("i", tensor.shape, shape_ref)
        self._string(tensor.name, name_ref)
        if isinstance(quantization, QuantizationSpec):
            self.queue.append(partial(self._quantization, quantization, quantization_ref))

    def _quantization(self, spec: QuantizationSpec, ref: _Ref) -> None:
        scale_ref, zero_ref = _Ref(), _Ref()
        self.prefix.table(
            [
                (_QUANTIZATION_SCALE, _OFFSET, ("prefix", scale_ref)),
                (_QUANTIZATION_ZERO_POINT, _OFFSET, ("prefix", zero_ref)),
                (_QUANTIZATION_DIMENSION, struct.pack("<i", spec.axis), None),
            ],
            ref,
        )
        self._numbers("f", spec.scales, scale_ref)
        self._numbers("q", spec.zero_points, zero_ref)

    def _operator(self, operator: NewOperator, ref: _Ref) -> None:
        inputs_ref, outputs_ref, options_ref = _Ref(), _Ref(), _Ref()
        fields: list[_Field] = [
            (_OPERATOR_OPCODE, struct.pack("<I", self.opcode_index[operator.opcode]), None),
            (_OPERATOR_INPUTS, _OFFSET, ("prefix", inputs_ref)),
            (_OPERATOR_OUTPUTS, _OFFSET, ("prefix", outputs_ref)),
        ]
        table = OPTIONS_TYPES.get(operator.opcode)
        if table is not None:
            fields.append((_OPERATOR_OPTIONS_TYPE, struct.pack("<B", _union_code(table)), None))
            fields.append((_OPERATOR_OPTIONS, _OFFSET, ("prefix", options_ref)))
        self.prefix.table(fields, ref)
        self._numbers("i", operator.inputs, inputs_ref)
        self._numbers("i", operator.outputs, outputs_ref)
        if table is not None:
            self.prefix.table(_options_fields(table, dict(operator.options)), options_ref)

    def _opcode(self, entry: tuple[str, int], ref: _Ref) -> None:
        name, version = entry
        code = BUILTIN_CODES[name]
        self.prefix.table(
            [
                (
                    _OPCODE_DEPRECATED,
                    struct.pack("<b", min(code, _PLACEHOLDER_FOR_GREATER_OP_CODES)),
                    None,
                ),
                (_OPCODE_VERSION, struct.pack("<i", version), None),
                (_OPCODE_BUILTIN, struct.pack("<i", code), None),
            ],
            ref,
        )

    def _buffer(self, data: bytes, ref: _Ref) -> None:
        data_ref = _Ref()
        self.prefix.table([(_BUFFER_DATA, _OFFSET, ("prefix", data_ref))], ref)

        def put() -> None:
            # The length word sits just before data that starts 16-aligned (force_align).
            self.prefix.align(BUFFER_DATA_ALIGNMENT)
            self.prefix.put(b"\0" * (BUFFER_DATA_ALIGNMENT - 4))
            self.prefix.put(struct.pack("<I", len(data)) + data, 1, data_ref)

        self.queue.append(put)

    def _numbers(self, element: str, values: Sequence[Any], ref: _Ref) -> None:
        """A vector of scalars, its elements naturally aligned."""
        width = struct.calcsize(f"<{element}")

        def put() -> None:
            prefix = self.prefix
            prefix.align(4)
            while (len(prefix.data) + 4) % max(width, 4):
                prefix.put(b"\0" * 4)
            prefix.put(struct.pack(f"<I{len(values)}{element}", len(values), *values), 1, ref)

        self.queue.append(put)

    def _string(self, text: str, ref: _Ref) -> None:
        raw = text.encode("utf-8")

        def put() -> None:
            self.prefix.put(struct.pack("<I", len(raw)) + raw + b"\0", 4, ref)

        self.queue.append(put)


@cache
def _option_document() -> dict[str, Any]:
    with open(OPTION_TABLES_PATH, encoding="utf-8") as handle:
        document: dict[str, Any] = json.load(handle)
    return document


def _union_code(table: str) -> int:
    for code, name in _option_document()["unions"]["options"].items():
        if name == table:
            return int(code)
    raise ValueError(f"{table} is not a BuiltinOptions table")


def _options_fields(table: str, values: dict[str, Any]) -> list[_Field]:
    """An options table's scalar fields from `values` (missing: the schema default)."""
    fields: list[_Field] = []
    known = _option_document()["tables"][table]
    names = {name for name, _, _, _ in known}
    unknown = set(values) - names
    if unknown:
        raise ValueError(f"{table} has no field {', '.join(sorted(unknown))}")
    for name, voffset, kind, default in known:
        if kind == "string" or kind.startswith("vector:"):
            if values.get(name):
                raise ValueError(f"{table}.{name}: only scalar option fields are written here")
            continue
        value = values.get(name, default)
        if value == default:
            continue
        fields.append(((voffset - 4) // 2, struct.pack(f"<{kind}", value), None))
    return fields


__all__ = [
    "NewOperator",
    "NewTensor",
    "QuantizationOf",
    "SubgraphEdit",
    "edit_model",
]
