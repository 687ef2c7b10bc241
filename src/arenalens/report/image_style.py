"""Image style: the colours, byte units and text escaping every chart image shares.

Plain data and string helpers, no matplotlib: `images` (the charts) and `arena_image` (the whole
arena's sections drawn on them) read them.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    """Model text → text matplotlib draws literally (no mathtext between '$' signs)."""
    # Backslashes are literal outside mathtext; an escaped '$' keeps mathtext off.
    return text.replace("$", r"\$")


def fit_label(label: str, limit: int) -> str:
    """A short label cut to limit characters, keeping its tail (`…tion_12`)."""
    return label if len(label) <= limit else "…" + label[-max(limit - 1, 1) :]
