"""JSON text for people and scripts: a document → indented JSON with one line per table row.

`json.dumps(indent=2)` falls back to the pure-Python encoder and puts every scalar of a 40,000-row
tensor table on its own line (seconds, and megabytes of whitespace). Here containers are indented
like `indent=2` until they hold only scalars, or are rows of scalars and small lists: those are
written on one line each by the C encoder (a list of scalars too, unless that line would be
long: then one scalar per line). The text parses to the same document.
"""

from __future__ import annotations

import json
from typing import Any

_INDENT = "  "
# A list of scalars longer than this on one line gets one item per line.
_LONG_LINE = 100


_SCALARS = frozenset({str, int, float, bool, type(None)})
_CONTAINERS = frozenset({dict, list})


def _is_scalar(value: Any) -> bool:
    return type(value) in _SCALARS


def _is_row(value: Any) -> bool:
    """A dict or list of scalars and lists of scalars: written on one line."""
    scalars = _SCALARS
    for item in value.values() if isinstance(value, dict) else value:
        if type(item) in scalars:
            continue
        if type(item) is not list or any(type(x) not in scalars for x in item):
            return False
    return True


def _fits_one_line(items: list[Any]) -> bool:
    return all(_is_scalar(item) for item in items) and len(_compact(items)) <= _LONG_LINE


# One encoder for every row: json.dumps with options builds a new encoder per call, which costs
# more than encoding a short row.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))
# The C encoder behind it, made once: `JSONEncoder.encode` makes a new one for every container it
# encodes (a third of the cost of a 13-field row). No cycle check: a document is a tree.
_MAKE_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # None without _json
_C_ENCODER = (
    None
    if _MAKE_C_ENCODER is None
    else _MAKE_C_ENCODER(
        None, _COMPACT.default, json.encoder.encode_basestring, None, ": ", ", ", False, False, True
    )
)


def _compact(value: Any) -> str:
    if _C_ENCODER is not None and type(value) in _CONTAINERS:
        return "".join(_C_ENCODER(value, 0))
    return _COMPACT.encode(value)


def to_json(document: Any) -> str:
    """A JSON document → its text, ending with a newline."""
    parts: list[str] = []
    _write(document, 0, parts)
    parts.append("\n")
    return "".join(parts)


def _write(value: Any, depth: int, parts: list[str]) -> None:
    if isinstance(value, dict) and value and not (depth > 0 and _is_row(value)):
        inner = _INDENT * (depth + 1)
        parts.append("{\n")
        for number, (key, item) in enumerate(value.items()):
            parts.append(f"{inner}{_COMPACT.encode(str(key))}: ")
            _write(item, depth + 1, parts)
            parts.append(",\n" if number < len(value) - 1 else "\n")
        parts.append(_INDENT * depth + "}")
    elif isinstance(value, list) and value and not _fits_one_line(value):
        inner = _INDENT * (depth + 1)
        parts.append("[\n")
        last = len(value) - 1
        for number, item in enumerate(value):
            parts.append(inner)
            if type(item) is dict and item and _is_row(item):
                parts.append(_compact(item))  # a table's row (the common case): one line
            else:
                _write(item, depth + 1, parts)
            parts.append(",\n" if number < last else "\n")
        parts.append(_INDENT * depth + "]")
    else:
        parts.append(_compact(value))
