"""Byte sizes as people type them: '300KiB', '0.5MiB', '256K', '307200' → bytes.

Binary units (KiB, MiB, GiB) and the bare letters K, M, G of linker scripts (`LENGTH = 256K`)
count in 1024s; SI units (kB, MB, GB) count in 1000s, as their names say. Fractions of a byte are
dropped, so a budget is never rounded up past what the user wrote.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from arenalens.errors import UsageError

_UNIT_BYTES = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gib": 1024**3,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
}
_SIZE_PATTERN = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*$")
SIZE_HELP = "bytes, or with a unit: 300KiB, 0.5MiB, 256K (1024s), 300kB (1000s)"


def parse_size(text: str) -> int:
    """'300KiB' / '0.5MiB' / '307200' → bytes (int); UsageError explaining the accepted forms."""
    match = _SIZE_PATTERN.match(text)
    if match is None:
        raise UsageError(f"'{text}' is not a size ({SIZE_HELP})")
    number, unit = match.groups()
    multiplier = _UNIT_BYTES.get(unit.lower())
    if multiplier is None:
        known = "B, KiB, MiB, GiB, K, M, G, kB, MB, GB"
        raise UsageError(f"'{text}': unknown unit '{unit}' (known: {known})")
    try:
        value = Decimal(number) * multiplier
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimal numbers
        raise UsageError(f"'{text}' is not a size ({SIZE_HELP})") from None
    return int(value)  # int() truncates: a fraction of a byte is dropped
