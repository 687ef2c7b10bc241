"""The `tflite` package's option tables → the field list arenalens decodes them with.

`src/arenalens/tflite/option_tables.json` is derived from the generated classes of the `tflite`
schema package (the same classes the builder writes options with), so that reading a model's
options needs neither those classes nor flatbuffers and numpy under them. Rewrite it after a
schema package upgrade with `python -m tests.tflite_io.option_tables`; `test_option_tables` fails
while the stored file and the installed package disagree.

Also here: the decoder arenalens used before, through the generated classes (`reference_decode`),
which the tests compare the table-driven decoder against.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

import flatbuffers
from tflite.BuiltinOptions import BuiltinOptions
from tflite.BuiltinOptions2 import BuiltinOptions2

from arenalens.tflite.opcodes import OPTION_TABLES_PATH, snake_case

# number_types flags → the struct format of one element (little-endian, as FlatBuffers store).
STRUCT_FORMATS = {
    "BoolFlags": "?",
    "Int8Flags": "b",
    "Uint8Flags": "B",
    "Int16Flags": "h",
    "Uint16Flags": "H",
    "Int32Flags": "i",
    "Uint32Flags": "I",
    "Int64Flags": "q",
    "Uint64Flags": "Q",
    "Float32Flags": "f",
    "Float64Flags": "d",
}
_SKIPPED_SUFFIXES = ("AsNumpy", "Length", "IsNone")
_OFFSET = re.compile(r"self\._tab\.Offset\((\d+)\)")
_FLAGS = re.compile(r"number_types\.(\w+Flags)\b")


def union_members() -> dict[str, dict[int, str]]:
    """'options' / 'options2' → union type code → table name (NONE left out)."""
    found: dict[str, dict[int, str]] = {}
    for key, enum_class in (("options", BuiltinOptions), ("options2", BuiltinOptions2)):
        found[key] = {
            value: name
            for name, value in vars(enum_class).items()
            if not name.startswith("_") and isinstance(value, int) and name != "NONE"
        }
    return found


def _empty_table() -> tuple[bytes, int]:
    """A buffer holding one table with no fields, and its position: every accessor's default."""
    builder = flatbuffers.Builder(16)
    builder.StartObject(0)
    builder.Finish(builder.EndObject())
    data = bytes(builder.Output())
    return data, int.from_bytes(data[:4], "little")


def _element_format(source: str) -> str:
    names = [name for name in _FLAGS.findall(source) if name in STRUCT_FORMATS]
    if len(set(names)) != 1:
        raise ValueError(f"cannot tell the element type from:\n{source}")
    return STRUCT_FORMATS[names[0]]


def table_fields(name: str) -> list[list[Any]] | None:
    """One options table → [key, vtable slot, kind, default] per field it decodes, in the
    generated class's order; kind is a struct format ('i', 'f', '?', ...), 'string', or
    'vector:<format>'. None when the package has no class for it."""
    try:
        module = importlib.import_module(f"tflite.{name}")
    except ImportError:
        return None
    options_class = getattr(module, name, None)
    if not isinstance(options_class, type):
        return None
    data, position = _empty_table()
    empty = options_class()
    empty.Init(data, position)
    fields: list[list[Any]] = []
    for method_name, method in vars(options_class).items():
        if method_name.startswith(("_", "GetRootAs")) or method_name == "Init":
            continue
        if method_name.endswith(_SKIPPED_SUFFIXES) or "BufferHasIdentifier" in method_name:
            continue
        code = getattr(method, "__code__", None)
        if code is None:
            continue
        source = inspect.getsource(method)
        slots = _OFFSET.findall(source)
        if len(slots) != 1:
            raise ValueError(f"{name}.{method_name}: no single vtable slot in:\n{source}")
        slot = int(slots[0])
        key = snake_case(method_name)
        as_numpy = getattr(options_class, method_name + "AsNumpy", None)
        if code.co_argcount == 2:
            if as_numpy is None:
                continue  # a vector of strings or tables: not an option value
            kind = "vector:" + _element_format(inspect.getsource(as_numpy))
            fields.append([key, slot, kind, None])
        elif code.co_argcount == 1:
            if "Indirect" in source or "Union" in source:
                raise ValueError(f"{name}.{method_name}: a table or union field")
            kind = "string" if "self._tab.String(" in source else _element_format(source)
            fields.append([key, slot, kind, getattr(empty, method_name)()])
    return fields


def derive() -> dict[str, Any]:
    """The whole file: the two unions' members and every member's fields."""
    unions = union_members()
    tables: dict[str, list[list[Any]]] = {}
    for members in unions.values():
        for name in sorted(set(members.values())):
            fields = table_fields(name)
            if fields is not None:
                tables[name] = fields
    return {
        "source": "derived from the tflite package by tests/tflite_io/option_tables.py",
        "unions": {
            key: {str(code): name for code, name in sorted(members.items()) if name in tables}
            for key, members in unions.items()
        },
        "tables": dict(sorted(tables.items())),
    }


def render(document: dict[str, Any]) -> str:
    """The stored text: one table per line, so that a schema change is a readable diff."""
    lines = ["{", f'  "source": {json.dumps(document["source"])},', '  "unions": {']
    unions = list(document["unions"].items())
    for number, (key, members) in enumerate(unions):
        comma = "," if number < len(unions) - 1 else ""
        lines.append(f"    {json.dumps(key)}: {json.dumps(members)}{comma}")
    lines += ["  },", '  "tables": {']
    tables = list(document["tables"].items())
    for number, (name, fields) in enumerate(tables):
        comma = "," if number < len(tables) - 1 else ""
        lines.append(f"    {json.dumps(name)}: {json.dumps(fields)}{comma}")
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def reference_decode(
    data: Any, options: tuple[int, int], options2: tuple[int, int]
) -> dict[str, Any]:
    """What arenalens decoded before the stored tables: every scalar, string and numeric vector
    field through the generated classes (vectors via numpy)."""
    decoded: dict[str, Any] = {}
    unions = union_members()
    for (type_code, position), key in ((options, "options"), (options2, "options2")):
        name = unions[key].get(type_code)
        if name is None or not position:
            continue
        try:
            options_class = getattr(importlib.import_module(f"tflite.{name}"), name)
        except ImportError:
            continue
        instance = options_class()
        instance.Init(data, position)
        for method_name, method in vars(options_class).items():
            if method_name.startswith(("_", "GetRootAs")) or method_name == "Init":
                continue
            if method_name.endswith(_SKIPPED_SUFFIXES) or "BufferHasIdentifier" in method_name:
                continue
            code = getattr(method, "__code__", None)
            if code is None:
                continue
            is_vector = code.co_argcount == 2 and hasattr(options_class, method_name + "AsNumpy")
            if is_vector:
                array = getattr(instance, method_name + "AsNumpy")()
                values = tuple(array.tolist()) if hasattr(array, "tolist") else ()
                decoded[snake_case(method_name)] = values
            elif code.co_argcount == 1:
                value = getattr(instance, method_name)()
                if isinstance(value, bytes):
                    value = value.decode("utf-8", errors="replace")
                if isinstance(value, bool | int | float | str) or value is None:
                    decoded[snake_case(method_name)] = value
    return decoded


def main() -> int:
    """Rewrite the stored tables from the installed package; say whether they changed."""
    text = render(derive())
    tables = Path(OPTION_TABLES_PATH)
    old = tables.read_text() if tables.exists() else ""
    tables.write_text(text)
    print(f"{tables}: {'unchanged' if old == text else 'rewritten'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
