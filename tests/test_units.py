"""Byte sizes in text: the forms users type (and clear errors for the rest), the forms we write;
tensor names cut to one line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arenalens.errors import UsageError
from arenalens.names import short_name
from arenalens.units import format_bytes_exact, format_bytes_short, parse_size


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


@pytest.mark.parametrize(
    ("nbytes", "exact", "short"),
    [
        (0, "0 B", "0 B"),
        (1023, "1,023 B", "1023 B"),
        (1536, "1,536 B", "1.5 KiB"),
        (73_728, "73,728 B", "72 KiB"),
        (2_359_296, "2,359,296 B", "2.25 MiB"),
        (5 * 1024**4, "5,497,558,138,880 B", "5120 GiB"),
    ],
)
def test_bytes_are_written_exactly_or_short(nbytes: int, exact: str, short: str) -> None:
    assert format_bytes_exact(nbytes) == exact
    assert format_bytes_short(nbytes) == short


@pytest.mark.parametrize(
    ("name", "limit", "expected"),
    [
        ("conv/Relu", 10, "conv/Relu"),
        ("model/act/Relu;model/bn/FusedBatchNormV3", 20, "model/act/Relu…"),
        ("abcdefghij;fused", 10, "abcdefghi…"),  # at the limit: cut, so the ';' part is marked
        ("a/very/long/path/name", 10, "…path/name"),
        ("a/very/long/path/name;fused", 10, "…path/name"),
    ],
)
def test_short_name_marks_every_cut_and_keeps_the_limit(
    name: str, limit: int, expected: str
) -> None:
    assert short_name(name, limit=limit) == expected
    assert len(short_name(name, limit=limit)) <= limit


@given(st.text(max_size=200), st.integers(2, 80))
def test_short_name_never_exceeds_its_limit(name: str, limit: int) -> None:
    assert len(short_name(name, limit=limit)) <= limit
