"""The whole arena in the memory map image: a report's sections → a to-scale strip of every
section and part (with the budget and the board's largest block marked), and the bands the map
draws around the arena it plots (TFLM: setup and the tail's parts above the head).

The same picture, and the same rules for what is drawn to scale, as the HTML viewer's
sections.js and arena_strip.js: a line far above the data stays off the scale (a note says where
it is) instead of squashing the plan flat, and the map shows the whole arena only while the
arena it plots keeps a readable share of it. Drawing helpers for `images` (extra 'images'):
matplotlib is imported when a function draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arenalens.report.data import ArenaReport, MemoryReport, PlanView
from arenalens.report.image_style import (
    ARENA_COLOR,
    BUDGET_COLOR,
    GAPS_COLOR,
    INK,
    MUTED,
    PART_PALETTE,
    SETUP_COLOR,
    ByteUnit,
    plain,
)
from arenalens.runtimes.sections import ArenaSection, SectionPart
from arenalens.units import format_bytes_short

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes

# A line beyond this multiple of the data's top stays off the scale (sections.js: SCALE_REACH).
SCALE_REACH = 1.5
# Below this share of the scale the arena plotted would be a smear: zoom into it instead
# (sections.js: READABLE_SHARE).
READABLE_SHARE = 0.4
TAIL = "tail"  # the section whose parts run down from its end (TFLM allocates it downwards)
SETUP = "setup"


@dataclass(frozen=True, slots=True)
class Mark:
    """A byte position marked across the whole arena: the budget, the board's largest block."""

    nbytes: int
    label: str
    style: str  # matplotlib line style


@dataclass(frozen=True, slots=True)
class Piece:
    """A section's part at its place in the picture."""

    section: ArenaSection
    part: SectionPart | None
    low: int
    high: int
    color: str

    @property
    def name(self) -> str:
        """'tail: kernel persistent buffers', or the section's name."""
        return self.section.name + (f": {self.part.name}" if self.part else "")


def on_scale(data_top: int, value: int) -> bool:
    """Whether a line at value is drawn to scale on a chart whose data reach data_top."""
    return value <= SCALE_REACH * max(1, data_top)


def arena_marks(report: MemoryReport) -> tuple[Mark, ...]:
    """The budget the report was asked about, and the board's largest block when a reserve
    makes them differ."""
    if report.budget is None:
        return ()
    fit = None if report.verdict is None else report.verdict.fit
    if fit is not None and fit.target is not None:
        block = f"{fit.target.name} largest block {format_bytes_short(fit.budget_bytes)}"
        if fit.reserve_bytes:
            after = f"after the reserve {format_bytes_short(report.budget)}"
            return (Mark(fit.budget_bytes, block, ":"), Mark(report.budget, after, "--"))
        return (Mark(report.budget, block, "--"),)
    return (Mark(report.budget, f"budget {format_bytes_short(report.budget)}", "--"),)


def sections_end(sections: Sequence[ArenaSection]) -> int:
    """The number to declare the sections cover."""
    return sections[-1].end if sections else 0


def pieces(sections: Sequence[ArenaSection], arena_name: str) -> tuple[Piece, ...]:
    """Every section cut into its parts: the tail's from its end downwards, in the order TFLM
    allocates them, any other section's upwards from its start."""
    found: list[Piece] = []
    for section_index, section in enumerate(sections):
        downwards = section.name == TAIL
        cursor = section.end if downwards else section.offset
        if not section.parts:
            color = _color(section, section_index, arena_name, 0)
            found.append(Piece(section, None, section.offset, section.end, color))
            continue
        for part_index, part in enumerate(section.parts):
            low, high = (
                (cursor - part.nbytes, cursor) if downwards else (cursor, cursor + part.nbytes)
            )
            cursor = low if downwards else high
            color = _color(section, section_index, arena_name, part_index)
            found.append(Piece(section, part, low, high, color))
    return tuple(found)


def _color(section: ArenaSection, section_index: int, arena_name: str, part_index: int) -> str:
    if section.name == arena_name:
        return ARENA_COLOR if part_index == 0 else GAPS_COLOR
    if section.name == SETUP:
        return SETUP_COLOR
    if section.name == TAIL:
        return PART_PALETTE[part_index % len(PART_PALETTE)]
    return PART_PALETTE[(section_index + 5) % len(PART_PALETTE)]


def whole_top(sections: Sequence[ArenaSection], marks: Sequence[Mark], *, near: bool) -> int:
    """The top of a whole-arena scale: the number to declare or the highest mark (with near,
    only marks on the scale)."""
    total = sections_end(sections)
    reached = [mark.nbytes for mark in marks if not near or on_scale(total, mark.nbytes)]
    return max([total, *reached, 1])


def shows_whole(
    report: MemoryReport, arena: ArenaReport, view: PlanView
) -> tuple[ArenaSection, ...] | None:
    """The sections the memory map draws around the arena it plots, or None when it zooms into
    that arena (no sections, or the arena would be a smear at the whole arena's scale)."""
    sections = report.sections_with_view(arena, view)
    section = next((s for s in sections if s.name == arena.name), None)
    if section is None or len(sections) < 2:
        return None
    top = whole_top(sections, arena_marks(report), near=True)
    return sections if section.nbytes >= READABLE_SHARE * top else None


def draw_strip(axes: Axes, report: MemoryReport, view: PlanView, arena: ArenaReport) -> None:
    """The whole arena as one bar, to scale, with the budget and board marks: a section's name
    and size above it where it has room, the marks and the number to declare below."""
    from matplotlib.patches import Rectangle  # noqa: PLC0415

    sections = report.sections_with_view(arena, view)
    marks = arena_marks(report)
    top = whole_top(sections, marks, near=False)
    for piece in pieces(sections, arena.name):
        axes.add_patch(
            Rectangle(
                (piece.low, 0),
                piece.high - piece.low,
                1,
                facecolor=piece.color,
                edgecolor="white",
                lw=0.4,
                hatch="///" if piece.section.name == SETUP else None,
            )
        )
    for section in sections[1:]:
        axes.axvline(section.offset, ymin=0, ymax=1, color="white", lw=1.2)
    free_from = 0.0
    for section in sections:
        text = f"{section.name} {format_bytes_short(section.nbytes)}"
        start = max(section.offset, free_from)
        width = len(text) * 0.0095 * top  # a bold 7.5 pt character: under 0.95% of the strip
        if start + width > top * 1.02:
            continue
        axes.text(start, 1.3, plain(text), fontsize=7.5, fontweight="bold", va="bottom", color=INK)
        if start > section.offset or width > section.nbytes:
            # Not over its section (moved right, or wider than it): a line points at it.
            center = section.offset + section.nbytes / 2
            axes.plot(
                [start + 0.002 * top, center], [1.28, 1.03], color=MUTED, lw=0.7, clip_on=False
            )
        free_from = start + width + 0.015 * top
    below = [
        (
            sections_end(sections),
            f"{_symbol(report)} {format_bytes_short(sections_end(sections))}",
            ARENA_COLOR,
        )
    ]
    for mark in marks:
        axes.axvline(
            mark.nbytes,
            ymin=-0.25,
            ymax=1.25,
            color=BUDGET_COLOR,
            lw=1.2,
            ls=mark.style,
            clip_on=False,
        )
        below.append((mark.nbytes, mark.label, BUDGET_COLOR))
    for line, (nbytes, text, color) in enumerate(sorted(below)):
        axes.text(
            nbytes, -0.2 - 0.55 * line, plain(text), fontsize=7, ha="right", va="top", color=color
        )
    axes.set_xlim(0, top)
    axes.set_ylim(0, 1)
    axes.set_yticks([])
    axes.set_xticks([])
    for side in ("left", "bottom", "top", "right"):
        axes.spines[side].set_visible(False)


def draw_bands(
    axes: Axes, sections: Sequence[ArenaSection], arena: ArenaReport, unit: ByteUnit
) -> None:
    """Every section but the arena plotted, by part, as bands across all steps (setup hatched:
    free once setup ends), named where they are tall enough."""
    from matplotlib.patches import Rectangle  # noqa: PLC0415

    x_low, x_high = axes.get_xlim()
    y_low, y_high = axes.get_ylim()
    points = axes.get_window_extent().height * 72 / axes.figure.dpi
    for piece in pieces(sections, arena.name):
        if piece.section.name == arena.name:
            continue
        low, high = unit.scale(piece.low), unit.scale(piece.high)
        axes.add_patch(
            Rectangle(
                (x_low, low),
                x_high - x_low,
                high - low,
                facecolor=piece.color,
                edgecolor="white",
                lw=0.5,
                alpha=0.9,
                hatch="///" if piece.section.name == SETUP else None,
            )
        )
        if (high - low) / max(y_high - y_low, 1e-9) * points >= 9:
            axes.text(
                x_low + (x_high - x_low) * 0.01,
                (low + high) / 2,
                plain(f"{piece.name}  {format_bytes_short(piece.high - piece.low)}"),
                fontsize=7,
                va="center",
                color="white",
                clip_on=True,
            )


def _symbol(report: MemoryReport) -> str:
    return report.declared.symbol if report.declared is not None else "to declare"


def declared_symbol(report: MemoryReport) -> str:
    """What the number to declare is called ('kTensorArenaSize', 'LiteRT arenas')."""
    return _symbol(report)
