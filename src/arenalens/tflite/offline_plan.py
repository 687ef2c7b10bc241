"""TFLM's offline plan: `OfflinePlan` ↔ the bytes of the `OfflineMemoryAllocation` metadata
(little-endian int32 words: version, subgraph count, offset count, then one offset per tensor of
every subgraph, -1 to plan that tensor online). The reader decodes it; `optimize` writes it."""

from __future__ import annotations

import struct

from arenalens.errors import ModelError
from arenalens.ir import OFFLINE_PLAN_METADATA, OfflinePlan
from arenalens.units import format_bytes_exact

_METADATA_OFFLINE_HEADER_WORDS = 3


def decode_offline_plan(raw: bytes, label: str) -> OfflinePlan:
    """`OfflineMemoryAllocation` bytes → OfflinePlan (little-endian int32 words)."""
    header_bytes = 4 * _METADATA_OFFLINE_HEADER_WORDS
    if len(raw) < header_bytes:
        raise ModelError(
            label,
            f"'{OFFLINE_PLAN_METADATA}' metadata is {format_bytes_exact(len(raw))}, "
            f"shorter than its 12-byte header",
        )
    version, subgraph_count, count = struct.unpack_from("<iii", raw, 0)
    available = (len(raw) - header_bytes) // 4
    if count < 0 or count > available:
        raise ModelError(
            label,
            f"'{OFFLINE_PLAN_METADATA}' metadata claims {count} offsets but holds {available}",
        )
    offsets = struct.unpack_from(f"<{count}i", raw, header_bytes)
    return OfflinePlan(version, subgraph_count, tuple(offsets))


def encode_offline_plan(plan: OfflinePlan) -> bytes:
    """OfflinePlan → `OfflineMemoryAllocation` metadata bytes."""
    count = len(plan.offsets)
    return struct.pack(f"<iii{count}i", plan.version, plan.subgraph_count, count, *plan.offsets)
