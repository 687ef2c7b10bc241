"""Styled lines and borderless grids, made without rich, and their plain text as rich lays it out.

Importing rich's text, table and console modules costs more than checking a small model, and a
check printed to a pipe or a file shows no colour. So the verdict's lines are `Styled` runs and
its numbers a `Grid`: the plain text here is what rich prints for them, byte for byte (word
wrapping at the width, column widths, padding), and `__rich__` gives rich the very `Text` and
`Table` the renderers built before, for colour and for every layout this does not reproduce
(`plain_lines` returns None: a word longer than the width, characters whose cell width or
whitespace rich judges otherwise, markup, a grid wider than the width).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from arenalens.records import record

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

# Non-ASCII characters arenalens writes whose cell width is 1 for rich (tests check each against
# rich.cells) and which are not whitespace; a line with any other one is laid out by rich.
ONE_CELL = frozenset("−—–…×→←≈≤≥µ·‘’“”°")
# rich's word: leading whitespace, the word, the whitespace after it (rich/_wrap.py).
_WORD = re.compile(r"\s*\S+\s*")


@record(slots=True)
class Verbatim:
    """A line written as it is, never wrapped at the width: a command the user pastes."""

    line: str


@record(slots=True)
class Styled:
    """One line of text as runs of (text, rich style); "" is no style."""

    runs: tuple[tuple[str, str], ...]

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.runs)

    def __add__(self, other: Styled) -> Styled:
        return Styled(self.runs + other.runs)

    def __rich__(self) -> Text:
        """The rich Text this line stands for: one run → Text(text, style=style), several →
        Text.assemble of the runs (as the renderers wrote them)."""
        from rich.text import Text  # noqa: PLC0415 - rich only when rich renders

        if len(self.runs) == 1:
            text, style = self.runs[0]
            return Text(text, style=style)
        return Text.assemble(*((text, style) if style else text for text, style in self.runs))


def styled(text: str, style: str = "") -> Styled:
    """A line of one run."""
    return Styled(((text, style),))


@record(slots=True)
class GridColumn:
    justify: str = "left"  # "left" or "right"
    style: str = ""


@record(slots=True)
class Grid:
    """A table without header, borders or lines between rows: each cell padded `padding`
    (left, right) spaces, its column as wide as its widest cell. Cells are plain text, never
    markup: a cell may hold a name from the model or the user (a `[/]` in it is drawn, not read
    as a style tag)."""

    columns: tuple[GridColumn, ...]
    rows: tuple[tuple[str, ...], ...]
    padding: tuple[int, int] = (2, 2)

    def __rich__(self) -> Table:
        from rich.table import Table  # noqa: PLC0415 - rich only when rich renders
        from rich.text import Text  # noqa: PLC0415

        left, right = self.padding
        table = Table(show_header=False, box=None, padding=(0, right, 0, left))
        for column in self.columns:
            table.add_column(justify=column.justify, style=column.style or None)  # type: ignore[arg-type]
        for row in self.rows:
            table.add_row(*map(Text, row))  # a str cell would be parsed as markup
        return table


def _laid_out_here(text: str) -> bool:
    """Whether rich gives every character of the text one cell and counts only ' ' as
    whitespace, and reads no markup or control code in it."""
    return all(" " <= char <= "~" or char in ONE_CELL for char in text)


def wrapped(text: str, width: int) -> list[str] | None:
    """The text's lines as rich wraps a Text at the width (greedy by words; a word keeps the
    spaces after it; a line longer than the width loses that many trailing spaces); None where
    rich must lay it out."""
    if not _laid_out_here(text):
        return None
    breaks: list[int] = []
    used = 0
    for word in _WORD.finditer(text):
        start, end = word.span()
        length = len(word.group().rstrip())
        if width - used >= length:
            used += end - start
        elif length > width:
            return None  # rich folds the word across lines
        elif used and start:
            breaks.append(start)
            used = end - start
    lines = [text[start:end] for start, end in zip([0, *breaks], [*breaks, len(text)], strict=True)]
    return [_cropped(line, width) for line in lines]


def _cropped(line: str, width: int) -> str:
    excess = len(line) - width
    if excess <= 0:
        return line
    spaces = len(line) - len(line.rstrip(" "))
    return line[: len(line) - min(spaces, excess)]


def grid_lines(grid: Grid, width: int) -> list[str] | None:
    """The grid's lines as rich draws the Table (`Grid.__rich__`); None where rich must."""
    cells = [cell for row in grid.rows for cell in row]
    if not grid.rows or not all(_plain_cell(cell) for cell in cells):
        return None
    left, right = grid.padding
    widths = [max(len(row[index]) for row in grid.rows) for index in range(len(grid.columns))]
    if sum(widths) + (left + right) * len(widths) > width:
        return None  # rich shrinks columns and wraps cells
    lines = []
    for row in grid.rows:
        cells_text = (
            " " * left
            + (cell.rjust(size) if column.justify == "right" else cell.ljust(size))
            + " " * right
            for cell, size, column in zip(row, widths, grid.columns, strict=True)
        )
        lines.append("".join(cells_text))
    return lines


def _plain_cell(cell: str) -> bool:
    """Whether rich draws the cell as its text: no markup, one cell per character, no spaces at
    its ends (rich trims them as it justifies)."""
    return "[" not in cell and _laid_out_here(cell) and cell == cell.strip(" ")


def plain_lines(line: Styled | Grid, width: int) -> list[str] | None:
    """A Styled line or a Grid → its plain lines at the width; None where rich must lay it out."""
    if isinstance(line, Grid):
        return grid_lines(line, width)
    return wrapped(line.plain, width)


def plain_text(lines: Iterable[Styled | Grid], width: int) -> str | None:
    """Lines → their plain text, each line ending in a newline; None when any needs rich."""
    out: list[str] = []
    for line in lines:
        laid_out = plain_lines(line, width)
        if laid_out is None:
            return None
        out.extend(laid_out)
    return "".join(text + "\n" for text in out)
