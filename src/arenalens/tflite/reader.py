"""FlatBuffer reader: .tflite path or bytes → checked `ir.Model`, without TensorFlow.

The file is memory-mapped, never copied: weights stay in the map and the IR records where each
buffer's bytes are. Every vector length is checked against the file size before it is walked, so a
small hostile file cannot claim millions of entries; any malformed read becomes a `ModelError`.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arenalens.errors import ModelError
from arenalens.ir import (
    CONTROL_FLOW_OPTION_FIELDS,
    DTYPES,
    BufferRef,
    Metadata,
    Model,
    OfflinePlan,
    Operator,
    PlanRecord,
    Quantization,
    SignatureDef,
    Subgraph,
    Tensor,
    TensorKind,
    check_model,
    check_shape_size,
    dtype_for_code,
)
from arenalens.tflite.files import map_file, other_format
from arenalens.tflite.offline_plan import (
    OFFLINE_PLAN_METADATA,
    decode_offline_plan,
    encode_offline_plan,
)
from arenalens.tflite.opcodes import (
    LazyOptions,
    OptionReaders,
    OptionsKey,
    builtin_name,
    eager_options,
)
from arenalens.tflite.plan_record import PLAN_RECORD_METADATA, decode_plan_record
from arenalens.tflite.tables import (
    COUNT_AND_4_INT32,
    LONG_VECTOR,
    MalformedTableError,
    TableView,
    field_places,
    field_reader,
    int32_vector_at,
    int32s_of_row,
    read_tables,
    shared_table_fields,
    string_at,
    target_at,
    vector_at,
)
from arenalens.units import format_bytes_exact

_U32 = struct.Struct("<I")


_I32 = struct.Struct("<i")
# A vector's length and first element, in one read.
_COUNT_F32 = struct.Struct("<If")
_COUNT_I64 = struct.Struct("<Iq")

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
# Dims below this, at most 4 of them, cannot make a tensor too large (`ir.check_shape_size`).
_SMALL_DIM = 1 << 14
# `ir.DTYPES` by the type byte (a signed int8) as a subscript of a 256-entry tuple: a negative
# code indexes from its end, as -1 is 255 (a subscript costs less than a dict's get call); None
# for codes the schema does not name. Then the tensor kinds, in the order the loop tests them.
_DTYPES = tuple(DTYPES.get(byte if byte < 128 else byte - 256) for byte in range(256))
_KINDS = (
    TensorKind.CONSTANT,
    TensorKind.VARIABLE,
    TensorKind.INPUT,
    TensorKind.OUTPUT,
    TensorKind.INTERMEDIATE,
)
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
    path = Path(source)
    label = str(source)
    data = map_file(path, label)
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
    try:
        model = _Parser(data, label).model()
    except ModelError:
        raise
    except _MALFORMED as error:
        raise ModelError(label, f"malformed FlatBuffer ({type(error).__name__}: {error})") from None
    except MemoryError:
        raise ModelError(label, "malformed FlatBuffer (implausible sizes)") from None
    check_model(model, strict=strict)
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


# The fields the reader's hot loops read, as `tables.read_tables` takes them: (index in the
# vtable, struct format), in the order the loops unpack them.
_BUFFER_FIELDS = ((0, "I"), (1, "Q"), (2, "Q"))  # data, offset, size
# shape, type, buffer, name, quantization, is_variable, shape_signature
_TENSOR_FIELDS = ((0, "I"), (1, "b"), (2, "I"), (3, "I"), (4, "I"), (5, "B"), (7, "I"))
# scale, zero_point, quantized_dimension
_QUANTIZATION_FIELDS = ((2, "I"), (3, "I"), (6, "i"))
# opcode_index, inputs, outputs, builtin_options_type, builtin_options, intermediates,
# builtin_options_2_type, builtin_options_2
_OPERATOR_FIELDS = tuple(zip((0, 1, 2, 3, 4, 8, 11, 12), "IIIBIIBI", strict=True))
# deprecated_builtin_code, custom_code, version, builtin_code
_OPERATOR_CODE_FIELDS = ((0, "b"), (1, "I"), (2, "i"), (3, "i"))
TableRow = tuple[int, tuple[int, ...], Any]
# An operator code: (name, builtin code, the builtin_code field, custom code, version).
OpcodeRow = tuple[str, int, int, str | None, int]
# A quantization table's vtable → its field offsets, the unpack of `_QUANTIZATION_FIELDS` and
# where each lands in what it returns (`tables.field_places`).
QuantizationReader = tuple[tuple[int, ...], Any, tuple[int, ...]]


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
        buffers = self.buffers(read_tables(self.data, self.size, *buffer_vector, _BUFFER_FIELDS))
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

    def buffers(self, rows: list[TableRow]) -> tuple[BufferRef, ...]:
        """Buffer tables (position, field offsets, `_BUFFER_FIELDS`) → where each one's bytes
        are, each read in this frame (a model has about as many buffers as tensors)."""
        buf, size = self.data, self.size
        unpack_u32 = _U32.unpack_from
        new = tuple.__new__  # the records are NamedTuples: made as tuples, without __new__'s call
        found = []
        for index, (pos, fields, (data_offset, external_offset, external_size)) in enumerate(rows):
            # Offset 1 is the converter's placeholder for "not written yet": no data.
            if external_offset > 1:
                if external_offset + external_size > size:
                    raise self.fail(
                        f"buffer {index}: external data [{external_offset}, "
                        f"{external_offset + external_size}) lies beyond the end of the file "
                        f"({format_bytes_exact(size)})"
                    )
                found.append(new(BufferRef, (index, external_offset, external_size, True)))
                continue
            start = length = 0
            if fields[0]:
                # `tables.vector_at` inline: data is the file's most numerous vector.
                start = pos + fields[0] + data_offset
                try:
                    length = unpack_u32(buf, start)[0]
                except struct.error:  # the length lies past the end of the file
                    length = size
                if start + 4 + length > size:
                    vector_at(buf, size, pos + fields[0], 1)  # raises its error
                start += 4
            found.append(new(BufferRef, (index, start, length, False)))
        return tuple(found)

    def opcodes(self, vector: tuple[int, int]) -> tuple[OpcodeRow, ...]:
        """The operator codes vector (from `vector_at`) → each code as the operators read it, its
        inline fields in one unpack (`_OPERATOR_CODE_FIELDS`; an absent version is 1)."""
        buf, size = self.data, self.size
        found = []
        # Builtin codes already read, by their fields: some writers give every operator a code
        # of its own (mobilenet_v2 224: 84 codes of 8 operators).
        builtins: dict[tuple[int, int, int], OpcodeRow] = {}
        for pos, fields, (deprecated, _, version, raw) in read_tables(
            buf, size, *vector, _OPERATOR_CODE_FIELDS
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
        tensor_rows = read_tables(buf, size, *tensor_vector, _TENSOR_FIELDS)
        operator_rows = read_tables(buf, size, *operator_vector, _OPERATOR_FIELDS)
        tables = 1 + len(tensor_rows) + len(operator_rows)
        self.charge(TABLE_ITEMS * tables + len(inputs) + len(outputs))
        tensors = self.tensors(tensor_rows, buffers, set(inputs), set(outputs), where)
        operators = self.operators(operator_rows, opcodes, where)
        return Subgraph(
            index=index,
            name=self.text(fb, _SubgraphSlots.NAME),
            tensors=tensors,
            operators=operators,
            inputs=inputs,
            outputs=outputs,
        )

    def tensors(
        self,
        rows: list[TableRow],
        buffers: tuple[BufferRef, ...],
        inputs: set[int],
        outputs: set[int],
        where: str,
    ) -> tuple[Tensor, ...]:
        """Tensor tables (position, field offsets, `_TENSOR_FIELDS`) → Tensors, each read in this
        one frame (a model's most numerous table: a call per field would cost more than the
        reads).

        The shape and the name are read here with the bounds `tables.vector_at` checks; when one
        fails, that function reads the same field again to raise its own error."""
        buf, size = self.data, self.size
        last_word = size - 4  # the highest position a u32 may start at
        buffer_count = len(buffers)
        has_bytes = [ref.nbytes > 0 for ref in buffers]
        unpack_u32 = _U32.unpack_from
        unpack_i32 = _I32.unpack_from
        unpack_count_f32, unpack_count_i64 = _COUNT_F32.unpack_from, _COUNT_I64.unpack_from
        unpack_count_4i32 = COUNT_AND_4_INT32.unpack_from
        quantization_readers = self.quantization_readers
        # The last quantization table's vtable (None: none read yet) and its reader.
        quantization_vtable: int | None = None
        unpack_quantization: Any = unpack_i32
        scale_place = zero_point_place = axis_place = 0
        dtypes = _DTYPES
        # The kinds in locals: an enum member read from its class costs as much as a field read.
        constant, variable_kind, input_kind, output_kind, intermediate = _KINDS
        # Shapes already checked small (`ir.check_shape_size` passes them for any type), each
        # kept once: converters repeat a few activation shapes across a model.
        small_shapes = self.small_shapes
        new = tuple.__new__  # as in `buffers`
        # `charge`, kept in locals over the loop (two charges per tensor).
        items, item_budget = self.items, self.item_budget
        found = []
        for index, (pos, fields, row) in enumerate(rows):
            shape_offset, code, buffer_index, name_offset, quant_offset, variable, sig_offset = row
            shape: tuple[int, ...] = ()
            if fields[0]:
                # `tables.int32s_of_row`'s first read inline (a shape has at most 4 dims but in
                # rare models): its length and dims in one unpack.
                try:
                    head = unpack_count_4i32(buf, pos + fields[0] + shape_offset)
                except struct.error:
                    head = LONG_VECTOR
                if head[0] <= 4:
                    shape = head[1 : head[0] + 1]
                else:
                    shape = int32s_of_row(buf, size, pos + fields[0], shape_offset)
            # Without a shape_signature the shape is fully known: report it as the signature,
            # as the TFLite interpreter's tensor details do.
            signature = shape
            if fields[7]:
                signature = int32s_of_row(buf, size, pos + fields[7], sig_offset)
                items += len(signature)
            items += len(shape)
            if items > item_budget:
                self.charge(items - self.items)
            dtype = dtypes[code] or dtype_for_code(code)
            # With no buffers at all, only the default index 0 ("no data") is meaningful.
            if buffer_index >= buffer_count:
                if buffer_index:
                    raise self.fail(
                        f"{where} tensor {index}: buffer index {buffer_index} out of range "
                        f"(model has {buffer_count} buffers)"
                    )
                has_data = False
            else:
                has_data = has_bytes[buffer_index]
            # At most 4 dims under 2^14 of at most 16 bytes each stay under 2^60: no check needed.
            if shape:
                known_shape = small_shapes.get(shape)
                if known_shape is not None:
                    shape = known_shape
                elif len(shape) > 4 or max(shape) >= _SMALL_DIM:
                    check_shape_size(self.label, where, index, shape, dtype.element_bytes or 1)
                else:
                    small_shapes[shape] = shape
            name = ""
            if fields[3]:
                start = pos + fields[3] + name_offset + 4
                try:
                    end = start + unpack_u32(buf, start - 4)[0]
                except struct.error:  # the length lies past the end of the file
                    end = size + 1
                if end > size:
                    string_at(buf, size, pos + fields[3])  # raises its error
                raw_name = buf[start:end]
                try:
                    name = raw_name.decode()  # UTF-8: the defaults' fast path
                except UnicodeDecodeError:
                    name = str(raw_name, "utf-8", "replace")
                items += (end - start) >> 3
                if items > item_budget:
                    self.charge(items - self.items)
            quantization = None
            if fields[4]:
                # The QuantizationParameters table → the first scale and zero point, their count
                # and the axis (None without scales); read here, as the tensor (one per tensor).
                at = pos + fields[4]
                table = at + quant_offset
                if table > last_word:
                    target_at(buf, size, at)  # raises its error
                # As `tables.read_tables`: the previous table's reader reads the soffset too,
                # so a table using the same vtable is one unpack.
                try:
                    read = unpack_quantization(buf, table)
                except struct.error:
                    read = None
                if read is None or table - read[0] != quantization_vtable:
                    # The first value is the soffset, whichever reader read it.
                    quantization_vtable = table - (read or unpack_i32(buf, table))[0]
                    known = quantization_readers.get(quantization_vtable)
                    if known is None:
                        table_fields = shared_table_fields(buf, table, size, self.vtables)
                        known = quantization_readers[quantization_vtable] = (
                            table_fields,
                            field_reader(table_fields, _QUANTIZATION_FIELDS, lead=True)[0],
                            field_places(table_fields, _QUANTIZATION_FIELDS, lead=True),
                        )
                    table_fields, unpack_quantization, places = known
                    scale_place, zero_point_place, axis_place = places
                    try:
                        read = unpack_quantization(buf, table)
                    except struct.error:
                        raise MalformedTableError(
                            f"fields of table at {table} lie outside the file"
                        ) from None
                # Each field where the reader put it (`tables.field_places`), read only when
                # present: the axis defaults to 0.
                axis = read[axis_place] if axis_place else 0
                if table_fields[2]:
                    at = table + table_fields[2]
                    start = at + read[scale_place]
                    try:  # count and first scale in one read
                        scale_count, scale = unpack_count_f32(buf, start)
                    except struct.error:  # (a count past the end fails the check below)
                        scale_count = unpack_u32(buf, start)[0] if start <= last_word else size
                        scale = None
                    if start + 4 + 4 * scale_count > size:
                        vector_at(buf, size, at, 4)  # raises its error
                    if scale_count:
                        zero_point = None
                        if table_fields[3]:
                            at = table + table_fields[3]
                            start = at + read[zero_point_place]
                            try:  # count and first zero point in one read
                                zero_count, zero_point = unpack_count_i64(buf, start)
                            except struct.error:
                                at_end = start > last_word
                                zero_count = size if at_end else unpack_u32(buf, start)[0]
                            if start + 4 + 8 * zero_count > size:
                                vector_at(buf, size, at, 8)  # raises its error
                            if not zero_count:
                                zero_point = None
                        quantization = new(Quantization, (scale, zero_point, scale_count, axis))
            is_input, is_output = index in inputs, index in outputs
            # One kind per tensor, most specific first (`TensorKind`).
            if has_data:
                kind = constant
            elif variable:
                kind = variable_kind
            elif is_input:
                kind = input_kind
            elif is_output:
                kind = output_kind
            else:
                kind = intermediate
            found.append(
                new(
                    Tensor,
                    (
                        index,
                        name,
                        shape,
                        signature,
                        dtype,
                        buffer_index,
                        has_data,
                        variable != 0,
                        kind,
                        is_input,
                        is_output,
                        quantization,
                        fields[6] != 0,  # has_sparsity
                    ),
                )
            )
        self.items = items
        return tuple(found)

    def operators(
        self,
        rows: list[TableRow],
        opcodes: tuple[OpcodeRow, ...],
        where: str,
    ) -> tuple[Operator, ...]:
        """Operator tables (position, field offsets, `_OPERATOR_FIELDS`) → Operators, each read
        in this frame; the inputs and outputs vectors as `tensors` reads shapes."""
        buf, size, label, cache, vtables = (
            self.data,
            self.size,
            self.label,
            self.options_cache,
            self.vtables,
        )
        last_word = size - 4
        unpack_count_4i32 = COUNT_AND_4_INT32.unpack_from
        option_readers: OptionReaders = {}
        opcode_count = len(opcodes)
        new = tuple.__new__  # as in `buffers`
        # Option tables are shared by position: writers point operators with equal options at
        # one table.
        decoded: dict[OptionsKey, Mapping[str, Any]] = {}
        items, item_budget = self.items, self.item_budget
        found = []
        for index, (pos, fields, values) in enumerate(rows):
            (
                opcode_index,
                inputs_offset,
                outputs_offset,
                options_type,
                options_offset,
                _,
                options2_type,
                options2_offset,
            ) = values
            if opcode_index >= opcode_count:
                raise self.fail(
                    f"{where} operator {index}: opcode index {opcode_index} out of range "
                    f"(model has {opcode_count} operator codes)"
                )
            name, builtin, raw, custom, version = opcodes[opcode_index]
            options_at = options2_at = 0
            if fields[4]:
                options_at = pos + fields[4] + options_offset
                if options_at > last_word:
                    target_at(buf, size, pos + fields[4])  # raises its error
            if fields[12]:
                options2_at = pos + fields[12] + options2_offset
                if options2_at > last_word:
                    target_at(buf, size, pos + fields[12])  # raises its error
            key = ((options_type, options_at), (options2_type, options2_at))
            options = decoded.get(key)
            if options is None:
                # Decoded now when that is bounded (scalars only), else on first use.
                options = eager_options(buf, key, vtables, option_readers)
                if options is None:
                    options = LazyOptions(buf, *key, cache, label, vtables=vtables)
                decoded[key] = options
            called: tuple[int, ...] = ()
            if name in CONTROL_FLOW_OPTION_FIELDS:
                called = _called_subgraphs(name, options)
            # `tables.int32s_of_row`'s first read inline, as `tensors` reads shapes: most
            # operators have at most 4 inputs and 4 outputs.
            inputs: tuple[int, ...] = ()
            if fields[1]:
                try:
                    head = unpack_count_4i32(buf, pos + fields[1] + inputs_offset)
                except struct.error:
                    head = LONG_VECTOR
                if head[0] <= 4:
                    inputs = head[1 : head[0] + 1]
                else:
                    inputs = int32s_of_row(buf, size, pos + fields[1], inputs_offset)
            outputs: tuple[int, ...] = ()
            if fields[2]:
                try:
                    head = unpack_count_4i32(buf, pos + fields[2] + outputs_offset)
                except struct.error:
                    head = LONG_VECTOR
                if head[0] <= 4:
                    outputs = head[1 : head[0] + 1]
                else:
                    outputs = int32s_of_row(buf, size, pos + fields[2], outputs_offset)
            intermediates = int32_vector_at(buf, size, pos + fields[8]) if fields[8] else ()
            items += len(inputs) + len(outputs) + len(intermediates) + len(called)
            if items > item_budget:
                self.charge(items - self.items)
            found.append(
                new(
                    Operator,
                    (
                        index,
                        name,  # opcode
                        builtin,  # builtin_code
                        raw,  # raw_builtin_code
                        custom,  # custom_code
                        version,
                        inputs,
                        outputs,
                        intermediates,
                        options,
                        called,  # called_subgraphs
                        None,  # file_index
                    ),
                )
            )
        self.items = items
        return tuple(found)

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
        return None if raw is None else decode_offline_plan(raw, self.label)

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


def _quantization_vector(
    model: Model, subgraph: int, tensor: int, slot: int, code: str
) -> tuple[Any, ...]:
    """One vector of a tensor's QuantizationParameters, its elements of struct `code`."""
    parser = _Parser(model.data, model.source)
    fb_tensor = (
        parser.root().tables(_ModelSlots.SUBGRAPHS)[subgraph].tables(_SubgraphSlots.TENSORS)[tensor]
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
        parser.root().tables(_ModelSlots.SUBGRAPHS)[subgraph].tables(_SubgraphSlots.TENSORS)[tensor]
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
            .tables(_ModelSlots.SUBGRAPHS)[subgraph]
            .tables(_SubgraphSlots.OPERATORS)[operator]
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


def _called_subgraphs(opcode: str, options: Any) -> tuple[int, ...]:
    fields = CONTROL_FLOW_OPTION_FIELDS.get(opcode, ())
    called: list[int] = []
    for field_name in fields:
        value = options.get(field_name)
        if isinstance(value, tuple):
            called.extend(int(v) for v in value)
        elif isinstance(value, int):
            called.append(value)
    return tuple(called)


__all__ = [
    "FILE_IDENTIFIER",
    "OFFLINE_PLAN_METADATA",
    "decode_offline_plan",
    "encode_offline_plan",
    "load_model",
    "parse_model",
]
