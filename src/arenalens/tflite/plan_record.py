"""arenalens' plan record: `PlanRecord` ↔ the bytes of the `arenalens_plan_validity` metadata.

`arenalens optimize` writes it next to `OfflineMemoryAllocation`: a small JSON object (UTF-8,
sorted keys, so the same plan gives the same bytes) saying which kernel code paths the plan
computes the right outputs on. TFLM ignores metadata it does not know, so the record costs the
device nothing. Version 1:

    {"schema": "arenalens.plan_validity", "version": 1,
     "plan_sha256": "<sha256 of the OfflineMemoryAllocation bytes>",
     "valid_for": ["cmsis-nn/dsp", "reference"],
     "proven": ["x86-64 tflite_micro wheel (reference kernels): bit-identical outputs, 3 seeds"],
     "writer": "arenalens 0.9.0"}

A record of a later version is kept with its version and nothing else: readers then judge the
plan by their own rules. A record that is not such an object is a malformed model.
"""

from __future__ import annotations

import json
from typing import Any

from arenalens.errors import ModelError
from arenalens.ir import OfflinePlan, PlanRecord
from arenalens.units import format_bytes_exact

PLAN_RECORD_METADATA = "arenalens_plan_validity"
PLAN_RECORD_SCHEMA = "arenalens.plan_validity"
PLAN_RECORD_VERSION = 1
EVERY_BUILD = "*"  # valid_for of a plan that shares no bytes: right on every build
# A record lists a handful of paths and checks; anything larger is not one of ours.
MAX_RECORD_BYTES = 64 * 1024
MAX_RECORD_ENTRIES = 64


def plan_digest(encoded_plan: bytes) -> str:
    """The `OfflineMemoryAllocation` bytes → the digest a record names its plan by."""
    import hashlib  # noqa: PLC0415 - only for plans arenalens wrote; every model read imports this

    return hashlib.sha256(encoded_plan).hexdigest()


def encode_plan_record(record: PlanRecord) -> bytes:
    """PlanRecord → metadata bytes (deterministic)."""
    document = {
        "schema": PLAN_RECORD_SCHEMA,
        "version": record.version,
        "plan_sha256": record.plan_sha256,
        "valid_for": list(record.valid_for),
        "proven": list(record.proven),
        "writer": record.writer,
    }
    if record.split_input_shapes:  # only split models carry it: other records keep their bytes
        document["split_input_shapes"] = [list(shape) for shape in record.split_input_shapes]
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def decode_plan_record(raw: bytes, label: str) -> PlanRecord:
    """Metadata bytes → PlanRecord; ModelError naming the problem when they are not a record."""
    if len(raw) > MAX_RECORD_BYTES:
        size, limit = format_bytes_exact(len(raw)), format_bytes_exact(MAX_RECORD_BYTES)
        raise _malformed(label, f"{size} (a record is under {limit})")
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise _malformed(label, f"not JSON ({error.__class__.__name__})") from None
    if not isinstance(document, dict) or document.get("schema") != PLAN_RECORD_SCHEMA:
        raise _malformed(label, f"not an object with schema '{PLAN_RECORD_SCHEMA}'")
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _malformed(label, "no positive integer 'version'")
    if version > PLAN_RECORD_VERSION:
        return PlanRecord(version=version, plan_sha256="", valid_for=())
    digest = document.get("plan_sha256")
    if not isinstance(digest, str) or len(digest) != 64:
        raise _malformed(label, "'plan_sha256' is not a sha256 digest")
    writer = document.get("writer", "")
    if not isinstance(writer, str):
        raise _malformed(label, "'writer' is not text")
    return PlanRecord(
        version=version,
        plan_sha256=digest,
        valid_for=_texts(document, "valid_for", label),
        proven=_texts(document, "proven", label),
        writer=writer[:200],
        split_input_shapes=_shapes(document, "split_input_shapes", label),
    )


def record_matches(record: PlanRecord, plan: OfflinePlan | None, encoded_plan: bytes) -> bool:
    """True when the record was written for this very plan (same digest, known version)."""
    return (
        plan is not None
        and record.version == PLAN_RECORD_VERSION
        and record.plan_sha256 == plan_digest(encoded_plan)
    )


def _texts(document: dict[str, Any], key: str, label: str) -> tuple[str, ...]:
    values = document.get(key, [])
    if (
        not isinstance(values, list)
        or len(values) > MAX_RECORD_ENTRIES
        or not all(isinstance(value, str) and len(value) <= 500 for value in values)
    ):
        raise _malformed(label, f"'{key}' is not a short list of texts")
    return tuple(values)


def _shapes(document: dict[str, Any], key: str, label: str) -> tuple[tuple[int, ...], ...]:
    values = document.get(key, [])
    if (
        not isinstance(values, list)
        or len(values) > MAX_RECORD_ENTRIES
        or not all(_is_shape(value) for value in values)
    ):
        raise _malformed(label, f"'{key}' is not a short list of shapes")
    return tuple(tuple(value) for value in values)


def _is_shape(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) <= 8
        and all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 1 << 31 for d in value)
    )


def _malformed(label: str, problem: str) -> ModelError:
    return ModelError(label, f"'{PLAN_RECORD_METADATA}' metadata is {problem}")


__all__ = [
    "EVERY_BUILD",
    "PLAN_RECORD_METADATA",
    "PLAN_RECORD_VERSION",
    "decode_plan_record",
    "encode_plan_record",
    "plan_digest",
    "record_matches",
]
