"""Renderables → text, with or without colour (renderers return strings; the CLI prints).

Lines made without rich (`styled.Styled`, `styled.Grid`, `styled.Verbatim`) print without
importing it when there is no colour (a pipe, a file, --no-color); anything else, and colour, is
rich's to lay out.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeAlias

from arenalens.report.styled import Grid, Styled, Verbatim, plain_text
from arenalens.report.wrapping import command_lines

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Column, Table

# Rich lays a table out at about 2,000 rows a second: a 5,000-tensor model's plan and tensor
# tables took tens of seconds. Longer tables than this are formatted here instead, with the same
# box, title, header and justification; a cell stays on one line (long lines are not wrapped).
FAST_TABLE_ROWS = 400

# What a renderer lists: rich renderables, and lines written verbatim.
Line: TypeAlias = "RenderableType | Verbatim"


def render_text(renderables: Iterable[Line], *, color: bool, width: int = 120) -> str:
    """Renderables → one string; ANSI colours only when color is True."""
    renderables = list(renderables)
    if not color:
        text = _without_rich(renderables, width)
        if text is not None:
            return text
    return _with_rich(renderables, color=color, width=width)


def _without_rich(renderables: list[Line], width: int) -> str | None:
    """The plain text of lines made without rich; None when any line needs rich."""
    parts: list[str] = []
    for renderable in renderables:
        if isinstance(renderable, Verbatim):
            parts.append("\n".join(command_lines(renderable.line, width)) + "\n")
        elif isinstance(renderable, (Styled, Grid)):
            text = plain_text([renderable], width)
            if text is None:
                return None
            parts.append(text)
        else:
            return None
    return "".join(parts)


def _with_rich(renderables: list[Line], *, color: bool, width: int) -> str:
    from rich.console import Console  # noqa: PLC0415 - colour, and layouts only rich makes
    from rich.table import Table  # noqa: PLC0415

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        color_system="truecolor" if color else None,
        width=width,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    for renderable in renderables:
        if isinstance(renderable, Verbatim):
            buffer.write("\n".join(command_lines(renderable.line, width)) + "\n")
            continue
        fast = None
        if isinstance(renderable, Table) and renderable.row_count > FAST_TABLE_ROWS:
            fast = format_table(renderable, color=color)
        if fast is None:
            console.print(renderable)
        else:
            buffer.write(fast)
    return buffer.getvalue()


def format_table(table: Table, *, color: bool) -> str | None:
    """A rich Table of plain or markup cells → its text, formatted without rich's layout engine
    (None for tables this does not handle: other cell types, lines between rows, no box)."""
    from rich.cells import cell_len  # noqa: PLC0415 - loaded with the Table

    box = table.box
    if box is None or table.show_lines or not table.show_edge or table.show_footer:
        return None
    if tuple(table.padding) != (0, 1, 0, 1):
        return None
    if not table.show_header:
        box = box.get_plain_headed_box()  # as rich draws a headless table
    columns = [_column_texts(column) for column in table.columns]
    if any(texts is None for texts in columns):
        return None
    cells: list[list[str]] = [texts for texts in columns if texts is not None]
    headers = [_plain(column.header) or "" for column in table.columns]
    widths = [
        max([cell_len(header) if table.show_header else 0, *map(cell_len, texts)])
        for header, texts in zip(headers, cells, strict=True)
    ]
    padded = [width + 2 for width in widths]
    lines: list[str] = []
    if table.title is not None:
        title = _plain(table.title) or ""
        total = sum(padded) + len(padded) + 1
        lines.append(_justify(title, total, table.title_justify))
    lines.append(box.get_top(padded))
    if table.show_header:
        head_edges = (box.head_left, box.head_vertical, box.head_right)
        row = _row(headers, widths, table.columns, head_edges)
        lines.append(f"\x1b[1m{row}\x1b[0m" if color else row)
        lines.append(box.get_row(padded, "head"))
    edges = (box.mid_left, box.mid_vertical, box.mid_right)
    lines.extend(_row(values, widths, table.columns, edges) for values in zip(*cells, strict=True))
    lines.append(box.get_bottom(padded))
    return "\n".join(lines) + "\n"


def _column_texts(column: Column) -> list[str] | None:
    texts = []
    for cell in column.cells:
        text = _plain(cell)
        if text is None:
            return None
        texts.append(text)
    return texts


def _plain(value: object) -> str | None:
    """A str (rich markup) or Text → its plain text on one line; None for other renderables."""
    from rich.text import Text  # noqa: PLC0415 - loaded with the Table

    if isinstance(value, str):
        text = Text.from_markup(value).plain if "[" in value else value
    elif isinstance(value, Text):
        text = value.plain
    else:
        return None
    return " ".join(text.splitlines()) if "\n" in text or "\r" in text else text


def _row(
    values: Iterable[str], widths: list[int], columns: list[Column], edges: tuple[str, str, str]
) -> str:
    left, middle, right = edges
    cells = (
        f" {_justify(value, width, column.justify)} "
        for value, width, column in zip(values, widths, columns, strict=True)
    )
    return left + middle.join(cells) + right


def _justify(text: str, width: int, how: str) -> str:
    from rich.cells import cell_len  # noqa: PLC0415 - loaded with the Table

    gap = max(0, width - cell_len(text))
    if how == "right":
        return " " * gap + text
    if how == "center":
        return " " * (gap // 2) + text + " " * (gap - gap // 2)
    return text + " " * gap
