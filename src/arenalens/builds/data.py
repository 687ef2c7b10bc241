"""The build records as shipped: `build_records.json` (package data next to `targets.json`,
schema `schemas/build_records.schema.json`), read once, the first time a build is made; and
`from_row`, which makes a record of a row (here and in `targets.py`)."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Mapping
from typing import Any, TypeVar

_Record = TypeVar("_Record")

RECORDS = "build_records.json"  # package data in the arenalens package's folder


@functools.cache
def records_document() -> dict[str, Any]:
    """The records document, parsed once per process (callers must not change it)."""
    # Read from the package's folder as `targets.py` reads its catalogue: importlib.resources
    # costs more to import (zipfile, threading) than reading the file, and os.path less than
    # pathlib (with urllib.parse and ipaddress: ~16 M instructions of a check's start-up).
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(package, RECORDS), encoding="utf-8") as handle:
        text = handle.read()
    document: dict[str, Any] = json.loads(text)
    return document


def from_row(record: type[_Record], row: Mapping[str, Any], **computed: Any) -> _Record:
    """A record (a dataclass) from a row of checked data: each field from the row's key of its
    name (a field the row leaves out keeps its default), the `computed` ones as given. A new
    field is its schema entry and its dataclass field; nothing else lists them."""
    names = (field.name for field in dataclasses.fields(record))  # type: ignore[arg-type]
    values = {name: row[name] for name in names if name in row and name not in computed}
    return record(**values, **computed)
