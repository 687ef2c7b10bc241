"""Byte sizes in text: as people type them ('320KB', '0.5MiB', '256K', '307200' → bytes), and as
arenalens writes them (bytes → '73,728 B' exactly, or '72 KiB' short).

Kilo, mega and giga count in 1024s whatever the spelling (K, KB, KiB, kB; M, MB, MiB; G, GB,
GiB), as microcontroller datasheets and linker scripts use them: the STM32F746's "320 KB SRAM" is
327,680 bytes, and `LENGTH = 256K` is 262,144. Case does not matter. Fractions of a byte are
dropped, so a budget is never rounded up past what the user wrote.

Messages and the number to declare print exact bytes, the unit people size arenas in; charts
and tables that need the width print the short form in binary units.
"""

from __future__ import annotations

import re

from arenalens.errors import UsageError

_UNIT_BYTES = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gib": 1024**3,
}
_SIZE_PATTERN = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*$")
SIZE_HELP = (
    "bytes, or with a unit: 320KB, 320K and 320KiB all mean 320 x 1,024 bytes (as datasheets "
    "write them); 0.5MB = 0.5MiB = 524,288 bytes"
)


def parse_size(text: str) -> int:
    """'320KB' / '0.5MiB' / '307200' → bytes (int); UsageError explaining the accepted forms."""
    if text.strip().startswith("-"):
        raise UsageError(f"'{text}' is negative: a size is a number of bytes, 0 or more")
    match = _SIZE_PATTERN.match(text)
    if match is None:
        raise UsageError(f"'{text}' is not a size ({SIZE_HELP})")
    number, unit = match.groups()
    if not unit and "." in number:
        raise UsageError(
            f"'{text}' is not a whole number of bytes: give bytes, or a unit ('{number}KB')"
        )
    multiplier = _UNIT_BYTES.get(unit.lower())
    if multiplier is None:
        known = "B, K/KB/KiB, M/MB/MiB, G/GB/GiB (all 1024-based)"
        raise UsageError(f"'{text}': unknown unit '{unit}' (known: {known})")
    # decimal only here: every command imports this module, few parse a size.
    from decimal import Decimal, InvalidOperation  # noqa: PLC0415

    try:
        value = Decimal(number) * multiplier
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimal numbers
        raise UsageError(f"'{text}' is not a size ({SIZE_HELP})") from None
    return int(value)  # int() truncates: a fraction of a byte is dropped


def describe_size(text: str, nbytes: int) -> str:
    """What a typed size was read as: '320KB = 327,680 B' ('4096 B' when typed in bytes)."""
    typed = text.strip()
    if typed.isdigit():
        return format_bytes_exact(nbytes)
    return f"{typed} = {format_bytes_exact(nbytes)}"


def format_bytes_exact(nbytes: int) -> str:
    """73728 → '73,728 B': every byte, grouped by thousands."""
    return f"{nbytes:,} B"


def format_bytes_delta(nbytes: int) -> str:
    """A change in bytes, signed: 16 → '+16 B', -1024 → '-1,024 B'."""
    return f"{nbytes:+,} B"


def format_bytes_short(nbytes: int | float) -> str:
    """Bytes → short text in binary units: 512 B, 1.5 KiB, 2.25 MiB (two decimals at most)."""
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            if unit == "B":
                return f"{int(value)} B"
            return f"{value:.2f}".rstrip("0").rstrip(".") + f" {unit}"
        value /= 1024
    return f"{value} GiB"  # pragma: no cover - loop always returns
