"""Image style: the colours, byte units and text escaping every chart image shares.

Plain data and string helpers: `images` (the charts) and `arena_image` (the whole arena's sections
drawn on them) read them. Only `plain` asks matplotlib (which glyphs the charts' font has), lazily,
when a chart is being drawn.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import cache

CHART_FONT = "DejaVu Sans"  # ships with matplotlib: the same glyphs on every machine

# A muted qualitative palette (Tableau 10, lightened a touch) so labels stay readable on fills.
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
INK = "#1f2933"
MUTED = "#6b7785"
BOUND_COLOR = "#2f6f3e"
ARENA_COLOR = "#1f4e79"
BUDGET_COLOR = "#c0392b"
PEAK_COLOR = "#b03a8c"
SHARED_COLOR = "#111827"  # outline and hatch of bytes an output writes over its consumed input
# Persistent data, setup and other arenas: muted colours apart from the buffers' palette (the
# HTML viewer's sections.js uses the same).
PART_PALETTE = (
    "#7f8fa6",
    "#a88ca5",
    "#8fae8b",
    "#c4a27a",
    "#6f9fb0",
    "#b38a7a",
    "#9a9ccf",
    "#b9b36f",
    "#7fb3a1",
    "#c48fa0",
    "#8c8c8c",
    "#a3b6cf",
)
SETUP_COLOR = "#c8ccd2"
GAPS_COLOR = "#9db4cc"  # the part of a planned arena its plan leaves unused at the peak


@dataclass(frozen=True)
class ByteUnit:
    """A unit to draw byte values in: its name and size in bytes."""

    name: str
    nbytes: int

    def scale(self, value: float) -> float:
        """Bytes → this unit."""
        return value / self.nbytes


def byte_unit(largest: float) -> ByteUnit:
    """The unit that keeps a chart's largest value between 1 and about 2048: B, KiB or MiB."""
    if largest < 2 * 1024:
        return ByteUnit("B", 1)
    if largest < 2 * 1024 * 1024:
        return ByteUnit("KiB", 1024)
    return ByteUnit("MiB", 1024 * 1024)


def plain(text: str) -> str:
    """Model text → text matplotlib draws literally: no mathtext between '$' signs, and every
    character the chart's font cannot draw (control and format characters, emoji) written as
    its escape ('\\x09', '\\u202e', '\\U0001f600'), so a label shows what the name holds."""
    drawable = _drawable_codepoints()
    written = "".join(
        character
        if character == "\n"  # the lines a label is made of; names never reach here raw
        or (ord(character) in drawable and not unicodedata.category(character).startswith("C"))
        else _escape(character)
        for character in text
    )
    # Backslashes are literal outside mathtext; an escaped '$' keeps mathtext off.
    return written.replace("$", r"\$")


def _escape(character: str) -> str:
    """One character as Python writes its escape."""
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


@cache
def _drawable_codepoints() -> frozenset[int]:
    """Every code point the charts' font (DejaVu Sans, shipped with matplotlib) has a glyph for.
    Only called while drawing, so matplotlib (the `images` extra) is there."""
    from matplotlib import font_manager, ft2font  # noqa: PLC0415 - optional extra

    path = font_manager.findfont(
        font_manager.FontProperties(family=CHART_FONT), fallback_to_default=False
    )
    return frozenset(ft2font.FT2Font(path).get_charmap())


def fit_label(label: str, limit: int) -> str:
    """A short label cut to limit characters, keeping its tail (`…tion_12`)."""
    return label if len(label) <= limit else "…" + label[-max(limit - 1, 1) :]
