"""The build records as shipped: `build_records.json` (package data, schema
`schemas/build_records.schema.json`), read once, the first time a build is made."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

RECORDS = "build_records.json"  # package data next to targets.json


@functools.cache
def records_document() -> dict[str, Any]:
    """The records document, parsed once per process (callers must not change it)."""
    text = resources.files("arenalens").joinpath(RECORDS).read_text(encoding="utf-8")
    document: dict[str, Any] = json.loads(text)
    return document
