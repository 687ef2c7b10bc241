"""A lean, bounds-checked view of one FlatBuffer table, for the reader's hot loops.

The `tflite` package's generated accessors cost about six Python calls per field (vtable lookup,
type enforcement, unpack). A 20,000-operator model has ~100,000 tensor and operator tables of
about ten fields each, so the reader reads those two table types through this view instead: the
vtable is located once per table and each field is one `struct.unpack_from`. Field slots are the
schema's (the same numbers the generated `tflite.Tensor` / `tflite.Operator` code uses). Every
other table is still read through the `tflite` package.
"""

from __future__ import annotations

import struct
from functools import cache
from typing import Any

_U8 = struct.Struct("<B")
_I8 = struct.Struct("<b")
_U16 = struct.Struct("<H")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_F32 = struct.Struct("<f")
_I64 = struct.Struct("<q")
_VTABLE_HEADER_BYTES = 4
# Fields read per table, at most: the schema tables the reader walks have fewer than 20, and a
# hostile vtable may claim 32,767 (its size is a u16) shared by thousands of tables.
MAX_FIELDS = 64


@cache
def _field_struct(vtable_bytes: int) -> struct.Struct:
    """vtable size in bytes → the Struct that unpacks its field offsets."""
    return struct.Struct(f"<{max(vtable_bytes - 4, 0) // 2}H")


class MalformedTableError(ValueError):
    """A table, vtable or vector lies outside the file."""


class TableView:
    """One table: `pos` is its start; field(slot) → absolute position of the field or 0."""

    __slots__ = ("buf", "fields", "pos", "size")

    def __init__(self, buf: Any, pos: int, size: int) -> None:
        if not 0 <= pos <= size - 4:
            raise MalformedTableError(f"table at {pos} outside the file")
        vtable = pos - _I32.unpack_from(buf, pos)[0]
        if not 0 <= vtable <= size - _VTABLE_HEADER_BYTES:
            raise MalformedTableError(f"vtable of table {pos} at {vtable} outside the file")
        vtable_bytes = _U16.unpack_from(buf, vtable)[0]
        if vtable + vtable_bytes > size:
            raise MalformedTableError(f"vtable of table {pos} runs past the end of the file")
        self.buf = buf
        self.size = size
        self.pos = pos
        # All field offsets at once: one unpack per table instead of one per field read; fields
        # past MAX_FIELDS are never read, so they are not unpacked either.
        vtable_bytes = min(vtable_bytes, _VTABLE_HEADER_BYTES + 2 * MAX_FIELDS)
        self.fields: tuple[int, ...] = _field_struct(vtable_bytes).unpack_from(buf, vtable + 4)

    def field(self, slot: int) -> int:
        """Absolute position of a field, or 0 when absent (default value)."""
        index = (slot - 4) >> 1
        if index >= len(self.fields):
            return 0
        relative = self.fields[index]
        return self.pos + relative if relative else 0

    def i32(self, slot: int, default: int = 0) -> int:
        """A 32-bit signed scalar field."""
        position = self.field(slot)
        return _I32.unpack_from(self.buf, position)[0] if position else default

    def u32(self, slot: int, default: int = 0) -> int:
        """A 32-bit unsigned scalar field."""
        position = self.field(slot)
        return _U32.unpack_from(self.buf, position)[0] if position else default

    def u64(self, slot: int, default: int = 0) -> int:
        """A 64-bit unsigned scalar field."""
        position = self.field(slot)
        return _U64.unpack_from(self.buf, position)[0] if position else default

    def first_float(self, slot: int) -> tuple[float | None, int]:
        """(first element, length) of a [float] field; (None, 0) when absent or empty."""
        data, length = self.vector(slot, 4)
        return (_F32.unpack_from(self.buf, data)[0] if length else None), length

    def first_int64(self, slot: int) -> tuple[int | None, int]:
        """(first element, length) of a [long] field; (None, 0) when absent or empty."""
        data, length = self.vector(slot, 8)
        return (_I64.unpack_from(self.buf, data)[0] if length else None), length

    def i8(self, slot: int, default: int = 0) -> int:
        """An 8-bit signed scalar field (enums such as TensorType)."""
        position = self.field(slot)
        return _I8.unpack_from(self.buf, position)[0] if position else default

    def u8(self, slot: int, default: int = 0) -> int:
        """An 8-bit unsigned scalar field (bools, union types)."""
        position = self.field(slot)
        return _U8.unpack_from(self.buf, position)[0] if position else default

    def target(self, slot: int) -> int:
        """Position a uoffset field points to (a table, vector or string), or 0 when absent."""
        position = self.field(slot)
        if not position:
            return 0
        pointed: int = position + _U32.unpack_from(self.buf, position)[0]
        if pointed > self.size - 4:
            raise MalformedTableError(f"offset at {position} points outside the file")
        return pointed

    def vector(self, slot: int, element_bytes: int) -> tuple[int, int]:
        """(data start, length) of a vector field; (0, 0) when absent. Checks it fits the file."""
        start = self.target(slot)
        if not start:
            return 0, 0
        length: int = _U32.unpack_from(self.buf, start)[0]
        data = start + 4
        if data + length * element_bytes > self.size:
            raise MalformedTableError(
                f"vector at {start} claims {length:,} entries but the file has only "
                f"{self.size:,} bytes"
            )
        return data, length

    def int32_vector(self, slot: int) -> tuple[int, ...] | None:
        """A [int] field as a tuple; None when absent."""
        data, length = self.vector(slot, 4)
        if not data:
            return None
        return struct.unpack_from(f"<{length}i", self.buf, data)

    def string(self, slot: int) -> str:
        """A string field decoded as UTF-8 (invalid bytes replaced); '' when absent."""
        data, length = self.vector(slot, 1)
        if not data:
            return ""
        return bytes(self.buf[data : data + length]).decode("utf-8", errors="replace")

    def table(self, slot: int) -> TableView | None:
        """A sub-table field, or None when absent."""
        start = self.target(slot)
        return TableView(self.buf, start, self.size) if start else None

    def tables(self, slot: int) -> list[TableView]:
        """A [Table] vector field as views (empty when absent)."""
        data, length = self.vector(slot, 4)
        offsets = struct.unpack_from(f"<{length}I", self.buf, data) if length else ()
        return [
            TableView(self.buf, data + 4 * index + offset, self.size)
            for index, offset in enumerate(offsets)
        ]
