"""Builtin operator codes ↔ names, from the `tflite` schema package; option-table decoding.

Option tables are decoded from a stored list of their fields (`option_tables.json`, derived
from the `tflite` package's generated classes by tests/tflite_io/option_tables.py, which checks
it against the installed package): the generated classes import flatbuffers, and flatbuffers
imports numpy, about 0.1-0.3 s of a command's start for a few option tables.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import json
import os
import re
import struct
import sys
from collections.abc import ItemsView, Iterator, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any

from arenalens.errors import ModelError
from arenalens.memo import forgettable
from arenalens.tflite.tables import (
    FieldReader,
    Wanted,
    field_reader,
    remember,
    shared_table_fields,
    string_at,
    table_fields,
    vector_at,
    vtable_bytes,
)


def _schema_class(name: str) -> type:
    """The `tflite` package's generated class `name` (an enum of ints).

    Read from its own module file: importing `tflite.<name>` runs the package's __init__, which
    imports all ~190 generated modules (about 0.1 s, as long as reading a 10,000-operator
    model), where reading a model needs one enum.
    """
    loaded = sys.modules.get(f"tflite.{name}")
    if loaded is None:
        package = importlib.util.find_spec("tflite")
        locations = package.submodule_search_locations if package is not None else None
        spec = importlib.machinery.PathFinder.find_spec(name, locations)
        if spec is None or spec.loader is None:
            raise ImportError(f"the tflite package has no module {name}")
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
    found = getattr(loaded, name, None)
    if not isinstance(found, type):
        raise ImportError(f"tflite.{name} defines no class {name}")
    return found


BuiltinOperator = _schema_class("BuiltinOperator")


def _enum_names(enum_class: type) -> dict[int, str]:
    return {
        value: name
        for name, value in vars(enum_class).items()
        if not name.startswith("_") and isinstance(value, int)
    }


BUILTIN_NAMES: dict[int, str] = _enum_names(BuiltinOperator)
BUILTIN_CODES: dict[str, int] = {name: code for code, name in BUILTIN_NAMES.items()}


def builtin_name(code: int) -> str:
    """Builtin operator code → schema name ('CONV_2D'), or 'BUILTIN_<code>' if unknown."""
    return BUILTIN_NAMES.get(code, f"BUILTIN_{code}")


def snake_case(camel: str) -> str:
    """CamelCase schema accessor name → snake_case option key (StrideW → stride_w)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", camel).lower()


# A path string: os.path, not pathlib, which a check would import for it alone (with
# urllib.parse and ipaddress: ~16 M instructions of its start-up).
OPTION_TABLES_PATH = os.path.join(os.path.dirname(__file__), "option_tables.json")

# One field of an options table: (key, index in the vtable, how to read it, what it is when
# absent, the reader), where "how" is _SCALAR (the reader: a Struct's unpack_from), _STRING or
# _VECTOR (the reader: (element format, element bytes)).
_Field = tuple[str, int, int, Any, Any]
_SCALAR, _STRING, _VECTOR = 0, 1, 2


@cache
def _option_document() -> tuple[dict[str, list[Any]], dict[int, str], dict[int, str]]:
    """option_tables.json: table name → its fields as stored, and the type codes of both unions
    (BuiltinOptions, BuiltinOptions2) → table names."""
    with open(OPTION_TABLES_PATH, encoding="utf-8") as handle:
        document = json.load(handle)
    unions = document["unions"]
    return (
        document["tables"],
        {int(code): name for code, name in unions["options"].items()},
        {int(code): name for code, name in unions["options2"].items()},
    )


@cache
def _option_table(union: int, type_code: int) -> tuple[_Field, ...] | None:
    """The fields of the table a union (0: BuiltinOptions, 1: BuiltinOptions2) type code names,
    made when a model first has one (a model uses a handful of the ~150 tables)."""
    tables, *unions = _option_document()
    name = unions[union].get(type_code)
    if name is None:
        return None
    return tuple(
        _field(key, (slot - 4) >> 1, kind, default) for key, slot, kind, default in tables[name]
    )


# Vectors a runtime requires present, whatever their length: None when absent, so that an absent
# one is told from an empty one (LiteRT's ParseStablehloComposite refuses an absent
# composite_attributes and accepts an empty one).
_REQUIRED_VECTORS = frozenset({"composite_attributes"})


def _field(key: str, index: int, kind: str, default: Any) -> _Field:
    """One field of option_tables.json → how to read it: strings are None and vectors () when
    absent (those of `_REQUIRED_VECTORS` None), scalars their schema default."""
    if kind == "string":
        return key, index, _STRING, None, None
    if kind.startswith("vector:"):
        element = kind.removeprefix("vector:")
        absent = None if key in _REQUIRED_VECTORS else ()
        return key, index, _VECTOR, absent, (element, struct.calcsize(f"<{element}"))
    return key, index, _SCALAR, default, _scalar_reader(kind)


@cache
def _scalar_reader(kind: str) -> Any:
    """A scalar's reader by its struct format ('i', 'f', 'B', ...): one Struct per format."""
    return struct.Struct(f"<{kind}").unpack_from


def decode_options(
    data: Any,
    options: tuple[int, int],
    options2: tuple[int, int],
    vtables: dict[int, tuple[int, ...]] | None = None,
) -> dict[str, Any]:
    """(union type, table position) of both option unions → their fields as a snake_case dict:
    scalars, strings (None when absent) and numeric vectors as tuples (() when absent, None for
    `_REQUIRED_VECTORS`).
    `vtables`: the file's vtables read so far (`tables.shared_table_fields`)."""
    decoded: dict[str, Any] = {}
    if options[1]:
        fields = _option_table(0, options[0])
        if fields is not None:
            _decode_table(decoded, data, options[1], (0, options[0]), vtables)
    if options2[1]:
        fields = _option_table(1, options2[0])
        if fields is not None:
            _decode_table(decoded, data, options2[1], (1, options2[0]), vtables)
    return decoded


def _decode_table(
    decoded: dict[str, Any],
    data: Any,
    position: int,
    table: tuple[int, int],
    vtables: dict[int, tuple[int, ...]] | None,
) -> None:
    """One options table ((union, type code), known to `_option_table`) → its fields in
    `decoded`, in the schema's order (one frame per table: the kernel rules read an operator's
    options once per model)."""
    size = len(data)
    if vtables is None:
        present = table_fields(data, position, size)
    else:
        present = shared_table_fields(data, position, size, vtables)
    scalars = _scalar_decoder(*table, present)
    if scalars is not None:
        keys, (unpack, pick, absent) = scalars
        decoded.update(zip(keys, pick(unpack(data, position) + absent), strict=True))
        return
    count = len(present)
    for key, index, how, absent, read in _option_table(*table) or ():
        relative = present[index] if index < count else 0
        if not relative:
            decoded[key] = absent
        elif how == _SCALAR:
            decoded[key] = read(data, position + relative)[0]
        elif how == _STRING:
            decoded[key] = string_at(data, size, position + relative)
        else:
            element, element_bytes = read
            start, length = vector_at(data, size, position + relative, element_bytes)
            decoded[key] = struct.unpack_from(f"<{length}{element}", data, start) if length else ()


@cache
def _scalar_spec(
    union: int, type_code: int
) -> tuple[tuple[str, ...], Wanted, tuple[Any, ...]] | None:
    """An options table of scalars only (most are) → its keys in schema order, the fields as
    `tables.field_reader` takes them and their schema defaults; None for a table with strings
    or vectors, or none at all (read field by field)."""
    fields = _option_table(union, type_code)
    if not fields or any(how != _SCALAR for _, _, how, _, _ in fields):
        return None
    # A scalar's reader is its Struct's unpack_from: the Struct knows its format ('<i').
    wanted = tuple((index, read.__self__.format[1:]) for _, index, _, _, read in fields)
    return tuple(key for key, *_ in fields), wanted, tuple(absent for _, _, _, absent, _ in fields)


# (union, type code, vtable's field offsets) → (keys, reader) of scalar-only options tables;
# cleared when a hostile file fills it with vtables.
_SCALAR_DECODERS: dict[tuple[int, int, tuple[int, ...]], tuple[tuple[str, ...], FieldReader]] = {}
_MAX_SCALAR_DECODERS = 512


def _scalar_decoder(
    union: int, type_code: int, present: tuple[int, ...]
) -> tuple[tuple[str, ...], FieldReader] | None:
    """`_scalar_spec`'s table as its vtable lays it out → its keys and one reader of them all
    (absent fields take the schema's defaults); None when read field by field."""
    key = (union, type_code, present)
    found = _SCALAR_DECODERS.get(key)
    if found is None:
        spec = _scalar_spec(union, type_code)
        if spec is None:
            return None
        keys, wanted, defaults = spec
        last = max(index for index, _ in wanted)
        padded = present + (0,) * (last + 1 - len(present))  # fields past the vtable: absent
        if len(_SCALAR_DECODERS) >= _MAX_SCALAR_DECODERS:
            _SCALAR_DECODERS.clear()
        found = _SCALAR_DECODERS[key] = (keys, field_reader(padded, wanted, defaults))
    return found


OptionsKey = tuple[tuple[int, int], tuple[int, int]]


@cache
def _bounded(union: int, type_code: int) -> bool:
    """True when a table of this union type decodes in a bounded number of steps: absent (type
    0), unknown to the schema (decodes to nothing) or of scalars only; False when it holds a
    string or a vector (their length is the file's to choose)."""
    fields = _option_table(union, type_code)
    return not fields or _scalar_spec(union, type_code) is not None


# One file's decoders of scalar-only `builtin_options` tables, by (type code, vtable position):
# (keys, unpack, pick, absent) as `_scalar_decoder` made them for the first table there, the
# span of the table's bytes its fields lie in (relative to the table; None when a field lies in
# the table's soffset, which only a hostile vtable does) and the options decoded so far by those
# bytes: operators of one type often have equal options (same strides, padding, activation).
OptionReader = tuple[
    tuple[str, ...],
    Any,
    Any,
    tuple[Any, ...],
    tuple[int, int] | None,
    dict[bytes, Mapping[str, Any]],
]
OptionReaders = dict[tuple[int, int], OptionReader]


def eager_options(
    data: Any,
    key: OptionsKey,
    vtables: dict[int, tuple[int, ...]],
    readers: OptionReaders | None = None,
) -> Mapping[str, Any] | None:
    """Both option unions' tables ((type, position) each, as `LazyOptions` takes them) decoded
    now, as a read-only dict, when each is bounded (`_bounded`); None when one holds a string
    or a vector, or does not decode: `LazyOptions` decodes those on first use and fails where
    they are read, as before. The kernel rules read nearly every operator's options, and a
    read-only dict answers `get` in C (a `LazyOptions` answers through two Python frames).

    `readers` (one file's, filled here): an operator with only `builtin_options`, a scalar table
    whose vtable an earlier one used, is read by that table's decoder in one step (writers share
    a vtable among the tables of one type: a model has a handful). The position is a table's the
    reader checked to lie in the file."""
    (options_type, options_at), (options2_type, options2_at) = key
    single = readers is not None and options_at and not options2_at
    if single:
        vtable = options_at - _I32.unpack_from(data, options_at)[0]
        known = readers.get((options_type, vtable))  # type: ignore[union-attr]
        if known is not None:
            keys, unpack, pick, absent, span, seen = known
            content = b""
            if span is not None:
                # A shorter slice (past the end of the file) is never a key: decoded below.
                content = bytes(data[options_at + span[0] : options_at + span[1]])
                options = seen.get(content)
                if options is not None:
                    return options
            try:
                values = pick(unpack(data, options_at) + absent)
            except struct.error:
                return None
            options = MappingProxyType(dict(zip(keys, values, strict=True)))
            if span is not None:
                remember(seen, content, options)
            return options
        if vtables is not None:
            # The vtable's first table: decoded by the decoder the next ones will use.
            first = _first_of_vtable(
                data,
                options_at,
                (options_type, vtable),
                vtables,
                readers,  # type: ignore[arg-type]
            )
            if first is not None:
                return first
    if (options_at and not _bounded(0, options_type)) or (
        options2_at and not _bounded(1, options2_type)
    ):
        return None
    try:
        options = MappingProxyType(decode_options(data, *key, vtables))
    except _OPTION_ERRORS:
        return None
    if single and vtables is not None:
        # Decoded: the vtable is in `vtables` (`tables.shared_table_fields`); remember its
        # decoder when the table is of scalars only.
        present = vtables.get(vtable)
        decoder = _scalar_decoder(0, options_type, present) if present is not None else None
        if decoder is not None:
            keys, (unpack, pick, absent) = decoder
            readers[(options_type, vtable)] = (  # type: ignore[index]
                keys,
                unpack,
                pick,
                absent,
                _fields_span(present, unpack),  # type: ignore[arg-type]
                {},
            )
        elif present is not None and not _option_table(0, options_type):
            # A table of a type without fields (PadOptions, TransposeOptions, ...): every
            # operator's own, all decoding to nothing. The bytes it is known by are none.
            readers[(options_type, vtable)] = ((), None, None, (), (4, 4), {b"": options})  # type: ignore[index]
    return options


# `_first_of_vtable`'s decoders (keys, unpack, pick, absent, span, the options already decoded
# by their fields' bytes) by (type code, the vtable's bytes), across files: made of those alone
# (`tables.table_layout` keeps layouts so), and so are the options a table's bytes decode to
# (read-only, scalars only). A search loop's candidates repeat a few option tables (strides,
# padding, activation): each is decoded once per process (mobilenet_v2 decoded ~0.3 M
# instructions of them per load).
_FIRST_DECODERS: dict[tuple[int, bytes], OptionReader] = {}


@forgettable
def _forget_decoded_options() -> None:
    # The decoders are made of a vtable's bytes alone and stay, as table layouts do; the options
    # they decoded are models' values, so a cold call (`memo.clear_caches`) decodes them again.
    for known in _FIRST_DECODERS.values():
        known[5].clear()


def _first_of_vtable(
    data: Any,
    position: int,
    kind: tuple[int, int],
    vtables: dict[int, tuple[int, ...]],
    readers: OptionReaders,
) -> Mapping[str, Any] | None:
    """The first scalar-only `builtin_options` table of its vtable → its options, decoded by
    the vtable's decoder (as `decode_options` decodes such a table), which is kept in `readers`
    with the options known by their bytes; None for any other table, or one that does not
    decode (`eager_options` answers those). `kind`: (type code, vtable position)."""
    content = vtable_bytes(data, len(data), kind[1])
    known = _FIRST_DECODERS.get((kind[0], content)) if content is not None else None
    if known is None:
        try:
            present = shared_table_fields(data, position, len(data), vtables)
        except _OPTION_ERRORS:
            return None
        decoder = _scalar_decoder(0, kind[0], present)
        if decoder is None:
            return None
        keys, (unpack, pick, absent) = decoder
        known = (keys, unpack, pick, absent, _fields_span(present, unpack), {})
        if content is not None:
            remember(_FIRST_DECODERS, (kind[0], content), known)
    keys, unpack, pick, absent, span, seen = known
    readers[kind] = known
    # A shorter slice (past the end of the file) is never a key.
    fields = bytes(data[position + span[0] : position + span[1]]) if span is not None else b""
    options = seen.get(fields) if span is not None else None
    if options is None:
        try:
            values = pick(unpack(data, position) + absent)
        except struct.error:
            return None
        options = MappingProxyType(dict(zip(keys, values, strict=True)))
        if span is not None and len(fields) == span[1] - span[0]:
            remember(seen, fields, options)
    return options


def _fields_span(present: tuple[int, ...], unpack: Any) -> tuple[int, int] | None:
    """The bytes a scalar table's fields lie in, relative to the table (from after its
    soffset to the end of what `unpack` reads); None when a field starts inside the soffset or
    `unpack` reads field by field (only a hostile vtable makes either)."""
    reader = getattr(unpack, "__self__", None)
    if not isinstance(reader, struct.Struct) or min(filter(None, present), default=4) < 4:
        return None
    return 4, reader.size


_I32 = struct.Struct("<i")


# What decoding a malformed options table raises (`tables` raises MalformedTableError, a
# ValueError).
_OPTION_ERRORS = (struct.error, IndexError, TypeError, ValueError, OverflowError)


class LazyOptions(Mapping[str, Any]):
    """An operator's builtin options, decoded on first use (most are never read).

    Decoding through the generated option classes costs tens of microseconds per operator, and
    only control flow, scratch and temporary rules read options, so the reader defers it.
    Operators of one file share `cache`, keyed by the tables' positions: a table that many
    operators point at (writers share identical tables) is decoded once, not once per operator.
    """

    __slots__ = ("_cache", "_data", "_decoded", "_label", "_options", "_options2", "_vtables")

    def __init__(
        self,
        data: Any,
        options: tuple[int, int],
        options2: tuple[int, int],
        cache: dict[OptionsKey, dict[str, Any]] | None = None,
        label: str = "<bytes>",
        *,
        vtables: dict[int, tuple[int, ...]] | None = None,
    ) -> None:
        self._data = data
        self._vtables = vtables  # the file's vtables read so far, shared with the reader
        self._label = label
        self._options = options
        self._options2 = options2
        self._decoded: dict[str, Any] | None = None
        self._cache = cache

    def _fields(self) -> dict[str, Any]:
        if self._decoded is None:
            key = (self._options, self._options2)
            cached = self._cache.get(key) if self._cache is not None else None
            if cached is None:
                try:
                    cached = decode_options(
                        self._data, self._options, self._options2, self._vtables
                    )
                except _OPTION_ERRORS as error:
                    # Decoded on first use, after loading: still the file's fault, so the same
                    # error type as the reader's (callers catch ModelError, nothing else).
                    raise ModelError(
                        self._label, f"malformed operator options ({type(error).__name__}: {error})"
                    ) from None
                if self._cache is not None:
                    self._cache[key] = cached
            self._decoded = cached
        return self._decoded

    def __getitem__(self, key: str) -> Any:
        return self._fields()[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The option, or default: one dict lookup (Mapping.get goes through __getitem__ and a
        KeyError; the kernel rules read hundreds of options per model)."""
        decoded = self._decoded
        return (self._fields() if decoded is None else decoded).get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._fields()

    def items(self) -> ItemsView[str, Any]:
        """The decoded dict's own view (Mapping.items goes through __iter__ and __getitem__:
        the kernel memo keys every operator by its options)."""
        return self._fields().items()

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields())

    def __len__(self) -> int:
        return len(self._fields())

    def __repr__(self) -> str:
        return f"LazyOptions({self._fields()!r})"
