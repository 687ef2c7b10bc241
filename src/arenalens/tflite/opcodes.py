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
import re
import struct
import sys
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from arenalens.errors import ModelError
from arenalens.tflite.tables import TableView


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


OPTION_TABLES_PATH = Path(__file__).with_name("option_tables.json")

# One field of an options table: (key, index in the vtable, how to read it, default), where
# "how" is a struct.Struct for a scalar, "string", or ("vector", element format, element bytes).
_Field = tuple[str, int, Any, Any]


@cache
def _option_tables() -> tuple[dict[int, tuple[_Field, ...]], dict[int, tuple[_Field, ...]]]:
    """BuiltinOptions and BuiltinOptions2 type codes → the fields of their tables."""
    document = json.loads(OPTION_TABLES_PATH.read_text(encoding="utf-8"))
    tables: dict[str, tuple[_Field, ...]] = {}
    for name, fields in document["tables"].items():
        tables[name] = tuple(
            (key, (slot - 4) >> 1, _reader(kind), default) for key, slot, kind, default in fields
        )
    unions = document["unions"]
    return (
        {int(code): tables[name] for code, name in unions["options"].items()},
        {int(code): tables[name] for code, name in unions["options2"].items()},
    )


def _reader(kind: str) -> Any:
    if kind == "string":
        return kind
    if kind.startswith("vector:"):
        element = kind.removeprefix("vector:")
        return ("vector", element, struct.calcsize(f"<{element}"))
    return struct.Struct(f"<{kind}")


def decode_options(
    data: Any, options: tuple[int, int], options2: tuple[int, int]
) -> dict[str, Any]:
    """(union type, table position) of both option unions → their fields as a snake_case dict:
    scalars, strings (None when absent) and numeric vectors as tuples (() when absent)."""
    decoded: dict[str, Any] = {}
    for (type_code, position), tables in zip((options, options2), _option_tables(), strict=True):
        fields = tables.get(type_code)
        if fields is None or not position:
            continue
        decoded.update(_decode_table(TableView(data, position, len(data)), fields))
    return decoded


def _decode_table(view: TableView, fields: tuple[_Field, ...]) -> dict[str, Any]:
    decoded: dict[str, Any] = {}
    present = view.fields
    for key, index, how, default in fields:
        relative = present[index] if index < len(present) else 0
        if isinstance(how, struct.Struct):
            decoded[key] = (
                how.unpack_from(view.buf, view.pos + relative)[0] if relative else default
            )
        elif how == "string":
            decoded[key] = _string(view, index) if relative else None
        else:
            decoded[key] = _vector(view, index, how[1], how[2]) if relative else ()
    return decoded


def _string(view: TableView, index: int) -> str:
    data, length = view.vector(4 + 2 * index, 1)
    return bytes(view.buf[data : data + length]).decode("utf-8", errors="replace")


def _vector(view: TableView, index: int, element: str, element_bytes: int) -> tuple[Any, ...]:
    data, length = view.vector(4 + 2 * index, element_bytes)
    return struct.unpack_from(f"<{length}{element}", view.buf, data) if length else ()


OptionsKey = tuple[tuple[int, int], tuple[int, int]]


class LazyOptions(Mapping[str, Any]):
    """An operator's builtin options, decoded on first use (most are never read).

    Decoding through the generated option classes costs tens of microseconds per operator, and
    only control flow, scratch and temporary rules read options, so the reader defers it.
    Operators of one file share `cache`, keyed by the tables' positions: a table that many
    operators point at (writers share identical tables) is decoded once, not once per operator.
    """

    __slots__ = ("_cache", "_data", "_decoded", "_label", "_options", "_options2")

    def __init__(
        self,
        data: Any,
        options: tuple[int, int],
        options2: tuple[int, int],
        cache: dict[OptionsKey, dict[str, Any]] | None = None,
        label: str = "<bytes>",
    ) -> None:
        self._data = data
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
                    cached = decode_options(self._data, self._options, self._options2)
                except (struct.error, IndexError, TypeError, ValueError, OverflowError) as error:
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
        return self._fields().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._fields()

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields())

    def __len__(self) -> int:
        return len(self._fields())

    def __repr__(self) -> str:
        return f"LazyOptions({self._fields()!r})"
