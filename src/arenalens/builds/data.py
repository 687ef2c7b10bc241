"""The build records as shipped: `build_records.json` (package data next to `targets.json`,
schema `schemas/build_records.schema.json`), read once, the first time a build is made."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

RECORDS = "build_records.json"  # package data in the arenalens package's folder


@functools.cache
def records_document() -> dict[str, Any]:
    """The records document, parsed once per process (callers must not change it)."""
    # Read from the package's folder as `targets.py` reads its catalogue: importlib.resources
    # costs more to import (zipfile, threading) than reading the file.
    text = Path(__file__).parents[1].joinpath(RECORDS).read_text(encoding="utf-8")
    document: dict[str, Any] = json.loads(text)
    return document
