"""A subgraph's Operator tables → Operators, each read in one frame, as `tensor_tables` reads
tensors (and with its order caveat: the reader names the first fault in its own order).

Most operators' options are one table of scalars that many operators repeat byte for byte (same
strides, padding, activation): such a table is looked up by its bytes here, and decoded by
`opcodes.eager_options` (or left to `LazyOptions`) only when new.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from arenalens.ir import CONTROL_FLOW_OPTION_FIELDS, Operator
from arenalens.tflite.opcodes import (
    LazyOptions,
    OptionReaders,
    OptionsKey,
    builtin_name,
    eager_options,
)
from arenalens.tflite.tables import (
    COUNT_AND_4_INT32,
    LONG_VECTOR,
    SHORT_DIMS,
    KnownLayouts,
    MalformedTableError,
    TableLayout,
    TableReader,
    fields_outside,
    int32_vector_at,
    int32s_of_row,
    table_layout,
    table_positions,
    target_at,
)

# opcode_index, inputs, outputs, builtin_options_type, builtin_options, intermediates,
# builtin_options_2_type, builtin_options_2, as `tables.field_reader` takes them
OPERATOR_FIELDS = tuple(zip((0, 1, 2, 3, 4, 8, 11, 12), "IIIBIIBI", strict=True))
# The fields that point elsewhere (inputs, outputs, builtin_options, intermediates,
# builtin_options_2), whose offsets the loop adds to the row's (`tables.table_layout`).
OPERATOR_OFFSETS = (1, 2, 4, 8, 12)
# An operator code: (name, builtin code, the builtin_code field, custom code, version).
OpcodeRow = tuple[str, int, int, str | None, int]
# An OperatorCode table's fields, as `tables.field_reader` takes them: deprecated_builtin_code,
# custom_code, version, builtin_code.
OPERATOR_CODE_FIELDS = ((0, "b"), (1, "I"), (2, "i"), (3, "i"))

_I32 = struct.Struct("<i")
# The operator tables' and operator code tables' layouts by their vtable's bytes, across files
# (`tables.table_layout`).
_OPERATOR_LAYOUTS: KnownLayouts = {}
_CODE_LAYOUTS: KnownLayouts = {}


class OperatorReader(TableReader, Protocol):
    """The reader as the operator loop uses it: with the options decoded on first use, by
    their tables' positions (`LazyOptions`)."""

    options_cache: dict[OptionsKey, dict[str, Any]]


def read_operators(
    parser: OperatorReader,
    vector: tuple[int, int],
    opcodes: tuple[OpcodeRow, ...],
    *,
    where: str,
    ready: set[int],
    tensor_count: int,
) -> tuple[tuple[Operator, ...], bool]:
    """A subgraph's operators vector (from `vector_at`) → its Operators, and whether they passed
    `ir.check_model`'s operator checks as they were read; the inputs and outputs vectors read as
    `tensor_tables` reads shapes.

    The proof (`ready`: the tensors readable before the first operator, -1 included, of
    `tensor_count`): each operator reads only tensors ready before it, and then its outputs are,
    as `ir._check_data_order` walks them; every index is then one of those, all in range when the
    set's least and greatest are; no operator has intermediates or calls a subgraph. Two set
    calls per operator where the check walked every operator twice more; anything else (a
    tensor read before it is written, which only strict loading refuses, intermediates, control
    flow) is left to the check, which names the first fault as it always did."""
    buf, size, label, cache, vtables = (
        parser.data,
        parser.size,
        parser.label,
        parser.options_cache,
        parser.vtables,
    )
    last_word = size - 4
    unpack_i32 = _I32.unpack_from
    unpack_count_4i32 = COUNT_AND_4_INT32.unpack_from
    dims = SHORT_DIMS
    layouts: dict[int, TableLayout] = {}
    # The previous operator table's vtable and unpack, where its fields land in the unpacked
    # row and the offsets of the fields that point elsewhere (`OPERATOR_OFFSETS`).
    vtable: int | None = None
    unpack: Callable[[Any, int], tuple[Any, ...]] = unpack_i32
    opcode_at = inputs_at = outputs_at = type_at = options_place = type2_at = options2_place = 0
    inputs_field = outputs_field = options_field = intermediates_field = options2_field = 0
    option_readers: OptionReaders = {}
    opcode_count = len(opcodes)
    new = tuple.__new__  # the records are NamedTuples: made as tuples, without __new__'s call
    # Option tables are shared by position: writers point operators with equal options at
    # one table.
    decoded: dict[OptionsKey, Mapping[str, Any]] = {}
    items, item_budget = parser.items, parser.item_budget
    proving = True
    readable, now_ready = ready.issuperset, ready.update
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
                    OPERATOR_FIELDS,
                    layouts,
                    offsets_of=OPERATOR_OFFSETS,
                    known=_OPERATOR_LAYOUTS,
                )
            vtable, _, unpack, places = layout
            try:
                row = unpack(buf, pos)
            except struct.error:
                raise fields_outside(pos) from None
            (
                opcode_at,
                inputs_at,
                outputs_at,
                type_at,
                options_place,
                _,
                type2_at,
                options2_place,
                inputs_field,
                outputs_field,
                options_field,
                intermediates_field,
                options2_field,
            ) = places
        opcode_index = row[opcode_at] if opcode_at else 0
        if opcode_index >= opcode_count:
            raise parser.fail(
                f"{where} operator {index}: opcode index {opcode_index} out of range "
                f"(model has {opcode_count} operator codes)"
            )
        name, builtin, raw, custom, version = opcodes[opcode_index]
        options_type = row[type_at] if type_at else 0
        options_at = options2_at = 0
        if options_place:
            options_at = pos + options_field + row[options_place]
            if options_at > last_word:
                target_at(buf, size, pos + options_field)  # raises its error
        if options2_place:
            options2_at = pos + options2_field + row[options2_place]
            if options2_at > last_word:
                target_at(buf, size, pos + options2_field)  # raises its error
        options = None
        if options_at and not options2_at:
            # A scalar table whose vtable an earlier one used, known by its bytes (what
            # `eager_options` looks up first, without the key and the call).
            reader = option_readers.get((options_type, options_at - unpack_i32(buf, options_at)[0]))
            if reader is not None and reader[4] is not None:
                start, end = reader[4]
                options = reader[5].get(bytes(buf[options_at + start : options_at + end]))
        if options is None:
            key = ((options_type, options_at), (row[type2_at] if type2_at else 0, options2_at))
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
        # `tables.int32s_of_row`'s first read inline, as `tensor_tables` reads shapes: most
        # operators have at most 4 inputs and 4 outputs.
        inputs: tuple[int, ...]
        if inputs_at:
            try:
                head = unpack_count_4i32(buf, pos + inputs_field + row[inputs_at])
            except struct.error:
                head = LONG_VECTOR
            try:
                inputs = head[dims[head[0]]]
            except IndexError:  # more than 4
                inputs = int32s_of_row(buf, size, pos + inputs_field, row[inputs_at])
        else:
            inputs = ()
        outputs: tuple[int, ...]
        if outputs_at:
            try:
                head = unpack_count_4i32(buf, pos + outputs_field + row[outputs_at])
            except struct.error:
                head = LONG_VECTOR
            try:
                outputs = head[dims[head[0]]]
            except IndexError:
                outputs = int32s_of_row(buf, size, pos + outputs_field, row[outputs_at])
        else:
            outputs = ()
        intermediates = (
            int32_vector_at(buf, size, pos + intermediates_field) if intermediates_field else ()
        )
        items += len(inputs) + len(outputs) + len(intermediates) + len(called)
        if items > item_budget:
            parser.charge(items - parser.items)
        if proving:
            if readable(inputs) and not (intermediates or called):
                now_ready(outputs)
            else:
                proving = False
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
    parser.items = items
    proven = proving and min(ready) >= -1 and max(ready) < tensor_count
    return tuple(found), proven


def read_builtin_codes(parser: TableReader, vector: tuple[int, int]) -> tuple[OpcodeRow, ...]:
    """The operator codes vector (from `vector_at`) → each code as the operators read it, when
    none has a custom code; else MalformedTableError (the reader's `_Parser.opcodes` reads them
    in its own order then, and names the first fault).

    Some writers give every operator a code of its own (mobilenet_v2 224: 84 codes of 8
    operators): each table is one unpack, as `tensor_tables` reads tensors, and a code whose
    vtable and values were met before is that code again, without reading its fields one by
    one (through `tables.read_tables`' rows a code cost ~7.4 K instructions)."""
    buf, size = parser.data, parser.size
    layouts: dict[int, TableLayout] = {}
    # The previous table's vtable, its unpack and where the fields land, and the codes made
    # from its tables by their values (the unpacked row but its soffset).
    vtable: int | None = None
    unpack: Callable[[Any, int], tuple[Any, ...]] = _I32.unpack_from
    deprecated_at = version_at = builtin_at = 0
    made: dict[tuple[Any, ...], OpcodeRow] = {}
    made_by_vtable: dict[int, dict[tuple[Any, ...], OpcodeRow]] = {}
    # The codes by their fields (deprecated_builtin_code, builtin_code, version), whatever the
    # vtable: each builtin named once.
    codes: dict[tuple[int, int, int], OpcodeRow] = {}
    found = []
    for pos in table_positions(buf, *vector):
        try:
            row = unpack(buf, pos)  # read: the soffset at least lies in the file
            same = pos - row[0] == vtable
        except struct.error:
            row, same = (), False
        if not same:
            layout = layouts.get(pos - row[0]) if row else None
            if layout is None:
                layout = table_layout(
                    buf, size, pos, OPERATOR_CODE_FIELDS, layouts, known=_CODE_LAYOUTS
                )
            vtable, _, unpack, (deprecated_at, custom_at, version_at, builtin_at) = layout
            if custom_at:
                raise MalformedTableError("a custom operator code: read in the reader's order")
            try:
                row = unpack(buf, pos)
            except struct.error:
                raise fields_outside(pos) from None
            made = made_by_vtable.setdefault(vtable, {})
        values = row[1:]
        code = made.get(values)
        if code is None:
            fields = (
                row[deprecated_at] if deprecated_at else 0,
                row[builtin_at] if builtin_at else 0,
                row[version_at] if version_at else 1,
            )
            code = codes.get(fields)
            if code is None:
                code = codes[fields] = _code(*fields)
            made[values] = code
        found.append(code)
    return tuple(found)


def _code(deprecated: int, raw: int, version: int) -> OpcodeRow:
    """A builtin operator code's fields → the code as the operators read it."""
    builtin = max(raw, deprecated)
    known = builtin_name(builtin)
    return ("CUSTOM:" if known == "CUSTOM" else known, builtin, raw, None, version)


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
