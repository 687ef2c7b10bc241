"""parse_size: the size forms users type, and clear errors for the rest."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arenalens.errors import UsageError
from arenalens.units import parse_size


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("307200", 307200),
        ("300KiB", 307200),
        ("300 KiB", 307200),
        ("300kib", 307200),
        ("0.5MiB", 524288),
        (".5MiB", 524288),
        ("256K", 262144),
        ("1M", 1048576),
        ("1GiB", 1073741824),
        ("300kB", 307200),
        ("320KB", 327680),  # the STM32F746 datasheet's "320 KB SRAM"
        ("2MB", 2097152),
        ("1GB", 1073741824),
        ("12B", 12),
        ("0", 0),
        ("0.3MiB", 314572),  # 314572.8: the fraction of a byte is dropped
        (" 64 ", 64),
    ],
)
def test_parse_size_accepts_common_forms(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "KiB", "-5", "1e3", "12 parsecs", "3.2.1K", "0x100"])
def test_parse_size_rejects_with_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match=r"size|unit"):
        parse_size(text)


def test_unknown_unit_lists_the_known_ones() -> None:
    with pytest.raises(UsageError, match="K/KB/KiB"):
        parse_size("5TiB")


@given(st.integers(min_value=0, max_value=2**40))
def test_plain_integers_round_trip(value: int) -> None:
    assert parse_size(str(value)) == value
    assert parse_size(f"{value}KiB") == value * 1024
