"""A lean, bounds-checked view of one FlatBuffer table, for the reader's hot loops.

The `tflite` package's generated accessors cost about six Python calls per field (vtable lookup,
type enforcement, unpack). A 20,000-operator model has ~100,000 tensor and operator tables of
about ten fields each, so the reader reads them here instead: each vtable layout is compiled once
into one Struct (`field_reader`), so a table's inline fields are one `struct.unpack_from`, and
vectors are read where they are used. Field slots are the schema's (the same numbers the
generated `tflite.Tensor` / `tflite.Operator` code uses).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import cache, lru_cache
from operator import add, itemgetter
from typing import Any, Protocol

from arenalens.units import format_bytes_exact

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


# Field offsets are padded with zeros ("absent") to this many, so reading any slot up to 34 (the
# reader reads up to 28) needs no length check.
_ABSENT = (0,) * 16


@lru_cache(maxsize=1024)
def int32_struct(count: int) -> struct.Struct:
    """Vector length → the Struct that unpacks that many int32 (shapes and index lists repeat a
    few lengths; bounded, since a hostile file may use many)."""
    return struct.Struct(f"<{count}i")


@cache
def _field_struct(vtable_bytes: int) -> struct.Struct:
    """vtable size in bytes → the Struct that unpacks its field offsets."""
    return struct.Struct(f"<{max(vtable_bytes - 4, 0) // 2}H")


class MalformedTableError(ValueError):
    """A table, vtable or vector lies outside the file."""


def table_fields(buf: Any, pos: int, size: int) -> tuple[int, ...]:
    """The table at `pos` → its field offsets relative to `pos` (0: absent), at least 16 of them,
    at most MAX_FIELDS; MalformedTableError when the table or its vtable lies outside the file."""
    if not 0 <= pos <= size - 4:
        raise MalformedTableError(f"table at {pos} outside the file")
    vtable = pos - _I32.unpack_from(buf, pos)[0]
    if not 0 <= vtable <= size - _VTABLE_HEADER_BYTES:
        raise MalformedTableError(f"vtable of table {pos} at {vtable} outside the file")
    vtable_bytes = _U16.unpack_from(buf, vtable)[0]
    if vtable + vtable_bytes > size:
        raise MalformedTableError(f"vtable of table {pos} runs past the end of the file")
    # All field offsets at once: one unpack per table instead of one per field read; fields
    # past MAX_FIELDS are never read, so they are not unpacked either.
    vtable_bytes = min(vtable_bytes, _VTABLE_HEADER_BYTES + 2 * MAX_FIELDS)
    present: tuple[int, ...] = _field_struct(vtable_bytes).unpack_from(buf, vtable + 4)
    return present + _ABSENT[len(present) :]


def shared_table_fields(
    buf: Any, pos: int, size: int, vtables: dict[int, tuple[int, ...]]
) -> tuple[int, ...]:
    """`table_fields`, each vtable read once: writers share one vtable among all tables with the
    same fields, so `vtables` (vtable position → field offsets) keeps those already read."""
    if not 0 <= pos <= size - 4:
        raise MalformedTableError(f"table at {pos} outside the file")
    vtable = pos - _I32.unpack_from(buf, pos)[0]
    fields = vtables.get(vtable)
    if fields is None:
        fields = vtables[vtable] = table_fields(buf, pos, size)
    return fields


# One table type's wanted fields, in the caller's order: (index in the vtable, struct format).
Wanted = tuple[tuple[int, str], ...]
# A vtable's reader for the wanted fields: (unpack, pick, absent): `pick(unpack(buf, pos) +
# absent)` is every wanted field's value in the caller's order, 0 for an absent field.
FieldReader = tuple[
    Callable[[Any, int], tuple[Any, ...]], Callable[[tuple[Any, ...]], Any], tuple[int, ...]
]


# The table's own first field: the soffset to its vtable (`field_reader`'s `lead`).
_LEAD = (0, -1)


@lru_cache(maxsize=512)
def field_reader(
    fields: tuple[int, ...],
    wanted: Wanted,
    defaults: tuple[Any, ...] | None = None,
    *,
    lead: bool = False,
) -> FieldReader:
    """A vtable's field offsets → one reader of the wanted fields of every table using it.

    The present fields are read by one Struct in offset order (pad bytes between them), so a
    table costs one `unpack_from` instead of one per field; `pick` puts the values in the
    caller's order, taking an absent field's value from `absent` (`defaults`, else 0). Writers
    share a vtable among all tables of a type, so a model has a handful; bounded, since a hostile
    file may hold many.

    `lead`: `unpack` also reads the table's soffset to its vtable, first: a loop over tables
    that share a vtable tells from it that the next table uses the same one (`read_tables`)."""
    present = _present(fields, wanted, lead)
    if lead:
        wanted = (*wanted, (-1, "i"))  # the soffset, as the order -1 refers to it
    offsets = [offset for offset, _ in present]
    sizes = [struct.calcsize(f"<{wanted[order][1]}") for _, order in present]
    overlapping = any(offsets[i] + sizes[i] > offsets[i + 1] for i in range(len(offsets) - 1))
    unpack: Callable[[Any, int], tuple[Any, ...]]
    if overlapping:
        # Fields that share bytes (only a hostile vtable does that): one read each.
        readers = [
            (offset, struct.Struct(f"<{wanted[order][1]}").unpack_from) for offset, order in present
        ]

        def unpack(buf: Any, pos: int) -> tuple[Any, ...]:
            return tuple(read(buf, pos + offset)[0] for offset, read in readers)

    else:
        layout, end = ["<"], 0
        for (offset, order), field_size in zip(present, sizes, strict=True):
            layout.append(f"{offset - end}x{wanted[order][1]}")
            end = offset + field_size
        unpack = struct.Struct("".join(layout)).unpack_from
    position = {order: place for place, (_, order) in enumerate(present)}
    # Absent fields come from the tail appended after the present ones.
    places = [position.get(order, len(present) + order) for order in range(len(wanted) - lead)]
    pick: Callable[[tuple[Any, ...]], Any] = itemgetter(*places)
    if len(places) == 1:  # itemgetter of one index gives the value, not a 1-tuple
        pick = itemgetter(slice(places[0], places[0] + 1))
    return unpack, pick, defaults if defaults is not None else (0,) * (len(wanted) - lead)


def _present(fields: tuple[int, ...], wanted: Wanted, lead: bool) -> list[tuple[int, int]]:
    """(offset, order in `wanted`) of the wanted fields present, in the order `field_reader`'s
    unpack returns them (by offset; the soffset first with `lead`)."""
    present = sorted(
        (fields[index], order) for order, (index, _) in enumerate(wanted) if fields[index]
    )
    if lead:
        present.insert(0, _LEAD)
    return present


@lru_cache(maxsize=512)
def field_places(fields: tuple[int, ...], wanted: Wanted, *, lead: bool = False) -> tuple[int, ...]:
    """Where each wanted field is in what `field_reader(fields, wanted, lead=lead)`'s unpack
    returns, 0 for an absent one (with `lead` no present field is at 0): a loop that reads a few
    fields of a table, each only when present, subscripts the unpacked tuple instead of making
    the whole row with `pick`."""
    place = {order: at for at, (_, order) in enumerate(_present(fields, wanted, lead))}
    return tuple(place.get(order, 0) for order in range(len(wanted)))


def read_tables(
    buf: Any, size: int, data: int, length: int, wanted: Wanted
) -> list[tuple[int, tuple[int, ...], Any]]:
    """A [Table] vector (from `vector_at`) → (position, field offsets, wanted values) of each
    table, every one checked before any is read (as `TableView.tables`): a table's inline fields in
    one read (`field_reader`), its vectors and strings left to the caller."""
    offsets = struct.unpack_from(f"<{length}I", buf, data) if length else ()
    rows: list[tuple[int, tuple[int, ...], Any]] = []
    append = rows.append
    # Writers share one vtable among all tables with the same fields: read each once.
    by_vtable: dict[int, tuple[tuple[int, ...], FieldReader]] = {}
    unpack_i32 = _I32.unpack_from
    last_table = size - 4
    # The previous table's vtable and its reader, which reads the soffset too (`lead`): a table
    # whose soffset leads to that same vtable is read in one unpack.
    vtable: int | None = None
    fields: tuple[int, ...] = ()
    unpack: Callable[[Any, int], tuple[Any, ...]] = _I32.unpack_from
    pick: Callable[[tuple[Any, ...]], Any] = _first
    absent: tuple[Any, ...] = ()
    # Each table's position: its offset's own position plus the offset (never negative: both
    # terms are unsigned), added in C.
    for pos in map(add, range(data, data + 4 * length, 4), offsets):
        try:
            values = unpack(buf, pos)  # read: the soffset at least lies in the file
            if pos - values[0] == vtable:
                append((pos, fields, pick(values + absent)))
                continue
        except struct.error:
            values = None
        if pos > last_table:
            raise MalformedTableError(f"table at {pos} outside the file")
        # Every reader's first value is the soffset (and so is `unpack_i32`'s).
        vtable = pos - (values or unpack_i32(buf, pos))[0]
        found = by_vtable.get(vtable)
        if found is None:
            fields = table_fields(buf, pos, size)
            found = by_vtable[vtable] = (fields, field_reader(fields, wanted, lead=True))
        fields, (unpack, pick, absent) = found
        try:
            values = unpack(buf, pos)
        except struct.error:
            raise fields_outside(pos) from None
        append((pos, fields, pick(values + absent)))
    return rows


class TableReader(Protocol):
    """What the reader's table loops share with it (`reader._Parser`): the file, and the count
    of decoded items against the file's budget."""

    data: Any
    size: int
    label: str
    items: int
    item_budget: int
    vtables: dict[int, tuple[int, ...]]  # vtable position → its field offsets

    def charge(self, count: int) -> None:
        """Count decoded items; raise when past the budget."""

    def fail(self, problem: str) -> Exception:
        """The error naming the file and the problem."""


# One table type's layout in a file: (its vtable's position, its field offsets, the unpack of
# the wanted fields led by the soffset (`field_reader`), where each wanted field lands in what it
# returns (`field_places`) followed by the offsets of the fields `table_layout` was asked for).
TableLayout = tuple[int, tuple[int, ...], Callable[[Any, int], tuple[Any, ...]], tuple[int, ...]]


# A table type's layouts without their vtable's position, by the vtable's bytes (`table_layout`'s
# `known`): (field offsets, unpack, places and offsets).
KnownLayouts = dict[
    bytes, tuple[tuple[int, ...], Callable[[Any, int], tuple[Any, ...]], tuple[int, ...]]
]
# Layouts kept per table type across files; past this many (a hostile file's vtables) they are
# forgotten.
MAX_KNOWN_LAYOUTS = 256
# The longest vtable whose bytes are kept as a key: MAX_FIELDS fields, the most a layout reads.
_MAX_VTABLE_KEY = _VTABLE_HEADER_BYTES + 2 * MAX_FIELDS


def table_layout(
    buf: Any,
    size: int,
    pos: int,
    wanted: Wanted,
    layouts: dict[int, TableLayout],
    *,
    offsets_of: tuple[int, ...] = (),
    known: KnownLayouts,
) -> TableLayout:
    """The table at `pos` → its vtable's layout, made once per vtable and kept in `layouts` (by
    vtable position): for loops that read a [Table] vector's tables in their own frame, each
    table in one unpack while the vtable stays the same, and its layout looked up when it
    changes. Checked and failing as `read_tables`.

    `offsets_of`: fields (indices in the vtable) whose offsets follow the places, so a loop
    binds them with the places when the vtable changes instead of subscripting the offsets for
    every table.

    `known` (the caller's, for its `wanted` and `offsets_of`): layouts made before, by their
    vtable's bytes. A layout is a function of those bytes alone, and a writer gives its files'
    tables of one type the same few vtables: one met before, in this file or another, costs a
    lookup instead of reading the offsets and finding the readers (~25 K instructions, a few
    per table type and file). A vtable found there lies in the file, as `table_fields` checks:
    its bytes were read whole."""
    if pos > size - 4:
        raise MalformedTableError(f"table at {pos} outside the file")
    vtable = pos - _I32.unpack_from(buf, pos)[0]
    layout = layouts.get(vtable)
    if layout is None:
        content = vtable_bytes(buf, size, vtable)
        made = known.get(content) if content is not None else None
        if made is None:
            fields = table_fields(buf, pos, size)
            places = field_places(fields, wanted, lead=True)
            made = (
                fields,
                field_reader(fields, wanted, lead=True)[0],
                places + tuple(fields[index] for index in offsets_of),
            )
            if content is not None:
                remember(known, content, made)
        layout = layouts[vtable] = (vtable, *made)
    return layout


def vtable_bytes(buf: Any, size: int, vtable: int) -> bytes | None:
    """The vtable at `vtable`, whole (its size, its table's size, its field offsets), as the key
    of what is made of it alone (`table_layout`); None when it does not lie in the file (let
    `table_fields` name the fault) or is longer than MAX_FIELDS fields."""
    if not 0 <= vtable <= size - _VTABLE_HEADER_BYTES:
        return None
    end = vtable + _U16.unpack_from(buf, vtable)[0]
    if end > size or end - vtable > _MAX_VTABLE_KEY:
        return None
    return bytes(buf[vtable:end])


def remember(known: dict[Any, Any], key: Any, made: Any) -> None:
    """Keep `made` in a dict of what vtables' bytes gave, across files, bounded: past
    MAX_KNOWN_LAYOUTS entries (a hostile file's vtables) the old ones are forgotten."""
    if len(known) >= MAX_KNOWN_LAYOUTS:
        known.clear()
    known[key] = made


def fields_outside(pos: int) -> MalformedTableError:
    """The error of a table whose fields, as its vtable lays them out, pass the end of the file."""
    return MalformedTableError(f"fields of table at {pos} lie outside the file")


def table_positions(buf: Any, data: int, length: int) -> Any:
    """A [Table] vector (from `vector_at`) → an iterator over its tables' positions: each
    offset's own position plus the offset (never negative: both terms are unsigned), added in
    C."""
    offsets = struct.unpack_from(f"<{length}I", buf, data) if length else ()
    return map(add, range(data, data + 4 * length, 4), offsets)


def _first(values: tuple[Any, ...]) -> Any:
    """`read_tables`' pick before its first table (never used: no vtable matches None)."""
    return values[0]


def vector_at(buf: Any, size: int, position: int, element_bytes: int) -> tuple[int, int]:
    """The uoffset at `position` (a present vector field) → (data start, length), checked to fit
    the file."""
    start: int = position + _U32.unpack_from(buf, position)[0]
    if start > size - 4:
        raise MalformedTableError(f"offset at {position} points outside the file")
    length: int = _U32.unpack_from(buf, start)[0]
    if start + 4 + length * element_bytes > size:
        raise MalformedTableError(
            f"vector at {start} claims {length:,} entries but the file has only "
            f"{format_bytes_exact(size)}"
        )
    return start + 4, length


def int32_vector_at(buf: Any, size: int, position: int) -> tuple[int, ...]:
    """The uoffset at `position` (a present [int] field) → its entries."""
    start, length = vector_at(buf, size, position, 4)
    return int32_struct(length).unpack_from(buf, start)


# A vector's length and first 4 int32 entries, in one read (most shapes and operand lists have
# at most 4), and what a loop that reads them inline takes when that read fails near the end of
# the file: a length over 4, to read as any length (`int32s_of_row`).
COUNT_AND_4_INT32 = struct.Struct("<I4i")
LONG_VECTOR = (5,)
# A short vector read with its length (`COUNT_AND_4_INT32`) → its entries, as
# `head[SHORT_DIMS[head[0]]]`: the slice by its length, 0 to 4 (a longer one's length indexes
# past the end: read it as any length).
SHORT_DIMS = tuple(slice(1, 1 + count) for count in range(5))


def int32s_of_row(buf: Any, size: int, at: int, offset: int) -> tuple[int, ...]:
    """The int32 vector of a table field at `at` whose offset the row's struct already read
    (`offset`): `int32_vector_at` without reading the offset again, for the reader's tensor and
    operator loops; a vector outside the file fails with int32_vector_at's error."""
    start = at + offset  # never negative: both are unsigned
    try:
        # Its length and entries in one read (the bytes after a shorter vector are read too,
        # and left).
        head = COUNT_AND_4_INT32.unpack_from(buf, start)
        if head[0] <= 4:
            return head[1 : head[0] + 1]
    except struct.error:
        pass  # near the end of the file: read as any length
    try:
        # struct refuses a length or entries past the end of the file: exactly when
        # int32_vector_at does.
        return int32_struct(_U32.unpack_from(buf, start)[0]).unpack_from(buf, start + 4)
    except struct.error:
        int32_vector_at(buf, size, at)  # raises its error
        raise


def string_at(buf: Any, size: int, position: int) -> str:
    """The uoffset at `position` (a present string field) → the string, invalid UTF-8
    replaced."""
    start, length = vector_at(buf, size, position, 1)
    return bytes(buf[start : start + length]).decode("utf-8", errors="replace")


def target_at(buf: Any, size: int, position: int) -> int:
    """The uoffset at `position` (a present table field) → where the table starts."""
    pointed: int = position + _U32.unpack_from(buf, position)[0]
    if pointed > size - 4:
        raise MalformedTableError(f"offset at {position} points outside the file")
    return pointed


class TableView:
    """One table: `pos` is its start; field(slot) → absolute position of the field or 0.

    The reader's hottest tables (tensors, operators) skip the view altogether: `read_tables` and
    the `*_at` functions above read them in the caller's frame; the view reads the others.
    """

    __slots__ = ("buf", "fields", "pos", "size")

    def __init__(self, buf: Any, pos: int, size: int) -> None:
        self.buf = buf
        self.size = size
        self.pos = pos
        self.fields: tuple[int, ...] = table_fields(buf, pos, size)

    def field(self, slot: int) -> int:
        """Absolute position of a field, or 0 when absent (default value)."""
        relative = self.fields[(slot - 4) >> 1]
        return self.pos + relative if relative else 0

    def i32(self, slot: int, default: int = 0) -> int:
        """A 32-bit signed scalar field."""
        relative = self.fields[(slot - 4) >> 1]
        return _I32.unpack_from(self.buf, self.pos + relative)[0] if relative else default

    def u32(self, slot: int, default: int = 0) -> int:
        """A 32-bit unsigned scalar field."""
        relative = self.fields[(slot - 4) >> 1]
        return _U32.unpack_from(self.buf, self.pos + relative)[0] if relative else default

    def u64(self, slot: int, default: int = 0) -> int:
        """A 64-bit unsigned scalar field."""
        relative = self.fields[(slot - 4) >> 1]
        return _U64.unpack_from(self.buf, self.pos + relative)[0] if relative else default

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
        relative = self.fields[(slot - 4) >> 1]
        return _I8.unpack_from(self.buf, self.pos + relative)[0] if relative else default

    def u8(self, slot: int, default: int = 0) -> int:
        """An 8-bit unsigned scalar field (bools, union types)."""
        relative = self.fields[(slot - 4) >> 1]
        return _U8.unpack_from(self.buf, self.pos + relative)[0] if relative else default

    def target(self, slot: int) -> int:
        """Position a uoffset field points to (a table, vector or string), or 0 when absent."""
        relative = self.fields[(slot - 4) >> 1]
        if not relative:
            return 0
        position = self.pos + relative
        pointed: int = position + _U32.unpack_from(self.buf, position)[0]
        if pointed > self.size - 4:
            raise MalformedTableError(f"offset at {position} points outside the file")
        return pointed

    def vector(self, slot: int, element_bytes: int) -> tuple[int, int]:
        """(data start, length) of a vector field; (0, 0) when absent. Checks it fits the file."""
        relative = self.fields[(slot - 4) >> 1]
        if not relative:
            return 0, 0
        return vector_at(self.buf, self.size, self.pos + relative, element_bytes)

    def int32_vector(self, slot: int) -> tuple[int, ...] | None:
        """A [int] field as a tuple; None when absent."""
        relative = self.fields[(slot - 4) >> 1]
        if not relative:
            return None
        return int32_vector_at(self.buf, self.size, self.pos + relative)

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

    def table_at(self, slot: int, index: int) -> TableView:
        """The `index`-th table of a [Table] vector field (IndexError past its end, as `tables`
        gives): one offset read, so a caller that wants one tensor of many does not make a view
        of each (per tensor, that would be quadratic in the model's size)."""
        data, length = self.vector(slot, 4)
        if not 0 <= index < length:
            raise IndexError(f"table {index} of a vector of {length}")
        position = data + 4 * index
        return TableView(self.buf, position + _U32.unpack_from(self.buf, position)[0], self.size)

    def tables(self, slot: int) -> list[TableView]:
        """A [Table] vector field as views (empty when absent)."""
        data, length = self.vector(slot, 4)
        offsets = struct.unpack_from(f"<{length}I", self.buf, data) if length else ()
        buf, size = self.buf, self.size
        return [
            TableView(buf, data + 4 * index + offset, size) for index, offset in enumerate(offsets)
        ]
