"""The reader's most numerous tables, Tensor and Buffer, each read in one frame.

A model has about as many buffers as tensors, and a check reads every tensor's shape, type,
buffer and quantization: a call per field, or a row per table made and unpacked again, would
cost more than the reads. So each loop walks its [Table] vector itself: a table is one
`struct.unpack_from` of the fields its vtable lays out (made once per vtable, `tables.table_layout`;
the tables of one vector share a handful), the soffset read with them tells whether the next table
uses the same vtable, and each field is taken from that read where its layout put it.

The few lines that change vtables are repeated in each loop (here and `operator_tables`), not
called: a shared function costs a call per change, and tables of one vector change often
(mobilenet_v2's tensors 131 times in 212, VWW's operators 29 in 31): callgrind measured +0.7%
(VWW) and +1.3% (mobilenet_v2) per read with one. What they share, the layout made when a
vtable is first seen, is `tables.table_layout`.

These loops check as they go, so the first fault they meet in a file with several may not be the
one the reader names: every table of a vector is checked before any of its vectors is read
(`tables.read_tables`). The reader runs them first and, when one fails, reads in that order to
name the same fault (`reader._Parser.subgraph`).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, Protocol

from arenalens.ir import (
    DTYPES,
    BufferRef,
    Quantization,
    Tensor,
    TensorKind,
    check_shape_size,
    dtype_for_code,
)
from arenalens.tflite.tables import (
    COUNT_AND_4_INT32,
    LONG_VECTOR,
    SHORT_DIMS,
    KnownLayouts,
    MalformedTableError,
    TableLayout,
    TableReader,
    field_places,
    field_reader,
    fields_outside,
    int32s_of_row,
    remember,
    shared_table_fields,
    string_at,
    table_layout,
    table_positions,
    target_at,
    vector_at,
    vtable_bytes,
)
from arenalens.units import format_bytes_exact

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
# A vector's length and first element, in one read.
_COUNT_F32 = struct.Struct("<If")
_COUNT_I64 = struct.Struct("<Iq")

# The fields the loops read, as `tables.field_reader` takes them: (index in the vtable, struct
# format), in the order the loops name them.
BUFFER_FIELDS = ((0, "I"), (1, "Q"), (2, "Q"))  # data, offset, size
# shape, type, buffer, name, quantization, is_variable, shape_signature
TENSOR_FIELDS = ((0, "I"), (1, "b"), (2, "I"), (3, "I"), (4, "I"), (5, "B"), (7, "I"))
# scale, zero_point, quantized_dimension
QUANTIZATION_FIELDS = ((2, "I"), (3, "I"), (6, "i"))
# A quantization table's reader: the unpack of `QUANTIZATION_FIELDS` (led by the soffset), where
# each field lands in what it returns (`tables.field_places`: scale, zero_point, axis), then the
# offsets of the scale and zero point fields (0: absent), bound together when the vtable changes.
QuantizationReader = tuple[Any, int, int, int, int, int]
# The tensor fields that point elsewhere (shape, name, quantization, shape_signature) and
# sparsity, whose offsets the loop adds to the row's (`tables.table_layout`).
TENSOR_OFFSETS = (0, 3, 4, 7, 6)


class TensorReader(TableReader, Protocol):
    """The reader as the tensor loop uses it: with the shapes and quantization layouts its
    subgraphs share."""

    small_shapes: dict[tuple[int, ...], tuple[int, ...]]
    quantization_readers: dict[int, QuantizationReader]


# Each table type's layouts by their vtable's bytes, across files (`tables.table_layout`).
_BUFFER_LAYOUTS: KnownLayouts = {}
_TENSOR_LAYOUTS: KnownLayouts = {}
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


def read_buffers(parser: TableReader, vector: tuple[int, int]) -> tuple[BufferRef, ...]:
    """The model's buffers vector (from `vector_at`) → where each buffer's bytes are."""
    buf, size = parser.data, parser.size
    unpack_u32 = _U32.unpack_from
    new = tuple.__new__  # the records are NamedTuples: made as tuples, without __new__'s call
    layouts: dict[int, TableLayout] = {}
    # The previous table's vtable, its unpack, where the fields land and the data field's offset.
    vtable: int | None = None
    unpack: Callable[[Any, int], tuple[Any, ...]] = _I32.unpack_from
    data_at = offset_at = size_at = data_field = 0
    last_word = size - 4
    found = []
    for index, pos in enumerate(table_positions(buf, *vector)):
        try:
            row = unpack(buf, pos)  # read: the soffset at least lies in the file
            same = pos - row[0] == vtable
        except struct.error:
            row, same = (), False
        if not same:
            # Another vtable than the previous table's: its layout, made when first seen.
            layout = layouts.get(pos - row[0]) if row else None
            if layout is None:
                layout = table_layout(
                    buf, size, pos, BUFFER_FIELDS, layouts, offsets_of=(0,), known=_BUFFER_LAYOUTS
                )
            vtable, _, unpack, (data_at, offset_at, size_at, data_field) = layout
            try:
                row = unpack(buf, pos)
            except struct.error:
                raise fields_outside(pos) from None
        # Offset 1 is the converter's placeholder for "not written yet": no data.
        if offset_at and row[offset_at] > 1:
            external_offset = row[offset_at]
            external_size = row[size_at] if size_at else 0
            if external_offset + external_size > size:
                raise parser.fail(
                    f"buffer {index}: external data [{external_offset}, "
                    f"{external_offset + external_size}) lies beyond the end of the file "
                    f"({format_bytes_exact(size)})"
                )
            found.append(new(BufferRef, (index, external_offset, external_size, True)))
        elif data_at:
            # `tables.vector_at` inline: data is the file's most numerous vector.
            start = pos + data_field + row[data_at]
            try:
                length = unpack_u32(buf, start)[0]
            except struct.error:  # the length lies past the end of the file
                length = size
            if start + length > last_word:
                vector_at(buf, size, pos + data_field, 1)  # raises its error
            found.append(new(BufferRef, (index, start + 4, length, False)))
        else:
            found.append(new(BufferRef, (index, 0, 0, False)))
    return tuple(found)


def read_tensors(
    parser: TensorReader,
    vector: tuple[int, int],
    buffers: tuple[BufferRef, ...],
    inputs: set[int],
    outputs: set[int],
    *,
    where: str,
    ready: set[int],
) -> tuple[Tensor, ...]:
    """A subgraph's tensors vector (from `vector_at`) → its Tensors; the indices of the constant
    and variable ones added to `ready` (what an operator may read before any writes it: the
    reader's proof of data order, `operator_tables.read_operators`).

    The shape and the name are read here with the bounds `tables.vector_at` checks; when one
    fails, that function reads the same field again to raise its own error."""
    buf, size = parser.data, parser.size
    last_word = size - 4  # the highest position a u32 may start at
    buffer_count = len(buffers)
    has_bytes = [ref.nbytes > 0 for ref in buffers]
    unpack_u32 = _U32.unpack_from
    unpack_i32 = _I32.unpack_from
    unpack_count_f32, unpack_count_i64 = _COUNT_F32.unpack_from, _COUNT_I64.unpack_from
    unpack_count_4i32 = COUNT_AND_4_INT32.unpack_from
    dims = SHORT_DIMS
    layouts: dict[int, TableLayout] = {}
    # The previous tensor table's vtable and unpack, where its fields land in the unpacked row
    # and the offsets of the fields that point elsewhere (`TENSOR_OFFSETS`).
    vtable: int | None = None
    unpack: Callable[[Any, int], tuple[Any, ...]] = unpack_i32
    shape_at = type_at = buffer_at = name_at = quantization_at = variable_at = signature_at = 0
    shape_field = name_field = quantization_field = signature_field = 0
    has_sparsity = False
    quantization_readers = parser.quantization_readers
    # The last quantization table's vtable (None: none read yet) and its reader.
    quantization_vtable: int | None = None
    unpack_quantization = unpack_i32
    scale_place = zero_point_place = axis_place = scale_field = zero_point_field = 0
    dtypes = _DTYPES
    # The kinds in locals: an enum member read from its class costs as much as a field read.
    constant, variable_kind, input_kind, output_kind, intermediate = _KINDS
    # Shapes already checked small (`ir.check_shape_size` passes them for any type), each
    # kept once: converters repeat a few activation shapes across a model.
    small_shapes = parser.small_shapes
    new = tuple.__new__  # as in `read_buffers`
    # `parser.charge`, kept in locals over the loop (two charges per tensor).
    items, item_budget = parser.items, parser.item_budget
    ready_add = ready.add
    found = []
    for index, pos in enumerate(table_positions(buf, *vector)):
        try:
            row = unpack(buf, pos)  # read: the soffset at least lies in the file
            same = pos - row[0] == vtable
        except struct.error:
            row, same = (), False
        if not same:
            # Another vtable than the previous table's: its layout, made when first seen.
            layout = layouts.get(pos - row[0]) if row else None
            if layout is None:
                layout = table_layout(
                    buf,
                    size,
                    pos,
                    TENSOR_FIELDS,
                    layouts,
                    offsets_of=TENSOR_OFFSETS,
                    known=_TENSOR_LAYOUTS,
                )
            vtable, _, unpack, places = layout
            try:
                row = unpack(buf, pos)
            except struct.error:
                raise fields_outside(pos) from None
            (
                shape_at,
                type_at,
                buffer_at,
                name_at,
                quantization_at,
                variable_at,
                signature_at,
                shape_field,
                name_field,
                quantization_field,
                signature_field,
                sparsity_field,
            ) = places
            has_sparsity = sparsity_field != 0
        shape: tuple[int, ...]
        if shape_at:
            # `tables.int32s_of_row`'s first read inline (a shape has at most 4 dims but in
            # rare models): its length and dims in one unpack.
            try:
                head = unpack_count_4i32(buf, pos + shape_field + row[shape_at])
            except struct.error:
                head = LONG_VECTOR
            try:
                shape = head[dims[head[0]]]
            except IndexError:  # more than 4 dims
                shape = int32s_of_row(buf, size, pos + shape_field, row[shape_at])
        else:
            shape = ()
        # Without a shape_signature the shape is fully known: report it as the signature,
        # as the TFLite interpreter's tensor details do.
        if signature_at:
            # As the shape.
            try:
                head = unpack_count_4i32(buf, pos + signature_field + row[signature_at])
            except struct.error:
                head = LONG_VECTOR
            try:
                signature = head[dims[head[0]]]
            except IndexError:
                signature = int32s_of_row(buf, size, pos + signature_field, row[signature_at])
            items += len(signature)
        else:
            signature = shape
        items += len(shape)
        if items > item_budget:
            parser.charge(items - parser.items)
        code = row[type_at] if type_at else 0
        dtype = dtypes[code] or dtype_for_code(code)
        buffer_index = row[buffer_at] if buffer_at else 0
        # With no buffers at all, only the default index 0 ("no data") is meaningful.
        if buffer_index >= buffer_count:
            if buffer_index:
                raise parser.fail(
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
                check_shape_size(parser.label, where, index, shape, dtype.element_bytes or 1)
            else:
                small_shapes[shape] = shape
        if name_at:
            start = pos + name_field + row[name_at]
            try:
                end = start + 4 + unpack_u32(buf, start)[0]
            except struct.error:  # the length lies past the end of the file
                end = size + 1
            if end > size:
                string_at(buf, size, pos + name_field)  # raises its error
            try:
                name = buf[start + 4 : end].decode()  # UTF-8: the defaults' fast path
            except UnicodeDecodeError:
                name = str(buf[start + 4 : end], "utf-8", "replace")
            items += (end - start - 4) >> 3
            if items > item_budget:
                parser.charge(items - parser.items)
        else:
            name = ""
        quantization = None
        if quantization_at:
            # The QuantizationParameters table → the first scale and zero point, their count
            # and the axis (None without scales); read here, as the tensor (one per tensor).
            table = pos + quantization_field + row[quantization_at]
            # As the tensor tables: the previous table's reader reads the soffset too, so a
            # table using the same vtable is one unpack.
            try:
                read = unpack_quantization(buf, table)
                switched = table - read[0] != quantization_vtable
            except struct.error:
                if table > last_word:
                    target_at(buf, size, pos + quantization_field)  # raises its error
                read, switched = (), True
            if switched:
                # The first value is the soffset, whichever reader read it.
                quantization_vtable = table - (read or unpack_i32(buf, table))[0]
                known = quantization_readers.get(quantization_vtable)
                if known is None:
                    known = quantization_readers[quantization_vtable] = _quantization_reader(
                        buf, size, table, quantization_vtable, parser.vtables
                    )
                (
                    unpack_quantization,
                    scale_place,
                    zero_point_place,
                    axis_place,
                    scale_field,
                    zero_point_field,
                ) = known
                try:
                    read = unpack_quantization(buf, table)
                except struct.error:
                    raise MalformedTableError(
                        f"fields of table at {table} lie outside the file"
                    ) from None
            # Each field where the reader put it (`tables.field_places`), read only when
            # present: the axis defaults to 0.
            axis = read[axis_place] if axis_place else 0
            if scale_field:
                start = table + scale_field + read[scale_place]
                try:  # count and first scale in one read
                    scale_count, scale = unpack_count_f32(buf, start)
                except struct.error:  # (a count past the end fails the check below)
                    scale_count = unpack_u32(buf, start)[0] if start <= last_word else size
                    scale = None
                if start + 4 * scale_count > last_word:
                    vector_at(buf, size, table + scale_field, 4)  # raises its error
                if scale_count:
                    if zero_point_field:
                        start = table + zero_point_field + read[zero_point_place]
                        try:  # count and first zero point in one read
                            zero_count, zero_point = unpack_count_i64(buf, start)
                        except struct.error:
                            zero_count = size if start > last_word else unpack_u32(buf, start)[0]
                        if start + 8 * zero_count > last_word:
                            vector_at(buf, size, table + zero_point_field, 8)  # raises its error
                        if not zero_count:
                            zero_point = None
                    else:
                        zero_point = None
                    quantization = new(Quantization, (scale, zero_point, scale_count, axis))
            if zero_point_field and quantization is None:
                # Zero points without scales: the IR keeps no quantization, but the LiteRT
                # loader's count check reads the vector (`quantization_counts`), so its extent
                # is checked here as every other vector's is.
                vector_at(buf, size, table + zero_point_field, 8)
        is_input, is_output = index in inputs, index in outputs
        variable = row[variable_at] if variable_at else 0
        # One kind per tensor, most specific first (`TensorKind`).
        if has_data:
            kind = constant
            ready_add(index)
        elif variable:
            kind = variable_kind
            ready_add(index)
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
                    has_sparsity,
                ),
            )
        )
    parser.items = items
    return tuple(found)


# Quantization readers by their vtable's bytes, across files (as `tables.table_layout`'s).
_QUANTIZATION_READERS: dict[bytes, QuantizationReader] = {}


def _quantization_reader(
    buf: Any, size: int, table: int, vtable: int, vtables: dict[int, tuple[int, ...]]
) -> QuantizationReader:
    """The quantization table at `table` (in the file), its vtable at `vtable` → that vtable's
    reader (`QuantizationReader`), made once per vtable's bytes."""
    content = vtable_bytes(buf, size, vtable)
    known = _QUANTIZATION_READERS.get(content) if content is not None else None
    if known is not None:
        return known
    fields = shared_table_fields(buf, table, size, vtables)
    scale_place, zero_point_place, axis_place = field_places(fields, QUANTIZATION_FIELDS, lead=True)
    made = (
        field_reader(fields, QUANTIZATION_FIELDS, lead=True)[0],
        scale_place,
        zero_point_place,
        axis_place,
        fields[2],
        fields[3],
    )
    if content is not None:
        remember(_QUANTIZATION_READERS, content, made)
    return made
