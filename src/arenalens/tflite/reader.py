"""FlatBuffer reader: .tflite path or bytes → checked `ir.Model`, without TensorFlow.

The file is memory-mapped, never copied: weights stay in the map and the IR records where each
buffer's bytes are. Every vector length is checked against the file size before it is walked, so a
small hostile file cannot claim millions of entries; any malformed read becomes a `ModelError`.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from arenalens.errors import ModelError
from arenalens.ir import (
    OFFLINE_PLAN_METADATA,
    BufferRef,
    Metadata,
    Model,
    OfflinePlan,
    PlanRecord,
    SignatureDef,
    Subgraph,
    check_model,
)
from arenalens.tflite.files import map_file, other_format
from arenalens.tflite.opcodes import (
    OptionsKey,
    builtin_name,
)
from arenalens.tflite.operator_tables import (
    OPERATOR_CODE_FIELDS,
    OPERATOR_FIELDS,
    OpcodeRow,
    read_builtin_codes,
    read_operators,
)
from arenalens.tflite.plan_record import PLAN_RECORD_METADATA, decode_plan_record
from arenalens.tflite.tables import (
    MalformedTableError,
    TableView,
    read_tables,
    string_at,
)
from arenalens.tflite.tensor_tables import (
    BUFFER_FIELDS,
    TENSOR_FIELDS,
    QuantizationReader,
    read_buffers,
    read_tensors,
)
from arenalens.units import format_bytes_exact

_U32 = struct.Struct("<I")


# FlatBuffers let many tables point at one vector or table, so a small file can describe a huge
# model: 20,000 operators sharing one 20,000-entry inputs vector are 400 million tensor
# references in 300 KB. The reader counts what it decodes (tensors, operators, subgraphs and
# their index and shape entries) and refuses a file that decodes to more than this many items
# per byte (plus a floor for tiny files). Real models decode to under 0.2 items per byte, and
# the builder's, which share identical shape vectors, to under 0.3.
MAX_ITEMS_PER_BYTE = 0.5
MIN_ITEM_BUDGET = 100_000
# A decoded table (tensor, operator, subgraph) costs about as much time as four index entries.
TABLE_ITEMS = 4

FILE_IDENTIFIER = b"TFL3"
# schema.fbs: `Buffer.data` is `force_align: 16`, so TFLM can read weights in place. A rule of the
# file's layout; TFLM's arena alignment (`runtimes.tflm.alignment`) is a different idea.
BUFFER_DATA_ALIGNMENT = 16
# Exceptions the FlatBuffers runtime raises when offsets point outside the file or types are off.
_MALFORMED = (
    MalformedTableError,
    struct.error,
    IndexError,
    TypeError,
    ValueError,
    OverflowError,
    UnicodeDecodeError,
    AttributeError,
    RecursionError,
)


def load_model(
    source: str | os.PathLike[str] | bytes | bytearray | memoryview, *, strict: bool = False
) -> Model:
    """A .tflite path or its bytes → a checked Model; raises ModelError naming the source.

    Operators that read a tensor nothing writes are accepted (both runtimes tolerate them and
    Vela's scratch tensors are exactly that; `arenalens diagnose` reports them); `strict=True`
    refuses them too.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        return parse_model(bytes(source), "<bytes>", strict=strict)
    label = str(source)
    data = map_file(source, label)
    return parse_model(data, label, strict=strict)


def parse_model(data: Any, label: str, *, strict: bool = False) -> Model:
    """FlatBuffer bytes (or a read-only map) → checked Model."""
    size = len(data)
    if size < 8:
        raise ModelError(label, f"file too small for a FlatBuffer ({format_bytes_exact(size)})")
    if bytes(data[4:8]) != FILE_IDENTIFIER:
        found = bytes(data[4:8])
        known = other_format(bytes(data[:16]), label)
        if known:
            raise ModelError(label, known)
        raise ModelError(
            label, f"not a TFLite model: file identifier is {found!r}, expected b'TFL3'"
        )
    parser = _Parser(data, label)
    try:
        model = parser.model()
    except ModelError:
        raise
    except _MALFORMED as error:
        raise ModelError(label, f"malformed FlatBuffer ({type(error).__name__}: {error})") from None
    except MemoryError:
        raise ModelError(label, "malformed FlatBuffer (implausible sizes)") from None
    check_model(model, strict=strict, proven=parser.proven)
    return model


# Field slots (vtable offsets) of the schema tables the reader walks (schema.fbs field order).
class _ModelSlots:
    VERSION, OPERATOR_CODES, SUBGRAPHS, DESCRIPTION, BUFFERS = 4, 6, 8, 10, 12
    METADATA, SIGNATURE_DEFS = 16, 18


class _SubgraphSlots:
    TENSORS, INPUTS, OUTPUTS, OPERATORS, NAME = 4, 6, 8, 10, 12


class _TensorSlots:
    SHAPE, TYPE, BUFFER, NAME, QUANTIZATION = 4, 6, 8, 10, 12
    IS_VARIABLE, SPARSITY, SHAPE_SIGNATURE = 14, 16, 18


class _QuantizationSlots:
    SCALE, ZERO_POINT, QUANTIZED_DIMENSION = 8, 10, 16


class _OperatorSlots:
    OPCODE_INDEX, INPUTS, OUTPUTS, OPTIONS_TYPE, OPTIONS, INTERMEDIATES = 4, 6, 8, 10, 12, 20
    OPTIONS2_TYPE, OPTIONS2 = 26, 28
    CUSTOM_OPTIONS, LARGE_CUSTOM_OPTIONS_OFFSET, LARGE_CUSTOM_OPTIONS_SIZE = 14, 22, 24


class _BufferSlots:
    DATA, OFFSET, SIZE = 4, 6, 8


class _SignatureSlots:
    INPUTS, OUTPUTS, KEY, SUBGRAPH_INDEX = 4, 6, 8, 12


@dataclass
class _Parser:
    data: Any
    label: str

    def __post_init__(self) -> None:
        self.size = len(self.data)
        self.options_cache: dict[OptionsKey, dict[str, Any]] = {}
        self.vtables: dict[int, tuple[int, ...]] = {}  # vtable position → its field offsets
        # vtable position → (field offsets, unpack, `tables.field_places`) of the quantization
        # tables using it
        self.quantization_readers: dict[int, QuantizationReader] = {}
        self.small_shapes: dict[tuple[int, ...], tuple[int, ...]] = {}
        # Subgraphs whose operators passed `check_model`'s operator checks as they were read.
        self.proven: set[int] = set()
        self.items = 0
        self.item_budget = MIN_ITEM_BUDGET + int(MAX_ITEMS_PER_BYTE * self.size)

    def fail(self, problem: str) -> ModelError:
        return ModelError(self.label, problem)

    def text(self, fb: TableView, slot: int) -> str:
        """A string field, charged by length (one shared long name must not decode 10^5 times)."""
        value = fb.string(slot)
        self.charge(len(value) >> 3)
        return value

    def charge(self, count: int) -> None:
        """Count decoded items; refuse a file that shares structure to decode far more."""
        self.items += count
        if self.items > self.item_budget:
            raise self.fail(
                f"decodes to more than {self.item_budget:,} tensors, operators and indices "
                f"from {format_bytes_exact(self.size)} (tables and vectors shared many times over)"
            )

    def root(self) -> TableView:
        return TableView(self.data, _U32.unpack_from(self.data, 0)[0], self.size)

    # -- model ------------------------------------------------------------------------
    def model(self) -> Model:
        root = self.root()
        buffer_vector = root.vector(_ModelSlots.BUFFERS, 4)
        try:
            buffers = read_buffers(self, buffer_vector)
        except (ModelError, *_MALFORMED):
            # The first fault in the reader's order (`tensor_tables`): every table, then data.
            read_tables(self.data, self.size, *buffer_vector, BUFFER_FIELDS)
            buffers = read_buffers(self, buffer_vector)
        opcode_rows = self.opcodes(root.vector(_ModelSlots.OPERATOR_CODES, 4))
        fb_subgraphs = root.tables(_ModelSlots.SUBGRAPHS)
        if not fb_subgraphs:
            raise self.fail("model has no subgraphs")
        subgraphs = tuple(
            self.subgraph(index, fb, buffers, opcode_rows) for index, fb in enumerate(fb_subgraphs)
        )
        metadata = tuple(
            Metadata(self.text(entry, 4), entry.u32(6))
            for entry in root.tables(_ModelSlots.METADATA)
        )
        signatures = tuple(self.signature(sig) for sig in root.tables(_ModelSlots.SIGNATURE_DEFS))
        model = Model(
            source=self.label,
            version=root.u32(_ModelSlots.VERSION),
            description=self.text(root, _ModelSlots.DESCRIPTION),
            subgraphs=subgraphs,
            buffers=buffers,
            metadata=metadata,
            signature_defs=signatures,
            offline_plan=None,
            file_bytes=self.size,
            data=self.data,
        )
        offline = self.offline_plan(model)
        record = self.plan_record(model)
        if offline is None and record is None:
            return model
        return replace(model, offline_plan=offline, plan_record=record)

    def opcodes(self, vector: tuple[int, int]) -> tuple[OpcodeRow, ...]:
        """The operator codes vector (from `vector_at`) → each code as the operators read it:
        builtin codes each in one unpack (`operator_tables.read_builtin_codes`); with a custom
        code, or after a fault, in the reader's order (`codes_in_order`)."""
        try:
            return read_builtin_codes(self, vector)
        except (ModelError, *_MALFORMED):
            return self.codes_in_order(vector)

    def codes_in_order(self, vector: tuple[int, int]) -> tuple[OpcodeRow, ...]:
        """`opcodes`, every table checked before any string is read (`tables.read_tables`), each
        table's inline fields in one unpack (`OPERATOR_CODE_FIELDS`; an absent version is 1)."""
        buf, size = self.data, self.size
        found = []
        # Builtin codes already read, by their fields: some writers give every operator a code
        # of its own (mobilenet_v2 224: 84 codes of 8 operators).
        builtins: dict[tuple[int, int, int], OpcodeRow] = {}
        for pos, fields, (deprecated, _, version, raw) in read_tables(
            buf, size, *vector, OPERATOR_CODE_FIELDS
        ):
            if not fields[1]:
                key = (deprecated, version if fields[2] else 1, raw)
                known_row = builtins.get(key)
                if known_row is not None:
                    found.append(known_row)
                    continue
            builtin = max(raw, deprecated)
            custom_name = string_at(buf, size, pos + fields[1]) if fields[1] else ""
            self.charge(len(custom_name) >> 3)
            known = builtin_name(builtin)
            name = f"CUSTOM:{custom_name}" if known == "CUSTOM" or custom_name else known
            row = (name, builtin, raw, custom_name or None, version if fields[2] else 1)
            if not fields[1]:
                builtins[deprecated, row[4], raw] = row
            found.append(row)
        return tuple(found)

    def subgraph(
        self,
        index: int,
        fb: TableView,
        buffers: tuple[BufferRef, ...],
        opcodes: tuple[OpcodeRow, ...],
    ) -> Subgraph:
        inputs = fb.int32_vector(_SubgraphSlots.INPUTS) or ()
        outputs = fb.int32_vector(_SubgraphSlots.OUTPUTS) or ()
        where = f"subgraph {index}"
        buf, size = self.data, self.size
        tensor_vector = fb.vector(_SubgraphSlots.TENSORS, 4)
        operator_vector = fb.vector(_SubgraphSlots.OPERATORS, 4)
        tables = 1 + tensor_vector[1] + operator_vector[1]
        input_set, output_set = set(inputs), set(outputs)
        items = self.items
        # The tensors an operator may read before any writes them (`read_operators`' proof).
        ready = {-1, *inputs}
        try:
            self.charge(TABLE_ITEMS * tables + len(inputs) + len(outputs))
            tensors = read_tensors(
                self, tensor_vector, buffers, input_set, output_set, where=where, ready=ready
            )
            operators, proven = read_operators(
                self, operator_vector, opcodes, where=where, ready=ready, tensor_count=len(tensors)
            )
        except (ModelError, *_MALFORMED):
            # The first fault in the reader's order (`tensor_tables`): every tensor and operator
            # table, then the charge for them, then the tensors', then the operators'.
            self.items = items
            ready = {-1, *inputs}
            read_tables(buf, size, *tensor_vector, TENSOR_FIELDS)
            read_tables(buf, size, *operator_vector, OPERATOR_FIELDS)
            self.charge(TABLE_ITEMS * tables + len(inputs) + len(outputs))
            tensors = read_tensors(
                self, tensor_vector, buffers, input_set, output_set, where=where, ready=ready
            )
            operators, proven = read_operators(
                self, operator_vector, opcodes, where=where, ready=ready, tensor_count=len(tensors)
            )
        if proven:
            self.proven.add(index)
        return Subgraph(
            index=index,
            name=self.text(fb, _SubgraphSlots.NAME),
            tensors=tensors,
            operators=operators,
            inputs=inputs,
            outputs=outputs,
        )

    def signature(self, fb: TableView) -> SignatureDef:
        def tensor_map(slot: int) -> tuple[tuple[str, int], ...]:
            entries = fb.tables(slot)
            self.charge(TABLE_ITEMS * len(entries))
            return tuple((self.text(entry, 4), entry.u32(6)) for entry in entries)

        return SignatureDef(
            key=self.text(fb, _SignatureSlots.KEY),
            subgraph=fb.u32(_SignatureSlots.SUBGRAPH_INDEX),
            inputs=tensor_map(_SignatureSlots.INPUTS),
            outputs=tensor_map(_SignatureSlots.OUTPUTS),
        )

    def offline_plan(self, model: Model) -> OfflinePlan | None:
        raw = self.last_metadata(model, OFFLINE_PLAN_METADATA)
        if raw is None:
            return None
        # Imported here: most models have no offline plan.
        from arenalens.tflite.offline_plan import decode_offline_plan  # noqa: PLC0415

        return decode_offline_plan(raw, self.label)

    def plan_record(self, model: Model) -> PlanRecord | None:
        raw = self.last_metadata(model, PLAN_RECORD_METADATA)
        return None if raw is None else decode_plan_record(raw, self.label)

    def last_metadata(self, model: Model, name: str) -> bytes | None:
        """The bytes of the last metadata entry with this name (None: there is none)."""
        # TFLM checks every entry with this exact name; the last one wins. Only that one is
        # read: thousands of entries naming one large buffer must not copy it thousands of times.
        named = [e for e in model.metadata if e.name == name]
        for entry in named:
            if not 0 <= entry.buffer < len(model.buffers):
                raise self.fail(
                    f"metadata '{name}' names buffer {entry.buffer}, "
                    f"out of range (model has {len(model.buffers)} buffers)"
                )
        if not named:
            return None
        return model.buffer_bytes(named[-1].buffer)


def read_quantization_scales(model: Model, subgraph: int, tensor: int) -> tuple[float, ...]:
    """Model + (subgraph, tensor) → every quantization scale of that tensor (the IR keeps one)."""
    return _quantization_vector(model, subgraph, tensor, _QuantizationSlots.SCALE, "f")


def read_quantization_zero_points(model: Model, subgraph: int, tensor: int) -> tuple[int, ...]:
    """Model + (subgraph, tensor) → every quantization zero point of that tensor (the IR keeps
    the first)."""
    return _quantization_vector(model, subgraph, tensor, _QuantizationSlots.ZERO_POINT, "q")


def read_quantization_zero_points_of(
    model: Model, subgraph: int, tensors: Sequence[int]
) -> tuple[tuple[int, ...], ...]:
    """read_quantization_zero_points of several tensors of one subgraph, reaching the subgraph
    once (a check reads every per-channel convolution filter's)."""
    fb_subgraph = _Parser(model.data, model.source).root().table_at(_ModelSlots.SUBGRAPHS, subgraph)
    found = []
    for tensor in tensors:
        quantization = fb_subgraph.table_at(_SubgraphSlots.TENSORS, tensor).table(
            _TensorSlots.QUANTIZATION
        )
        data, length = (
            quantization.vector(_QuantizationSlots.ZERO_POINT, 8) if quantization else (0, 0)
        )
        found.append(struct.unpack_from(f"<{length}q", model.data, data) if length else ())
    return tuple(found)


def _quantization_vector(
    model: Model, subgraph: int, tensor: int, slot: int, code: str
) -> tuple[Any, ...]:
    """One vector of a tensor's QuantizationParameters, its elements of struct `code`."""
    parser = _Parser(model.data, model.source)
    fb_tensor = (
        parser.root()
        .table_at(_ModelSlots.SUBGRAPHS, subgraph)
        .table_at(_SubgraphSlots.TENSORS, tensor)
    )
    quantization = fb_tensor.table(_TensorSlots.QUANTIZATION)
    if quantization is None:
        return ()
    data, length = quantization.vector(slot, struct.calcsize(code))
    return tuple(struct.unpack_from(f"<{length}{code}", model.data, data)) if length else ()


def read_dims_entry(model: Model, subgraph: int, tensor: int, index: int) -> int | None:
    """Model + (subgraph, tensor) → the int32 a kernel reads as `dims->data[index]` while the
    tensor's dims are the file's: TFLM points them at the shape vector in the model file
    (FlatBufferVectorToTfLiteTypeArray, little-endian), so an index past the rank reads the bytes
    that follow it. None when the tensor has no shape vector or those bytes lie outside the
    file."""
    parser = _Parser(model.data, model.source)
    fb_tensor = (
        parser.root()
        .table_at(_ModelSlots.SUBGRAPHS, subgraph)
        .table_at(_SubgraphSlots.TENSORS, tensor)
    )
    start, _ = fb_tensor.vector(_TensorSlots.SHAPE, 4)
    position = start + 4 * index
    if not start or index < 0 or position + 4 > len(model.data):
        return None
    value: int = struct.unpack_from("<i", model.data, position)[0]
    return value


def read_custom_options(model: Model, subgraph: int, operator: int) -> bytes:
    """Model + (subgraph, operator) → the operator's raw `custom_options` bytes (b"" when it has
    none), in the FlatBuffer or, for models over 2 GB, stored after it; ModelError when they
    point outside the file."""
    parser = _Parser(model.data, model.source)
    try:
        fb_operator = (
            parser.root()
            .table_at(_ModelSlots.SUBGRAPHS, subgraph)
            .table_at(_SubgraphSlots.OPERATORS, operator)
        )
        data, length = fb_operator.vector(_OperatorSlots.CUSTOM_OPTIONS, 1)
        if not data:
            data = fb_operator.u64(_OperatorSlots.LARGE_CUSTOM_OPTIONS_OFFSET)
            length = fb_operator.u64(_OperatorSlots.LARGE_CUSTOM_OPTIONS_SIZE)
            if data <= 1 or data + length > len(model.data):
                # 0 and 1 are the schema's "not stored outside" markers.
                return b""
    except _MALFORMED as error:
        raise parser.fail(
            f"operator {operator} of subgraph {subgraph}: custom options: {error}"
        ) from None
    return bytes(model.data[data : data + length])


__all__ = [
    "FILE_IDENTIFIER",
    "OFFLINE_PLAN_METADATA",
    "load_model",
    "parse_model",
]
